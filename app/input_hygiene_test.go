package app

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/scopes"
	"github.com/idenplane/idenplane/store"
)

// hygieneBadChars are characters no name may hold: C0 and C1 controls, DEL,
// a bidi override, a bidi isolate and a bidi mark.
var hygieneBadChars = []struct{ name, char string }{
	{"NUL", "\x00"}, {"ESC", "\x1b"}, {"RLO", "\u202e"}, {"LRI", "\u2066"}, {"RLM", "\u200f"}, {"NEL", "\u0085"}, {"DEL", "\x7f"},
}

// hygieneField is one stored string of an endpoint: body builds a request
// body holding value there, field is the name the 400 must give.
type hygieneField struct {
	field string
	// value is a valid value around the middle of which the bad character goes.
	value string
	body  func(v string) any
	// allows lists bad characters this field keeps on purpose: free text
	// keeps the bidi marks that mixed-direction prose needs.
	allows string
	// controlsOnly: a secret, which may hold any visible character.
	controlsOnly bool
}

// hygieneBad puts c into the middle of v.
func hygieneBad(v, c string) string {
	i := len(v) / 2
	for i < len(v) && !utf8.RuneStart(v[i]) {
		i++
	}
	return v[:i] + c + v[i:]
}

// hygieneRefused sends every bad character in every field through send and
// wants a 400 invalid_field naming the field.
func hygieneRefused(t *testing.T, fields []hygieneField, send func(body any) *testResponse) {
	t.Helper()
	for _, f := range fields {
		for _, bad := range hygieneBadChars {
			if strings.Contains(f.allows, bad.char) || (f.controlsOnly && !hygieneIsControl(bad.char)) {
				continue
			}
			t.Run(f.field+"/"+bad.name, func(t *testing.T) {
				mustError(t, send(f.body(hygieneBad(f.value, bad.char))), http.StatusBadRequest, "invalid_field", f.field)
			})
		}
	}
}

func hygieneIsControl(s string) bool { return s < " " || s == "\x7f" || s == "\u0085" }

