package setup_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/emersion/go-sasl"

	"github.com/idenplane/idenplane/app"
	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/apptest/realapp"
	"github.com/idenplane/idenplane/app/setup"
)

// The setup wizard through the whole server (realapp): its router, its
// middleware and a real database, with the token the server printed.

var printedToken = regexp.MustCompile(`/setup-wizard#token=([A-Za-z0-9_-]{43})\n`)

// wizard is a server at its first start, and the bootstrap token it
// printed.
type wizard struct {
	t     *testing.T
	srv   *apptest.Server
	out   *bytes.Buffer
	token string
}

func newWizard(t *testing.T, opts ...func(*app.Config)) *wizard {
	t.Helper()
	var out bytes.Buffer
	srv := realapp.New(t, append([]func(*app.Config){func(c *app.Config) { c.Stdout = &out }}, opts...)...)
	w := &wizard{t: t, srv: srv, out: &out}
	if m := printedToken.FindStringSubmatch(out.String()); m != nil {
		w.token = m[1]
	}
	return w
}

// call sends a request with the bootstrap token.
func (w *wizard) call(method, path string, body any) *apptest.Response {
	w.t.Helper()
	return w.srv.Request(method, setup.Path+path, body, "Authorization: Bearer "+w.token)
}

// must sends a request with the token and requires 200.
func (w *wizard) must(method, path string, body any) map[string]any {
	w.t.Helper()
	r := w.call(method, path, body)
	apptest.MustStatus(w.t, r, http.StatusOK)
	return r.Object(w.t)
}

// apiRoutes are the wizard's API endpoints, each with a body it takes.
var apiRoutes = []struct{ method, path string }{
	{http.MethodGet, "/status"}, {http.MethodGet, "/state"}, {http.MethodPost, "/admin-account"},
	{http.MethodPost, "/realm-settings"}, {http.MethodPost, "/smtp-config"}, {http.MethodPost, "/smtp/test"},
	{http.MethodPost, "/client"}, {http.MethodPost, "/sdk-generated"}, {http.MethodPost, "/complete"},
	{http.MethodPost, "/skip"}, {http.MethodPost, "/reset"},
}

func bodyFor(method string) any {
	if method == http.MethodPost {
		return map[string]any{}
	}
	return nil
}

// mustBeClosed checks that every endpoint, with the token or without,
// answers 410 gone.
func (w *wizard) mustBeClosed() {
	w.t.Helper()
	for _, rt := range apiRoutes {
		for _, h := range []string{"Authorization: Bearer " + w.token, "X-Setup-Token: " + w.token, ""} {
			r := w.srv.Request(rt.method, setup.Path+rt.path, bodyFor(rt.method), h)
			apptest.MustError(w.t, r, http.StatusGone, "gone", "")
		}
	}
	r := w.srv.Request(http.MethodGet, setup.Path, nil, "Accept: text/html")
	if r.Status != http.StatusGone || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
		w.t.Fatalf("the page of a closed wizard: %d %s", r.Status, r.Header.Get("Content-Type"))
	}
}

const strongPassword = "Tr0ub4dor&3-horse"

