package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idenplane/idenplane/store/pgtest"
)

// testEpoch is the fixed clock of tests that assert timestamps.
var testEpoch = time.Date(2030, 1, 2, 3, 4, 5, 6_000_000, time.UTC)

// fixedClock stops the server's clock at testEpoch.
func fixedClock(c *Config) { c.Now = func() time.Time { return testEpoch } }

// tickingClock advances the server's clock one second on every reading, so
// every row gets a distinct creation time.
func tickingClock(c *Config) {
	var n atomic.Int64
	c.Now = func() time.Time { return testEpoch.Add(time.Duration(n.Add(1)) * time.Second) }
}

// jsonNorm round-trips v through JSON, so Go literals compare equal to
// decoded bodies (numbers become float64, structs become maps).
func jsonNorm(t testing.TB, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("encode %v: %v", v, err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return out
}

// mustEqualJSON fails unless got and want have the same JSON form.
func mustEqualJSON(t testing.TB, what string, got, want any) {
	t.Helper()
	g, w := jsonNorm(t, got), jsonNorm(t, want)
	if !reflect.DeepEqual(g, w) {
		gb, _ := json.MarshalIndent(g, "", "  ")
		wb, _ := json.MarshalIndent(w, "", "  ")
		t.Fatalf("%s:\n got: %s\nwant: %s", what, gb, wb)
	}
}

// cloneMap copies a decoded JSON object one level deep, applying changes; a
// nil change value deletes the key.
func cloneMap(m map[string]any, changes map[string]any) map[string]any {
	out := make(map[string]any, len(m)+len(changes))
	for k, v := range m {
		out[k] = v
	}
	for k, v := range changes {
		if v == nil {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	return out
}

func (s *testServer) getRealmJSON(name string) map[string]any {
	s.t.Helper()
	r := s.admin(http.MethodGet, "/admin/realms/"+name, nil)
	mustStatus(s.t, r, http.StatusOK)
	return r.object(s.t)
}

// exportSecrets returns the realm as export shows it with secrets in clear.
func (s *testServer) exportSecrets(name string) map[string]any {
	s.t.Helper()
	r := s.admin(http.MethodGet, "/admin/realms/"+name+"/export?includeSecrets=true", nil)
	mustStatus(s.t, r, http.StatusOK)
	return r.object(s.t)
}

func (s *testServer) realmNames() []string {
	s.t.Helper()
	r := s.admin(http.MethodGet, "/admin/realms", nil)
	mustStatus(s.t, r, http.StatusOK)
	var list []map[string]any
	r.decode(s.t, &list)
	names := make([]string, len(list))
	for i, realm := range list {
		names[i], _ = realm["name"].(string)
	}
	return names
}

// defaultRealmJSON is a freshly created realm as the API must show it,
// without id and createdTimestamp.
func defaultRealmJSON(name string) map[string]any {
	return map[string]any{
		"name": name,
		// Defaults the spec's realm table gives.
		"enabled":              true,
		"accessTokenLifespan":  300,
		"refreshTokenLifespan": 1800,
		"offlineTokenLifespan": 2592000,
		"smtpPort":             587,
		"smtpSecure":           false,
		"emailProvider":        "smtp",
		"passwordMinLength":    8,
		"maxLoginFailures":     5,
		"lockoutDuration":      900,
		"registrationAllowed":  false,
		"eventsExpiration":     604800,
		"themeName":            "idenplane",
		// Fields the spec gives no default for: the zero value, except the
		// two brute-force settings, which follow Keycloak, and the events,
		// kept (docs/decisions.md).
		"displayName": "", "smtpHost": "", "smtpUser": "", "smtpFrom": "",
		"passwordRequireUppercase": false, "passwordRequireLowercase": false,
		"passwordRequireDigits": false, "passwordRequireSpecialChars": false,
		"passwordHistoryCount": 0, "passwordMaxAgeDays": 0,
		"bruteForceEnabled": true, "failureResetTime": 43200, "permanentLockoutAfter": 0,
		"requireEmailVerification": false, "mfaRequired": false, "eventsEnabled": true,
		"adminEventsEnabled": true, "loginTheme": "", "accountTheme": "", "emailTheme": "",
		"enabledEventTypes": []any{}, // Keycloak's default set
		// Every language, English by default.
		"defaultLocale": "", "supportedLocales": []any{},
		// Impersonation off, for fifteen minutes when on (impersonation.md).
		"impersonationEnabled": false, "impersonationLifetime": 900,
		// No terms (auth-flows.md).
		"termsText": "", "termsVersion": "",
	}
}

// withoutIdentity drops the fields the server assigns.
func withoutIdentity(m map[string]any) map[string]any {
	return cloneMap(m, map[string]any{"id": nil, "createdTimestamp": nil})
}

func mustRealmIdentity(t testing.TB, m map[string]any) {
	t.Helper()
	id, _ := m["id"].(string)
	if len(id) != 36 || strings.Count(id, "-") != 4 {
		t.Fatalf("id %q is not a UUID", m["id"])
	}
	if m["createdTimestamp"] != float64(testEpoch.UnixMilli()) {
		t.Fatalf("createdTimestamp %v, want %d", m["createdTimestamp"], testEpoch.UnixMilli())
	}
}

func TestRealmCreateDefaults(t *testing.T) {
	s := newTestServer(t, fixedClock)
	r := s.admin(http.MethodPost, "/admin/realms", map[string]any{"name": "acme"})
	mustStatus(t, r, http.StatusCreated)
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q", ct)
	}
	got := r.object(t)
	mustRealmIdentity(t, got)
	mustEqualJSON(t, "created realm", withoutIdentity(got), defaultRealmJSON("acme"))
	mustEqualJSON(t, "realm on GET", s.getRealmJSON("acme"), got)

	// null for an optional field means its default too.
	nulls := map[string]any{"name": "nulls"}
	for k := range defaultRealmJSON("x") {
		if k != "name" {
			nulls[k] = nil
		}
	}
	nulls["smtpPassword"], nulls["emailProviderConfig"], nulls["theme"] = nil, nil, nil
	r = s.admin(http.MethodPost, "/admin/realms", nulls)
	mustStatus(t, r, http.StatusCreated)
	mustEqualJSON(t, "realm created with nulls", withoutIdentity(r.object(t)), defaultRealmJSON("nulls"))
}

// allRealmFields sets every create field to a value other than its default.
func allRealmFields(name string) map[string]any {
	return map[string]any{
		"name": name, "displayName": "Acme Corp", "enabled": false,
		"accessTokenLifespan": 600, "refreshTokenLifespan": 3600, "offlineTokenLifespan": 86400,
		"smtpHost": "smtp.example.com", "smtpPort": 2525, "smtpUser": "mailer",
		"smtpPassword": "smtp-plain-Pa55", "smtpFrom": "noreply@example.com", "smtpSecure": true,
		"emailProvider": "mailgun",
		"emailProviderConfig": map[string]any{
			"apiKey": "mg-API-KEY-123", "domain": "mg.example.com", "region": "eu", "port": 2525,
		},
		"passwordMinLength": 12, "passwordRequireUppercase": true, "passwordRequireLowercase": true,
		"passwordRequireDigits": true, "passwordRequireSpecialChars": true,
		"passwordHistoryCount": 3, "passwordMaxAgeDays": 90, "bruteForceEnabled": false,
		"maxLoginFailures": 10, "lockoutDuration": 60, "failureResetTime": 600, "permanentLockoutAfter": 4,
		"registrationAllowed": true, "requireEmailVerification": true, "mfaRequired": true,
		"eventsEnabled": true, "eventsExpiration": 3600, "adminEventsEnabled": true,
		"enabledEventTypes": []any{"LOGIN", "LOGIN_ERROR", "REFRESH_TOKEN"},
		"themeName":         "idenplane-dark",
		"theme": map[string]any{
			"logoUrl": "https://cdn.example.com/logo.png", "faviconUrl": "http://cdn.example.com/favicon.ico",
			"primaryColor": "#1a73e8", "secondaryColor": "#FFF", "backgroundColor": "#00000080",
			"textColor": "#202124", "linkColor": "#abcdef", "fontFamily": `"Inter", Arial, sans-serif`,
		},
		"loginTheme": "high-contrast", "accountTheme": "idenplane", "emailTheme": "idenplane-dark",
		"defaultLocale": "fr", "supportedLocales": []any{"fr", "de", "en"},
		"impersonationEnabled": true, "impersonationLifetime": 300,
		"termsText": "Be kind.\n\nNo spam.", "termsVersion": "2026-01",
	}
}

func TestRealmCreateAllFields(t *testing.T) {
	s := newTestServer(t, fixedClock)
	body := allRealmFields("acme")
	r := s.admin(http.MethodPost, "/admin/realms", body)
	mustStatus(t, r, http.StatusCreated)
	got := r.object(t)
	mustRealmIdentity(t, got)
	want := cloneMap(body, map[string]any{
		"smtpPassword": redacted,
		"emailProviderConfig": map[string]any{
			"apiKey": redacted, "domain": "mg.example.com", "region": "eu", "port": 2525,
		},
	})
	mustEqualJSON(t, "created realm", withoutIdentity(got), want)
	mustEqualJSON(t, "realm on GET", s.getRealmJSON("acme"), got)
	exp := s.exportSecrets("acme")
	if exp["smtpPassword"] != "smtp-plain-Pa55" {
		t.Fatalf("exported smtpPassword %v", exp["smtpPassword"])
	}
	mustEqualJSON(t, "exported provider config", exp["emailProviderConfig"], body["emailProviderConfig"])
}

func TestRealmCreateNames(t *testing.T) {
	s := newTestServer(t)
	for _, name := range []string{"a", "7", "a1", "my-realm", "0-0", strings.Repeat("x", 63)} {
		got := s.createRealm(name)
		if got["name"] != name {
			t.Fatalf("created %q, got name %v", name, got["name"])
		}
		s.getRealmJSON(name)
	}
}

func TestRealmCreateInvalid(t *testing.T) {
	big := `{"name":"acme","displayName":"` + strings.Repeat("a", 1<<20) + `"}`
	theme := func(k string, v any) map[string]any {
		return map[string]any{"name": "acme", "theme": map[string]any{k: v}}
	}
	with := func(k string, v any) map[string]any { return map[string]any{"name": "acme", k: v} }
	cases := []struct {
		name    string
		body    any
		headers []string
		status  int
		code    string
		field   string
	}{
		{"uppercase name", with("name", "Acme"), nil, 400, "invalid_field", "name"},
		{"space in name", with("name", "my realm"), nil, 400, "invalid_field", "name"},
		{"leading hyphen", with("name", "-acme"), nil, 400, "invalid_field", "name"},
		{"trailing hyphen", with("name", "acme-"), nil, 400, "invalid_field", "name"},
		{"underscore", with("name", "ac_me"), nil, 400, "invalid_field", "name"},
		{"slash", with("name", "ac/me"), nil, 400, "invalid_field", "name"},
		{"64 chars", with("name", strings.Repeat("a", 64)), nil, 400, "invalid_field", "name"},
		{"empty name", with("name", ""), nil, 400, "invalid_field", "name"},
		{"reserved themes", with("name", "themes"), nil, 400, "invalid_field", "name"},
		{"reserved import", with("name", "import"), nil, 400, "invalid_field", "name"},
		{"missing name", map[string]any{"displayName": "x"}, nil, 400, "invalid_field", "name"},
		{"null name", with("name", nil), nil, 400, "invalid_field", "name"},
		{"numeric name", with("name", 5), nil, 400, "invalid_field", "name"},

		{"malformed JSON", `{"name": "acme"`, nil, 400, "invalid_json", ""},
		{"syntax error", `{"name": acme}`, nil, 400, "invalid_json", ""},
		{"empty body", "", nil, 400, "invalid_json", ""},
		{"blank body", " \n ", nil, 400, "invalid_json", ""},
		{"array body", `[{"name":"acme"}]`, nil, 400, "invalid_json", ""},
		{"string body", `"acme"`, nil, 400, "invalid_json", ""},
		{"null body", `null`, nil, 400, "invalid_json", ""},
		{"trailing data", `{"name":"acme"} {"name":"other"}`, nil, 400, "invalid_json", ""},

		{"enabled string", with("enabled", "yes"), nil, 400, "invalid_field", "enabled"},
		{"lifespan string", with("accessTokenLifespan", "300"), nil, 400, "invalid_field", "accessTokenLifespan"},
		{"lifespan fraction", with("accessTokenLifespan", 1.5), nil, 400, "invalid_field", "accessTokenLifespan"},
		{"lifespan huge", `{"name":"acme","accessTokenLifespan":1e30}`, nil, 400, "invalid_field", "accessTokenLifespan"},
		{"smtpPort bool", with("smtpPort", true), nil, 400, "invalid_field", "smtpPort"},
		{"displayName number", with("displayName", 5), nil, 400, "invalid_field", "displayName"},
		{"smtpSecure string", with("smtpSecure", "true"), nil, 400, "invalid_field", "smtpSecure"},
		{"theme string", with("theme", "dark"), nil, 400, "invalid_field", "theme"},
		{"unknown event type", with("enabledEventTypes", []string{"LOGIN", "SIGN_IN"}), nil, 400, "invalid_field", "enabledEventTypes"},
		{"event types string", with("enabledEventTypes", "LOGIN"), nil, 400, "invalid_field", "enabledEventTypes"},
		{"provider config array", with("emailProviderConfig", []string{"k"}), nil, 400, "invalid_field", "emailProviderConfig"},
		{"terms without a version", with("termsText", "Be kind."), nil, 400, "invalid_field", "termsVersion"},
		{"a terms version without terms", with("termsVersion", "v1"), nil, 400, "invalid_field", "termsText"},
		{"terms version with a tab", map[string]any{"name": "acme", "termsText": "x", "termsVersion": "v 1\t"}, nil, 400, "invalid_field", "termsVersion"},
		{"terms too long", map[string]any{"name": "acme", "termsText": strings.Repeat("a", 20001), "termsVersion": "v1"}, nil, 400, "invalid_field", "termsText"},
		{"terms with a control character", map[string]any{"name": "acme", "termsText": "a\u0000b", "termsVersion": "v1"}, nil, 400, "invalid_field", "termsText"},

		{"unknown field", with("foo", 1), nil, 400, "unknown_field", "foo"},
		{"id not accepted", with("id", "6f1c7a43-0000-4000-8000-000000000000"), nil, 400, "unknown_field", "id"},
		{"createdTimestamp not accepted", with("createdTimestamp", 1), nil, 400, "unknown_field", "createdTimestamp"},

		{"smtpPort 0", with("smtpPort", 0), nil, 400, "invalid_field", "smtpPort"},
		{"smtpPort 70000", with("smtpPort", 70000), nil, 400, "invalid_field", "smtpPort"},
		{"accessTokenLifespan 0", with("accessTokenLifespan", 0), nil, 400, "invalid_field", "accessTokenLifespan"},
		{"accessTokenLifespan negative", with("accessTokenLifespan", -300), nil, 400, "invalid_field", "accessTokenLifespan"},
		{"accessTokenLifespan over a year", with("accessTokenLifespan", 365*86400+1), nil, 400, "invalid_field", "accessTokenLifespan"},
		{"refreshTokenLifespan 0", with("refreshTokenLifespan", 0), nil, 400, "invalid_field", "refreshTokenLifespan"},
		{"offlineTokenLifespan 0", with("offlineTokenLifespan", 0), nil, 400, "invalid_field", "offlineTokenLifespan"},
		{"passwordMinLength 4", with("passwordMinLength", 4), nil, 400, "invalid_field", "passwordMinLength"},
		{"passwordMinLength 257", with("passwordMinLength", 257), nil, 400, "invalid_field", "passwordMinLength"},
		{"passwordHistoryCount -1", with("passwordHistoryCount", -1), nil, 400, "invalid_field", "passwordHistoryCount"},
		{"maxLoginFailures 0", with("maxLoginFailures", 0), nil, 400, "invalid_field", "maxLoginFailures"},
		{"lockoutDuration 0", with("lockoutDuration", 0), nil, 400, "invalid_field", "lockoutDuration"},
		{"eventsExpiration 10", with("eventsExpiration", 10), nil, 400, "invalid_field", "eventsExpiration"},

		{"smtpHost with space", with("smtpHost", "smtp example.com"), nil, 400, "invalid_field", "smtpHost"},
		{"smtpFrom not email", with("smtpFrom", "not-an-email"), nil, 400, "invalid_field", "smtpFrom"},
		{"displayName control char", with("displayName", "Acme\x01"), nil, 400, "invalid_field", "displayName"},
		{"displayName 256 chars", with("displayName", strings.Repeat("é", 256)), nil, 400, "invalid_field", "displayName"},

		{"provider pigeon", with("emailProvider", "pigeon"), nil, 400, "invalid_field", "emailProvider"},
		{"sendgrid without config", with("emailProvider", "sendgrid"), nil, 400, "invalid_field", "emailProviderConfig"},
		{"sendgrid with empty config", map[string]any{"name": "acme", "emailProvider": "sendgrid", "emailProviderConfig": map[string]any{}}, nil, 400, "invalid_field", "emailProviderConfig"},

		{"unknown theme key", theme("foo", "x"), nil, 400, "unknown_field", "theme.foo"},
		{"named color", theme("primaryColor", "red"), nil, 400, "invalid_field", "theme.primaryColor"},
		{"5-digit color", theme("textColor", "#12345"), nil, 400, "invalid_field", "theme.textColor"},
		{"color not string", theme("linkColor", 123456), nil, 400, "invalid_field", "theme.linkColor"},
		{"javascript logoUrl", theme("logoUrl", "javascript:alert(1)"), nil, 400, "invalid_field", "theme.logoUrl"},
		{"relative faviconUrl", theme("faviconUrl", "/favicon.ico"), nil, 400, "invalid_field", "theme.faviconUrl"},
		{"css injection font", theme("fontFamily", "Arial; } body { display:none"), nil, 400, "invalid_field", "theme.fontFamily"},
		{"unknown themeName", with("themeName", "nope"), nil, 400, "invalid_field", "themeName"},
		{"empty themeName", with("themeName", ""), nil, 400, "invalid_field", "themeName"},
		{"unknown loginTheme", with("loginTheme", "nope"), nil, 400, "invalid_field", "loginTheme"},

		{"text/plain", `{"name":"acme"}`, []string{"Content-Type: text/plain"}, 415, "unsupported_media_type", ""},
		{"form", `name=acme`, []string{"Content-Type: application/x-www-form-urlencoded"}, 415, "unsupported_media_type", ""},
		{"no content type", `{"name":"acme"}`, []string{"Content-Type:"}, 415, "unsupported_media_type", ""},
		{"over 1 MiB", big, nil, 413, "payload_too_large", ""},
	}
	s := newTestServer(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := s.admin(http.MethodPost, "/admin/realms", c.body, c.headers...)
			mustError(t, r, c.status, c.code, c.field)
		})
	}
	if names := s.realmNames(); len(names) != 0 {
		t.Fatalf("rejected creates left realms %v", names)
	}
}

