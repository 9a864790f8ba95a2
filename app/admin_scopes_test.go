package app

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/clients"
	"github.com/idenplane/idenplane/app/scopes"
	"github.com/idenplane/idenplane/store"
)

const scopesTestBase = "/admin/realms/acme/client-scopes"

// The limits the admin API puts on a scope's mappers and a mapper's config.
const scopesTestMaxMappers, scopesTestMaxConfig = 100, 50

// scopesTestSetup starts a server with realm acme.
func scopesTestSetup(t *testing.T) *testServer {
	t.Helper()
	s := newTestServer(t)
	s.createRealm("acme")
	return s
}

// scopesTestCreate makes a scope and returns its JSON.
func scopesTestCreate(t *testing.T, s *testServer, body map[string]any) map[string]any {
	t.Helper()
	r := s.admin(http.MethodPost, scopesTestBase, body)
	mustStatus(t, r, http.StatusCreated)
	return r.object(t)
}

// scopesTestByName lists the realm's scopes by name.
func scopesTestByName(t *testing.T, s *testServer, realm string) map[string]map[string]any {
	t.Helper()
	r := s.admin(http.MethodGet, "/admin/realms/"+realm+"/client-scopes", nil)
	mustStatus(t, r, http.StatusOK)
	var list []map[string]any
	r.decode(t, &list)
	out := map[string]map[string]any{}
	for _, c := range list {
		out[c["name"].(string)] = c
	}
	if len(out) != len(list) {
		t.Fatalf("scope names repeat: %s", r.Body)
	}
	return out
}

func scopesTestMapperNames(scope map[string]any) []string {
	var names []string
	for _, m := range scope["protocolMappers"].([]any) {
		names = append(names, m.(map[string]any)["name"].(string))
	}
	return names
}

func TestScopesSeededOnRealmCreate(t *testing.T) {
	s := scopesTestSetup(t)
	seeded := scopesTestByName(t, s, "acme")
	wantMappers := map[string][]string{
		"openid": nil,
		"profile": {"birthdate", "family name", "full name", "gender", "given name", "locale", "middle name",
			"nickname", "picture", "profile", "updated at", "username", "website", "zoneinfo"},
		"email":            {"email", "email verified"},
		"address":          {"address"},
		"phone":            {"phone number", "phone number verified"},
		"offline_access":   nil,
		"roles":            {"audience resolve", "client roles", "realm roles"},
		"web-origins":      {"allowed web origins"},
		"microprofile-jwt": {"groups", "upn"},
		"organization":     {"organization"},
	}
	if len(seeded) != len(wantMappers) {
		t.Fatalf("new realm has scopes %v, want %d", slices.Sorted(maps.Keys(seeded)), len(wantMappers))
	}
	for name, want := range wantMappers {
		c, ok := seeded[name]
		if !ok {
			t.Errorf("scope %s missing", name)
			continue
		}
		if c["protocol"] != scopes.ProtocolOIDC || c["description"] == "" || c["id"] == "" {
			t.Errorf("scope %s: %v", name, c)
		}
		if got := scopesTestMapperNames(c); !slices.Equal(got, want) {
			t.Errorf("scope %s mappers %v, want %v", name, got, want)
		}
	}
	// Spot checks of Keycloak's configs.
	mapper := func(scope, name string) map[string]any {
		for _, m := range seeded[scope]["protocolMappers"].([]any) {
			if mm := m.(map[string]any); mm["name"] == name {
				return mm
			}
		}
		t.Fatalf("mapper %s/%s missing", scope, name)
		return nil
	}
	realmRoles := mapper("roles", "realm roles")
	delete(realmRoles, "id")
	mustEqualJSON(t, "realm roles mapper", realmRoles, map[string]any{
		"name": "realm roles", "mapperType": "oidc-usermodel-realm-role-mapper", "protocol": "openid-connect",
		"config": map[string]any{"claim.name": "realm_access.roles", "jsonType.label": "String", "multivalued": "true",
			"access.token.claim": "true", "id.token.claim": "false", "userinfo.token.claim": "false",
			"introspection.token.claim": "true"},
	})
	mustEqualJSON(t, "client roles config", mapper("roles", "client roles")["config"], map[string]any{
		"claim.name": "resource_access.${client_id}.roles", "jsonType.label": "String", "multivalued": "true",
		"access.token.claim": "true", "id.token.claim": "false", "userinfo.token.claim": "false",
		"introspection.token.claim": "true"})
	mustEqualJSON(t, "username config", mapper("profile", "username")["config"], map[string]any{
		"user.attribute": "username", "claim.name": "preferred_username", "jsonType.label": "String",
		"access.token.claim": "true", "id.token.claim": "true", "userinfo.token.claim": "true",
		"introspection.token.claim": "true"})
	if got := mapper("email", "email verified")["mapperType"]; got != scopes.MapperUserProperty {
		t.Errorf("email verified mapper type %v", got)
	}
	mustEqualJSON(t, "allowed origins config", mapper("web-origins", "allowed web origins")["config"],
		map[string]any{"access.token.claim": "true", "introspection.token.claim": "true"})

	// The scopes a new client is given all exist.
	for _, name := range slices.Concat(clients.NewClientDefaultScopes, clients.NewClientOptionalScopes) {
		if _, ok := seeded[name]; !ok {
			t.Errorf("new clients get scope %s, which a new realm lacks", name)
		}
	}
	// Each realm has its own copies.
	s.createRealm("beta")
	beta := scopesTestByName(t, s, "beta")
	if len(beta) != len(wantMappers) || beta["profile"]["id"] == seeded["profile"]["id"] {
		t.Fatalf("second realm's scopes: %v", beta["profile"])
	}
	// A mapper of acme's copy is not reachable through beta's.
	pm := seeded["profile"]["protocolMappers"].([]any)[0].(map[string]any)
	r := s.admin(http.MethodGet, fmt.Sprintf("/admin/realms/beta/client-scopes/%s/protocol-mappers/%s", beta["profile"]["id"], pm["id"]), nil)
	mustError(t, r, http.StatusNotFound, "not_found", "")
}