func TestSetupWizardFullSequence(t *testing.T) {
	w := newWizard(t)
	if w.token == "" {
		t.Fatalf("no bootstrap token printed: %q", w.out.String())
	}
	if !strings.Contains(w.out.String(), apptest.BaseURL+"/setup-wizard") {
		t.Fatalf("the wizard's address is not printed: %q", w.out.String())
	}
	// Without the token, status says only that setup is pending.
	r := w.srv.Request(http.MethodGet, setup.Path+"/status", nil)
	apptest.MustStatus(t, r, http.StatusOK)
	if got := strings.TrimSpace(string(r.Body)); got != `{"status":"pending"}` {
		t.Fatalf("status without the token: %s", got)
	}
	if got := w.must(http.MethodGet, "/status", nil); got["nextStep"] != "admin-account" {
		t.Fatalf("status with the token: %v", got)
	}

	// Step 1: a weak password is refused, clearly.
	for _, pw := range []string{"short1A!", "alllowercaseletters", "alice-Secret-123"} {
		r = w.call(http.MethodPost, "/admin-account", map[string]any{"username": "alice", "password": pw})
		apptest.MustError(t, r, http.StatusBadRequest, "invalid_field", "password")
	}
	if !strings.Contains(string(w.call(http.MethodPost, "/admin-account",
		map[string]any{"username": "alice", "password": "short"}).Body), "at least 12 characters") {
		t.Fatal("the weak password's refusal does not say what a strong one is")
	}
	apptest.MustError(t, w.call(http.MethodPost, "/admin-account", map[string]any{"password": strongPassword}),
		http.StatusBadRequest, "invalid_field", "username")
	apptest.MustError(t, w.call(http.MethodPost, "/admin-account", `{"username": "alice",`),
		http.StatusBadRequest, "invalid_json", "")
	apptest.MustError(t, w.call(http.MethodPost, "/admin-account", map[string]any{"username": "alice", "role": "x"}),
		http.StatusBadRequest, "unknown_field", "role")
	// Steps that need the realm say so.
	apptest.MustError(t, w.call(http.MethodPost, "/client", map[string]any{"clientId": "web", "type": "spa"}),
		http.StatusConflict, "invalid_state", "")

	st := w.must(http.MethodPost, "/admin-account", map[string]any{"username": "alice", "email": "alice@example.test",
		"password": strongPassword})
	if st["adminAccount"].(map[string]any)["username"] != "alice" || st["nextStep"] != "realm-settings" {
		t.Fatalf("state after the administrator: %v", st)
	}
	accounts, err := w.srv.Store.ListAdminAccounts(context.Background())
	if err != nil || len(accounts) != 1 || accounts[0].CreatedBy != "setup-wizard" {
		t.Fatalf("admin accounts %+v %v", accounts, err)
	}
	apptest.MustError(t, w.call(http.MethodPost, "/admin-account", map[string]any{"username": "bob", "password": strongPassword}),
		http.StatusConflict, "conflict", "username")

	// Step 2: the realm, as POST /admin/realms would make it.
	apptest.MustError(t, w.call(http.MethodPost, "/realm-settings", map[string]any{"name": "Not A Slug"}),
		http.StatusBadRequest, "invalid_field", "name")
	apptest.MustError(t, w.call(http.MethodPost, "/realm-settings", map[string]any{"name": "idenplane-admin"}),
		http.StatusBadRequest, "invalid_field", "name")
	w.must(http.MethodPost, "/realm-settings", map[string]any{"name": "acme", "displayName": "Acme Corp",
		"registrationAllowed": true})
	realm := w.srv.Realm("acme")
	if realm.DisplayName != "Acme Corp" || !realm.RegistrationAllowed {
		t.Fatalf("realm %+v", realm)
	}
	if r := w.srv.Admin(http.MethodGet, "/admin/realms/acme/client-scopes", nil); r.Status != http.StatusOK ||
		!strings.Contains(string(r.Body), `"openid"`) {
		t.Fatalf("the realm has not the standard scopes: %d %s", r.Status, r.Body)
	}

	// Step 3: the SMTP server, a real one on loopback.
	smtp := apptest.StartSMTPServer(t, &apptest.SMTPServer{User: "mailer", Password: "smtp-secret-pw", Mechs: []string{sasl.Plain}},
		nil, false, true)
	apptest.MustError(t, w.call(http.MethodPost, "/smtp-config", map[string]any{"host": smtp.Host}),
		http.StatusBadRequest, "invalid_field", "from")
	apptest.MustError(t, w.call(http.MethodPost, "/smtp-config", map[string]any{"host": smtp.Host, "from": "nope",
		"port": smtp.Port}), http.StatusBadRequest, "invalid_field", "from")
	apptest.MustError(t, w.call(http.MethodPost, "/smtp-config", map[string]any{"host": smtp.Host, "from": "noreply@acme.test",
		"security": "ssl3"}), http.StatusBadRequest, "invalid_field", "security")
	st = w.must(http.MethodPost, "/smtp-config", map[string]any{"host": smtp.Host, "port": smtp.Port, "from": "noreply@acme.test",
		"user": "mailer", "password": "smtp-secret-pw"})
	if cfg := st["smtpConfig"].(map[string]any); cfg["password"] != "**********" || cfg["security"] != "starttls" {
		t.Fatalf("smtp config shown as %v", cfg)
	}
	if got := w.srv.Realm("acme"); got.SMTPPassword != "smtp-secret-pw" || got.SMTPHost != smtp.Host {
		t.Fatalf("the realm's SMTP settings %+v", got)
	}
	// Sent back as shown, the password stays.
	w.must(http.MethodPost, "/smtp-config", map[string]any{"host": smtp.Host, "port": smtp.Port, "from": "noreply@acme.test",
		"user": "mailer", "password": "**********"})
	if got := w.srv.Realm("acme"); got.SMTPPassword != "smtp-secret-pw" {
		t.Fatalf("the redaction replaced the password: %q", got.SMTPPassword)
	}
	rec, err := w.srv.Store.GetSetupWizard(context.Background())
	if err != nil || strings.Contains(rec.Steps, "smtp-secret-pw") {
		t.Fatalf("the wizard's record holds the password: %v %s", err, rec.Steps)
	}

	// The test message goes through the server's own sender.
	apptest.MustError(t, w.call(http.MethodPost, "/smtp/test", map[string]any{}), http.StatusBadRequest, "invalid_field", "to")
	res := w.must(http.MethodPost, "/smtp/test", map[string]any{"to": "ops@example.test"})
	if res["success"] != true {
		t.Fatalf("smtp test %v", res)
	}
	msg := smtp.WaitFor(t, "ops@example.test")
	if msg.From != "noreply@acme.test" || !bytes.Contains(msg.Data, []byte("Subject: Test email from Acme Corp")) {
		t.Fatalf("received %s from %s", msg.Data, msg.From)
	}
	if users := smtp.AuthedUsers(); len(users) == 0 || users[0] != "mailer" {
		t.Fatalf("the server was not logged in to: %v", users)
	}

	// Step 4: the application; redirect URIs are checked as the admin API checks them.
	for _, bad := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"clientId": "shop", "type": "spa", "redirectUris": []string{"javascript:alert(1)"}}, "redirectUris[0]"},
		{map[string]any{"clientId": "shop", "type": "spa", "redirectUris": []string{"https://a.test/cb", "/relative"}}, "redirectUris[1]"},
		{map[string]any{"clientId": "shop", "type": "spa"}, "redirectUris"},
		{map[string]any{"clientId": "s", "type": "spa", "redirectUris": []string{"https://a.test/cb"}}, "clientId"},
	} {
		apptest.MustError(t, w.call(http.MethodPost, "/client", bad.body), http.StatusBadRequest, "invalid_field", bad.field)
	}
	apptest.MustError(t, w.call(http.MethodPost, "/client", map[string]any{"clientId": "shop", "type": "native",
		"redirectUris": []string{"https://shop.test/cb"}}), http.StatusBadRequest, "invalid_field", "type")
	spa := w.must(http.MethodPost, "/client", map[string]any{"clientId": "shop", "type": "spa",
		"redirectUris": []string{"https://shop.test/callback"}})
	if spa["clientType"] != "PUBLIC" || spa["secret"] != nil || spa["issuer"] != apptest.BaseURL+"/realms/acme" {
		t.Fatalf("spa client %v", spa)
	}
	sdk := w.must(http.MethodPost, "/sdk-generated", nil)
	snippets := sdk["snippets"].([]any)
	if len(snippets) != 3 {
		t.Fatalf("snippets %v", sdk)
	}
	for _, s := range snippets {
		code := s.(map[string]any)["code"].(string)
		for _, want := range []string{`"` + apptest.BaseURL + `/realms/acme"`, `"shop"`, `"https://shop.test/callback"`} {
			if !strings.Contains(code, want) {
				t.Errorf("%s snippet lacks %s:\n%s", s.(map[string]any)["language"], want, code)
			}
		}
	}
	if !strings.Contains(snippets[0].(map[string]any)["code"].(string), "oidc-client-ts") {
		t.Errorf("the spa's JavaScript is not oidc-client-ts")
	}

	// The same clientId again, as a web app: the client changes, and its
	// secret is shown once, never in the code.
	web := w.must(http.MethodPost, "/client", map[string]any{"clientId": "shop", "type": "web",
		"redirectUris": []string{"https://shop.test/auth/callback"}})
	secret, _ := web["secret"].(string)
	if web["clientType"] != "CONFIDENTIAL" || len(secret) < 32 {
		t.Fatalf("web client %v", web)
	}
	if r := w.srv.Admin(http.MethodGet, "/admin/realms/acme/clients/shop", nil); !strings.Contains(string(r.Body), `"CONFIDENTIAL"`) {
		t.Fatalf("the admin API's client %s", r.Body)
	}
	sdk = w.must(http.MethodPost, "/sdk-generated", nil)
	for _, s := range sdk["snippets"].([]any) {
		code := s.(map[string]any)["code"].(string)
		if strings.Contains(code, secret) || !strings.Contains(code, setup.SecretEnv) {
			t.Errorf("%s snippet of a confidential client: the secret must come from %s:\n%s",
				s.(map[string]any)["language"], setup.SecretEnv, code)
		}
	}
	state := w.must(http.MethodGet, "/state", nil)
	if strings.Contains(mustJSON(t, state), secret) || len(state["completedSteps"].([]any)) != 6 || state["nextStep"] != "" {
		t.Fatalf("state %v", state)
	}

	fin := w.must(http.MethodPost, "/complete", nil)
	if fin["status"] != "completed" || fin["consoleUrl"] != apptest.BaseURL+"/console/" || fin["realm"] != "acme" {
		t.Fatalf("complete %v", fin)
	}
	w.mustBeClosed()
	rec, _ = w.srv.Store.GetSetupWizard(context.Background())
	if rec.TokenHash != nil || rec.Status != "completed" {
		t.Fatalf("record after completion %+v", rec)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A missing or wrong token is a 401 with a Bearer challenge; too many
// wrong ones from one address a 429.
func TestSetupWizardWrongToken(t *testing.T) {
	w := newWizard(t)
	check := func(rt struct{ method, path string }, h string) {
		t.Helper()
		r := w.srv.Request(rt.method, setup.Path+rt.path, bodyFor(rt.method), h)
		apptest.MustError(t, r, http.StatusUnauthorized, "unauthorized", "")
		if !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("%s %s: no Bearer challenge", rt.method, rt.path)
		}
	}
	for _, rt := range apiRoutes {
		if rt.path != "/status" { // without a token it says only "pending"
			check(rt, "")
		}
	}
	// Wrong tokens count against the address: four routes, two each.
	for _, rt := range apiRoutes[:4] {
		check(rt, "Authorization: Bearer "+strings.Repeat("A", 43))
		check(rt, "X-Setup-Token: wrong")
	}
	// The token in its own header opens the wizard too.
	apptest.MustStatus(t, w.srv.Request(http.MethodGet, setup.Path+"/state", nil, "X-Setup-Token: "+w.token), http.StatusOK)
	// The wrong ones above count: the address is now held back, even with
	// the right token.
	var last *apptest.Response
	for range 12 {
		last = w.srv.Request(http.MethodGet, setup.Path+"/state", nil, "X-Setup-Token: wrong")
	}
	apptest.MustError(t, last, http.StatusTooManyRequests, "too_many_requests", "")
	if last.Header.Get("Retry-After") == "" {
		t.Fatal("429 without Retry-After")
	}
}

