package main

// Browser tests of the steps a sign-in may take after the password: the
// TOTP code of a user who set up an authenticator app from the account
// pages, and the new password an administrator requires.

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"
	"golang.org/x/oauth2"
)

// browserTOTPCode is the code of the base32 secret at t, with the
// server's parameters: SHA-1, six digits, 30-second steps.
func browserTOTPCode(t *testing.T, secret string, at time.Time) string {
	t.Helper()
	code, err := totp.GenerateCodeCustom(secret, at, totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		t.Fatalf("TOTP code: %v", err)
	}
	return code
}

// TestBrowserTOTP: alice sets up an authenticator app from her account
// (the key read off the page, as a person types it into the app), sees
// her recovery codes once, signs out, and signs in to an application
// again: the password, then a code, and the ID token says both were used.
func TestBrowserTOTP(t *testing.T) {
	e := newBrowserEnv(t)
	aliceID := browserAcme(e)
	cb := newBrowserCallback(t)
	secret := browserCodeClient(e, cb, nil)
	rp := e.relyingParty("acme", "web", secret, cb.url, "openid")

	b := e.browser()
	key, enrolledAt := browserEnrolTOTP(e, b, true)
	codes := browserEval[[]string](b, "recovery codes", `[...document.querySelectorAll('ul.recovery-codes li')].map(li => li.textContent.trim())`)
	if len(codes) != 10 {
		t.Fatalf("recovery codes %q, want 10", codes)
	}
	var mfa struct {
		Enabled                bool     `json:"enabled"`
		Factors                []string `json:"factors"`
		RecoveryCodesRemaining int      `json:"recoveryCodesRemaining"`
	}
	e.admin(http.MethodGet, "/admin/realms/acme/users/"+aliceID+"/mfa/status", nil, http.StatusOK, &mfa)
	if !mfa.Enabled || !slices.Contains(mfa.Factors, "totp") || mfa.RecoveryCodesRemaining != 10 {
		t.Fatalf("MFA status %+v, want TOTP with 10 recovery codes", mfa)
	}
	// The codes are shown once: the page now offers to turn TOTP off.
	b.open("", e.issuer("acme")+"/account/totp-setup")
	if h := b.heading(); h != "Two-factor authentication is on" {
		t.Fatalf("enrolment page again: heading %q", h)
	}
	if strings.Contains(b.text(), codes[0]) {
		t.Errorf("the recovery codes are shown again")
	}

	// Signing out from the account page, confirmed.
	b.open("", e.issuer("acme")+"/account")
	b.click("logout-confirm", "Sign out")
	if h := b.heading(); h != "Sign out" {
		t.Fatalf("sign-out link: heading %q, want the confirmation", h)
	}
	b.click("logged-out", "Sign out")
	if h := b.heading(); h != "You are signed out" {
		t.Fatalf("after signing out: heading %q", h)
	}
	var sessions []browserSession
	e.admin(http.MethodGet, "/admin/realms/acme/users/"+aliceID+"/sessions", nil, http.StatusOK, &sessions)
	if len(sessions) != 0 {
		t.Fatalf("sessions after signing out: %+v", sessions)
	}

	// Signing in again: the password leads to the code.
	verifier := oauth2.GenerateVerifier()
	b.open("", rp.config.AuthCodeURL("state-otp", oauth2.S256ChallengeOption(verifier), oidc.Nonce("nonce-otp")))
	b.signIn("totp-login", "alice", browserPassword)
	if h := b.heading(); h != "Two-factor authentication" {
		t.Fatalf("after the password: heading %q, want the code page", h)
	}
	// A wrong code is refused at the field.
	b.fill("Authentication code", "000000")
	if status := b.click("totp-login-error", "Verify"); status != http.StatusBadRequest && status != http.StatusUnauthorized {
		t.Fatalf("wrong code: status %d", status)
	}
	if text, invalid := b.errorOf("Authentication code"); !strings.Contains(text, "The code is wrong or was already used.") || !invalid {
		t.Errorf("wrong code error %q (invalid %v)", text, invalid)
	}
	// Each time step is accepted once, and enrolment used the current one:
	// the next step's code is accepted (one step of skew) and unused.
	b.fill("Authentication code", browserTOTPCode(t, key, enrolledAt.Add(30*time.Second)))
	b.click("", "Verify")
	q := cb.wait()
	if q.Get("state") != "state-otp" || q.Get("code") == "" {
		t.Fatalf("redirect back %v", q)
	}
	tok, err := rp.config.Exchange(t.Context(), q.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("exchange: %v", err)
	}
	idt, claims := rp.verify(tok, "nonce-otp")
	if idt.Subject != aliceID {
		t.Fatalf("signed in as %s", idt.Subject)
	}
	amr, _ := claims["amr"].([]any)
	if !slices.Contains(amr, any("otp")) || !slices.Contains(amr, any("pwd")) {
		t.Fatalf("amr %v, want pwd and otp", claims["amr"])
	}
}

