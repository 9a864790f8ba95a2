package app

import (
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/identity"
)

// resourcesTestRealm builds, through the admin API, a realm with one of
// every resource the export carries, and returns a client secret and the
// ids of the people it made.
func resourcesTestRealm(t *testing.T, s *testServer) (secret string, users map[string]string) {
	t.Helper()
	mustStatus(t, s.admin(http.MethodPost, "/admin/realms", map[string]any{"name": "acme", "smtpPassword": "smtp-secret"}), http.StatusCreated)
	post := func(path string, body any, want int) map[string]any {
		t.Helper()
		r := s.admin(http.MethodPost, "/admin/realms/acme"+path, body)
		mustStatus(t, r, want)
		var out map[string]any
		if len(r.Body) > 0 && r.Body[0] == '{' {
			out = r.object(t)
		}
		return out
	}
	app := post("/clients", map[string]any{"clientId": "app", "redirectUris": []string{"https://app.acme.test/cb"},
		"grantTypes": []string{"authorization_code", "refresh_token", "client_credentials"}}, http.StatusCreated)
	secret = app["secret"].(string)
	post("/clients", map[string]any{"clientId": "spa", "clientType": "PUBLIC", "webOrigins": []string{"https://spa.acme.test"}}, http.StatusCreated)
	post("/clients/app/roles", map[string]any{"name": "read"}, http.StatusCreated)
	post("/clients/app/roles", map[string]any{"name": "write", "description": "changes things"}, http.StatusCreated)
	post("/roles", map[string]any{"name": "user"}, http.StatusCreated)
	post("/roles", map[string]any{"name": "admin"}, http.StatusCreated)
	post("/roles/admin/composites", map[string]any{"roleNames": []string{"user"}, "clientRoles": map[string]any{"app": []string{"write"}}}, http.StatusOK)
	scope := post("/client-scopes", map[string]any{"name": "tenant", "protocolMappers": []any{map[string]any{
		"name": "tenant", "mapperType": "oidc-hardcoded-claim-mapper",
		"config": map[string]any{"claim.name": "tenant", "claim.value": "acme"}}}}, http.StatusCreated)
	post("/clients/spa/optional-client-scopes", map[string]any{"clientScopeId": scope["id"]}, http.StatusCreated)
	staff := post("/groups", map[string]any{"name": "staff"}, http.StatusCreated)
	ops := post("/groups", map[string]any{"name": "ops", "parentId": staff["id"]}, http.StatusCreated)
	post("/groups/"+ops["id"].(string)+"/role-mappings", map[string]any{"roleNames": []string{"user"}}, http.StatusOK)
	users = map[string]string{}
	for _, name := range []string{"alice", "bob"} {
		users[name] = s.createUser("acme", map[string]any{"username": name, "email": name + "@acme.test"})["id"].(string)
	}
	post("/users/"+users["alice"]+"/role-mappings/realm", map[string]any{"roleNames": []string{"admin"}}, http.StatusOK)
	post("/users/"+users["bob"]+"/role-mappings/clients/app", map[string]any{"roleNames": []string{"read"}}, http.StatusOK)
	mustStatus(t, s.admin(http.MethodPut, "/admin/realms/acme/users/"+users["bob"]+"/groups/"+ops["id"].(string), nil), http.StatusOK)
	sa := s.admin(http.MethodGet, "/admin/realms/acme/clients/app/service-account-user", nil).object(t)
	post("/users/"+sa["id"].(string)+"/role-mappings/clients/app", map[string]any{"roleNames": []string{"read"}}, http.StatusOK)
	// Organizations: one with a verified domain, members and an SSO
	// connection to a provider, one bare.
	post("/identity-providers", map[string]any{"alias": "corp", "providerType": "oidc", "clientId": "c", "clientSecret": "s",
		"authorizationUrl": "https://idp.test/auth", "tokenUrl": "https://idp.test/token", "jwksUrl": "https://idp.test/jwks",
		"issuer": "https://idp.test"}, http.StatusCreated)
	org := post("/organizations", map[string]any{"slug": "acme-corp", "name": "Acme Corp", "attributes": map[string]any{"tier": []string{"gold"}},
		"domains": []any{map[string]any{"name": "acme.test"}, map[string]any{"name": "acme.example"}}}, http.StatusCreated)
	if err := s.store.VerifyDomain(t.Context(), org["id"].(string), "acme.test"); err != nil {
		t.Fatal(err)
	}
	post("/organizations/acme-corp/members", map[string]any{"userId": users["alice"], "role": "owner"}, http.StatusCreated)
	post("/organizations/acme-corp/members", map[string]any{"userId": users["bob"]}, http.StatusCreated)
	post("/organizations/acme-corp/sso-connections", map[string]any{"identityProvider": "corp", "domain": "acme.test",
		"autoJoin": true, "hideOnLogin": true}, http.StatusCreated)
	post("/organizations", map[string]any{"name": "Beta", "enabled": false}, http.StatusCreated)
	// Authorization policies and their settings.
	post("/policies", map[string]any{"name": "owners read", "description": "their own", "effect": "permit",
		"target":    map[string]any{"resourceTypes": []string{"document"}, "actions": []string{"read"}},
		"condition": "resource.properties.ownerID == subject.email"}, http.StatusCreated)
	post("/policies", map[string]any{"name": "no contractors", "effect": "deny", "enabled": false,
		"target": map[string]any{"resourceTypes": []string{"*"}, "actions": []string{"*"}}}, http.StatusCreated)
	mustStatus(t, s.admin(http.MethodPut, "/admin/realms/acme/policy-settings", map[string]any{"defaultDecision": "permit"}), http.StatusOK)
	return secret, users
}

