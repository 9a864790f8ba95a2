package app

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/oauth2"
)

// An SSO session begun with the password alone no longer answers once the
// realm requires a second factor of a user who has none: the browser
// signs in again and enrols after the password, and that session answers
// again. (A user who enrolled since is asked for the factor only:
// step_up_browser_test.go.)
func TestSSOSessionYieldsToRequiredEnrolment(t *testing.T) {
	e := newCodeflowEnv(t)
	cfg := e.oauth2Config("web", e.client("web", nil), "openid")
	e.totpAlign()
	b := e.browser()
	totpMustAMR(t, e.totpExchange(cfg, e.signIn(b, cfg.AuthCodeURL("pwd"), "alice")), "pwd")
	e.redirectedBack(b.follow(e.url, cfg.AuthCodeURL("sso"))) // the SSO session answers

	mustStatus(t, e.admin(http.MethodPatch, "/admin/realms/acme", map[string]any{"mfaRequired": true}), http.StatusOK)
	silent := cfg.AuthCodeURL("none", oauth2.SetAuthURLParam("prompt", "none"))
	if back := e.redirectedBack(b.follow(e.url, silent)); back.Get("error") != "login_required" {
		t.Fatalf("prompt=none: %v, want login_required", back)
	}
	p := b.follow(e.url, cfg.AuthCodeURL("again"))
	if p.status != http.StatusOK || !strings.HasSuffix(p.url.Path, pathLogin) {
		t.Fatalf("status %d at %s, want the login page", p.status, p.url)
	}
	// The password leads to the enrolment, which signs in with otp.
	p = b.submit(p, map[string]string{"username": "alice", "password": codeflowPassword})
	if p.status != http.StatusSeeOther || p.location(t).Path != "/realms/acme"+pathTOTP {
		t.Fatalf("after the password: %d %q, want the TOTP page", p.status, p.header.Get("Location"))
	}
	page := b.follow(e.url, p.location(t).String())
	secret := totpSecretShown(t, page)
	codes := b.submit(page, map[string]string{"code": totpTestCode(t, secret, e.clock.now())})
	totpMustAMR(t, e.totpExchange(cfg, e.redirectedBack(b.submit(codes, nil))), "pwd", "otp")
	// The session now has the factor: it answers again, silently.
	back := e.redirectedBack(b.follow(e.url, silent))
	if back.Get("code") == "" {
		t.Fatalf("prompt=none after the second factor: %v", back)
	}
	totpMustAMR(t, e.totpExchange(cfg, back), "pwd", "otp")
}

// totpSecretShown is the base32 key a TOTP setup page writes out.
func totpSecretShown(t *testing.T, page *codeflowPage) string {
	t.Helper()
	m := regexp.MustCompile(`<dd><code>([A-Z2-7 ]+)</code></dd>`).FindSubmatch(page.body)
	if m == nil {
		t.Fatalf("no key on the setup page: status %d body %s", page.status, page.body)
	}
	return strings.ReplaceAll(string(m[1]), " ", "")
}
