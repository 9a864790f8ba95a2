package app

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/maxmind/mmdbwriter"
	"github.com/maxmind/mmdbwriter/mmdbtype"
)

// The two cities of the test GeoIP database, 9,700 km apart.
const (
	riskParis = "198.51.100.7"
	riskTokyo = "203.0.113.9"
)

// riskGeoDB writes a City database placing riskParis's /24 in Paris and
// riskTokyo's in Tokyo.
func riskGeoDB(t testing.TB) string {
	t.Helper()
	w, err := mmdbwriter.New(mmdbwriter.Options{DatabaseType: "GeoIP2-City", IncludeReservedNetworks: true, RecordSize: 24})
	if err != nil {
		t.Fatal(err)
	}
	city := func(cidr, country string, lat, lon float64) {
		_, n, err := net.ParseCIDR(cidr)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Insert(n, mmdbtype.Map{"country": mmdbtype.Map{"iso_code": mmdbtype.String(country)},
			"location": mmdbtype.Map{"latitude": mmdbtype.Float64(lat), "longitude": mmdbtype.Float64(lon)}}); err != nil {
			t.Fatal(err)
		}
	}
	city("198.51.100.0/24", "FR", 48.85, 2.35)
	city("203.0.113.0/24", "JP", 35.68, 139.69)
	path := filepath.Join(t.TempDir(), "city.mmdb")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := w.WriteTo(f); err != nil {
		t.Fatal(err)
	}
	return path
}

// riskEnv is a server with realm acme, alice, a GeoIP database, the test
// peers trusted as proxies, and a client "web" bound to a flow of a
// password; the clock starts at 09:00 UTC.
type riskEnv struct {
	*codeflowEnv
}

func newRiskEnv(t *testing.T, opts ...func(*Config)) *riskEnv {
	t.Helper()
	clock := &codeflowClock{}
	clock.ns.Store(time.Date(2026, 5, 4, 9, 0, 0, 0, time.UTC).UnixNano())
	geo := riskGeoDB(t)
	s := newOIDCTestServer(t, append([]func(*Config){func(c *Config) {
		c.Now = clock.now
		c.GeoIPDB = geo
		c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("192.0.2.1/32")}
	}}, opts...)...)
	s.createRealm("acme")
	alice := s.createUser("acme", map[string]any{"username": "alice", "email": "alice@example.test",
		"firstName": "Alice", "lastName": "Liddell", "password": codeflowPassword})
	e := &riskEnv{codeflowEnv: &codeflowEnv{oidcTestServer: s, t: t, clock: clock, aliceID: alice["id"].(string)}}
	mustStatus(t, s.admin(http.MethodPost, "/admin/realms/acme/clients", map[string]any{"clientId": "web", "clientType": "PUBLIC",
		"redirectUris": []string{codeflowRedirect}, "grantTypes": []string{"authorization_code", "password"}}), http.StatusCreated)
	e.flowTestBind("web", "password", flowTestPassword)
	return e
}

// riskBrowser is a browser whose requests come, through the trusted
// proxy, from the address in from.
type riskBrowser struct {
	*codeflowBrowser
	from *string
}

type forwardedFor struct {
	rt   http.RoundTripper
	from *string
}

func (f forwardedFor) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Forwarded-For", *f.from)
	r.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0")
	return f.rt.RoundTrip(r)
}

func (e *riskEnv) browserAt(from string) *riskBrowser {
	b := &riskBrowser{codeflowBrowser: e.browser(), from: &from}
	b.client.Transport = forwardedFor{rt: http.DefaultTransport, from: b.from}
	return b
}

// authURL is an authorization request of web.
func (e *riskEnv) authURL() string {
	return e.issuer("acme") + "/protocol/openid-connect/auth?" + url.Values{"client_id": {"web"}, "response_type": {"code"},
		"redirect_uri": {codeflowRedirect}, "scope": {"openid"}, "state": {"s"}, "prompt": {"login"}, "code_challenge_method": {"S256"},
		"code_challenge": {"E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGEyeJOssA"}}.Encode()
}