func resourcesTestExport(t *testing.T, s *testServer, realm string) ([]byte, map[string]any) {
	t.Helper()
	r := s.admin(http.MethodGet, "/admin/realms/"+realm+"/export?includeUsers=true&includeSecrets=true", nil)
	mustStatus(t, r, http.StatusOK)
	return r.Body, r.object(t)
}

// resourcesTestEffective is what a token would carry for a user: effective
// realm roles and the app's client roles.
func resourcesTestEffective(t *testing.T, s *testServer, realm, userID string) []string {
	t.Helper()
	var names []string
	for _, path := range []string{"/role-mappings/realm/composite", "/role-mappings/clients/app/composite"} {
		var roles []map[string]any
		r := s.admin(http.MethodGet, "/admin/realms/"+realm+"/users/"+userID+path, nil)
		mustStatus(t, r, http.StatusOK)
		r.decode(t, &roles)
		for _, role := range roles {
			names = append(names, role["name"].(string))
		}
	}
	return names
}

// An export carries every resource; importing it over the realm, or into
// a fresh server, and exporting again gives the same document, and the
// imported realm behaves the same.
func TestRealmExportImportEveryResource(t *testing.T) {
	s := newTestServer(t)
	secret, users := resourcesTestRealm(t, s)
	raw, first := resourcesTestExport(t, s, "acme")

	for _, key := range []string{"clientScopes", "clients", "roles", "groups", "users", "organizations", "authorizationPolicies"} {
		if first[key] == nil {
			t.Fatalf("export lacks %s", key)
		}
	}
	wantOrg := `"slug": "acme-corp",
      "name": "Acme Corp",
      "description": "",
      "enabled": true,
      "attributes": {
        "tier": [
          "gold"
        ]
      },
      "domains": [
        {
          "name": "acme.example",
          "verified": false
        },
        {
          "name": "acme.test",
          "verified": true
        }
      ],`
	if !strings.Contains(string(raw), wantOrg) || !strings.Contains(string(raw), `"username": "alice",
          "role": "owner",`) || !strings.Contains(string(raw), `"identityProvider": "corp",`) {
		t.Fatalf("export's organizations: %s", first["organizations"])
	}
	if n := len(first["clientScopes"].([]any)); n != 11 {
		t.Fatalf("export has %d client scopes, want the 10 seeded and tenant", n)
	}
	if strings.Contains(string(raw), secret) {
		t.Fatal("export contains the client secret itself, not only its hash")
	}
	wantAlice := resourcesTestEffective(t, s, "acme", users["alice"])
	wantBob := resourcesTestEffective(t, s, "acme", users["bob"])

	check := func(t *testing.T, s *testServer) {
		t.Helper()
		rawAgain, again := resourcesTestExport(t, s, "acme")
		if !reflect.DeepEqual(first, again) {
			a, _ := json.MarshalIndent(first, "", " ")
			b, _ := json.MarshalIndent(again, "", " ")
			t.Fatalf("export after import differs:\nbefore %s\nafter %s", a, b)
		}
		if !bytes.Equal(raw, rawAgain) {
			t.Fatalf("export after import is not the same bytes:\nbefore %s\nafter %s", raw, rawAgain)
		}
		if got := resourcesTestEffective(t, s, "acme", users["alice"]); !reflect.DeepEqual(got, wantAlice) {
			t.Fatalf("alice's effective roles %v, want %v", got, wantAlice)
		}
		if got := resourcesTestEffective(t, s, "acme", users["bob"]); !reflect.DeepEqual(got, wantBob) {
			t.Fatalf("bob's effective roles %v, want %v", got, wantBob)
		}
		c, err := s.store.GetClientByClientID(t.Context(), mustRealmID(t, s, "acme"), "app")
		if err != nil || !identity.CheckClientSecret(c, secret) {
			t.Fatalf("the app's secret no longer authenticates after import: %v", err)
		}
	}
	t.Run("overwrite", func(t *testing.T) {
		mustStatus(t, s.admin(http.MethodPost, "/admin/realms/import?overwrite=true", raw), http.StatusCreated)
		check(t, s)
	})
	t.Run("fresh server", func(t *testing.T) {
		fresh := newTestServer(t)
		mustStatus(t, fresh.admin(http.MethodPost, "/admin/realms/import", raw), http.StatusCreated)
		check(t, fresh)
	})
	t.Run("copy under a new name", func(t *testing.T) {
		doc := map[string]any{}
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		delete(doc, "id")
		doc["name"] = "acme-copy"
		mustStatus(t, s.admin(http.MethodPost, "/admin/realms/import", doc), http.StatusCreated)
		_, cp := resourcesTestExport(t, s, "acme-copy")
		for _, key := range []string{"clientScopes", "clients", "groups", "users"} {
			if len(cp[key].([]any)) != len(first[key].([]any)) {
				t.Fatalf("copy has %d %s, original %d", len(cp[key].([]any)), key, len(first[key].([]any)))
			}
		}
		// Organizations get fresh ids; members and connections follow.
		orgsCopy, orgsFirst := cp["organizations"].([]any), first["organizations"].([]any)
		if len(orgsCopy) != 2 || orgsCopy[0].(map[string]any)["id"] == orgsFirst[0].(map[string]any)["id"] ||
			!reflect.DeepEqual(orgsCopy[0].(map[string]any)["members"], orgsFirst[0].(map[string]any)["members"]) ||
			len(orgsCopy[0].(map[string]any)["ssoConnections"].([]any)) != 1 {
			t.Fatalf("organizations of the copy %v", orgsCopy)
		}
		copyUsers := cp["users"].([]any)
		if copyUsers[0].(map[string]any)["id"] == first["users"].([]any)[0].(map[string]any)["id"] {
			t.Fatal("a copy kept the original's user ids")
		}
		// Group membership follows the fresh group ids.
		bob := copyUsers[1].(map[string]any)
		groups := cp["groups"].([]any)
		if bob["username"] != "bob" || bob["groups"].([]any)[0] != groups[1].(map[string]any)["id"] {
			t.Fatalf("bob's groups in the copy %v, groups %v", bob["groups"], groups)
		}
	})
}

