package app

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app/recovery"
	"github.com/idenplane/idenplane/app/registration"
	"github.com/idenplane/idenplane/store"
)

const recoveryNewPassword = "a brand new passphrase"

// recoveryEnv is a codeflow server whose realm can send mail.
func recoveryEnv(t *testing.T, change func(r *store.Realm)) *codeflowEnv {
	t.Helper()
	e := newCodeflowEnv(t)
	e.setRealmEmail("acme", change)
	return e
}

// recoveryOutbox is the mails queued so far, oldest first.
func recoveryOutbox(e *codeflowEnv) []*store.OutboxEmail {
	e.t.Helper()
	due, err := e.store.DueEmails(context.Background(), e.app.now().Add(time.Hour).UnixMilli(), 100)
	if err != nil {
		e.t.Fatal(err)
	}
	return due
}

// recoveryLink finds the link to path in a mail's text body.
func recoveryLink(t *testing.T, e *codeflowEnv, body, path string) *url.URL {
	t.Helper()
	prefix := e.issuer("acme") + path + "?"
	i := strings.Index(body, prefix)
	if i < 0 {
		t.Fatalf("no %s link in %q", path, body)
	}
	u, err := url.Parse(strings.Fields(body[i:])[0])
	if err != nil || u.Query().Get("token") == "" {
		t.Fatalf("link in %q: %v", body, err)
	}
	return u
}

// recoveryHref is the target of the page's link whose text is text.
func recoveryHref(t *testing.T, p *codeflowPage, text string) string {
	t.Helper()
	m := regexp.MustCompile(`<a href="([^"]*)">` + regexp.QuoteMeta(text) + `</a>`).FindSubmatch(p.body)
	if m == nil {
		t.Fatalf("no link %q in %s", text, p.body)
	}
	return html.UnescapeString(string(m[1]))
}

func recoveryMustContain(t *testing.T, p *codeflowPage, status int, text string) {
	t.Helper()
	if p.status != status || !strings.Contains(string(p.body), text) {
		t.Fatalf("status %d, want %d with %q; body %s", p.status, status, text, p.body)
	}
}

func recoveryUser(e *codeflowEnv) *store.User {
	e.t.Helper()
	realm, err := e.store.GetRealm(context.Background(), "acme")
	if err != nil {
		e.t.Fatal(err)
	}
	u, err := e.store.GetUser(context.Background(), realm.ID, e.aliceID)
	if err != nil {
		e.t.Fatal(err)
	}
	return u
}

const recoveryInvalid = "This link is invalid or has expired."

