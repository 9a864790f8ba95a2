package app

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/store"
)

// pluginsTestDir builds the example plugins into a --plugins-dir.
func pluginsTestDir(t *testing.T, examples ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, ex := range examples {
		apptest.BuildPlugin(t, dir, ex)
	}
	return dir
}

func withPlugins(dir string) func(*Config) { return func(c *Config) { c.PluginsDir = dir } }

// pluginRep is a plugin as GET /admin/plugins/{name} answers it.
func (s *testServer) pluginRep(t *testing.T, name string) map[string]any {
	t.Helper()
	r := s.admin(http.MethodGet, "/admin/plugins/"+name, nil)
	mustStatus(t, r, http.StatusOK)
	return r.object(t)
}

// A claims plugin's claims reach the access and ID tokens, which go-oidc
// verifies; the claims the issuer owns stay the issuer's.
func TestPluginClaimsInTokens(t *testing.T) {
	e := newCodeflowEnv(t, withPlugins(pluginsTestDir(t, "claims")))
	if err := e.store.SetUserAttributes(t.Context(), e.aliceID, map[string]string{"department": "research"}); err != nil {
		t.Fatal(err)
	}
	cfg := e.oauth2Config("app", e.client("app", nil), "openid", "profile")
	tok := e.codeflowTokens(cfg, e.browser())
	idt, claims := e.verifyIDToken(tok, "app", "")
	if claims["department"] != "research" || claims["plugin_seen"] != "acme/app/id" {
		t.Fatalf("ID token claims %v: no plugin claims", claims)
	}
	if idt.Subject != e.aliceID || idt.Issuer != e.issuer("acme") {
		t.Fatalf("the plugin overwrote sub or iss: %s %s", idt.Subject, idt.Issuer)
	}
	_, access := jwtParts(t, tok.AccessToken)
	if access["department"] != "research" || access["plugin_seen"] != "acme/app/access" || access["sub"] != e.aliceID ||
		access["iss"] != e.issuer("acme") || strings.Contains(access["scope"].(string), "admin") {
		t.Fatalf("access token claims %v", access)
	}
	rep := e.pluginRep(t, "claims")
	if rep["state"] != "enabled" || rep["calls"].(float64) != 2 || rep["errors"].(float64) != 0 {
		t.Fatalf("GET /admin/plugins/claims: %v", rep)
	}
	if list := e.admin(http.MethodGet, "/admin/plugins", nil); list.Status != http.StatusOK || !strings.Contains(string(list.Body), `"p99Ms"`) {
		t.Fatalf("list: %d %s", list.Status, list.Body)
	}
}

// A flow's plugin step asks the sign-in plugins: allowed, the sign-in
// goes on; denied, it ends with the server's refusal; asked for a second
// factor, the user's TOTP code is asked first.
func TestPluginSignInStep(t *testing.T) {
	e := newCodeflowEnv(t, withPlugins(pluginsTestDir(t, "gatekeeper")))
	cfg := e.oauth2Config("guarded", e.client("guarded", nil), "openid")
	e.flowTestBind("guarded", "password-then-plugins", flowTestPassword, map[string]any{"kind": "plugin", "requirement": "required"})
	setAttrs := func(attrs map[string]string) {
		if err := e.store.SetUserAttributes(t.Context(), e.aliceID, attrs); err != nil {
			t.Fatal(err)
		}
	}
	password := func(b *codeflowBrowser) *codeflowPage {
		page := e.flowTestStart(b, cfg.AuthCodeURL("s"))
		return b.submit(page, map[string]string{"username": "alice", "password": codeflowPassword})
	}

	// Allowed: straight back to the client.
	e.redirectedBack(password(e.browser()))

	// Denied.
	setAttrs(map[string]string{"blocked": "yes"})
	p := password(e.browser())
	if p.status == http.StatusSeeOther {
		p = e.browser().follow(e.url, p.location(t).String())
	}
	if p.status != http.StatusForbidden || !strings.Contains(string(p.body), "refused by a rule of this server") {
		t.Fatalf("a denied sign-in: status %d, body %s", p.status, p.body)
	}

	// A second factor: the TOTP page, then back.
	setAttrs(map[string]string{"blocked": "no", "risk": "high"})
	e.totpAlign()
	secret, _ := e.totpEnrol(e.aliceID)
	e.clock.advance(totpTestStep)
	b := e.browser()
	totpPage := e.flowTestNext(b, password(b))
	if f := totpPage.form(t); !f.fields.Has("code") {
		t.Fatalf("a second factor asked: the page is no TOTP form: %v", f.fields)
	}
	claims := e.totpExchange(cfg, e.redirectedBack(b.submit(totpPage, map[string]string{"code": totpTestCode(t, secret, e.clock.now())})))
	totpMustAMR(t, claims, "pwd", "otp")
	if rep := e.pluginRep(t, "gatekeeper"); rep["state"] != "enabled" || rep["errors"].(float64) != 0 {
		t.Fatalf("gatekeeper: %v", rep)
	}
}