func TestRealmCreateContentTypes(t *testing.T) {
	s := newTestServer(t)
	for i, ct := range []string{"application/json; charset=utf-8", "application/merge-patch+json", "Application/JSON"} {
		name := fmt.Sprintf("ct%d", i)
		r := s.admin(http.MethodPost, "/admin/realms", `{"name":"`+name+`"}`, "Content-Type: "+ct)
		mustStatus(t, r, http.StatusCreated)
	}
}

func TestRealmCreateDuplicate(t *testing.T) {
	s := newTestServer(t)
	first := s.createRealm("acme")
	r := s.admin(http.MethodPost, "/admin/realms", map[string]any{"name": "acme", "displayName": "Second"})
	mustError(t, r, http.StatusConflict, "conflict", "")
	mustEqualJSON(t, "original realm", s.getRealmJSON("acme"), first)
	if names := s.realmNames(); !slices.Equal(names, []string{"acme"}) {
		t.Fatalf("realms %v", names)
	}
}

func TestRealmListCreationOrder(t *testing.T) {
	s := newTestServer(t, tickingClock)
	r := s.admin(http.MethodGet, "/admin/realms", nil)
	mustStatus(t, r, http.StatusOK)
	if got := string(bytes.TrimSpace(r.Body)); got != "[]" {
		t.Fatalf("empty list %s, want []", got)
	}
	want := []string{"zeta", "alpha", "mid", "beta", "omega"}
	created := map[string]map[string]any{}
	for _, n := range want {
		created[n] = s.createRealm(n)
	}
	if got := s.realmNames(); !slices.Equal(got, want) {
		t.Fatalf("list order %v, want %v", got, want)
	}
	r = s.admin(http.MethodGet, "/admin/realms", nil)
	var list []map[string]any
	r.decode(t, &list)
	for _, realm := range list {
		mustEqualJSON(t, "listed realm", realm, created[realm["name"].(string)])
	}
}

