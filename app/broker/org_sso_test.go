package broker_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/apptest"
)

// orgSSO gives acme an organization whose domain example.test (alice's at
// the upstream) is verified, with an SSO connection to corp, and a local
// user bob of another domain.
func orgSSO(e *env, connection map[string]any, verified bool) string {
	e.t.Helper()
	r := e.s.Admin(http.MethodPost, "/admin/realms/acme/organizations", map[string]any{"slug": "acme-corp", "name": "Acme Corp",
		"domains": []any{map[string]any{"name": "example.test"}, map[string]any{"name": "other.test"}}})
	apptest.MustStatus(e.t, r, http.StatusCreated)
	if verified {
		if err := e.s.Store.VerifyDomain(context.Background(), r.Object(e.t)["id"].(string), "example.test"); err != nil {
			e.t.Fatal(err)
		}
	}
	body := map[string]any{"identityProvider": "corp"}
	for k, v := range connection {
		body[k] = v
	}
	c := e.s.Admin(http.MethodPost, "/admin/realms/acme/organizations/acme-corp/sso-connections", body)
	apptest.MustStatus(e.t, c, http.StatusCreated)
	e.s.CreateUser("acme", map[string]any{"username": "bob", "email": "bob@other.test", "password": localPassword})
	return c.Object(e.t)["id"].(string)
}

var passwordInput = regexp.MustCompile(`<input[^>]*id="password"[^>]*>`)

// signInPage starts app's sign-in asking for the organization scope and
// returns acme's sign-in page.
func (e *env) signInPage(b *apptest.Browser) *apptest.Page {
	e.t.Helper()
	p := b.Follow(b.Get(e.authorize(url.Values{"scope": {"openid organization"}})), e.base)
	if p.Status != http.StatusOK || !strings.HasPrefix(p.URL.Path, "/realms/acme/") || len(p.Forms(e.t)) == 0 {
		e.t.Fatalf("expected acme's sign-in page, got %d at %s", p.Status, p.URL)
	}
	return p
}

func (e *env) members() []string {
	e.t.Helper()
	r := e.s.Admin(http.MethodGet, "/admin/realms/acme/organizations/acme-corp/members", nil)
	apptest.MustStatus(e.t, r, http.StatusOK)
	var list []struct{ Username, Role string }
	r.Decode(e.t, &list)
	out := []string{}
	for _, m := range list {
		out = append(out, m.Username+":"+m.Role)
	}
	return out
}

// An email of the organization's verified domain, typed at acme's sign-in
// page without a password, signs in at corp (the upstream realm) and comes
// back a member of the organization.
func TestHomeRealmDiscovery(t *testing.T) {
	e := newEnv(t, nil)
	orgSSO(e, map[string]any{"autoJoin": true}, true)

	b := apptest.NewBrowser(t)
	login := e.signInPage(b)
	if in := passwordInput.FindString(string(login.Body)); in == "" || strings.Contains(in, "required") {
		t.Errorf("the password is required where an email alone may do: %q", in)
	}
	p := b.Submit(login.Forms(t)[0], map[string]string{"username": " Alice@EXAMPLE.test ", "password": ""})
	if p.Status != http.StatusSeeOther || !strings.HasPrefix(p.Location(t).String(), e.issuer("acme")+"/broker/corp/login?authRequestID=") {
		t.Fatalf("expected the way to corp, got %d to %s: %s", p.Status, p.Header.Get("Location"), p.Body)
	}
	up := b.Follow(p, e.base)
	if !strings.HasPrefix(up.URL.String(), e.issuer(upstreamRealm)+"/") {
		t.Fatalf("expected the upstream sign-in page, got %d at %s", up.Status, up.URL)
	}
	// The email went on as the provider's login_hint: its page has it.
	if got := up.Forms(t)[0].Fields.Get("username"); got != "Alice@EXAMPLE.test" {
		t.Errorf("upstream sign-in page's username %q", got)
	}
	callback := e.upstreamSignIn(b, up, "alice", alicePassword)
	claims := e.mustReachApp(b.Follow(b.Get(callback.String()), e.base))
	org, _ := claims["organization"].(map[string]any)
	if m, _ := org["acme-corp"].(map[string]any); m["role"] != "member" {
		t.Fatalf("ID token organization claim %v", claims["organization"])
	}
	if got := e.members(); len(got) != 1 || got[0] != "alice:member" {
		t.Errorf("members %v", got)
	}

	// Signed in again the same way: a member already, nothing changes.
	b = apptest.NewBrowser(t)
	p = b.Submit(e.signInPage(b).Forms(t)[0], map[string]string{"username": "alice@example.test"})
	callback = e.upstreamSignIn(b, b.Follow(p, e.base), "alice", alicePassword)
	e.mustReachApp(b.Follow(b.Get(callback.String()), e.base))
	if got := e.members(); len(got) != 1 || got[0] != "alice:member" {
		t.Errorf("members after a second sign-in %v", got)
	}

	// An application's login_hint of that domain skips acme's page.
	b = apptest.NewBrowser(t)
	p = b.Follow(b.Get(e.authorize(url.Values{"scope": {"openid organization"}, "login_hint": {"alice@example.test"}})), e.base)
	if p.Status != http.StatusOK || !strings.HasPrefix(p.URL.String(), e.issuer(upstreamRealm)+"/") {
		t.Fatalf("a login_hint of the domain: %d at %s", p.Status, p.URL)
	}
	e.mustReachApp(b.Follow(b.Get(e.upstreamSignIn(b, p, "alice", alicePassword).String()), e.base))

	// Another domain keeps the password sign-in, its login_hint too.
	b = apptest.NewBrowser(t)
	hinted := b.Follow(b.Get(e.authorize(url.Values{"login_hint": {"bob@other.test"}})), e.base)
	if hinted.Status != http.StatusOK || !strings.HasPrefix(hinted.URL.Path, "/realms/acme/") {
		t.Fatalf("a login_hint of another domain: %d at %s", hinted.Status, hinted.URL)
	}
	form := e.signInPage(b).Forms(t)[0]
	p = b.Submit(form, map[string]string{"username": "bob@other.test", "password": ""})
	if p.Status != http.StatusBadRequest || !strings.Contains(p.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("an email of an unverified domain without a password: %d %s", p.Status, p.Header.Get("Location"))
	}
	p = b.Submit(p.Forms(t)[0], map[string]string{"username": "bob@other.test", "password": localPassword})
	e.mustReachApp(b.Follow(p, e.base))
	if got := e.members(); len(got) != 1 {
		t.Errorf("a password sign-in joined: %v", got)
	}
}