// Reset forgets the steps; what they made stays, and the token still
// opens the wizard.
func TestSetupWizardReset(t *testing.T) {
	w := newWizard(t)
	w.must(http.MethodPost, "/admin-account", map[string]any{"username": "alice", "password": strongPassword})
	w.must(http.MethodPost, "/realm-settings", map[string]any{"name": "acme"})
	st := w.must(http.MethodPost, "/reset", nil)
	if len(st["completedSteps"].([]any)) != 0 || st["nextStep"] != "admin-account" || st["adminAccount"] != nil {
		t.Fatalf("state after reset %v", st)
	}
	if w.srv.Realm("acme") == nil {
		t.Fatal("reset deleted the realm")
	}
	// The administrator stays: a second is refused, and complete needs
	// the realm again.
	apptest.MustError(t, w.call(http.MethodPost, "/admin-account", map[string]any{"username": "bob", "password": strongPassword}),
		http.StatusConflict, "conflict", "username")
	apptest.MustError(t, w.call(http.MethodPost, "/complete", nil), http.StatusConflict, "invalid_state", "")
	st = w.must(http.MethodPost, "/realm-settings", map[string]any{"name": "acme", "displayName": "Acme again"})
	if rs := st["realmSettings"].(map[string]any); rs["created"] != false || rs["displayName"] != "Acme again" {
		t.Fatalf("the realm step over an existing realm: %v", rs)
	}
	w.must(http.MethodPost, "/complete", nil)
	w.mustBeClosed()
}

