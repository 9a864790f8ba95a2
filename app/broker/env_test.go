package broker_test

import (
	"maps"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/idenplane/idenplane/app/apptest"
)

const (
	appRedirect    = "https://app.example.test/cb"
	alicePassword  = "correct horse battery"
	localPassword  = "local staple battery"
	upstreamRealm  = "upstream"
	downstreamName = "acme"
)

// env is one server with two realms: upstream, a real OpenID Connect
// provider with its user alice and a client for acme; and acme, which
// brokers to it as provider "corp" and has the application "app".
type env struct {
	t         *testing.T
	s         *apptest.Server
	base      string
	appSecret string
	fake      *fakeUpstream // the upstream when it is the test's own
	// accessToken and idToken are app's tokens from the last mustReachApp.
	accessToken, idToken string
}

func newEnv(t *testing.T, provider map[string]any) *env {
	t.Helper()
	s, base := liveServer(t, true)
	e := &env{t: t, s: s, base: base}
	s.CreateRealm(upstreamRealm)
	s.CreateUser(upstreamRealm, map[string]any{"username": "alice", "email": "alice@example.test", "emailVerified": true,
		"firstName": "Alice", "lastName": "Liddell", "password": alicePassword})
	upClient := s.Admin(http.MethodPost, "/admin/realms/upstream/clients", map[string]any{"clientId": "acme-broker",
		"redirectUris": []string{base + "/realms/acme/broker/corp/callback", base + "/realms/acme/broker/corp/endpoint/logout_response"},
		"grantTypes":   []string{"authorization_code"}})
	apptest.MustStatus(t, upClient, http.StatusCreated)
	createRealm(s, downstreamName)
	app := s.Admin(http.MethodPost, "/admin/realms/acme/clients", map[string]any{"clientId": "app",
		"redirectUris": []string{appRedirect}, "grantTypes": []string{"authorization_code"}})
	apptest.MustStatus(t, app, http.StatusCreated)
	e.appSecret = app.Object(t)["secret"].(string)
	body := map[string]any{"alias": "corp", "providerType": "oidc", "displayName": "Corp", "issuer": e.issuer(upstreamRealm),
		"clientId": "acme-broker", "clientSecret": upClient.Object(t)["secret"]}
	maps.Copy(body, provider)
	createProvider(s, downstreamName, body)
	return e
}

func (e *env) issuer(realm string) string { return e.base + "/realms/" + realm }

// authorize is acme's authorization URL for app, with extra parameters.
func (e *env) authorize(extra url.Values) string {
	q := url.Values{"client_id": {"app"}, "redirect_uri": {appRedirect}, "response_type": {"code"},
		"scope": {"openid"}, "state": {"app-state"}, "nonce": {"app-nonce"}}
	for k, v := range extra {
		q[k] = v
	}
	return e.issuer(downstreamName) + "/protocol/openid-connect/auth?" + q.Encode()
}

// toUpstreamLogin starts a sign-in of app with the idp hint and follows
// it to the upstream realm's sign-in page.
func (e *env) toUpstreamLogin(b *apptest.Browser) *apptest.Page {
	e.t.Helper()
	p := b.Follow(b.Get(e.authorize(url.Values{"kc_idp_hint": {"corp"}})), e.base)
	if p.Status != http.StatusOK || !strings.HasPrefix(p.URL.String(), e.issuer(upstreamRealm)+"/") {
		e.t.Fatalf("expected the upstream sign-in page, got %d at %s: %s", p.Status, p.URL, p.Body)
	}
	return p
}

// upstreamSignIn signs in at the upstream's page and follows the
// redirects up to (not into) acme's callback, which it returns.
func (e *env) upstreamSignIn(b *apptest.Browser, login *apptest.Page, username, password string) *url.URL {
	e.t.Helper()
	p := b.Submit(login.Forms(e.t)[0], map[string]string{"username": username, "password": password})
	for p.Status/100 == 3 {
		next := p.Location(e.t)
		if strings.HasPrefix(next.String(), e.issuer(downstreamName)+"/broker/corp/callback") {
			return next
		}
		p = b.Get(next.String())
	}
	e.t.Fatalf("the upstream sign-in did not come back: %d at %s: %s", p.Status, p.URL, p.Body)
	return nil
}

