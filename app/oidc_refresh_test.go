package app

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/idenplane/idenplane/app/sessions"
)

// Presenting a rotated refresh token revokes the whole chain and ends the
// client's session.
func TestRefreshTokenReuse(t *testing.T) {
	e := newCodeflowEnv(t)
	secret := e.client("web", nil)
	cfg := e.oauth2Config("web", secret, "openid")
	tok := e.codeflowTokens(cfg, e.browser())

	second, err := e.refresh(cfg, tok.RefreshToken)
	if err != nil {
		t.Fatal(err)
	}
	third, err := e.refresh(cfg, second.RefreshToken)
	if err != nil {
		t.Fatal(err)
	}
	if len(e.userSessions()) != 2 {
		t.Fatalf("sessions before the reuse: %v", e.userSessions())
	}
	_, err = e.refresh(cfg, tok.RefreshToken) // rotated twice already
	codeflowMustRetrieveError(t, err, "invalid_grant")
	_, err = e.refresh(cfg, third.RefreshToken) // the live end of the chain
	codeflowMustRetrieveError(t, err, "invalid_grant")
	if got := e.userSessions(); len(got) != 1 || got[0].Type != "sso" {
		t.Fatalf("sessions after the reuse: %+v, want the client's ended and the SSO session left", got)
	}
}

func TestRefreshTokenRefused(t *testing.T) {
	e := newCodeflowEnv(t)
	secret := e.client("web", nil)
	otherSecret := e.client("other", nil)
	e.client("norefresh", map[string]any{"grantTypes": []string{"authorization_code"}})
	cfg := e.oauth2Config("web", secret, "openid", "phone")
	b := e.browser()
	tok := e.codeflowTokens(cfg, b)
	form := func(token string, set url.Values) url.Values {
		f := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {token}}
		for k, v := range set {
			f[k] = v
		}
		return f
	}

	for _, tc := range []struct {
		name   string
		set    url.Values
		auth   string
		status int
		code   string
	}{
		{"another client's token", nil, codeflowBasic("other", otherSecret), 400, "invalid_grant"},
		{"wrong secret", nil, codeflowBasic("web", "wrong"), 401, "invalid_client"},
		{"unknown token", url.Values{"refresh_token": {"nope"}}, codeflowBasic("web", secret), 400, "invalid_grant"},
		{"wider scope", url.Values{"scope": {"openid address"}}, codeflowBasic("web", secret), 400, "invalid_scope"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := e.tokenRequest(form(tok.RefreshToken, tc.set), tc.auth)
			codeflowMustOAuthError(t, status, body, tc.status, tc.code)
		})
	}
	// None of those used the token up; a narrower scope is allowed.
	status, body := e.tokenRequest(form(tok.RefreshToken, url.Values{"scope": {"openid"}}), codeflowBasic("web", secret))
	if status != http.StatusOK {
		t.Fatalf("refresh with a narrower scope: %d %v", status, body)
	}
	_, access := jwtParts(t, body["access_token"].(string))
	if scope := access["scope"].(string); scope == "" || slices.Contains(strings.Fields(scope), "phone") {
		t.Fatalf("narrowed access token scope %q still has phone", scope)
	}

	// A client without the refresh grant gets no refresh token.
	noRefresh := e.oauth2Config("norefresh", "", "openid")
	noRefresh.ClientSecret = e.admin(http.MethodPost, "/admin/realms/acme/clients/norefresh/regenerate-secret", nil).object(t)["secret"].(string)
	if got := e.codeflowTokens(noRefresh, b); got.RefreshToken != "" {
		t.Fatal("refresh token for a client without the refresh_token grant")
	}

	// Refresh tokens end with the realm's refreshTokenLifespan of inactivity.
	e.clock.advance(1801 * time.Second)
	_, err := e.refresh(cfg, body["refresh_token"].(string))
	codeflowMustRetrieveError(t, err, "invalid_grant")
}

// Refreshing keeps the SSO session alive: the refresh token's lifespan
// counts from the last refresh, not from the sign-in.
func TestRefreshSlidesSession(t *testing.T) {
	e := newCodeflowEnv(t)
	secret := e.client("web", nil)
	cfg := e.oauth2Config("web", secret, "openid")
	tok := e.codeflowTokens(cfg, e.browser())
	for range 3 {
		e.clock.advance(20 * time.Minute) // under the 30-minute lifespan each time
		next, err := e.refresh(cfg, tok.RefreshToken)
		if err != nil {
			t.Fatalf("refresh after %v: %v", 20*time.Minute, err)
		}
		tok = next
	}
}

