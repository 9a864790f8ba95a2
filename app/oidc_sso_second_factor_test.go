package app

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/oauth2"
)

// An SSO session begun with the password alone no longer answers once the
// user owes a second factor: enrolled TOTP since, or the realm requires
// one now. The browser signs in again, code and all, and that session
// answers again.
func TestSSOSessionYieldsToSecondFactor(t *testing.T) {
	for _, c := range []struct {
		name    string
		require func(e *codeflowEnv) string // makes alice owe a factor; the TOTP secret, if any
	}{
		{"TOTP enrolled since", func(e *codeflowEnv) string {
			secret, _ := e.totpEnrol(e.aliceID)
			return secret
		}},
		{"mfaRequired turned on", func(e *codeflowEnv) string {
			mustStatus(e.t, e.admin(http.MethodPatch, "/admin/realms/acme", map[string]any{"mfaRequired": true}), http.StatusOK)
			return ""
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newCodeflowEnv(t)
			cfg := e.oauth2Config("web", e.client("web", nil), "openid")
			e.totpAlign()
			b := e.browser()
			totpMustAMR(t, e.totpExchange(cfg, e.signIn(b, cfg.AuthCodeURL("pwd"), "alice")), "pwd")
			e.redirectedBack(b.follow(e.url, cfg.AuthCodeURL("sso"))) // the SSO session answers

			secret := c.require(e)
			e.clock.advance(totpTestStep) // past the enrolment's code

			silent := cfg.AuthCodeURL("none", oauth2.SetAuthURLParam("prompt", "none"))
			if back := e.redirectedBack(b.follow(e.url, silent)); back.Get("error") != "login_required" {
				t.Fatalf("prompt=none: %v, want login_required", back)
			}
			p := b.follow(e.url, cfg.AuthCodeURL("again"))
			if p.status != http.StatusOK || !strings.HasSuffix(p.url.Path, pathLogin) {
				t.Fatalf("status %d at %s, want the login page", p.status, p.url)
			}
			// The password leads to the second step, which signs in with otp.
			p = b.submit(p, map[string]string{"username": "alice", "password": codeflowPassword})
			if p.status != http.StatusSeeOther || p.location(t).Path != "/realms/acme"+pathTOTP {
				t.Fatalf("after the password: %d %q, want the TOTP page", p.status, p.header.Get("Location"))
			}
			page := b.follow(e.url, p.location(t).String())
			if secret != "" {
				p = b.submit(page, map[string]string{"code": totpTestCode(t, secret, e.clock.now())})
			} else {
				secret = totpSecretShown(t, page)
				codes := b.submit(page, map[string]string{"code": totpTestCode(t, secret, e.clock.now())})
				p = b.submit(codes, nil)
			}
			totpMustAMR(t, e.totpExchange(cfg, e.redirectedBack(p)), "pwd", "otp")
			// The session now has the factor: it answers again, silently.
			back := e.redirectedBack(b.follow(e.url, silent))
			if back.Get("code") == "" {
				t.Fatalf("prompt=none after the second factor: %v", back)
			}
			totpMustAMR(t, e.totpExchange(cfg, back), "pwd", "otp")
		})
	}
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