func TestScopesCreate(t *testing.T) {
	s := scopesTestSetup(t)
	r := s.admin(http.MethodPost, scopesTestBase, map[string]any{
		"name": "api:read", "description": "Read the API", "protocol": "openid-connect",
		"protocolMappers": []any{
			map[string]any{"name": "tier", "mapperType": scopes.MapperHardcoded,
				"config": map[string]any{"claim.name": "tier", "claim.value": "gold", "id.token.claim": "false"}},
			map[string]any{"name": "aud", "mapperType": scopes.MapperAudience, "protocol": "openid-connect",
				"config": map[string]any{"included.custom.audience": "https://api.example.com"}},
		},
	})
	mustStatus(t, r, http.StatusCreated)
	created := r.object(t)
	id, _ := created["id"].(string)
	if len(id) != 36 {
		t.Fatalf("created scope id %q", id)
	}
	if loc := r.Header.Get("Location"); loc != "http://localhost:3000"+scopesTestBase+"/"+id {
		t.Errorf("Location %q", loc)
	}
	mappers := created["protocolMappers"].([]any)
	if len(mappers) != 2 {
		t.Fatalf("mappers %v", mappers)
	}
	var mapperIDs []any
	for _, m := range mappers {
		mapperIDs = append(mapperIDs, m.(map[string]any)["id"])
	}
	mustEqualJSON(t, "created scope", created, map[string]any{
		"id": id, "name": "api:read", "description": "Read the API", "protocol": "openid-connect",
		"protocolMappers": []any{
			map[string]any{"id": mapperIDs[0], "name": "aud", "mapperType": scopes.MapperAudience, "protocol": "openid-connect",
				"config": map[string]any{"included.custom.audience": "https://api.example.com"}},
			map[string]any{"id": mapperIDs[1], "name": "tier", "mapperType": scopes.MapperHardcoded, "protocol": "openid-connect",
				"config": map[string]any{"claim.name": "tier", "claim.value": "gold", "id.token.claim": "false"}},
		},
	})
	got := s.admin(http.MethodGet, scopesTestBase+"/"+id, nil)
	mustStatus(t, got, http.StatusOK)
	mustEqualJSON(t, "scope read back", got.object(t), created)
	if _, ok := scopesTestByName(t, s, "acme")["api:read"]; !ok {
		t.Fatal("new scope not listed")
	}

	// Defaults: protocol openid-connect, empty description, no mappers.
	bare := scopesTestCreate(t, s, map[string]any{"name": "bare"})
	mustEqualJSON(t, "bare scope", bare, map[string]any{"id": bare["id"], "name": "bare", "description": "",
		"protocol": "openid-connect", "protocolMappers": []any{}})
	saml := scopesTestCreate(t, s, map[string]any{"name": "saml_roles", "protocol": "saml", "protocolMappers": []any{}})
	if saml["protocol"] != "saml" {
		t.Fatalf("saml scope %v", saml)
	}
	// Every printable ASCII character but space, '"' and '\' (RFC 6749) and
	// those HTML gives a meaning, < > & ', may be in a name.
	var all strings.Builder
	for c := byte(0x21); c <= 0x7e; c++ {
		if !strings.ContainsRune(`"\<>&'`, rune(c)) {
			all.WriteByte(c)
		}
	}
	scopesTestCreate(t, s, map[string]any{"name": all.String()})
	scopesTestCreate(t, s, map[string]any{"name": strings.Repeat("a", 255), "description": strings.Repeat("é", 255)})
	// Names are case-sensitive, and the same name may be used in another realm.
	scopesTestCreate(t, s, map[string]any{"name": "Profile"})
	s.createRealm("beta")
	mustStatus(t, s.admin(http.MethodPost, "/admin/realms/beta/client-scopes", map[string]any{"name": "api:read"}), http.StatusCreated)
}