// offline_access yields an offline token: it lives the realm's offline
// lifespan, survives the end of the SSO session, and is listed and revoked
// by the admin offline-session endpoints.
func TestOfflineAccess(t *testing.T) {
	e := newCodeflowEnv(t)
	secret := e.client("web", nil)
	online := e.oauth2Config("web", secret, "openid")
	offline := e.oauth2Config("web", secret, "openid", "offline_access")
	b := e.browser()
	onlineTok := e.codeflowTokens(online, b)
	offlineTok := e.codeflowTokens(offline, b)

	path := "/admin/realms/acme/users/" + e.aliceID + "/offline-sessions"
	var reps []sessions.OfflineSessionRep
	e.admin(http.MethodGet, path, nil).decode(t, &reps)
	if len(reps) != 1 || reps[0].ClientID != "web" {
		t.Fatalf("offline sessions %+v, want one of web", reps)
	}
	wantExpiry := e.clock.now().Add(30 * 24 * time.Hour).UnixMilli()
	if reps[0].Expires != wantExpiry {
		t.Fatalf("offline token expires %d, want offlineTokenLifespan from now: %d", reps[0].Expires, wantExpiry)
	}

	// End the SSO session, as a logout does.
	ssoSessions, _ := codeflowSessionKinds(e.userSessions())
	sso := ssoSessions[0].ID
	mustStatus(t, e.admin(http.MethodDelete, "/admin/realms/acme/sessions/"+sso+"?type=sso", nil), http.StatusOK)
	_, err := e.refresh(online, onlineTok.RefreshToken)
	codeflowMustRetrieveError(t, err, "invalid_grant")
	// Well past the online lifespan, the offline token still works.
	e.clock.advance(2 * time.Hour)
	refreshed, err := e.refresh(offline, offlineTok.RefreshToken)
	if err != nil {
		t.Fatalf("offline refresh after logout: %v", err)
	}
	_, claims := e.verifyIDToken(refreshed, "web", "")
	if claims["sid"] == sso {
		t.Fatal("offline token's tokens carry the ended SSO session as sid")
	}
	e.admin(http.MethodGet, path, nil).decode(t, &reps)
	if len(reps) != 1 || reps[0].LastRefresh != e.clock.now().UnixMilli() {
		t.Fatalf("offline sessions after refresh %+v", reps)
	}

	mustStatus(t, e.admin(http.MethodDelete, path+"/"+reps[0].TokenID, nil), http.StatusNoContent)
	_, err = e.refresh(offline, refreshed.RefreshToken)
	codeflowMustRetrieveError(t, err, "invalid_grant")
}

// A rotated refresh token is refused as used, which ends its client's
// session: a copy of it is loose. A revoked one ended that session already
// (its grant went with it), so it is refused as unknown, never as used.
func TestRefreshTokenRevokedOrUsed(t *testing.T) {
	for _, c := range []struct {
		name     string
		spend    func(e *rfcEnv, cfg *oauth2.Config, refresh string)
		mention  string
		sessions int // alice's sessions after the refusal
	}{
		{"revoked", func(e *rfcEnv, _ *oauth2.Config, refresh string) {
			mustStatus(e.t, e.post("revoke", "token="+url.QueryEscape(refresh), e.basic()), http.StatusOK)
		}, "invalid refresh token", 1},
		{"rotated", func(e *rfcEnv, cfg *oauth2.Config, refresh string) {
			if _, err := e.refresh(cfg, refresh); err != nil {
				e.t.Fatal(err)
			}
		}, "already used", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newRFCEnv(t)
			cfg := e.oauth2Config("web", e.secret, "openid")
			tok := e.codeflowTokens(cfg, e.browser())
			c.spend(e, cfg, tok.RefreshToken)
			status, body := e.tokenRequest(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}}, e.basic())
			codeflowMustOAuthError(t, status, body, http.StatusBadRequest, "invalid_grant")
			if d, _ := body["error_description"].(string); !strings.Contains(d, c.mention) {
				t.Fatalf("error_description %q, want it to say %q", d, c.mention)
			}
			if got := e.userSessions(); len(got) != c.sessions {
				t.Fatalf("sessions after the refusal: %+v, want %d", got, c.sessions)
			}
		})
	}
}

// A client may take refreshes without a new ID token (the access token
// alone, as OpenID Connect Core §12.2 allows); by default a refresh carries
// one. The sign-in itself always answers with one.
func TestRefreshIDTokenPerClient(t *testing.T) {
	e := newCodeflowEnv(t)
	for _, tc := range []struct {
		client string
		fields map[string]any
		want   bool
	}{
		{"web", nil, true},
		{"lean", map[string]any{"idTokenOnRefresh": false}, false},
	} {
		t.Run(tc.client, func(t *testing.T) {
			secret := e.client(tc.client, tc.fields)
			cfg := e.oauth2Config(tc.client, secret, "openid")
			tok := e.codeflowTokens(cfg, e.browser())
			if tok.Extra("id_token") == nil {
				t.Fatal("the code exchange answered without an ID token")
			}
			next, err := e.refresh(cfg, tok.RefreshToken)
			if err != nil {
				t.Fatal(err)
			}
			if got := next.Extra("id_token") != nil; got != tc.want {
				t.Fatalf("refresh answered with an ID token: %t, want %t", got, tc.want)
			}
			if next.AccessToken == "" || next.RefreshToken == "" {
				t.Fatalf("refresh answered %+v, want an access and a refresh token", next)
			}
			// The setting is read on every refresh: turned over, it applies to
			// the next one.
			r := e.admin(http.MethodPatch, "/admin/realms/acme/clients/"+tc.client, map[string]any{"idTokenOnRefresh": !tc.want})
			mustStatus(t, r, http.StatusOK)
			last, err := e.refresh(cfg, next.RefreshToken)
			if err != nil {
				t.Fatal(err)
			}
			if got := last.Extra("id_token") != nil; got != !tc.want {
				t.Fatalf("after the change, refresh answered with an ID token: %t, want %t", got, !tc.want)
			}
		})
	}
}
