package app

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app/account"
	"github.com/idenplane/idenplane/app/identity"
)

func TestAccountPagesSignIn(t *testing.T) {
	e := newAccountEnv(t)
	b := e.browser()

	// Signed out, the page sends the browser to sign in as account-console.
	p := b.get(e.url + accountTestHome)
	if p.status != http.StatusFound {
		t.Fatalf("signed out: status %d, want 302; body %s", p.status, p.body)
	}
	auth := p.location(t)
	q := auth.Query()
	if auth.Path != "/realms/acme/protocol/openid-connect/auth" || q.Get("client_id") != account.ConsoleClientID ||
		q.Get("redirect_uri") != e.url+accountTestHome || q.Get("response_type") != "code" ||
		q.Get("code_challenge_method") != "S256" || len(q.Get("code_challenge")) != 43 || len(q.Get("state")) < 32 {
		t.Fatalf("sent to %s", auth)
	}
	if again := b.get(e.url + accountTestHome).location(t).Query().Get("state"); again == q.Get("state") {
		t.Fatal("the state is not fresh")
	}
	// After the login page, back to the account page without code or state.
	p = e.signIn(b)
	mustPage(t, p, http.StatusOK, "alice", `action="/realms/acme/account/profile"`, `action="/realms/acme/account/password"`,
		`href="/realms/acme/account/totp-setup"`, `href="/realms/acme/account/data-export"`,
		`href="/realms/acme/account/delete-account"`, `href="`+e.url+`/realms/acme/protocol/openid-connect/logout"`)
	if p.url.RawQuery != "" {
		t.Fatalf("ended on %s, want the page without a query", p.url)
	}
	if ct := p.header.Get("Content-Security-Policy"); !strings.Contains(ct, "form-action 'self'") {
		t.Fatalf("CSP %q", ct)
	}
	// Signed in, the page shows at once; without the trailing slash too.
	mustPage(t, b.get(e.url+accountTestHome), http.StatusOK, "alice")
	mustPage(t, b.get(e.url+"/realms/acme/account"), http.StatusOK, "alice")
	if ev := hasEvent(e.loginEvents(e.aliceID), "LOGIN"); ev == nil || ev.ClientID != account.ConsoleClientID {
		t.Fatalf("LOGIN event %+v", ev)
	}

	// A page asked for signed out is the page shown after signing in.
	deep := e.browser()
	p = e.signInAt(deep, "/realms/acme/account/delete-account", "alice", codeflowPassword)
	mustPage(t, p, http.StatusOK, `action="/realms/acme/account/delete-account"`)
	if p.url.Path != "/realms/acme/account/delete-account" {
		t.Fatalf("ended on %s", p.url)
	}

	// Back from signing in with no SSO cookie (cookies refused): an
	// error page, not another round.
	p = e.browser().get(e.url + accountTestHome + "?code=abc&state=def")
	mustPage(t, p, http.StatusUnauthorized, "cookies")

	// A posted form of a browser signed out is sent to sign in too.
	p = e.browser().post(e.url+"/realms/acme/account/profile", url.Values{"firstName": {"x"}})
	if p.status != http.StatusSeeOther || p.location(t).Path != "/realms/acme/protocol/openid-connect/auth" {
		t.Fatalf("signed-out post: %d to %s", p.status, p.header.Get("Location"))
	}
}