// From the login page to a new password: the link mailed, a mismatch
// shown without echoing, the reset ending sessions, the old password
// refused and the new one accepted, the link good once.
func TestRecoveryResetPassword(t *testing.T) {
	e := recoveryEnv(t, func(*store.Realm) {})
	secret := e.client("web", nil)
	cfg := e.oauth2Config("web", secret, "openid")
	elsewhere := e.browser()
	e.signIn(elsewhere, cfg.AuthCodeURL("s0"), "alice")
	if n := len(e.userSessions()); n == 0 {
		t.Fatal("no session to end")
	}
	// A reset clears the flag, so the sign-in below needs no change step.
	u := recoveryUser(e)
	u.RequirePasswordReset = true
	if err := e.store.UpdateUser(context.Background(), u); err != nil {
		t.Fatal(err)
	}

	b := e.browser()
	login := b.follow(e.url, cfg.AuthCodeURL("s1"))
	recoveryMustContain(t, login, http.StatusOK, "Sign in")
	authRequestID := login.form(t).fields.Get("authRequestID")
	forgotURL := recoveryHref(t, login, "Forgot password?")
	forgot := b.get(forgotURL)
	recoveryMustContain(t, forgot, http.StatusOK, `<label for="login">`)
	if got := forgot.form(t).fields.Get("authRequestID"); got != authRequestID {
		t.Fatalf("forgot form carries authRequestID %q, want %q", got, authRequestID)
	}
	sent := b.submit(forgot, map[string]string{"login": "Alice@Example.test"})
	recoveryMustContain(t, sent, http.StatusOK, "If an account matches")
	mails := recoveryOutbox(e)
	if len(mails) != 1 || mails[0].Recipient != "alice@example.test" || mails[0].Subject != "Reset your password for Acme Corp" {
		t.Fatalf("outbox %+v", mails)
	}
	link := recoveryLink(t, e, mails[0].TextBody, recovery.PathResetPassword)
	if link.Query().Get("authRequestID") != authRequestID || !strings.Contains(mails[0].HTMLBody, html.EscapeString(link.String())) {
		t.Fatalf("link %s; html %s", link, mails[0].HTMLBody)
	}
	token := link.Query().Get("token")

	form := b.get(link.String())
	recoveryMustContain(t, form, http.StatusOK, "Choose a new password")
	if got := form.form(t).fields.Get("token"); got != token {
		t.Fatalf("form token %q", got)
	}
	// A mismatch comes back tied to its field, the passwords not echoed.
	bad := b.submit(form, map[string]string{"password": recoveryNewPassword, "confirm": "something else entirely"})
	recoveryMustContain(t, bad, http.StatusBadRequest, `aria-describedby="confirm-error"`)
	recoveryMustContain(t, bad, http.StatusBadRequest, `<span id="confirm-error" class="field-error">The passwords do not match.</span>`)
	if strings.Contains(string(bad.body), recoveryNewPassword) || strings.Contains(string(bad.body), "something else") {
		t.Fatal("the page echoes a password")
	}
	short := b.submit(form, map[string]string{"password": "short", "confirm": "short"})
	recoveryMustContain(t, short, http.StatusBadRequest, `<span id="password-error" class="field-error">The password needs at least 8 characters.</span>`)
	if u := recoveryUser(e); !u.RequirePasswordReset {
		t.Fatal("a refused form changed the password")
	}

	done := b.submit(bad, map[string]string{"password": recoveryNewPassword, "confirm": recoveryNewPassword})
	recoveryMustContain(t, done, http.StatusOK, "Your password has been changed.")
	if back := recoveryHref(t, done, "Back to sign in"); !strings.HasSuffix(back, pathLogin+"?authRequestID="+authRequestID) {
		t.Fatalf("link back %s", back)
	}
	u = recoveryUser(e)
	if u.RequirePasswordReset || u.PasswordChangedAt != e.app.now().UnixMilli() || !strings.HasPrefix(u.PasswordHash, "$argon2id$") {
		t.Fatalf("user after reset %+v", u)
	}
	if s := e.userSessions(); len(s) != 0 {
		t.Fatalf("sessions left: %+v", s)
	}
	if p := elsewhere.follow(e.url, cfg.AuthCodeURL("s2")); p.status != http.StatusOK {
		t.Fatalf("the other browser is still signed in: %d", p.status)
	}

	// The link works once.
	recoveryMustContain(t, b.get(link.String()), http.StatusBadRequest, recoveryInvalid)
	recoveryMustContain(t, b.submit(form, map[string]string{"password": "yet another passphrase", "confirm": "yet another passphrase"}),
		http.StatusBadRequest, recoveryInvalid)

	// Back at the login page: the old password is refused, the new one works.
	login = b.get(e.issuer("acme") + pathLogin + "?authRequestID=" + url.QueryEscape(authRequestID))
	if p := b.submit(login, map[string]string{"username": "alice", "password": codeflowPassword}); p.status != http.StatusUnauthorized {
		t.Fatalf("old password: status %d", p.status)
	}
	e.redirectedBack(b.submit(login, map[string]string{"username": "alice", "password": recoveryNewPassword}))
}

