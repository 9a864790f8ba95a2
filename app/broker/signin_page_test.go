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

	b := apptest.NewBrowser(t)
	login := b.Follow(b.Get(e.authorize(nil)), e.base)
	if login.Status != http.StatusOK || !strings.HasPrefix(login.URL.Path, "/realms/acme/") {
		t.Fatalf("expected acme's sign-in page, got %d at %s", login.Status, login.URL)
	}
	body := string(login.Body)
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
	for _, l := range login.Links(t) {
		if strings.Contains(l, "/broker/corp/login") {
			corp = l
		}
	}
	if corp == "" {
		t.Fatalf("no corp button in %v", login.Links(t))
	}
	to, err := login.URL.Parse(corp)
	if err != nil {
		t.Fatal(err)
	}
	up := b.Follow(b.Get(to.String()), e.base)
	callback := e.upstreamSignIn(b, up, "alice", alicePassword)
	e.mustReachApp(b.Follow(b.Get(callback.String()), e.base))

	q := url.Values{"authRequestID": {"whatever"}}.Encode()
	e.mustErrorPage(b.Get(e.issuer("acme")+"/broker/off/login?"+q), http.StatusNotFound, "not available")
	e.mustErrorPage(b.Get(e.issuer("acme")+"/broker/nope/login?"+q), http.StatusNotFound, "not available")
	e.mustErrorPage(b.Get(e.issuer("acme")+"/broker/corp/login?"+q), http.StatusBadRequest, "expired or was already used")
	e.mustErrorPage(b.Get(e.issuer("acme")+"/broker/corp/login"), http.StatusBadRequest, "incomplete")
	// An unknown or disabled hint shows the sign-in page.
	for _, hint := range []string{"off", "nope"} {
		p := b.Follow(apptest.NewBrowser(t).Get(e.authorize(url.Values{"idp_hint": {hint}})), e.base)
		if p.Status != http.StatusOK || !strings.Contains(string(p.Body), "Sign in with Corp") {
			t.Fatalf("hint %s: %d at %s", hint, p.Status, p.URL)
		}
	}
}

// The spec's direct link, GET …/broker/{alias}/login with client_id,
// redirect_uri, scope, state and nonce: the request is checked as any
// authorization request (an unregistered redirect URI goes nowhere), then
// runs through the provider to the application.
func TestDirectBrokerLink(t *testing.T) {
	e := newEnv(t, nil)
	b := apptest.NewBrowser(t)
	q := url.Values{"client_id": {"app"}, "redirect_uri": {appRedirect}, "scope": {"openid"}, "state": {"app-state"},
		"nonce": {"app-nonce"}}
	up := b.Follow(b.Get(e.issuer("acme")+"/broker/corp/login?"+q.Encode()), e.base)
	if up.Status != http.StatusOK || !strings.HasPrefix(up.URL.String(), e.issuer(upstreamRealm)) {
		t.Fatalf("expected the upstream sign-in page, got %d at %s", up.Status, up.URL)
	}
	callback := e.upstreamSignIn(b, up, "alice", alicePassword)
	claims := e.mustReachApp(b.Follow(b.Get(callback.String()), e.base))
	if claims["nonce"] != "app-nonce" {
		t.Fatalf("claims %v", claims)
	}
	q.Set("redirect_uri", "https://evil.example.test/cb")
	p := b.Follow(apptest.NewBrowser(t).Get(e.issuer("acme")+"/broker/corp/login?"+q.Encode()), e.base)
	if p.Status != http.StatusBadRequest || p.Header.Get("Location") != "" {
		t.Fatalf("unregistered redirect URI: %d, Location %q", p.Status, p.Header.Get("Location"))
	}
	apptest.MustStatus(t, e.s.Request(http.MethodGet, "/realms/nope/broker/corp/login", nil), http.StatusNotFound)
}