func TestScopesCreateInvalid(t *testing.T) {
	s := scopesTestSetup(t)
	mapper := func(changes map[string]any) map[string]any {
		return cloneMap(map[string]any{"name": "m", "mapperType": scopes.MapperHardcoded,
			"config": map[string]any{"claim.name": "x", "claim.value": "y"}}, changes)
	}
	cases := []struct {
		name   string
		body   any
		status int
		code   string
		field  string
	}{
		{"malformed JSON", `{"name": "x"`, 400, "invalid_json", ""},
		{"not an object", `["x"]`, 400, "invalid_json", ""},
		{"trailing data", `{"name": "x"}]`, 400, "invalid_json", ""},
		{"empty body", ``, 400, "invalid_json", ""},
		{"missing name", map[string]any{"description": "d"}, 400, "invalid_field", "name"},
		{"null name", map[string]any{"name": nil}, 400, "invalid_field", "name"},
		{"empty name", map[string]any{"name": ""}, 400, "invalid_field", "name"},
		{"name with a space", map[string]any{"name": "read write"}, 400, "invalid_field", "name"},
		{"name with a quote", map[string]any{"name": `a"b`}, 400, "invalid_field", "name"},
		{"name with a backslash", map[string]any{"name": `a\b`}, 400, "invalid_field", "name"},
		{"name with a tab", map[string]any{"name": "a\tb"}, 400, "invalid_field", "name"},
		{"name not ASCII", map[string]any{"name": "café"}, 400, "invalid_field", "name"},
		{"name too long", map[string]any{"name": strings.Repeat("a", 256)}, 400, "invalid_field", "name"},
		{"name a number", map[string]any{"name": 7}, 400, "invalid_field", "name"},
		{"description a boolean", map[string]any{"name": "x", "description": true}, 400, "invalid_field", "description"},
		{"description too long", map[string]any{"name": "x", "description": strings.Repeat("d", 256)}, 400, "invalid_field", "description"},
		{"description with a control character", map[string]any{"name": "x", "description": "a\x00b"}, 400, "invalid_field", "description"},
		{"unknown protocol", map[string]any{"name": "x", "protocol": "oauth2"}, 400, "invalid_field", "protocol"},
		{"empty protocol", map[string]any{"name": "x", "protocol": ""}, 400, "invalid_field", "protocol"},
		{"unknown field", map[string]any{"name": "x", "id": "00000000-0000-4000-8000-000000000000"}, 400, "unknown_field", "id"},
		{"field in the wrong case", map[string]any{"Name": "x"}, 400, "unknown_field", "Name"},
		{"mappers not an array", map[string]any{"name": "x", "protocolMappers": map[string]any{}}, 400, "invalid_field", "protocolMappers"},
		{"mapper without a name", map[string]any{"name": "x", "protocolMappers": []any{mapper(map[string]any{"name": nil})}},
			400, "invalid_field", "protocolMappers[0].name"},
		{"second mapper with a bad type", map[string]any{"name": "x", "protocolMappers": []any{mapper(nil), mapper(map[string]any{"name": "n", "mapperType": "oidc-script-mapper"})}},
			400, "invalid_field", "protocolMappers[1].mapperType"},
		{"mapper with a non-string config value", map[string]any{"name": "x", "protocolMappers": []any{mapper(map[string]any{"config": map[string]any{"claim.name": 1}})}},
			400, "invalid_field", "protocolMappers[0].config.claim.name"},
		{"mapper with an unknown config key", map[string]any{"name": "x", "protocolMappers": []any{mapper(map[string]any{"config": map[string]any{"claim.name": "x", "claim.value": "y", "claim.nmae": "z"}})}},
			400, "unknown_field", "protocolMappers[0].config.claim.nmae"},
		{"mapper not an object", map[string]any{"name": "x", "protocolMappers": []any{mapper(nil), nil}},
			400, "invalid_field", "protocolMappers[1]"},
		{"mapper name a number", map[string]any{"name": "x", "protocolMappers": []any{mapper(map[string]any{"name": 5})}},
			400, "invalid_field", "protocolMappers[0].name"},
		{"mapper field in the wrong case", map[string]any{"name": "x", "protocolMappers": []any{mapper(map[string]any{"Name": "n"})}},
			400, "unknown_field", "protocolMappers[0].Name"},
		{"mapper with an unknown field", map[string]any{"name": "x", "protocolMappers": []any{mapper(map[string]any{"protocolMapper": scopes.MapperHardcoded})}},
			400, "unknown_field", "protocolMappers[0].protocolMapper"},
		{"mapper into a saml scope", map[string]any{"name": "x", "protocol": "saml", "protocolMappers": []any{mapper(nil)}},
			400, "invalid_field", "protocolMappers[0].protocol"},
		{"two mappers of one name", map[string]any{"name": "x", "protocolMappers": []any{mapper(nil), mapper(nil)}},
			409, "conflict", "protocolMappers[1].name"},
		{"too many mappers", map[string]any{"name": "x", "protocolMappers": func() []any {
			var ms []any
			for i := range scopesTestMaxMappers + 1 {
				ms = append(ms, mapper(map[string]any{"name": fmt.Sprint("m", i)}))
			}
			return ms
		}()}, 400, "invalid_field", "protocolMappers"},
		{"duplicate of a seeded scope", map[string]any{"name": "profile"}, 409, "conflict", "name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mustError(t, s.admin(http.MethodPost, scopesTestBase, c.body), c.status, c.code, c.field)
		})
	}
	mustError(t, s.admin(http.MethodPost, "/admin/realms/nope/client-scopes", map[string]any{"name": "x"}), 404, "not_found", "")
	mustError(t, s.request(http.MethodPost, scopesTestBase, `{"name":"x"}`, "X-Admin-API-Key: "+testAPIKey, "Content-Type: text/plain"),
		415, "unsupported_media_type", "")
	mustError(t, s.request(http.MethodPost, scopesTestBase, map[string]any{"name": "x"}), 401, "unauthorized", "")
	// Nothing was created by any of them.
	if n := len(scopesTestByName(t, s, "acme")); n != 10 {
		t.Fatalf("%d scopes after failed creates, want the 10 seeded", n)
	}
}

func TestScopesGetAndList(t *testing.T) {
	s := scopesTestSetup(t)
	s.createRealm("beta")
	betaProfile := scopesTestByName(t, s, "beta")["profile"]
	for _, c := range []struct{ name, path string }{
		{"unknown realm", "/admin/realms/nope/client-scopes"},
		{"unknown realm, scope", "/admin/realms/nope/client-scopes/" + betaProfile["id"].(string)},
		{"unknown scope", scopesTestBase + "/00000000-0000-4000-8000-000000000000"},
		{"scope id not a UUID", scopesTestBase + "/profile"},
		{"another realm's scope", scopesTestBase + "/" + betaProfile["id"].(string)},
		{"mappers of an unknown scope", scopesTestBase + "/00000000-0000-4000-8000-000000000000/protocol-mappers"},
	} {
		t.Run(c.name, func(t *testing.T) {
			mustError(t, s.admin(http.MethodGet, c.path, nil), 404, "not_found", "")
		})
	}
	// The list is in name order.
	r := s.admin(http.MethodGet, scopesTestBase, nil)
	mustStatus(t, r, http.StatusOK)
	var list []map[string]any
	r.decode(t, &list)
	var names []string
	for _, c := range list {
		names = append(names, c["name"].(string))
	}
	want := []string{"address", "email", "microprofile-jwt", "offline_access", "openid", "organization", "phone", "profile", "roles", "web-origins"}
	if !slices.Equal(names, want) {
		t.Fatalf("list order %v, want %v", names, want)
	}
	// A scope without mappers shows an empty list, never null.
	openid := scopesTestByName(t, s, "acme")["openid"]
	r = s.admin(http.MethodGet, scopesTestBase+"/"+openid["id"].(string)+"/protocol-mappers", nil)
	mustStatus(t, r, http.StatusOK)
	if strings.TrimSpace(string(r.Body)) != "[]" {
		t.Fatalf("mappers of openid: %s", r.Body)
	}
	mustError(t, s.admin(http.MethodPatch, scopesTestBase+"/"+openid["id"].(string), map[string]any{}), 405, "method_not_allowed", "")
}