func TestRealmListCreationOrderSameMillisecond(t *testing.T) {
	s := newTestServer(t, fixedClock)
	want := []string{"r9", "r8", "r7", "r6", "r5", "r4", "r3", "r2", "r1", "r0"}
	for _, n := range want {
		s.createRealm(n)
	}
	if got := s.realmNames(); !slices.Equal(got, want) {
		t.Fatalf("list order %v, want creation order %v", got, want)
	}
}

func TestRealmThemes(t *testing.T) {
	s := newTestServer(t)
	r := s.admin(http.MethodGet, "/admin/realms/themes", nil)
	mustStatus(t, r, http.StatusOK)
	var names []string
	r.decode(t, &names)
	if want := []string{"idenplane", "idenplane-dark", "high-contrast"}; !slices.Equal(names, want) {
		t.Fatalf("themes %v, want %v", names, want)
	}
}

func TestRealmRequiresAdminKey(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	for _, c := range []struct{ method, path string }{
		{"GET", "/admin/realms"}, {"POST", "/admin/realms"}, {"GET", "/admin/realms/themes"},
		{"GET", "/admin/realms/acme"}, {"PUT", "/admin/realms/acme"}, {"PATCH", "/admin/realms/acme"},
		{"DELETE", "/admin/realms/acme"},
	} {
		r := s.request(c.method, c.path, `{"name":"x","displayName":"x"}`)
		mustError(t, r, http.StatusUnauthorized, "unauthorized", "")
		r = s.request(c.method, c.path, `{"name":"x","displayName":"x"}`, "X-Admin-API-Key: wrong-key")
		mustError(t, r, http.StatusUnauthorized, "unauthorized", "")
	}
	if got := s.getRealmJSON("acme"); got["displayName"] != "" {
		t.Fatalf("unauthenticated request changed the realm: %v", got)
	}
}

