package app

import (
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// flowTestSeededBrowser seeds acme's default flows and binds client to
// the browser one: the pages a SAML service provider bound to no flow
// signs in through (signin.BrowserDefinition).
func (e *codeflowEnv) flowTestSeededBrowser(client string) {
	e.t.Helper()
	r := e.admin(http.MethodPost, "/admin/realms/acme/auth-flows/seed-defaults", nil)
	mustStatus(e.t, r, http.StatusOK)
	var seeded []struct{ ID, Alias string }
	r.decode(e.t, &seeded)
	for _, f := range seeded {
		if f.Alias == "browser" {
			mustStatus(e.t, e.admin(http.MethodPut, "/admin/realms/acme/auth-flows/"+f.ID+"/assign-client/"+client, nil), http.StatusNoContent)
			return
		}
	}
	e.t.Fatal("seed-defaults made no browser flow")
}

// The built-in browser flow's password page is the sign-in page without a
// flow: the other ways to sign in the flow offers with it (a passkey, each
// identity provider, straight to it), remember me, the forgot-password
// link and, in a realm that takes sign-ups, the register link, each of
// them leading back to the flow.
func TestFlowBuiltInPasswordPage(t *testing.T) {
	e := newWebAuthnEnv(t, map[string]any{"registrationAllowed": true})
	mustStatus(t, e.admin(http.MethodPost, "/admin/realms/acme/identity-providers", map[string]any{"alias": "corp",
		"displayName": "Corp", "providerType": "oauth2", "clientId": "c", "clientSecret": "s",
		"authorizationUrl": "https://idp.example.test/auth", "tokenUrl": "https://idp.example.test/token",
		"userinfoUrl": "https://idp.example.test/userinfo"}), http.StatusCreated)
	cfg := e.oauth2Config("web", e.client("web", nil), "openid")
	e.flowTestSeededBrowser("web")

	b := e.browser()
	p := e.flowTestStart(b, cfg.AuthCodeURL("s"))
	flow := strings.TrimPrefix(p.url.Path, "/realms/acme/signin/")
	body := html.UnescapeString(string(p.body))
	back := "?" + url.Values{"authRequestID": {flow}}.Encode()
	for _, want := range []string{
		`name="rememberMe"`,
		e.url + "/realms/acme/forgot-password" + back,
		e.url + "/realms/acme/register" + back,
		p.url.Path + "?step=1\"",                        // the passkey step
		"/realms/acme/broker/corp/login?authRequestID=", // the provider, straight
		"Sign in with Corp", "Sign in with a passkey",
	} {
		if !strings.Contains(body, want) {
			t.Fatalf("the flow's password page lacks %q: %s", want, body)
		}
	}
	if strings.Contains(body, "organization") {
		t.Fatalf("a realm without organizations' domains is offered one: %s", body)
	}

	// The way back from a recovery page is the login page of the flow's
	// ID, which sends this browser on to the flow.
	back2 := b.get(e.url + "/realms/acme/login" + back)
	if back2.status != http.StatusSeeOther || back2.location(t).Path != p.url.Path {
		t.Fatalf("the login page of the flow's ID: %d to %v, want 303 to the flow", back2.status, back2.header.Get("Location"))
	}

	// Remember me, ticked on the flow's page, makes the SSO cookie outlive
	// the browser, as without a flow.
	done := b.submit(p, map[string]string{"username": "alice", "password": codeflowPassword, "rememberMe": "true"})
	e.redirectedBack(done)
	if c := loginSSOCookie(done); !strings.Contains(c, "Max-Age=") || !strings.Contains(c, "Expires=") {
		t.Fatalf("cookie with remember me in a flow: %q, want a persistent one", c)
	}
	b = e.browser()
	done = b.submit(e.flowTestStart(b, cfg.AuthCodeURL("s")), map[string]string{"username": "alice", "password": codeflowPassword})
	e.redirectedBack(done)
	if c := loginSSOCookie(done); c == "" || strings.Contains(c, "Max-Age") || strings.Contains(c, "Expires") {
		t.Fatalf("cookie without remember me in a flow: %q, want a browser-session one", c)
	}
}

// A person who creates an account from a flow's register link is signed
// in by it: the new password passes the flow's password step, and the
// sign-in goes on to the application. Another browser cannot pass the
// flow so.
func TestFlowRegisterLink(t *testing.T) {
	e := newWebAuthnEnv(t, map[string]any{"registrationAllowed": true})
	cfg := e.oauth2Config("web", e.client("web", nil), "openid")
	e.flowTestSeededBrowser("web")
	register := func(b *codeflowBrowser, flow, username string) *codeflowPage {
		t.Helper()
		page := b.get(e.url + "/realms/acme/register?" + url.Values{"authRequestID": {flow}}.Encode())
		mustPage(t, page, http.StatusOK, "Create")
		return b.submit(page, map[string]string{"username": username, "email": username + "@example.test",
			"firstName": "New", "lastName": "Person", "password": codeflowPassword, "confirm": codeflowPassword})
	}

	b := e.browser()
	flow := strings.TrimPrefix(e.flowTestStart(b, cfg.AuthCodeURL("s")).url.Path, "/realms/acme/signin/")
	if p := register(e.browser(), flow, "mallory"); p.status != http.StatusBadRequest {
		t.Fatalf("registering from another browser's flow: %d, want 400; body %s", p.status, p.body)
	}
	q := e.redirectedBack(register(b, flow, "carol"))
	if claims := e.totpExchange(cfg, q); claims["preferred_username"] != "carol" {
		t.Fatalf("the registered sign-in's ID token: %v", claims)
	}
}
