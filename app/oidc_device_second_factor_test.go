package app

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

// The device page asks what a browser sign-in would: a user with TOTP
// approves with the password and a one-time code; a user who owes a step
// the page cannot take is sent to sign in to the account first.

// deviceEnv is the code flow's environment with the public client tv
// allowed the device grant.
func deviceEnv(t *testing.T) *codeflowEnv {
	t.Helper()
	e := newCodeflowEnv(t)
	e.client("tv", map[string]any{"name": "Living room TV", "clientType": "PUBLIC", "grantTypes": []string{identity.GrantDeviceCode}})
	e.eventsOn()
	return e
}

// deviceApprove starts a device flow and posts the approval form for
// alice with fields set over her password; it returns the answer and the
// user code.
func (e *codeflowEnv) deviceApprove(set map[string]string) (*codeflowPage, string) {
	e.t.Helper()
	userCode := deviceTestStart(e.t, e.oidcTestServer)
	b := e.browser()
	page := b.get(e.issuer("acme") + "/device?user_code=" + url.QueryEscape(userCode))
	mustPage(e.t, page, http.StatusOK, "Living room TV", `autocomplete="one-time-code"`)
	fields := map[string]string{"action": "approve", "username": "alice", "password": codeflowPassword}
	for k, v := range set {
		fields[k] = v
	}
	return b.submit(page, fields), userCode
}

// deviceStatus is the state of the device authorization of userCode.
func (e *codeflowEnv) deviceStatus(userCode string) string {
	e.t.Helper()
	code, _ := normalizeUserCode(userCode)
	d, err := e.store.DeviceAuthorizationByUserCode(e.t.Context(), e.realmID(), code)
	if err != nil {
		e.t.Fatal(err)
	}
	return d.Status
}

func mustDeviceRefused(t *testing.T, p *codeflowPage, status int, want ...string) {
	t.Helper()
	mustPage(t, p, status, want...)
	if strings.Contains(string(p.body), enMsg("device.approved.title")) {
		t.Fatalf("approved: %s", p.body)
	}
}

func TestDeviceApprovalTOTP(t *testing.T) {
	e := deviceEnv(t)
	e.totpAlign()
	secret, recovery := e.totpEnrol(e.aliceID)
	e.clock.advance(totpTestStep)
	code := totpTestCode(t, secret, e.clock.now())

	// The password alone: the form asks for the code, at its field.
	p, userCode := e.deviceApprove(nil)
	mustDeviceRefused(t, p, http.StatusUnauthorized, `id="otp-error"`, `aria-describedby="otp-error otp-hint"`,
		enMsg("device.error.otpRequired"))
	if s := e.deviceStatus(userCode); s != store.DevicePending {
		t.Fatalf("device %s after the password alone", s)
	}
	// A wrong code is refused, counted, and recorded.
	p, _ = e.deviceApprove(map[string]string{"otp": totpTestWrongCode(code)})
	mustDeviceRefused(t, p, http.StatusUnauthorized, `id="otp-error"`, enMsg("device.error.otpWrong"))
	if ev := e.loginEvents("LOGIN_ERROR"); len(ev) != 1 || ev[0].Error != "invalid_totp" || ev[0].ClientID != "tv" {
		t.Fatalf("LOGIN_ERROR events %+v", ev)
	}
	if n := e.aliceFailures(); n != 1 {
		t.Fatalf("%d failures on record, want 1", n)
	}
	// A wrong password with the right code: the code is not even tried.
	p, _ = e.deviceApprove(map[string]string{"password": "wrong password", "otp": code})
	mustDeviceRefused(t, p, http.StatusBadRequest, enMsg("login.error.invalid"))

	// The right code approves, once; the failures are forgotten.
	p, userCode = e.deviceApprove(map[string]string{"otp": code})
	mustPage(t, p, http.StatusOK, enMsg("device.approved.title"))
	if s := e.deviceStatus(userCode); s != store.DeviceApproved {
		t.Fatalf("device %s after the code", s)
	}
	if n := e.aliceFailures(); n != 0 {
		t.Fatalf("%d failures kept after the approval", n)
	}
	p, _ = e.deviceApprove(map[string]string{"otp": code})
	mustDeviceRefused(t, p, http.StatusUnauthorized, enMsg("device.error.otpWrong"))
	// A recovery code stands in for a code.
	p, _ = e.deviceApprove(map[string]string{"otp": strings.ToUpper(recovery[0])})
	mustPage(t, p, http.StatusOK, enMsg("device.approved.title"))
}