func TestRealmGet(t *testing.T) {
	s := newTestServer(t)
	created := s.createRealm("acme")
	mustEqualJSON(t, "GET realm", s.getRealmJSON("acme"), created)
	for _, path := range []string{"/admin/realms/nope", "/admin/realms/ACME", "/admin/realms/acme-"} {
		mustError(t, s.admin(http.MethodGet, path, nil), http.StatusNotFound, "not_found", "")
	}
}

// realmUpdateCases set each updatable field (and the pairs that must change
// together) to a new value; want is how the realm shows it afterwards.
var realmUpdateCases = []struct {
	name string
	body map[string]any
	want map[string]any
}{
	{"displayName", map[string]any{"displayName": "Acme Corp"}, nil},
	{"enabled", map[string]any{"enabled": false}, nil},
	{"accessTokenLifespan", map[string]any{"accessTokenLifespan": 600}, nil},
	{"refreshTokenLifespan", map[string]any{"refreshTokenLifespan": 7200}, nil},
	{"smtpHost", map[string]any{"smtpHost": "smtp.example.com"}, nil},
	{"smtpPort", map[string]any{"smtpPort": 465}, nil},
	{"smtpUser", map[string]any{"smtpUser": "mailer"}, nil},
	{"smtpPassword", map[string]any{"smtpPassword": "n3w-pass"}, map[string]any{"smtpPassword": redacted}},
	{"smtpFrom", map[string]any{"smtpFrom": "noreply@example.com"}, nil},
	{"emailProvider", map[string]any{"emailProvider": "postmark", "emailProviderConfig": map[string]any{"serverToken": "pm-1", "from": "a@example.com"}},
		map[string]any{"emailProvider": "postmark", "emailProviderConfig": map[string]any{"serverToken": redacted, "from": "a@example.com"}}},
	{"emailProviderConfig", map[string]any{"emailProviderConfig": map[string]any{"region": "eu"}}, nil},
	{"registrationAllowed", map[string]any{"registrationAllowed": true}, nil},
	{"mfaRequired", map[string]any{"mfaRequired": true}, nil},
	{"themeName", map[string]any{"themeName": "high-contrast"}, nil},
	{"theme", map[string]any{"theme": map[string]any{"primaryColor": "#112233"}}, nil},
	{"loginTheme", map[string]any{"loginTheme": "high-contrast"}, nil},
	{"accountTheme", map[string]any{"accountTheme": "idenplane-dark"}, nil},
	{"emailTheme", map[string]any{"emailTheme": "idenplane"}, nil},
	{"several", map[string]any{"displayName": "X", "enabled": false, "smtpPort": 25}, nil},
	{"empty body", map[string]any{}, nil},
}

func TestRealmUpdateFields(t *testing.T) {
	s := newTestServer(t)
	for _, method := range []string{http.MethodPut, http.MethodPatch} {
		for i, c := range realmUpdateCases {
			t.Run(method+" "+c.name, func(t *testing.T) {
				name := fmt.Sprintf("%s-%d", strings.ToLower(method), i)
				before := s.createRealm(name)
				r := s.admin(method, "/admin/realms/"+name, c.body)
				mustStatus(t, r, http.StatusOK)
				want := cloneMap(before, c.body)
				if c.want != nil {
					want = cloneMap(want, c.want)
				}
				got := r.object(t)
				mustEqualJSON(t, "updated realm", got, want)
				mustEqualJSON(t, "realm on GET", s.getRealmJSON(name), want)
			})
		}
	}
}

func TestRealmUpdateRejectsCreateOnlyFields(t *testing.T) {
	s := newTestServer(t)
	created := s.admin(http.MethodPost, "/admin/realms", allRealmFields("acme"))
	mustStatus(t, created, http.StatusCreated)
	before := created.object(t)
	fields := []struct {
		field string
		value any
	}{
		{"name", "renamed"}, {"eventsEnabled", false}, {"eventsExpiration", 120},
		{"adminEventsEnabled", false}, {"id", "6f1c7a43-0000-4000-8000-000000000000"}, {"createdTimestamp", 1},
		{"foo", 1}, {"DisplayName", "x"},
	}
	for _, method := range []string{http.MethodPut, http.MethodPatch} {
		for _, f := range fields {
			t.Run(method+" "+f.field, func(t *testing.T) {
				// A valid field beside it must not be applied either.
				r := s.admin(method, "/admin/realms/acme", map[string]any{"displayName": "changed", f.field: f.value})
				mustError(t, r, http.StatusBadRequest, "unknown_field", f.field)
				mustEqualJSON(t, "realm after rejected update", s.getRealmJSON("acme"), before)
			})
		}
	}
}

// nonDefaultUpdate sets every updatable field away from its default.
func nonDefaultUpdate() map[string]any {
	return map[string]any{
		"displayName": "Acme", "enabled": false, "accessTokenLifespan": 60, "refreshTokenLifespan": 120,
		"smtpHost": "smtp.example.com", "smtpPort": 25, "smtpUser": "u", "smtpPassword": "pw-123",
		"smtpFrom": "from@example.com", "emailProvider": "sendgrid",
		"emailProviderConfig": map[string]any{"apiKey": "sg-1", "sender": "x"},
		"registrationAllowed": true, "mfaRequired": true, "themeName": "idenplane-dark",
		"theme":                map[string]any{"primaryColor": "#000000"},
		"offlineTokenLifespan": 100, "smtpSecure": true, "passwordMinLength": 12, "passwordRequireUppercase": true,
		"passwordRequireLowercase": true, "passwordRequireDigits": true, "passwordRequireSpecialChars": true,
		"passwordHistoryCount": 3, "passwordMaxAgeDays": 90, "bruteForceEnabled": false, "maxLoginFailures": 3,
		"lockoutDuration": 30, "failureResetTime": 60, "permanentLockoutAfter": 2, "requireEmailVerification": true,
		"impersonationEnabled": true, "impersonationLifetime": 120,
		"termsText": "New terms.", "termsVersion": "v2",
	}
}

