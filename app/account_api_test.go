package app

import (
	"context"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

func TestAccountAPIGet(t *testing.T) {
	e := newAccountEnv(t)
	tok := e.token("alice", codeflowPassword)
	r := e.api(http.MethodGet, "/", tok.AccessToken, nil)
	mustStatus(t, r, http.StatusOK)
	got := r.object(t)
	created, _ := got["createdTimestamp"].(float64)
	delete(got, "createdTimestamp")
	want := map[string]any{"id": e.aliceID, "username": "alice", "email": "alice@example.test", "emailVerified": false,
		"firstName": "Alice", "lastName": "Liddell", "attributes": map[string]any{}, "customAttributes": map[string]any{},
		"factors":  []any{"password"},
		"deletion": map[string]any{"scheduled": false}}
	if !reflect.DeepEqual(got, want) || created == 0 {
		t.Fatalf("account %v (created %v), want %v", got, created, want)
	}
	// Without the trailing slash too, as the spec writes the path.
	mustStatus(t, e.request(http.MethodGet, "/realms/acme/account", nil, "Authorization: Bearer "+tok.AccessToken), http.StatusOK)
}

func TestAccountAPIRefusesBadTokens(t *testing.T) {
	e := newAccountEnv(t)
	tok := e.token("alice", codeflowPassword)
	e.createRealm("other")
	for _, tc := range []struct{ name, realm, token string }{
		{"garbage", "acme", "not-a-token"},
		{"tampered", "acme", tok.AccessToken[:len(tok.AccessToken)-4] + "AAAA"},
		{"another realm's path", "other", tok.AccessToken},
		{"an ID token", "acme", tok.Extra("id_token").(string)},
		{"a refresh token", "acme", tok.RefreshToken},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, p := range []struct{ method, path string }{
				{http.MethodGet, "/"}, {http.MethodPost, "/profile"}, {http.MethodGet, "/data-export"},
				{http.MethodPost, "/delete-account"},
			} {
				r := e.request(p.method, "/realms/"+tc.realm+"/account"+p.path, `{}`, "Authorization: Bearer "+tc.token)
				mustError(t, r, http.StatusUnauthorized, "invalid_token", "")
				if h := r.Header.Get("WWW-Authenticate"); !strings.HasPrefix(h, `Bearer realm="`+tc.realm+`"`) ||
					!strings.Contains(h, `error="invalid_token"`) {
					t.Fatalf("%s %s: WWW-Authenticate %q", p.method, p.path, h)
				}
			}
		})
	}
	// A disabled user's token stops working at once.
	mustStatus(t, e.admin(http.MethodPatch, "/admin/realms/acme/users/"+e.aliceID, map[string]any{"enabled": false}), http.StatusOK)
	mustError(t, e.api(http.MethodGet, "/", tok.AccessToken, nil), http.StatusUnauthorized, "invalid_token", "")
	// Unknown realm: 404, as on every protocol path.
	mustError(t, e.request(http.MethodGet, "/realms/nope/account/", nil, "Authorization: Bearer "+tok.AccessToken),
		http.StatusNotFound, "not_found", "")
}

func TestAccountAPIServiceAccountRefused(t *testing.T) {
	e := newAccountEnv(t)
	secret := e.machineClient(t, "acme", "robot")
	r := e.request(http.MethodPost, "/realms/acme/protocol/openid-connect/token", "grant_type=client_credentials",
		"Content-Type: application/x-www-form-urlencoded", codeflowBasic("robot", secret))
	mustStatus(t, r, http.StatusOK)
	mustError(t, e.api(http.MethodGet, "/", r.object(t)["access_token"].(string), nil), http.StatusUnauthorized, "invalid_token", "")
}