// hObj builds a JSON object from alternating keys and values.
func hObj(kv ...any) map[string]any {
	m := map[string]any{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

func TestHygieneAdminUsers(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	fields := []hygieneField{
		{field: "username", value: "alice", body: func(v string) any { return hObj("username", v) }},
		{field: "firstName", value: "Alice", body: func(v string) any { return hObj("username", "alice", "firstName", v) }},
		{field: "lastName", value: "Liddell", body: func(v string) any { return hObj("username", "alice", "lastName", v) }},
		{field: "email", value: "alice@example.test", body: func(v string) any { return hObj("username", "alice", "email", v) }},
	}
	hygieneRefused(t, fields, func(body any) *testResponse {
		return s.admin(http.MethodPost, "/admin/realms/acme/users", body)
	})
	id := s.createUser("acme", hObj("username", "jürgen"))["id"].(string)
	hygieneRefused(t, fields[1:], func(body any) *testResponse {
		return s.admin(http.MethodPut, "/admin/realms/acme/users/"+id, body)
	})
	for _, tc := range []struct{ name, field, value string }{
		{"a zero-width joiner in a username", "username", "ab\u200dcd"},
		{"a zero-width space in a username", "username", "ab\u200bcd"},
		{"an ideographic space in a username", "username", "日本\u3000太郎"},
		{"markup in a username", "username", "<script>"},
		{"markup in a first name", "firstName", "<b>Al</b>"},
		{"a soft hyphen in a last name", "lastName", "Lid\u00addell"},
		{"a Hangul filler as a first name", "firstName", "\u3164"},
		{"a word joiner in an email", "email", "al\u2060ice@example.test"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := hObj("username", "alice2", tc.field, tc.value)
			mustError(t, s.admin(http.MethodPost, "/admin/realms/acme/users", body), http.StatusBadRequest, "invalid_field", tc.field)
		})
	}

	// Letters of every script stay welcome, and emoji with their joiners in names people read.
	for _, u := range []map[string]any{
		hObj("username", "日本", "firstName", "Jürgen", "lastName", "Müller-Lüdenscheidt"),
		hObj("username", "zoë.o'brien", "firstName", "Zoë", "lastName", "O'Brien", "email", "zoë@example.test"),
		hObj("username", "محمد", "firstName", "محمد", "lastName", "می\u200cخواهم"),
		hObj("username", "dev", "firstName", "Dev 👩\u200d💻", "lastName", "❤\ufe0f"),
	} {
		got := s.createUser("acme", u)
		for k, v := range u {
			if k != "email" && got[k] != v {
				t.Errorf("%s: stored %q, want %q", k, got[k], v)
			}
		}
	}
}

func TestHygieneAdminRealms(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	hygieneRefused(t, []hygieneField{
		{field: "name", value: "beta", body: func(v string) any { return hObj("name", v) }},
		{field: "displayName", value: "Beta", body: func(v string) any { return hObj("name", "beta", "displayName", v) }},
	}, func(body any) *testResponse { return s.admin(http.MethodPost, "/admin/realms", body) })

	hygieneRefused(t, []hygieneField{
		{field: "displayName", value: "Acme", body: func(v string) any { return hObj("displayName", v) }},
		{field: "smtpHost", value: "mail.acme.test", body: func(v string) any { return hObj("smtpHost", v) }},
		{field: "smtpUser", value: "mailer", body: func(v string) any { return hObj("smtpUser", v) }},
		{field: "smtpFrom", value: "noreply@acme.test", body: func(v string) any { return hObj("smtpFrom", v) }},
		{field: "smtpPassword", value: "s3cret", controlsOnly: true, body: func(v string) any { return hObj("smtpPassword", v) }},
		{field: "theme.logoUrl", value: "https://acme.test/logo.png", body: func(v string) any {
			return hObj("theme", hObj("logoUrl", v))
		}},
		{field: "emailProviderConfig.apiKey", value: "re_123456", body: func(v string) any {
			return hObj("emailProvider", "resend", "emailProviderConfig", hObj("apiKey", v))
		}},
		{field: "emailProviderConfig.domain", value: "mg.acme.test", body: func(v string) any {
			return hObj("emailProvider", "mailgun", "emailProviderConfig", hObj("apiKey", "k", "domain", v))
		}},
		{field: "emailProviderConfig.baseUrl", value: "https://relay.acme.test", body: func(v string) any {
			return hObj("emailProvider", "resend", "emailProviderConfig", hObj("apiKey", "k", "baseUrl", v))
		}},
		{field: "emailProviderConfig", value: "apiKey", body: func(v string) any {
			return hObj("emailProvider", "resend", "emailProviderConfig", hObj(v, "k"))
		}},
	}, func(body any) *testResponse { return s.admin(http.MethodPatch, "/admin/realms/acme", body) })

	for _, tc := range []struct{ name, host string }{
		{"a space", "mail acme.test"}, {"a port", "mail.acme.test:25"}, {"a user", "u@mail.acme.test"},
		{"a path", "mail.acme.test/x"}, {"an empty label", "mail..acme.test"}, {"a label starting with a hyphen", "-mail.acme.test"},
		{"a non-ASCII letter", "mäil.acme.test"},
	} {
		t.Run("smtpHost with "+tc.name, func(t *testing.T) {
			mustError(t, s.admin(http.MethodPatch, "/admin/realms/acme", hObj("smtpHost", tc.host)), http.StatusBadRequest, "invalid_field", "smtpHost")
		})
	}
	for _, good := range []map[string]any{
		hObj("displayName", "Acme 日本 ❤\ufe0f", "smtpHost", "smtp-relay_1.acme.test", "smtpUser", "mailer@acme.test",
			"smtpPassword", "p<a>ss wörd", "smtpFrom", "noreply@acme.test"),
		hObj("displayName", "می\u200cخواهم", "smtpHost", "192.0.2.25"),
		hObj("emailProvider", "mailgun", "emailProviderConfig", hObj("apiKey", "key-1", "domain", "mg.acme.test", "region", "eu")),
	} {
		mustStatus(t, s.admin(http.MethodPatch, "/admin/realms/acme", good), http.StatusOK)
	}
}

func TestHygieneAdminClients(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	hygieneRefused(t, []hygieneField{
		{field: "clientId", value: "web-app", body: func(v string) any { return hObj("clientId", v) }},
		{field: "name", value: "Web app", body: func(v string) any { return hObj("clientId", "web", "name", v) }},
		{field: "description", value: "The web app", allows: "\u200f", body: func(v string) any {
			return hObj("clientId", "web", "description", v)
		}},
		{field: "redirectUris[1]", value: "https://app.acme.test/cb", body: func(v string) any {
			return hObj("clientId", "web", "redirectUris", []string{"https://app.acme.test/ok", v})
		}},
		{field: "webOrigins[0]", value: "https://app.acme.test", body: func(v string) any {
			return hObj("clientId", "web", "webOrigins", []string{v})
		}},
		{field: "backchannelLogoutUri", value: "https://app.acme.test/logout", body: func(v string) any {
			return hObj("clientId", "web", "backchannelLogoutUri", v)
		}},
	}, func(body any) *testResponse { return s.admin(http.MethodPost, "/admin/realms/acme/clients", body) })

	got := s.clientsTestCreate("acme", hObj("clientId", "web", "name", "Web 👩\u200d💻 日本",
		"description", "Line one,\n\tline two; עברית\u200f (Hebrew)", "redirectUris", []string{"https://app.acme.test/日本"}))
	if got["name"] != "Web 👩\u200d💻 日本" || !strings.Contains(got["description"].(string), "\n\t") {
		t.Fatalf("created %v", got)
	}
	mustError(t, s.admin(http.MethodPost, "/admin/realms/acme/clients", hObj("clientId", "web2", "name", "\u200dWeb")),
		http.StatusBadRequest, "invalid_field", "name")
}

func TestHygieneAdminRolesAndGroups(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	s.clientsTestCreate("acme", hObj("clientId", "api"))
	roleFields := []hygieneField{
		{field: "name", value: "admin", body: func(v string) any { return hObj("name", v) }},
		{field: "description", value: "Administers", allows: "\u200f", body: func(v string) any { return hObj("name", "x", "description", v) }},
	}
	for _, path := range []string{rolesPath("acme"), rolesClientPath("acme", "api")} {
		hygieneRefused(t, roleFields, func(body any) *testResponse { return s.admin(http.MethodPost, path, body) })
	}
	groupFields := []hygieneField{
		{field: "name", value: "staff", body: func(v string) any { return hObj("name", v) }},
		{field: "description", value: "Everyone", allows: "\u200f", body: func(v string) any { return hObj("name", "x", "description", v) }},
	}
	hygieneRefused(t, groupFields, func(body any) *testResponse { return s.admin(http.MethodPost, "/admin/realms/acme/groups", body) })
	parent := s.groupsTestCreate("acme", "staff", "")["id"].(string)
	hygieneRefused(t, groupFields, func(body any) *testResponse {
		return s.admin(http.MethodPost, "/admin/realms/acme/groups/"+parent+"/children", body)
	})
	hygieneRefused(t, groupFields, func(body any) *testResponse {
		return s.admin(http.MethodPut, "/admin/realms/acme/groups/"+parent, body)
	})
	for _, name := range []string{"a\u200db", "<b>", "a\u00a0b"} {
		mustError(t, s.admin(http.MethodPost, rolesPath("acme"), hObj("name", name)), http.StatusBadRequest, "invalid_field", "name")
		mustError(t, s.admin(http.MethodPost, "/admin/realms/acme/groups", hObj("name", name)), http.StatusBadRequest, "invalid_field", "name")
	}

	s.rolesTestCreate(rolesPath("acme"), "日本")
	mustStatus(t, s.admin(http.MethodPost, rolesPath("acme"), hObj("name", "Jürgen's role", "description", "R&D <team>\nline two")), http.StatusCreated)
	s.groupsTestCreate("acme", "Jürgen & 日本", "")
}

func TestHygieneAdminScopes(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	mapper := func(cfg map[string]any) map[string]any {
		return hObj("name", "tier", "mapperType", scopes.MapperHardcoded, "config", cloneMap(hObj("claim.name", "tier", "claim.value", "gold"), cfg))
	}
	hygieneRefused(t, []hygieneField{
		{field: "name", value: "api", body: func(v string) any { return hObj("name", v) }},
		{field: "description", value: "The API", allows: "\u200f", body: func(v string) any { return hObj("name", "x", "description", v) }},
		{field: "protocolMappers[0].name", value: "tier", body: func(v string) any {
			return hObj("name", "x", "protocolMappers", []any{hObj("name", v, "mapperType", scopes.MapperFullName)})
		}},
		{field: "protocolMappers[0].config.claim.name", value: "tier", body: func(v string) any {
			return hObj("name", "x", "protocolMappers", []any{mapper(hObj("claim.name", v))})
		}},
		{field: "protocolMappers[0].config.claim.value", value: "gold", allows: "\u200f", body: func(v string) any {
			return hObj("name", "x", "protocolMappers", []any{mapper(hObj("claim.value", v))})
		}},
	}, func(body any) *testResponse {
		return s.admin(http.MethodPost, "/admin/realms/acme/client-scopes", body)
	})

	path := scopesTestMapperPath(t, s, "api")
	hygieneRefused(t, []hygieneField{
		{field: "name", value: "nick", body: func(v string) any {
			return hObj("name", v, "mapperType", scopes.MapperUserAttribute, "config", hObj("user.attribute", "nick", "claim.name", "nick"))
		}},
		{field: "config.user.attribute", value: "nick", body: func(v string) any {
			return hObj("name", "m", "mapperType", scopes.MapperUserAttribute, "config", hObj("user.attribute", v, "claim.name", "nick"))
		}},
		{field: "config.claim.name", value: "org.nick", body: func(v string) any {
			return hObj("name", "m", "mapperType", scopes.MapperUserAttribute, "config", hObj("user.attribute", "nick", "claim.name", v))
		}},
	}, func(body any) *testResponse { return s.admin(http.MethodPost, path, body) })

	// Claim names: ASCII letters, digits and _ - : /, dots between nested names.
	for _, name := range []string{"<b>", "a b", "naïve", "a$b", "a{b}", "a\"b", "${client_id}", "a\\b"} {
		mustError(t, s.admin(http.MethodPost, path, hObj("name", "m", "mapperType", scopes.MapperHardcoded,
			"config", hObj("claim.name", name, "claim.value", "x"))), http.StatusBadRequest, "invalid_field", "config.claim.name")
	}
	for i, name := range []string{"https://acme\\.test/roles", "urn:acme:tier", "org.dept-name_2"} {
		mustStatus(t, s.admin(http.MethodPost, path, hObj("name", fmt.Sprint("ok", i), "mapperType", scopes.MapperHardcoded,
			"config", hObj("claim.name", name, "claim.value", "x"))), http.StatusCreated)
	}
	mustStatus(t, s.admin(http.MethodPost, path, hObj("name", "client roles", "mapperType", scopes.MapperClientRoles,
		"config", hObj("claim.name", "resource_access.${client_id}.roles"))), http.StatusCreated)
	// A hardcoded value is the admin's text: lines and markup are kept.
	mustStatus(t, s.admin(http.MethodPost, path, hObj("name", "motto", "mapperType", scopes.MapperHardcoded,
		"config", hObj("claim.name", "motto", "claim.value", "<b>Line</b>\nTwo"))), http.StatusCreated)
}

// TestHygieneScopeMarkup: a scope name is an RFC 6749 scope token without
// the characters HTML gives a meaning, so none can be created or imported,
// and discovery leaves out any stored before this rule.
func TestHygieneScopeMarkup(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	script := "<script>alert(1)</script>"
	for _, name := range []string{script, "a>b", "a&b", "a'b", `a"b`, `a\b`, "a b", "日本"} {
		mustError(t, s.admin(http.MethodPost, "/admin/realms/acme/client-scopes", hObj("name", name)), http.StatusBadRequest, "invalid_field", "name")
	}
	id := scopesTestCreate(t, s, hObj("name", "api:read"))["id"].(string)
	mustError(t, s.admin(http.MethodPut, "/admin/realms/acme/client-scopes/"+id, hObj("name", script)), http.StatusBadRequest, "invalid_field", "name")
	mustError(t, s.admin(http.MethodPost, "/admin/realms/import", hObj("formatVersion", 1, "name", "imp",
		"clientScopes", []any{hObj("name", script)})), http.StatusBadRequest, "invalid_field", "clientScopes[0].name")

	// A database written before the rule may hold one: it is not published.
	realm, err := s.store.GetRealm(t.Context(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	scopeID := uuid.NewString()
	if err := s.store.CreateClientScope(t.Context(), &store.ClientScope{ID: scopeID, RealmID: realm.ID, Name: script,
		Protocol: scopes.ProtocolOIDC, Mappers: []*store.ProtocolMapper{{ID: uuid.NewString(), ScopeID: scopeID, Name: "m",
			MapperType: scopes.MapperHardcoded, Protocol: scopes.ProtocolOIDC, Config: map[string]string{"claim.name": "<img>", "claim.value": "x"}}}}); err != nil {
		t.Fatal(err)
	}
	r := s.request(http.MethodGet, "/realms/acme/.well-known/openid-configuration", nil)
	mustStatus(t, r, http.StatusOK)
	var disc struct {
		Scopes []string `json:"scopes_supported"`
		Claims []string `json:"claims_supported"`
	}
	r.decode(t, &disc)
	if !slices.Contains(disc.Scopes, "api:read") || slices.Contains(disc.Scopes, script) || slices.Contains(disc.Claims, "<img>") ||
		strings.Contains(string(r.Body), "script") || strings.Contains(string(r.Body), `\u003c`) {
		t.Fatalf("discovery %s", r.Body)
	}
}

func TestHygieneRegistration(t *testing.T) {
	s := registrationServer(t)
	base := "/realms/acme/registration/admin/fields"
	hygieneRefused(t, []hygieneField{
		{field: "key", value: "nick", body: func(v string) any { return hObj("key", v, "label", "Nick", "type", "text") }},
		{field: "label", value: "Nickname", body: func(v string) any { return hObj("key", "nick", "label", v, "type", "text") }},
		{field: "options", value: "gold", body: func(v string) any {
			return hObj("key", "plan", "label", "Plan", "type", "select", "options", []string{"free", v})
		}},
		{field: "pattern", value: "[a-z]+", body: func(v string) any { return hObj("key", "nick", "label", "Nick", "type", "text", "pattern", v) }},
	}, func(body any) *testResponse { return s.admin(http.MethodPost, base, body) })
	mustStatus(t, s.admin(http.MethodPost, base, hObj("key", "nick", "label", "Spitzname 😀", "type", "text",
		"pattern", `(?P<word>\p{L}+)`)), http.StatusCreated)

	n := 0
	hygieneRefused(t, []hygieneField{
		{field: "username", value: "nina", body: func(v string) any { return registrationUser(v, nil) }},
		{field: "email", value: "nina@example.test", body: func(v string) any { return registrationUser("nina", hObj("email", v)) }},
		{field: "firstName", value: "Nina", body: func(v string) any { return registrationUser("nina", hObj("firstName", v)) }},
		{field: "lastName", value: "Simone", body: func(v string) any { return registrationUser("nina", hObj("lastName", v)) }},
		{field: "attributes.nick", value: "Nini", body: func(v string) any {
			return registrationUser("nina", hObj("attributes", hObj("nick", v)))
		}},
	}, func(body any) *testResponse {
		n++ // an address of its own for each attempt, below the per-address limit
		return registrationRegister(s, "acme", body.(map[string]any), fmt.Sprintf("198.51.%d.%d", n/250, n%250+1))
	})
	r := registrationRegister(s, "acme", registrationUser("jürgen", hObj("firstName", "Jürgen", "lastName", "日本",
		"attributes", hObj("nick", "Jü"))), "203.0.113.9")
	mustStatus(t, r, http.StatusCreated)
	if u := r.object(t)["user"].(map[string]any); u["username"] != "jürgen" || u["lastName"] != "日本" {
		t.Fatalf("registered %v", u)
	}
}

func TestHygieneAccountProfile(t *testing.T) {
	e := newAccountEnv(t)
	tok := e.token("alice", codeflowPassword).AccessToken
	hygieneRefused(t, []hygieneField{
		{field: "firstName", value: "Alicia", body: func(v string) any { return hObj("firstName", v) }},
		{field: "lastName", value: "Liddell", body: func(v string) any { return hObj("lastName", v) }},
		{field: "email", value: "alicia@example.test", body: func(v string) any { return hObj("email", v) }},
	}, func(body any) *testResponse { return e.api(http.MethodPost, "/profile", tok, body) })
	r := e.api(http.MethodPost, "/profile", tok, hObj("firstName", "Jürgen", "lastName", "日本"))
	mustStatus(t, r, http.StatusOK)
	if got := r.object(t); got["firstName"] != "Jürgen" || got["lastName"] != "日本" {
		t.Fatalf("profile %v", got)
	}
}

func TestHygieneRealmImport(t *testing.T) {
	s := newTestServer(t)
	doc := func(change func(d map[string]any)) map[string]any {
		d := hObj("formatVersion", 1, "name", "imp", "displayName", "Imp", "smtpHost", "mail.imp.test",
			"clientScopes", []any{hObj("name", "api", "protocolMappers", []any{hObj("name", "tier", "mapperType", scopes.MapperHardcoded,
				"config", hObj("claim.name", "tier", "claim.value", "gold"))})},
			"clients", []any{hObj("clientId", "app", "name", "App", "redirectUris", []any{"https://app.imp.test/cb"})},
			"roles", hObj("realm", []any{hObj("name", "admin", "description", "Admins")}),
			"groups", []any{hObj("name", "staff")},
			"users", []any{hObj("username", "alice", "firstName", "Alice", "email", "alice@imp.test")})
		if change != nil {
			change(d)
		}
		return d
	}
	mustStatus(t, s.admin(http.MethodPost, "/admin/realms/import", doc(nil)), http.StatusCreated)
	mustStatus(t, s.admin(http.MethodDelete, "/admin/realms/imp", nil), http.StatusOK)

	at := func(list string, i int, key string) func(d map[string]any, v string) {
		return func(d map[string]any, v string) { d[list].([]any)[i].(map[string]any)[key] = v }
	}
	top := func(key string) func(d map[string]any, v string) {
		return func(d map[string]any, v string) { d[key] = v }
	}
	var fields []hygieneField
	for _, f := range []struct {
		field, value string
		set          func(d map[string]any, v string)
		allows       string
	}{
		{"name", "imp", top("name"), ""},
		{"displayName", "Imp", top("displayName"), ""},
		{"smtpHost", "mail.imp.test", top("smtpHost"), ""},
		{"clientScopes[0].name", "api", at("clientScopes", 0, "name"), ""},
		{"clientScopes[0].protocolMappers[0].config.claim.name", "tier", func(d map[string]any, v string) {
			d["clientScopes"].([]any)[0].(map[string]any)["protocolMappers"].([]any)[0].(map[string]any)["config"].(map[string]any)["claim.name"] = v
		}, ""},
		{"clients[0].clientId", "app", at("clients", 0, "clientId"), ""},
		{"clients[0].name", "App", at("clients", 0, "name"), ""},
		{"clients[0].redirectUris[0]", "https://app.imp.test/cb", func(d map[string]any, v string) {
			d["clients"].([]any)[0].(map[string]any)["redirectUris"] = []any{v}
		}, ""},
		{"roles.realm[0].name", "admin", func(d map[string]any, v string) {
			d["roles"].(map[string]any)["realm"].([]any)[0].(map[string]any)["name"] = v
		}, ""},
		{"roles.realm[0].description", "Admins", func(d map[string]any, v string) {
			d["roles"].(map[string]any)["realm"].([]any)[0].(map[string]any)["description"] = v
		}, "\u200f"},
		{"groups[0].name", "staff", at("groups", 0, "name"), ""},
		{"users[0].username", "alice", at("users", 0, "username"), ""},
		{"users[0].firstName", "Alice", at("users", 0, "firstName"), ""},
		{"users[0].email", "alice@imp.test", at("users", 0, "email"), ""},
	} {
		fields = append(fields, hygieneField{field: f.field, value: f.value, allows: f.allows, body: func(v string) any {
			return doc(func(d map[string]any) { f.set(d, v) })
		}})
	}
	hygieneRefused(t, fields, func(body any) *testResponse { return s.admin(http.MethodPost, "/admin/realms/import", body) })
	if names := s.realmNames(); len(names) != 0 {
		t.Fatalf("refused imports left realms %v", names)
	}
}