func TestRealmUpdateNullResetsToDefault(t *testing.T) {
	s := newTestServer(t, fixedClock)
	// Create-only settings away from their defaults must survive the reset.
	createOnly := map[string]any{"eventsExpiration": 120}
	for _, method := range []string{http.MethodPut, http.MethodPatch} {
		t.Run(method, func(t *testing.T) {
			name := strings.ToLower(method)
			r := s.admin(http.MethodPost, "/admin/realms", cloneMap(createOnly, map[string]any{"name": name}))
			mustStatus(t, r, http.StatusCreated)
			created := r.object(t)
			mustStatus(t, s.admin(method, "/admin/realms/"+name, nonDefaultUpdate()), http.StatusOK)

			nulls := map[string]any{}
			for k := range nonDefaultUpdate() {
				nulls[k] = nil
			}
			r = s.admin(method, "/admin/realms/"+name, nulls)
			mustStatus(t, r, http.StatusOK)
			want := cloneMap(defaultRealmJSON(name), createOnly)
			want["id"], want["createdTimestamp"] = created["id"], created["createdTimestamp"]
			mustEqualJSON(t, "realm after null update", r.object(t), want)
			mustEqualJSON(t, "realm on GET", s.getRealmJSON(name), want)
			if exp := s.exportSecrets(name); exp["smtpPassword"] != nil || exp["emailProviderConfig"] != nil {
				t.Fatalf("secrets survived reset: %v %v", exp["smtpPassword"], exp["emailProviderConfig"])
			}
		})
	}
}

func TestRealmPutReplacesNestedObjects(t *testing.T) {
	s := newTestServer(t)
	r := s.admin(http.MethodPost, "/admin/realms", map[string]any{
		"name": "acme", "theme": map[string]any{"primaryColor": "#111111", "logoUrl": "https://example.com/l.png"},
		"emailProviderConfig": map[string]any{"region": "eu", "domain": "a.example"},
	})
	mustStatus(t, r, http.StatusCreated)
	r = s.admin(http.MethodPut, "/admin/realms/acme", map[string]any{
		"theme": map[string]any{"textColor": "#222222"}, "emailProviderConfig": map[string]any{"domain": "b.example"},
	})
	mustStatus(t, r, http.StatusOK)
	got := r.object(t)
	mustEqualJSON(t, "theme", got["theme"], map[string]any{"textColor": "#222222"})
	mustEqualJSON(t, "emailProviderConfig", got["emailProviderConfig"], map[string]any{"domain": "b.example"})
}

func TestRealmPatchMerges(t *testing.T) {
	s := newTestServer(t)
	r := s.admin(http.MethodPost, "/admin/realms", map[string]any{
		"name": "acme", "displayName": "Acme", "smtpPassword": "smtp-secret", "emailProvider": "mailgun",
		"theme":               map[string]any{"primaryColor": "#111111", "logoUrl": "https://example.com/l.png", "textColor": "#333333"},
		"emailProviderConfig": map[string]any{"apiKey": "mg-key-1", "domain": "a.example", "region": "eu"},
	})
	mustStatus(t, r, http.StatusCreated)
	before := r.object(t)

	steps := []struct {
		name  string
		patch map[string]any
		want  map[string]any // changes to the shown realm
		plain map[string]any // provider config as export shows it afterwards
	}{
		{"nested merge", map[string]any{"theme": map[string]any{"primaryColor": "#222222", "linkColor": "#444444"}},
			map[string]any{"theme": map[string]any{"primaryColor": "#222222", "logoUrl": "https://example.com/l.png", "textColor": "#333333", "linkColor": "#444444"}},
			map[string]any{"apiKey": "mg-key-1", "domain": "a.example", "region": "eu"}},
		{"nested null deletes", map[string]any{"theme": map[string]any{"logoUrl": nil, "textColor": nil}},
			map[string]any{"theme": map[string]any{"primaryColor": "#222222", "linkColor": "#444444"}},
			map[string]any{"apiKey": "mg-key-1", "domain": "a.example", "region": "eu"}},
		{"config merge keeps secret", map[string]any{"emailProviderConfig": map[string]any{"domain": "b.example"}},
			map[string]any{"emailProviderConfig": map[string]any{"apiKey": redacted, "domain": "b.example", "region": "eu"}},
			map[string]any{"apiKey": "mg-key-1", "domain": "b.example", "region": "eu"}},
		{"config null deletes key", map[string]any{"emailProviderConfig": map[string]any{"region": nil}},
			map[string]any{"emailProviderConfig": map[string]any{"apiKey": redacted, "domain": "b.example"}},
			map[string]any{"apiKey": "mg-key-1", "domain": "b.example"}},
		{"config new secret", map[string]any{"emailProviderConfig": map[string]any{"apiKey": "mg-key-2"}},
			map[string]any{"emailProviderConfig": map[string]any{"apiKey": redacted, "domain": "b.example"}},
			map[string]any{"apiKey": "mg-key-2", "domain": "b.example"}},
		{"scalar and top-level null", map[string]any{"displayName": nil, "enabled": false, "theme": nil},
			map[string]any{"displayName": "", "enabled": false, "theme": nil},
			map[string]any{"apiKey": "mg-key-2", "domain": "b.example"}},
	}
	want := before
	for _, st := range steps {
		r := s.admin(http.MethodPatch, "/admin/realms/acme", st.patch)
		mustStatus(t, r, http.StatusOK)
		want = cloneMap(want, st.want)
		mustEqualJSON(t, st.name+": patched realm", r.object(t), want)
		mustEqualJSON(t, st.name+": realm on GET", s.getRealmJSON("acme"), want)
		exp := s.exportSecrets("acme")
		mustEqualJSON(t, st.name+": exported config", exp["emailProviderConfig"], st.plain)
		if exp["smtpPassword"] != "smtp-secret" {
			t.Fatalf("%s: smtpPassword %v", st.name, exp["smtpPassword"])
		}
	}
	// mailgun needs a config: resetting it alone is refused.
	r = s.admin(http.MethodPatch, "/admin/realms/acme", map[string]any{"emailProviderConfig": nil})
	mustError(t, r, http.StatusBadRequest, "invalid_field", "emailProviderConfig")
	mustEqualJSON(t, "realm after refused patch", s.getRealmJSON("acme"), want)
}

func TestRealmUpdateUnknownRealm(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	for _, method := range []string{http.MethodPut, http.MethodPatch} {
		r := s.admin(method, "/admin/realms/nope", map[string]any{"displayName": "x"})
		mustError(t, r, http.StatusNotFound, "not_found", "")
	}
	mustError(t, s.admin(http.MethodDelete, "/admin/realms/nope", nil), http.StatusNotFound, "not_found", "")
	mustError(t, s.admin(http.MethodGet, "/admin/realms/nope/export", nil), http.StatusNotFound, "not_found", "")
	if names := s.realmNames(); !slices.Equal(names, []string{"acme"}) {
		t.Fatalf("realms %v", names)
	}
}