func TestScopesUpdate(t *testing.T) {
	s := scopesTestSetup(t)
	c := scopesTestCreate(t, s, map[string]any{"name": "api", "description": "old", "protocolMappers": []any{
		map[string]any{"name": "tier", "mapperType": scopes.MapperHardcoded, "config": map[string]any{"claim.name": "tier", "claim.value": "gold"}},
	}})
	path := scopesTestBase + "/" + c["id"].(string)
	put := func(body any) *testResponse { return s.admin(http.MethodPut, path, body) }

	r := put(map[string]any{"name": "api:v2", "description": "new"})
	mustStatus(t, r, http.StatusOK)
	want := cloneMap(c, map[string]any{"name": "api:v2", "description": "new"})
	mustEqualJSON(t, "after PUT", r.object(t), want)
	mustEqualJSON(t, "read back", s.admin(http.MethodGet, path, nil).object(t), want)

	// PUT changes only what it names; null returns description to "" and keeps the name.
	r = put(map[string]any{"description": "only this"})
	mustStatus(t, r, http.StatusOK)
	want["description"] = "only this"
	mustEqualJSON(t, "PUT of the description", r.object(t), want)
	r = put(map[string]any{"name": nil, "description": nil})
	mustStatus(t, r, http.StatusOK)
	want["description"] = ""
	mustEqualJSON(t, "PUT of nulls", r.object(t), want)
	mustStatus(t, put(map[string]any{}), http.StatusOK)

	cases := []struct {
		name   string
		body   any
		status int
		code   string
		field  string
	}{
		{"malformed JSON", `{"name":`, 400, "invalid_json", ""},
		{"not an object", `"x"`, 400, "invalid_json", ""},
		{"bad name", map[string]any{"name": "a b"}, 400, "invalid_field", "name"},
		{"empty name", map[string]any{"name": ""}, 400, "invalid_field", "name"},
		{"name a number", map[string]any{"name": 1}, 400, "invalid_field", "name"},
		{"description too long", map[string]any{"description": strings.Repeat("x", 256)}, 400, "invalid_field", "description"},
		{"protocol is create-only", map[string]any{"protocol": "saml"}, 400, "unknown_field", "protocol"},
		{"mappers have their own routes", map[string]any{"protocolMappers": []any{}}, 400, "unknown_field", "protocolMappers"},
		{"id", map[string]any{"id": c["id"]}, 400, "unknown_field", "id"},
		{"another scope's name", map[string]any{"name": "email"}, 409, "conflict", "name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mustError(t, put(tc.body), tc.status, tc.code, tc.field)
		})
	}
	mustEqualJSON(t, "unchanged by failed updates", s.admin(http.MethodGet, path, nil).object(t), want)
	mustError(t, s.admin(http.MethodPut, scopesTestBase+"/00000000-0000-4000-8000-000000000000", map[string]any{}), 404, "not_found", "")
	mustError(t, s.admin(http.MethodPut, "/admin/realms/nope/client-scopes/"+c["id"].(string), map[string]any{}), 404, "not_found", "")
}