// Skip closes the wizard before anything is made.
func TestSetupWizardSkip(t *testing.T) {
	w := newWizard(t)
	apptest.MustError(t, w.call(http.MethodPost, "/complete", nil), http.StatusConflict, "invalid_state", "")
	if fin := w.must(http.MethodPost, "/skip", nil); fin["status"] != "skipped" {
		t.Fatalf("skip %v", fin)
	}
	w.mustBeClosed()
	// A restart neither opens it again nor prints a token.
	var out bytes.Buffer
	realapp.Restart(t, w.srv, func(c *app.Config) { c.Stdout = &out })
	if strings.Contains(out.String(), "token") {
		t.Fatalf("a restart after skip printed %q", out.String())
	}
	w.mustBeClosed()
}

// The wizard's state is in the database: a restart keeps it and the
// token, and prints no new one.
func TestSetupWizardSurvivesRestart(t *testing.T) {
	w := newWizard(t)
	w.must(http.MethodPost, "/admin-account", map[string]any{"username": "alice", "password": strongPassword})
	w.must(http.MethodPost, "/realm-settings", map[string]any{"name": "acme"})
	before := w.must(http.MethodGet, "/state", nil)

	var out bytes.Buffer
	w2 := &wizard{t: t, srv: realapp.Restart(t, w.srv, func(c *app.Config) { c.Stdout = &out }), out: &out, token: w.token}
	if strings.Contains(out.String(), "token") {
		t.Fatalf("the restart printed %q", out.String())
	}
	if after := w2.must(http.MethodGet, "/state", nil); mustJSON(t, after) != mustJSON(t, before) {
		t.Fatalf("state before the restart %v, after %v", before, after)
	}
	w2.must(http.MethodPost, "/complete", nil)
	w2.mustBeClosed()
}