func TestRealmUpdateInvalidLeavesRealmUnchanged(t *testing.T) {
	s := newTestServer(t)
	r := s.admin(http.MethodPost, "/admin/realms", map[string]any{
		"name": "acme", "displayName": "Acme", "smtpPassword": "keep-me", "theme": map[string]any{"primaryColor": "#111111"},
		"emailProviderConfig": map[string]any{"apiKey": "k-1"},
	})
	mustStatus(t, r, http.StatusCreated)
	before := r.object(t)
	beforeExport := s.exportSecrets("acme")
	big := `{"displayName":"` + strings.Repeat("a", 1<<20) + `"}`
	cases := []struct {
		name    string
		body    any
		headers []string
		status  int
		code    string
		field   string
	}{
		{"enabled string", `{"displayName":"x","enabled":"yes"}`, nil, 400, "invalid_field", "enabled"},
		{"lifespan string", `{"displayName":"x","accessTokenLifespan":"300"}`, nil, 400, "invalid_field", "accessTokenLifespan"},
		{"lifespan fraction", `{"displayName":"x","accessTokenLifespan":1.5}`, nil, 400, "invalid_field", "accessTokenLifespan"},
		{"theme not object", `{"displayName":"x","theme":"dark"}`, nil, 400, "invalid_field", "theme"},
		{"smtpPassword number", `{"displayName":"x","smtpPassword":5}`, nil, 400, "invalid_field", "smtpPassword"},
		{"accessTokenLifespan 0", `{"displayName":"x","accessTokenLifespan":0}`, nil, 400, "invalid_field", "accessTokenLifespan"},
		{"refreshTokenLifespan negative", `{"displayName":"x","refreshTokenLifespan":-1}`, nil, 400, "invalid_field", "refreshTokenLifespan"},
		{"smtpPort 70000", `{"displayName":"x","smtpPort":70000}`, nil, 400, "invalid_field", "smtpPort"},
		{"smtpPort 0", `{"displayName":"x","smtpPort":0}`, nil, 400, "invalid_field", "smtpPort"},
		{"smtpFrom bad", `{"displayName":"x","smtpFrom":"nope"}`, nil, 400, "invalid_field", "smtpFrom"},
		{"provider pigeon", `{"displayName":"x","emailProvider":"pigeon"}`, nil, 400, "invalid_field", "emailProvider"},
		{"sendgrid config null", `{"displayName":"x","emailProvider":"sendgrid","emailProviderConfig":null}`, nil, 400, "invalid_field", "emailProviderConfig"},
		{"unknown theme key", `{"displayName":"x","theme":{"foo":"x"}}`, nil, 400, "unknown_field", "theme.foo"},
		{"bad color", `{"displayName":"x","theme":{"primaryColor":"blue"}}`, nil, 400, "invalid_field", "theme.primaryColor"},
		{"javascript url", `{"displayName":"x","theme":{"logoUrl":"javascript:alert(1)"}}`, nil, 400, "invalid_field", "theme.logoUrl"},
		{"bad font", `{"displayName":"x","theme":{"fontFamily":"a;b{}"}}`, nil, 400, "invalid_field", "theme.fontFamily"},
		{"unknown themeName", `{"displayName":"x","themeName":"nope"}`, nil, 400, "invalid_field", "themeName"},
		{"malformed", `{"displayName":"x"`, nil, 400, "invalid_json", ""},
		{"array", `[{"displayName":"x"}]`, nil, 400, "invalid_json", ""},
		{"null body", `null`, nil, 400, "invalid_json", ""},
		{"empty", "", nil, 400, "invalid_json", ""},
		{"trailing data", `{"displayName":"x"} x`, nil, 400, "invalid_json", ""},
		{"text/plain", `{"displayName":"x"}`, []string{"Content-Type: text/plain"}, 415, "unsupported_media_type", ""},
		{"over 1 MiB", big, nil, 413, "payload_too_large", ""},
	}
	for _, method := range []string{http.MethodPut, http.MethodPatch} {
		for _, c := range cases {
			t.Run(method+" "+c.name, func(t *testing.T) {
				mustError(t, s.admin(method, "/admin/realms/acme", c.body, c.headers...), c.status, c.code, c.field)
				mustEqualJSON(t, "realm after rejected update", s.getRealmJSON("acme"), before)
				mustEqualJSON(t, "export after rejected update", s.exportSecrets("acme"), beforeExport)
			})
		}
	}
}

func TestRealmDelete(t *testing.T) {
	s := newTestServer(t)
	r := s.admin(http.MethodPost, "/admin/realms", map[string]any{"name": "acme", "displayName": "Acme", "smtpPassword": "pw-secret"})
	mustStatus(t, r, http.StatusCreated)
	created := r.object(t)
	other := s.createRealm("other")
	s.createUser("acme", map[string]any{"username": "alice", "email": "alice@example.com"})
	s.createUser("acme", map[string]any{"username": "bob"})
	s.createUser("other", map[string]any{"username": "alice"})

	r = s.admin(http.MethodDelete, "/admin/realms/acme", nil)
	mustStatus(t, r, http.StatusOK)
	mustEqualJSON(t, "deleted realm", r.object(t), created)
	if bytes.Contains(r.Body, []byte("pw-secret")) {
		t.Fatalf("delete response leaks the SMTP password: %s", r.Body)
	}

	mustError(t, s.admin(http.MethodGet, "/admin/realms/acme", nil), http.StatusNotFound, "not_found", "")
	mustError(t, s.admin(http.MethodGet, "/admin/realms/acme/users", nil), http.StatusNotFound, "not_found", "")
	mustError(t, s.admin(http.MethodDelete, "/admin/realms/acme", nil), http.StatusNotFound, "not_found", "")
	if names := s.realmNames(); !slices.Equal(names, []string{"other"}) {
		t.Fatalf("realms after delete %v", names)
	}

	if users, err := s.store.AllUsers(context.Background(), created["id"].(string)); err != nil || len(users) != 0 {
		t.Fatalf("%d users of the deleted realm remain in the database (%v)", len(users), err)
	}

	recreated := s.createRealm("acme")
	if recreated["id"] == created["id"] {
		t.Fatalf("re-created realm reuses id %v", created["id"])
	}
	r = s.admin(http.MethodGet, "/admin/realms/acme/users", nil)
	mustStatus(t, r, http.StatusOK)
	mustEqualJSON(t, "users of re-created realm", r.object(t), map[string]any{"total": 0, "users": []any{}})
	// The other realm and its user are untouched.
	mustEqualJSON(t, "other realm", s.getRealmJSON("other"), other)
	r = s.admin(http.MethodGet, "/admin/realms/other/users", nil)
	mustStatus(t, r, http.StatusOK)
	if total := r.object(t)["total"]; total != float64(1) {
		t.Fatalf("other realm has %v users, want 1", total)
	}
}