// signInPage runs the browser through the flow's password page and
// answers the page the password's post leads to.
func (e *riskEnv) signInPage(b *riskBrowser) *codeflowPage {
	e.t.Helper()
	e.clock.advance(time.Minute) // each assessment its own time: the list's newest is the last
	page := e.flowTestStart(b.codeflowBrowser, e.authURL())
	p := b.submit(page, map[string]string{"username": "alice", "password": codeflowPassword})
	for p.status == http.StatusSeeOther && strings.Contains(p.location(e.t).Path, "/signin/") {
		p = b.get(p.location(e.t).String())
	}
	return p
}

// signIn signs in through the browser, which must end back at the client.
func (e *riskEnv) signIn(b *riskBrowser) {
	e.t.Helper()
	e.redirectedBack(e.signInPage(b))
}

// grant signs alice in with the password grant from the address from.
func (e *riskEnv) grant(from string, extra url.Values) (int, map[string]any) {
	e.t.Helper()
	e.clock.advance(time.Minute)
	form := url.Values{"grant_type": {"password"}, "client_id": {"web"}, "username": {"alice"}, "password": {codeflowPassword},
		"scope": {"openid"}}
	for k, v := range extra {
		form[k] = v
	}
	return e.tokenRequest(form, "X-Forwarded-For: "+from)
}

// latest is the newest assessment of acme.
func (e *riskEnv) latest() map[string]any {
	e.t.Helper()
	r := e.admin(http.MethodGet, "/admin/realms/acme/risk-assessments?max=1", nil)
	mustStatus(e.t, r, http.StatusOK)
	var list []map[string]any
	r.decode(e.t, &list)
	if len(list) != 1 {
		e.t.Fatalf("assessments: %v", list)
	}
	return list[0]
}

// state is what the assessment found of signal.
func riskState(t *testing.T, a map[string]any, signal string) string {
	t.Helper()
	for _, s := range a["signals"].([]any) {
		m := s.(map[string]any)
		if m["signal"] == signal {
			return m["state"].(string)
		}
	}
	t.Fatalf("assessment without %s: %v", signal, a)
	return ""
}

func riskMustState(t *testing.T, a map[string]any, signal, want string) {
	t.Helper()
	if got := riskState(t, a, signal); got != want {
		t.Fatalf("%s is %s, want %s; assessment %v", signal, got, want, a)
	}
}

func (e *riskEnv) policy(body map[string]any) string {
	e.t.Helper()
	r := e.admin(http.MethodPost, "/admin/realms/acme/risk-policies", body)
	mustStatus(e.t, r, http.StatusCreated)
	return r.object(e.t)["id"].(string)
}

