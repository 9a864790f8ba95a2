package broker_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/apptest"
)

// flowBind makes a browser flow of acme with steps and binds app to it.
func (e *env) flowBind(alias string, steps ...map[string]any) {
	e.t.Helper()
	r := e.s.Admin(http.MethodPost, "/admin/realms/acme/auth-flows", map[string]any{"alias": alias, "usage": "browser", "steps": steps})
	apptest.MustStatus(e.t, r, http.StatusCreated)
	id := r.Object(e.t)["id"].(string)
	apptest.MustStatus(e.t, e.s.Admin(http.MethodPut, "/admin/realms/acme/auth-flows/"+id+"/assign-client/app",
		map[string]any{"usage": "browser"}), http.StatusNoContent)
}

// A client whose flow is an identity provider's redirect alone signs in
// there: no password page of its own, and the provider's word is the
// flow's step.
func TestFlowIdentityProviderOnly(t *testing.T) {
	for _, tc := range []struct {
		name     string
		provider string // the step's provider; "" offers every provider
	}{
		{"the step names its provider", "corp"},
		{"the step offers the realm's providers", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, nil)
			e.flowBind("corp-only", map[string]any{"kind": "idp-redirect", "requirement": "required", "provider": tc.provider})
			b := apptest.NewBrowser(t)
			p := b.Follow(b.Get(e.authorize(nil)), e.base)
			if tc.provider == "" {
				// The flow's page: a button for corp.
				if p.Status != http.StatusOK || !strings.HasPrefix(p.URL.Path, "/realms/acme/signin/") {
					t.Fatalf("the flow's page: %d at %s", p.Status, p.URL)
				}
				links := p.Links(t)
				i := slices.IndexFunc(links, func(l string) bool { return strings.Contains(l, "/broker/corp/login") })
				if i < 0 || strings.Contains(string(p.Body), `name="password"`) {
					t.Fatalf("the flow's page has no button for corp, or a password field: %s", p.Body)
				}
				to, err := p.URL.Parse(links[i])
				if err != nil {
					t.Fatal(err)
				}
				p = b.Follow(b.Get(to.String()), e.base)
			}
			if p.Status != http.StatusOK || !strings.HasPrefix(p.URL.String(), e.issuer(upstreamRealm)+"/") {
				t.Fatalf("want the upstream's sign-in page, got %d at %s", p.Status, p.URL)
			}
			callback := e.upstreamSignIn(b, p, "alice", alicePassword)
			claims := e.mustReachApp(b.Follow(b.Get(callback.String()), e.base))
			if amr, _ := claims["amr"].([]any); !slices.Contains(amr, any("fed")) {
				t.Fatalf("amr %v lacks fed", claims["amr"])
			}
			if user := e.acmeUser("alice"); claims["sub"] != user["id"] {
				t.Fatalf("signed in as %v, want alice %v", claims["sub"], user["id"])
			}
			// The flow is finished: the provider's callback cannot be
			// replayed into it, and the login page of the request refuses.
			if p := b.Get(callback.String()); p.Status < 400 {
				t.Fatalf("the callback again: %d", p.Status)
			}
		})
	}
}

// A flow's identity-provider step is offered to the browser that started
// the flow only.
func TestFlowIdentityProviderOtherBrowser(t *testing.T) {
	e := newEnv(t, nil)
	e.flowBind("choose", map[string]any{"kind": "idp-redirect", "requirement": "required"})
	p := apptest.NewBrowser(t).Follow(apptest.NewBrowser(t).Get(e.authorize(nil)), e.base)
	if p.Status != http.StatusBadRequest {
		t.Fatalf("the flow's page in another browser: %d at %s, want 400", p.Status, p.URL)
	}
}

