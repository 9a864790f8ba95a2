package app

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/descope/virtualwebauthn"
)

// stepUp sends a step-up request with a Bearer token.
func (e *accountEnv) stepUp(method, rel, token string, body any) *testResponse {
	e.t.Helper()
	return e.request(method, "/realms/acme/step-up/"+rel, body, "Authorization: Bearer "+token)
}

// stepUpChallenge asks for a challenge and returns it.
func (e *accountEnv) stepUpChallenge(token string) map[string]any {
	e.t.Helper()
	r := e.stepUp(http.MethodGet, "challenge", token, nil)
	mustStatus(e.t, r, http.StatusOK)
	if r.Header.Get("Cache-Control") != "no-store" {
		e.t.Fatalf("challenge Cache-Control %q", r.Header.Get("Cache-Control"))
	}
	return r.object(e.t)
}

// challengeOptions is the WebAuthn part of a challenge, as JSON for the
// virtual authenticator.
func challengeOptions(t *testing.T, challenge map[string]any) (string, []byte) {
	t.Helper()
	opts, _ := challenge["webauthn"].(map[string]any)
	id, _ := opts["ceremonyId"].(string)
	if id == "" {
		t.Fatalf("challenge without a WebAuthn ceremony: %v", challenge)
	}
	b, err := json.Marshal(opts)
	if err != nil {
		t.Fatal(err)
	}
	return id, b
}

func mustStepUpLevel(t *testing.T, rep map[string]any, acr string, amr ...string) {
	t.Helper()
	got := []string{}
	list, _ := rep["amr"].([]any)
	for _, m := range list {
		got = append(got, m.(string))
	}
	if rep["acr"] != acr || !slices.Equal(got, amr) {
		t.Fatalf("level %v amr %v, want %s %v", rep["acr"], rep["amr"], acr, amr)
	}
}

