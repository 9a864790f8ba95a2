package broker_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/apptest"
)

// A state is good only at the callback of the provider it was issued for.
// The mix-up: a person starts a sign-in through corp; the attacker, who runs
// the realm's second provider evil, sends their browser to evil's callback
// with that state and a code of the attacker's own evil account. The
// browser, the PKCE verifier and the nonce all match, so only the provider
// check stands between the person and a session as the attacker.
func TestBrokerCallbackRefusesAnotherProvidersState(t *testing.T) {
	corp := newFakeUpstream(t)
	e := newFakeEnv(t, corp, nil)
	evil := newFakeUpstream(t)
	createProvider(e.s, downstreamName, map[string]any{"alias": "evil", "providerType": "oidc", "issuer": evil.srv.URL,
		"clientId": fakeClientID, "clientSecret": "fake-secret", "authorizationUrl": evil.srv.URL + "/auth",
		"tokenUrl": evil.srv.URL + "/token", "jwksUrl": evil.srv.URL + "/jwks"})

	// The person's browser is sent to corp with a state bound to it.
	b := apptest.NewBrowser(t)
	p := b.Follow(b.Get(e.authorize(url.Values{"kc_idp_hint": {"corp"}})), e.base)
	toCorp := p.Location(t)
	if !strings.HasPrefix(toCorp.String(), corp.srv.URL+"/auth?") {
		t.Fatalf("expected a redirect to corp, got %d to %s", p.Status, toCorp)
	}
	sent := toCorp.Query()

	// The attacker's evil answers for that request, to its own callback.
	evilCallback := e.issuer(downstreamName) + "/broker/evil/callback"
	q := url.Values{"state": {sent.Get("state")}, "nonce": {sent.Get("nonce")}, "code_challenge": {sent.Get("code_challenge")},
		"code_challenge_method": {sent.Get("code_challenge_method")}, "redirect_uri": {evilCallback}}
	atEvil := apptest.NewBrowser(t).Get(evil.srv.URL + "/auth?" + q.Encode())
	back := atEvil.Location(t)
	if !strings.HasPrefix(back.String(), evilCallback+"?") || back.Query().Get("code") == "" {
		t.Fatalf("evil answered %d to %s", atEvil.Status, back)
	}

	e.mustErrorPage(b.Follow(b.Get(back.String()), e.base), http.StatusBadRequest, "could not be checked")
	evs := e.events("IDENTITY_PROVIDER_LOGIN_ERROR")
	if len(evs) != 1 || evs[0]["error"] != "provider_mismatch" {
		t.Fatalf("IDENTITY_PROVIDER_LOGIN_ERROR events %v, want one with error provider_mismatch", evs)
	}
	if d, _ := evs[0]["details"].(map[string]any); d["identity_provider"] != "evil" {
		t.Fatalf("event details %v", evs[0]["details"])
	}
	if n := len(e.events("IDENTITY_PROVIDER_FIRST_LOGIN")); n != 0 {
		t.Fatalf("%d users created through evil", n)
	}

	// The state was used up by the attempt: corp's real answer is refused
	// too, as any used state is.
	e.mustErrorPage(b.Get(e.issuer(downstreamName)+"/broker/corp/callback?state="+url.QueryEscape(sent.Get("state"))+"&code=x"),
		http.StatusBadRequest, "could not be checked")
	e.mustLoginError("invalid_state")
}
