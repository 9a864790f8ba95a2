package app

import (
	"bytes"
	"encoding/base64"
	"image/png"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/account"
	"github.com/idenplane/idenplane/app/identity"
)

// passwordGrantClient makes a client cli with the password grant and
// returns its secret.
func (e *codeflowEnv) passwordGrantClient() string {
	return e.client("cli", map[string]any{"grantTypes": []string{"password"}})
}

// passwordGrantToken signs alice in with cli's password grant and returns
// the access token.
func (e *codeflowEnv) passwordGrantToken(secret string) (string, error) {
	e.t.Helper()
	tok, err := e.oauth2Config("cli", secret, "openid").PasswordCredentialsToken(e.t.Context(), "alice", codeflowPassword)
	if err != nil {
		return "", err
	}
	return tok.AccessToken, nil
}

func TestAccountTOTPBearer(t *testing.T) {
	e := newCodeflowEnv(t)
	e.eventsOn()
	mustStatus(t, e.admin(http.MethodPatch, "/admin/realms/acme", map[string]any{"displayName": "Acme Corp"}), http.StatusOK)
	cli := e.passwordGrantClient()
	token, err := e.passwordGrantToken(cli)
	if err != nil {
		t.Fatal(err)
	}
	bearer := "Authorization: Bearer " + token
	const setup, disable = "/realms/acme/account/totp-setup", "/realms/acme/account/totp-disable"
	e.totpAlign()

	r := e.request(http.MethodGet, setup, nil, bearer)
	mustStatus(t, r, http.StatusOK)
	var rep account.TotpSetupRep
	r.decode(t, &rep)
	uri, err := url.Parse(rep.OTPAuthURI)
	if err != nil || rep.Status != "pending" || rep.Secret == "" || uri.Scheme != "otpauth" || uri.Path != "/Acme Corp:alice" ||
		uri.Query().Get("secret") != rep.Secret || uri.Query().Get("issuer") != "Acme Corp" || rep.Algorithm != "SHA1" ||
		rep.Digits != 6 || rep.Period != 30 || rep.ExpiresAt != e.clock.now().Add(identity.TOTPEnrolmentTTL).UnixMilli() {
		t.Fatalf("enrolment %+v", rep)
	}
	img, err := base64.StdEncoding.DecodeString(rep.QRPNG)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(bytes.NewReader(img)); err != nil {
		t.Fatalf("qrPng is no PNG: %v", err)
	}
	// Asked again, the same enrolment: an app may already hold the secret.
	var again account.TotpSetupRep
	e.request(http.MethodGet, setup, nil, bearer).decode(t, &again)
	if again.Secret != rep.Secret {
		t.Fatal("a second GET changed the pending secret")
	}

	code := totpTestCode(t, rep.Secret, e.clock.now())
	mustError(t, e.request(http.MethodPost, setup, map[string]any{"code": totpTestWrongCode(code)}, bearer), http.StatusBadRequest, "invalid_field", "code")
	mustError(t, e.request(http.MethodPost, setup, map[string]any{}, bearer), http.StatusBadRequest, "invalid_field", "code")
	mustError(t, e.request(http.MethodPost, setup, map[string]any{"code": code, "extra": 1}, bearer), http.StatusBadRequest, "unknown_field", "extra")
	mustError(t, e.request(http.MethodPost, setup, "code="+code, bearer, "Content-Type: application/x-www-form-urlencoded"),
		http.StatusUnsupportedMediaType, "unsupported_media_type", "")
	r = e.request(http.MethodPost, setup, map[string]any{"code": code}, bearer)
	mustStatus(t, r, http.StatusOK)
	var confirmed struct {
		Enabled       bool     `json:"enabled"`
		RecoveryCodes []string `json:"recoveryCodes"`
	}
	r.decode(t, &confirmed)
	if !confirmed.Enabled || len(confirmed.RecoveryCodes) != identity.RecoveryCodeCount {
		t.Fatalf("confirmation %s", r.Body)
	}
	if ev := e.loginEvents("UPDATE_TOTP"); len(ev) != 1 || ev[0].UserID != e.aliceID || ev[0].SessionID == "" {
		t.Fatalf("UPDATE_TOTP events %+v", ev)
	}
	// Enrolled: no second enrolment, and the password grant is refused.
	mustError(t, e.request(http.MethodGet, setup, nil, bearer), http.StatusConflict, "conflict", "")
	mustError(t, e.request(http.MethodPost, setup, map[string]any{"code": code}, bearer), http.StatusConflict, "conflict", "")
	if _, err := e.passwordGrantToken(cli); err == nil || !strings.Contains(err.Error(), "second factor required") {
		t.Fatalf("password grant of a TOTP user: %v, want invalid_grant second factor required", err)
	}

	// Turning it off takes a proof.
	e.clock.advance(totpTestStep)
	code = totpTestCode(t, rep.Secret, e.clock.now())
	mustError(t, e.request(http.MethodPost, disable, map[string]any{}, bearer), http.StatusBadRequest, "invalid_field", "code")
	mustError(t, e.request(http.MethodPost, disable, map[string]any{"code": totpTestWrongCode(code)}, bearer), http.StatusBadRequest, "invalid_field", "code")
	mustError(t, e.request(http.MethodPost, disable, map[string]any{"password": "wrong password"}, bearer), http.StatusBadRequest, "invalid_field", "password")
	mustStatus(t, e.request(http.MethodPost, disable, map[string]any{"code": code}, bearer), http.StatusNoContent)
	if ev := e.loginEvents("REMOVE_TOTP"); len(ev) != 1 || ev[0].UserID != e.aliceID || ev[0].Details["by"] != "" {
		t.Fatalf("REMOVE_TOTP events %+v", ev)
	}
	mustError(t, e.request(http.MethodPost, disable, map[string]any{"code": code}, bearer), http.StatusNotFound, "not_found", "")
	if _, err := e.passwordGrantToken(cli); err != nil {
		t.Fatalf("password grant after TOTP is off: %v", err)
	}
	// A new enrolment starts with a new secret.
	e.request(http.MethodGet, setup, nil, bearer).decode(t, &again)
	if again.Secret == rep.Secret || again.Secret == "" {
		t.Fatal("enrolment after removal reuses the old secret")
	}

	r = e.request(http.MethodGet, setup, nil, "Authorization: Bearer not-a-token")
	mustError(t, r, http.StatusUnauthorized, "invalid_token", "")
}

