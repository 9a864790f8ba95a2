package app

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

// standingEnv is alice signed in, in one browser (one SSO session), at two
// confidential clients, web and spa, which introspect their own tokens.
type standingEnv struct {
	*codeflowEnv
	b        *codeflowBrowser
	web, spa *oauth2.Config
	webTok   *oauth2.Token
	spaTok   *oauth2.Token
}

func newStandingEnv(t *testing.T) *standingEnv {
	t.Helper()
	e := &standingEnv{codeflowEnv: newCodeflowEnv(t)}
	e.web = e.oauth2Config("web", e.client("web", nil), "openid")
	e.spa = e.oauth2Config("spa", e.client("spa", nil), "openid")
	e.b = e.browser()
	e.webTok = e.codeflowTokens(e.web, e.b)
	e.spaTok = e.codeflowTokens(e.spa, e.b) // the SSO session answers: no login page
	return e
}

// active introspects token as the client of cfg; an inactive answer must
// be exactly {"active": false}.
func (e *codeflowEnv) active(cfg *oauth2.Config, token string) bool {
	e.t.Helper()
	out := e.introspect(cfg.ClientID, cfg.ClientSecret, token)
	if out["active"] != true && (len(out) != 1 || out["active"] != false) {
		e.t.Fatalf("introspection answered %v, want exactly {\"active\": false} for an inactive token", out)
	}
	return out["active"] == true
}

// userinfo asks for the claims of token's user.
func (e *codeflowEnv) userinfo(token string) *testResponse {
	e.t.Helper()
	return e.request(http.MethodGet, "/realms/acme/protocol/openid-connect/userinfo", nil, "Authorization: Bearer "+token)
}

// mustStand checks that token is alive at both endpoints.
func (e *codeflowEnv) mustStand(cfg *oauth2.Config, token, what string) {
	e.t.Helper()
	if !e.active(cfg, token) {
		e.t.Fatalf("%s: introspected as inactive", what)
	}
	if r := e.userinfo(token); r.Status != http.StatusOK {
		e.t.Fatalf("%s: userinfo %d %s", what, r.Status, r.Body)
	}
}

// mustBeEnded checks that token is dead at both endpoints: inactive, and
// userinfo's 401 invalid_token with its Bearer challenge.
func (e *codeflowEnv) mustBeEnded(cfg *oauth2.Config, token, what string) {
	e.t.Helper()
	if e.active(cfg, token) {
		e.t.Fatalf("%s: still introspected as active", what)
	}
	r := e.userinfo(token)
	if r.Status != http.StatusUnauthorized || r.object(e.t)["error"] != "invalid_token" ||
		!strings.Contains(r.Header.Get("WWW-Authenticate"), `error="invalid_token"`) {
		e.t.Fatalf("%s: userinfo %d %s (WWW-Authenticate %q), want 401 invalid_token", what, r.Status, r.Body,
			r.Header.Get("WWW-Authenticate"))
	}
}

// sessionOf finds alice's session of the given type ("sso", or the
// clientId of an OAuth session).
func (e *codeflowEnv) sessionOf(which string) string {
	e.t.Helper()
	for _, s := range e.userSessions() {
		if s.Type == "sso" && which == "sso" || s.Type == "oauth" && s.ClientID == which {
			return s.ID
		}
	}
	e.t.Fatalf("alice has no %s session: %+v", which, e.userSessions())
	return ""
}