// An expired link is refused, as is a forged form, an unknown account
// gets the same page and no mail, and asking too often is a 429.
func TestRecoveryForgotPasswordRefusals(t *testing.T) {
	e := recoveryEnv(t, func(*store.Realm) {})
	forgotURL := e.issuer("acme") + recovery.PathForgotPassword
	b := e.browser()
	forgot := b.get(forgotURL)
	recoveryMustContain(t, forgot, http.StatusOK, "Forgot your password?")
	if strings.Contains(string(forgot.body), "Back to sign in") || forgot.form(t).fields.Has("authRequestID") {
		t.Fatal("a sign-in offered without one")
	}

	known := b.submit(forgot, map[string]string{"login": "alice"})
	unknown := b.submit(forgot, map[string]string{"login": "nobody@example.test"})
	if known.status != http.StatusOK || unknown.status != http.StatusOK || string(known.body) != string(unknown.body) {
		t.Fatalf("known %d, unknown %d:\n%s\n%s", known.status, unknown.status, known.body, unknown.body)
	}
	if mails := recoveryOutbox(e); len(mails) != 1 || mails[0].Recipient != "alice@example.test" {
		t.Fatalf("outbox %+v", mails)
	}
	link := recoveryLink(t, e, recoveryOutbox(e)[0].TextBody, recovery.PathResetPassword)
	if link.Query().Has("authRequestID") {
		t.Fatalf("link %s", link)
	}
	empty := b.submit(forgot, map[string]string{"login": ""})
	recoveryMustContain(t, empty, http.StatusBadRequest, `aria-describedby="login-error"`)

	// Forged: no cookie, or a token of another form.
	recoveryMustContain(t, e.browser().post(forgotURL, url.Values{"login": {"alice"}, "csrf": {forgot.form(t).fields.Get("csrf")}}),
		http.StatusForbidden, "did not come from this site")
	recoveryMustContain(t, b.submit(forgot, map[string]string{"csrf": "forged"}), http.StatusForbidden, "did not come from this site")

	// Expired: an hour later the link is dead, without saying why.
	form := b.get(link.String())
	recoveryMustContain(t, form, http.StatusOK, "Choose a new password")
	e.clock.advance(resetPasswordTokenLifetime)
	recoveryMustContain(t, b.get(link.String()), http.StatusBadRequest, recoveryInvalid)
	recoveryMustContain(t, b.submit(form, map[string]string{"password": recoveryNewPassword, "confirm": recoveryNewPassword}),
		http.StatusBadRequest, recoveryInvalid)
	recoveryMustContain(t, b.get(forgotURL[:len(forgotURL)-len(recovery.PathForgotPassword)]+recovery.PathResetPassword+"?token=nope"),
		http.StatusBadRequest, recoveryInvalid)
	if u := recoveryUser(e); u.PasswordChangedAt != 0 {
		// createUser set it; the reset must not have moved it.
		if u.PasswordChangedAt >= e.app.now().UnixMilli() {
			t.Fatalf("password changed by an expired link: %+v", u)
		}
	}

	// Throttled per account, known or not, the same way; an hour on, the
	// windows are fresh.
	for _, login := range []string{"alice", "nobody@example.test"} {
		for range recovery.LimitPerAccount {
			if p := b.submit(forgot, map[string]string{"login": login}); p.status != http.StatusOK {
				t.Fatalf("%s: status %d before the limit", login, p.status)
			}
		}
		p := b.submit(forgot, map[string]string{"login": login})
		recoveryMustContain(t, p, http.StatusTooManyRequests, "Too many requests")
		if p.header.Get("Retry-After") == "" || p.header.Get("Retry-After") == "0" {
			t.Fatalf("Retry-After %q", p.header.Get("Retry-After"))
		}
	}
	if n := len(recoveryOutbox(e)); n != 1+recovery.LimitPerUser {
		t.Fatalf("%d mails queued, want %d", n, 1+recovery.LimitPerUser)
	}
	// Alice by her email: the same page, but her inbox has had its share.
	recoveryMustContain(t, b.submit(forgot, map[string]string{"login": "alice@example.test"}), http.StatusOK, "If an account matches")
	if n := len(recoveryOutbox(e)); n != 1+recovery.LimitPerUser {
		t.Fatalf("%d mails queued, want %d", n, 1+recovery.LimitPerUser)
	}
	// And per address.
	for i := 0; ; i++ {
		p := b.submit(forgot, map[string]string{"login": "someone" + strconv.Itoa(i)})
		if p.status == http.StatusTooManyRequests {
			if i != recovery.LimitPerIP-2*recovery.LimitPerAccount-1 { // 429s do not count
				t.Fatalf("address throttled after %d more requests", i)
			}
			break
		}
		if i > recovery.LimitPerIP {
			t.Fatal("no limit per address")
		}
	}
}