// A sign-in plugin that fails denies (fail closed), and keeps denying
// once turned off for it, until an administrator decides.
func TestPluginSignInFailsClosed(t *testing.T) {
	dir := pluginsTestDir(t, "crash")
	if err := os.WriteFile(filepath.Join(dir, "crash", "plugin.json"),
		[]byte(`{"name":"crash","version":"1","hooks":["signin"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	e := newCodeflowEnv(t, withPlugins(dir))
	cfg := e.oauth2Config("guarded", e.client("guarded", nil), "openid")
	e.flowTestBind("guarded", "password-then-plugins", flowTestPassword, map[string]any{"kind": "plugin", "requirement": "required"})
	signIn := func() *codeflowPage {
		b := e.browser()
		return b.submit(e.flowTestStart(b, cfg.AuthCodeURL("s")), map[string]string{"username": "alice", "password": codeflowPassword})
	}
	for i := range 2 {
		if p := signIn(); p.status != http.StatusForbidden {
			t.Fatalf("sign-in %d with a crashing sign-in plugin: status %d, want 403", i+1, p.status)
		}
	}
	rep := e.pluginRep(t, "crash")
	if rep["state"] != "failed" || !strings.Contains(rep["reason"].(string), "panic: assignment to entry in nil map") || rep["calls"].(float64) != 1 {
		t.Fatalf("crash: %v", rep)
	}
	mustStatus(t, e.admin(http.MethodPost, "/admin/plugins/crash/disable", nil), http.StatusOK)
	e.redirectedBack(signIn())
}

// A plugin that loops forever, one that allocates without bound and one
// that panics are each stopped and turned off, lastingly, with the
// reason; the token is issued all the same, and the server answers on.
func TestPluginMisbehavingIsDisabled(t *testing.T) {
	s := newOIDCTestServer(t, withPlugins(pluginsTestDir(t, "claims", "loop", "hog", "crash")))
	s.createRealm("acme")
	secret := s.machineClient(t, "acme", "svc")
	token := func() map[string]any {
		t.Helper()
		r := s.request(http.MethodPost, "/realms/acme/protocol/openid-connect/token",
			"grant_type=client_credentials&client_id=svc&client_secret="+url.QueryEscape(secret),
			"Content-Type: application/x-www-form-urlencoded")
		mustStatus(t, r, http.StatusOK)
		_, claims := jwtParts(t, r.object(t)["access_token"].(string))
		return claims
	}
	if claims := token(); claims["plugin_seen"] != "acme/svc/access" {
		t.Fatalf("the well-behaved plugin's claims are missing: %v", claims)
	}
	for name, want := range map[string]string{
		"loop":  "exceeded its time limit of 200ms",
		"hog":   "ran out of its memory limit of 128 pages",
		"crash": "crashed: panic: assignment to entry in nil map",
	} {
		rep := s.pluginRep(t, name)
		if rep["state"] != "failed" || !strings.Contains(rep["reason"].(string), want) || rep["errors"].(float64) != 1 {
			t.Fatalf("%s: %v, want failed: %s", name, rep, want)
		}
		st, err := s.store.GetPluginState(t.Context(), name)
		if err != nil || st.State != "failed" {
			t.Fatalf("%s stored: %+v %v", name, st, err)
		}
	}
	// The server goes on, without calling them.
	if claims := token(); claims["plugin_seen"] != "acme/svc/access" {
		t.Fatalf("after the failures: %v", claims)
	}
	if rep := s.pluginRep(t, "loop"); rep["calls"].(float64) != 1 {
		t.Fatalf("a failed plugin was called again: %v", rep)
	}
	mustStatus(t, s.request(http.MethodGet, "/realms/acme/.well-known/openid-configuration", nil), http.StatusOK)
}

// Enable and disable last across a restart; a plugin refused at load is
// listed failed, cannot be enabled, and nothing of it is stored; a
// removed plugin is gone, and its state forgotten.
func TestPluginStateSurvivesRestart(t *testing.T) {
	dir := pluginsTestDir(t, "claims", "observer")
	if err := os.MkdirAll(filepath.Join(dir, "broken"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "broken", "plugin.json"),
		[]byte(`{"name":"broken","version":"1","hooks":["claims","teleport"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s := newTestServer(t, withPlugins(dir))
	broken := s.pluginRep(t, "broken")
	if broken["state"] != "failed" || !strings.Contains(broken["reason"].(string), `unknown hook "teleport" (known: event, claims, signin)`) {
		t.Fatalf("broken: %v", broken)
	}
	mustError(t, s.admin(http.MethodPost, "/admin/plugins/broken/enable", nil), http.StatusConflict, "conflict", "state")
	r := s.admin(http.MethodPost, "/admin/plugins/claims/disable", nil)
	mustStatus(t, r, http.StatusOK)
	if r.object(t)["state"] != "disabled" {
		t.Fatalf("disable: %s", r.Body)
	}
	mustStatus(t, s.admin(http.MethodPost, "/admin/plugins/observer/disable", nil), http.StatusOK)
	mustStatus(t, s.admin(http.MethodPost, "/admin/plugins/observer/enable", nil), http.StatusOK)
	mustError(t, s.admin(http.MethodGet, "/admin/plugins/nothing", nil), http.StatusNotFound, "not_found", "")
	if _, err := s.store.GetPluginState(t.Context(), "broken"); err == nil {
		t.Fatal("a refused plugin's state was stored")
	}

	// Restart: the store closed and opened again on the same file.
	if err := s.store.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(t.Context(), store.Config{Path: s.dbPath, Schema: testSchema(t), MasterKey: s.app.cfg.MasterKey})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	a, err := New(t.Context(), st, s.app.cfg)
	if err != nil {
		t.Fatal(err)
	}
	s2 := &testServer{t: t, app: a, store: st, handler: a.Handler(), dbPath: s.dbPath}
	for name, want := range map[string]string{"claims": "disabled", "observer": "enabled", "broken": "failed"} {
		if got := s2.pluginRep(t, name)["state"]; got != want {
			t.Fatalf("%s after the restart: %v, want %s", name, got, want)
		}
	}

	mustStatus(t, s2.admin(http.MethodDelete, "/admin/plugins/claims", nil), http.StatusNoContent)
	mustError(t, s2.admin(http.MethodGet, "/admin/plugins/claims", nil), http.StatusNotFound, "not_found", "")
	if _, err := st.GetPluginState(t.Context(), "claims"); err == nil {
		t.Fatal("a removed plugin's state is still stored")
	}
	if _, err := os.Stat(filepath.Join(dir, "claims", "plugin.wasm")); err != nil {
		t.Fatalf("removing a plugin deleted its files: %v", err)
	}
}
