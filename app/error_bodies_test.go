package app

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// TestErrorBodiesLeakNothing sends requests that fail deep down, at a
// uniqueness rule, a missing row, a foreign key, a parser, and checks that
// each answers a client error whose body shows no SQL, driver or Go text.
func TestErrorBodiesLeakNothing(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	s.createRealm("beta")
	s.clientsTestCreate("acme", map[string]any{"clientId": "web", "redirectUris": []string{"https://web.test/cb"},
		"grantTypes": []string{"authorization_code", "password"}})
	alice := s.createUser("acme", map[string]any{"username": "alice", "email": "alice@example.test", "password": "correct horse 1"})
	s.createUser("acme", map[string]any{"username": "bob", "email": "bob@example.test"})
	aliceID := alice["id"].(string)
	mustStatus(t, s.admin(http.MethodPost, rolesPath("acme"), map[string]any{"name": "admin"}), http.StatusCreated)
	staff := s.groupsTestCreate("acme", "staff", "")["id"].(string)
	ops := s.groupsTestCreate("acme", "ops", "")["id"].(string)
	api := scopesTestCreate(t, s, map[string]any{"name": "api", "protocolMappers": []any{
		map[string]any{"name": "full name", "mapperType": mapperFullName}}})["id"].(string)
	mustStatus(t, s.admin(http.MethodPost, "/admin/realms/acme/clients/web/optional-client-scopes",
		map[string]any{"clientScopeId": api}), http.StatusCreated)
	mustStatus(t, s.admin(http.MethodPost, "/realms/acme/registration/admin/fields",
		map[string]any{"key": "nick", "label": "Nick", "type": "text"}), http.StatusCreated)
	export := s.admin(http.MethodGet, "/admin/realms/acme/export?includeUsers=true", nil)
	mustStatus(t, export, http.StatusOK)
	renamed := export.object(t)
	renamed["name"] = "gamma"
	newID := func(doc map[string]any) map[string]any { doc["id"] = uuid.NewString(); return doc }

	form := "Content-Type: application/x-www-form-urlencoded"
	bearer := "Authorization: Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln"
	for _, tc := range []struct {
		name         string
		method, path string
		body         any
		headers      []string
		public       bool // sent without the admin key
	}{
		{"duplicate realm", http.MethodPost, "/admin/realms", map[string]any{"name": "acme"}, nil, false},
		{"duplicate username", http.MethodPost, "/admin/realms/acme/users", map[string]any{"username": "alice"}, nil, false},
		{"duplicate email", http.MethodPost, "/admin/realms/acme/users", map[string]any{"username": "al", "email": "alice@example.test"}, nil, false},
		{"email taken on update", http.MethodPut, "/admin/realms/acme/users/" + aliceID, map[string]any{"email": "bob@example.test"}, nil, false},
		{"unknown user", http.MethodGet, "/admin/realms/acme/users/" + uuid.NewString(), nil, nil, false},
		{"malformed user id", http.MethodGet, "/admin/realms/acme/users/'%20OR%201=1--", nil, nil, false},
		{"duplicate client", http.MethodPost, "/admin/realms/acme/clients", map[string]any{"clientId": "web"}, nil, false},
		{"scope linked twice", http.MethodPost, "/admin/realms/acme/clients/web/default-client-scopes",
			map[string]any{"clientScopeId": api}, nil, false},
		{"unknown scope linked", http.MethodPost, "/admin/realms/acme/clients/web/default-client-scopes",
			map[string]any{"clientScopeId": uuid.NewString()}, nil, false},
		{"duplicate role", http.MethodPost, rolesPath("acme"), map[string]any{"name": "admin"}, nil, false},
		{"unknown role mapped", http.MethodPost, "/admin/realms/acme/users/" + aliceID + "/role-mappings/realm",
			map[string]any{"roleNames": []string{"nope"}}, nil, false},
		{"role includes itself", http.MethodPost, rolesPath("acme") + "/admin/composites",
			map[string]any{"roleNames": []string{"admin"}}, nil, false},
		{"duplicate group", http.MethodPost, "/admin/realms/acme/groups", map[string]any{"name": "staff"}, nil, false},
		{"group renamed to a sibling's name", http.MethodPut, "/admin/realms/acme/groups/" + ops, map[string]any{"name": "staff"}, nil, false},
		{"group moved under itself", http.MethodPost, "/admin/realms/acme/groups/" + staff + "/children", map[string]any{"id": staff}, nil, false},
		{"unknown group joined", http.MethodPut, "/admin/realms/acme/users/" + aliceID + "/groups/" + uuid.NewString(), nil, nil, false},
		{"duplicate scope", http.MethodPost, "/admin/realms/acme/client-scopes", map[string]any{"name": "api"}, nil, false},
		{"scope renamed to a taken name", http.MethodPut, "/admin/realms/acme/client-scopes/" + api, map[string]any{"name": "profile"}, nil, false},
		{"duplicate mapper", http.MethodPost, "/admin/realms/acme/client-scopes/" + api + "/protocol-mappers",
			map[string]any{"name": "full name", "mapperType": mapperFullName}, nil, false},
		{"duplicate registration field", http.MethodPost, "/realms/acme/registration/admin/fields",
			map[string]any{"key": "nick", "label": "Nick", "type": "text"}, nil, false},
		{"import of a renamed export", http.MethodPost, "/admin/realms/import", renamed, nil, false},
		{"import whose resources keep their IDs", http.MethodPost, "/admin/realms/import", newID(export.object(t)), nil, false},
		{"import over a realm of that name", http.MethodPost, "/admin/realms/import", map[string]any{"formatVersion": 1, "name": "acme"}, nil, false},
		{"import with a user id of another realm", http.MethodPost, "/admin/realms/import", map[string]any{"formatVersion": 1,
			"id": uuid.NewString(), "name": "delta", "users": []any{map[string]any{"id": aliceID, "username": "x"}}}, nil, false},
		{"import with a group listed twice", http.MethodPost, "/admin/realms/import", map[string]any{"formatVersion": 1, "name": "delta",
			"groups": []any{map[string]any{"id": staff, "name": "a"}, map[string]any{"id": staff, "name": "b"}}}, nil, false},
		{"import with a role cycle", http.MethodPost, "/admin/realms/import", map[string]any{"formatVersion": 1, "name": "delta",
			"roles": map[string]any{"realm": []any{
				map[string]any{"name": "a", "composites": map[string]any{"realmRoles": []string{"b"}}},
				map[string]any{"name": "b", "composites": map[string]any{"realmRoles": []string{"a"}}}}}}, nil, false},
		{"import of a realm id that is not a UUID", http.MethodPost, "/admin/realms/import",
			map[string]any{"formatVersion": 1, "id": "x' OR 1=1", "name": "delta"}, nil, false},
		{"malformed JSON", http.MethodPost, "/admin/realms/acme/users", `{"username": `, nil, false},
		{"wrong JSON type", http.MethodPost, "/admin/realms/acme/users", `{"username": {"$ne": 1}}`, nil, false},
		{"NUL in a path", http.MethodGet, "/admin/realms/acme/users/%00", nil, nil, false},
		{"unknown realm", http.MethodGet, "/admin/realms/nope", nil, nil, false},
		{"body too large", http.MethodPost, "/admin/realms/acme/users", `{"username":"` + strings.Repeat("a", 2<<20) + `"}`, nil, false},
		{"token: unknown grant", http.MethodPost, "/realms/acme/protocol/openid-connect/token", "grant_type=nope&client_id=web",
			[]string{form}, true},
		{"token: forged code", http.MethodPost, "/realms/acme/protocol/openid-connect/token",
			"grant_type=authorization_code&code=x'%3B--&client_id=web&redirect_uri=https://web.test/cb", []string{form}, true},
		{"token: forged refresh token", http.MethodPost, "/realms/acme/protocol/openid-connect/token",
			"grant_type=refresh_token&refresh_token=%00%01&client_id=web", []string{form}, true},
		{"token: password for a client without a secret", http.MethodPost, "/realms/acme/protocol/openid-connect/token",
			"grant_type=password&username=alice&password=x&client_id=web", []string{form}, true},
		{"userinfo with a forged token", http.MethodGet, "/realms/acme/protocol/openid-connect/userinfo", nil, []string{bearer}, true},
		{"account API with a forged token", http.MethodGet, "/realms/acme/account/", nil, []string{bearer, "Accept: application/json"}, true},
		{"logout with a forged hint", http.MethodGet, "/realms/acme/protocol/openid-connect/logout?id_token_hint=a.b.c", nil, nil, true},
		{"authorize for an unknown client", http.MethodGet, "/realms/acme/protocol/openid-connect/auth?client_id=%00&response_type=code", nil, nil, true},
		{"protocol path of an unknown realm", http.MethodGet, "/realms/nope/.well-known/openid-configuration", nil, nil, true},
		{"registration with a taken username", http.MethodPost, "/realms/acme/registration/register",
			map[string]any{"username": "alice", "email": "new@example.test", "password": "a long password 1"}, nil, true},
		{"verify-email with a forged token", http.MethodPost, "/realms/acme/registration/verify-email",
			map[string]any{"token": "x' OR 1=1"}, nil, true},
		{"events with a malformed date", http.MethodGet, "/admin/realms/acme/events?dateFrom=yesterday", nil, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r *testResponse
			if tc.public {
				r = s.request(tc.method, tc.path, tc.body, tc.headers...)
			} else {
				r = s.admin(tc.method, tc.path, tc.body, tc.headers...)
			}
			if r.Status < 400 || r.Status >= 500 {
				t.Fatalf("status %d, want a client error; body: %.300s", r.Status, r.Body)
			}
			body := strings.ToLower(string(r.Body))
			for _, leak := range []string{"sql:", "constraint", "sqlite", ".go:", "panic", "goroutine", "foreign key"} {
				if strings.Contains(body, leak) {
					t.Fatalf("body shows %q: %.500s", leak, r.Body)
				}
			}
		})
	}
	// Nothing refused above was half-written.
	if names := s.realmNames(); strings.Join(names, ",") != "acme,beta" {
		t.Fatalf("realms %v", names)
	}
}
