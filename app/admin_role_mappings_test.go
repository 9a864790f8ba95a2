package app

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/roles"
	"github.com/idenplane/idenplane/store"
)

// rolesTestGroup makes a group straight through the store (parentID ""
// for a top-level group), so these tests do not depend on the groups API.
func (s *testServer) rolesTestGroup(realm, parentID, name string) *store.Group {
	s.t.Helper()
	rm, err := s.store.GetRealm(context.Background(), realm)
	if err != nil {
		s.t.Fatalf("realm %s: %v", realm, err)
	}
	g := &store.Group{ID: uuid.NewString(), RealmID: rm.ID, ParentID: parentID, Name: name, CreatedAt: testEpoch.UnixMilli()}
	if err := s.store.CreateGroup(context.Background(), g); err != nil {
		s.t.Fatalf("create group %s: %v", name, err)
	}
	return g
}

func (s *testServer) rolesTestJoin(g *store.Group, userID string) {
	s.t.Helper()
	if err := s.store.AddGroupMember(context.Background(), g.ID, userID); err != nil {
		s.t.Fatalf("add member to %s: %v", g.Name, err)
	}
}

func rolesUserMappings(realm, userID string) string {
	return userPath(realm, userID) + "/role-mappings"
}

func rolesGroupMappings(realm, groupID string) string {
	return "/admin/realms/" + realm + "/groups/" + groupID + "/role-mappings"
}

// rolesTestMap sends a role-mappings write and checks the mappings it answers.
func (s *testServer) rolesTestMap(method, path string, names []string, want ...string) {
	s.t.Helper()
	r := s.admin(method, path, map[string]any{"roleNames": names})
	mustStatus(s.t, r, http.StatusOK)
	rolesTestMustList(s.t, method+" "+path, r, want...)
}

// rolesTestRealm makes realm acme with clients web and api and roles:
// realm admin, viewer, editor; web/read, web/write; api/call.
func rolesTestRealm(t testing.TB) *testServer {
	s := newTestServer(t)
	s.createRealm("acme")
	s.rolesTestClient("acme", "web")
	s.rolesTestClient("acme", "api")
	for _, n := range []string{"admin", "viewer", "editor"} {
		s.rolesTestCreate(rolesPath("acme"), n)
	}
	s.rolesTestCreate(rolesClientPath("acme", "web"), "read")
	s.rolesTestCreate(rolesClientPath("acme", "web"), "write")
	s.rolesTestCreate(rolesClientPath("acme", "api"), "call")
	return s
}

func TestUserRoleMappings(t *testing.T) {
	s := rolesTestRealm(t)
	alice := s.createUser("acme", map[string]any{"username": "alice"})["id"].(string)
	bob := s.createUser("acme", map[string]any{"username": "bob"})["id"].(string)
	base := rolesUserMappings("acme", alice)

	// Nothing mapped yet: every listing is an empty array, not null.
	for _, p := range []string{base, base + "/realm", base + "/clients/web", base + "/realm/composite", base + "/clients/web/composite"} {
		r := s.admin(http.MethodGet, p, nil)
		mustStatus(t, r, http.StatusOK)
		if strings.TrimSpace(string(r.Body)) != "[]" {
			t.Fatalf("GET %s with no mappings: %s", p, r.Body)
		}
	}

	s.rolesTestMap(http.MethodPost, base+"/realm", []string{"viewer", "admin", "viewer"}, "admin", "viewer")
	s.rolesTestMap(http.MethodPost, base+"/realm", []string{"admin"}, "admin", "viewer")
	r := s.admin(http.MethodGet, base+"/realm", nil)
	mustStatus(t, r, http.StatusOK)
	var reps []map[string]any
	r.decode(t, &reps)
	admin := s.admin(http.MethodGet, rolesPath("acme")+"/admin", nil).object(t)
	mustEqualJSON(t, "mapped role representation", reps[0], admin)

	s.rolesTestMap(http.MethodPost, base+"/clients/web", []string{"write", "read"}, "web/read", "web/write")
	s.rolesTestMap(http.MethodPost, base+"/clients/api", []string{"call"}, "api/call")
	s.rolesTestMustNames(base, "admin", "viewer", "api/call", "web/read", "web/write")
	s.rolesTestMustNames(base+"/realm", "admin", "viewer")
	s.rolesTestMustNames(base+"/clients/web", "web/read", "web/write")

	// Unmapping answers what is left; unmapping an unmapped role is no error.
	s.rolesTestMap(http.MethodDelete, base+"/realm", []string{"viewer", "editor"}, "admin")
	s.rolesTestMap(http.MethodDelete, base+"/realm", []string{"viewer"}, "admin")
	s.rolesTestMap(http.MethodDelete, base+"/clients/web", []string{"read"}, "web/write")
	s.rolesTestMustNames(base, "admin", "api/call", "web/write")
	// The same names in another client are other roles.
	s.rolesTestMap(http.MethodDelete, base+"/clients/api", []string{"call"})
	s.rolesTestMustNames(base, "admin", "web/write")

	// Bob is untouched.
	s.rolesTestMustNames(rolesUserMappings("acme", bob))

	// A renamed role stays mapped, under its new name.
	mustStatus(t, s.admin(http.MethodPut, rolesPath("acme")+"/admin", map[string]any{"name": "root"}), http.StatusOK)
	s.rolesTestMustNames(base+"/realm", "root")

	// Deleting the user deletes the mappings.
	mustStatus(t, s.admin(http.MethodDelete, userPath("acme", alice), nil), http.StatusNoContent)
	left, err := s.store.ListRoleMappings(context.Background(), store.UserRoles(alice), "*")
	if err != nil || len(left) != 0 {
		t.Fatalf("mappings of a deleted user: %d (%v)", len(left), err)
	}
	mustError(t, s.admin(http.MethodGet, base, nil), http.StatusNotFound, "not_found", "")
}

