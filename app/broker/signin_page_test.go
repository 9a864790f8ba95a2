package broker_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/apptest"
)

// The hosted sign-in page shows a button per enabled provider, with its
// display name or its preset's; the button leads through the upstream to
// the application. A disabled provider has no button, and its login is
// refused.
func TestSignInPageButtons(t *testing.T) {
	e := newEnv(t, nil)
	createProvider(e.s, "acme", githubProvider("gh"))
	off := githubProvider("off")
	off["enabled"], off["displayName"] = false, "Hidden"
	createProvider(e.s, "acme", off)

	b := newBrowser(t)
	login := b.follow(b.get(e.authorize(nil)), e.base)
	if login.status != http.StatusOK || !strings.HasPrefix(login.url.Path, "/realms/acme/") {
		t.Fatalf("expected acme's sign-in page, got %d at %s", login.status, login.url)
	}
	body := string(login.body)
	if !strings.Contains(body, "Sign in with Corp") || !strings.Contains(body, "Sign in with GitHub") || strings.Contains(body, "Hidden") {
		t.Fatalf("sign-in page buttons: %s", body)
	}
	// Without an organization's SSO connection, the password is asked for.
	if in := passwordInput.FindString(body); !strings.Contains(in, "required") {
		t.Errorf("password input %q", in)
	}
	// Each button shows its type's icon, a decoration beside the text that
	// names the provider (alt=""), served by the server itself.
	for typ, icon := range map[string]string{"github": "github", "oidc": "generic"} {
		m := regexp.MustCompile(`<a class="button secondary idp idp-` + typ + `" href="[^"]+">\s*<img class="idp-icon" src="(/assets/idp/` +
			icon + `\.[0-9a-f]{12}\.svg)" alt=""`).FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("no %s icon on the %s button: %s", icon, typ, body)
		}
		r := e.s.Request(http.MethodGet, m[1], nil)
		if r.Status != http.StatusOK || r.Header.Get("Content-Type") != "image/svg+xml" {
			t.Fatalf("GET %s: %d %q", m[1], r.Status, r.Header.Get("Content-Type"))
		}
	}
	var corp string
	for _, l := range login.links(t) {
		if strings.Contains(l, "/broker/corp/login") {
			corp = l
		}
	}
	if corp == "" {
		t.Fatalf("no corp button in %v", login.links(t))
	}
	to, err := login.url.Parse(corp)
	if err != nil {
		t.Fatal(err)
	}
	up := b.follow(b.get(to.String()), e.base)
	callback := e.upstreamSignIn(b, up, "alice", alicePassword)
	e.mustReachApp(b.follow(b.get(callback.String()), e.base))

	q := url.Values{"authRequestID": {"whatever"}}.Encode()
	e.mustErrorPage(b.get(e.issuer("acme")+"/broker/off/login?"+q), http.StatusNotFound, "not available")
	e.mustErrorPage(b.get(e.issuer("acme")+"/broker/nope/login?"+q), http.StatusNotFound, "not available")
	e.mustErrorPage(b.get(e.issuer("acme")+"/broker/corp/login?"+q), http.StatusBadRequest, "expired or was already used")
	e.mustErrorPage(b.get(e.issuer("acme")+"/broker/corp/login"), http.StatusBadRequest, "incomplete")
	// An unknown or disabled hint shows the sign-in page.
	for _, hint := range []string{"off", "nope"} {
		p := b.follow(newBrowser(t).get(e.authorize(url.Values{"idp_hint": {hint}})), e.base)
		if p.status != http.StatusOK || !strings.Contains(string(p.body), "Sign in with Corp") {
			t.Fatalf("hint %s: %d at %s", hint, p.status, p.url)
		}
	}
}

// The spec's direct link, GET …/broker/{alias}/login with client_id,
// redirect_uri, scope, state and nonce: the request is checked as any
// authorization request (an unregistered redirect URI goes nowhere), then
// runs through the provider to the application.
func TestDirectBrokerLink(t *testing.T) {
	e := newEnv(t, nil)
	b := newBrowser(t)
	q := url.Values{"client_id": {"app"}, "redirect_uri": {appRedirect}, "scope": {"openid"}, "state": {"app-state"},
		"nonce": {"app-nonce"}}
	up := b.follow(b.get(e.issuer("acme")+"/broker/corp/login?"+q.Encode()), e.base)
	if up.status != http.StatusOK || !strings.HasPrefix(up.url.String(), e.issuer(upstreamRealm)) {
		t.Fatalf("expected the upstream sign-in page, got %d at %s", up.status, up.url)
	}
	callback := e.upstreamSignIn(b, up, "alice", alicePassword)
	claims := e.mustReachApp(b.follow(b.get(callback.String()), e.base))
	if claims["nonce"] != "app-nonce" {
		t.Fatalf("claims %v", claims)
	}
	q.Set("redirect_uri", "https://evil.example.test/cb")
	p := b.follow(newBrowser(t).get(e.issuer("acme")+"/broker/corp/login?"+q.Encode()), e.base)
	if p.status != http.StatusBadRequest || p.header.Get("Location") != "" {
		t.Fatalf("unregistered redirect URI: %d, Location %q", p.status, p.header.Get("Location"))
	}
	apptest.MustStatus(t, e.s.Request(http.MethodGet, "/realms/nope/broker/corp/login", nil), http.StatusNotFound)
}
