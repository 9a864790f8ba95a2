package app

import (
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/recovery"
	"github.com/idenplane/idenplane/store"
)

// codeflowAlert is the message of a page's alert, "" for none.
func codeflowAlert(p *codeflowPage) string {
	m := regexp.MustCompile(`<p role="alert"[^>]*>([^<]*)</p>`).FindSubmatch(p.body)
	if m == nil {
		return ""
	}
	return string(m[1])
}

// Wrong credentials bring the form back with one message and status,
// whatever was wrong, a disabled account's right password included: only
// the LOGIN_ERROR event tells the causes apart.
func TestLoginPageCredentials(t *testing.T) {
	e := newCodeflowEnv(t)
	secret := e.client("web", nil)
	cfg := e.oauth2Config("web", secret, "openid")
	mustStatus(t, e.admin(http.MethodPut, "/admin/realms/acme/events/config", map[string]any{"eventsEnabled": true}), http.StatusOK)
	bob := e.createUser("acme", map[string]any{"username": "bob", "email": "bob@example.test", "password": codeflowPassword, "enabled": false})
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
		{"disabled user", "bob", codeflowPassword, http.StatusUnauthorized, invalid},
		{"disabled user by email", "BOB@example.test", codeflowPassword, http.StatusUnauthorized, invalid},
		{"unknown email", "nobody@example.test", codeflowPassword, http.StatusUnauthorized, invalid},
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
	// The events name the causes the page keeps to itself.
	reasons := map[string]int{}
	for _, ev := range registrationEvents(t, e.testServer, "LOGIN_ERROR") {
		reasons[ev.Error]++
		if ev.Error == "user_disabled" && ev.UserID != bob["id"] {
			t.Errorf("user_disabled event for user %q, want bob's", ev.UserID)
		}
	}
	if reasons["user_disabled"] != 2 || reasons["invalid_user_credentials"] != 5 {
		t.Fatalf("LOGIN_ERROR reasons %v", reasons)
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
	for range identity.LoginLimitPerUser {
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

// loginSSOCookie is the Set-Cookie line of the SSO cookie of acme in p's
// response, "" for none.
func loginSSOCookie(p *codeflowPage) string {
	for _, c := range p.header.Values("Set-Cookie") {
		if strings.HasPrefix(c, ssoCookieName(&store.Realm{Name: "acme"})+"=") {
			return c
		}
	}
	return ""
}

// A user signs in by email as well as by username, in any case; failures
// under either name count against the one account.
func TestLoginByEmail(t *testing.T) {
	e := newCodeflowEnv(t)
	secret := e.client("web", nil)
	cfg := e.oauth2Config("web", secret, "openid")
	for _, login := range []string{"alice@example.test", "ALICE@Example.TEST", " alice "} {
		back := e.signIn(e.browser(), cfg.AuthCodeURL("s"), login)
		tok, err := cfg.Exchange(t.Context(), back.Get("code"))
		if err != nil {
			t.Fatal(err)
		}
		if idt, _ := e.verifyIDToken(tok, "web", ""); idt.Subject != e.aliceID {
			t.Fatalf("%q signed in %s, want alice", login, idt.Subject)
		}
	}

	// A username that is someone's address does not capture that person's
	// sign-in: the address names its owner.
	e.createUser("acme", map[string]any{"username": "bob@example.test", "password": "bob's own passphrase"})
	e.createUser("acme", map[string]any{"username": "bob", "email": "bob@example.test", "password": codeflowPassword})
	b := e.browser()
	page := b.follow(e.url, cfg.AuthCodeURL("s"))
	if p := b.submit(page, map[string]string{"username": "bob@example.test", "password": "bob's own passphrase"}); p.status != http.StatusUnauthorized {
		t.Fatalf("the address's owner comes first: status %d", p.status)
	}
	e.redirectedBack(b.submit(page, map[string]string{"username": "bob@example.test", "password": codeflowPassword}))

	b = e.browser()
	page = b.follow(e.url, cfg.AuthCodeURL("s"))
	for i := range identity.LoginLimitPerUser {
		login := "alice"
		if i%2 == 1 {
			login = "Alice@example.test"
		}
		if p := b.submit(page, map[string]string{"username": login, "password": "wrong password!"}); p.status != http.StatusUnauthorized {
			t.Fatalf("failure %d: status %d", i, p.status)
		}
	}
	if p := b.submit(page, map[string]string{"username": "alice", "password": codeflowPassword}); p.status != http.StatusTooManyRequests {
		t.Fatalf("after %d failures by username and email: status %d, want 429", identity.LoginLimitPerUser, p.status)
	}
}

// Without "remember me" the SSO cookie lasts as long as the browser; with
// it, until the SSO session's maximum lifespan. Either way the session
// itself idles out and ends as usual.
func TestLoginRememberMe(t *testing.T) {
	e := newCodeflowEnv(t)
	secret := e.client("web", nil)
	cfg := e.oauth2Config("web", secret, "openid")
	mustStatus(t, e.admin(http.MethodPut, "/admin/realms/acme/events/config", map[string]any{"eventsEnabled": true}), http.StatusOK)
	creds := map[string]string{"username": "alice", "password": codeflowPassword}

	b := e.browser()
	page := b.follow(e.url, cfg.AuthCodeURL("s"))
	if !strings.Contains(string(page.body), `<input id="rememberMe" name="rememberMe" type="checkbox" value="true">`) ||
		!strings.Contains(string(page.body), `<label for="rememberMe">Remember me</label>`) {
		t.Fatalf("no labelled remember-me box: %s", page.body)
	}
	if page.form(t).fields.Has("rememberMe") {
		t.Fatal("the box is ticked by default")
	}
	p := b.submit(page, creds)
	e.redirectedBack(p)
	session := loginSSOCookie(p)
	if session == "" || strings.Contains(session, "Max-Age") || strings.Contains(session, "Expires") {
		t.Fatalf("cookie without remember me: %q, want a browser-session cookie", session)
	}

	// Signing in again in the same browser with the box ticked keeps the
	// session and makes its cookie persistent.
	started := e.clock.now()
	e.clock.advance(time.Minute)
	page = b.follow(e.url, cfg.AuthCodeURL("s")+"&prompt=login")
	with := map[string]string{"rememberMe": "true"}
	maps.Copy(with, creds)
	p = b.submit(page, with)
	e.redirectedBack(p)
	remembered := loginSSOCookie(p)
	wantMaxAge := fmt.Sprintf("Max-Age=%d", int((ssoMaxLifespan - time.Minute).Seconds()))
	if !strings.Contains(remembered, wantMaxAge) ||
		!strings.Contains(remembered, "Expires="+started.Add(ssoMaxLifespan).UTC().Format(http.TimeFormat)) {
		t.Fatalf("cookie with remember me: %q, want %s, expiring with the session", remembered, wantMaxAge)
	}
	if cookieValue(session) != cookieValue(remembered) {
		t.Fatal("signing in again replaced the browser's session")
	}
	if sso, _ := codeflowSessionKinds(e.userSessions()); len(sso) != 1 {
		t.Fatalf("SSO sessions %+v, want one", sso)
	}
	logins := registrationEvents(t, e.testServer, "LOGIN")
	if len(logins) != 2 || logins[0].Details["remember_me"] != "true" || logins[1].Details["remember_me"] != "" {
		t.Fatalf("LOGIN events %+v: want remember_me on the second only", logins)
	}

	// Unticked again, the cookie goes back to the browser session.
	page = b.follow(e.url, cfg.AuthCodeURL("s")+"&prompt=login")
	p = b.submit(page, creds)
	e.redirectedBack(p)
	if c := loginSSOCookie(p); strings.Contains(c, "Max-Age") || cookieValue(c) != cookieValue(session) {
		t.Fatalf("cookie %q after signing in without remember me", c)
	}
}

func cookieValue(setCookie string) string {
	v, _, _ := strings.Cut(setCookie, ";")
	return v
}

// The login page links to registration only when the realm takes it,
// which a new realm does not (as in Keycloak) until an admin turns it on.
func TestLoginPageLinks(t *testing.T) {
	e := newCodeflowEnv(t)
	secret := e.client("web", nil)
	cfg := e.oauth2Config("web", secret, "openid")
	page := e.browser().follow(e.url, cfg.AuthCodeURL("s"))
	if strings.Contains(string(page.body), "Create an account") {
		t.Fatal("a new realm links to registration")
	}
	if got := recoveryHref(t, page, "Forgot password?"); got != e.issuer("acme")+recovery.PathForgotPassword+"?authRequestID="+page.form(t).fields.Get("authRequestID") {
		t.Fatalf("Forgot password? links to %s", got)
	}
	mustStatus(t, e.admin(http.MethodPatch, "/admin/realms/acme", map[string]any{"registrationAllowed": true}), http.StatusOK)
	page = e.browser().follow(e.url, cfg.AuthCodeURL("s"))
	arID := page.form(t).fields.Get("authRequestID")
	for text, path := range map[string]string{"Forgot password?": recovery.PathForgotPassword, "Create an account": pathRegister} {
		if got := recoveryHref(t, page, text); got != e.issuer("acme")+path+"?authRequestID="+arID {
			t.Fatalf("%s links to %s", text, got)
		}
	}
}

// Failed sign-ins are throttled per address too: past the limit, the
// address's guesses wait, and a wrong password reads as an invented name,
// but another account's right password still signs in
// (signin_guard_test.go has the rest).
func TestLoginPageThrottlePerAddress(t *testing.T) {
	e := newCodeflowEnv(t)
	fastGuardedAnswers(t, e.app)
	secret := e.client("web", nil)
	cfg := e.oauth2Config("web", secret, "openid")
	b := e.browser()
	page := b.follow(e.url, cfg.AuthCodeURL("s"))
	for i := range identity.LoginLimitPerIP {
		p := b.submit(page, map[string]string{"username": fmt.Sprintf("nobody%d", i), "password": "wrong password!"})
		if p.status != http.StatusUnauthorized {
			t.Fatalf("failure %d: status %d", i, p.status)
		}
	}
	for _, creds := range []map[string]string{
		{"username": "nobody-else", "password": "wrong password!"},
		{"username": "alice", "password": "wrong password!"},
	} {
		p := b.submit(page, creds)
		if p.status != http.StatusTooManyRequests || p.header.Get("Retry-After") == "" ||
			codeflowAlert(p) != "Too many failed sign-ins. Try again later." {
			t.Fatalf("%s over the address's limit: status %d Retry-After %q alert %q", creds["username"], p.status,
				p.header.Get("Retry-After"), codeflowAlert(p))
		}
	}
	e.redirectedBack(b.submit(page, map[string]string{"username": "alice", "password": codeflowPassword}))
}

// The login page opened without a pending sign-in (a bookmark, a typed
// address) signs in to the account pages, as Keycloak does.
func TestLoginPageWithoutRequest(t *testing.T) {
	e := newAccountEnv(t)
	b := e.browser()
	p := e.signInAt(b, "/realms/acme/login", "alice", codeflowPassword)
	mustPage(t, p, http.StatusOK, "alice", `action="/realms/acme/account/profile"`)
	if p.url.Path != accountTestHome || p.url.RawQuery != "" {
		t.Fatalf("ended on %s, want the account home", p.url)
	}
	// Signed in already: straight to the account home.
	p = b.follow(e.url, e.url+"/realms/acme/login")
	mustPage(t, p, http.StatusOK, "alice", `action="/realms/acme/account/profile"`)
	if p.url.Path != accountTestHome {
		t.Fatalf("signed in, ended on %s", p.url)
	}
	// A sign-in that names a request still needs a live one.
	for _, id := range []string{"", "nope"} {
		p := e.browser().get(e.url + "/realms/acme/login?authRequestID=" + id)
		mustPage(t, p, http.StatusBadRequest, "expired")
	}
}