func TestGroupRoleMappings(t *testing.T) {
	s := rolesTestRealm(t)
	staff := s.rolesTestGroup("acme", "", "staff")
	base := rolesGroupMappings("acme", staff.ID)

	s.rolesTestMustNames(base)
	// The bare path takes realm roles, as the spec says, and answers every
	// direct mapping, as its GET does.
	s.rolesTestMap(http.MethodPost, base, []string{"viewer", "admin"}, "admin", "viewer")
	s.rolesTestMap(http.MethodPost, base+"/clients/web", []string{"read"}, "web/read")
	s.rolesTestMap(http.MethodPost, base, []string{"editor"}, "admin", "editor", "viewer", "web/read")
	mustError(t, s.admin(http.MethodPost, base, map[string]any{"roleNames": []string{"read"}}),
		http.StatusBadRequest, "invalid_field", "roleNames")
	s.rolesTestMap(http.MethodDelete, base, []string{"viewer", "viewer"}, "admin", "editor", "web/read")
	s.rolesTestMustNames(base+"/realm", "admin", "editor")
	s.rolesTestMap(http.MethodDelete, base+"/realm", []string{"admin"}, "editor")
	s.rolesTestMap(http.MethodPost, base+"/realm", []string{"admin"}, "admin", "editor")
	s.rolesTestMustNames(base+"/clients/web", "web/read")
	s.rolesTestMustNames(base + "/clients/api")
	s.rolesTestMap(http.MethodDelete, base+"/clients/web", []string{"read", "write"})
	s.rolesTestMustNames(base, "admin", "editor")

	// Deleting the group deletes its mappings.
	if err := s.store.DeleteGroup(context.Background(), staff.RealmID, staff.ID); err != nil {
		t.Fatal(err)
	}
	left, err := s.store.ListRoleMappings(context.Background(), store.GroupRoles(staff.ID), "*")
	if err != nil || len(left) != 0 {
		t.Fatalf("mappings of a deleted group: %d (%v)", len(left), err)
	}
	mustError(t, s.admin(http.MethodGet, base, nil), http.StatusNotFound, "not_found", "")
}