// What keeps the password sign-in, and what keeps a member out.
func TestHomeRealmDiscoveryOff(t *testing.T) {
	for _, tc := range []struct {
		name       string
		connection map[string]any
		verified   bool
		disableOrg bool
	}{
		{"domain not verified", map[string]any{"autoJoin": true}, false, false},
		{"connection disabled", map[string]any{"autoJoin": true, "enabled": false}, true, false},
		{"no redirect on email", map[string]any{"autoJoin": true, "redirectWhenEmailMatches": false}, true, false},
		{"connection for another domain", map[string]any{"autoJoin": true, "domain": "other.test"}, true, false},
		{"organization disabled", map[string]any{"autoJoin": true}, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, nil)
			orgSSO(e, tc.connection, tc.verified)
			if tc.disableOrg {
				apptest.MustStatus(t, e.s.Admin(http.MethodPut, "/admin/realms/acme/organizations/acme-corp",
					map[string]any{"enabled": false}), http.StatusOK)
			}
			b := apptest.NewBrowser(t)
			p := b.Submit(e.signInPage(b).Forms(t)[0], map[string]string{"username": "alice@example.test", "password": ""})
			if p.Status != http.StatusBadRequest {
				t.Fatalf("want the form again for a missing password, got %d to %s", p.Status, p.Header.Get("Location"))
			}
		})
	}
}

// A connection without autoJoin signs in through the provider without
// joining; hideOnLogin takes the provider's button off the page.
func TestSSOConnectionWithoutAutoJoin(t *testing.T) {
	e := newEnv(t, nil)
	id := orgSSO(e, map[string]any{"hideOnLogin": true}, true)
	b := apptest.NewBrowser(t)
	login := e.signInPage(b)
	if strings.Contains(string(login.Body), "Sign in with Corp") {
		t.Errorf("a hidden provider has its button")
	}
	p := b.Submit(login.Forms(t)[0], map[string]string{"username": "alice@example.test"})
	callback := e.upstreamSignIn(b, b.Follow(p, e.base), "alice", alicePassword)
	claims := e.mustReachApp(b.Follow(b.Get(callback.String()), e.base))
	if _, ok := claims["organization"]; ok {
		t.Errorf("claim without membership: %v", claims["organization"])
	}
	if got := e.members(); len(got) != 0 {
		t.Errorf("joined without autoJoin: %v", got)
	}
	apptest.MustStatus(t, e.s.Admin(http.MethodPut, "/admin/realms/acme/organizations/acme-corp/sso-connections/"+id,
		map[string]any{"hideOnLogin": false}), http.StatusOK)
	if !strings.Contains(string(e.signInPage(apptest.NewBrowser(t)).Body), "Sign in with Corp") {
		t.Errorf("the button is still hidden")
	}
}
