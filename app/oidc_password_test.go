package app

import (
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

func TestPasswordGrant(t *testing.T) {
	e := newCodeflowEnv(t)
	secret := e.client("cli", map[string]any{"grantTypes": []string{"password", "refresh_token"}})
	cfg := e.oauth2Config("cli", secret, "openid", "email")
	ctx := t.Context()

	tok, err := cfg.PasswordCredentialsToken(ctx, "alice", codeflowPassword)
	if err != nil {
		t.Fatalf("password grant: %v", err)
	}
	if tok.RefreshToken == "" || tok.TokenType != "Bearer" {
		t.Fatalf("token %+v", tok)
	}
	_, claims := e.verifyIDToken(tok, "cli", "")
	if claims["sub"] != e.aliceID || claims["acr"] != "1" || claims["email"] != "alice@example.test" {
		t.Fatalf("ID token claims %v", claims)
	}
	_, access := jwtParts(t, tok.AccessToken)
	if access["sid"] != claims["sid"] || access["azp"] != "cli" {
		t.Fatalf("access token %v", access)
	}
	// It signs in without a browser: an SSO session, and cli's under it.
	sso, oauth := codeflowSessionKinds(e.userSessions())
	if len(sso) != 1 || sso[0].ID != claims["sid"] || len(oauth) != 1 || oauth[0].ParentID != sso[0].ID {
		t.Fatalf("sessions %+v %+v, want the SSO session %v and cli's under it", sso, oauth, claims["sid"])
	}
	if _, err := e.refresh(cfg, tok.RefreshToken); err != nil {
		t.Fatalf("refresh of a password grant's token: %v", err)
	}
	// Public clients may use it too.
	e.client("pub", map[string]any{"clientType": "PUBLIC", "grantTypes": []string{"password"}})
	pub, err := e.oauth2Config("pub", "", "openid").PasswordCredentialsToken(ctx, "alice", codeflowPassword)
	if err != nil || pub.RefreshToken != "" {
		t.Fatalf("public client's password grant: %+v %v (and no refresh grant, so no refresh token)", pub, err)
	}
}

func TestPasswordGrantRefused(t *testing.T) {
	e := newCodeflowEnv(t)
	secret := e.client("cli", map[string]any{"grantTypes": []string{"password"}})
	webSecret := e.client("web", nil)
	consentSecret := e.client("shop", map[string]any{"grantTypes": []string{"password"}, "requireConsent": true})
	e.createUser("acme", map[string]any{"username": "bob", "password": codeflowPassword, "enabled": false})
	form := func(username, password string, extra url.Values) url.Values {
		f := url.Values{"grant_type": {"password"}, "username": {username}, "password": {password}}
		for k, v := range extra {
			f[k] = v
		}
		return f
	}
	for _, tc := range []struct {
		name    string
		form    url.Values
		headers []string
		status  int
		code    string
		desc    string
	}{
		{"wrong password", form("alice", "wrong", nil), []string{codeflowBasic("cli", secret)}, 400, "invalid_grant", "invalid user credentials"},
		{"unknown user", form("nobody", codeflowPassword, nil), []string{codeflowBasic("cli", secret)}, 400, "invalid_grant", "invalid user credentials"},
		{"disabled user", form("bob", codeflowPassword, nil), []string{codeflowBasic("cli", secret)}, 400, "invalid_grant", "account disabled"},
		{"no password", form("alice", "", nil), []string{codeflowBasic("cli", secret)}, 400, "invalid_request", ""},
		{"wrong secret", form("alice", codeflowPassword, nil), []string{codeflowBasic("cli", "wrong")}, 401, "invalid_client", ""},
		{"secret in the form", form("alice", codeflowPassword, url.Values{"client_id": {"cli"}, "client_secret": {"wrong"}}), nil, 401, "invalid_client", ""},
		{"two client authentications", form("alice", codeflowPassword, url.Values{"client_secret": {secret}}), []string{codeflowBasic("cli", secret)}, 400, "invalid_request", ""},
		{"grant not allowed", form("alice", codeflowPassword, nil), []string{codeflowBasic("web", webSecret)}, 400, "unauthorized_client", ""},
		{"client requires consent", form("alice", codeflowPassword, nil), []string{codeflowBasic("shop", consentSecret)}, 400, "unauthorized_client", ""},
		{"scope not assigned", form("alice", codeflowPassword, url.Values{"scope": {"nope"}}), []string{codeflowBasic("cli", secret)}, 400, "invalid_scope", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := e.tokenRequest(tc.form, tc.headers...)
			codeflowMustOAuthError(t, status, body, tc.status, tc.code)
			if tc.desc != "" && body["error_description"] != tc.desc {
				t.Fatalf("error_description %v, want %q", body["error_description"], tc.desc)
			}
		})
	}
	// The form's secret works when right.
	status, body := e.tokenRequest(form("alice", codeflowPassword, url.Values{"client_id": {"cli"}, "client_secret": {secret}}))
	if status != http.StatusOK || body["access_token"] == nil {
		t.Fatalf("client_secret_post: %d %v", status, body)
	}
	// An invalid_client answer carries its challenge.
	r := e.request(http.MethodPost, "/realms/acme/protocol/openid-connect/token", form("alice", codeflowPassword, nil).Encode(),
		"Content-Type: application/x-www-form-urlencoded", codeflowBasic("cli", "wrong"))
	if r.Header.Get("WWW-Authenticate") == "" {
		t.Fatal("invalid_client without WWW-Authenticate")
	}
}