// Each way a grant ends reaches the access tokens issued in it at once:
// introspection answers inactive and userinfo 401, right after the request
// that ended it answered, though both were asked (and could have cached
// the answer) just before. The other client's token lives on where its
// session does.
func TestAccessTokensEndWithTheirGrant(t *testing.T) {
	for _, tc := range []struct {
		name string
		// end ends web's grant and returns any other access token of web
		// that must have ended with it.
		end      func(t *testing.T, e *standingEnv) []string
		spaLives bool
	}{
		{"RP-initiated logout", func(t *testing.T, e *standingEnv) []string {
			hint := e.webTok.Extra("id_token").(string)
			p := e.b.get(e.url + "/realms/acme/protocol/openid-connect/logout?id_token_hint=" + url.QueryEscape(hint))
			if p.status != http.StatusOK || !strings.Contains(string(p.body), "signed out") {
				t.Fatalf("logout: %d %s", p.status, p.body)
			}
			return nil
		}, false},
		{"refresh token revoked (RFC 7009)", func(t *testing.T, e *standingEnv) []string {
			r := e.request(http.MethodPost, "/realms/acme/protocol/openid-connect/revoke",
				"token="+url.QueryEscape(e.webTok.RefreshToken)+"&token_type_hint=refresh_token",
				"Content-Type: application/x-www-form-urlencoded", codeflowBasic("web", e.web.ClientSecret))
			mustStatus(t, r, http.StatusOK)
			return nil
		}, true},
		{"refresh token reused", func(t *testing.T, e *standingEnv) []string {
			next, err := e.refresh(e.web, e.webTok.RefreshToken)
			if err != nil {
				t.Fatal(err)
			}
			e.mustStand(e.web, next.AccessToken, "the refreshed token")
			_, err = e.refresh(e.web, e.webTok.RefreshToken)
			codeflowMustRetrieveError(t, err, "invalid_grant")
			return []string{next.AccessToken}
		}, true},
		{"admin deletes the SSO session", func(t *testing.T, e *standingEnv) []string {
			mustStatus(t, e.admin(http.MethodDelete, "/admin/realms/acme/sessions/"+e.sessionOf("sso")+"?type=sso", nil), http.StatusOK)
			return nil
		}, false},
		{"admin deletes the client's session", func(t *testing.T, e *standingEnv) []string {
			mustStatus(t, e.admin(http.MethodDelete, "/admin/realms/acme/sessions/"+e.sessionOf("web")+"?type=oauth", nil), http.StatusOK)
			return nil
		}, true},
		{"admin deletes the user's sessions", func(t *testing.T, e *standingEnv) []string {
			mustStatus(t, e.admin(http.MethodDelete, "/admin/realms/acme/users/"+e.aliceID+"/sessions", nil), http.StatusOK)
			return nil
		}, false},
		{"user disabled", func(t *testing.T, e *standingEnv) []string {
			mustStatus(t, e.admin(http.MethodPatch, "/admin/realms/acme/users/"+e.aliceID, map[string]any{"enabled": false}), http.StatusOK)
			return nil
		}, false},
		{"user deleted", func(t *testing.T, e *standingEnv) []string {
			mustStatus(t, e.admin(http.MethodDelete, "/admin/realms/acme/users/"+e.aliceID, nil), http.StatusNoContent)
			return nil
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newStandingEnv(t)
			e.mustStand(e.web, e.webTok.AccessToken, "web's token before")
			e.mustStand(e.spa, e.spaTok.AccessToken, "spa's token before")
			more := tc.end(t, e)
			e.mustBeEnded(e.web, e.webTok.AccessToken, "web's token")
			for _, tok := range more {
				e.mustBeEnded(e.web, tok, "web's other token")
			}
			if tc.spaLives {
				e.mustStand(e.spa, e.spaTok.AccessToken, "spa's token, whose session stays")
			} else {
				e.mustBeEnded(e.spa, e.spaTok.AccessToken, "spa's token")
			}
		})
	}
}

// A client signed in again under the same SSO session after its session
// ended does not bring the tokens of the ended one back.
func TestAccessTokenOfEndedClientSessionStaysEnded(t *testing.T) {
	e := newStandingEnv(t)
	r := e.request(http.MethodPost, "/realms/acme/protocol/openid-connect/revoke", "token="+url.QueryEscape(e.webTok.RefreshToken),
		"Content-Type: application/x-www-form-urlencoded", codeflowBasic("web", e.web.ClientSecret))
	mustStatus(t, r, http.StatusOK)
	e.mustBeEnded(e.web, e.webTok.AccessToken, "the revoked grant's token")
	e.clock.advance(2 * time.Second)
	again := e.codeflowTokens(e.web, e.b) // the SSO session answers: a new client session under it
	e.mustStand(e.web, again.AccessToken, "the new sign-in's token")
	e.mustBeEnded(e.web, e.webTok.AccessToken, "the revoked grant's token after a new sign-in")
}

