package main

// Browser tests: a person in headless Chromium against the real binary,
// through the hosted pages, with real clients (x/oauth2, go-oidc) on the
// other side and a real SMTP server for mail. Every page of the server
// that a test lands on is checked with axe-core (browser_helpers_test.go).
// `make screenshots` saves the named steps' pages in docs/screenshots.

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// browserAcme makes realm acme (display name Acme) with alice, whose
// password is browserPassword, and returns alice's ID.
func browserAcme(e *browserEnv) string {
	e.t.Helper()
	e.realm("acme", map[string]any{"displayName": "Acme"})
	return e.user("acme", map[string]any{"username": "alice", "email": "alice@example.test", "emailVerified": true,
		"firstName": "Alice", "lastName": "Liddell", "password": browserPassword})
}

// browserCodeClient makes a confidential client of acme whose redirect
// URI is cb; fields override the defaults. It returns the secret.
func browserCodeClient(e *browserEnv, cb *browserCallback, fields map[string]any) string {
	e.t.Helper()
	body := map[string]any{"clientId": "web", "name": "Acme Web", "redirectUris": []string{cb.url},
		"grantTypes": []string{"authorization_code", "refresh_token"}}
	for k, v := range fields {
		body[k] = v
	}
	return e.client("acme", body)
}

// browserSession is a session as the admin API lists it.
type browserSession struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	ClientID string `json:"clientId"`
	ParentID string `json:"parentId"`
}

// TestBrowserCodeFlow: an application sends the browser to sign in, the
// user signs in and allows the application on the consent page, and the
// application gets a code it exchanges (with PKCE) for a verified ID token.
func TestBrowserCodeFlow(t *testing.T) {
	e := newBrowserEnv(t)
	aliceID := browserAcme(e)
	cb := newBrowserCallback(t)
	secret := browserCodeClient(e, cb, map[string]any{"clientId": "shop", "name": "The Shop", "requireConsent": true})
	rp := e.relyingParty("acme", "shop", secret, cb.url, "openid", "email")

	verifier := oauth2.GenerateVerifier()
	authURL := rp.config.AuthCodeURL("state-1", oauth2.S256ChallengeOption(verifier), oidc.Nonce("nonce-1"))
	b := e.browser()
	if status := b.open("login", authURL); status != http.StatusOK {
		t.Fatalf("login page: status %d at %s", status, b.location())
	}
	if h := b.heading(); h != "Sign in" {
		t.Fatalf("login page heading %q", h)
	}
	b.mustShow("The Shop")
	b.fill("Username or email", "alice")
	b.fill("Password", browserPassword)

	b.click("consent", "Sign in")
	if h := b.heading(); h != "Allow access?" {
		t.Fatalf("after signing in: heading %q at %s, want the consent page", h, b.location())
	}
	b.mustShow("The Shop", "email")

	b.click("", "Allow")
	back := cb.wait()
	if back.Get("state") != "state-1" || back.Get("code") == "" || back.Has("error") {
		t.Fatalf("redirect back %v, want a code and state-1", back)
	}
	if loc := b.location(); !strings.HasPrefix(loc, cb.url+"?") {
		t.Errorf("the browser ended on %s, want the redirect URI", loc)
	}

	tok, err := rp.config.Exchange(t.Context(), back.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("exchange: %v", err)
	}
	idt, claims := rp.verify(tok, "nonce-1")
	if idt.Subject != aliceID || claims["preferred_username"] != "alice" || claims["email"] != "alice@example.test" {
		t.Fatalf("ID token subject %s claims %v, want alice %s", idt.Subject, claims, aliceID)
	}

	// Stored: alice's one SSO session, the shop's session under it, and her consent.
	var sessions []browserSession
	e.admin(http.MethodGet, "/admin/realms/acme/users/"+aliceID+"/sessions", nil, http.StatusOK, &sessions)
	var sso, oauthSessions []browserSession
	for _, s := range sessions {
		switch s.Type {
		case "sso":
			sso = append(sso, s)
		case "oauth":
			oauthSessions = append(oauthSessions, s)
		}
	}
	if len(sso) != 1 || sso[0].ID != claims["sid"] {
		t.Fatalf("sessions %+v, want one SSO session, the ID token's sid %v", sessions, claims["sid"])
	}
	if len(oauthSessions) != 1 || oauthSessions[0].ClientID != "shop" || oauthSessions[0].ParentID != sso[0].ID {
		t.Fatalf("sessions %+v, want the shop's session under the SSO session", sessions)
	}
	var consents []struct {
		ClientID      string   `json:"clientId"`
		GrantedScopes []string `json:"grantedScopes"`
	}
	e.admin(http.MethodGet, "/admin/realms/acme/users/"+aliceID+"/consents", nil, http.StatusOK, &consents)
	if len(consents) != 1 || consents[0].ClientID != "shop" || !slices.Contains(consents[0].GrantedScopes, "email") {
		t.Fatalf("consents %+v, want the shop's, with email", consents)
	}
}