// Wrong codes are throttled as on the sign-in's TOTP step: 429 with
// Retry-After, for new user codes too.
func TestDeviceApprovalTOTPThrottled(t *testing.T) {
	e := deviceEnv(t)
	e.changeRealm(func(r *store.Realm) { r.BruteForceEnabled = false }) // the flood guard alone
	e.totpAlign()
	secret, _ := e.totpEnrol(e.aliceID)
	e.clock.advance(totpTestStep)
	code := totpTestCode(t, secret, e.clock.now())
	for range identity.LoginLimitPerUser {
		p, _ := e.deviceApprove(map[string]string{"otp": totpTestWrongCode(code)})
		mustDeviceRefused(t, p, http.StatusUnauthorized, enMsg("device.error.otpWrong"))
	}
	p, _ := e.deviceApprove(map[string]string{"otp": code})
	mustDeviceRefused(t, p, http.StatusTooManyRequests, enMsg("error.throttled"))
	if p.header.Get("Retry-After") == "" {
		t.Fatal("429 without Retry-After")
	}
}

// A user who owes a step of the browser sign-in is sent there first.
func TestDeviceApprovalSignInFirst(t *testing.T) {
	for _, c := range []struct {
		name string
		owe  func(e *codeflowEnv)
	}{
		{"second factor required, none enrolled", func(e *codeflowEnv) {
			mustStatus(e.t, e.admin(http.MethodPatch, "/admin/realms/acme", map[string]any{"mfaRequired": true}), http.StatusOK)
		}},
		{"password change asked for", changePasswordRequire},
		{"email not verified", func(e *codeflowEnv) { e.changeRealm(func(r *store.Realm) { r.RequireEmailVerification = true }) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := deviceEnv(t)
			c.owe(e)
			p, userCode := e.deviceApprove(nil)
			mustDeviceRefused(t, p, http.StatusForbidden, enMsg("device.error.signInFirst"),
				`href="`+e.url+`/realms/acme/account/"`)
			if s := e.deviceStatus(userCode); s != store.DevicePending {
				t.Fatalf("device %s", s)
			}
			if ev := e.loginEvents("LOGIN_ERROR"); len(ev) != 1 || ev[0].Error != "resolve_required_actions" {
				t.Fatalf("LOGIN_ERROR events %+v", ev)
			}
		})
	}
}

// A registration awaiting approval approves no device: its right password
// reads as a wrong one, as on the login page.
func TestDeviceApprovalPendingRegistration(t *testing.T) {
	e := deviceEnv(t)
	if err := e.store.ChangeUserStatus(t.Context(), e.realmID(), e.aliceID, store.UserActive, store.UserPending); err != nil {
		t.Fatal(err)
	}
	p, userCode := e.deviceApprove(nil)
	mustDeviceRefused(t, p, http.StatusBadRequest, enMsg("login.error.invalid"))
	if s := e.deviceStatus(userCode); s != store.DevicePending {
		t.Fatalf("device %s", s)
	}
}

// A user whose second factor is a security key cannot approve with the
// password alone: the page has no way to ask for the key, so the user
// signs in to the account first.
func TestDeviceApprovalWebAuthnSignInFirst(t *testing.T) {
	e := deviceEnv(t)
	err := e.store.AddWebAuthnCredential(t.Context(), &store.WebAuthnCredential{ID: "key1", RealmID: e.realmID(),
		UserID: e.aliceID, Name: "key", CredentialID: []byte("credential-1"), Data: []byte(`{}`),
		CreatedAt: e.clock.now().UnixMilli()})
	if err != nil {
		t.Fatal(err)
	}
	p, userCode := e.deviceApprove(nil)
	mustDeviceRefused(t, p, http.StatusForbidden, enMsg("device.error.signInFirst"))
	if s := e.deviceStatus(userCode); s != store.DevicePending {
		t.Fatalf("device %s after the password alone", s)
	}
	if ev := e.loginEvents("LOGIN_ERROR"); len(ev) != 1 || ev[0].Error != "resolve_required_actions" ||
		ev[0].Details["reason"] != "second_factor_required" {
		t.Fatalf("LOGIN_ERROR events %+v", ev)
	}
}