// A flow offering an organization's sign-in or a password: an email of
// the organization's verified domain goes to its provider and comes back
// a member; an email of no organization's domain is told so, and the
// password remains.
func TestFlowOrgDiscovery(t *testing.T) {
	e := newEnv(t, nil)
	orgSSO(e, map[string]any{"autoJoin": true}, true)
	e.flowBind("org-or-password", map[string]any{"kind": "org-discovery", "requirement": "alternative"},
		map[string]any{"kind": "username-password", "requirement": "alternative"})

	b := apptest.NewBrowser(t)
	page := b.Follow(b.Get(e.authorize(url.Values{"scope": {"openid organization"}})), e.base)
	if page.Status != http.StatusOK || !strings.HasPrefix(page.URL.Path, "/realms/acme/signin/") {
		t.Fatalf("the flow's first page: %d at %s", page.Status, page.URL)
	}
	form := page.Forms(t)[0]
	if p := b.Submit(form, map[string]string{"username": "bob@other.test"}); p.Status != http.StatusBadRequest ||
		!strings.Contains(string(p.Body), "No organization signs in with this email") {
		t.Fatalf("an email of no organization's domain: %d %s", p.Status, p.Body)
	}
	if p := b.Submit(form, map[string]string{"username": "not an email"}); p.Status != http.StatusBadRequest {
		t.Fatalf("not an email: %d", p.Status)
	}
	p := b.Submit(form, map[string]string{"username": "alice@example.test"})
	if p.Status != http.StatusSeeOther || !strings.HasPrefix(p.Location(t).String(), e.issuer("acme")+"/broker/corp/login?authRequestID=") {
		t.Fatalf("expected the way to corp, got %d to %s", p.Status, p.Header.Get("Location"))
	}
	up := b.Follow(p, e.base)
	if got := up.Forms(t)[0].Fields.Get("username"); got != "alice@example.test" {
		t.Errorf("the upstream's sign-in page has username %q, want the email as its login_hint", got)
	}
	claims := e.mustReachApp(b.Follow(b.Get(e.upstreamSignIn(b, up, "alice", alicePassword).String()), e.base))
	if amr, _ := claims["amr"].([]any); !slices.Contains(amr, any("fed")) {
		t.Fatalf("amr %v lacks fed", claims["amr"])
	}
	if got := e.members(); len(got) != 1 || got[0] != "alice:member" {
		t.Errorf("members %v, want alice joined through the organization's provider", got)
	}

	// The password alternative, linked from the page, signs bob in.
	b = apptest.NewBrowser(t)
	page = b.Follow(b.Get(e.authorize(nil)), e.base)
	other := page.URL.String() + "?step=1"
	pw := b.Get(other)
	if pw.Status != http.StatusOK || len(pw.Forms(t)) == 0 || !pw.Forms(t)[0].Fields.Has("password") {
		t.Fatalf("the password alternative: %d %s", pw.Status, pw.Body)
	}
	e.mustReachApp(b.Follow(b.Submit(pw.Forms(t)[0], map[string]string{"username": "bob", "password": localPassword}), e.base))
}