// TestBrowserWrongPassword: a wrong password brings the form back with the
// error announced, the username kept and the password emptied; the right
// one then signs in.
func TestBrowserWrongPassword(t *testing.T) {
	e := newBrowserEnv(t)
	browserAcme(e)
	cb := newBrowserCallback(t)
	secret := browserCodeClient(e, cb, nil)
	rp := e.relyingParty("acme", "web", secret, cb.url, "openid")

	b := e.browser()
	b.open("", rp.config.AuthCodeURL("state-w", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())))
	b.fill("Username or email", "alice")
	b.fill("Password", "not the password")
	if status := b.click("login-error", "Sign in"); status != http.StatusUnauthorized {
		t.Fatalf("wrong password: status %d, want 401", status)
	}
	if h := b.heading(); h != "Sign in" {
		t.Fatalf("after a wrong password: heading %q, want the login page again", h)
	}
	const message = "Invalid username or password."
	if alerts := b.alerts(); !slices.ContainsFunc(alerts, func(a string) bool { return strings.Contains(a, message) }) {
		// A page may tie the message to the field instead of a form alert.
		if text, invalid := b.errorOf("Password"); !strings.Contains(text, message) || !invalid {
			t.Errorf("the message %q is neither an alert (alerts %q) nor the password field's error (%q, invalid %v)",
				message, alerts, text, invalid)
		}
	}
	if got := b.value("Username or email"); got != "alice" {
		t.Errorf("username after the error = %q, want it kept", got)
	}
	if got := b.value("Password"); got != "" {
		t.Errorf("the password came back in the form")
	}

	b.fill("Password", browserPassword)
	b.click("", "Sign in")
	if back := cb.wait(); back.Get("state") != "state-w" || back.Get("code") == "" {
		t.Fatalf("redirect back %v after the right password", back)
	}
}