func TestScopesDelete(t *testing.T) {
	s := scopesTestSetup(t)
	c := scopesTestCreate(t, s, map[string]any{"name": "api", "protocolMappers": []any{
		map[string]any{"name": "tier", "mapperType": scopes.MapperHardcoded, "config": map[string]any{"claim.name": "tier", "claim.value": "gold"}},
	}})
	id := c["id"].(string)
	mapperID := c["protocolMappers"].([]any)[0].(map[string]any)["id"].(string)

	// Link it to a client, as the clients API will.
	ctx := context.Background()
	realm, err := s.store.GetRealm(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	client := &store.Client{ID: "c0000000-0000-4000-8000-000000000001", RealmID: realm.ID, ClientID: "app",
		ClientType: "PUBLIC", Enabled: true, CreatedAt: 1}
	if err := s.store.CreateClient(ctx, client); err != nil {
		t.Fatal(err)
	}
	profileID := scopesTestByName(t, s, "acme")["profile"]["id"].(string)
	for _, l := range []struct{ scope, kind string }{{id, store.ScopeDefault}, {profileID, store.ScopeDefault}} {
		if err := s.store.LinkClientScope(ctx, client.ID, l.scope, l.kind); err != nil {
			t.Fatal(err)
		}
	}

	s.createRealm("beta")
	mustError(t, s.admin(http.MethodDelete, "/admin/realms/beta/client-scopes/"+id, nil), 404, "not_found", "")
	mustError(t, s.admin(http.MethodDelete, "/admin/realms/nope/client-scopes/"+id, nil), 404, "not_found", "")

	r := s.admin(http.MethodDelete, scopesTestBase+"/"+id, nil)
	mustStatus(t, r, http.StatusNoContent)
	if len(r.Body) != 0 {
		t.Fatalf("204 with a body: %s", r.Body)
	}
	mustError(t, s.admin(http.MethodGet, scopesTestBase+"/"+id, nil), 404, "not_found", "")
	mustError(t, s.admin(http.MethodGet, scopesTestBase+"/"+id+"/protocol-mappers/"+mapperID, nil), 404, "not_found", "")
	mustError(t, s.admin(http.MethodDelete, scopesTestBase+"/"+id, nil), 404, "not_found", "")
	if _, err := s.store.GetMapper(ctx, id, mapperID); err == nil {
		t.Fatal("the deleted scope's mapper is still stored")
	}
	linked, err := s.store.ListLinkedScopes(ctx, realm.ID, client.ID, store.ScopeDefault)
	if err != nil || len(linked) != 1 || linked[0].Name != "profile" {
		t.Fatalf("client's scopes after the delete: %v, %v; want only profile", linked, err)
	}

	// Seeded scopes may be deleted too; the name is then free again.
	mustStatus(t, s.admin(http.MethodDelete, scopesTestBase+"/"+profileID, nil), http.StatusNoContent)
	scopesTestCreate(t, s, map[string]any{"name": "profile"})
}

// scopesTestMapperPath makes a scope and returns its mappers' path.
func scopesTestMapperPath(t *testing.T, s *testServer, name string) string {
	t.Helper()
	c := scopesTestCreate(t, s, map[string]any{"name": name})
	return scopesTestBase + "/" + c["id"].(string) + "/protocol-mappers"
}

func TestScopesMapperCreateEveryType(t *testing.T) {
	s := scopesTestSetup(t)
	path := scopesTestMapperPath(t, s, "api")
	cases := []struct {
		mapperType string
		config     map[string]any
	}{
		{scopes.MapperUserProperty, map[string]any{"user.attribute": "createdTimestamp", "claim.name": "created", "jsonType.label": "long"}},
		{scopes.MapperUserAttribute, map[string]any{"user.attribute": "department", "claim.name": "org.department", "multivalued": "true",
			"jsonType.label": "String", "access.token.claim": "true", "id.token.claim": "false", "userinfo.token.claim": "true",
			"introspection.token.claim": "false"}},
		{scopes.MapperHardcoded, map[string]any{"claim.name": "cfg", "claim.value": `{"a": [1, 2]}`, "jsonType.label": "JSON"}},
		{scopes.MapperRealmRoles, map[string]any{"claim.name": "roles", "multivalued": "true", "usermodel.realmRoleMapping.rolePrefix": "realm:"}},
		{scopes.MapperClientRoles, map[string]any{"claim.name": "resource_access.${client_id}.roles", "multivalued": "true",
			"usermodel.clientRoleMapping.clientId": "app", "usermodel.clientRoleMapping.rolePrefix": "app:"}},
		{scopes.MapperGroups, map[string]any{"claim.name": "groups", "full.path": "false"}},
		{scopes.MapperAudience, map[string]any{"included.client.audience": "billing", "id.token.claim": "false"}},
		{scopes.MapperFullName, map[string]any{}},
		{scopes.MapperAllowedOrigins, map[string]any{"access.token.claim": "true", "introspection.token.claim": "false"}},
		{scopes.MapperAudienceRoles, map[string]any{}},
		{scopes.MapperAddress, map[string]any{"user.attribute.country": "land", "userinfo.token.claim": "false"}},
	}
	var created []any
	for i, c := range cases {
		t.Run(c.mapperType, func(t *testing.T) {
			name := fmt.Sprintf("m%02d", i)
			r := s.admin(http.MethodPost, path, map[string]any{"name": name, "mapperType": c.mapperType, "config": c.config})
			mustStatus(t, r, http.StatusCreated)
			got := r.object(t)
			want := map[string]any{"id": got["id"], "name": name, "mapperType": c.mapperType, "protocol": "openid-connect", "config": c.config}
			mustEqualJSON(t, "created mapper", got, want)
			if loc := r.Header.Get("Location"); loc != "http://localhost:3000"+path+"/"+got["id"].(string) {
				t.Errorf("Location %q", loc)
			}
			read := s.admin(http.MethodGet, path+"/"+got["id"].(string), nil)
			mustStatus(t, read, http.StatusOK)
			mustEqualJSON(t, "read back", read.object(t), want)
			created = append(created, want)
		})
	}
	// A config may be left out entirely where nothing is required.
	r := s.admin(http.MethodPost, path, map[string]any{"name": "zz", "mapperType": scopes.MapperFullName})
	mustStatus(t, r, http.StatusCreated)
	created = append(created, r.object(t))
	list := s.admin(http.MethodGet, path, nil)
	mustStatus(t, list, http.StatusOK)
	mustEqualJSON(t, "mapper list", scopesTestList(t, list), created)
}

// scopesTestList decodes an array body.
func scopesTestList(t *testing.T, r *testResponse) []any {
	t.Helper()
	var v []any
	r.decode(t, &v)
	return v
}

func TestScopesMapperCreateInvalid(t *testing.T) {
	s := scopesTestSetup(t)
	path := scopesTestMapperPath(t, s, "api")
	mustStatus(t, s.admin(http.MethodPost, path, map[string]any{"name": "taken", "mapperType": scopes.MapperFullName}), http.StatusCreated)
	attr := func(cfg map[string]any) map[string]any {
		base := map[string]any{"user.attribute": "nick", "claim.name": "nick"}
		return map[string]any{"name": "m", "mapperType": scopes.MapperUserAttribute, "config": cloneMap(base, cfg)}
	}
	typed := func(mapperType string, cfg map[string]any) map[string]any {
		return map[string]any{"name": "m", "mapperType": mapperType, "config": cfg}
	}
	cases := []struct {
		name   string
		body   any
		status int
		code   string
		field  string
	}{
		{"malformed JSON", `{"name": "m",`, 400, "invalid_json", ""},
		{"not an object", `[]`, 400, "invalid_json", ""},
		{"missing name", map[string]any{"mapperType": scopes.MapperFullName}, 400, "invalid_field", "name"},
		{"blank name", map[string]any{"name": "  ", "mapperType": scopes.MapperFullName}, 400, "invalid_field", "name"},
		{"name too long", map[string]any{"name": strings.Repeat("n", 256), "mapperType": scopes.MapperFullName}, 400, "invalid_field", "name"},
		{"name with a control character", map[string]any{"name": "a\nb", "mapperType": scopes.MapperFullName}, 400, "invalid_field", "name"},
		{"name a number", map[string]any{"name": 1, "mapperType": scopes.MapperFullName}, 400, "invalid_field", "name"},
		{"missing type", map[string]any{"name": "m"}, 400, "invalid_field", "mapperType"},
		{"unknown type", map[string]any{"name": "m", "mapperType": "oidc-script-mapper"}, 400, "invalid_field", "mapperType"},
		{"type in the wrong case", map[string]any{"name": "m", "mapperType": "OIDC-FULL-NAME-MAPPER"}, 400, "invalid_field", "mapperType"},
		{"saml protocol", map[string]any{"name": "m", "mapperType": scopes.MapperFullName, "protocol": "saml"}, 400, "invalid_field", "protocol"},
		{"config not an object", map[string]any{"name": "m", "mapperType": scopes.MapperFullName, "config": "x"}, 400, "invalid_field", "config"},
		{"config value a boolean", attr(map[string]any{"multivalued": true}), 400, "invalid_field", "config.multivalued"},
		{"config value null", attr(map[string]any{"claim.name": nil}), 400, "invalid_field", "config.claim.name"},
		{"unknown config key", attr(map[string]any{"aggregate.attrs": "true"}), 400, "unknown_field", "config.aggregate.attrs"},
		{"unknown field", map[string]any{"name": "m", "mapperType": scopes.MapperFullName, "consentRequired": false}, 400, "unknown_field", "consentRequired"},
		{"attribute without claim name", attr(map[string]any{"claim.name": ""}), 400, "invalid_field", "config.claim.name"},
		{"attribute without attribute", typed(scopes.MapperUserAttribute, map[string]any{"claim.name": "x"}), 400, "invalid_field", "config.user.attribute"},
		{"property not a property", typed(scopes.MapperUserProperty, map[string]any{"claim.name": "x", "user.attribute": "nickname"}),
			400, "invalid_field", "config.user.attribute"},
		{"property takes no multivalued", typed(scopes.MapperUserProperty, map[string]any{"claim.name": "x", "user.attribute": "email", "multivalued": "true"}),
			400, "unknown_field", "config.multivalued"},
		{"unknown JSON type", attr(map[string]any{"jsonType.label": "float"}), 400, "invalid_field", "config.jsonType.label"},
		{"JSON type in the wrong case", attr(map[string]any{"jsonType.label": "string"}), 400, "invalid_field", "config.jsonType.label"},
		{"multivalued not a boolean", attr(map[string]any{"multivalued": "yes"}), 400, "invalid_field", "config.multivalued"},
		{"token flag not a boolean", attr(map[string]any{"access.token.claim": "1"}), 400, "invalid_field", "config.access.token.claim"},
		{"token flag in capitals", attr(map[string]any{"id.token.claim": "TRUE"}), 400, "invalid_field", "config.id.token.claim"},
		{"full path not a boolean", typed(scopes.MapperGroups, map[string]any{"claim.name": "g", "full.path": "no"}), 400, "invalid_field", "config.full.path"},
		{"reserved claim sub", attr(map[string]any{"claim.name": "sub"}), 400, "invalid_field", "config.claim.name"},
		{"reserved claim under aud", attr(map[string]any{"claim.name": "aud.x"}), 400, "invalid_field", "config.claim.name"},
		{"reserved claim exp", typed(scopes.MapperHardcoded, map[string]any{"claim.name": "exp", "claim.value": "1"}), 400, "invalid_field", "config.claim.name"},
		{"reserved claim nonce", typed(scopes.MapperRealmRoles, map[string]any{"claim.name": "nonce"}), 400, "invalid_field", "config.claim.name"},
		{"claim name with an empty part", attr(map[string]any{"claim.name": "a..b"}), 400, "invalid_field", "config.claim.name"},
		{"claim name ending in a dot", attr(map[string]any{"claim.name": "a."}), 400, "invalid_field", "config.claim.name"},
		{"claim name too long", attr(map[string]any{"claim.name": strings.Repeat("c", 256)}), 400, "invalid_field", "config.claim.name"},
		{"claim name with a control character", attr(map[string]any{"claim.name": "a\x01"}), 400, "invalid_field", "config.claim.name"},
		{"hardcoded without value", typed(scopes.MapperHardcoded, map[string]any{"claim.name": "x"}), 400, "invalid_field", "config.claim.value"},
		{"hardcoded long that is not", typed(scopes.MapperHardcoded, map[string]any{"claim.name": "x", "claim.value": "abc", "jsonType.label": "long"}),
			400, "invalid_field", "config.claim.value"},
		{"hardcoded JSON that is not", typed(scopes.MapperHardcoded, map[string]any{"claim.name": "x", "claim.value": "{", "jsonType.label": "JSON"}),
			400, "invalid_field", "config.claim.value"},
		{"hardcoded boolean that is not", typed(scopes.MapperHardcoded, map[string]any{"claim.name": "x", "claim.value": "yes", "jsonType.label": "boolean"}),
			400, "invalid_field", "config.claim.value"},
		{"value too long", typed(scopes.MapperHardcoded, map[string]any{"claim.name": "x", "claim.value": strings.Repeat("v", 4097)}),
			400, "invalid_field", "config.claim.value"},
		{"audience with neither", typed(scopes.MapperAudience, map[string]any{}), 400, "invalid_field", "config.included.client.audience"},
		{"audience with both", typed(scopes.MapperAudience, map[string]any{"included.client.audience": "a", "included.custom.audience": "b"}),
			400, "invalid_field", "config.included.client.audience"},
		{"audience into userinfo", typed(scopes.MapperAudience, map[string]any{"included.client.audience": "a", "userinfo.token.claim": "true"}),
			400, "unknown_field", "config.userinfo.token.claim"},
		{"allowed origins into the ID token", typed(scopes.MapperAllowedOrigins, map[string]any{"id.token.claim": "true"}),
			400, "unknown_field", "config.id.token.claim"},
		{"full name takes no claim name", typed(scopes.MapperFullName, map[string]any{"claim.name": "fn"}), 400, "unknown_field", "config.claim.name"},
		{"client roles without claim name", typed(scopes.MapperClientRoles, map[string]any{"multivalued": "true"}), 400, "invalid_field", "config.claim.name"},
		{"role prefix too long", typed(scopes.MapperRealmRoles, map[string]any{"claim.name": "r", "usermodel.realmRoleMapping.rolePrefix": strings.Repeat("p", 256)}),
			400, "invalid_field", "config.usermodel.realmRoleMapping.rolePrefix"},
		{"address with an unknown part", typed(scopes.MapperAddress, map[string]any{"user.attribute.planet": "p"}), 400, "unknown_field", "config.user.attribute.planet"},
		{"too many config entries", map[string]any{"name": "m", "mapperType": scopes.MapperFullName, "config": func() map[string]any {
			cfg := map[string]any{}
			for i := range scopesTestMaxConfig + 1 {
				cfg[fmt.Sprint("k", i)] = "v"
			}
			return cfg
		}()}, 400, "invalid_field", "config"},
		{"duplicate name", map[string]any{"name": "taken", "mapperType": scopes.MapperFullName}, 409, "conflict", "name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mustError(t, s.admin(http.MethodPost, path, c.body), c.status, c.code, c.field)
		})
	}
	list := s.admin(http.MethodGet, path, nil)
	if n := len(scopesTestList(t, list)); n != 1 {
		t.Fatalf("%d mappers after failed creates, want 1", n)
	}
	good := map[string]any{"name": "ok", "mapperType": scopes.MapperFullName}
	mustError(t, s.admin(http.MethodPost, scopesTestBase+"/00000000-0000-4000-8000-000000000000/protocol-mappers", good), 404, "not_found", "")
	mustError(t, s.admin(http.MethodPost, strings.Replace(path, "/acme/", "/nope/", 1), good), 404, "not_found", "")

	// A SAML scope takes none of these mappers.
	saml := scopesTestCreate(t, s, map[string]any{"name": "saml_scope", "protocol": "saml"})
	mustError(t, s.admin(http.MethodPost, scopesTestBase+"/"+saml["id"].(string)+"/protocol-mappers", good), 400, "invalid_field", "protocol")
}

