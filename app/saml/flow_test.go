package saml_test

import (
	"net/http"
	"net/netip"
	"regexp"
	"strings"
	"testing"
	"time"

	crewsaml "github.com/crewjam/saml"

	"github.com/idenplane/idenplane/app"
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

	// The other SP's sign-in stays the server's own: a password page
	// that offers no code.
	if p := newBrowser(t).visit(plain.url+"/app", ""); !strings.HasPrefix(p.url.Path, "/realms/acme/signin/") ||
		!strings.Contains(p.body, `name="password"`) || strings.Contains(p.body, `name="code"`) {
		t.Fatalf("an SP without a flow: %d at %s, want the realm's sign-in page", p.status, p.url)
	}
	// A flow's page of another browser is refused.
	if p := newBrowser(t).get(first.url.String()); p.status != http.StatusBadRequest {
		t.Fatalf("another browser at the flow's page: %d, want 400", p.status)
	}
}

// A service provider whose flow is an identity provider's redirect: the
// browser signs in at the provider (here another realm of the server),
// whose callback passes the flow itself, and the SAML request waiting is
// answered for the user the provider vouched for.
func TestSSOThroughIdentityProviderFlow(t *testing.T) {
	e := newIdP(t, func(c *app.Config) {
		c.OutboundAllowed = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	})
	own := newSP(t, e, spOptions{})
	e.CreateRealm("upstream")
	e.CreateUser("upstream", map[string]any{"username": testUser, "email": "alice@example.test", "emailVerified": true,
		"password": testPassword})
	r := e.Admin(http.MethodPost, "/admin/realms/upstream/clients", map[string]any{"clientId": "acme-broker",
		"redirectUris": []string{e.base + "/realms/acme/broker/corp/callback"}, "grantTypes": []string{"authorization_code"}})
	apptest.MustStatus(t, r, http.StatusCreated)
	apptest.MustStatus(t, e.Admin(http.MethodPost, "/admin/realms/acme/identity-providers", map[string]any{"alias": "corp",
		"providerType": "oidc", "issuer": e.base + "/realms/upstream", "clientId": "acme-broker",
		"clientSecret": r.Object(t)["secret"], "trustEmail": true}), http.StatusCreated)
	r = e.Admin(http.MethodPost, "/admin/realms/acme/auth-flows", map[string]any{"alias": "through-corp", "usage": "browser",
		"steps": []map[string]any{{"kind": "idp-redirect", "requirement": "required", "provider": "corp"}}})
	apptest.MustStatus(t, r, http.StatusCreated)
	apptest.MustStatus(t, e.Admin(http.MethodPut, "/admin/realms/acme/auth-flows/"+r.Object(t)["id"].(string)+"/assign-client/"+own.id,
		map[string]any{"usage": "browser"}), http.StatusNoContent)

	b := newBrowser(t)
	upstream := b.visit(own.url+"/app", "")
	if !strings.HasPrefix(upstream.url.Path, "/realms/upstream/") || !strings.Contains(upstream.body, `name="password"`) {
		t.Fatalf("the bound SP's sign-in: %d at %s, want the provider's sign-in page", upstream.status, upstream.url)
	}
	signedIn := mustSignedIn(t, b.walk(upstream, testPassword))
	if signedIn.NameID == "" {
		t.Fatal("no NameID")
	}
	if top, _, _, _ := b.answer(t, own); top != crewsaml.StatusSuccess {
		t.Fatalf("the SP was answered %s", top)
	}
	// The provider vouched for acme's alice, by her verified email: she
	// is linked to corp now.
	links := e.Admin(http.MethodGet, "/admin/realms/acme/users/"+e.alice+"/federated-identity", nil)
	apptest.MustStatus(t, links, http.StatusOK)
	if !strings.Contains(string(links.Body), `"corp"`) {
		t.Fatalf("acme's alice is not linked to corp: %s", links.Body)
	}
}