// TestBrowserDeviceFlow: a device asks for a code, the user opens the
// verification link, signs in and approves, and the device's polling
// gets tokens.
func TestBrowserDeviceFlow(t *testing.T) {
	e := newBrowserEnv(t)
	aliceID := browserAcme(e)
	const deviceGrant = "urn:ietf:params:oauth:grant-type:device_code"
	e.client("acme", map[string]any{"clientId": "tv", "name": "Living room TV", "clientType": "PUBLIC",
		"grantTypes": []string{deviceGrant, "refresh_token"}})
	rp := e.relyingParty("acme", "tv", "", "", "openid", "profile")

	ctx := t.Context()
	da, err := rp.config.DeviceAuth(ctx)
	if err != nil {
		t.Fatalf("device authorization: %v", err)
	}
	if da.UserCode == "" || !strings.HasPrefix(da.VerificationURIComplete, e.issuer("acme")+"/device?") {
		t.Fatalf("device authorization %+v", da)
	}
	// Before the user decides, the device is told to keep waiting.
	resp, err := http.PostForm(rp.config.Endpoint.TokenURL, url.Values{"grant_type": {deviceGrant},
		"device_code": {da.DeviceCode}, "client_id": {"tv"}})
	if err != nil {
		t.Fatal(err)
	}
	var pending struct {
		Error string `json:"error"`
	}
	err = json.NewDecoder(resp.Body).Decode(&pending)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusBadRequest || pending.Error != "authorization_pending" {
		t.Fatalf("poll before approval: status %d error %q (%v), want 400 authorization_pending", resp.StatusCode, pending.Error, err)
	}

	b := e.browser()
	if status := b.open("device", da.VerificationURIComplete); status != http.StatusOK {
		t.Fatalf("device page: status %d", status)
	}
	if h := b.heading(); h != "Connect a device" {
		t.Fatalf("device page heading %q", h)
	}
	b.mustShow("Living room TV")
	if got := b.value("Code"); got != da.UserCode {
		t.Errorf("code field %q, want the device's %q", got, da.UserCode)
	}
	b.fill("Username", "alice")
	b.fill("Password", browserPassword)
	b.click("device-connected", "Approve")
	if h := b.heading(); h != "Device connected" {
		t.Fatalf("after approving: heading %q; page:\n%s", h, b.text())
	}

	pollCtx, cancel := b.bounded()
	defer cancel()
	tok, err := rp.config.DeviceAccessToken(pollCtx, da)
	if err != nil {
		t.Fatalf("device token: %v", err)
	}
	idt, _ := rp.verify(tok, "")
	if idt.Subject != aliceID || tok.RefreshToken == "" {
		t.Fatalf("device tokens for %s (refresh token %t), want alice %s", idt.Subject, tok.RefreshToken != "", aliceID)
	}
}

// TestBrowserForgotPassword: from the login page to a mailed reset link,
// a new password, and a sign-in with it; the old one no longer works.
func TestBrowserForgotPassword(t *testing.T) {
	e := newBrowserEnv(t)
	aliceID := browserAcme(e)
	box := newBrowserMailbox(t)
	settings := box.realmSettings()
	settings["displayName"] = "Acme"
	e.putRealm("acme", settings)
	cb := newBrowserCallback(t)
	secret := browserCodeClient(e, cb, map[string]any{"grantTypes": []string{"authorization_code", "password"}})
	rp := e.relyingParty("acme", "web", secret, cb.url, "openid")
	const newPassword = "a brand new passphrase 42"

	verifier := oauth2.GenerateVerifier()
	b := e.browser()
	b.open("", rp.config.AuthCodeURL("state-r", oauth2.S256ChallengeOption(verifier), oidc.Nonce("nonce-r")))
	b.click("forgot-password", "Forgot password?")
	if h := b.heading(); h != "Forgot your password?" {
		t.Fatalf("forgot password page heading %q", h)
	}
	b.fill("Username or email", "alice@example.test")
	b.click("forgot-password-sent", "Send reset link")
	if h := b.heading(); h != "Check your email" {
		t.Fatalf("after asking for a link: heading %q", h)
	}

	m := box.next()
	if !strings.Contains(m.to, "alice@example.test") {
		t.Fatalf("reset mail to %q", m.to)
	}
	link := m.link(t, "/realms/acme/reset-password")
	b.open("reset-password", link)
	if h := b.heading(); h != "Choose a new password" {
		t.Fatalf("reset page heading %q", h)
	}
	// Two different passwords: the confirmation field says so.
	b.fill("New password", newPassword)
	b.fill("Confirm new password", newPassword+" typo")
	if status := b.click("reset-password-error", "Set password"); status != http.StatusBadRequest {
		t.Fatalf("mismatched passwords: status %d, want 400", status)
	}
	if text, invalid := b.errorOf("Confirm new password"); !strings.Contains(text, "do not match") || !invalid {
		t.Errorf("confirmation field error %q (invalid %v), want that the passwords do not match", text, invalid)
	}
	b.fill("New password", newPassword)
	b.fill("Confirm new password", newPassword)
	b.click("password-changed", "Set password")
	if h := b.heading(); h != "Password changed" {
		t.Fatalf("after setting the password: heading %q; page:\n%s", h, b.text())
	}

	// Back to the sign-in that was waiting, with the new password.
	b.click("", "Back to sign in")
	if h := b.heading(); h != "Sign in" {
		t.Fatalf("back to sign in: heading %q", h)
	}
	b.fill("Username or email", "alice")
	b.fill("Password", newPassword)
	b.click("", "Sign in")
	back := cb.wait()
	if back.Get("state") != "state-r" || back.Get("code") == "" {
		t.Fatalf("redirect back %v", back)
	}
	tok, err := rp.config.Exchange(t.Context(), back.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("exchange: %v", err)
	}
	if idt, _ := rp.verify(tok, "nonce-r"); idt.Subject != aliceID {
		t.Fatalf("signed in as %s, want alice %s", idt.Subject, aliceID)
	}

	// The link worked once.
	if status := b.open("", link); status != http.StatusBadRequest {
		t.Errorf("the reset link a second time: status %d, want 400", status)
	}
	b.mustShow("This link is invalid or has expired.")

	// The old password is gone, the new one works.
	_, err = rp.config.PasswordCredentialsToken(t.Context(), "alice", browserPassword)
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.ErrorCode != "invalid_grant" {
		t.Errorf("password grant with the old password: %v, want invalid_grant", err)
	}
	if _, err := rp.config.PasswordCredentialsToken(t.Context(), "alice", newPassword); err != nil {
		t.Errorf("password grant with the new password: %v", err)
	}
}