// A session idling out ends its tokens, though they have not expired; a
// refresh slides the session, and the tokens of its grant live on with it.
func TestAccessTokenFollowsSessionExpiry(t *testing.T) {
	e := newCodeflowEnv(t)
	mustStatus(t, e.admin(http.MethodPatch, "/admin/realms/acme", map[string]any{"accessTokenLifespan": 3600}), http.StatusOK)
	web := e.oauth2Config("web", e.client("web", nil), "openid")
	first := e.codeflowTokens(web, e.browser())
	e.mustStand(web, first.AccessToken, "a fresh token")
	// The session idles out after 30 minutes: refresh every 20, past it,
	// within the hour the first token lives.
	tok := first
	for range 2 {
		e.clock.advance(20 * time.Minute)
		next, err := e.refresh(web, tok.RefreshToken)
		if err != nil {
			t.Fatal(err)
		}
		tok = next
		e.mustStand(web, first.AccessToken, "the first token, its session slid by a refresh")
	}
	e.clock.advance(31 * time.Minute)
	e.mustBeEnded(web, tok.AccessToken, "a token of an idled-out session")
}

// A revocation is seen by every check that starts after the revoking
// request answered, however many checks run beside it and cached what
// they saw before.
func TestAccessTokenRevocationSeenAtOnce(t *testing.T) {
	e := newStandingEnv(t)
	body := "token=" + url.QueryEscape(e.webTok.AccessToken)
	var revoked, stop atomic.Bool
	var before, checks, stale atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for !stop.Load() {
				after := revoked.Load()
				r := e.request(http.MethodPost, "/realms/acme/protocol/openid-connect/token/introspect", body,
					"Content-Type: application/x-www-form-urlencoded", codeflowBasic("web", e.web.ClientSecret))
				if r.Status != http.StatusOK {
					t.Errorf("introspection: %d %s", r.Status, r.Body)
					return
				}
				if !after {
					before.Add(1)
				} else {
					checks.Add(1)
					if strings.Contains(string(r.Body), `"active":true`) {
						stale.Add(1)
					}
				}
			}
		})
	}
	for before.Load() < 20 && !t.Failed() { // the checks have cached the live answer
		time.Sleep(time.Millisecond)
	}
	mustStatus(t, e.admin(http.MethodDelete, "/admin/realms/acme/sessions/"+e.sessionOf("sso")+"?type=sso", nil), http.StatusOK)
	revoked.Store(true)
	for checks.Load() < 200 && !t.Failed() {
		time.Sleep(time.Millisecond)
	}
	stop.Store(true)
	wg.Wait()
	if n := stale.Load(); n > 0 {
		t.Fatalf("%d of %d checks started after the logout answered saw the token active", n, checks.Load())
	}
}

// Client-credentials tokens have no session: they stand while their client
// and its service account are enabled, and a disable ends them for good,
// as Keycloak's notBefore does.
func TestClientCredentialsTokenStanding(t *testing.T) {
	e := newCodeflowEnv(t)
	secret := e.machineClient(t, "acme", "svc")
	cfg := &oauth2.Config{ClientID: "svc", ClientSecret: secret}
	token := func() string {
		r := e.request(http.MethodPost, "/realms/acme/protocol/openid-connect/token", "grant_type=client_credentials",
			"Content-Type: application/x-www-form-urlencoded", codeflowBasic("svc", secret))
		mustStatus(t, r, http.StatusOK)
		return r.object(t)["access_token"].(string)
	}
	introspector := e.oauth2Config("web", e.client("web", nil))
	tok := token()
	e.mustStand(cfg, tok, "a fresh token")
	e.mustStand(introspector, tok, "a fresh token, asked by another client")

	sa := e.admin(http.MethodGet, "/admin/realms/acme/clients/svc/service-account-user", nil).object(t)["id"].(string)
	for _, tc := range []struct {
		name          string
		path          string
		off, on       map[string]any
		introspecting *oauth2.Config // the client itself cannot authenticate while disabled
	}{
		{"client disabled", "/admin/realms/acme/clients/svc", map[string]any{"enabled": false}, map[string]any{"enabled": true}, introspector},
		{"service account disabled", "/admin/realms/acme/users/" + sa, map[string]any{"enabled": false}, map[string]any{"enabled": true}, cfg},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tok := token()
			e.mustStand(tc.introspecting, tok, "a fresh token")
			mustStatus(t, e.admin(http.MethodPatch, tc.path, tc.off), http.StatusOK)
			e.mustBeEnded(tc.introspecting, tok, "the token")
			mustStatus(t, e.admin(http.MethodPatch, tc.path, tc.on), http.StatusOK)
			e.mustBeEnded(tc.introspecting, tok, "the token once enabled again")
			e.clock.advance(time.Second)
			e.mustStand(tc.introspecting, token(), "a new token once enabled again")
		})
	}
	// Revoked by its client, it is over for good.
	tok = token()
	r := e.request(http.MethodPost, "/realms/acme/protocol/openid-connect/revoke", "token="+url.QueryEscape(tok),
		"Content-Type: application/x-www-form-urlencoded", codeflowBasic("svc", secret))
	mustStatus(t, r, http.StatusOK)
	e.mustBeEnded(cfg, tok, "a revoked token")
	e.mustStand(cfg, token(), "a new token")
}