// A browser seen before is no new device; another browser is, and each
// sign-in is assessed with its weights; the device cookie keeps no more
// than a random ID, HttpOnly and SameSite=Lax.
func TestRiskNewDevice(t *testing.T) {
	e := newRiskEnv(t)
	b := e.browserAt(riskParis)
	e.signIn(b)
	first := e.latest()
	riskMustState(t, first, "new_device", "absent") // nothing to compare with
	if first["outcome"] != "succeeded" || first["kind"] != "oidc" || first["ipAddress"] != riskParis || first["country"] != "FR" {
		t.Fatalf("first assessment %v", first)
	}
	u, _ := url.Parse(e.url + "/realms/acme/")
	var device *http.Cookie
	for _, c := range b.client.Jar.Cookies(u) {
		if c.Name == "IDENPLANE_DEVICE" {
			device = c
		}
	}
	if device == nil || len(device.Value) < 22 {
		t.Fatalf("no device cookie after a sign-in: %v", b.client.Jar.Cookies(u))
	}
	e.clock.advance(time.Hour)
	e.signIn(b)
	riskMustState(t, e.latest(), "new_device", "absent")
	e.clock.advance(time.Hour)
	e.signIn(e.browserAt(riskParis))
	a := e.latest()
	riskMustState(t, a, "new_device", "present")
	riskMustState(t, a, "new_ip", "absent")
	w := a["weights"].(map[string]any)["weights"].(map[string]any)
	if w["new_device"] != float64(20) || a["score"] != float64(20) || a["level"] != "low" {
		t.Fatalf("a new device alone: %v", a)
	}
	// The one assessment by its ID, and the filters.
	r := e.admin(http.MethodGet, "/admin/realms/acme/risk-assessments/"+a["id"].(string), nil)
	mustStatus(t, r, http.StatusOK)
	var list []map[string]any
	e.admin(http.MethodGet, "/admin/realms/acme/risk-assessments?signal=new_device&user="+e.aliceID, nil).decode(t, &list)
	if len(list) != 1 || list[0]["id"] != a["id"] {
		t.Fatalf("filtered by signal: %v", list)
	}
	e.admin(http.MethodGet, "/admin/realms/acme/risk-assessments?level=medium", nil).decode(t, &list)
	if len(list) != 0 {
		t.Fatalf("filtered by level: %v", list)
	}
	d := e.admin(http.MethodGet, "/admin/realms/acme/risk-assessments/dashboard", nil).object(t)
	if d["total"] != float64(3) || d["byLevel"].(map[string]any)["low"] != float64(3) || d["bySignal"].(map[string]any)["new_device"] != float64(1) {
		t.Fatalf("dashboard %v", d)
	}
}

// A sign-in from Tokyo ten minutes after one from Paris is a new country
// and an impossible journey; without a GeoIP database both are unknown.
func TestRiskNewCountryAndImpossibleTravel(t *testing.T) {
	e := newRiskEnv(t)
	b := e.browserAt(riskParis)
	e.signIn(b)
	e.clock.advance(10 * time.Minute)
	*b.from = riskTokyo
	e.signIn(b)
	a := e.latest()
	riskMustState(t, a, "new_country", "present")
	riskMustState(t, a, "impossible_travel", "present")
	riskMustState(t, a, "new_network", "present")
	if a["country"] != "JP" || a["level"] != "critical" {
		t.Fatalf("Paris to Tokyo in 10 minutes: %v", a)
	}
	// Back in Paris a day later: seen country, a journey a plane makes.
	e.clock.advance(24 * time.Hour)
	*b.from = riskParis
	e.signIn(b)
	a = e.latest()
	riskMustState(t, a, "new_country", "absent")
	riskMustState(t, a, "impossible_travel", "absent")

	plain := newRiskEnvWithout(t)
	if status, body := plain.grant(riskTokyo, nil); status != http.StatusOK {
		t.Fatalf("grant: %d %v", status, body)
	}
	a = plain.latest()
	riskMustState(t, a, "new_country", "unknown")
	riskMustState(t, a, "impossible_travel", "unknown")
}

// newRiskEnvWithout is a riskEnv without a GeoIP database.
func newRiskEnvWithout(t *testing.T) *riskEnv {
	return newRiskEnv(t, func(c *Config) { c.GeoIPDB = "" })
}