// A device approval whose flow is a provider's redirect: the device page's
// Approve leads to the provider, whose callback passes the flow itself
// (no authorization request behind it), and the user the provider vouched
// for approves the code.
func TestFlowIdentityProviderForDeviceApproval(t *testing.T) {
	e := newEnv(t, map[string]any{"upstreamLogout": true})
	apptest.MustStatus(t, e.s.Admin(http.MethodPost, "/admin/realms/acme/clients", map[string]any{"clientId": "tv",
		"clientType": "PUBLIC", "grantTypes": []string{"urn:ietf:params:oauth:grant-type:device_code"}}), http.StatusCreated)
	r := e.s.Admin(http.MethodPost, "/admin/realms/acme/auth-flows", map[string]any{"alias": "tv-through-corp", "usage": "device",
		"steps": []map[string]any{{"kind": "idp-redirect", "requirement": "required", "provider": "corp"}}})
	apptest.MustStatus(t, r, http.StatusCreated)
	apptest.MustStatus(t, e.s.Admin(http.MethodPut, "/admin/realms/acme/auth-flows/"+r.Object(t)["id"].(string)+"/assign-client/tv",
		map[string]any{"usage": "device"}), http.StatusNoContent)

	r = e.s.Request(http.MethodPost, "/realms/acme/protocol/openid-connect/auth/device", "client_id=tv&scope=openid",
		"Content-Type: application/x-www-form-urlencoded")
	apptest.MustStatus(t, r, http.StatusOK)
	device := r.Object(t)
	b := apptest.NewBrowser(t)
	page := b.Get(device["verification_uri_complete"].(string))
	if page.Status != http.StatusOK || strings.Contains(string(page.Body), `name="password"`) {
		t.Fatalf("the device page of a client with a flow: %d %s", page.Status, page.Body)
	}
	flowPage := b.Get(b.Submit(page.Forms(t)[0], map[string]string{"action": "approve"}).Location(t).String())
	login := flowPage.Location(t)
	if flowPage.Status != http.StatusSeeOther || login.Path != "/realms/acme/broker/corp/login" || login.Query().Get("flow") == "" {
		t.Fatalf("the flow's step: %d to %s, want corp's login for the flow", flowPage.Status, login)
	}
	// The flow is the browser's: another cannot go to the provider for it.
	if p := apptest.NewBrowser(t).Get(login.String()); p.Status != http.StatusBadRequest {
		t.Fatalf("the flow's provider login in another browser: %d", p.Status)
	}
	p := b.Follow(flowPage, e.base)
	if p.Status != http.StatusOK || !strings.HasPrefix(p.URL.String(), e.issuer(upstreamRealm)+"/") {
		t.Fatalf("want the upstream's sign-in page, got %d at %s: %s", p.Status, p.URL, p.Body)
	}
	callback := e.upstreamSignIn(b, p, "alice", alicePassword)
	done := b.Follow(b.Get(callback.String()), e.base)
	if done.Status != http.StatusOK || !strings.Contains(string(done.Body), "Device connected") {
		t.Fatalf("after the provider: %d at %s: %s", done.Status, done.URL, done.Body)
	}
	r = e.s.Request(http.MethodPost, "/realms/acme/protocol/openid-connect/token",
		url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:device_code"}, "client_id": {"tv"},
			"device_code": {device["device_code"].(string)}}.Encode(), "Content-Type: application/x-www-form-urlencoded")
	apptest.MustStatus(t, r, http.StatusOK)
	token, err := jwtClaims(r.Object(t)["access_token"].(string))
	if err != nil {
		t.Fatal(err)
	}
	user := e.acmeUser("alice")
	if token["sub"] != user["id"] {
		t.Fatalf("the device's token is %v's, want alice %v", token["sub"], user["id"])
	}
	// The browser's session keeps corp's ID token, for its sign-out there
	// (upstreamLogout).
	r = e.s.Admin(http.MethodGet, "/admin/realms/acme/users/"+user["id"].(string)+"/sessions", nil)
	apptest.MustStatus(t, r, http.StatusOK)
	var sessions []struct{ ID, IPAddress string }
	r.Decode(t, &sessions)
	browser := slices.IndexFunc(sessions, func(s struct{ ID, IPAddress string }) bool { return s.IPAddress != "" })
	if browser < 0 {
		t.Fatalf("no browser session among alice's %s", r.Body)
	}
	upstream, err := e.s.Store.GetBrokerSession(t.Context(), sessions[browser].ID)
	if err != nil || upstream.ProviderID != storedProvider(e.s, "acme", "corp").ID || upstream.IDToken == "" {
		t.Fatalf("the session's upstream: %+v, %v", upstream, err)
	}
}

// jwtClaims reads a JWT's claims, unverified: the test asks whose token it
// is, not whether it is genuine.
func jwtClaims(token string) (map[string]any, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, fmt.Errorf("not a JWT: %d parts", len(parts))
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil, err
	}
	var claims map[string]any
	return claims, json.Unmarshal(payload, &claims)
}