// TestBrowserEmailVerification: a user registers through the public API,
// cannot sign in before verifying, opens the mailed link, and then can.
func TestBrowserEmailVerification(t *testing.T) {
	e := newBrowserEnv(t)
	// Verification is required from the realm's creation on; the mail
	// settings come with a PUT, as an administrator adds them later.
	e.realm("acme", map[string]any{"displayName": "Acme", "registrationAllowed": true, "requireEmailVerification": true})
	box := newBrowserMailbox(t)
	settings := box.realmSettings()
	settings["displayName"], settings["registrationAllowed"] = "Acme", true
	e.putRealm("acme", settings)
	cb := newBrowserCallback(t)
	secret := browserCodeClient(e, cb, nil)
	rp := e.relyingParty("acme", "web", secret, cb.url, "openid", "email")

	var reg struct {
		User struct {
			ID            string `json:"id"`
			EmailVerified bool   `json:"emailVerified"`
		} `json:"user"`
		VerificationEmailSent bool `json:"verificationEmailSent"`
	}
	status, body, err := e.srv.do(http.MethodPost, "/realms/acme/registration/register", "", map[string]any{
		"username": "linda", "email": "linda@example.test", "password": browserPassword,
		"firstName": "Linda", "lastName": "Lovelace"})
	if err != nil || status != http.StatusCreated {
		t.Fatalf("register: %d %s %v", status, body, err)
	}
	if err := json.Unmarshal(body, &reg); err != nil || reg.User.ID == "" || reg.User.EmailVerified || !reg.VerificationEmailSent {
		t.Fatalf("registration %s (%v), want an unverified user and a mail sent", body, err)
	}
	m := box.next()
	if !strings.Contains(m.to, "linda@example.test") {
		t.Fatalf("verification mail to %q", m.to)
	}
	link := m.link(t, "/realms/acme/verify-email")

	// Before the link: the right password is refused, with a way to get a new link.
	b := e.browser()
	b.open("", rp.config.AuthCodeURL("state-1", oidc.Nonce("n1")))
	b.fill("Username or email", "linda")
	b.fill("Password", browserPassword)
	b.click("login-unverified", "Sign in")
	if h := b.heading(); h != "Sign in" || len(b.alerts()) == 0 {
		t.Fatalf("unverified sign-in: heading %q, alerts %q; want the login page with an alert", h, b.alerts())
	}
	b.mustShow("Send a new verification link")

	b.open("email-verified", link)
	if h := b.heading(); h != "Email verified" {
		t.Fatalf("verification page heading %q; page:\n%s", h, b.text())
	}
	b.mustShow("Your email address is verified.")
	var user struct {
		EmailVerified bool `json:"emailVerified"`
	}
	e.admin(http.MethodGet, "/admin/realms/acme/users/"+reg.User.ID, nil, http.StatusOK, &user)
	if !user.EmailVerified {
		t.Fatalf("after the link the user's email is not verified")
	}

	// Now the same password signs in.
	b.open("", rp.config.AuthCodeURL("state-2", oidc.Nonce("n2")))
	b.fill("Username or email", "linda")
	b.fill("Password", browserPassword)
	b.click("", "Sign in")
	back := cb.wait()
	if back.Get("state") != "state-2" || back.Get("code") == "" {
		t.Fatalf("redirect back %v", back)
	}
	tok, err := rp.config.Exchange(t.Context(), back.Get("code"))
	if err != nil {
		t.Fatalf("exchange: %v", err)
	}
	if idt, claims := rp.verify(tok, "n2"); idt.Subject != reg.User.ID || claims["email_verified"] != true {
		t.Fatalf("ID token for %s with claims %v, want linda %s, verified", idt.Subject, claims, reg.User.ID)
	}
}

