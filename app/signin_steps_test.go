package app

import (
	"net/http"
	"strings"
	"testing"
)

// A sign-in that owes both a second factor and a password change asks for
// the factor first, carries "remember me" through both steps, and ends
// authenticated by both.
func TestSecondFactorThenPasswordChange(t *testing.T) {
	e := newCodeflowEnv(t)
	secret := e.client("web", nil)
	cfg := e.oauth2Config("web", secret, "openid")
	e.totpAlign()
	totpSecret, _ := e.totpEnrol(e.aliceID)
	e.clock.advance(totpTestStep)
	mustStatus(t, e.admin(http.MethodPut, "/admin/realms/acme/users/"+e.aliceID,
		map[string]any{"requirePasswordReset": true}), http.StatusOK)

	b := e.browser()
	login := b.follow(e.url, cfg.AuthCodeURL("s"))
	p := b.submit(login, map[string]string{"username": "alice", "password": codeflowPassword, "rememberMe": "on"})
	if p.status != http.StatusSeeOther || p.location(t).Path != "/realms/acme/totp" {
		t.Fatalf("after the password: status %d Location %q, want the TOTP page", p.status, p.header.Get("Location"))
	}
	totpPage := b.follow(e.url, p.location(t).String())
	p = b.submit(totpPage, map[string]string{"code": totpTestCode(t, totpSecret, e.clock.now())})
	if p.status != http.StatusSeeOther || p.location(t).Path != "/realms/acme/change-password" {
		t.Fatalf("after the code: status %d Location %q, want the change-password page", p.status, p.header.Get("Location"))
	}
	if cookies := strings.Join(p.header.Values("Set-Cookie"), "; "); strings.Contains(cookies, ssoCookiePrefix) {
		t.Fatalf("SSO cookie before the password change: %s", cookies)
	}
	change := b.follow(e.url, p.location(t).String())
	newPassword := "a Different horse 42"
	p = b.submit(change, map[string]string{"password": newPassword, "confirm": newPassword})
	var sso *http.Cookie
	for _, c := range (&http.Response{Header: p.header}).Cookies() {
		if strings.HasPrefix(c.Name, ssoCookiePrefix) {
			sso = c
		}
	}
	if sso == nil || sso.MaxAge <= 0 && sso.Expires.IsZero() {
		t.Fatalf("SSO cookie %+v: want the persistent one remember me asked for", sso)
	}
	claims := e.totpExchange(cfg, e.redirectedBack(p))
	totpMustAMR(t, claims, "pwd", "otp")
}