// A token from a sign-in at acr 1 steps up with a TOTP code: the session
// rises to acr 2, and a refresh carries it. Codes are checked as at
// sign-in: a wrong one is refused and recorded, a used one refused.
func TestStepUpAPITOTP(t *testing.T) {
	e := newWebAuthnEnv(t)
	e.totpAlign()
	tok := e.token("alice", codeflowPassword) // before TOTP: the password grant refuses users with a factor
	mustError(t, e.stepUp(http.MethodGet, "challenge", tok.AccessToken, nil), http.StatusConflict, "no_second_factor", "")

	secret, recovery := e.totpEnrol(e.aliceID)
	e.clock.advance(totpTestStep)
	challenge := e.stepUpChallenge(tok.AccessToken)
	mustStepUpLevel(t, challenge, "1", "pwd")
	if methods, _ := challenge["methods"].([]any); len(methods) != 1 || methods[0] != "totp" || challenge["webauthn"] != nil {
		t.Fatalf("challenge of a user with TOTP only: %v", challenge)
	}

	code := totpTestCode(t, secret, e.clock.now())
	r := e.stepUp(http.MethodPost, "verify", tok.AccessToken, map[string]any{"method": "totp", "code": totpTestWrongCode(code)})
	mustError(t, r, http.StatusBadRequest, "invalid_field", "code")
	if e.aliceFailures() != 1 {
		t.Fatalf("a wrong step-up code is not counted: %d failures", e.aliceFailures())
	}
	r = e.stepUp(http.MethodPost, "verify", tok.AccessToken, map[string]any{"method": "totp", "code": code})
	mustStatus(t, r, http.StatusOK)
	raised := r.object(t)
	mustStepUpLevel(t, raised, "2", "pwd", "otp")
	if raised["authTime"] != float64(e.clock.now().UnixMilli()) {
		t.Fatalf("authTime %v, want now", raised["authTime"])
	}
	// The same code again is a replay.
	r = e.stepUp(http.MethodPost, "verify", tok.AccessToken, map[string]any{"method": "totp", "code": code})
	mustError(t, r, http.StatusBadRequest, "invalid_field", "code")
	// A recovery code works in its place, once.
	r = e.stepUp(http.MethodPost, "verify", tok.AccessToken, map[string]any{"method": "totp", "code": recovery[0]})
	mustStepUpLevel(t, r.object(t), "2", "pwd", "otp")
	mustError(t, e.stepUp(http.MethodPost, "verify", tok.AccessToken, map[string]any{"method": "totp", "code": recovery[0]}),
		http.StatusBadRequest, "invalid_field", "code")

	var failures, logins []loginEventRep
	for _, ev := range e.loginEvents(e.aliceID) {
		switch {
		case ev.Type == "LOGIN_ERROR" && ev.Details["step_up"] == "true":
			failures = append(failures, ev)
		case ev.Type == "LOGIN" && ev.Details["step_up"] == "true":
			logins = append(logins, ev)
		}
	}
	if len(failures) != 3 || failures[0].Error != "invalid_totp" || failures[2].Details["method"] != "recovery-code" {
		t.Fatalf("step-up LOGIN_ERROR events %+v", failures)
	}
	if len(logins) != 2 || logins[0].Details["method"] != "totp" || logins[0].Details["acr"] != "2" ||
		logins[0].ClientID != "cli" || logins[0].SessionID == "" || logins[1].Details["method"] != "recovery-code" {
		t.Fatalf("step-up LOGIN events %+v", logins)
	}

	// The token itself is unchanged; a refresh brings the level.
	if _, claims := jwtParts(t, tok.AccessToken); claims["acr"] != "1" {
		t.Fatalf("the stepped-up token's acr %v, want 1", claims["acr"])
	}
	refreshed, err := e.refresh(e.cfg, tok.RefreshToken)
	if err != nil {
		t.Fatal(err)
	}
	claims := e.mustACR(refreshed, "cli", "2", "pwd", "otp")
	if claims["auth_time"] != float64(e.clock.now().Unix()) {
		t.Fatalf("refreshed auth_time %v, want the step-up's", claims["auth_time"])
	}
	if _, access := jwtParts(t, refreshed.AccessToken); access["auth_time"] != claims["auth_time"] {
		t.Fatalf("refreshed access token auth_time %v", access["auth_time"])
	}
}

// A key steps up as well: the challenge holds a ceremony for the user's
// keys, answered once, by the user's own key only.
func TestStepUpAPIWebAuthn(t *testing.T) {
	e := newWebAuthnEnv(t)
	tok := e.token("alice", codeflowPassword)
	key := newWebAuthnKey(virtualwebauthn.AuthenticatorOptions{BackupEligible: true, UserNotVerified: true})
	e.registerKey(tok.AccessToken, key, "phone")
	e.createUser("acme", map[string]any{"username": "bob", "password": codeflowPassword})
	bobKey := newWebAuthnKey(virtualwebauthn.AuthenticatorOptions{})
	e.registerKey(e.token("bob", codeflowPassword).AccessToken, bobKey, "bob's key")

	challenge := e.stepUpChallenge(tok.AccessToken)
	if methods, _ := challenge["methods"].([]any); len(methods) != 1 || methods[0] != "webauthn" {
		t.Fatalf("challenge of a user with a key only: %v", challenge)
	}
	id, opts := challengeOptions(t, challenge)
	// After the session's password the key is the second factor: its
	// presence is enough, as at a sign-in's second step.
	if !strings.Contains(string(opts), `"userVerification":"discouraged"`) || !strings.Contains(string(opts), `"allowCredentials":[{`) {
		t.Fatalf("step-up options %s", opts)
	}
	verify := func(id string, cred json.RawMessage) *testResponse {
		return e.stepUp(http.MethodPost, "verify", tok.AccessToken, map[string]any{"method": "webauthn", "ceremonyId": id,
			"credential": cred})
	}
	mustError(t, verify(id, e.assertWith(bobKey, opts, "")), http.StatusUnauthorized, "invalid_credentials", "")
	mustError(t, verify(id, e.assertWith(key, opts, "")), http.StatusBadRequest, "invalid_ceremony", "") // used up

	id, opts = challengeOptions(t, e.stepUpChallenge(tok.AccessToken))
	r := verify(id, e.assertWith(key, opts, ""))
	mustStatus(t, r, http.StatusOK)
	mustStepUpLevel(t, r.object(t), "2", "pwd", "swk")

	refused := hasEvent(e.loginEvents(e.aliceID), "LOGIN_ERROR")
	if refused == nil || refused.Details["step_up"] != "true" || refused.Details["credential_type"] != "webauthn" {
		t.Fatalf("step-up LOGIN_ERROR %+v", refused)
	}
	refreshed, err := e.refresh(e.cfg, tok.RefreshToken)
	if err != nil {
		t.Fatal(err)
	}
	e.mustACR(refreshed, "cli", "2", "pwd", "swk")
}