// TestBrowserFormActionRedirect: the login form's answer sends the
// browser back to the application, on another origin. Chromium holds the
// redirects that follow a form post to the page's form-action, so the
// pages must name the application's origin there.
func TestBrowserFormActionRedirect(t *testing.T) {
	e := newBrowserEnv(t)
	browserAcme(e)
	cb := newBrowserCallback(t)
	secret := browserCodeClient(e, cb, nil)
	rp := e.relyingParty("acme", "web", secret, cb.url, "openid")

	b := e.browser()
	b.open("", rp.config.AuthCodeURL("state-csp", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())))
	b.fill("Username or email", "alice")
	b.fill("Password", browserPassword)
	if _, err := b.tryClick("", "Sign in"); err != nil || !strings.HasPrefix(b.location(), cb.url+"?") {
		t.Fatalf("the sign-in did not reach the application: %v (page %s)", err, b.location())
	}
	if back := cb.wait(); back.Get("state") != "state-csp" || back.Get("code") == "" {
		t.Fatalf("redirect back %v", back)
	}
}

// TestBrowserA11yCheckFindsViolations: the accessibility check sees what
// it is for, on a page behind a CSP as strict as the hosted pages' (which
// the axe-core injection is not subject to).
func TestBrowserA11yCheckFindsViolations(t *testing.T) {
	e := newBrowserEnv(t)
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'nonce-x'; form-action 'self'; base-uri 'none'")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<!DOCTYPE html><html><head><title>Bad page</title></head><body><main>`+
			`<form method="post"><input id="q" name="q"><img src="data:image/gif;base64,R0lGODlhAQABAAAAACw="></form></main></body></html>`)
	}))
	t.Cleanup(bad.Close)

	b := e.browser()
	b.do("open the bad page", chromedp.Navigate(bad.URL))
	ctx, cancel := b.bounded()
	defer cancel()
	violations, err := axeViolations(ctx, e.axe)
	if err != nil {
		t.Fatalf("axe-core under a strict CSP: %v", err)
	}
	var ids []string
	for _, v := range violations {
		ids = append(ids, v.ID)
	}
	for _, want := range []string{"html-has-lang", "label", "image-alt"} {
		if !slices.Contains(ids, want) {
			t.Errorf("axe-core found %v on the bad page, not %s", ids, want)
		}
	}
}