// The token is printed when no administrator exists, never when
// IDENPLANE_ADMIN_USER made one; it is stored only as its hash.
func TestSetupWizardTokenOnlyWithoutAdministrator(t *testing.T) {
	w := newWizard(t)
	if w.token == "" || strings.Count(w.out.String(), w.token) != 2 {
		t.Fatalf("printed %q", w.out.String())
	}
	rec, err := w.srv.Store.GetSetupWizard(context.Background())
	if err != nil || len(rec.TokenHash) != 32 {
		t.Fatalf("record %+v %v", rec, err)
	}
	for _, suffix := range []string{"", "-wal"} {
		data, err := os.ReadFile(w.srv.DBPath + suffix)
		if errors.Is(err, os.ErrNotExist) {
			continue
		} else if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(data, []byte(w.token)) {
			t.Fatalf("the token's text is stored in %s", w.srv.DBPath+suffix)
		}
	}

	env := newWizard(t, func(c *app.Config) { c.AdminUser, c.AdminPassword = "root", "Root-password-123" })
	if env.token != "" || strings.Contains(env.out.String(), "Setup") {
		t.Fatalf("printed with IDENPLANE_ADMIN_USER: %q", env.out.String())
	}
	env.mustBeClosed()
	if r := env.srv.Request(http.MethodGet, setup.Path+"/status", nil); !strings.Contains(string(r.Body), "administrator existed") {
		t.Fatalf("the 410 does not say why: %s", r.Body)
	}
	rec, err = env.srv.Store.GetSetupWizard(context.Background())
	if err != nil || rec.Status != "skipped" || rec.TokenHash != nil {
		t.Fatalf("record %+v %v", rec, err)
	}
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// The page's forms need the browser's CSRF token; the token the page
// takes is kept in a cookie of the wizard's path alone, out of scripts'
// reach and never sent by another site.
func TestSetupWizardPageCookies(t *testing.T) {
	w := newWizard(t)
	r := w.srv.Request(http.MethodGet, setup.Path, nil, "Accept: text/html")
	apptest.MustStatus(t, r, http.StatusOK)
	if csp := r.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self' 'nonce-") {
		t.Fatalf("the page's policy %q", csp)
	}
	csrfCookie := findCookie(t, r, "idenplane_setup_csrf")
	m := csrfField.FindSubmatch(r.Body)
	if m == nil {
		t.Fatalf("no CSRF field in %s", r.Body)
	}
	post := func(form url.Values, cookies ...string) *apptest.Response {
		return w.srv.Request(http.MethodPost, setup.Path, form.Encode(), "Content-Type: application/x-www-form-urlencoded",
			"Cookie: "+strings.Join(cookies, "; "))
	}
	form := url.Values{"action": {"token"}, "token": {w.token}}
	if r := post(form, "idenplane_setup_csrf="+csrfCookie.Value); r.Status != http.StatusForbidden {
		t.Fatalf("a form without its CSRF token: %d", r.Status)
	}
	form.Set("csrf", string(m[1]))
	if r := post(form, "idenplane_setup_csrf=another"); r.Status != http.StatusForbidden {
		t.Fatalf("a form with another browser's CSRF token: %d", r.Status)
	}
	form.Set("token", "wrong")
	if r := post(form, "idenplane_setup_csrf="+csrfCookie.Value); r.Status != http.StatusUnauthorized ||
		!strings.Contains(string(r.Body), "not the bootstrap token") {
		t.Fatalf("a wrong token: %d %s", r.Status, r.Body)
	}
	form.Set("token", w.token)
	r = post(form, "idenplane_setup_csrf="+csrfCookie.Value)
	if r.Status != http.StatusSeeOther || r.Header.Get("Location") != setup.Path {
		t.Fatalf("the token: %d %v", r.Status, r.Header)
	}
	session := findCookie(t, r, "idenplane_setup")
	if session.Value != w.token {
		t.Fatalf("session cookie %+v", session)
	}
	r = w.srv.Request(http.MethodGet, setup.Path, nil, "Cookie: idenplane_setup="+w.token)
	if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `id="username"`) {
		t.Fatalf("with the cookie the page shows %d %s", r.Status, r.Body)
	}
}

func findCookie(t *testing.T, r *apptest.Response, name string) *http.Cookie {
	t.Helper()
	for _, line := range r.Header.Values("Set-Cookie") {
		c, err := http.ParseSetCookie(line)
		if err != nil || c.Name != name {
			continue
		}
		if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != setup.Path {
			t.Fatalf("cookie %s: %q, want HttpOnly, SameSite=Strict, Path=%s", name, line, setup.Path)
		}
		return c
	}
	t.Fatalf("no cookie %s in %v", name, r.Header.Values("Set-Cookie"))
	return nil
}