func TestScopesMapperLimit(t *testing.T) {
	s := scopesTestSetup(t)
	c := scopesTestCreate(t, s, map[string]any{"name": "big"})
	ctx := context.Background()
	for i := range scopesTestMaxMappers {
		m := &store.ProtocolMapper{ID: fmt.Sprintf("00000000-0000-4000-8000-%012d", i), ScopeID: c["id"].(string),
			Name: fmt.Sprint("m", i), MapperType: scopes.MapperFullName, Protocol: scopes.ProtocolOIDC, CreatedAt: 1}
		if err := s.store.CreateMapper(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	path := scopesTestBase + "/" + c["id"].(string) + "/protocol-mappers"
	mustError(t, s.admin(http.MethodPost, path, map[string]any{"name": "one more", "mapperType": scopes.MapperFullName}), 400, "invalid_request", "")
}

func TestScopesMapperUpdate(t *testing.T) {
	s := scopesTestSetup(t)
	path := scopesTestMapperPath(t, s, "api")
	r := s.admin(http.MethodPost, path, map[string]any{"name": "nick", "mapperType": scopes.MapperUserAttribute,
		"config": map[string]any{"user.attribute": "nickname", "claim.name": "nickname", "id.token.claim": "false"}})
	mustStatus(t, r, http.StatusCreated)
	m := r.object(t)
	mustStatus(t, s.admin(http.MethodPost, path, map[string]any{"name": "other", "mapperType": scopes.MapperFullName}), http.StatusCreated)
	mpath := path + "/" + m["id"].(string)
	put := func(body any) *testResponse { return s.admin(http.MethodPut, mpath, body) }

	// PUT replaces the config whole.
	newCfg := map[string]any{"user.attribute": "nickname", "claim.name": "profile.nick", "multivalued": "true"}
	r = put(map[string]any{"name": "nickname", "config": newCfg})
	mustStatus(t, r, http.StatusOK)
	want := cloneMap(m, map[string]any{"name": "nickname", "config": newCfg})
	mustEqualJSON(t, "after PUT", r.object(t), want)
	mustEqualJSON(t, "read back", s.admin(http.MethodGet, mpath, nil).object(t), want)
	// Only the name: the config stays.
	r = put(map[string]any{"name": "nick2"})
	mustStatus(t, r, http.StatusOK)
	want["name"] = "nick2"
	mustEqualJSON(t, "PUT of the name", r.object(t), want)
	// The scope shows the change.
	scopePath := strings.TrimSuffix(path, "/protocol-mappers")
	if names := scopesTestMapperNames(s.admin(http.MethodGet, scopePath, nil).object(t)); !slices.Equal(names, []string{"nick2", "other"}) {
		t.Fatalf("scope's mappers %v", names)
	}

	cases := []struct {
		name   string
		body   any
		status int
		code   string
		field  string
	}{
		{"malformed JSON", `{`, 400, "invalid_json", ""},
		{"type is fixed", map[string]any{"mapperType": scopes.MapperFullName}, 400, "unknown_field", "mapperType"},
		{"protocol is fixed", map[string]any{"protocol": "openid-connect"}, 400, "unknown_field", "protocol"},
		{"id", map[string]any{"id": m["id"]}, 400, "unknown_field", "id"},
		{"blank name", map[string]any{"name": ""}, 400, "invalid_field", "name"},
		{"name a number", map[string]any{"name": 3}, 400, "invalid_field", "name"},
		{"config not an object", map[string]any{"config": []any{}}, 400, "invalid_field", "config"},
		{"config value a number", map[string]any{"config": map[string]any{"user.attribute": "nickname", "claim.name": 1}}, 400, "invalid_field", "config.claim.name"},
		{"config null empties it, which lacks the attribute", map[string]any{"config": nil}, 400, "invalid_field", "config.user.attribute"},
		{"config missing the attribute", map[string]any{"config": map[string]any{"claim.name": "n"}}, 400, "invalid_field", "config.user.attribute"},
		{"reserved claim", map[string]any{"config": map[string]any{"user.attribute": "nickname", "claim.name": "iss"}}, 400, "invalid_field", "config.claim.name"},
		{"unknown config key", map[string]any{"config": map[string]any{"user.attribute": "nickname", "claim.name": "n", "x": "y"}}, 400, "unknown_field", "config.x"},
		{"another mapper's name", map[string]any{"name": "other"}, 409, "conflict", "name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mustError(t, put(c.body), c.status, c.code, c.field)
		})
	}
	mustEqualJSON(t, "unchanged by failed updates", s.admin(http.MethodGet, mpath, nil).object(t), want)
	mustError(t, s.admin(http.MethodPut, path+"/00000000-0000-4000-8000-000000000000", map[string]any{"name": "x"}), 404, "not_found", "")
	mustError(t, s.admin(http.MethodPut, scopesTestBase+"/00000000-0000-4000-8000-000000000000/protocol-mappers/"+m["id"].(string),
		map[string]any{"name": "x"}), 404, "not_found", "")
}

func TestScopesMapperDelete(t *testing.T) {
	s := scopesTestSetup(t)
	path := scopesTestMapperPath(t, s, "api")
	other := scopesTestMapperPath(t, s, "other")
	r := s.admin(http.MethodPost, path, map[string]any{"name": "fn", "mapperType": scopes.MapperFullName})
	mustStatus(t, r, http.StatusCreated)
	id := r.object(t)["id"].(string)

	// Not through another scope.
	mustError(t, s.admin(http.MethodGet, other+"/"+id, nil), 404, "not_found", "")
	mustError(t, s.admin(http.MethodDelete, other+"/"+id, nil), 404, "not_found", "")
	mustError(t, s.admin(http.MethodDelete, strings.Replace(path, "/acme/", "/nope/", 1)+"/"+id, nil), 404, "not_found", "")

	r = s.admin(http.MethodDelete, path+"/"+id, nil)
	mustStatus(t, r, http.StatusNoContent)
	if len(r.Body) != 0 {
		t.Fatalf("204 with a body: %s", r.Body)
	}
	mustError(t, s.admin(http.MethodGet, path+"/"+id, nil), 404, "not_found", "")
	mustError(t, s.admin(http.MethodDelete, path+"/"+id, nil), 404, "not_found", "")
	if n := len(scopesTestList(t, s.admin(http.MethodGet, path, nil))); n != 0 {
		t.Fatalf("%d mappers left", n)
	}
	// The name is free again.
	mustStatus(t, s.admin(http.MethodPost, path, map[string]any{"name": "fn", "mapperType": scopes.MapperFullName}), http.StatusCreated)
}

// TestScopesRealmDeleteRemovesScopes checks the cascade through the API.
func TestScopesRealmDeleteRemovesScopes(t *testing.T) {
	s := scopesTestSetup(t)
	c := scopesTestCreate(t, s, map[string]any{"name": "api"})
	mustStatus(t, s.admin(http.MethodDelete, "/admin/realms/acme", nil), http.StatusOK)
	s.createRealm("acme")
	mustError(t, s.admin(http.MethodGet, scopesTestBase+"/"+c["id"].(string), nil), 404, "not_found", "")
	if n := len(scopesTestByName(t, s, "acme")); n != 10 {
		t.Fatalf("recreated realm has %d scopes, want the 10 seeded", n)
	}
}

// The mapper types the API lists are those it accepts, each with the
// config keys it takes: a mapper made of a listed type's required keys
// and flags is stored, and an unknown realm is a 404.
func TestProtocolMapperTypesListed(t *testing.T) {
	s := scopesTestSetup(t)
	r := s.admin(http.MethodGet, "/admin/realms/acme/protocol-mapper-types", nil)
	mustStatus(t, r, http.StatusOK)
	var types []scopes.MapperTypeRep
	r.decode(t, &types)
	mapperTypes := []string{scopes.MapperUserProperty, scopes.MapperUserAttribute, scopes.MapperHardcoded,
		scopes.MapperRealmRoles, scopes.MapperClientRoles, scopes.MapperGroups, scopes.MapperAudience, scopes.MapperFullName,
		scopes.MapperAllowedOrigins, scopes.MapperAudienceRoles, scopes.MapperAddress, scopes.MapperOrganization,
		scopes.MapperCustomAttributes}
	if got := len(types); got != len(mapperTypes) {
		t.Fatalf("%d types listed, want %d", got, len(mapperTypes))
	}
	scope := scopesTestCreate(t, s, map[string]any{"name": "listed"})
	for i, mt := range types {
		if mt.MapperType != mapperTypes[i] || mt.Protocol != scopes.ProtocolOIDC {
			t.Fatalf("type %d: %+v, want %s", i, mt, mapperTypes[i])
		}
		cfg := map[string]string{}
		for _, k := range mt.Required {
			cfg[k] = "claim_" + strconv.Itoa(i)
		}
		for _, k := range mt.Tokens {
			cfg[k] = "true"
		}
		switch mt.MapperType {
		case scopes.MapperUserProperty:
			cfg[scopes.CfgUserAttribute] = "email"
		case scopes.MapperAudience:
			cfg[scopes.CfgCustomAudience] = "api"
		}
		r := s.admin(http.MethodPost, scopesTestBase+"/"+scope["id"].(string)+"/protocol-mappers", map[string]any{
			"name": mt.MapperType, "mapperType": mt.MapperType, "protocol": mt.Protocol, "config": cfg})
		mustStatus(t, r, http.StatusCreated)
	}
	mustStatus(t, s.admin(http.MethodGet, "/admin/realms/nowhere/protocol-mapper-types", nil), http.StatusNotFound)
}