func TestRealmImportRejectsBadResources(t *testing.T) {
	s := newTestServer(t)
	resourcesTestRealm(t, s)
	_, base := resourcesTestExport(t, s, "acme")

	// mutate returns a copy of the export, renamed and changed by fn.
	mutate := func(fn func(doc map[string]any)) map[string]any {
		raw, _ := json.Marshal(base)
		doc := map[string]any{}
		_ = json.Unmarshal(raw, &doc)
		delete(doc, "id")
		doc["name"] = "broken"
		fn(doc)
		return doc
	}
	// clients[0] is the realm's account-console, then app and spa.
	at := func(doc map[string]any, key string, i int) map[string]any {
		return doc[key].([]any)[i].(map[string]any)
	}
	cases := []struct {
		name        string
		doc         map[string]any
		status      int
		code, field string
	}{
		{"bad redirect uri", mutate(func(d map[string]any) { at(d, "clients", 1)["redirectUris"] = []any{"https://x/#frag"} }),
			400, "invalid_field", "clients[1].redirectUris[0]"},
		{"duplicate clientId", mutate(func(d map[string]any) { at(d, "clients", 2)["clientId"] = "app" }),
			409, "conflict", "clients[2].clientId"},
		{"unknown scope link", mutate(func(d map[string]any) { at(d, "clients", 1)["defaultClientScopes"] = []any{"nope"} }),
			400, "invalid_field", "clients[1].defaultClientScopes"},
		{"bad secret hash", mutate(func(d map[string]any) { at(d, "clients", 1)["secretHash"] = "short" }),
			400, "invalid_field", "clients[1].secretHash"},
		{"unknown composite", mutate(func(d map[string]any) {
			d["roles"].(map[string]any)["realm"].([]any)[0].(map[string]any)["composites"] = map[string]any{"realmRoles": []any{"ghost"}}
		}), 400, "invalid_field", "roles.realm[0].composites.realmRoles"},
		{"composite cycle", mutate(func(d map[string]any) {
			// admin includes user; make user include admin.
			for _, r := range d["roles"].(map[string]any)["realm"].([]any) {
				if r.(map[string]any)["name"] == "user" {
					r.(map[string]any)["composites"] = map[string]any{"realmRoles": []any{"admin"}}
				}
			}
		}), 400, "invalid_field", ""},
		{"roles of an unknown client", mutate(func(d map[string]any) {
			d["roles"].(map[string]any)["client"].(map[string]any)["ghost"] = []any{map[string]any{"name": "x"}}
		}), 400, "invalid_field", "roles.client.ghost"},
		{"group parent after child", mutate(func(d map[string]any) {
			g := d["groups"].([]any)
			g[0], g[1] = g[1], g[0]
		}), 400, "invalid_field", "groups[0].parentId"},
		{"user in unknown group", mutate(func(d map[string]any) { at(d, "users", 1)["groups"] = []any{"4c1d6f5e-0000-4000-8000-000000000000"} }),
			400, "invalid_field", "users[1].groups"},
		{"user with unknown client role", mutate(func(d map[string]any) {
			at(d, "users", 1)["clientRoles"] = map[string]any{"app": []any{"ghost"}}
		}), 400, "invalid_field", "users[1].clientRoles.app"},
		{"bad mapper type", mutate(func(d map[string]any) {
			for _, sc := range d["clientScopes"].([]any) {
				if sc.(map[string]any)["name"] == "tenant" {
					sc.(map[string]any)["protocolMappers"].([]any)[0].(map[string]any)["mapperType"] = "nope"
				}
			}
		}), 400, "invalid_field", ""},
		{"service account without the grant", mutate(func(d map[string]any) {
			at(d, "clients", 1)["grantTypes"] = []any{"authorization_code"}
		}), 400, "invalid_field", "clients[1].serviceAccount"},
		{"organization member not in the file", mutate(func(d map[string]any) {
			at(d, "organizations", 0)["members"].([]any)[1].(map[string]any)["username"] = "ghost"
		}), 400, "invalid_field", "organizations[0].members[1].username"},
		{"organization member twice", mutate(func(d map[string]any) {
			at(d, "organizations", 0)["members"].([]any)[1].(map[string]any)["username"] = "alice"
		}), 409, "conflict", "organizations[0].members[1].username"},
		{"organization member's role", mutate(func(d map[string]any) {
			at(d, "organizations", 0)["members"].([]any)[1].(map[string]any)["role"] = "boss"
		}), 400, "invalid_field", "organizations[0].members[1].role"},
		{"organization slug twice", mutate(func(d map[string]any) { at(d, "organizations", 1)["slug"] = "acme-corp" }),
			409, "conflict", "organizations[1].slug"},
		{"organization slug", mutate(func(d map[string]any) { at(d, "organizations", 1)["slug"] = "Beta Co" }),
			400, "invalid_field", "organizations[1].slug"},
		{"organization domain", mutate(func(d map[string]any) {
			at(d, "organizations", 1)["domains"] = []any{map[string]any{"name": "127.0.0.1"}}
		}), 400, "invalid_field", "organizations[1].domains[0].name"},
		{"domain verified by two organizations", mutate(func(d map[string]any) {
			at(d, "organizations", 1)["domains"] = []any{map[string]any{"name": "acme.test", "verified": true}}
		}), 409, "conflict", "organizations[1].domains[0]"},
		{"connection to a provider not in the file", mutate(func(d map[string]any) {
			at(d, "organizations", 0)["ssoConnections"].([]any)[0].(map[string]any)["identityProvider"] = "ghost"
		}), 400, "invalid_field", "organizations[0].ssoConnections[0].identityProvider"},
		{"connection's domain not the organization's", mutate(func(d map[string]any) {
			at(d, "organizations", 0)["ssoConnections"].([]any)[0].(map[string]any)["domain"] = "beta.test"
		}), 400, "invalid_field", "organizations[0].ssoConnections[0].domain"},
		{"provider serving two organizations", mutate(func(d map[string]any) {
			at(d, "organizations", 1)["ssoConnections"] = []any{map[string]any{"identityProvider": "corp"}}
		}), 409, "conflict", "organizations[1].ssoConnections[0].identityProvider"},
		{"invitations are not imported", mutate(func(d map[string]any) { at(d, "organizations", 0)["invitations"] = []any{} }),
			400, "unknown_field", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := s.admin(http.MethodPost, "/admin/realms/import", tc.doc)
			if tc.field == "" {
				mustStatus(t, r, tc.status)
				var e httpx.ErrorBody
				r.decode(t, &e)
				if e.Error != tc.code || e.Field == "" {
					t.Fatalf("error %s", r.Body)
				}
			} else {
				mustError(t, r, tc.status, tc.code, tc.field)
			}
			// All or nothing: no trace of the failed import.
			mustError(t, s.admin(http.MethodGet, "/admin/realms/broken", nil), http.StatusNotFound, "not_found", "")
		})
	}
}
