package app

import (
	"net/http"
	"strings"
	"testing"
)

const changedPassword = "a changed passphrase"

// changePasswordRequire sets alice's password to codeflowPassword again,
// as a temporary one she must change at next login.
func changePasswordRequire(e *codeflowEnv) {
	e.t.Helper()
	mustStatus(e.t, e.admin(http.MethodPut, "/admin/realms/acme/users/"+e.aliceID+"/reset-password",
		map[string]any{"password": codeflowPassword, "temporary": true}), http.StatusNoContent)
}

// changePasswordStart signs alice in with her temporary password in b and
// returns the change-password page it is sent to.
func changePasswordStart(e *codeflowEnv, b *codeflowBrowser, authURL string, set map[string]string) *codeflowPage {
	e.t.Helper()
	page := b.follow(e.url, authURL)
	creds := map[string]string{"username": "alice", "password": codeflowPassword}
	for k, v := range set {
		creds[k] = v
	}
	p := b.submit(page, creds)
	if p.status != http.StatusSeeOther || p.location(e.t).Path != "/realms/acme"+pathChangePassword {
		e.t.Fatalf("sign-in with a password to change: status %d Location %q; want the change-password page",
			p.status, p.header.Get("Location"))
	}
	if c := loginSSOCookie(p); c != "" {
		e.t.Fatalf("the SSO cookie was set before the password changed: %q", c)
	}
	form := b.get(p.location(e.t).String())
	recoveryMustContain(e.t, form, http.StatusOK, "Change your password")
	return form
}

// A user who must change the password does so between the login and the
// code: no code and no SSO session before, the flag cleared, the other
// sessions ended and the old password dead after.
func TestChangePasswordRequired(t *testing.T) {
	e := newCodeflowEnv(t)
	secret := e.client("web", nil)
	cfg := e.oauth2Config("web", secret, "openid")
	mustStatus(t, e.admin(http.MethodPut, "/admin/realms/acme/events/config", map[string]any{"eventsEnabled": true}), http.StatusOK)
	elsewhere := e.browser()
	e.signIn(elsewhere, cfg.AuthCodeURL("s0"), "alice")
	changePasswordRequire(e)
	before := recoveryUser(e)

	b := e.browser()
	form := changePasswordStart(e, b, cfg.AuthCodeURL("s1"), nil)
	arID := form.form(t).fields.Get("authRequestID")
	if ar, err := e.store.GetAuthRequest(t.Context(), before.RealmID, arID); err != nil || ar.UserID != "" || ar.Done {
		t.Fatalf("request while the password waits: %+v, %v; want it unauthenticated", ar, err)
	}

	for _, tc := range []struct {
		name, password, confirm, field, message string
	}{
		{"mismatch", changedPassword, "something else entirely", "confirm", "The passwords do not match."},
		{"too short", "tiny7", "tiny7", "password", "The password needs at least 8 characters."},
		{"same as before", codeflowPassword, codeflowPassword, "password", "Choose a password different from your current one."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := b.submit(form, map[string]string{"password": tc.password, "confirm": tc.confirm})
			recoveryMustContain(t, p, http.StatusBadRequest, `aria-describedby="`+tc.field+`-error`)
			recoveryMustContain(t, p, http.StatusBadRequest, `<span id="`+tc.field+`-error" class="field-error">`+tc.message+`</span>`)
			if strings.Contains(string(p.body), tc.password) || strings.Contains(string(p.body), tc.confirm) {
				t.Fatal("the page echoes a password")
			}
			if u := recoveryUser(e); !u.RequirePasswordReset || u.PasswordHash != before.PasswordHash {
				t.Fatal("a refused form changed the password")
			}
		})
	}
	recoveryMustContain(t, form, http.StatusOK, "At least 8 characters.")

	// Forged or foreign posts and visits are refused.
	if p := b.submit(form, map[string]string{"password": changedPassword, "confirm": changedPassword, "csrf": "forged"}); p.status != http.StatusForbidden {
		t.Fatalf("forged CSRF token: %d", p.status)
	}
	other := e.browser()
	other.follow(e.url, cfg.AuthCodeURL("x"))
	for name, p := range map[string]*codeflowPage{
		"another browser's visit": other.get(form.url.String()),
		"a request with no step":  b.get(e.issuer("acme") + pathChangePassword + "?authRequestID=" + other.follow(e.url, cfg.AuthCodeURL("y")).form(t).fields.Get("authRequestID")),
		"no request":              b.get(e.issuer("acme") + pathChangePassword),
	} {
		if p.status != http.StatusBadRequest || !strings.Contains(string(p.body), "There is no sign-in waiting for a password change") {
			t.Fatalf("%s: status %d body %s", name, p.status, p.body)
		}
	}

	p := b.submit(form, map[string]string{"password": changedPassword, "confirm": changedPassword})
	back := e.redirectedBack(p)
	if back.Get("state") != "s1" {
		t.Fatalf("redirect %v", back)
	}
	if c := loginSSOCookie(p); c == "" || strings.Contains(c, "Max-Age") {
		t.Fatalf("SSO cookie %q, want a browser-session one", c)
	}
	tok, err := cfg.Exchange(t.Context(), back.Get("code"))
	if err != nil {
		t.Fatal(err)
	}
	if idt, _ := e.verifyIDToken(tok, "web", ""); idt.Subject != e.aliceID {
		t.Fatalf("signed in %s", idt.Subject)
	}
	after := recoveryUser(e)
	if after.RequirePasswordReset || after.PasswordHash == before.PasswordHash || after.PasswordChangedAt != e.clock.now().UnixMilli() {
		t.Fatalf("user after the change %+v", after)
	}
	if ev := registrationEvents(t, e.testServer, "UPDATE_PASSWORD"); len(ev) != 1 || ev[0].UserID != e.aliceID || ev[0].ClientID != "web" {
		t.Fatalf("UPDATE_PASSWORD events %+v", ev)
	}
	if ev := registrationEvents(t, e.testServer, "LOGIN"); len(ev) != 2 || ev[0].UserID != e.aliceID {
		t.Fatalf("LOGIN events %+v: want the first sign-in and this one", ev)
	}
	// Only this browser's new session is left.
	if sso, _ := codeflowSessionKinds(e.userSessions()); len(sso) != 1 {
		t.Fatalf("SSO sessions %+v, want the new one only", sso)
	}
	if p := elsewhere.follow(e.url, cfg.AuthCodeURL("s2")); p.status != http.StatusOK {
		t.Fatalf("the other browser is still signed in: %d", p.status)
	}
	// The step is used up.
	recoveryMustContain(t, b.submit(form, map[string]string{"password": "yet another passphrase", "confirm": "yet another passphrase"}),
		http.StatusBadRequest, "There is no sign-in waiting for a password change")

	// The old password is dead, the new one signs in straight away.
	fresh := e.browser()
	login := fresh.follow(e.url, cfg.AuthCodeURL("s3"))
	if p := fresh.submit(login, map[string]string{"username": "alice", "password": codeflowPassword}); p.status != http.StatusUnauthorized {
		t.Fatalf("old password: status %d", p.status)
	}
	e.redirectedBack(fresh.submit(login, map[string]string{"username": "alice", "password": changedPassword}))
}