// Wrong step-up codes count toward the realm's lockout; once locked, the
// right code is refused as a wrong one, and the event says why.
func TestStepUpAPIBruteForce(t *testing.T) {
	e := newWebAuthnEnv(t)
	e.lockAfterThree()
	e.totpAlign()
	tok := e.token("alice", codeflowPassword)
	secret, _ := e.totpEnrol(e.aliceID)
	e.clock.advance(totpTestStep)
	code := totpTestCode(t, secret, e.clock.now())
	for range 3 {
		mustError(t, e.stepUp(http.MethodPost, "verify", tok.AccessToken, map[string]any{"method": "totp",
			"code": totpTestWrongCode(code)}), http.StatusBadRequest, "invalid_field", "code")
	}
	mustError(t, e.stepUp(http.MethodPost, "verify", tok.AccessToken, map[string]any{"method": "totp", "code": code}),
		http.StatusBadRequest, "invalid_field", "code")
	if n := e.lockedAttempts(); n != 1 {
		t.Fatalf("%d locked attempts recorded, want 1", n)
	}
	if sso := e.ssoOf(map[string]any{"sid": jwtClaim(t, tok.AccessToken, "sid")}); acrOf(sso.AMR) != "1" {
		t.Fatalf("a locked user's session was raised: amr %v", sso.AMR)
	}
	// Once the lockout is over, a fresh code works (with a fresh token of
	// the same session: the first one has expired by then).
	e.clock.advance(21 * time.Minute)
	fresh, err := e.refresh(e.cfg, tok.RefreshToken)
	if err != nil {
		t.Fatal(err)
	}
	r := e.stepUp(http.MethodPost, "verify", fresh.AccessToken, map[string]any{"method": "totp",
		"code": totpTestCode(t, secret, e.clock.now())})
	mustStatus(t, r, http.StatusOK)
}

// jwtClaim is one claim of a JWT.
func jwtClaim(t *testing.T, token, name string) any {
	t.Helper()
	_, claims := jwtParts(t, token)
	return claims[name]
}