// An address of the realm's deny list, or of the server's list file, is
// ip_denylisted; a deny policy ends such sign-ins with a page, and the
// password grant with invalid_grant; risk.denied reaches a webhook.
func TestRiskDenyListAndDeny(t *testing.T) {
	list := filepath.Join(t.TempDir(), "deny.txt")
	if err := os.WriteFile(list, []byte("# bad actors\n203.0.113.0/24\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e := newRiskEnv(t, func(c *Config) { c.IPDenyFile = list }, allowLoopback)
	mustStatus(t, e.admin(http.MethodPut, "/admin/realms/acme/risk-settings", map[string]any{"denyList": []string{"198.51.100.66"}}),
		http.StatusOK)
	if status, _ := e.grant("198.51.100.66", nil); status != http.StatusOK {
		t.Fatalf("a deny-listed address without a policy: %d", status)
	}
	a := e.latest()
	riskMustState(t, a, "ip_denylisted", "present")
	if a["level"] != "critical" || a["action"] != "allow" {
		t.Fatalf("deny-listed: %v", a)
	}
	e.grant(riskTokyo, nil)
	riskMustState(t, e.latest(), "ip_denylisted", "present") // the list file

	mustStatus(t, e.admin(http.MethodPost, "/admin/realms/acme/webhooks", map[string]any{"url": "http://127.0.0.1:9/hook",
		"events": []string{"risk.*"}}), http.StatusCreated)
	id := e.policy(map[string]any{"name": "no bad actors", "conditions": map[string]any{"signals": []string{"ip_denylisted"}},
		"action": "deny"})
	status, body := e.grant(riskTokyo, nil)
	codeflowMustOAuthError(t, status, body, http.StatusBadRequest, "invalid_grant")
	if !strings.Contains(body["error_description"].(string), "risk policy") {
		t.Fatalf("denied grant: %v", body)
	}
	a = e.latest()
	if a["action"] != "deny" || a["policyId"] != id || a["policyName"] != "no bad actors" || a["outcome"] != "pending" {
		t.Fatalf("denied assessment %v", a)
	}
	p := e.signInPage(e.browserAt(riskTokyo))
	if p.status != http.StatusForbidden || !strings.Contains(string(p.body), "looks unusual for this account") {
		t.Fatalf("a denied browser sign-in: %d %s", p.status, p.body)
	}
	due, err := e.store.DueWebhookMessages(t.Context(), e.clock.now().Add(time.Hour).UnixMilli(), 10)
	if err != nil || len(due) != 1 {
		t.Fatalf("webhook messages %+v %v", due, err)
	}
	// The outbox offers each webhook's messages oldest first: the grant's.
	msgs := due[0]
	if len(msgs) != 2 || msgs[1].EventType != "risk.denied" || msgs[0].EventType != "risk.denied" || !strings.Contains(string(msgs[0].Payload), id) {
		t.Fatalf("webhook messages %+v", msgs)
	}
	// Others sign in.
	if status, body := e.grant(riskParis, nil); status != http.StatusOK {
		t.Fatalf("from elsewhere: %d %v", status, body)
	}
}

// An hour of the day the user never signs in at is unusual, once the
// user has history enough.
func TestRiskUnusualHour(t *testing.T) {
	e := newRiskEnv(t)
	for i := range 10 {
		if status, _ := e.grant(riskParis, nil); status != http.StatusOK {
			t.Fatalf("sign-in %d", i)
		}
		if i == 0 {
			riskMustState(t, e.latest(), "unusual_hour", "unknown")
		}
		e.clock.advance(24 * time.Hour)
	}
	e.grant(riskParis, nil)
	riskMustState(t, e.latest(), "unusual_hour", "absent") // 09:00, as always
	e.clock.advance(18 * time.Hour)                        // 03:00
	e.grant(riskParis, nil)
	a := e.latest()
	riskMustState(t, a, "unusual_hour", "present")
	if a["score"] != float64(15) {
		t.Fatalf("an unusual hour alone: %v", a)
	}
}

// A policy asking a second factor sends a new device through the TOTP
// page; a device seen before, or a policy that allows, passes; a user
// without a second factor is refused with a page saying so.
func TestRiskStepUpThroughTOTP(t *testing.T) {
	e := newRiskEnv(t)
	known := e.browserAt(riskParis)
	e.signIn(known)
	mfa := e.policy(map[string]any{"name": "new devices give a code", "priority": 10,
		"conditions": map[string]any{"signals": []string{"new_device"}}, "action": "mfa"})

	// No second factor: refused, with the reason.
	p := e.signInPage(e.browserAt(riskParis))
	if p.status != http.StatusForbidden || !strings.Contains(string(p.body), "needs a second factor") {
		t.Fatalf("mfa without a factor: %d %s", p.status, p.body)
	}
	// A grant keeps no cookie, and its user agent is new: it wants the code.
	status, body := e.grant(riskParis, nil)
	codeflowMustOAuthError(t, status, body, http.StatusBadRequest, "invalid_grant")

	e.totpAlign()
	secret, _ := e.totpEnrol(e.aliceID)
	e.clock.advance(totpTestStep)
	b := e.browserAt(riskParis)
	p = e.signInPage(b)
	if p.status != http.StatusOK || !p.form(t).fields.Has("code") {
		t.Fatalf("a new device under an mfa policy: %d %s", p.status, p.body)
	}
	e.redirectedBack(b.submit(p, map[string]string{"code": totpTestCode(t, secret, e.clock.now())}))
	a := e.latest()
	if a["action"] != "mfa" || a["policyId"] != mfa || a["outcome"] != "succeeded" {
		t.Fatalf("step-up assessment %v", a)
	}
	// The browser is known now, and so is the first.
	e.clock.advance(time.Hour)
	e.signIn(b)
	e.signIn(known)
	if a := e.latest(); a["action"] != "allow" || a["policyId"] != nil {
		t.Fatalf("a known device: %v", a)
	}

	// An allow policy before it decides first.
	allow := e.policy(map[string]any{"name": "office", "priority": 1, "conditions": map[string]any{"networks": []string{"198.51.100.0/24"}},
		"action": "allow"})
	e.signIn(e.browserAt(riskParis))
	if a := e.latest(); a["action"] != "allow" || a["policyId"] != allow {
		t.Fatalf("allow before mfa: %v", a)
	}
}

// The password grant under an mfa policy wants the code as totp.
func TestRiskPasswordGrantSecondFactor(t *testing.T) {
	e := newRiskEnv(t)
	e.policy(map[string]any{"name": "always", "conditions": map[string]any{}, "action": "mfa"})
	status, body := e.grant(riskParis, nil)
	codeflowMustOAuthError(t, status, body, http.StatusBadRequest, "invalid_grant")
	if !strings.Contains(body["error_description"].(string), "a second factor is required") {
		t.Fatalf("mfa grant: %v", body)
	}
}

// Notify allows and publishes risk.notify, which a webhook's outbox
// holds; priority and toggle decide which policy matches.
func TestRiskNotifyPriorityAndToggle(t *testing.T) {
	e := newRiskEnv(t, allowLoopback)
	mustStatus(t, e.admin(http.MethodPost, "/admin/realms/acme/webhooks", map[string]any{"url": "http://127.0.0.1:9/hook",
		"events": []string{"risk.notify"}}), http.StatusCreated)
	notify := e.policy(map[string]any{"name": "tell", "priority": 5, "conditions": map[string]any{"countries": []string{"FR"}},
		"action": "notify"})
	deny := e.policy(map[string]any{"name": "shut", "priority": 9, "conditions": map[string]any{"minScore": 0}, "action": "deny"})
	if status, body := e.grant(riskParis, nil); status != http.StatusOK {
		t.Fatalf("notify: %d %v", status, body)
	}
	a := e.latest()
	if a["action"] != "notify" || a["policyId"] != notify {
		t.Fatalf("notify assessment %v", a)
	}
	due, err := e.store.DueWebhookMessages(t.Context(), e.clock.now().Add(time.Hour).UnixMilli(), 10)
	if err != nil || len(due) != 1 {
		t.Fatalf("webhook messages %+v %v", due, err)
	}
	msgs := due[0]
	if len(msgs) != 1 || msgs[0].EventType != "risk.notify" || !strings.Contains(string(msgs[0].Payload), a["id"].(string)) {
		t.Fatalf("webhook messages %+v", msgs)
	}
	// Deny moved first.
	r := e.admin(http.MethodPatch, "/admin/realms/acme/risk-policies/"+deny+"/priority", map[string]any{"priority": 1})
	mustStatus(t, r, http.StatusOK)
	if status, _ := e.grant(riskParis, nil); status != http.StatusBadRequest {
		t.Fatalf("deny first: %d", status)
	}
	// Toggled off (a flip with no body), deny no longer matches.
	r = e.admin(http.MethodPatch, "/admin/realms/acme/risk-policies/"+deny+"/toggle", nil)
	mustStatus(t, r, http.StatusOK)
	if r.object(t)["enabled"] != false {
		t.Fatalf("toggled: %v", r.object(t))
	}
	if status, _ := e.grant(riskParis, nil); status != http.StatusOK {
		t.Fatalf("deny off: %d", status)
	}
	mustStatus(t, e.admin(http.MethodPatch, "/admin/realms/acme/risk-policies/"+deny+"/toggle", map[string]any{"enabled": true}),
		http.StatusOK)
	if status, _ := e.grant(riskParis, nil); status != http.StatusBadRequest {
		t.Fatal("deny on again")
	}
	var list []map[string]any
	e.admin(http.MethodGet, "/admin/realms/acme/risk-policies", nil).decode(t, &list)
	if len(list) != 2 || list[0]["id"] != deny || list[1]["id"] != notify {
		t.Fatalf("policies by priority: %v", list)
	}
	mustStatus(t, e.admin(http.MethodDelete, "/admin/realms/acme/risk-policies/"+deny, nil), http.StatusNoContent)
	mustStatus(t, e.admin(http.MethodGet, "/admin/realms/acme/risk-policies/"+deny, nil), http.StatusNotFound)
}

// Bad input on every endpoint is refused in the API's error shape, and
// nothing is stored.
func TestRiskBadInput(t *testing.T) {
	e := newRiskEnvWithout(t)
	const policies = "/admin/realms/acme/risk-policies"
	for _, tc := range []struct {
		body  any
		field string
	}{
		{map[string]any{"name": "x", "conditions": map[string]any{"signals": []string{"full_moon"}}, "action": "deny"}, "conditions.signals"},
		{map[string]any{"name": "x", "conditions": map[string]any{"levels": []string{"extreme"}}, "action": "deny"}, "conditions.levels"},
		{map[string]any{"name": "x", "action": "shrug"}, "action"},
		{map[string]any{"name": "", "action": "deny"}, "name"},
		{map[string]any{"name": "x", "conditions": map[string]any{"networks": []string{"10.0.0.0/33"}}, "action": "deny"}, "conditions.networks"},
		{map[string]any{"name": "x", "conditions": map[string]any{"countries": []string{"France"}}, "action": "deny"}, "conditions.countries"},
		{map[string]any{"name": "x", "conditions": map[string]any{"minScore": 101}, "action": "deny"}, "conditions.minScore"},
	} {
		r := e.admin(http.MethodPost, policies, tc.body)
		mustError(t, r, http.StatusBadRequest, "invalid_field", tc.field)
	}
	mustStatus(t, e.admin(http.MethodPost, policies, "{not json"), http.StatusBadRequest)
	r := e.admin(http.MethodPost, policies, map[string]any{"name": "x", "action": "deny", "colour": "red"})
	mustStatus(t, r, http.StatusBadRequest)
	var list []map[string]any
	e.admin(http.MethodGet, policies, nil).decode(t, &list)
	if len(list) != 0 {
		t.Fatalf("refused policies stored: %v", list)
	}
	id := e.policy(map[string]any{"name": "x", "action": "allow"})
	mustError(t, e.admin(http.MethodPost, policies, map[string]any{"name": "x", "action": "allow"}), http.StatusConflict, "conflict", "name")
	mustError(t, e.admin(http.MethodPut, policies+"/"+id, map[string]any{"name": "x", "action": "nope"}), http.StatusBadRequest,
		"invalid_field", "action")
	mustError(t, e.admin(http.MethodPatch, policies+"/"+id+"/priority", map[string]any{}), http.StatusBadRequest, "invalid_field", "priority")
	mustStatus(t, e.admin(http.MethodPatch, policies+"/"+id+"/priority", map[string]any{"priority": "high"}), http.StatusBadRequest)
	mustStatus(t, e.admin(http.MethodPatch, policies+"/"+id+"/toggle", map[string]any{"enabled": "yes"}), http.StatusBadRequest)
	if got := e.admin(http.MethodGet, policies+"/"+id, nil).object(t); got["action"] != "allow" || got["priority"] != float64(0) ||
		got["enabled"] != true {
		t.Fatalf("a refused change changed the policy: %v", got)
	}
	mustStatus(t, e.admin(http.MethodGet, policies+"/nope", nil), http.StatusNotFound)
	mustStatus(t, e.admin(http.MethodPatch, policies+"/nope/toggle", map[string]any{"enabled": true}), http.StatusNotFound)
	mustStatus(t, e.admin(http.MethodPatch, policies+"/nope/priority", map[string]any{"priority": 1}), http.StatusNotFound)
	mustStatus(t, e.admin(http.MethodPut, policies+"/nope", map[string]any{"name": "y", "action": "allow"}), http.StatusNotFound)
	mustStatus(t, e.admin(http.MethodDelete, policies+"/nope", nil), http.StatusNotFound)
	mustStatus(t, e.admin(http.MethodGet, "/admin/realms/acme/risk-assessments/nope", nil), http.StatusNotFound)
	mustError(t, e.admin(http.MethodGet, "/admin/realms/acme/risk-assessments?signal=full_moon", nil), http.StatusBadRequest, "invalid_field", "signal")
	mustError(t, e.admin(http.MethodGet, "/admin/realms/acme/risk-assessments?level=extreme", nil), http.StatusBadRequest, "invalid_field", "level")
	mustError(t, e.admin(http.MethodGet, "/admin/realms/acme/risk-assessments/dashboard?from=yesterday", nil), http.StatusBadRequest,
		"invalid_field", "from")
	mustError(t, e.admin(http.MethodPut, "/admin/realms/acme/risk-settings", map[string]any{"weights": map[string]any{"full_moon": 5}}),
		http.StatusBadRequest, "invalid_field", "weights")
	mustError(t, e.admin(http.MethodPut, "/admin/realms/acme/risk-settings", map[string]any{"thresholds": map[string]any{"medium": 50, "high": 40, "critical": 90}}),
		http.StatusBadRequest, "invalid_field", "thresholds")
	mustError(t, e.admin(http.MethodPut, "/admin/realms/acme/risk-settings", map[string]any{"denyList": []string{"not an address"}}),
		http.StatusBadRequest, "invalid_field", "denyList")
	if _, err := e.store.RiskSettings(context.Background(), e.realmID()); err == nil {
		t.Fatal("refused settings stored")
	}
	mustStatus(t, e.admin(http.MethodGet, "/admin/realms/nowhere/risk-policies", nil), http.StatusNotFound)
}

// A flow's step can ask for a risk level: the TOTP step on "medium"
// runs for a sign-in from a new country only.
func TestRiskLevelCondition(t *testing.T) {
	e := newRiskEnv(t)
	r := e.admin(http.MethodPost, "/admin/realms/acme/auth-flows", map[string]any{"alias": "bad", "usage": "browser",
		"steps": []map[string]any{flowTestPassword, {"kind": "totp", "requirement": "conditional", "condition": map[string]any{"riskLevel": "severe"}}}})
	mustError(t, r, http.StatusBadRequest, "invalid_field", "steps[1].condition.riskLevel")
	e.flowTestBind("web", "risky-give-a-code", flowTestPassword,
		map[string]any{"kind": "totp", "requirement": "conditional", "condition": map[string]any{"riskLevel": "medium"}})
	e.totpAlign()
	secret, _ := e.totpEnrol(e.aliceID)
	e.clock.advance(totpTestStep)
	b := e.browserAt(riskParis)
	e.signIn(b) // first sign-in: low
	e.clock.advance(10 * time.Minute)
	*b.from = riskTokyo
	p := e.signInPage(b)
	if p.status != http.StatusOK || !p.form(t).fields.Has("code") {
		t.Fatalf("a critical sign-in under a riskLevel condition: %d %s", p.status, p.body)
	}
	e.redirectedBack(b.submit(p, map[string]string{"code": totpTestCode(t, secret, e.clock.now())}))
}