// A user who owes a password change, asked for or expired, gets no tokens
// by the password grant: Keycloak's "Account is not fully set up".
func TestPasswordGrantRequiredActions(t *testing.T) {
	e := newCodeflowEnv(t)
	e.eventsOn()
	secret := e.passwordGrantClient()
	grant := func() (int, map[string]any) {
		t.Helper()
		return e.tokenRequest(url.Values{"grant_type": {"password"}, "username": {"alice"}, "password": {codeflowPassword}},
			codeflowBasic("cli", secret))
	}
	want := map[string]any{"error": "invalid_grant", "error_description": "Account is not fully set up"}
	changePasswordRequire(e)
	if status, body := grant(); status != http.StatusBadRequest || !reflect.DeepEqual(body, want) {
		t.Fatalf("password change asked for: %d %v, want 400 %v", status, body, want)
	}
	ev := e.loginEvents("LOGIN_ERROR")
	if len(ev) != 1 || ev[0].Error != "resolve_required_actions" || ev[0].UserID != e.aliceID || ev[0].ClientID != "cli" {
		t.Fatalf("LOGIN_ERROR events %+v", ev)
	}

	mustStatus(t, e.admin(http.MethodPut, "/admin/realms/acme/users/"+e.aliceID+"/reset-password",
		map[string]any{"password": codeflowPassword + "!", "temporary": false}), http.StatusNoContent)
	e.changeRealm(func(r *store.Realm) { r.PasswordMaxAgeDays = 30 })
	grantAs := func() (int, map[string]any) {
		return e.tokenRequest(url.Values{"grant_type": {"password"}, "username": {"alice"}, "password": {codeflowPassword + "!"}},
			codeflowBasic("cli", secret))
	}
	if status, body := grantAs(); status != http.StatusOK {
		t.Fatalf("young password: %d %v", status, body)
	}
	e.clock.advance(30 * 24 * time.Hour)
	if status, body := grantAs(); status != http.StatusBadRequest || !reflect.DeepEqual(body, want) {
		t.Fatalf("expired password: %d %v, want 400 %v", status, body, want)
	}
}

// When the flood guard holds, the password grant answers 429 with
// Retry-After, in OAuth's error shape.
func TestPasswordGrantThrottled(t *testing.T) {
	e := newCodeflowEnv(t)
	secret := e.passwordGrantClient()
	grant := func(password string) *testResponse {
		return e.request(http.MethodPost, "/realms/acme/protocol/openid-connect/token",
			url.Values{"grant_type": {"password"}, "username": {"alice"}, "password": {password}}.Encode(),
			"Content-Type: application/x-www-form-urlencoded", codeflowBasic("cli", secret))
	}
	for range identity.LoginLimitPerUser {
		mustStatus(t, grant("wrong password"), http.StatusBadRequest)
	}
	r := grant(codeflowPassword)
	mustStatus(t, r, http.StatusTooManyRequests)
	want := map[string]any{"error": "invalid_grant", "error_description": "too many failed sign-ins; try again later"}
	if got := r.object(t); !reflect.DeepEqual(got, want) {
		t.Fatalf("body %v, want %v", got, want)
	}
	if wait, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || wait < 1 {
		t.Fatalf("Retry-After %q", r.Header.Get("Retry-After"))
	}
}

// A login storm queues for the hash slots; a request that cannot get one
// in time is refused cleanly, 503 with Retry-After.
func TestPasswordGrantHashSlotsBusy(t *testing.T) {
	e := newCodeflowEnv(t)
	secret := e.client("cli", map[string]any{"grantTypes": []string{"password"}})
	slots := busyHashSlots(t, e.app, 2)
	for range cap(slots) {
		slots <- struct{}{}
	}
	form := url.Values{"grant_type": {"password"}, "username": {"alice"}, "password": {codeflowPassword}}
	r := e.request(http.MethodPost, "/realms/acme/protocol/openid-connect/token", form.Encode(),
		"Content-Type: application/x-www-form-urlencoded", codeflowBasic("cli", secret))
	if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" || r.object(t)["error"] != "server_error" {
		t.Fatalf("every slot taken: %d %s (Retry-After %q), want 503 with Retry-After", r.Status, r.Body, r.Header.Get("Retry-After"))
	}
	for range cap(slots) {
		<-slots
	}
	if status, body := e.tokenRequest(form, codeflowBasic("cli", secret)); status != http.StatusOK {
		t.Fatalf("slots free again: %d %v", status, body)
	}
}
