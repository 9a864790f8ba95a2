package app

import (
	"net/http"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app/recovery"
	"github.com/idenplane/idenplane/store"
)

// The realm's whole password policy, history included, on every page and
// API that sets a password, with the page naming each unmet rule at the
// password field.

const (
	// policyPassword and policyNext meet strictPolicy.
	policyPassword = "Compliant-Pass1"
	policyNext     = "Brand-New-Pass2"
	policyNeeds    = "The password needs at least 10 characters, an uppercase letter, a digit."
	policyHistory  = "The password must not be one of your last 3 passwords."
)

// strictPolicy gives acme a policy: 10 characters with an uppercase letter
// and a digit, the last 3 passwords remembered. alice's password becomes
// policyPassword; her first one is in her history.
func (e *codeflowEnv) strictPolicy(temporary bool) {
	e.t.Helper()
	e.changeRealm(func(r *store.Realm) {
		r.PasswordMinLength, r.PasswordRequireUppercase, r.PasswordRequireDigits, r.PasswordHistoryCount = 10, true, true, 3
	})
	mustStatus(e.t, e.admin(http.MethodPut, "/admin/realms/acme/users/"+e.aliceID+"/reset-password",
		map[string]any{"password": policyPassword, "temporary": temporary}), http.StatusNoContent)
}

// mustRememberPassword checks that alice's history holds password: the
// admin API refuses it as one of her last passwords.
func (e *codeflowEnv) mustRememberPassword(password string) {
	e.t.Helper()
	r := e.admin(http.MethodPut, "/admin/realms/acme/users/"+e.aliceID+"/reset-password", map[string]any{"password": password})
	mustError(e.t, r, http.StatusBadRequest, "invalid_field", "password")
	if got := r.object(e.t)["error_description"]; got != "password: must not be one of the last 3 passwords" {
		e.t.Fatalf("reset to %q: %v, want it refused as a remembered password", password, got)
	}
}

// mustPasswordError checks a re-rendered form: 400 with message tied to
// field.
func mustPasswordError(t *testing.T, p *codeflowPage, field, message string) {
	t.Helper()
	recoveryMustContain(t, p, http.StatusBadRequest, `aria-describedby="`+field+`-error`)
	recoveryMustContain(t, p, http.StatusBadRequest, `<span id="`+field+`-error" class="field-error">`+message+`</span>`)
}

func TestPasswordPolicyChangePasswordPage(t *testing.T) {
	e := newCodeflowEnv(t)
	cfg := e.oauth2Config("web", e.client("web", nil), "openid")
	e.strictPolicy(true)
	b := e.browser()
	form := changePasswordStart(e, b, cfg.AuthCodeURL("s"), map[string]string{"password": policyPassword})
	for _, c := range []struct{ name, password, message string }{
		{"weak", "weak", policyNeeds},
		{"the username", "alice", policyNeeds + " The password must not be your username."},
		{"the current password", policyPassword, policyHistory},
	} {
		p := b.submit(form, map[string]string{"password": c.password, "confirm": c.password})
		mustPasswordError(t, p, "password", c.message)
	}
	e.redirectedBack(b.submit(form, map[string]string{"password": policyNext, "confirm": policyNext}))
	// The change went through the history: the password it replaced is
	// remembered.
	e.mustRememberPassword(policyPassword)
}

func TestPasswordPolicyResetPage(t *testing.T) {
	e := recoveryEnv(t, func(*store.Realm) {})
	e.strictPolicy(false)
	b := e.browser()
	forgot := b.get(e.issuer("acme") + recovery.PathForgotPassword)
	recoveryMustContain(t, b.submit(forgot, map[string]string{"login": "alice"}), http.StatusOK, "If an account matches")
	mails := recoveryOutbox(e)
	if len(mails) != 1 {
		t.Fatalf("outbox %+v", mails)
	}
	form := b.get(recoveryLink(t, e, mails[0].TextBody, recovery.PathResetPassword).String())
	mustPasswordError(t, b.submit(form, map[string]string{"password": "weak", "confirm": "weak"}), "password", policyNeeds)
	mustPasswordError(t, b.submit(form, map[string]string{"password": codeflowPassword, "confirm": codeflowPassword}),
		"password", "The password needs an uppercase letter, a digit.")
	mustPasswordError(t, b.submit(form, map[string]string{"password": policyPassword, "confirm": policyPassword}),
		"password", policyHistory)
	recoveryMustContain(t, b.submit(form, map[string]string{"password": policyNext, "confirm": policyNext}),
		http.StatusOK, "Your password has been changed.")
	e.mustRememberPassword(policyPassword)
}