// browserEnrolTOTP signs alice in to her account's enrolment page,
// enrols the authenticator with a code of the key the page shows, and
// returns the key and when its first code was taken.
func browserEnrolTOTP(e *browserEnv, b *browserTab, screenshots bool) (string, time.Time) {
	e.t.Helper()
	step := func(name string) string {
		if screenshots {
			return name
		}
		return ""
	}
	setup := e.issuer("acme") + "/account/totp-setup"
	b.open("", setup)
	b.signIn(step("totp-setup"), "alice", browserPassword)
	if loc, h := b.location(), b.heading(); loc != setup || h != "Set up an authenticator app" {
		e.t.Fatalf("after signing in: %q at %s, want the enrolment page", h, loc)
	}
	key := browserEval[string](b, "key", `(() => {
		const dt = [...document.querySelectorAll('dt')].find(d => d.textContent.trim() === 'Key');
		return dt ? dt.nextElementSibling.textContent : '';
	})()`)
	key = strings.ReplaceAll(strings.TrimSpace(key), " ", "")
	if len(key) < 32 {
		e.t.Fatalf("the page shows the key %q", key)
	}
	if alt := browserEval[string](b, "QR code", `document.querySelector('img.qr').alt`); !strings.Contains(alt, "QR code") {
		e.t.Errorf("QR code alt %q", alt)
	}
	at := time.Now()
	b.fill("Authentication code", browserTOTPCode(e.t, key, at))
	b.click(step("totp-recovery-codes"), "Confirm")
	if h := b.heading(); !strings.HasPrefix(h, "Two-factor authentication is on") {
		e.t.Fatalf("after confirming: heading %q; page:\n%s", h, b.text())
	}
	return key, at
}

// TestBrowserAccountSignInMethods: once alice has set up an authenticator
// app, her account page lists it among her sign-in methods, and her data
// export among her credentials.
func TestBrowserAccountSignInMethods(t *testing.T) {
	e := newBrowserEnv(t)
	browserAcme(e)
	b := e.browser()
	browserEnrolTOTP(e, b, false)
	b.open("", e.issuer("acme")+"/account")
	b.mustShow("Authenticator app (one-time codes)")
	got := b.fetch("/realms/acme/account/data-export")
	var export struct {
		Profile struct {
			Factors []string `json:"factors"`
		} `json:"profile"`
		Credentials []struct {
			Type string `json:"type"`
		} `json:"credentials"`
	}
	if err := json.Unmarshal([]byte(got.Body), &export); err != nil {
		t.Fatalf("data export: %v\n%s", err, got.Body)
	}
	if !slices.Contains(export.Profile.Factors, "otp") {
		t.Errorf("factors %q, want otp", export.Profile.Factors)
	}
	if !slices.ContainsFunc(export.Credentials, func(c struct {
		Type string `json:"type"`
	}) bool {
		return c.Type == "otp"
	}) {
		t.Errorf("credentials %+v, want otp", export.Credentials)
	}
}

// TestBrowserRequiredPasswordChange: an administrator requires alice to
// change her password; her next sign-in asks for a new one, then goes on
// to the application, and the requirement is gone.
func TestBrowserRequiredPasswordChange(t *testing.T) {
	e := newBrowserEnv(t)
	aliceID := browserAcme(e)
	cb := newBrowserCallback(t)
	secret := browserCodeClient(e, cb, map[string]any{"grantTypes": []string{"authorization_code", "password"}})
	rp := e.relyingParty("acme", "web", secret, cb.url, "openid")
	e.admin(http.MethodPatch, "/admin/realms/acme/users/"+aliceID, map[string]any{"requirePasswordReset": true}, http.StatusOK, nil)
	const newPassword = "alice chose this one herself"

	verifier := oauth2.GenerateVerifier()
	b := e.browser()
	b.open("", rp.config.AuthCodeURL("state-cp", oauth2.S256ChallengeOption(verifier), oidc.Nonce("nonce-cp")))
	b.signIn("change-password", "alice", browserPassword)
	if h := b.heading(); h != "Change your password" {
		t.Fatalf("after signing in: heading %q, want the password change", h)
	}
	// The same password again is no change.
	b.fill("New password", browserPassword)
	b.fill("Confirm new password", browserPassword)
	if status := b.click("change-password-error", "Change password and continue"); status != http.StatusBadRequest {
		t.Fatalf("the current password as the new one: status %d, want 400", status)
	}
	if text, invalid := b.errorOf("New password"); text == "" || !invalid {
		t.Errorf("new password error %q (invalid %v), want a message", text, invalid)
	}
	b.fill("New password", newPassword)
	b.fill("Confirm new password", newPassword)
	b.click("", "Change password and continue")
	q := cb.wait()
	if q.Get("state") != "state-cp" || q.Get("code") == "" {
		t.Fatalf("redirect back %v", q)
	}
	tok, err := rp.config.Exchange(t.Context(), q.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("exchange: %v", err)
	}
	if idt, _ := rp.verify(tok, "nonce-cp"); idt.Subject != aliceID {
		t.Fatalf("signed in as %s", idt.Subject)
	}
	if u := e.getUser("acme", aliceID); u.RequirePasswordReset {
		t.Fatalf("the requirement is still set: %+v", u)
	}
	_, err = rp.config.PasswordCredentialsToken(t.Context(), "alice", browserPassword)
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.ErrorCode != "invalid_grant" {
		t.Errorf("the old password: %v, want invalid_grant", err)
	}
	if _, err := rp.config.PasswordCredentialsToken(t.Context(), "alice", newPassword); err != nil {
		t.Errorf("the new password: %v", err)
	}
}