func TestAccountAPIProfile(t *testing.T) {
	e := newAccountEnv(t)
	e.createUser("acme", map[string]any{"username": "bob", "email": "bob@example.test"})
	tok := e.token("alice", codeflowPassword).AccessToken
	mustStatus(t, e.admin(http.MethodPatch, "/admin/realms/acme/users/"+e.aliceID, map[string]any{"emailVerified": true}), http.StatusOK)

	// Names change; a field left out keeps its value; the same username is no change.
	r := e.api(http.MethodPost, "/profile", tok, map[string]any{"firstName": "Alicia", "username": "ALICE"})
	mustStatus(t, r, http.StatusOK)
	got := r.object(t)
	if got["firstName"] != "Alicia" || got["lastName"] != "Liddell" || got["email"] != "alice@example.test" || got["emailVerified"] != true {
		t.Fatalf("after a name change %v", got)
	}
	if ev := e.loginEvents(e.aliceID); hasEvent(ev, "UPDATE_PROFILE") == nil || hasEvent(ev, "UPDATE_EMAIL") != nil {
		t.Fatalf("events %+v, want UPDATE_PROFILE only", ev)
	}

	for _, tc := range []struct {
		name   string
		body   any
		hdr    []string
		status int
		code   string
		field  string
	}{
		{"username change", map[string]any{"username": "alicia"}, nil, 400, "invalid_field", "username"},
		{"bad email", map[string]any{"email": "not an email"}, nil, 400, "invalid_field", "email"},
		{"email of another account", map[string]any{"email": "BOB@example.test"}, nil, 409, "conflict", "email"},
		{"control characters", map[string]any{"lastName": "a\x07b"}, nil, 400, "invalid_field", "lastName"},
		{"unknown field", map[string]any{"enabled": false}, nil, 400, "unknown_field", "enabled"},
		{"wrong-case field", map[string]any{"FirstName": "x"}, nil, 400, "unknown_field", "FirstName"},
		{"wrong type", map[string]any{"firstName": 7}, nil, 400, "invalid_field", "firstName"},
		{"malformed", `{"firstName":`, nil, 400, "invalid_json", ""},
		{"array", `[]`, nil, 400, "invalid_json", ""},
		{"trailing data", `{}{}`, nil, 400, "invalid_json", ""},
		{"not JSON", `firstName=x`, []string{"Content-Type: application/x-www-form-urlencoded"}, 415, "unsupported_media_type", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mustError(t, e.api(http.MethodPost, "/profile", tok, tc.body, tc.hdr...), tc.status, tc.code, tc.field)
		})
	}
	if u := e.api(http.MethodGet, "/", tok, nil).object(t); u["username"] != "alice" || u["email"] != "alice@example.test" || u["lastName"] != "Liddell" {
		t.Fatalf("refused changes left %v", u)
	}

	// A new email is unverified, and the verification mail goes to it.
	r = e.api(http.MethodPost, "/profile", tok, map[string]any{"email": " Alice@Wonderland.test "})
	mustStatus(t, r, http.StatusOK)
	if got := r.object(t); got["email"] != "alice@wonderland.test" || got["emailVerified"] != false {
		t.Fatalf("after an email change %v", got)
	}
	realmID := mustRealmID(t, e.testServer, "acme")
	mails, err := e.store.EmailsTo(t.Context(), realmID, "alice@wonderland.test")
	if err != nil || len(mails) != 1 || !strings.Contains(mails[0].Subject, "Verify") {
		t.Fatalf("mail to the new address %+v, %v", mails, err)
	}
	links, err := e.store.UserActionTokens(t.Context(), realmID, e.aliceID)
	if err != nil || len(links) != 1 || links[0].Kind != store.ActionVerifyEmail || links[0].Email != "alice@wonderland.test" {
		t.Fatalf("links %+v, %v", links, err)
	}
	ev := e.loginEvents(e.aliceID)
	if u := hasEvent(ev, "UPDATE_EMAIL"); u == nil || u.Details["previous_email"] != "alice@example.test" ||
		u.Details["updated_email"] != "alice@wonderland.test" || u.ClientID != "cli" {
		t.Fatalf("UPDATE_EMAIL %+v in %+v", u, ev)
	}
	if hasEvent(ev, "SEND_VERIFY_EMAIL") == nil {
		t.Fatalf("no SEND_VERIFY_EMAIL in %+v", ev)
	}
	// The address may be removed, unless the realm needs it to sign in.
	mustStatus(t, e.api(http.MethodPost, "/profile", tok, map[string]any{"email": ""}), http.StatusOK)
	mustStatus(t, e.api(http.MethodPost, "/profile", tok, map[string]any{"email": "alice@example.test"}), http.StatusOK)
	realm, err := e.store.GetRealm(t.Context(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	realm.RequireEmailVerification = true
	if err := e.store.UpdateRealm(context.Background(), realm); err != nil {
		t.Fatal(err)
	}
	mustError(t, e.api(http.MethodPost, "/profile", tok, map[string]any{"email": ""}), 400, "invalid_field", "email")
}

func TestAccountAPIPassword(t *testing.T) {
	e := newAccountEnv(t)
	const newPassword = "a brand new passphrase"
	tok := e.token("alice", codeflowPassword)
	other := e.token("alice", codeflowPassword) // another SSO session of alice's
	_, claims := jwtParts(t, tok.AccessToken)
	_, otherClaims := jwtParts(t, other.AccessToken)
	body := func(current, next, confirm string) map[string]any {
		return map[string]any{"currentPassword": current, "newPassword": next, "confirmation": confirm}
	}
	for _, tc := range []struct {
		name   string
		body   any
		status int
		code   string
		field  string
	}{
		{"no current password", map[string]any{"newPassword": newPassword, "confirmation": newPassword}, 400, "invalid_field", "currentPassword"},
		{"wrong current password", body("wrong password!", newPassword, newPassword), 400, "invalid_field", "currentPassword"},
		{"too short", body(codeflowPassword, "short", "short"), 400, "invalid_field", "newPassword"},
		{"too long", body(codeflowPassword, strings.Repeat("x", 257), strings.Repeat("x", 257)), 400, "invalid_field", "newPassword"},
		{"unchanged", body(codeflowPassword, codeflowPassword, codeflowPassword), 400, "invalid_field", "newPassword"},
		{"no new password", map[string]any{"currentPassword": codeflowPassword}, 400, "invalid_field", "newPassword"},
		{"confirmation differs", body(codeflowPassword, newPassword, newPassword+"!"), 400, "invalid_field", "confirmation"},
		{"unknown field", map[string]any{"password": newPassword}, 400, "unknown_field", "password"},
		{"malformed", `{"currentPassword"`, 400, "invalid_json", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.api(http.MethodPost, "/password", tok.AccessToken, tc.body)
			mustError(t, r, tc.status, tc.code, tc.field)
			if strings.Contains(string(r.Body), codeflowPassword) || strings.Contains(string(r.Body), newPassword) {
				t.Fatalf("error repeats a password: %s", r.Body)
			}
		})
	}
	// The realm's minimum applies, as to the admin API's reset.
	realm, _ := e.store.GetRealm(t.Context(), "acme")
	realm.PasswordMinLength = 30
	if err := e.store.UpdateRealm(t.Context(), realm); err != nil {
		t.Fatal(err)
	}
	r := e.api(http.MethodPost, "/password", tok.AccessToken, body(codeflowPassword, newPassword, newPassword))
	mustError(t, r, 400, "invalid_field", "newPassword")
	if !strings.Contains(string(r.Body), "30") {
		t.Fatalf("error %s does not name the minimum", r.Body)
	}
	realm.PasswordMinLength = 0
	if err := e.store.UpdateRealm(t.Context(), realm); err != nil {
		t.Fatal(err)
	}

	r = e.api(http.MethodPost, "/password", tok.AccessToken, body(codeflowPassword, newPassword, newPassword))
	mustStatus(t, r, http.StatusNoContent)
	// The caller's session stays; the other one ended.
	var ssoIDs []string
	sso, _ := codeflowSessionKinds(e.userSessions())
	for _, s := range sso {
		ssoIDs = append(ssoIDs, s.ID)
	}
	if len(ssoIDs) != 1 || ssoIDs[0] != claims["sid"] || ssoIDs[0] == otherClaims["sid"] {
		t.Fatalf("SSO sessions %v after the change, want only the caller's %v", ssoIDs, claims["sid"])
	}
	if _, err := e.refresh(e.cfg, other.RefreshToken); err == nil {
		t.Fatal("the other session's refresh token still works")
	}
	if _, err := e.refresh(e.cfg, tok.RefreshToken); err != nil {
		t.Fatalf("the caller's refresh token: %v", err)
	}
	if _, err := e.cfg.PasswordCredentialsToken(t.Context(), "alice", codeflowPassword); err == nil {
		t.Fatal("the old password still signs in")
	}
	e.token("alice", newPassword)
	if ev := e.loginEvents(e.aliceID); hasEvent(ev, "UPDATE_PASSWORD") == nil || hasEvent(ev, "LOGOUT") == nil {
		t.Fatalf("events %+v, want UPDATE_PASSWORD and the other session's LOGOUT", ev)
	}
}