func TestRealmRoutes(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	cases := []struct {
		method, path string
		status       int
		code         string
	}{
		{http.MethodPost, "/admin/realms/acme", 405, "method_not_allowed"},
		{http.MethodDelete, "/admin/realms", 405, "method_not_allowed"},
		{http.MethodPut, "/admin/realms", 405, "method_not_allowed"},
		{http.MethodPost, "/admin/realms/themes", 405, "method_not_allowed"},
		{http.MethodGet, "/admin/nothing", 404, "not_found"},
		{http.MethodGet, "/admin/realms/acme/nothing", 404, "not_found"},
		{http.MethodGet, "/nothing", 404, "not_found"},
	}
	for _, c := range cases {
		r := s.admin(c.method, c.path, nil)
		mustError(t, r, c.status, c.code, "")
	}
}

// secretConfig is a provider config with secret and plain entries.
func secretConfig() map[string]any {
	return map[string]any{
		"apiKey": "sg-API-KEY-123", "webhookSecret": "wh-SECRET-456", "authToken": "tok-789",
		"smtpPassword": "cfg-pw-000", "PRIVATE_KEY": "pk-ABC", "domain": "mail.example.com", "region": "eu", "port": 2525,
	}
}

func redactedSecretConfig() map[string]any {
	return map[string]any{
		"apiKey": redacted, "webhookSecret": redacted, "authToken": redacted, "smtpPassword": redacted,
		"PRIVATE_KEY": redacted, "domain": "mail.example.com", "region": "eu", "port": 2525,
	}
}

var plaintextSecrets = []string{"smtp-plain-Pa55", "sg-API-KEY-123", "wh-SECRET-456", "tok-789", "cfg-pw-000", "pk-ABC"}

func TestRealmSecretsRedactedInResponses(t *testing.T) {
	s := newTestServer(t)
	check := func(t *testing.T, what string, r *testResponse, realm map[string]any) {
		t.Helper()
		for _, p := range plaintextSecrets {
			if bytes.Contains(r.Body, []byte(p)) {
				t.Fatalf("%s leaks %q: %s", what, p, r.Body)
			}
		}
		if realm["smtpPassword"] != redacted {
			t.Fatalf("%s: smtpPassword %v, want %q", what, realm["smtpPassword"], redacted)
		}
		mustEqualJSON(t, what+": emailProviderConfig", realm["emailProviderConfig"], redactedSecretConfig())
	}
	r := s.admin(http.MethodPost, "/admin/realms", map[string]any{
		"name": "acme", "smtpPassword": "smtp-plain-Pa55", "emailProvider": "sendgrid", "emailProviderConfig": secretConfig(),
	})
	mustStatus(t, r, http.StatusCreated)
	check(t, "create", r, r.object(t))

	r = s.admin(http.MethodGet, "/admin/realms/acme", nil)
	mustStatus(t, r, http.StatusOK)
	check(t, "get", r, r.object(t))

	r = s.admin(http.MethodGet, "/admin/realms", nil)
	mustStatus(t, r, http.StatusOK)
	var list []map[string]any
	r.decode(t, &list)
	if len(list) != 1 {
		t.Fatalf("list has %d realms", len(list))
	}
	check(t, "list", r, list[0])

	r = s.admin(http.MethodGet, "/admin/realms/acme/export", nil)
	mustStatus(t, r, http.StatusOK)
	check(t, "export without secrets", r, r.object(t))

	r = s.admin(http.MethodPut, "/admin/realms/acme", map[string]any{"displayName": "PUT"})
	mustStatus(t, r, http.StatusOK)
	check(t, "put", r, r.object(t))

	r = s.admin(http.MethodPatch, "/admin/realms/acme", map[string]any{"displayName": "PATCH"})
	mustStatus(t, r, http.StatusOK)
	check(t, "patch", r, r.object(t))

	exp := s.exportSecrets("acme")
	if exp["smtpPassword"] != "smtp-plain-Pa55" {
		t.Fatalf("export smtpPassword %v", exp["smtpPassword"])
	}
	mustEqualJSON(t, "exported config", exp["emailProviderConfig"], secretConfig())

	r = s.admin(http.MethodDelete, "/admin/realms/acme", nil)
	mustStatus(t, r, http.StatusOK)
	check(t, "delete", r, r.object(t))
}

func TestRealmSecretsAbsentWhenUnset(t *testing.T) {
	s := newTestServer(t)
	check := func(what string, realm map[string]any) {
		t.Helper()
		for _, k := range []string{"smtpPassword", "emailProviderConfig"} {
			if v, ok := realm[k]; ok {
				t.Fatalf("%s: %s present (%v) though unset", what, k, v)
			}
		}
	}
	created := s.createRealm("acme")
	check("create", created)
	check("get", s.getRealmJSON("acme"))
	r := s.admin(http.MethodGet, "/admin/realms", nil)
	var list []map[string]any
	r.decode(t, &list)
	check("list", list[0])
	r = s.admin(http.MethodPut, "/admin/realms/acme", map[string]any{"displayName": "x"})
	mustStatus(t, r, http.StatusOK)
	check("put", r.object(t))
	r = s.admin(http.MethodPatch, "/admin/realms/acme", map[string]any{"displayName": "y"})
	mustStatus(t, r, http.StatusOK)
	check("patch", r.object(t))
	check("export with secrets", s.exportSecrets("acme"))
	r = s.admin(http.MethodDelete, "/admin/realms/acme", nil)
	mustStatus(t, r, http.StatusOK)
	check("delete", r.object(t))
}

func TestRealmSmtpPasswordUpdate(t *testing.T) {
	cases := []struct {
		name  string
		body  map[string]any
		plain any // smtpPassword in export afterwards; nil means absent
	}{
		{"omitted keeps", map[string]any{"displayName": "x"}, "orig-pw"},
		{"redacted placeholder keeps", map[string]any{"smtpPassword": redacted}, "orig-pw"},
		{"new value changes", map[string]any{"smtpPassword": "new-pw"}, "new-pw"},
		{"empty string clears", map[string]any{"smtpPassword": ""}, nil},
		{"null clears", map[string]any{"smtpPassword": nil}, nil},
	}
	s := newTestServer(t)
	for _, method := range []string{http.MethodPut, http.MethodPatch} {
		for i, c := range cases {
			t.Run(method+" "+c.name, func(t *testing.T) {
				name := fmt.Sprintf("%s-%d", strings.ToLower(method), i)
				mustStatus(t, s.admin(http.MethodPost, "/admin/realms", map[string]any{"name": name, "smtpPassword": "orig-pw"}), http.StatusCreated)
				r := s.admin(method, "/admin/realms/"+name, c.body)
				mustStatus(t, r, http.StatusOK)
				got := r.object(t)
				wantShown := any(nil)
				if c.plain != nil {
					wantShown = redacted
				}
				if got["smtpPassword"] != wantShown {
					t.Fatalf("response smtpPassword %v, want %v", got["smtpPassword"], wantShown)
				}
				if shown := s.getRealmJSON(name)["smtpPassword"]; shown != wantShown {
					t.Fatalf("GET smtpPassword %v, want %v", shown, wantShown)
				}
				if plain := s.exportSecrets(name)["smtpPassword"]; plain != c.plain {
					t.Fatalf("stored smtpPassword %v, want %v", plain, c.plain)
				}
			})
		}
	}
}