// signIn runs a whole sign-in of app through corp and returns where it
// ended: the application's redirect with a code, or a page.
func (e *env) signIn(b *apptest.Browser, username, password string) *apptest.Page {
	e.t.Helper()
	callback := e.upstreamSignIn(b, e.toUpstreamLogin(b), username, password)
	return b.Follow(b.Get(callback.String()), e.base)
}

// mustReachApp checks that p sends the browser to app with a code and
// app's state, and redeems the code: the ID token's claims.
func (e *env) mustReachApp(p *apptest.Page) map[string]any {
	e.t.Helper()
	if p.Status/100 != 3 {
		e.t.Fatalf("expected a redirect to the application, got %d at %s: %s", p.Status, p.URL, p.Body)
	}
	loc := p.Location(e.t)
	if !strings.HasPrefix(loc.String(), appRedirect+"?") || loc.Query().Get("state") != "app-state" || loc.Query().Get("code") == "" {
		e.t.Fatalf("redirect to %s", loc)
	}
	ctx := oidc.ClientContext(e.t.Context(), http.DefaultClient)
	provider, err := oidc.NewProvider(ctx, e.issuer(downstreamName))
	if err != nil {
		e.t.Fatal(err)
	}
	cfg := oauth2.Config{ClientID: "app", ClientSecret: e.appSecret, Endpoint: provider.Endpoint(), RedirectURL: appRedirect}
	tok, err := cfg.Exchange(ctx, loc.Query().Get("code"))
	if err != nil {
		e.t.Fatalf("redeem the code: %v", err)
	}
	e.accessToken = tok.AccessToken
	raw, _ := tok.Extra("id_token").(string)
	e.idToken = raw
	idt, err := provider.Verifier(&oidc.Config{ClientID: "app"}).Verify(ctx, raw)
	if err != nil {
		e.t.Fatal(err)
	}
	var claims map[string]any
	if err := idt.Claims(&claims); err != nil {
		e.t.Fatal(err)
	}
	return claims
}

// mustErrorPage checks that p is the realm's error page with status and
// the message of key.
func (e *env) mustErrorPage(p *apptest.Page, status int, text string) {
	e.t.Helper()
	if p.Status != status || !strings.Contains(p.Header.Get("Content-Type"), "text/html") || !strings.Contains(string(p.Body), text) {
		e.t.Fatalf("expected error page %d with %q, got %d (%s) at %s: %s", status, text, p.Status,
			p.Header.Get("Content-Type"), p.URL, p.Body)
	}
}

// events are acme's login events of type, newest first, as "error" or
// "userId" strings.
func (e *env) events(typ string) []map[string]any {
	e.t.Helper()
	r := e.s.Admin(http.MethodGet, "/admin/realms/acme/events?type="+typ, nil)
	apptest.MustStatus(e.t, r, http.StatusOK)
	var out []map[string]any
	r.Decode(e.t, &out)
	return out
}

// mustLoginError checks that the newest IDENTITY_PROVIDER_LOGIN_ERROR
// event has reason.
func (e *env) mustLoginError(reason string) {
	e.t.Helper()
	evs := e.events("IDENTITY_PROVIDER_LOGIN_ERROR")
	if len(evs) == 0 || evs[0]["error"] != reason {
		e.t.Fatalf("IDENTITY_PROVIDER_LOGIN_ERROR events %v, want the newest with error %q", evs, reason)
	}
	if d, _ := evs[0]["details"].(map[string]any); d["identity_provider"] != "corp" {
		e.t.Fatalf("event details %v", evs[0]["details"])
	}
}

// acmeUser finds acme's user by username, through the admin API.
func (e *env) acmeUser(username string) map[string]any {
	e.t.Helper()
	r := e.s.Admin(http.MethodGet, "/admin/realms/acme/users?username="+url.QueryEscape(username)+"&exact=true", nil)
	apptest.MustStatus(e.t, r, http.StatusOK)
	var list struct{ Users []map[string]any }
	r.Decode(e.t, &list)
	if len(list.Users) != 1 {
		e.t.Fatalf("users named %s: %s", username, r.Body)
	}
	return list.Users[0]
}