// The endpoints answer only a Bearer token of a live SSO session, and
// take exactly their fields.
func TestStepUpAPIRefusals(t *testing.T) {
	e := newWebAuthnEnv(t)
	e.totpAlign()
	tok := e.token("alice", codeflowPassword)
	offlineCfg := *e.cfg
	offlineCfg.Scopes = []string{"openid", "offline_access"}
	offline, err := offlineCfg.PasswordCredentialsToken(t.Context(), "alice", codeflowPassword)
	if err != nil {
		t.Fatal(err)
	}
	e.totpEnrol(e.aliceID)

	r := e.request(http.MethodGet, "/realms/acme/step-up/challenge", nil)
	mustError(t, r, http.StatusUnauthorized, "unauthorized", "")
	if r.Header.Get("WWW-Authenticate") != `Bearer realm="acme"` {
		t.Fatalf("WWW-Authenticate %q", r.Header.Get("WWW-Authenticate"))
	}
	r = e.stepUp(http.MethodGet, "challenge", "not-a-token", nil)
	mustError(t, r, http.StatusUnauthorized, "invalid_token", "")
	if r.Header.Get("WWW-Authenticate") != `Bearer realm="acme", error="invalid_token"` {
		t.Fatalf("WWW-Authenticate %q", r.Header.Get("WWW-Authenticate"))
	}
	mustError(t, e.request(http.MethodGet, "/realms/nope/step-up/challenge", nil, "Authorization: Bearer "+tok.AccessToken),
		http.StatusNotFound, "not_found", "")

	// An offline token's session has no user present to step up.
	refreshedOffline, err := e.refresh(&offlineCfg, offline.RefreshToken)
	if err != nil {
		t.Fatal(err)
	}
	mustError(t, e.stepUp(http.MethodGet, "challenge", refreshedOffline.AccessToken, nil), http.StatusBadRequest, "invalid_request", "")
	// A token without sid names no session at all.
	mustError(t, e.stepUp(http.MethodGet, "challenge", e.tokenWithoutSID(), nil), http.StatusBadRequest, "invalid_request", "")

	for _, tc := range []struct {
		name  string
		body  map[string]any
		field string
		code  string
	}{
		{"no method", map[string]any{"code": "123456"}, "method", "invalid_field"},
		{"unknown method", map[string]any{"method": "sms", "code": "123456"}, "method", "invalid_field"},
		{"TOTP without a code", map[string]any{"method": "totp"}, "code", "invalid_field"},
		{"TOTP with a ceremony", map[string]any{"method": "totp", "code": "123456", "ceremonyId": "x"}, "ceremonyId", "invalid_field"},
		{"WebAuthn without a ceremony", map[string]any{"method": "webauthn", "credential": map[string]any{}}, "ceremonyId", "invalid_field"},
		{"WebAuthn without a credential", map[string]any{"method": "webauthn", "ceremonyId": "x"}, "credential", "invalid_field"},
		{"WebAuthn with a code", map[string]any{"method": "webauthn", "code": "123456"}, "code", "invalid_field"},
		{"a field verify does not take", map[string]any{"method": "totp", "code": "123456", "password": "x"}, "password", "unknown_field"},
	} {
		mustError(t, e.stepUp(http.MethodPost, "verify", tok.AccessToken, tc.body), http.StatusBadRequest, tc.code, tc.field)
	}
	if e.aliceFailures() != 0 {
		t.Fatalf("malformed requests counted as failures: %d", e.aliceFailures())
	}

	// Once the session ends, its tokens cannot raise it.
	mustStatus(t, e.admin(http.MethodDelete, "/admin/realms/acme/users/"+e.aliceID+"/sessions", nil), http.StatusOK)
	r = e.stepUp(http.MethodGet, "challenge", tok.AccessToken, nil)
	mustError(t, r, http.StatusUnauthorized, "invalid_token", "")
}

// tokenWithoutSID mints an access token of alice that names no session,
// as no grant of hers would: the step-up refuses it all the same.
func (e *accountEnv) tokenWithoutSID() string {
	e.t.Helper()
	ctx := e.t.Context()
	realm, err := e.store.GetRealm(ctx, "acme")
	if err != nil {
		e.t.Fatal(err)
	}
	user, err := e.store.GetUser(ctx, realm.ID, e.aliceID)
	if err != nil {
		e.t.Fatal(err)
	}
	client, err := e.store.GetClientByClientID(ctx, realm.ID, "cli")
	if err != nil {
		e.t.Fatal(err)
	}
	token, _, _, err := e.app.accessToken(ctx, &tokenGrant{realm: realm, client: client, user: user, acr: acrOneFactor}, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return token
}
