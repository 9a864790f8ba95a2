package app

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// codeflowAlert is the message of a page's alert, "" for none.
func codeflowAlert(p *codeflowPage) string {
	m := regexp.MustCompile(`<p role="alert">([^<]*)</p>`).FindSubmatch(p.body)
	if m == nil {
		return ""
	}
	return string(m[1])
}

// Wrong credentials bring the form back with one message, whatever was
// wrong; a disabled account is only named to whoever knows its password.
func TestLoginPageCredentials(t *testing.T) {
	e := newCodeflowEnv(t)
	secret := e.client("web", nil)
	cfg := e.oauth2Config("web", secret, "openid")
	e.createUser("acme", map[string]any{"username": "bob", "password": codeflowPassword, "enabled": false})
	sa := e.admin(http.MethodPost, "/admin/realms/acme/clients", map[string]any{"clientId": "robot",
		"grantTypes": []string{"client_credentials"}})
	mustStatus(t, sa, http.StatusCreated)
	b := e.browser()
	page := b.follow(e.url, cfg.AuthCodeURL("s"))

	const invalid = "Invalid username or password."
	for _, tc := range []struct {
		name, username, password string
		status                   int
		alert                    string
	}{
		{"wrong password", "alice", "wrong password!", http.StatusUnauthorized, invalid},
		{"unknown user", "nobody", codeflowPassword, http.StatusUnauthorized, invalid},
		{"disabled user, wrong password", "bob", "wrong password!", http.StatusUnauthorized, invalid},
		{"service account", "service-account-robot", codeflowPassword, http.StatusUnauthorized, invalid},
		{"disabled user", "bob", codeflowPassword, http.StatusForbidden, "This account is disabled."},
		{"no password", "alice", "", http.StatusBadRequest, "Enter your username and password."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := b.submit(page, map[string]string{"username": tc.username, "password": tc.password})
			if p.status != tc.status || codeflowAlert(p) != tc.alert {
				t.Fatalf("status %d alert %q, want %d %q", p.status, codeflowAlert(p), tc.status, tc.alert)
			}
			if f := p.form(t); f.fields.Get("username") != tc.username || f.fields.Get("password") != "" {
				t.Fatalf("form comes back with %v: want the username kept and the password not", f.fields)
			}
			if p.header.Get("Set-Cookie") != "" && strings.Contains(p.header.Get("Set-Cookie"), "idenplane_sso_") {
				t.Fatal("a failed login set the SSO cookie")
			}
		})
	}
	// The form still works after the failures.
	e.redirectedBack(b.submit(page, map[string]string{"username": "alice", "password": codeflowPassword}))
	// Its request is answered: the same form cannot sign in again.
	if p := b.submit(page, map[string]string{"username": "alice", "password": codeflowPassword}); p.status != http.StatusBadRequest {
		t.Fatalf("resubmitting an answered request's form: %d", p.status)
	}
}

// Failed sign-ins are throttled per user: once over the limit even the
// right password waits.
func TestLoginPageThrottle(t *testing.T) {
	e := newCodeflowEnv(t)
	secret := e.client("web", nil)
	cfg := e.oauth2Config("web", secret, "openid")
	b := e.browser()
	page := b.follow(e.url, cfg.AuthCodeURL("s"))
	for range loginLimitPerUser {
		if p := b.submit(page, map[string]string{"username": "alice", "password": "wrong password!"}); p.status != http.StatusUnauthorized {
			t.Fatalf("failed login: %d", p.status)
		}
	}
	p := b.submit(page, map[string]string{"username": "alice", "password": codeflowPassword})
	if p.status != http.StatusTooManyRequests || p.header.Get("Retry-After") == "" {
		t.Fatalf("login over the limit: status %d Retry-After %q", p.status, p.header.Get("Retry-After"))
	}
	e.clock.advance(16 * 60e9) // the window is 15 minutes
	e.redirectedBack(b.submit(page, map[string]string{"username": "alice", "password": codeflowPassword}))
}

// The login form takes posts only with the CSRF token of the browser's
// own cookie, for a request still pending.
func TestLoginPageForms(t *testing.T) {
	e := newCodeflowEnv(t)
	secret := e.client("web", nil)
	cfg := e.oauth2Config("web", secret, "openid")
	b := e.browser()
	page := b.follow(e.url, cfg.AuthCodeURL("s"))
	creds := map[string]string{"username": "alice", "password": codeflowPassword}
	with := func(extra map[string]string) map[string]string {
		m := map[string]string{}
		for k, v := range creds {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}

	// An attacker's own form, token and all, posted from the victim's browser.
	attacker := e.browser()
	attackerPage := attacker.follow(e.url, cfg.AuthCodeURL("s"))
	if p := b.submit(attackerPage, creds); p.status != http.StatusForbidden {
		t.Fatalf("another browser's form: %d, want 403", p.status)
	}
	if p := b.submit(page, with(map[string]string{"csrf": ""})); p.status != http.StatusForbidden {
		t.Fatalf("no CSRF token: %d", p.status)
	}
	if p := b.submit(page, with(map[string]string{"csrf": "forged"})); p.status != http.StatusForbidden {
		t.Fatalf("forged CSRF token: %d", p.status)
	}
	// Without the CSRF cookie (a cross-site post carries the form only).
	if p := e.browser().submit(page, creds); p.status != http.StatusForbidden {
		t.Fatalf("post without the CSRF cookie: %d", p.status)
	}
	for name, id := range map[string]string{"unknown request": "nope", "no request": ""} {
		p := b.submit(page, with(map[string]string{"authRequestID": id}))
		if p.status != http.StatusBadRequest || !strings.Contains(string(p.body), "expired") {
			t.Fatalf("%s: %d %s", name, p.status, p.body)
		}
	}
	if p := b.get(e.url + "/realms/acme/login?authRequestID=nope"); p.status != http.StatusBadRequest {
		t.Fatalf("login page of an unknown request: %d", p.status)
	}
	// A request expires after 30 minutes.
	e.clock.advance(31 * 60e9)
	if p := b.submit(page, creds); p.status != http.StatusBadRequest {
		t.Fatalf("expired request: %d", p.status)
	}
}

// Cookies of a server behind https are Secure.
func TestLoginCookiesSecureOverHTTPS(t *testing.T) {
	s := newTestServer(t, func(c *Config) { c.BaseURL = "https://id.example.test" })
	s.createRealm("acme")
	mustStatus(t, s.admin(http.MethodPost, "/admin/realms/acme/clients", map[string]any{"clientId": "web",
		"redirectUris": []string{codeflowRedirect}}), http.StatusCreated)
	r := s.request(http.MethodGet, "/realms/acme/protocol/openid-connect/auth?"+url.Values{"client_id": {"web"},
		"response_type": {"code"}, "redirect_uri": {codeflowRedirect}, "scope": {"openid"}}.Encode(), nil)
	login, err := url.Parse(r.Header.Get("Location"))
	if err != nil || r.Status != http.StatusFound || login.Host != "id.example.test" {
		t.Fatalf("authorization: %d %q", r.Status, r.Header.Get("Location"))
	}
	r = s.request(http.MethodGet, login.RequestURI(), nil)
	mustStatus(t, r, http.StatusOK)
	c := r.Header.Get("Set-Cookie")
	for _, attr := range []string{"idenplane_csrf=", "Secure", "HttpOnly", "SameSite=Lax", "Path=/realms/acme/"} {
		if !strings.Contains(c, attr) {
			t.Errorf("cookie %q lacks %s", c, attr)
		}
	}
}