func TestAccountTOTPDisableThrottled(t *testing.T) {
	e := newCodeflowEnv(t)
	token, err := e.passwordGrantToken(e.passwordGrantClient())
	if err != nil {
		t.Fatal(err)
	}
	bearer := "Authorization: Bearer " + token
	e.totpAlign()
	secret, _ := e.totpEnrol(e.aliceID)
	e.clock.advance(totpTestStep)
	code := totpTestCode(t, secret, e.clock.now())
	for range identity.LoginLimitPerUser {
		mustError(t, e.request(http.MethodPost, "/realms/acme/account/totp-disable", map[string]any{"code": totpTestWrongCode(code)}, bearer),
			http.StatusBadRequest, "invalid_field", "code")
	}
	r := e.request(http.MethodPost, "/realms/acme/account/totp-disable", map[string]any{"code": code}, bearer)
	mustError(t, r, http.StatusTooManyRequests, "too_many_requests", "")
	if r.Header.Get("Retry-After") == "" {
		t.Fatal("429 without Retry-After")
	}
}

func TestAccountTOTPBrowser(t *testing.T) {
	e := newCodeflowEnv(t)
	e.client("web", nil)
	cfg := e.oauth2Config("web", "", "openid")
	e.totpAlign()
	setupURL := e.url + "/realms/acme/account/totp-setup"

	// Without an SSO session the page sends the browser to sign in.
	if p := e.browser().get(setupURL); p.status != http.StatusFound || !strings.Contains(p.header.Get("Location"), "/protocol/openid-connect/auth?") {
		t.Fatalf("account page without sign-in: status %d Location %q", p.status, p.header.Get("Location"))
	}
	b := e.browser()
	e.signIn(b, cfg.AuthCodeURL("s"), "alice")

	page := b.get(setupURL)
	if page.status != http.StatusOK || !strings.Contains(string(page.body), `class="qr" src="data:image/png;base64,`) {
		t.Fatalf("setup page: status %d body %s", page.status, page.body)
	}
	checkPageCSP(t, page.header, false)
	m := regexp.MustCompile(`<dd><code>([A-Z2-7 ]+)</code></dd>`).FindSubmatch(page.body)
	if m == nil {
		t.Fatalf("setup page without the key: %s", page.body)
	}
	secret := strings.ReplaceAll(string(m[1]), " ", "")
	code := totpTestCode(t, secret, e.clock.now())
	totpMustRefuse(t, b.submit(page, map[string]string{"code": totpTestWrongCode(code)}), http.StatusBadRequest, "code")
	if p := b.submit(page, map[string]string{"code": code, "csrf": "forged"}); p.status != http.StatusForbidden {
		t.Fatalf("forged post: status %d, want 403", p.status)
	}
	done := b.submit(page, map[string]string{"code": code})
	if n := len(regexp.MustCompile(`<li><code>[a-z2-7-]{19}</code></li>`).FindAll(done.body, -1)); done.status != http.StatusOK || n != identity.RecoveryCodeCount {
		t.Fatalf("confirmation page: status %d with %d codes; body %s", done.status, n, done.body)
	}

	// Enrolled: the page says so and offers to turn it off.
	page = b.get(setupURL)
	if f := page.form(t); page.status != http.StatusOK || !f.fields.Has("code") || !f.fields.Has("password") ||
		strings.Contains(string(page.body), "data:image/png") {
		t.Fatalf("setup page when enrolled: status %d body %s", page.status, page.body)
	}
	if p := b.submit(page, nil); p.status != http.StatusBadRequest || !strings.Contains(string(p.body), `role="alert"`) {
		t.Fatalf("turning off without a proof: status %d body %s", p.status, p.body)
	}
	totpMustRefuse(t, b.submit(page, map[string]string{"password": "wrong password"}), http.StatusBadRequest, "password")
	off := b.submit(page, map[string]string{"password": codeflowPassword})
	if off.status != http.StatusOK || !strings.Contains(string(off.body), `href="`+setupURL+`"`) {
		t.Fatalf("turned off: status %d body %s", off.status, off.body)
	}
	var status mfaStatusRep
	e.admin(http.MethodGet, "/admin/realms/acme/users/"+e.aliceID+"/mfa/status", nil).decode(t, &status)
	if status.Enabled || status.RecoveryCodesRemaining != 0 {
		t.Fatalf("status after turning off: %+v", status)
	}
}

