package console_test

import (
	"html"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/apptest"
)

// agreeRow is a change made through the console in one realm and through
// the API in another, and the resource whose stored state is compared.
type agreeRow struct {
	name    string
	console func(realm string)
	api     func(realm string)
	read    string // the resource compared, {user} for the user made, {key} for ids[realm][key]
}

// readJSON reads a resource with the bootstrap key, 200 wanted; a list
// is the object's items. The ids the two realms give their resources
// differently are left out, at any depth.
func readJSON(t *testing.T, f *fixture, path string) map[string]any {
	t.Helper()
	r := f.srv.Admin(http.MethodGet, path, nil)
	apptest.MustStatus(t, r, http.StatusOK)
	var v any
	r.Decode(t, &v)
	var strip func(v any)
	strip = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for _, k := range []string{"id", "parentId", "containerId", "createdTimestamp"} {
				delete(v, k)
			}
			for _, e := range v {
				strip(e)
			}
		case []any:
			for _, e := range v {
				strip(e)
			}
		}
	}
	strip(v)
	if m, ok := v.(map[string]any); ok {
		return m
	}
	return map[string]any{"items": v}
}

// accessFixture makes in each realm the roles, client, groups, user and
// client scope the rows of accessRows work on, and answers their ids.
func accessFixture(t *testing.T, f *fixture, realms ...string) map[string]map[string]string {
	ids := map[string]map[string]string{}
	for _, realm := range realms {
		admin := func(method, path string, body any, status int) map[string]any {
			r := f.srv.Admin(method, "/admin/realms/"+realm+path, body)
			apptest.MustStatus(t, r, status)
			if status == http.StatusNoContent {
				return nil
			}
			return r.Object(t)
		}
		for _, role := range []string{"clerk", "auditor"} {
			admin(http.MethodPost, "/roles", map[string]any{"name": role}, http.StatusCreated)
		}
		admin(http.MethodPost, "/clients", map[string]any{"clientId": "desk", "grantTypes": []string{"client_credentials"}}, http.StatusCreated)
		admin(http.MethodPost, "/clients/desk/roles", map[string]any{"name": "refund"}, http.StatusCreated)
		ids[realm] = map[string]string{
			"staff": admin(http.MethodPost, "/groups", map[string]any{"name": "staff"}, http.StatusCreated)["id"].(string),
			"ops":   admin(http.MethodPost, "/groups", map[string]any{"name": "ops"}, http.StatusCreated)["id"].(string),
			"bob":   admin(http.MethodPost, "/users", map[string]any{"username": "bob"}, http.StatusCreated)["id"].(string),
			"extra": admin(http.MethodPost, "/client-scopes", map[string]any{"name": "extra"}, http.StatusCreated)["id"].(string),
			"sa":    admin(http.MethodGet, "/clients/desk/service-account-user", nil, http.StatusOK)["id"].(string),
		}
		var scopes []map[string]any
		f.srv.Admin(http.MethodGet, "/admin/realms/"+realm+"/client-scopes", nil).Decode(t, &scopes)
		for _, sc := range scopes {
			if sc["name"] == "profile" {
				ids[realm]["profile"] = sc["id"].(string)
			}
		}
	}
	return ids
}

// mustBeDone checks that a console form led to its page saying what it
// did.
func mustBeDone(t *testing.T, p *apptest.Page) {
	t.Helper()
	if p.Status != http.StatusSeeOther || p.Location(t).Query().Get("done") == "" {
		t.Fatalf("the form answered %d: %s", p.Status, p.Body)
	}
}

