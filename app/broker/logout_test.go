package broker_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/apptest"
)

// realmSessions counts the SSO sessions of a realm, through the admin API.
func (e *env) realmSessions(realm string) int {
	e.t.Helper()
	r := e.s.Admin(http.MethodGet, "/admin/realms/"+realm+"/sessions", nil)
	apptest.MustStatus(e.t, r, http.StatusOK)
	var list []map[string]any
	r.Decode(e.t, &list)
	n := 0
	for _, s := range list {
		if s["type"] == nil || s["type"] == "SSO" || s["type"] == "sso" {
			n++
		}
	}
	return n
}

// An RP-initiated logout at acme of a session signed in through corp: with
// upstreamLogout the browser goes through the upstream realm's
// end_session_endpoint (found by discovery) with the upstream ID token as
// id_token_hint, which ends the upstream session too, and comes back to
// acme, which sends it on to the application's post_logout_redirect_uri.
// Off (the default), the upstream session stays.
func TestUpstreamLogout(t *testing.T) {
	for _, on := range []bool{true, false} {
		t.Run(fmt.Sprintf("upstreamLogout=%v", on), func(t *testing.T) {
			e := newEnv(t, map[string]any{"upstreamLogout": on})
			endSession := e.issuer(upstreamRealm) + "/protocol/openid-connect/logout"
			rep := e.s.Admin(http.MethodGet, "/admin/realms/acme/identity-providers/corp", nil)
			apptest.MustStatus(t, rep, http.StatusOK)
			if got := rep.Object(t); got["logoutUrl"] != endSession || got["upstreamLogout"] != on {
				t.Fatalf("provider %s", rep.Body)
			}
			b := apptest.NewBrowser(t)
			e.mustReachApp(e.signIn(b, "alice", alicePassword))
			if e.realmSessions(upstreamRealm) != 1 || e.realmSessions(downstreamName) != 1 {
				t.Fatalf("sessions upstream %d, acme %d after the sign-in", e.realmSessions(upstreamRealm), e.realmSessions(downstreamName))
			}

			q := url.Values{"id_token_hint": {e.idToken}, "post_logout_redirect_uri": {appRedirect}, "state": {"bye"}}
			p := b.Get(e.issuer(downstreamName) + "/protocol/openid-connect/logout?" + q.Encode())
			var back *url.URL
			if on {
				up := p.Location(t)
				uq := up.Query()
				if !strings.HasPrefix(up.String(), endSession+"?") || uq.Get("id_token_hint") == "" || uq.Get("client_id") != "acme-broker" ||
					uq.Get("post_logout_redirect_uri") != e.issuer(downstreamName)+"/broker/corp/endpoint/logout_response" || len(uq.Get("state")) < 32 {
					t.Fatalf("sent to %s", up)
				}
				returned := b.Get(up.String()) // the upstream signs out and sends the browser back
				if loc := returned.Location(t); !strings.HasPrefix(loc.String(), e.issuer(downstreamName)+"/broker/corp/endpoint/logout_response?") {
					t.Fatalf("the upstream sent the browser to %s", loc)
				}
				p = b.Follow(returned, e.base)
				back = p.Location(t)
				// The state is used once.
				e.mustErrorPage(b.Get(returned.Location(t).String()), http.StatusBadRequest, "sign-out could not be checked")
			} else {
				back = p.Location(t)
			}
			if back.String() != appRedirect+"?state=bye" {
				t.Fatalf("the logout ended at %s", back)
			}
			want := 1
			if on {
				want = 0
			}
			if got := e.realmSessions(upstreamRealm); got != want {
				t.Fatalf("%d upstream sessions after the logout, want %d", got, want)
			}
			if got := e.realmSessions(downstreamName); got != 0 {
				t.Fatalf("%d acme sessions after the logout", got)
			}
		})
	}
}

// Without a post_logout_redirect_uri the upstream's sign-out comes back to
// the signed-out page; a state the server never sent, or another
// provider's, is refused there.
func TestUpstreamLogoutToSignedOutPage(t *testing.T) {
	e := newEnv(t, map[string]any{"upstreamLogout": true})
	b := apptest.NewBrowser(t)
	e.mustReachApp(e.signIn(b, "alice", alicePassword))
	p := b.Follow(b.Get(e.issuer(downstreamName)+"/protocol/openid-connect/logout?"+url.Values{"id_token_hint": {e.idToken}}.Encode()), e.base)
	if p.Status != http.StatusOK || !strings.HasPrefix(p.URL.String(), e.issuer(downstreamName)+"/broker/corp/endpoint/logout_response?") ||
		!strings.Contains(string(p.Body), "signed out") {
		t.Fatalf("ended at %d %s: %s", p.Status, p.URL, p.Body)
	}
	if e.realmSessions(upstreamRealm) != 0 {
		t.Fatal("the upstream session outlived the logout")
	}
	for _, path := range []string{"/broker/corp/endpoint/logout_response?state=forged", "/broker/corp/endpoint/logout_response",
		"/broker/nope/endpoint/logout_response?state=x"} {
		e.mustErrorPage(b.Get(e.issuer(downstreamName)+path), http.StatusBadRequest, "sign-out could not be checked")
	}
}

// upstreamLogout needs an end_session_endpoint and a provider type with
// ID tokens; each refusal names its field.
func TestUpstreamLogoutValidation(t *testing.T) {
	s, _ := liveServer(t, false)
	createRealm(s, "acme")
	for _, tc := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"upstreamLogout": true}, "upstreamLogout"},
		{map[string]any{"upstreamLogout": true, "logoutUrl": "https://github.com/logout"}, "upstreamLogout"},
		{map[string]any{"logoutUrl": "javascript:alert(1)"}, "logoutUrl"},
	} {
		body := githubProvider("gh")
		for k, v := range tc.body {
			body[k] = v
		}
		apptest.MustError(t, s.Admin(http.MethodPost, "/admin/realms/acme/identity-providers", body), 400, "invalid_field", tc.field)
	}
	oidcBody := map[string]any{"alias": "o", "providerType": "oidc", "clientId": "c", "clientSecret": "s",
		"issuer": "https://idp.example.test", "authorizationUrl": "https://idp.example.test/auth", "tokenUrl": "https://idp.example.test/token",
		"jwksUrl": "https://idp.example.test/keys", "upstreamLogout": true}
	apptest.MustError(t, s.Admin(http.MethodPost, "/admin/realms/acme/identity-providers", oidcBody), 400, "invalid_field", "logoutUrl")
	oidcBody["logoutUrl"] = "https://idp.example.test/logout"
	apptest.MustStatus(t, s.Admin(http.MethodPost, "/admin/realms/acme/identity-providers", oidcBody), http.StatusCreated)
}