func TestPasswordGrantMFARequired(t *testing.T) {
	e := newCodeflowEnv(t)
	e.eventsOn()
	cli := e.passwordGrantClient()
	mustStatus(t, e.admin(http.MethodPatch, "/admin/realms/acme", map[string]any{"mfaRequired": true}), http.StatusOK)
	// A user without a factor cannot enrol through this grant: refused.
	status, body := e.tokenRequest(url.Values{"grant_type": {"password"}, "username": {"alice"}, "password": {codeflowPassword}},
		codeflowBasic("cli", cli))
	codeflowMustOAuthError(t, status, body, http.StatusBadRequest, "invalid_grant")
	if !strings.Contains(body["error_description"].(string), "second factor required") {
		t.Fatalf("error %v", body)
	}
	errs := e.loginEvents("LOGIN_ERROR")
	if len(errs) != 1 || errs[0].UserID != e.aliceID || errs[0].Error != "invalid_user_credentials" || errs[0].Details["reason"] != "second factor required" {
		t.Fatalf("LOGIN_ERROR events %+v", errs)
	}
	if logins := e.loginEvents("LOGIN"); len(logins) != 0 {
		t.Fatalf("LOGIN events %+v", logins)
	}
	mustStatus(t, e.admin(http.MethodPatch, "/admin/realms/acme", map[string]any{"mfaRequired": false}), http.StatusOK)
	if _, err := e.passwordGrantToken(cli); err != nil {
		t.Fatalf("password grant without the requirement: %v", err)
	}
}