// accessRows are TestConsoleAndAPIAgree's rows of the pages of roles,
// groups, client scopes and a client's scopes and service account.
func accessRows(t *testing.T, f *fixture, c *console, ids map[string]map[string]string) []agreeRow {
	realmPage := func(realm, rest string) string { return "/console/realms/" + realm + rest }
	api := func(method, realm, path string, body any) {
		r := f.srv.Admin(method, "/admin/realms/"+realm+path, body)
		if r.Status >= 300 {
			t.Fatalf("%s %s: %d %s", method, path, r.Status, r.Body)
		}
	}
	form := func(page, action string, values map[string]string) func(realm string) {
		return func(realm string) {
			posted := map[string]string{}
			for k, v := range values {
				if key, ok := strings.CutPrefix(v, "id:"); ok {
					v = ids[realm][key]
				}
				posted[k] = v
			}
			mustBeDone(t, c.submit(realmPage(realm, page), realmPage(realm, action), posted))
		}
	}
	at := func(realm, key string) string { return ids[realm][key] }
	// mapper finds the id of the scope's one mapper, for the rows after
	// the one that makes it.
	mapper := func(realm string) {
		var list []map[string]any
		f.srv.Admin(http.MethodGet, "/admin/realms/"+realm+"/client-scopes/"+at(realm, "extra")+"/protocol-mappers", nil).Decode(t, &list)
		if len(list) == 1 {
			ids[realm]["mapper"] = list[0]["id"].(string)
		}
	}
	auditor := "client=&role=auditor"
	return []agreeRow{
		{"describe a role", form("/roles/clerk", "/roles/clerk", map[string]string{"description": "keeps the till"}),
			func(realm string) {
				api(http.MethodPatch, realm, "/roles/clerk", map[string]any{"description": "keeps the till"})
			}, "/roles/clerk"},
		{"add a realm and a client role to a composite", func(realm string) {
			form("/roles/clerk", "/roles/clerk/composites", map[string]string{"composite": auditor})(realm)
			form("/roles/clerk", "/roles/clerk/composites", map[string]string{"composite": "client=desk&role=refund"})(realm)
		}, func(realm string) {
			api(http.MethodPost, realm, "/roles/clerk/composites", map[string]any{"roleNames": []string{"auditor"}})
			api(http.MethodPost, realm, "/roles/clerk/composites", map[string]any{"clientRoles": map[string][]string{"desk": {"refund"}}})
		}, "/roles/clerk/composites"},
		{"remove a composite", form("/roles/clerk", "/roles/clerk/composites/remove", map[string]string{"composite": auditor}),
			func(realm string) {
				api(http.MethodDelete, realm, "/roles/clerk/composites", map[string]any{"roleNames": []string{"auditor"}})
			}, "/roles/clerk/composites"},
		{"rename a group", func(realm string) {
			form("/groups/"+at(realm, "ops"), "/groups/"+at(realm, "ops"), map[string]string{"name": "crew", "description": "all hands"})(realm)
		}, func(realm string) {
			api(http.MethodPatch, realm, "/groups/"+at(realm, "ops"), map[string]any{"name": "crew", "description": "all hands"})
		}, "/groups/{ops}"},
		{"move a group under another", func(realm string) {
			form("/groups/"+at(realm, "ops"), "/groups/"+at(realm, "ops")+"/move", map[string]string{"parent": "id:staff"})(realm)
		}, func(realm string) {
			api(http.MethodPost, realm, "/groups/"+at(realm, "staff")+"/children", map[string]any{"id": at(realm, "ops")})
		}, "/groups"},
		{"move a group to the top level", func(realm string) {
			form("/groups/"+at(realm, "ops"), "/groups/"+at(realm, "ops")+"/move", map[string]string{"parent": ""})(realm)
		}, func(realm string) {
			api(http.MethodPost, realm, "/groups", map[string]any{"id": at(realm, "ops")})
		}, "/groups"},
		{"add a member", func(realm string) {
			form("/groups/"+at(realm, "ops"), "/groups/"+at(realm, "ops")+"/members", map[string]string{"username": "bob"})(realm)
		}, func(realm string) {
			api(http.MethodPut, realm, "/users/"+at(realm, "bob")+"/groups/"+at(realm, "ops"), nil)
		}, "/groups/{ops}/members"},
		{"remove a member", func(realm string) {
			form("/groups/"+at(realm, "ops"), "/groups/"+at(realm, "ops")+"/members/remove", map[string]string{"userId": "id:bob"})(realm)
		}, func(realm string) {
			api(http.MethodDelete, realm, "/users/"+at(realm, "bob")+"/groups/"+at(realm, "ops"), nil)
		}, "/groups/{ops}/members"},
		{"grant a group a role", func(realm string) {
			form("/groups/"+at(realm, "ops"), "/groups/"+at(realm, "ops")+"/roles", map[string]string{"role": auditor})(realm)
		}, func(realm string) {
			api(http.MethodPost, realm, "/groups/"+at(realm, "ops")+"/role-mappings/realm", map[string]any{"roleNames": []string{"auditor"}})
		}, "/groups/{ops}/role-mappings/realm"},
		{"revoke a group's role", func(realm string) {
			form("/groups/"+at(realm, "ops"), "/groups/"+at(realm, "ops")+"/roles/remove", map[string]string{"role": auditor})(realm)
		}, func(realm string) {
			api(http.MethodDelete, realm, "/groups/"+at(realm, "ops")+"/role-mappings/realm", map[string]any{"roleNames": []string{"auditor"}})
		}, "/groups/{ops}/role-mappings/realm"},
		{"change a client scope", func(realm string) {
			page := "/client-scopes/" + at(realm, "extra")
			form(page, page, map[string]string{"name": "extras", "description": "more claims"})(realm)
		}, func(realm string) {
			api(http.MethodPut, realm, "/client-scopes/"+at(realm, "extra"), map[string]any{"name": "extras", "description": "more claims"})
		}, "/client-scopes/{extra}"},
		{"add a mapper", func(realm string) {
			page := "/client-scopes/" + at(realm, "extra") + "/mappers/new"
			form(page+"?type=oidc-hardcoded-claim-mapper", page, map[string]string{"name": "tier", "config.claim.name": "tier",
				"config.claim.value": "gold", "config.access.token.claim": "true", "config.id.token.claim": "true"})(realm)
			mapper(realm)
		}, func(realm string) {
			api(http.MethodPost, realm, "/client-scopes/"+at(realm, "extra")+"/protocol-mappers", map[string]any{"name": "tier",
				"mapperType": "oidc-hardcoded-claim-mapper", "protocol": "openid-connect", "config": map[string]string{
					"claim.name": "tier", "claim.value": "gold", "access.token.claim": "true", "id.token.claim": "true",
					"userinfo.token.claim": "false", "introspection.token.claim": "false"}})
			mapper(realm)
		}, "/client-scopes/{extra}/protocol-mappers"},
		{"change a mapper", func(realm string) {
			page := "/client-scopes/" + at(realm, "extra") + "/mappers/" + at(realm, "mapper")
			form(page, page, map[string]string{"name": "level", "config.claim.name": "level", "config.claim.value": "7",
				"config.jsonType.label": "int", "config.introspection.token.claim": "true"})(realm)
		}, func(realm string) {
			api(http.MethodPut, realm, "/client-scopes/"+at(realm, "extra")+"/protocol-mappers/"+at(realm, "mapper"), map[string]any{
				"name": "level", "config": map[string]string{"claim.name": "level", "claim.value": "7", "jsonType.label": "int",
					"access.token.claim": "false", "id.token.claim": "false", "userinfo.token.claim": "false",
					"introspection.token.claim": "true"}})
		}, "/client-scopes/{extra}/protocol-mappers"},
		{"delete a mapper", func(realm string) {
			page := "/client-scopes/" + at(realm, "extra") + "/mappers/" + at(realm, "mapper") + "/delete"
			form(page, page, map[string]string{})(realm)
		}, func(realm string) {
			api(http.MethodDelete, realm, "/client-scopes/"+at(realm, "extra")+"/protocol-mappers/"+at(realm, "mapper"), nil)
		}, "/client-scopes/{extra}/protocol-mappers"},
		{"link an optional client scope", form("/clients/desk/access", "/clients/desk/scopes/optional", map[string]string{"scopeId": "id:extra"}),
			func(realm string) {
				api(http.MethodPost, realm, "/clients/desk/optional-client-scopes", map[string]any{"clientScopeId": at(realm, "extra")})
			}, "/clients/desk/optional-client-scopes"},
		{"unlink a default client scope", form("/clients/desk/access", "/clients/desk/scopes/default/remove", map[string]string{"scopeId": "id:profile"}),
			func(realm string) {
				api(http.MethodDelete, realm, "/clients/desk/default-client-scopes/"+at(realm, "profile"), nil)
			}, "/clients/desk/default-client-scopes"},
		{"grant the service account a role", form("/clients/desk/access", "/clients/desk/service-account/roles", map[string]string{"role": auditor}),
			func(realm string) {
				api(http.MethodPost, realm, "/users/"+at(realm, "sa")+"/role-mappings/realm", map[string]any{"roleNames": []string{"auditor"}})
			}, "/users/{sa}/role-mappings/realm"},
		{"revoke the service account's role", form("/clients/desk/access", "/clients/desk/service-account/roles/remove", map[string]string{"role": auditor}),
			func(realm string) {
				api(http.MethodDelete, realm, "/users/"+at(realm, "sa")+"/role-mappings/realm", map[string]any{"roleNames": []string{"auditor"}})
			}, "/users/{sa}/role-mappings/realm"},
	}
}