func TestRoleMappingsInvalid(t *testing.T) {
	s := rolesTestRealm(t)
	alice := s.createUser("acme", map[string]any{"username": "alice"})["id"].(string)
	staff := s.rolesTestGroup("acme", "", "staff")
	users, groups := rolesUserMappings("acme", alice), rolesGroupMappings("acme", staff.ID)
	// Something is mapped already, so a refused DELETE can be seen to change nothing.
	for _, base := range []string{users, groups} {
		s.rolesTestMap(http.MethodPost, base+"/realm", []string{"viewer"}, "viewer")
		s.rolesTestMap(http.MethodPost, base+"/clients/web", []string{"read"}, "web/read")
	}

	targets := []struct {
		name, path string
		valid      string // a role name the path accepts
		other      string // a role of the realm the path does not take
	}{
		{"user realm", users + "/realm", "viewer", "read"},
		{"user client", users + "/clients/web", "read", "viewer"},
		{"group bare", groups, "viewer", "read"},
		{"group realm", groups + "/realm", "viewer", "write"},
		{"group client", groups + "/clients/web", "read", "admin"},
	}
	for _, tg := range targets {
		cases := []struct {
			name        string
			body        any
			headers     []string
			status      int
			code, field string
			mentions    []string
		}{
			{"missing roleNames", map[string]any{}, nil, 400, "invalid_field", "roleNames", nil},
			{"null roleNames", map[string]any{"roleNames": nil}, nil, 400, "invalid_field", "roleNames", nil},
			{"empty roleNames", map[string]any{"roleNames": []string{}}, nil, 400, "invalid_field", "roleNames", nil},
			{"string", map[string]any{"roleNames": tg.valid}, nil, 400, "invalid_field", "roleNames", nil},
			{"numbers", map[string]any{"roleNames": []int{1, 2}}, nil, 400, "invalid_field", "roleNames", nil},
			{"objects", map[string]any{"roleNames": []map[string]string{{"name": tg.valid}}}, nil, 400, "invalid_field", "roleNames", nil},
			{"empty name", map[string]any{"roleNames": []string{tg.valid, ""}}, nil, 400, "invalid_field", "roleNames", nil},
			{"unknown names", map[string]any{"roleNames": []string{"ghost", tg.valid, "spook"}}, nil, 400, "invalid_field", "roleNames", []string{`"ghost", "spook"`}},
			{"role of another container", map[string]any{"roleNames": []string{tg.valid, tg.other}}, nil, 400, "invalid_field", "roleNames", []string{`"` + tg.other + `"`}},
			{"unknown field", map[string]any{"roleNames": []string{tg.valid}, "clientId": "web"}, nil, 400, "unknown_field", "clientId", nil},
			{"wrong case", map[string]any{"rolenames": []string{tg.valid}}, nil, 400, "unknown_field", "rolenames", nil},
			{"malformed", `{"roleNames":["` + tg.valid + `"]`, nil, 400, "invalid_json", "", nil},
			{"array body", `["` + tg.valid + `"]`, nil, 400, "invalid_json", "", nil},
			{"empty body", "", nil, 400, "invalid_json", "", nil},
			{"text/plain", `{"roleNames":["` + tg.valid + `"]}`, []string{"Content-Type: text/plain"}, 415, "unsupported_media_type", "", nil},
		}
		for _, method := range []string{http.MethodPost, http.MethodDelete} {
			for _, c := range cases {
				t.Run(tg.name+" "+method+" "+c.name, func(t *testing.T) {
					r := s.admin(method, tg.path, c.body, c.headers...)
					mustError(t, r, c.status, c.code, c.field)
					d := r.object(t)["error_description"].(string)
					for _, m := range c.mentions {
						if !strings.Contains(d, m) {
							t.Fatalf("description %q does not mention %s", d, m)
						}
					}
					if c.mentions != nil && strings.Contains(d, `"`+tg.valid+`"`) {
						t.Fatalf("description %q names the known role %s", d, tg.valid)
					}
				})
			}
		}
	}
	// Nothing was applied by any refused request.
	s.rolesTestMustNames(users, "viewer", "web/read")
	s.rolesTestMustNames(groups, "viewer", "web/read")
}