// A verification link verifies once; a used or unknown one says only
// that it is invalid.
func TestRecoveryVerifyEmail(t *testing.T) {
	e := recoveryEnv(t, func(*store.Realm) {})
	mustStatus(t, e.admin(http.MethodPost, "/admin/realms/acme/users/"+e.aliceID+"/send-verification-email", nil), http.StatusOK)
	link := recoveryLink(t, e, recoveryOutbox(e)[0].TextBody, pathVerifyEmail)
	b := e.browser()
	recoveryMustContain(t, b.get(e.issuer("acme")+pathVerifyEmail+"?token=nope"), http.StatusBadRequest, recoveryInvalid)
	recoveryMustContain(t, b.get(e.issuer("acme")+pathVerifyEmail), http.StatusBadRequest, recoveryInvalid)
	if recoveryUser(e).EmailVerified {
		t.Fatal("verified by a bad link")
	}
	recoveryMustContain(t, b.get(link.String()), http.StatusOK, "Your email address is verified.")
	if !recoveryUser(e).EmailVerified {
		t.Fatal("not verified")
	}
	recoveryMustContain(t, b.get(link.String()), http.StatusBadRequest, recoveryInvalid)
	recoveryMustContain(t, b.get(e.issuer("nope")+pathVerifyEmail+"?token="+link.Query().Get("token")), http.StatusNotFound, "no such realm")
}

// A realm requiring verified email refuses an unverified user after the
// right password only, offers a new link, and the password grant refuses
// too.
func TestRecoveryRequireEmailVerification(t *testing.T) {
	e := recoveryEnv(t, func(r *store.Realm) { r.RequireEmailVerification = true })
	secret := e.client("web", map[string]any{"grantTypes": []string{"authorization_code", "password"}})
	cfg := e.oauth2Config("web", secret, "openid")
	b := e.browser()
	login := b.follow(e.url, cfg.AuthCodeURL("s"))
	if p := b.submit(login, map[string]string{"username": "alice", "password": "wrong password!"}); p.status != http.StatusUnauthorized ||
		strings.Contains(string(p.body), "Verify") {
		t.Fatalf("wrong password: %d %s", p.status, p.body)
	}
	refused := b.submit(login, map[string]string{"username": "alice", "password": codeflowPassword})
	if refused.status != http.StatusForbidden || !strings.HasPrefix(codeflowAlert(refused), "Verify your email address before signing in") {
		t.Fatalf("status %d alert %q", refused.status, codeflowAlert(refused))
	}
	if s := e.userSessions(); len(s) != 0 {
		t.Fatalf("refused sign-in made sessions %+v", s)
	}
	forms := refused.forms(t)
	if len(forms) != 2 || !strings.HasSuffix(forms[1].action, recovery.PathResendVerification) {
		t.Fatalf("forms %+v", forms)
	}
	resendURL := forms[1].action
	resend := forms[1].fields

	status, body := e.tokenRequest(url.Values{"grant_type": {"password"}, "username": {"alice"}, "password": {codeflowPassword}},
		codeflowBasic("web", secret))
	codeflowMustOAuthError(t, status, body, http.StatusBadRequest, "invalid_grant")

	// A forged resend: another user under the same token, or no token.
	bob := e.createUser("acme", map[string]any{"username": "bob", "email": "bob@example.test", "password": codeflowPassword})
	forged := url.Values{"authRequestID": resend["authRequestID"], "csrf": resend["csrf"], "userID": {bob["id"].(string)}}
	recoveryMustContain(t, b.post(resendURL, forged), http.StatusForbidden, "did not come from this site")
	recoveryMustContain(t, e.browser().post(resendURL, resend), http.StatusForbidden, "did not come from this site")
	if n := len(recoveryOutbox(e)); n != 0 {
		t.Fatalf("%d mails after forged resends", n)
	}

	for i := range recovery.LimitPerUser {
		p := b.post(resendURL, resend)
		if p.status != http.StatusOK || codeflowAlert(p) != "We sent a new verification link to your email address. Follow it, then sign in." {
			t.Fatalf("resend %d: %d %q", i, p.status, codeflowAlert(p))
		}
	}
	p := b.post(resendURL, resend)
	if p.status != http.StatusTooManyRequests || p.header.Get("Retry-After") == "" {
		t.Fatalf("resend over the limit: %d %q", p.status, p.header.Get("Retry-After"))
	}
	mails := recoveryOutbox(e)
	if len(mails) != recovery.LimitPerUser || mails[0].Subject != "Verify your email address for Acme Corp" {
		t.Fatalf("outbox %+v", mails)
	}
	// Only the newest link works.
	recoveryMustContain(t, b.get(recoveryLink(t, e, mails[0].TextBody, pathVerifyEmail).String()), http.StatusBadRequest, recoveryInvalid)
	recoveryMustContain(t, b.get(recoveryLink(t, e, mails[len(mails)-1].TextBody, pathVerifyEmail).String()), http.StatusOK, "verified")

	e.redirectedBack(b.submit(login, map[string]string{"username": "alice", "password": codeflowPassword}))
	status, body = e.tokenRequest(url.Values{"grant_type": {"password"}, "username": {"alice"}, "password": {codeflowPassword}},
		codeflowBasic("web", secret))
	if status != http.StatusOK || body["access_token"] == nil {
		t.Fatalf("password grant after verifying: %d %v", status, body)
	}
}