func TestRealmProviderConfigSecretUpdate(t *testing.T) {
	shown := func(changes map[string]any) map[string]any { return cloneMap(redactedSecretConfig(), changes) }
	cases := []struct {
		method string
		name   string
		config any
		plain  map[string]any
	}{
		{http.MethodPut, "redacted values sent back keep secrets", redactedSecretConfig(), secretConfig()},
		{http.MethodPut, "new apiKey", shown(map[string]any{"apiKey": "sg-NEW"}),
			cloneMap(secretConfig(), map[string]any{"apiKey": "sg-NEW"})},
		{http.MethodPut, "replaced whole", map[string]any{"apiKey": "only-key"}, map[string]any{"apiKey": "only-key"}},
		{http.MethodPatch, "redacted values sent back keep secrets", redactedSecretConfig(), secretConfig()},
		{http.MethodPatch, "one redacted key keeps it", map[string]any{"apiKey": redacted}, secretConfig()},
		{http.MethodPatch, "new token", map[string]any{"authToken": "tok-NEW"},
			cloneMap(secretConfig(), map[string]any{"authToken": "tok-NEW"})},
		{http.MethodPatch, "delete secret", map[string]any{"webhookSecret": nil},
			cloneMap(secretConfig(), map[string]any{"webhookSecret": nil})},
	}
	s := newTestServer(t)
	for i, c := range cases {
		t.Run(c.method+" "+c.name, func(t *testing.T) {
			name := fmt.Sprintf("cfg-%d", i)
			mustStatus(t, s.admin(http.MethodPost, "/admin/realms", map[string]any{
				"name": name, "emailProvider": "sendgrid", "emailProviderConfig": secretConfig(),
			}), http.StatusCreated)
			r := s.admin(c.method, "/admin/realms/"+name, map[string]any{"emailProviderConfig": c.config})
			mustStatus(t, r, http.StatusOK)
			wantShown := redactConfig(c.plain)
			mustEqualJSON(t, "response config", r.object(t)["emailProviderConfig"], wantShown)
			mustEqualJSON(t, "stored config", s.exportSecrets(name)["emailProviderConfig"], c.plain)
		})
	}
}

// TestRealmSecretsEncryptedAtRest reads the database file whole, with its
// log: none of a realm's secrets is in it in the clear, however set.
// (store's own tests check the sealed columns row by row.)
func TestRealmSecretsEncryptedAtRest(t *testing.T) {
	if pgtest.OnPostgres() {
		t.Skip("reads the SQLite file; the store seals before any SQL, whatever the backend")
	}
	s := newTestServer(t)
	inFile := func(plain string) bool {
		t.Helper()
		for _, suffix := range []string{"", "-wal"} {
			data, err := os.ReadFile(s.dbPath + suffix)
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Fatal(err)
			}
			if bytes.Contains(data, []byte(plain)) {
				return true
			}
		}
		return false
	}
	// Admin events off: an event's representation shows the config's
	// plain entries (the domain) as the API does, its secrets redacted
	// (TestAdminEventRedaction); this looks for the realm's own copy.
	r := s.admin(http.MethodPost, "/admin/realms", map[string]any{
		"name": "acme", "smtpPassword": "smtp-plain-Pa55", "emailProvider": "sendgrid", "emailProviderConfig": secretConfig(),
		"adminEventsEnabled": false,
	})
	mustStatus(t, r, http.StatusCreated)
	exp := s.exportSecrets("acme")
	if exp["smtpPassword"] != "smtp-plain-Pa55" {
		t.Fatalf("stored password %v", exp["smtpPassword"])
	}
	mustEqualJSON(t, "stored config", exp["emailProviderConfig"], secretConfig())
	// The realm's plain fields are there to be seen: the scan reads the
	// right file.
	if !inFile("sendgrid") {
		t.Fatal("the realm's email provider is not in the database file")
	}
	for _, p := range append(plaintextSecrets, "mail.example.com") {
		if inFile(p) {
			t.Fatalf("plaintext %q stored at rest", p)
		}
	}

	// A new secret is encrypted too.
	r = s.admin(http.MethodPatch, "/admin/realms/acme", map[string]any{
		"smtpPassword": "rotated-PW-42", "emailProviderConfig": map[string]any{"apiKey": "sg-ROTATED-42"},
	})
	mustStatus(t, r, http.StatusOK)
	exp = s.exportSecrets("acme")
	if exp["smtpPassword"] != "rotated-PW-42" {
		t.Fatalf("stored password %v", exp["smtpPassword"])
	}
	if cfg, _ := exp["emailProviderConfig"].(map[string]any); cfg["apiKey"] != "sg-ROTATED-42" {
		t.Fatalf("stored config %v", exp["emailProviderConfig"])
	}
	if inFile("rotated-PW-42") || inFile("sg-ROTATED-42") {
		t.Fatal("rotated secret stored in plaintext")
	}
	// A cleared one is gone (and store keeps no ciphertext of it).
	mustStatus(t, s.admin(http.MethodPatch, "/admin/realms/acme", map[string]any{"smtpPassword": nil}), http.StatusOK)
	realm, err := s.store.GetRealm(context.Background(), "acme")
	if err != nil || realm.SMTPPassword != "" {
		t.Fatalf("cleared smtp password still stored: %q (%v)", realm.SMTPPassword, err)
	}
}

// Bugs found while writing these tests; each is skipped so the suite stays
// green, and listed in the report.

func TestRealmCreateRejectsTrailingBrackets(t *testing.T) {
	s := newTestServer(t)
	for _, body := range []string{`{"name":"acme"}}`, `{"name":"acme"}]`} {
		mustError(t, s.admin(http.MethodPost, "/admin/realms", body), http.StatusBadRequest, "invalid_json", "")
	}
	s.createRealm("other")
	mustError(t, s.admin(http.MethodPut, "/admin/realms/other", `{"displayName":"x"}}`), http.StatusBadRequest, "invalid_json", "")
}

func TestRealmCreateFieldNamesAreCaseSensitive(t *testing.T) {
	s := newTestServer(t)
	r := s.admin(http.MethodPost, "/admin/realms", `{"name":"acme","ENABLED":false}`)
	mustError(t, r, http.StatusBadRequest, "unknown_field", "ENABLED")
}

func TestRealmProviderConfigNonStringSecretRedacted(t *testing.T) {
	s := newTestServer(t)
	r := s.admin(http.MethodPost, "/admin/realms", map[string]any{
		"name": "acme", "emailProvider": "sendgrid",
		"emailProviderConfig": map[string]any{"apiKeys": map[string]any{"primary": "sg-NESTED-1"}, "pinToken": 123456789},
	})
	mustStatus(t, r, http.StatusCreated)
	for _, leak := range []string{"sg-NESTED-1", "123456789"} {
		if bytes.Contains(r.Body, []byte(leak)) {
			t.Fatalf("create response shows secret %s: %s", leak, r.Body)
		}
	}
}