func init() {
	// After the generic pages' routes, which the detail pages' patterns
	// would match too (roles/new is a create form, not a role's page).
	for _, p := range []string{"/roles/{roleName}", "/roles/{roleName}/composites", "/roles/{roleName}/composites/remove",
		"/groups/{groupId}", "/groups/{groupId}/move", "/groups/{groupId}/members", "/groups/{groupId}/members/remove",
		"/groups/{groupId}/roles", "/groups/{groupId}/roles/remove", "/client-scopes/{scopeId}",
		"/client-scopes/{scopeId}/mappers/new", "/client-scopes/{scopeId}/mappers/{mapperId}",
		"/client-scopes/{scopeId}/mappers/{mapperId}/delete", "/clients/{clientId}/scopes/default",
		"/clients/{clientId}/scopes/default/remove", "/clients/{clientId}/scopes/optional",
		"/clients/{clientId}/scopes/optional/remove", "/clients/{clientId}/service-account/roles",
		"/clients/{clientId}/service-account/roles/remove"} {
		consolePosts = append(consolePosts, "/console/realms/{realm}"+p)
	}
}

// accessForgedPosts are posts of the new pages' forms a reader forges
// (on what accessPages made), each the API's 403.
var accessForgedPosts = map[string]url.Values{
	"/console/realms/acme/roles/boss/composites":               {"composite": {"client=&role=intern"}},
	"/console/realms/acme/clients/desk/scopes/optional/remove": {"scopeId": {"00000000-0000-4000-8000-000000000000"}},
	"/console/realms/acme/clients/desk/service-account/roles":  {"role": {"client=&role=intern"}},
}