// After the change the sign-in goes on as a login does: to the consent
// page when the client asks for it, with the "remember me" the login
// form was sent with.
func TestChangePasswordContinuesToConsent(t *testing.T) {
	e := newCodeflowEnv(t)
	secret := e.client("shop", map[string]any{"requireConsent": true})
	cfg := e.oauth2Config("shop", secret, "openid")
	changePasswordRequire(e)
	b := e.browser()
	form := changePasswordStart(e, b, cfg.AuthCodeURL("s"), map[string]string{"rememberMe": "true"})
	p := b.submit(form, map[string]string{"password": changedPassword, "confirm": changedPassword})
	if p.status != http.StatusSeeOther || p.location(t).Path != "/realms/acme"+pathConsent {
		t.Fatalf("after the change: status %d Location %q, want the consent page", p.status, p.header.Get("Location"))
	}
	if c := loginSSOCookie(p); !strings.Contains(c, "Max-Age=") {
		t.Fatalf("SSO cookie %q, want the persistent one remember me asked for", c)
	}
	consent := b.get(p.location(t).String())
	e.redirectedBack(b.submit(consent, map[string]string{"action": "approve"}))
}

// An account disabled while its password waits to change cannot finish.
func TestChangePasswordDisabledMeanwhile(t *testing.T) {
	e := newCodeflowEnv(t)
	secret := e.client("web", nil)
	cfg := e.oauth2Config("web", secret, "openid")
	changePasswordRequire(e)
	b := e.browser()
	form := changePasswordStart(e, b, cfg.AuthCodeURL("s"), nil)
	mustStatus(t, e.admin(http.MethodPatch, "/admin/realms/acme/users/"+e.aliceID, map[string]any{"enabled": false}), http.StatusOK)
	recoveryMustContain(t, b.submit(form, map[string]string{"password": changedPassword, "confirm": changedPassword}),
		http.StatusBadRequest, "There is no sign-in waiting for a password change")
	if u := recoveryUser(e); !u.RequirePasswordReset {
		t.Fatal("a disabled user changed the password")
	}
}