func TestRoleMappingsNotFound(t *testing.T) {
	s := rolesTestRealm(t)
	alice := s.createUser("acme", map[string]any{"username": "alice"})["id"].(string)
	staff := s.rolesTestGroup("acme", "", "staff")
	s.createRealm("other")
	otherUser := s.createUser("other", map[string]any{"username": "alice"})["id"].(string)
	otherGroup := s.rolesTestGroup("other", "", "staff")
	body := map[string]any{"roleNames": []string{"viewer"}}

	var paths []string
	for _, holder := range []string{
		rolesUserMappings("nope", alice),
		rolesUserMappings("acme", uuid.NewString()),
		rolesUserMappings("acme", "not-a-uuid"),
		rolesUserMappings("acme", otherUser), // a user of another realm
		rolesGroupMappings("nope", staff.ID),
		rolesGroupMappings("acme", uuid.NewString()),
		rolesGroupMappings("acme", otherGroup.ID),
	} {
		paths = append(paths, holder+"/realm", holder+"/clients/web", holder+"/realm/composite", holder+"/clients/web/composite")
	}
	for _, holder := range []string{rolesUserMappings("acme", alice), rolesGroupMappings("acme", staff.ID)} {
		paths = append(paths, holder+"/clients/nope", holder+"/clients/nope/composite")
	}
	for _, p := range paths {
		methods := []string{http.MethodGet}
		if !strings.HasSuffix(p, "/composite") {
			methods = append(methods, http.MethodPost, http.MethodDelete)
		}
		for _, m := range methods {
			var b any
			if m != http.MethodGet {
				b = body
			}
			t.Run(m+" "+p, func(t *testing.T) {
				mustError(t, s.admin(m, p, b), http.StatusNotFound, "not_found", "")
			})
		}
	}
	for _, p := range []string{rolesUserMappings("acme", uuid.NewString()), rolesGroupMappings("acme", uuid.NewString())} {
		mustError(t, s.admin(http.MethodGet, p, nil), http.StatusNotFound, "not_found", "")
	}
	mustError(t, s.admin(http.MethodPost, rolesGroupMappings("acme", uuid.NewString()), body), http.StatusNotFound, "not_found", "")
	// The user bare path is read-only, like Keycloak's.
	r := s.admin(http.MethodPost, rolesUserMappings("acme", alice), body)
	mustError(t, r, http.StatusMethodNotAllowed, "method_not_allowed", "")
	mustError(t, s.request(http.MethodGet, rolesUserMappings("acme", alice), nil), http.StatusUnauthorized, "unauthorized", "")
	s.rolesTestMustNames(rolesUserMappings("acme", alice))
	s.rolesTestMustNames(rolesUserMappings("other", otherUser))
}