// accessPages makes in acme what shows every control of the pages of a
// role, a group, a client scope and its mapper, and a client's scopes and
// service account: a composite role, a group with a member, a subgroup and
// a role, a scope with a mapper, a client with a service account holding
// a role. It answers every such page, and those a reader may open.
func accessPages(t *testing.T, f *fixture) (all, read []string) {
	t.Helper()
	admin := func(method, path string, body any) *apptest.Response {
		r := f.srv.Admin(method, "/admin/realms/acme"+path, body)
		if r.Status >= 300 {
			t.Fatalf("%s %s: %d %s", method, path, r.Status, r.Body)
		}
		return r
	}
	for _, role := range []string{"boss", "intern"} {
		admin(http.MethodPost, "/roles", map[string]any{"name": role})
	}
	admin(http.MethodPost, "/roles/boss/composites", map[string]any{"roleNames": []string{"intern"}})
	group := admin(http.MethodPost, "/groups", map[string]any{"name": "crew"}).Object(t)["id"].(string)
	admin(http.MethodPost, "/groups/"+group+"/children", map[string]any{"name": "deckhands"})
	admin(http.MethodPost, "/groups", map[string]any{"name": "shore"})
	admin(http.MethodPost, "/groups/"+group+"/role-mappings/realm", map[string]any{"roleNames": []string{"boss"}})
	member := admin(http.MethodPost, "/users", map[string]any{"username": "sailor"}).Object(t)["id"].(string)
	admin(http.MethodPut, "/users/"+member+"/groups/"+group, nil)
	scope := admin(http.MethodPost, "/client-scopes", map[string]any{"name": "extra", "protocolMappers": []map[string]any{{
		"name": "tier", "mapperType": "oidc-hardcoded-claim-mapper", "config": map[string]string{"claim.name": "tier", "claim.value": "gold"}}}}).Object(t)
	admin(http.MethodPost, "/client-scopes", map[string]any{"name": "spare"}) // one to link
	mapper := scope["protocolMappers"].([]any)[0].(map[string]any)["id"].(string)
	admin(http.MethodPost, "/clients", map[string]any{"clientId": "desk", "grantTypes": []string{"client_credentials"}})
	sa := admin(http.MethodGet, "/clients/desk/service-account-user", nil).Object(t)["id"].(string)
	admin(http.MethodPost, "/users/"+sa+"/role-mappings/realm", map[string]any{"roleNames": []string{"boss"}})
	admin(http.MethodPost, "/clients/desk/optional-client-scopes", map[string]any{"clientScopeId": scope["id"]})
	base := "/console/realms/acme"
	scopePage := base + "/client-scopes/" + scope["id"].(string)
	read = []string{base + "/roles", base + "/roles/boss", base + "/groups", base + "/groups/" + group, base + "/client-scopes",
		scopePage, scopePage + "/mappers/" + mapper, base + "/clients/desk/access"}
	all = append(slices.Clone(read), scopePage+"/mappers/new?type=oidc-hardcoded-claim-mapper", scopePage+"/mappers/"+mapper+"/delete")
	return all, read
}

