package saml_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	crewsaml "github.com/crewjam/saml"

	"github.com/idenplane/idenplane/app/apptest"
)

// A service provider bound to an authentication flow of its own signs
// people in through its steps; another keeps the realm's sign-in page.
func TestSSOThroughBoundFlow(t *testing.T) {
	e := newIdP(t)
	own := newSP(t, e, spOptions{})
	plain := newSP(t, e, spOptions{})

	// Alice enrols an authenticator app, signed in at the SP without a flow.
	b := newBrowser(t)
	mustSignedIn(t, b.visit(own.url+"/app", testPassword))
	setup := b.get(e.base + "/realms/acme/account/totp-setup")
	key := regexp.MustCompile(`<dd><code>([A-Z2-7 ]+)</code></dd>`).FindStringSubmatch(setup.body)
	f := setup.postForm()
	if key == nil || f == nil {
		t.Fatalf("TOTP setup page: %d %.500s", setup.status, setup.body)
	}
	secret := strings.ReplaceAll(key[1], " ", "")
	f.values.Set("code", totpCode(t, secret, time.Now()))
	if p := b.submit(setup, f); p.status != http.StatusOK {
		t.Fatalf("TOTP enrolment: %d %.300s", p.status, p.body)
	}

	r := e.Admin(http.MethodPost, "/admin/realms/acme/auth-flows", map[string]any{"alias": "sp-with-a-code", "usage": "browser",
		"steps": []map[string]any{{"kind": "username-password", "requirement": "required"}, {"kind": "totp", "requirement": "required"}}})
	apptest.MustStatus(t, r, http.StatusCreated)
	flowID := r.Object(t)["id"].(string)
	apptest.MustStatus(t, e.Admin(http.MethodPut, "/admin/realms/acme/auth-flows/"+flowID+"/assign-client/"+own.id,
		map[string]any{"usage": "browser"}), http.StatusNoContent)

	// A new browser meets the flow's pages: the password, then the code.
	b = newBrowser(t)
	first := b.visit(own.url+"/app", "")
	if !strings.HasPrefix(first.url.Path, "/realms/acme/signin/") || !strings.Contains(first.body, `name="password"`) {
		t.Fatalf("the bound SP's sign-in: %d at %s, want its flow's password page", first.status, first.url)
	}
	if p := b.walk(first, testPassword); !strings.HasPrefix(p.url.Path, "/realms/acme/signin/") || p.postForm() == nil ||
		!p.postForm().values.Has("code") {
		t.Fatalf("after the password: %d at %s, want the flow's code page", p.status, p.url)
	} else {
		b.totpSecret = secret
		mustSignedIn(t, b.walk(p, ""))
	}
	if top, _, class, _ := b.answer(t, own); top != crewsaml.StatusSuccess || class != classMFA {
		t.Fatalf("the bound SP was answered %s with class %q, want success with %q: the flow's code counts", top, class, classMFA)
	}
	// The browser's session now answers the other SP at once.
	mustSignedIn(t, b.visit(plain.url+"/app", ""))

	// The other SP's sign-in stays the realm's sign-in page.
	if p := newBrowser(t).visit(plain.url+"/app", ""); p.url.Path != "/realms/acme/login" {
		t.Fatalf("an SP without a flow: %d at %s, want the realm's sign-in page", p.status, p.url)
	}
	// A flow's page of another browser is refused.
	if p := newBrowser(t).get(first.url.String()); p.status != http.StatusBadRequest {
		t.Fatalf("another browser at the flow's page: %d, want 400", p.status)
	}
}