func TestEffectiveRoles(t *testing.T) {
	s := rolesTestRealm(t)
	for _, n := range []string{"direct", "grand", "parent", "child", "comp1", "comp2", "comp3", "deep", "unused"} {
		s.rolesTestCreate(rolesPath("acme"), n)
	}
	s.rolesTestCreate(rolesClientPath("acme", "api"), "admin")
	composite := func(parent string, body map[string]any) {
		t.Helper()
		mustStatus(t, s.admin(http.MethodPost, parent+"/composites", body), http.StatusOK)
	}
	realmRole := func(n string) string { return rolesPath("acme") + "/" + n }
	// parent > comp1 > web/read > comp2 > {comp3 > deep, api/call}; direct > comp3.
	composite(realmRole("parent"), map[string]any{"roleNames": []string{"comp1"}})
	composite(realmRole("comp1"), map[string]any{"clientRoles": map[string][]string{"web": {"read"}}})
	composite(rolesClientPath("acme", "web")+"/read", map[string]any{"roleNames": []string{"comp2"}})
	composite(realmRole("comp2"), map[string]any{"roleNames": []string{"comp3"}, "clientRoles": map[string][]string{"api": {"call"}}})
	composite(realmRole("comp3"), map[string]any{"roleNames": []string{"deep"}})
	composite(realmRole("direct"), map[string]any{"roleNames": []string{"comp3"}})

	grand := s.rolesTestGroup("acme", "", "grand")
	parent := s.rolesTestGroup("acme", grand.ID, "parent")
	child := s.rolesTestGroup("acme", parent.ID, "child")
	outsider := s.rolesTestGroup("acme", "", "outsider")
	for g, role := range map[*store.Group]string{grand: "grand", parent: "parent", child: "child", outsider: "unused"} {
		s.rolesTestMap(http.MethodPost, rolesGroupMappings("acme", g.ID)+"/realm", []string{role}, role)
	}
	s.rolesTestMap(http.MethodPost, rolesGroupMappings("acme", parent.ID)+"/clients/api", []string{"admin"}, "api/admin")

	alice := s.createUser("acme", map[string]any{"username": "alice"})["id"].(string)
	bob := s.createUser("acme", map[string]any{"username": "bob"})["id"].(string)
	s.rolesTestJoin(child, alice)
	a := rolesUserMappings("acme", alice)
	s.rolesTestMap(http.MethodPost, a+"/realm", []string{"direct"}, "direct")
	s.rolesTestMap(http.MethodPost, a+"/clients/web", []string{"write"}, "web/write")

	// Direct mappings are only the user's own; effective ones are everything.
	s.rolesTestMustNames(a, "direct", "web/write")
	s.rolesTestMustNames(a+"/realm/composite", "child", "comp1", "comp2", "comp3", "deep", "direct", "grand", "parent")
	s.rolesTestMustNames(a+"/clients/web/composite", "web/read", "web/write")
	s.rolesTestMustNames(a+"/clients/api/composite", "api/admin", "api/call")
	// Effective roles show their composite flags.
	r := s.admin(http.MethodGet, a+"/realm/composite", nil)
	var reps []roles.RoleRep
	r.decode(t, &reps)
	for _, role := range reps {
		want := role.Name == "comp1" || role.Name == "comp2" || role.Name == "comp3" || role.Name == "direct" || role.Name == "parent"
		if role.Composite != want || role.ClientRole {
			t.Fatalf("effective %s: composite=%v clientRole=%v", role.Name, role.Composite, role.ClientRole)
		}
	}

	// A group's effective roles include its ancestors' but not its children's.
	s.rolesTestMustNames(rolesGroupMappings("acme", child.ID)+"/realm/composite", "child", "comp1", "comp2", "comp3", "deep", "grand", "parent")
	s.rolesTestMustNames(rolesGroupMappings("acme", child.ID)+"/clients/api/composite", "api/admin", "api/call")
	s.rolesTestMustNames(rolesGroupMappings("acme", parent.ID)+"/clients/web/composite", "web/read")
	s.rolesTestMustNames(rolesGroupMappings("acme", grand.ID)+"/realm/composite", "grand")
	s.rolesTestMustNames(rolesGroupMappings("acme", grand.ID) + "/clients/web/composite")

	// Bob, with no mappings and no groups, has none: an empty array.
	r = s.admin(http.MethodGet, rolesUserMappings("acme", bob)+"/realm/composite", nil)
	mustStatus(t, r, http.StatusOK)
	if strings.TrimSpace(string(r.Body)) != "[]" {
		t.Fatalf("effective roles of a user with none: %s", r.Body)
	}
	s.rolesTestJoin(grand, bob)
	s.rolesTestMustNames(rolesUserMappings("acme", bob)+"/realm/composite", "grand")

	// Deleting a role in the middle cuts what only it brought: api/call
	// goes; comp3 and deep stay through direct.
	mustStatus(t, s.admin(http.MethodDelete, realmRole("comp2"), nil), http.StatusNoContent)
	s.rolesTestMustNames(a+"/realm/composite", "child", "comp1", "comp3", "deep", "direct", "grand", "parent")
	s.rolesTestMustNames(a+"/clients/api/composite", "api/admin")
	s.rolesTestMustNames(rolesClientPath("acme", "web") + "/read/composites")
	// Deleting a directly mapped role removes the mapping too.
	mustStatus(t, s.admin(http.MethodDelete, realmRole("direct"), nil), http.StatusNoContent)
	s.rolesTestMustNames(a, "web/write")
	s.rolesTestMustNames(a+"/realm/composite", "child", "comp1", "grand", "parent")
	// Deleting a group-mapped role removes it from the group.
	mustStatus(t, s.admin(http.MethodDelete, realmRole("parent"), nil), http.StatusNoContent)
	s.rolesTestMustNames(rolesGroupMappings("acme", parent.ID), "api/admin")
	s.rolesTestMustNames(a+"/realm/composite", "child", "grand")

	// Leaving the group leaves its roles; deleting the client its roles.
	if err := s.store.RemoveGroupMember(context.Background(), child.ID, alice); err != nil {
		t.Fatal(err)
	}
	s.rolesTestMustNames(a + "/realm/composite")
	s.rolesTestMustNames(a + "/clients/api/composite")
	s.rolesTestMustNames(a+"/clients/web/composite", "web/write")
	web, err := s.store.GetClientByClientID(context.Background(), grand.RealmID, "web")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.store.DeleteClient(context.Background(), grand.RealmID, web.ID); err != nil {
		t.Fatal(err)
	}
	s.rolesTestMustNames(a)
	mustError(t, s.admin(http.MethodGet, a+"/clients/web/composite", nil), http.StatusNotFound, "not_found", "")
	// comp1 included web/read, which went with its client.
	s.rolesTestMustNames(realmRole("comp1") + "/composites")
}