// A live refresh token introspects as active with its details, for its own
// client only; rotated, revoked, expired or of an ended session, inactive.
func TestIntrospectRefreshToken(t *testing.T) {
	e := newStandingEnv(t)
	e.clock.advance(time.Second)
	issued := e.clock.now()
	offlineCfg := e.oauth2Config("web", e.web.ClientSecret, "openid", "offline_access")
	offline := e.codeflowTokens(offlineCfg, e.b)
	sso := e.sessionOf("sso")

	out := e.introspect("web", e.web.ClientSecret, e.webTok.RefreshToken)
	want := map[string]any{"active": true, "token_type": "Refresh", "typ": "Refresh", "client_id": "web", "azp": "web",
		"sub": e.aliceID, "username": "alice", "scope": "email openid profile roles web-origins", "sid": sso,
		"iss": e.issuer("acme")}
	for k, v := range want {
		if out[k] != v {
			t.Fatalf("introspection of a live refresh token: %s = %v, want %v; all %v", k, out[k], v, out)
		}
	}
	if iat, exp := out["iat"].(float64), out["exp"].(float64); int64(iat) > issued.Unix() || int64(exp) <= issued.Unix() {
		t.Fatalf("iat %v exp %v around %v", out["iat"], out["exp"], issued.Unix())
	}
	if out := e.introspect("web", e.web.ClientSecret, offline.RefreshToken); out["active"] != true || out["typ"] != "Offline" ||
		out["scope"] != "email offline_access openid profile roles web-origins" || out["sid"] == sso || out["sid"] == "" {
		t.Fatalf("introspection of an offline token: %v", out)
	}
	// Another client learns nothing of it.
	if e.active(e.spa, e.webTok.RefreshToken) {
		t.Fatal("another client's refresh token introspected as active")
	}

	// Rotated: the old one is over, its successor live.
	next, err := e.refresh(e.web, e.webTok.RefreshToken)
	if err != nil {
		t.Fatal(err)
	}
	if e.active(e.web, e.webTok.RefreshToken) || !e.active(e.web, next.RefreshToken) {
		t.Fatal("after a rotation: want the old token inactive, the new one active")
	}
	// spa's ends with the SSO session; the offline one survives it.
	e.mustStand(e.spa, e.spaTok.AccessToken, "spa before logout")
	mustStatus(t, e.admin(http.MethodDelete, "/admin/realms/acme/sessions/"+sso+"?type=sso", nil), http.StatusOK)
	if e.active(e.spa, e.spaTok.RefreshToken) || e.active(e.web, next.RefreshToken) || !e.active(e.web, offline.RefreshToken) {
		t.Fatal("after logout: want the online tokens inactive and the offline one active")
	}
	// Revoked.
	r := e.request(http.MethodPost, "/realms/acme/protocol/openid-connect/revoke", "token="+url.QueryEscape(offline.RefreshToken),
		"Content-Type: application/x-www-form-urlencoded", codeflowBasic("web", e.web.ClientSecret))
	mustStatus(t, r, http.StatusOK)
	if e.active(e.web, offline.RefreshToken) {
		t.Fatal("a revoked offline token introspected as active")
	}

	// Expired: past the session's idle time.
	fresh := e.newSignIn(e.web)
	if !e.active(e.web, fresh.RefreshToken) {
		t.Fatal("a fresh refresh token introspected as inactive")
	}
	e.clock.advance(31 * time.Minute)
	if e.active(e.web, fresh.RefreshToken) {
		t.Fatal("an expired refresh token introspected as active")
	}
}