// The API's refusals of the new forms are shown at their fields: a
// mapper's claim the server sets, a group name holding '/', a move under
// the group's own subgroup (a forged choice the select does not offer),
// a member no user is.
func TestConsoleAccessRefusalsAtTheirFields(t *testing.T) {
	f := newFixture(t)
	c := f.newAdmin("ada")
	accessPages(t, f)
	var groups []map[string]any
	f.srv.Admin(http.MethodGet, "/admin/realms/acme/groups", nil).Decode(t, &groups)
	var crew, deckhands string
	for _, g := range groups {
		if g["name"] == "crew" {
			crew = g["id"].(string)
			deckhands = g["subGroups"].([]any)[0].(map[string]any)["id"].(string)
		}
	}
	scope := ""
	var scopes []map[string]any
	f.srv.Admin(http.MethodGet, "/admin/realms/acme/client-scopes", nil).Decode(t, &scopes)
	for _, sc := range scopes {
		if sc["name"] == "extra" {
			scope = sc["id"].(string)
		}
	}
	base := "/console/realms/acme"
	for _, tc := range []struct {
		name, page, action string
		values             map[string]string
		field, message     string
	}{
		{"a claim the server sets", base + "/client-scopes/" + scope + "/mappers/new?type=oidc-hardcoded-claim-mapper",
			base + "/client-scopes/" + scope + "/mappers/new", map[string]string{"name": "forged", "config.claim.name": "sub",
				"config.claim.value": "admin"}, "config.claim.name", "is set by the server"},
		{"a group name with a slash", base + "/groups/" + crew, base + "/groups/" + crew, map[string]string{"name": "a/b"},
			"name", "must not contain '/'"},
		{"a move under its own subgroup", base + "/groups/" + crew, base + "/groups/" + crew + "/move",
			map[string]string{"parent": deckhands}, "parent", "would create a cycle"},
		{"a member no user is", base + "/groups/" + crew, base + "/groups/" + crew + "/members",
			map[string]string{"username": "nobody"}, "username", "No user of the realm has this username."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := c.submit(tc.page, tc.action, tc.values)
			body := string(p.Body)
			errID := `id="` + tc.field + `-error"`
			if p.Status != http.StatusUnprocessableEntity || !strings.Contains(body, errID) {
				t.Fatalf("%d, want 422 with the message at %s: %s", p.Status, tc.field, body)
			}
			// The select offers no such parent: only inputs show it again.
			if v, ok := tc.values[tc.field]; ok && tc.field != "parent" && !strings.Contains(body, `value="`+html.EscapeString(v)+`"`) {
				t.Errorf("the refused value %q is not in its field again", v)
			}
			at := html.UnescapeString(body[strings.Index(body, errID):])
			if !strings.Contains(at[:min(len(at), 400)], tc.message) {
				t.Fatalf("the message at %s is not %q: %s", tc.field, tc.message, at[:min(len(at), 400)])
			}
		})
	}
}