func TestAccountAPIPasswordThrottled(t *testing.T) {
	e := newAccountEnv(t)
	tok := e.token("alice", codeflowPassword).AccessToken
	wrong := map[string]any{"currentPassword": "wrong password!", "newPassword": "another passphrase", "confirmation": "another passphrase"}
	for range identity.LoginLimitPerUser {
		mustError(t, e.api(http.MethodPost, "/password", tok, wrong), 400, "invalid_field", "currentPassword")
	}
	right := map[string]any{"currentPassword": codeflowPassword, "newPassword": "another passphrase", "confirmation": "another passphrase"}
	for path, body := range map[string]any{"/password": right, "/delete-account": map[string]any{"currentPassword": codeflowPassword}} {
		r := e.api(http.MethodPost, path, tok, body)
		mustError(t, r, http.StatusTooManyRequests, "too_many_requests", "")
		if r.Header.Get("Retry-After") == "" {
			t.Fatalf("%s: 429 without Retry-After", path)
		}
	}
	// The same count guards the login form: guessing here is guessing there.
	if _, err := e.cfg.PasswordCredentialsToken(t.Context(), "alice", codeflowPassword); err == nil {
		t.Fatal("sign-in not throttled after the account's failures")
	}
	// The window passes; access tokens live five minutes, so a new one.
	e.clock.advance(16 * time.Minute)
	tok = e.token("alice", codeflowPassword).AccessToken
	mustStatus(t, e.api(http.MethodPost, "/password", tok, right), http.StatusNoContent)
}

// No account answer is kept by a cache: JSON, pages, and refusals alike.
func TestAccountNoStore(t *testing.T) {
	e := newAccountEnv(t)
	tok := e.token("alice", codeflowPassword).AccessToken
	b := e.browser()
	for name, h := range map[string]http.Header{
		"JSON":             e.api(http.MethodGet, "", tok, nil).Header,
		"refused token":    e.api(http.MethodGet, "", "not-a-token", nil).Header,
		"page":             e.signIn(b).header,
		"sign-in redirect": e.browser().get(e.url + accountTestHome).header,
	} {
		if got := h.Get("Cache-Control"); got != "no-store" {
			t.Errorf("%s: Cache-Control %q, want no-store", name, got)
		}
	}
}