// newSignIn signs alice in at cfg's client in a new browser.
func (e *codeflowEnv) newSignIn(cfg *oauth2.Config) *oauth2.Token {
	e.t.Helper()
	return e.codeflowTokens(cfg, e.browser())
}

// The account and step-up APIs refuse a token whose session has ended,
// as they do any other dead token.
func TestAccountAPIRefusesTokenOfEndedSession(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(e *accountEnv, tok *oauth2.Token)
	}{
		{"admin deletes the user's sessions", func(e *accountEnv, _ *oauth2.Token) {
			mustStatus(e.t, e.admin(http.MethodDelete, "/admin/realms/acme/users/"+e.aliceID+"/sessions", nil), http.StatusOK)
		}},
		{"refresh token revoked", func(e *accountEnv, tok *oauth2.Token) {
			r := e.request(http.MethodPost, "/realms/acme/protocol/openid-connect/revoke", "token="+url.QueryEscape(tok.RefreshToken),
				"Content-Type: application/x-www-form-urlencoded", codeflowBasic("cli", e.cfg.ClientSecret))
			mustStatus(e.t, r, http.StatusOK)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newAccountEnv(t)
			tok := e.token("alice", codeflowPassword)
			mustStatus(t, e.api(http.MethodGet, "/", tok.AccessToken, nil), http.StatusOK)
			if r := e.stepUp(http.MethodGet, "challenge", tok.AccessToken, nil); r.Status == http.StatusUnauthorized {
				t.Fatalf("step-up with a live token: %d %s", r.Status, r.Body)
			}
			tc.end(e, tok)
			for _, r := range []*testResponse{
				e.api(http.MethodGet, "/", tok.AccessToken, nil),
				e.api(http.MethodPost, "/profile", tok.AccessToken, map[string]any{"firstName": "Mallory"}),
				e.api(http.MethodGet, "/data-export", tok.AccessToken, nil),
				e.stepUp(http.MethodGet, "challenge", tok.AccessToken, nil),
				e.stepUp(http.MethodPost, "verify", tok.AccessToken, map[string]any{"method": "totp", "code": "123456"}),
			} {
				mustError(t, r, http.StatusUnauthorized, "invalid_token", "")
				if h := r.Header.Get("WWW-Authenticate"); !strings.HasPrefix(h, `Bearer realm="acme"`) || !strings.Contains(h, `error="invalid_token"`) {
					t.Fatalf("WWW-Authenticate %q", h)
				}
			}
			if u := e.admin(http.MethodGet, "/admin/realms/acme/users/"+e.aliceID, nil).object(t); u["firstName"] != "Alice" {
				t.Fatalf("a dead token changed the profile: %v", u)
			}
		})
	}
}

// Every access token of the realm has a jti, which keys the cache of
// checks: a token signed without one is refused, not answered for another.
func TestAccessTokenWithoutIDRefused(t *testing.T) {
	e := newStandingEnv(t)
	realm, err := e.store.GetRealm(t.Context(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	_, claims := jwtParts(t, e.webTok.AccessToken)
	resigned, err := e.app.sign(t.Context(), realm, "at+jwt", claims)
	if err != nil {
		t.Fatal(err)
	}
	e.mustStand(e.web, resigned, "the same claims signed again")
	delete(claims, "jti")
	without, err := e.app.sign(t.Context(), realm, "at+jwt", claims)
	if err != nil {
		t.Fatal(err)
	}
	e.mustBeEnded(e.web, without, "a token without jti")
}