func TestAccountPagesConsoleClient(t *testing.T) {
	e := newAccountEnv(t)
	r := e.admin(http.MethodGet, "/admin/realms/acme/clients/"+account.ConsoleClientID, nil)
	mustStatus(t, r, http.StatusOK)
	c := r.object(t)
	if c["clientType"] != identity.ClientPublic || c["requireConsent"] != false || c["enabled"] != true ||
		!jsonEqual(c["redirectUris"], []any{e.url + accountTestHome}) || !jsonEqual(c["grantTypes"], []any{identity.GrantAuthorizationCode}) {
		t.Fatalf("account-console %v", c)
	}
	// A realm without one (imported, or its admin deleted it) gets it back
	// when a browser first needs it.
	mustStatus(t, e.admin(http.MethodDelete, "/admin/realms/acme/clients/"+account.ConsoleClientID, nil), http.StatusNoContent)
	p := e.signIn(e.browser())
	mustPage(t, p, http.StatusOK, "alice")
	mustStatus(t, e.admin(http.MethodGet, "/admin/realms/acme/clients/"+account.ConsoleClientID, nil), http.StatusOK)
	// Disabled by the admin, the pages cannot be signed in to.
	mustStatus(t, e.admin(http.MethodPatch, "/admin/realms/acme/clients/"+account.ConsoleClientID, map[string]any{"enabled": false}), http.StatusOK)
	mustPage(t, e.browser().get(e.url+accountTestHome), http.StatusForbidden)
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func TestAccountPagesProfile(t *testing.T) {
	e := newAccountEnv(t)
	e.createUser("acme", map[string]any{"username": "bob", "email": "bob@example.test"})
	b := e.browser()
	p := e.signIn(b)

	// Errors come back at their field, keeping what was typed.
	p = accountSubmit(b, p, "/profile", map[string]string{"firstName": "Alicia", "email": "not-an-email"})
	mustPage(t, p, http.StatusBadRequest, `value="Alicia"`, `value="not-an-email"`, `aria-invalid="true"`,
		`id="email-error"`, `aria-describedby="email-error`, "Enter an email address")
	p = accountSubmit(b, p, "/profile", map[string]string{"email": "bob@example.test"})
	mustPage(t, p, http.StatusConflict, `id="email-error"`, "Another account uses this email address")
	p = accountSubmit(b, p, "/profile", map[string]string{"username": "mallory"})
	mustPage(t, p, http.StatusBadRequest, "The username cannot be changed")

	// Saved, the browser goes back to the page, which says so.
	p = accountSubmit(b, p, "/profile", map[string]string{"firstName": "Alicia", "email": "alice@example.test"})
	mustRedirectTo(t, p, http.StatusSeeOther, accountTestHome+"?done=profile")
	p = b.follow(e.url, p.location(t).String())
	mustPage(t, p, http.StatusOK, `value="Alicia"`, "Your profile was saved.")
	p = accountSubmit(b, p, "/profile", map[string]string{"email": "alice@wonderland.test"})
	mustRedirectTo(t, p, http.StatusSeeOther, accountTestHome+"?done=email")
	mustPage(t, b.follow(e.url, p.location(t).String()), http.StatusOK, "We sent a link to your new email address",
		"not verified yet")

	// In German when the browser asks for it.
	req, _ := http.NewRequest(http.MethodGet, e.url+accountTestHome, nil)
	req.Header.Set("Accept-Language", "de")
	mustPage(t, b.do(req), http.StatusOK, "Ihr Konto", "Profil speichern")

	// A notice comes only from the fixed list.
	mustPage(t, b.get(e.url+accountTestHome+"?done=%3Cscript%3E"), http.StatusOK)
}

func TestAccountPagesCSRF(t *testing.T) {
	e := newAccountEnv(t)
	b := e.browser()
	p := e.signIn(b)
	before := e.api(http.MethodGet, "/", e.token("alice", codeflowPassword).AccessToken, nil).object(t)
	for _, tc := range []struct {
		name string
		set  map[string]string
	}{
		{"no token", map[string]string{"csrf": ""}},
		{"wrong token", map[string]string{"csrf": "forged"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := map[string]string{"firstName": "Mallory"}
			for k, v := range tc.set {
				set[k] = v
			}
			mustPage(t, accountSubmit(b, p, "/profile", set), http.StatusForbidden)
		})
	}
	// Another signed-in browser's token is no good here: it is bound to
	// that browser and its SSO session.
	other := e.browser()
	op := e.signIn(other)
	token := accountForm(t, op, "/profile").fields.Get("csrf")
	mustPage(t, accountSubmit(b, p, "/profile", map[string]string{"firstName": "Mallory", "csrf": token}), http.StatusForbidden)
	for _, suffix := range []string{"/password"} {
		mustPage(t, accountSubmit(b, p, suffix, map[string]string{"csrf": "forged", "currentPassword": codeflowPassword,
			"newPassword": "another passphrase", "confirmation": "another passphrase"}), http.StatusForbidden)
	}
	after := e.api(http.MethodGet, "/", e.token("alice", codeflowPassword).AccessToken, nil).object(t)
	if after["firstName"] != before["firstName"] {
		t.Fatalf("a refused form changed the profile: %v", after)
	}
}

func TestAccountPagesPassword(t *testing.T) {
	e := newAccountEnv(t)
	const newPassword = "a brand new passphrase"
	b := e.browser()
	p := e.signIn(b)
	elsewhere := e.browser()
	e.signIn(elsewhere)
	tok := e.token("alice", codeflowPassword)

	p = accountSubmit(b, p, "/password", map[string]string{"currentPassword": "wrong password!", "newPassword": newPassword,
		"confirmation": newPassword})
	mustPage(t, p, http.StatusBadRequest, `id="currentPassword-error"`, "The current password is not correct")
	p = accountSubmit(b, p, "/password", map[string]string{"currentPassword": codeflowPassword, "newPassword": newPassword,
		"confirmation": "something else"})
	mustPage(t, p, http.StatusBadRequest, `id="confirmation-error"`, "The passwords do not match")
	p = accountSubmit(b, p, "/password", map[string]string{"currentPassword": codeflowPassword, "newPassword": "short",
		"confirmation": "short"})
	mustPage(t, p, http.StatusBadRequest, `id="newPassword-error"`, "at least 8 characters")
	for _, secret := range []string{codeflowPassword, newPassword, "wrong password!", "something else"} {
		if strings.Contains(string(p.body), secret) {
			t.Fatalf("the page repeats a password %q", secret)
		}
	}

	p = accountSubmit(b, p, "/password", map[string]string{"currentPassword": codeflowPassword, "newPassword": newPassword,
		"confirmation": newPassword})
	mustRedirectTo(t, p, http.StatusSeeOther, accountTestHome+"?done=password")
	mustPage(t, b.follow(e.url, p.location(t).String()), http.StatusOK, "Your password was changed")
	// The other browser and the token's session are signed out; this one is not.
	if p := elsewhere.get(e.url + accountTestHome); p.status != http.StatusFound {
		t.Fatalf("the other browser after the change: %d, want a redirect to sign in", p.status)
	}
	if _, err := e.refresh(e.cfg, tok.RefreshToken); err == nil {
		t.Fatal("the token's session survived the change")
	}
	mustPage(t, b.get(e.url+accountTestHome), http.StatusOK, "alice")
	e.token("alice", newPassword)

	// Too many wrong current passwords: 429 with Retry-After, on the page.
	p = b.get(e.url + accountTestHome)
	for range identity.LoginLimitPerUser {
		p = accountSubmit(b, p, "/password", map[string]string{"currentPassword": "wrong password!", "newPassword": "x yz abc def",
			"confirmation": "x yz abc def"})
	}
	p = accountSubmit(b, b.get(e.url+accountTestHome), "/password", map[string]string{"currentPassword": newPassword,
		"newPassword": "x yz abc def", "confirmation": "x yz abc def"})
	mustPage(t, p, http.StatusTooManyRequests, "Too many wrong passwords")
	if p.header.Get("Retry-After") == "" {
		t.Fatal("429 without Retry-After")
	}
}

func TestAccountPagesExport(t *testing.T) {
	e := newAccountEnv(t)
	secrets := accountExportFixture(t, e)
	b := e.browser()
	e.signIn(b)
	p := b.get(e.url + "/realms/acme/account/data-export")
	mustPage(t, p, http.StatusOK, `"path":"/staff/ops"`, `"format":"`+accountExportFormat+`"`)
	if cd := p.header.Get("Content-Disposition"); !strings.HasPrefix(cd, "attachment;") {
		t.Fatalf("Content-Disposition %q", cd)
	}
	for _, s := range secrets {
		if s != "" && strings.Contains(string(p.body), s) {
			t.Fatalf("the export holds a secret %q", s)
		}
	}
	// The cookies of the browser are not in it either.
	u, _ := url.Parse(e.url + accountTestHome)
	for _, c := range b.client.Jar.Cookies(u) {
		if strings.Contains(string(p.body), c.Value) {
			t.Fatalf("the export holds cookie %s", c.Name)
		}
	}
}

func TestAccountPagesDeletion(t *testing.T) {
	e := newAccountEnv(t)
	b := e.browser()
	e.signIn(b)
	const path = "/realms/acme/account/delete-account"
	p := b.get(e.url + path)
	mustPage(t, p, http.StatusOK, "7 days", `autocomplete="current-password"`, `href="/realms/acme/account/data-export"`)

	p = accountSubmit(b, p, "/delete-account", map[string]string{"currentPassword": ""})
	mustPage(t, p, http.StatusBadRequest, `id="currentPassword-error"`, "Enter your current password")
	p = accountSubmit(b, p, "/delete-account", map[string]string{"currentPassword": "wrong password!"})
	mustPage(t, p, http.StatusBadRequest, "The current password is not correct")
	mustPage(t, accountSubmit(b, p, "/delete-account", map[string]string{"currentPassword": codeflowPassword, "csrf": "forged"}),
		http.StatusForbidden)

	p = accountSubmit(b, p, "/delete-account", map[string]string{"currentPassword": codeflowPassword})
	mustRedirectTo(t, p, http.StatusSeeOther, path+"?done=scheduled")
	at := e.clock.now().Add(account.DeletionGrace).UTC()
	deleteAt := struct{ Text, RFC3339 string }{at.Format("2006-01-02 15:04 UTC"), at.Format(time.RFC3339)}
	p = b.follow(e.url, p.location(t).String())
	mustPage(t, p, http.StatusOK, "Your account is scheduled for deletion.", deleteAt.Text, `datetime="`+deleteAt.RFC3339+`"`,
		`action="/realms/acme/account/cancel-delete-account"`)
	mustPage(t, b.get(e.url+accountTestHome), http.StatusOK, "scheduled for deletion on", deleteAt.Text)
	tok := e.token("alice", codeflowPassword).AccessToken
	if got := e.api(http.MethodGet, "/delete-account", tok, nil).object(t); got["scheduled"] != true {
		t.Fatalf("API status %v", got)
	}

	mustPage(t, accountSubmit(b, p, "/cancel-delete-account", map[string]string{"csrf": "forged"}), http.StatusForbidden)
	p = accountSubmit(b, p, "/cancel-delete-account", nil)
	mustRedirectTo(t, p, http.StatusSeeOther, path+"?done=cancelled")
	mustPage(t, b.follow(e.url, p.location(t).String()), http.StatusOK, "The deletion was cancelled",
		`action="/realms/acme/account/delete-account"`)
	if got := e.api(http.MethodGet, "/delete-account", tok, nil).object(t); got["scheduled"] != false {
		t.Fatalf("API status after cancel %v", got)
	}
}