func TestPasswordPolicyRegistration(t *testing.T) {
	e := newCodeflowEnv(t)
	mustStatus(t, e.admin(http.MethodPatch, "/admin/realms/acme", map[string]any{"registrationAllowed": true}), http.StatusOK)
	e.strictPolicy(false)
	b := e.browser()
	page := b.get(e.issuer("acme") + pathRegister)
	const email = "Nina.Newcomer1@example.test"
	p := b.submit(page, map[string]string{"username": "nina", "email": email, "password": email, "confirm": email})
	mustPasswordError(t, p, "password", "The password must not be your email address.")
	p = b.submit(page, map[string]string{"username": "nina", "email": "nina@example.test", "password": "weak", "confirm": "weak"})
	mustPasswordError(t, p, "password", policyNeeds)

	// The API names the rules in English.
	for _, c := range []struct{ username, password, want string }{
		{"newcomer-2024x", "Newcomer-2024X", "password: must not be the username"},
		{"newcomer", "weak", "password: must be at least 10 characters; must contain an uppercase letter, a digit"},
	} {
		r := e.request(http.MethodPost, "/realms/acme/registration/register", map[string]any{"username": c.username,
			"email": c.username + "@example.test", "password": c.password})
		mustError(t, r, http.StatusBadRequest, "invalid_field", "password")
		if got := r.object(t)["error_description"]; got != c.want {
			t.Errorf("register %s: %v, want %q", c.username, got, c.want)
		}
	}
	mustStatus(t, e.request(http.MethodPost, "/realms/acme/registration/register", map[string]any{"username": "newcomer",
		"email": "newcomer@example.test", "password": policyNext}), http.StatusCreated)
}

func TestPasswordPolicyAccount(t *testing.T) {
	e := newAccountEnv(t)
	e.strictPolicy(false)
	tok := e.token("alice", policyPassword).AccessToken
	change := func(current, next string) *testResponse {
		return e.api(http.MethodPost, "/password", tok, map[string]any{"currentPassword": current, "newPassword": next,
			"confirmation": next})
	}
	mustStatus(t, change(policyPassword, policyNext), http.StatusNoContent)
	e.mustRememberPassword(policyPassword)
	for _, c := range []struct{ current, next, field, want string }{
		{policyNext, "weak", "newPassword", policyNeeds},
		{policyNext, policyPassword, "newPassword", policyHistory},
		// Without the current password, the history says nothing.
		{"wrong password", policyPassword, "currentPassword", "The current password is not correct."},
	} {
		r := change(c.current, c.next)
		mustError(t, r, http.StatusBadRequest, "invalid_field", c.field)
		if got := r.object(t)["error_description"]; got != c.want {
			t.Errorf("change to %q: %v, want %q", c.next, got, c.want)
		}
	}

	b := e.browser()
	page := e.signInAt(b, accountTestHome, "alice", policyNext)
	for _, c := range []struct{ next, want string }{{"weak", policyNeeds}, {policyPassword, policyHistory}} {
		p := accountSubmit(b, page, "/password", map[string]string{"currentPassword": policyNext, "newPassword": c.next,
			"confirmation": c.next})
		mustPasswordError(t, p, "newPassword", c.want)
	}
}

// passwordMaxAgeDays: an expired password must change at the next
// sign-in, and the SSO session no longer spares it.
func TestPasswordExpiryForcesChange(t *testing.T) {
	e := newCodeflowEnv(t)
	cfg := e.oauth2Config("web", e.client("web", nil), "openid")
	e.changeRealm(func(r *store.Realm) { r.PasswordMaxAgeDays = 30 })
	e.signIn(e.browser(), cfg.AuthCodeURL("young"), "alice")

	e.clock.advance(30*24*time.Hour - time.Minute)
	b := e.browser()
	e.signIn(b, cfg.AuthCodeURL("a minute before"), "alice")
	e.clock.advance(time.Minute)
	// The browser's SSO session, begun a minute ago, would answer at once.
	p := b.follow(e.url, cfg.AuthCodeURL("expired"))
	recoveryMustContain(t, p, http.StatusOK, `name="password"`)
	b2 := e.browser()
	form := changePasswordStart(e, b2, cfg.AuthCodeURL("expired"), nil)
	e.redirectedBack(b2.submit(form, map[string]string{"password": changedPassword, "confirm": changedPassword}))
	// The new password is young again.
	b3 := e.browser()
	login := b3.follow(e.url, cfg.AuthCodeURL("changed"))
	e.redirectedBack(b3.submit(login, map[string]string{"username": "alice", "password": changedPassword}))
}