// Resending verification mail from the login page is limited per address
// as well as per user: past the address's limit, another user's first
// request is refused too.
func TestRecoveryResendThrottlePerAddress(t *testing.T) {
	e := recoveryEnv(t, func(r *store.Realm) { r.RequireEmailVerification = true })
	secret := e.client("web", nil)
	cfg := e.oauth2Config("web", secret, "openid")
	b := e.browser()
	login := b.follow(e.url, cfg.AuthCodeURL("s"))
	// resendForm is the resend form shown to a user refused for an
	// unverified address.
	resendForm := func(username string) (string, url.Values) {
		e.createUser("acme", map[string]any{"username": username, "email": username + "@example.test", "password": codeflowPassword})
		forms := b.submit(login, map[string]string{"username": username, "password": codeflowPassword}).forms(t)
		if len(forms) != 2 {
			t.Fatalf("%s: %d forms, want the resend one too", username, len(forms))
		}
		return forms[1].action, forms[1].fields
	}
	sent := 0
	for i := 0; sent < registration.ResendLimitPerIP; i++ {
		action, fields := resendForm("user" + strconv.Itoa(i))
		for j := 0; j < recovery.LimitPerUser && sent < registration.ResendLimitPerIP; j++ {
			if p := b.post(action, fields); p.status != http.StatusOK {
				t.Fatalf("resend %d: status %d", sent, p.status)
			}
			sent++
		}
	}
	action, fields := resendForm("latecomer")
	p := b.post(action, fields)
	if p.status != http.StatusTooManyRequests || p.header.Get("Retry-After") == "" ||
		codeflowAlert(p) != "Too many verification emails were requested. Try again later." {
		t.Fatalf("over the address's limit: status %d Retry-After %q alert %q", p.status, p.header.Get("Retry-After"), codeflowAlert(p))
	}
	if n := len(recoveryOutbox(e)); n != registration.ResendLimitPerIP {
		t.Fatalf("%d mails queued, want %d", n, registration.ResendLimitPerIP)
	}
}
