package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/idenplane/idenplane/store"
)

// roleSuite is the conformance tests of the role tables.
func roleSuite() []subTest {
	return []subTest{
		{"RoleCreateGet", testRoleCreateGet},
		{"RoleUniqueness", testRoleUniqueness},
		{"RoleUpdate", testRoleUpdate},
		{"RoleList", testRoleList},
		{"RolesByName", testRolesByName},
		{"RoleComposites", testRoleComposites},
		{"RoleCompositeCycles", testRoleCompositeCycles},
		{"RoleMappings", testRoleMappings},
		{"RoleEffective", testRoleEffective},
		{"RoleEffectiveEmpty", testRoleEffectiveEmpty},
		{"RoleDeleteCascades", testRoleDeleteCascades},
		{"RoleClientDeleteCascades", testRoleClientDeleteCascades},
		{"RoleUserGroupDeleteCascades", testRoleUserGroupDeleteCascades},
		{"RoleRealmDeleteCascades", testRoleRealmDeleteCascades},
	}
}

// roleTestFixture is a realm with two clients and a user.
type roleTestFixture struct {
	realm       *store.Realm
	web, api    *store.Client
	alice       *store.User
	nextCreated int64
}

func roleTestSetup(t *testing.T, s *store.Store) *roleTestFixture {
	t.Helper()
	f := &roleTestFixture{realm: mustCreateRealm(t, s, testRealm("11111111-1111-4111-8111-111111111111", "acme", 1000))}
	f.web = roleTestClient(t, s, f.realm.ID, "c0000000-0000-4000-8000-00000000000b", "web")
	f.api = roleTestClient(t, s, f.realm.ID, "c0000000-0000-4000-8000-00000000000a", "api")
	f.alice = mustCreateUser(t, s, testUser("a0000000-0000-4000-8000-000000000001", f.realm.ID, "alice", "alice@acme.test"))
	return f
}

func roleTestClient(t *testing.T, s *store.Store, realmID, id, clientID string) *store.Client {
	t.Helper()
	c := &store.Client{ID: id, RealmID: realmID, ClientID: clientID, ClientType: "CONFIDENTIAL", Enabled: true, CreatedAt: 1000}
	if err := s.CreateClient(testCtx, c); err != nil {
		t.Fatalf("create client %s: %v", clientID, err)
	}
	return c
}

// role makes a realm role (client nil) or a client role; its ID is
// "role-<clientId>-<name>" so failures read well.
func (f *roleTestFixture) role(t *testing.T, s *store.Store, client *store.Client, name string) *store.Role {
	t.Helper()
	f.nextCreated++
	r := &store.Role{ID: "role--" + name, RealmID: f.realm.ID, Name: name, Description: "about " + name, CreatedAt: f.nextCreated}
	if client != nil {
		r.ID, r.ClientID, r.ClientClientID = "role-"+client.ClientID+"-"+name, client.ID, client.ClientID
	}
	if err := s.CreateRole(testCtx, r); err != nil {
		t.Fatalf("create role %s: %v", r.ID, err)
	}
	return r
}

func (f *roleTestFixture) group(t *testing.T, s *store.Store, id, parentID, name string) *store.Group {
	t.Helper()
	g := &store.Group{ID: id, RealmID: f.realm.ID, ParentID: parentID, Name: name, CreatedAt: 1000}
	if err := s.CreateGroup(testCtx, g); err != nil {
		t.Fatalf("create group %s: %v", name, err)
	}
	return g
}

// roleTestNames names roles in the order given: "name" for realm roles,
// "clientId/name" for client roles.
func roleTestNames(roles []*store.Role) []string {
	out := make([]string, len(roles))
	for i, r := range roles {
		out[i] = r.Name
		if r.ClientClientID != "" {
			out[i] = r.ClientClientID + "/" + r.Name
		}
	}
	return out
}

func roleTestIDs(roles ...*store.Role) []string {
	out := make([]string, len(roles))
	for i, r := range roles {
		out[i] = r.ID
	}
	return out
}

func roleTestMustNames(t *testing.T, what string, roles []*store.Role, err error, want ...string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if got := roleTestNames(roles); !slices.Equal(got, want) {
		t.Fatalf("%s: %q, want %q", what, got, want)
	}
}

func roleTestMust(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func testRoleCreateGet(t *testing.T, s *store.Store) {
	f := roleTestSetup(t, s)
	admin := f.role(t, s, nil, "admin")
	webAdmin := f.role(t, s, f.web, "admin")

	got, err := s.GetRole(testCtx, f.realm.ID, "", "admin")
	roleTestMust(t, "GetRole realm", err)
	mustEqual(t, "realm role", got, admin)
	got, err = s.GetRole(testCtx, f.realm.ID, f.web.ID, "admin")
	roleTestMust(t, "GetRole client", err)
	mustEqual(t, "client role", got, webAdmin)
	got, err = s.GetRoleByID(testCtx, f.realm.ID, webAdmin.ID)
	roleTestMust(t, "GetRoleByID", err)
	mustEqual(t, "client role by ID", got, webAdmin)

	for what, err := range map[string]error{
		"missing realm role":         func() error { _, err := s.GetRole(testCtx, f.realm.ID, "", "nope"); return err }(),
		"realm role asked of client": func() error { _, err := s.GetRole(testCtx, f.realm.ID, f.api.ID, "admin"); return err }(),
		"other realm":                func() error { _, err := s.GetRole(testCtx, "no-such-realm", "", "admin"); return err }(),
		"by ID in other realm":       func() error { _, err := s.GetRoleByID(testCtx, "no-such-realm", admin.ID); return err }(),
		"missing ID":                 func() error { _, err := s.GetRoleByID(testCtx, f.realm.ID, "role-nope"); return err }(),
	} {
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s: %v, want ErrNotFound", what, err)
		}
	}
	// A role of an unknown client or realm is refused by the foreign keys.
	err = s.CreateRole(testCtx, &store.Role{ID: "role-x", RealmID: f.realm.ID, ClientID: "no-such-client", Name: "x"})
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("role of an unknown client: %v, want ErrNotFound", err)
	}
	err = s.CreateRole(testCtx, &store.Role{ID: "role-y", RealmID: "no-such-realm", Name: "y"})
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("role of an unknown realm: %v, want ErrNotFound", err)
	}
}

func testRoleUniqueness(t *testing.T, s *store.Store) {
	f := roleTestSetup(t, s)
	f.role(t, s, nil, "admin")
	// The same name as a realm role and as a role of each client is allowed.
	f.role(t, s, f.web, "admin")
	f.role(t, s, f.api, "admin")

	for _, c := range []struct {
		what string
		role *store.Role
	}{
		{"realm role", &store.Role{ID: "dup-1", RealmID: f.realm.ID, Name: "admin"}},
		{"client role", &store.Role{ID: "dup-2", RealmID: f.realm.ID, ClientID: f.web.ID, Name: "admin"}},
	} {
		err := s.CreateRole(testCtx, c.role)
		var ce *store.ConflictError
		if !errors.As(err, &ce) || ce.Column != "name" {
			t.Fatalf("duplicate %s: %v, want a conflict on name", c.what, err)
		}
	}
	err := s.CreateRole(testCtx, &store.Role{ID: "role--admin", RealmID: f.realm.ID, Name: "fresh"})
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("duplicate ID: %v, want ErrConflict", err)
	}
	// Names are case-sensitive, as in Keycloak.
	f.role(t, s, nil, "Admin")
	// Another realm has its own names.
	other := mustCreateRealm(t, s, testRealm("22222222-2222-4222-8222-222222222222", "other", 2000))
	roleTestMust(t, "same name in another realm", s.CreateRole(testCtx, &store.Role{ID: "other-admin", RealmID: other.ID, Name: "admin"}))

	all, err := s.ListAllRoles(testCtx, f.realm.ID)
	roleTestMustNames(t, "ListAllRoles", all, err, "Admin", "admin", "api/admin", "web/admin")
}

func testRoleUpdate(t *testing.T, s *store.Store) {
	f := roleTestSetup(t, s)
	admin := f.role(t, s, nil, "admin")
	f.role(t, s, nil, "viewer")
	webAdmin := f.role(t, s, f.web, "admin")

	admin.Name, admin.Description = "administrator", "renamed"
	roleTestMust(t, "rename", s.UpdateRole(testCtx, admin))
	got, err := s.GetRole(testCtx, f.realm.ID, "", "administrator")
	roleTestMust(t, "get renamed", err)
	mustEqual(t, "renamed role", got, admin)
	if _, err := s.GetRole(testCtx, f.realm.ID, "", "admin"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("old name after rename: %v", err)
	}

	// Renaming onto a sibling's name clashes; onto a client role's does not.
	admin.Name = "viewer"
	var ce *store.ConflictError
	if err := s.UpdateRole(testCtx, admin); !errors.As(err, &ce) || ce.Column != "name" {
		t.Fatalf("rename onto a taken name: %v, want a conflict on name", err)
	}
	webAdmin.Name = "viewer"
	roleTestMust(t, "client role renamed like a realm role", s.UpdateRole(testCtx, webAdmin))

	missing := &store.Role{ID: "role-nope", RealmID: f.realm.ID, Name: "x"}
	if err := s.UpdateRole(testCtx, missing); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("update of a missing role: %v", err)
	}
	elsewhere := *webAdmin
	elsewhere.RealmID, elsewhere.Name = "no-such-realm", "hijack"
	if err := s.UpdateRole(testCtx, &elsewhere); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("update through another realm: %v", err)
	}
	if err := s.DeleteRole(testCtx, "no-such-realm", webAdmin.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("delete through another realm: %v", err)
	}
	if err := s.DeleteRole(testCtx, f.realm.ID, "role-nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("delete of a missing role: %v", err)
	}
}

func testRoleList(t *testing.T, s *store.Store) {
	f := roleTestSetup(t, s)
	for _, n := range []string{"zeta", "alpha", "mid"} {
		f.role(t, s, nil, n)
		f.role(t, s, f.web, "w-"+n)
	}
	f.role(t, s, f.api, "z")
	realm, err := s.ListRoles(testCtx, f.realm.ID, "")
	roleTestMustNames(t, "realm roles", realm, err, "alpha", "mid", "zeta")
	web, err := s.ListRoles(testCtx, f.realm.ID, f.web.ID)
	roleTestMustNames(t, "web roles", web, err, "web/w-alpha", "web/w-mid", "web/w-zeta")
	all, err := s.ListAllRoles(testCtx, f.realm.ID)
	roleTestMustNames(t, "all roles", all, err, "alpha", "mid", "zeta", "api/z", "web/w-alpha", "web/w-mid", "web/w-zeta")
	if web[0].ClientID != f.web.ID || web[0].Composite || realm[0].ClientID != "" || realm[0].ClientClientID != "" {
		t.Fatalf("listed roles carry wrong owners: %+v %+v", web[0], realm[0])
	}
	none, err := s.ListRoles(testCtx, "no-such-realm", "")
	if err != nil || len(none) != 0 {
		t.Fatalf("roles of an unknown realm: %v, %v", none, err)
	}
}

func testRolesByName(t *testing.T, s *store.Store) {
	f := roleTestSetup(t, s)
	f.role(t, s, nil, "admin")
	f.role(t, s, nil, "viewer")
	f.role(t, s, f.web, "editor")

	found, missing, err := s.RolesByName(testCtx, f.realm.ID, "", []string{"viewer", "ghost", "admin", "viewer", "editor", "ghost", "spook"})
	roleTestMustNames(t, "found realm roles", found, err, "viewer", "admin")
	if !slices.Equal(missing, []string{"ghost", "editor", "spook"}) {
		t.Fatalf("missing %q, want ghost, editor (a client role), spook in request order, once each", missing)
	}
	found, missing, err = s.RolesByName(testCtx, f.realm.ID, f.web.ID, []string{"editor", "admin"})
	roleTestMustNames(t, "found client roles", found, err, "web/editor")
	if !slices.Equal(missing, []string{"admin"}) {
		t.Fatalf("missing client roles %q, want [admin]", missing)
	}
	found, missing, err = s.RolesByName(testCtx, f.realm.ID, f.api.ID, []string{"editor"})
	if err != nil || len(found) != 0 || !slices.Equal(missing, []string{"editor"}) {
		t.Fatalf("another client's role: found %v missing %q (%v)", found, missing, err)
	}
	found, missing, err = s.RolesByName(testCtx, f.realm.ID, "", nil)
	if err != nil || len(found) != 0 || len(missing) != 0 {
		t.Fatalf("no names: found %v missing %q (%v)", found, missing, err)
	}

	// More names than one query takes (the SQLite store asks 500 at a
	// time): found and missing ones interleave across the chunks and keep
	// their order.
	var names, wantFound, wantMissing []string
	err = s.Tx(testCtx, func(tx *store.Store) error {
		for i := range 600 {
			n := fmt.Sprintf("bulk-%04d", i)
			names = append(names, n, "absent-"+n)
			wantFound, wantMissing = append(wantFound, n), append(wantMissing, "absent-"+n)
			if err := tx.CreateRole(testCtx, &store.Role{ID: "bulk-role-" + n, RealmID: f.realm.ID, Name: n}); err != nil {
				return err
			}
		}
		return nil
	})
	roleTestMust(t, "create bulk roles", err)
	found, missing, err = s.RolesByName(testCtx, f.realm.ID, "", names)
	roleTestMustNames(t, "bulk found", found, err, wantFound...)
	if !slices.Equal(missing, wantMissing) {
		t.Fatalf("bulk missing: %d names, want %d", len(missing), len(wantMissing))
	}
}

func testRoleComposites(t *testing.T, s *store.Store) {
	f := roleTestSetup(t, s)
	admin := f.role(t, s, nil, "admin")
	viewer := f.role(t, s, nil, "viewer")
	editor := f.role(t, s, nil, "editor")
	webRead := f.role(t, s, f.web, "read")

	roleTestMust(t, "add composites", s.AddComposites(testCtx, admin.ID, roleTestIDs(webRead, viewer, editor)))
	// Adding again is a no-op.
	roleTestMust(t, "add again", s.AddComposites(testCtx, admin.ID, roleTestIDs(viewer)))
	children, err := s.ListComposites(testCtx, admin.ID)
	roleTestMustNames(t, "composites", children, err, "editor", "viewer", "web/read")

	got, err := s.GetRoleByID(testCtx, f.realm.ID, admin.ID)
	if err != nil || !got.Composite {
		t.Fatalf("admin after adding composites: %+v, %v; want Composite", got, err)
	}
	got, err = s.GetRoleByID(testCtx, f.realm.ID, viewer.ID)
	if err != nil || got.Composite {
		t.Fatalf("viewer: %+v, %v; want not Composite", got, err)
	}

	// A client role may be composite too, of realm roles.
	roleTestMust(t, "client role composite", s.AddComposites(testCtx, webRead.ID, roleTestIDs(viewer)))
	children, err = s.ListComposites(testCtx, webRead.ID)
	roleTestMustNames(t, "client role composites", children, err, "viewer")

	// An unknown child adds nothing, not even the children before it.
	fresh := f.role(t, s, nil, "fresh")
	mustBeErrNotFound(t, "unknown child", s.AddComposites(testCtx, fresh.ID, []string{viewer.ID, "role-nope"}))
	children, err = s.ListComposites(testCtx, fresh.ID)
	roleTestMustNames(t, "after a failed add", children, err)

	roleTestMust(t, "remove", s.RemoveComposites(testCtx, admin.ID, roleTestIDs(viewer, fresh)))
	children, err = s.ListComposites(testCtx, admin.ID)
	roleTestMustNames(t, "after remove", children, err, "editor", "web/read")
	roleTestMust(t, "remove the rest", s.RemoveComposites(testCtx, admin.ID, roleTestIDs(editor, webRead)))
	if got, err := s.GetRoleByID(testCtx, f.realm.ID, admin.ID); err != nil || got.Composite {
		t.Fatalf("admin with no composites left: %+v, %v", got, err)
	}
}

func testRoleCompositeCycles(t *testing.T, s *store.Store) {
	f := roleTestSetup(t, s)
	a := f.role(t, s, nil, "a")
	b := f.role(t, s, nil, "b")
	c := f.role(t, s, f.web, "c")
	d := f.role(t, s, nil, "d")

	if err := s.AddComposites(testCtx, a.ID, roleTestIDs(a)); !errors.Is(err, store.ErrCycle) {
		t.Fatalf("self: %v, want ErrCycle", err)
	}
	roleTestMust(t, "a includes b", s.AddComposites(testCtx, a.ID, roleTestIDs(b)))
	if err := s.AddComposites(testCtx, b.ID, roleTestIDs(a)); !errors.Is(err, store.ErrCycle) {
		t.Fatalf("2-cycle: %v, want ErrCycle", err)
	}
	roleTestMust(t, "b includes c", s.AddComposites(testCtx, b.ID, roleTestIDs(c)))
	if err := s.AddComposites(testCtx, c.ID, roleTestIDs(a)); !errors.Is(err, store.ErrCycle) {
		t.Fatalf("3-cycle through a client role: %v, want ErrCycle", err)
	}
	// All or nothing: d is fine, a is not, so neither is added.
	if err := s.AddComposites(testCtx, c.ID, roleTestIDs(d, a)); !errors.Is(err, store.ErrCycle) {
		t.Fatalf("batch with a cycle: %v, want ErrCycle", err)
	}
	children, err := s.ListComposites(testCtx, c.ID)
	roleTestMustNames(t, "c after refused batch", children, err)
	// A diamond is not a cycle: a includes c directly and through b.
	roleTestMust(t, "diamond", s.AddComposites(testCtx, a.ID, roleTestIDs(c)))
	roleTestMust(t, "c includes d", s.AddComposites(testCtx, c.ID, roleTestIDs(d)))
	if err := s.AddComposites(testCtx, d.ID, roleTestIDs(b)); !errors.Is(err, store.ErrCycle) {
		t.Fatalf("4-cycle: %v, want ErrCycle", err)
	}
	// Inside an outer transaction the refusal rolls back the outer writes too.
	e := f.role(t, s, nil, "e")
	err = s.Tx(testCtx, func(tx *store.Store) error {
		if err := tx.AddComposites(testCtx, e.ID, roleTestIDs(a)); err != nil {
			return err
		}
		return tx.AddComposites(testCtx, d.ID, roleTestIDs(e))
	})
	if !errors.Is(err, store.ErrCycle) {
		t.Fatalf("cycle made of two adds in one transaction: %v, want ErrCycle", err)
	}
	children, err = s.ListComposites(testCtx, e.ID)
	roleTestMustNames(t, "e after the rolled-back transaction", children, err)
}

func testRoleMappings(t *testing.T, s *store.Store) {
	f := roleTestSetup(t, s)
	admin := f.role(t, s, nil, "admin")
	viewer := f.role(t, s, nil, "viewer")
	webRead := f.role(t, s, f.web, "read")
	webWrite := f.role(t, s, f.web, "write")
	apiCall := f.role(t, s, f.api, "call")
	h := store.UserRoles(f.alice.ID)

	roleTestMust(t, "map", s.AddRoleMappings(testCtx, h, roleTestIDs(viewer, admin, webRead, apiCall)))
	roleTestMust(t, "map again", s.AddRoleMappings(testCtx, h, roleTestIDs(viewer, webRead)))
	got, err := s.ListRoleMappings(testCtx, h, "")
	roleTestMustNames(t, "realm mappings", got, err, "admin", "viewer")
	got, err = s.ListRoleMappings(testCtx, h, f.web.ID)
	roleTestMustNames(t, "web mappings", got, err, "web/read")
	got, err = s.ListRoleMappings(testCtx, h, "*")
	roleTestMustNames(t, "all mappings", got, err, "admin", "viewer", "api/call", "web/read")

	roleTestMust(t, "unmap", s.RemoveRoleMappings(testCtx, h, roleTestIDs(viewer, webWrite)))
	roleTestMust(t, "unmap again", s.RemoveRoleMappings(testCtx, h, roleTestIDs(viewer)))
	got, err = s.ListRoleMappings(testCtx, h, "*")
	roleTestMustNames(t, "after unmap", got, err, "admin", "api/call", "web/read")

	// Groups hold mappings of their own.
	g := f.group(t, s, "g0000000-0000-4000-8000-000000000001", "", "staff")
	gh := store.GroupRoles(g.ID)
	roleTestMust(t, "map group", s.AddRoleMappings(testCtx, gh, roleTestIDs(viewer, webWrite)))
	got, err = s.ListRoleMappings(testCtx, gh, "*")
	roleTestMustNames(t, "group mappings", got, err, "viewer", "web/write")
	got, err = s.ListRoleMappings(testCtx, h, "*")
	roleTestMustNames(t, "user mappings untouched by the group's", got, err, "admin", "api/call", "web/read")

	// Mapping to an unknown holder or role is refused and adds nothing.
	mustBeErrNotFound(t, "unknown user", s.AddRoleMappings(testCtx, store.UserRoles("no-such-user"), roleTestIDs(admin)))
	mustBeErrNotFound(t, "unknown role", s.AddRoleMappings(testCtx, gh, []string{admin.ID, "role-nope"}))
	got, err = s.ListRoleMappings(testCtx, gh, "")
	roleTestMustNames(t, "group after a refused batch", got, err, "viewer")
}

func testRoleEffective(t *testing.T, s *store.Store) {
	f := roleTestSetup(t, s)
	r := map[string]*store.Role{}
	for _, n := range []string{"direct", "grand", "parent", "child", "sibling", "comp1", "comp2", "comp3", "unused"} {
		r[n] = f.role(t, s, nil, n)
	}
	r["web/read"] = f.role(t, s, f.web, "read")
	r["web/write"] = f.role(t, s, f.web, "write")
	r["api/call"] = f.role(t, s, f.api, "call")

	grand := f.group(t, s, "g0000000-0000-4000-8000-000000000001", "", "grand")
	parent := f.group(t, s, "g0000000-0000-4000-8000-000000000002", grand.ID, "parent")
	child := f.group(t, s, "g0000000-0000-4000-8000-000000000003", parent.ID, "child")
	sibling := f.group(t, s, "g0000000-0000-4000-8000-000000000004", parent.ID, "sibling")
	for g, role := range map[*store.Group]string{grand: "grand", parent: "parent", child: "child", sibling: "sibling"} {
		roleTestMust(t, "map group", s.AddRoleMappings(testCtx, store.GroupRoles(g.ID), roleTestIDs(r[role])))
	}
	// Composites of composites, through a client role: parent's role
	// includes comp1, which includes web/read, which includes comp2, which
	// includes comp3 and api/call.
	roleTestMust(t, "parent>comp1", s.AddComposites(testCtx, r["parent"].ID, roleTestIDs(r["comp1"])))
	roleTestMust(t, "comp1>web/read", s.AddComposites(testCtx, r["comp1"].ID, roleTestIDs(r["web/read"])))
	roleTestMust(t, "web/read>comp2", s.AddComposites(testCtx, r["web/read"].ID, roleTestIDs(r["comp2"])))
	roleTestMust(t, "comp2>comp3,api/call", s.AddComposites(testCtx, r["comp2"].ID, roleTestIDs(r["comp3"], r["api/call"])))
	// A diamond: direct also includes comp3.
	roleTestMust(t, "direct>comp3", s.AddComposites(testCtx, r["direct"].ID, roleTestIDs(r["comp3"])))

	roleTestMust(t, "map user", s.AddRoleMappings(testCtx, store.UserRoles(f.alice.ID), roleTestIDs(r["direct"], r["web/write"])))
	roleTestMust(t, "join child", s.AddGroupMember(testCtx, child.ID, f.alice.ID))

	got, err := s.EffectiveRoles(testCtx, f.alice.ID)
	roleTestMustNames(t, "alice effective", got, err,
		"child", "comp1", "comp2", "comp3", "direct", "grand", "parent", "api/call", "web/read", "web/write")
	for _, role := range got {
		if role.Composite != slices.Contains([]string{"comp1", "comp2", "direct", "parent", "read"}, role.Name) {
			t.Fatalf("effective role %s has Composite=%v", role.Name, role.Composite)
		}
	}

	got, err = s.EffectiveGroupRoles(testCtx, child.ID)
	roleTestMustNames(t, "child group effective", got, err,
		"child", "comp1", "comp2", "comp3", "grand", "parent", "api/call", "web/read")
	got, err = s.EffectiveGroupRoles(testCtx, grand.ID)
	roleTestMustNames(t, "grand group effective", got, err, "grand")

	// Joining a second branch adds only what it brings.
	roleTestMust(t, "join sibling", s.AddGroupMember(testCtx, sibling.ID, f.alice.ID))
	got, err = s.EffectiveRoles(testCtx, f.alice.ID)
	roleTestMustNames(t, "alice in two groups", got, err,
		"child", "comp1", "comp2", "comp3", "direct", "grand", "parent", "sibling", "api/call", "web/read", "web/write")

	// Another user sees none of it.
	bob := mustCreateUser(t, s, testUser("a0000000-0000-4000-8000-000000000002", f.realm.ID, "bob", ""))
	roleTestMust(t, "bob joins grand", s.AddGroupMember(testCtx, grand.ID, bob.ID))
	got, err = s.EffectiveRoles(testCtx, bob.ID)
	roleTestMustNames(t, "bob effective", got, err, "grand")
}

func testRoleEffectiveEmpty(t *testing.T, s *store.Store) {
	f := roleTestSetup(t, s)
	f.role(t, s, nil, "admin")
	got, err := s.EffectiveRoles(testCtx, f.alice.ID)
	if err != nil || len(got) != 0 {
		t.Fatalf("user with no mappings: %v, %v", roleTestNames(got), err)
	}
	g := f.group(t, s, "g0000000-0000-4000-8000-000000000001", "", "empty")
	roleTestMust(t, "join", s.AddGroupMember(testCtx, g.ID, f.alice.ID))
	got, err = s.EffectiveRoles(testCtx, f.alice.ID)
	if err != nil || len(got) != 0 {
		t.Fatalf("user in a group with no roles: %v, %v", roleTestNames(got), err)
	}
	got, err = s.EffectiveRoles(testCtx, "no-such-user")
	if err != nil || len(got) != 0 {
		t.Fatalf("unknown user: %v, %v", roleTestNames(got), err)
	}
}

func testRoleDeleteCascades(t *testing.T, s *store.Store) {
	f := roleTestSetup(t, s)
	top := f.role(t, s, nil, "top")
	mid := f.role(t, s, nil, "mid")
	leaf := f.role(t, s, nil, "leaf")
	keep := f.role(t, s, nil, "keep")
	roleTestMust(t, "top>mid", s.AddComposites(testCtx, top.ID, roleTestIDs(mid, keep)))
	roleTestMust(t, "mid>leaf", s.AddComposites(testCtx, mid.ID, roleTestIDs(leaf)))
	g := f.group(t, s, "g0000000-0000-4000-8000-000000000001", "", "staff")
	roleTestMust(t, "map user", s.AddRoleMappings(testCtx, store.UserRoles(f.alice.ID), roleTestIDs(mid, keep)))
	roleTestMust(t, "map group", s.AddRoleMappings(testCtx, store.GroupRoles(g.ID), roleTestIDs(mid)))

	roleTestMust(t, "delete mid", s.DeleteRole(testCtx, f.realm.ID, mid.ID))
	if _, err := s.GetRoleByID(testCtx, f.realm.ID, mid.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleted role: %v", err)
	}
	got, err := s.ListComposites(testCtx, top.ID)
	roleTestMustNames(t, "top's composites", got, err, "keep")
	got, err = s.ListRoleMappings(testCtx, store.UserRoles(f.alice.ID), "*")
	roleTestMustNames(t, "user mappings", got, err, "keep")
	got, err = s.ListRoleMappings(testCtx, store.GroupRoles(g.ID), "*")
	roleTestMustNames(t, "group mappings", got, err)
	// leaf was reachable only through mid.
	got, err = s.EffectiveRoles(testCtx, f.alice.ID)
	roleTestMustNames(t, "effective after delete", got, err, "keep")
	roleTestMustPairs(t, "composites after delete", s.AllComposites, f.realm.ID, map[string][]string{top.ID: {keep.ID}})
	// The name and ID are free again, and mid's own composite rows went
	// too: the role is gone, not just unlinked, so a new mid with its ID
	// is nobody's child and has no children.
	again := f.role(t, s, nil, "mid")
	got, err = s.ListComposites(testCtx, again.ID)
	roleTestMustNames(t, "the new mid's composites", got, err)
	got, err = s.ListComposites(testCtx, top.ID)
	roleTestMustNames(t, "top's composites after a new mid", got, err, "keep")
	roleTestMustPairs(t, "composites after a new mid", s.AllComposites, f.realm.ID, map[string][]string{top.ID: {keep.ID}})
}

// roleTestMustPairs checks one of the realm-wide maps of the export.
func roleTestMustPairs(t *testing.T, what string, read func(context.Context, string) (map[string][]string, error),
	realmID string, want map[string][]string) {
	t.Helper()
	got, err := read(testCtx, realmID)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if len(got) == 0 && len(want) == 0 {
		return
	}
	mustEqual(t, what, got, want)
}

func testRoleClientDeleteCascades(t *testing.T, s *store.Store) {
	f := roleTestSetup(t, s)
	admin := f.role(t, s, nil, "admin")
	webRead := f.role(t, s, f.web, "read")
	apiCall := f.role(t, s, f.api, "call")
	roleTestMust(t, "admin>web/read,api/call", s.AddComposites(testCtx, admin.ID, roleTestIDs(webRead, apiCall)))
	roleTestMust(t, "map", s.AddRoleMappings(testCtx, store.UserRoles(f.alice.ID), roleTestIDs(webRead, apiCall)))

	roleTestMust(t, "delete client", s.DeleteClient(testCtx, f.realm.ID, f.web.ID))
	if _, err := s.GetRoleByID(testCtx, f.realm.ID, webRead.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("role of a deleted client: %v", err)
	}
	all, err := s.ListAllRoles(testCtx, f.realm.ID)
	roleTestMustNames(t, "roles left", all, err, "admin", "api/call")
	got, err := s.ListComposites(testCtx, admin.ID)
	roleTestMustNames(t, "admin's composites", got, err, "api/call")
	got, err = s.ListRoleMappings(testCtx, store.UserRoles(f.alice.ID), "*")
	roleTestMustNames(t, "mappings", got, err, "api/call")
}

func testRoleUserGroupDeleteCascades(t *testing.T, s *store.Store) {
	f := roleTestSetup(t, s)
	admin := f.role(t, s, nil, "admin")
	parent := f.group(t, s, "g0000000-0000-4000-8000-000000000001", "", "parent")
	child := f.group(t, s, "g0000000-0000-4000-8000-000000000002", parent.ID, "child")
	bob := mustCreateUser(t, s, testUser("a0000000-0000-4000-8000-000000000002", f.realm.ID, "bob", ""))
	for _, h := range []store.RoleHolder{store.UserRoles(f.alice.ID), store.UserRoles(bob.ID), store.GroupRoles(parent.ID), store.GroupRoles(child.ID)} {
		roleTestMust(t, "map", s.AddRoleMappings(testCtx, h, roleTestIDs(admin)))
	}

	roleTestMust(t, "delete alice", s.DeleteUser(testCtx, f.realm.ID, f.alice.ID))
	// A new user with alice's ID holds none of her roles.
	mustCreateUser(t, s, testUser(f.alice.ID, f.realm.ID, "alice", ""))
	roleTestMustPairs(t, "user mappings after deleting alice", s.AllUserRoleMappings, f.realm.ID,
		map[string][]string{bob.ID: {admin.ID}})
	// Deleting the parent takes the child group and both groups' mappings.
	roleTestMust(t, "delete parent group", s.DeleteGroup(testCtx, f.realm.ID, parent.ID))
	f.group(t, s, parent.ID, "", "parent")
	f.group(t, s, child.ID, parent.ID, "child")
	roleTestMustPairs(t, "group mappings after deleting the groups", s.AllGroupRoleMappings, f.realm.ID, nil)
	got, err := s.ListRoleMappings(testCtx, store.UserRoles(bob.ID), "*")
	roleTestMustNames(t, "bob's mappings", got, err, "admin")
	if _, err := s.GetRoleByID(testCtx, f.realm.ID, admin.ID); err != nil {
		t.Fatalf("the role survives its holders: %v", err)
	}
}

func testRoleRealmDeleteCascades(t *testing.T, s *store.Store) {
	f := roleTestSetup(t, s)
	admin := f.role(t, s, nil, "admin")
	webRead := f.role(t, s, f.web, "read")
	roleTestMust(t, "composite", s.AddComposites(testCtx, admin.ID, roleTestIDs(webRead)))
	roleTestMust(t, "map", s.AddRoleMappings(testCtx, store.UserRoles(f.alice.ID), roleTestIDs(admin)))
	g := f.group(t, s, "g0000000-0000-4000-8000-000000000001", "", "staff")
	roleTestMust(t, "map group", s.AddRoleMappings(testCtx, store.GroupRoles(g.ID), roleTestIDs(webRead)))

	other := mustCreateRealm(t, s, testRealm("22222222-2222-4222-8222-222222222222", "other", 2000))
	roleTestMust(t, "other realm role", s.CreateRole(testCtx, &store.Role{ID: "other-admin", RealmID: other.ID, Name: "admin"}))

	roleTestMust(t, "delete realm", s.DeleteRealm(testCtx, "acme"))
	all, err := s.ListAllRoles(testCtx, f.realm.ID)
	roleTestMustNames(t, "roles of the deleted realm", all, err)
	all, err = s.ListAllRoles(testCtx, other.ID)
	roleTestMustNames(t, "the other realm's roles", all, err, "admin")

	// The realm made again with the same IDs, its roles, user and group
	// have no composites or mappings left of the deleted ones.
	again := roleTestSetup(t, s)
	again.role(t, s, nil, "admin")
	again.role(t, s, again.web, "read")
	again.group(t, s, g.ID, "", "staff")
	for _, c := range []struct {
		what string
		read func(context.Context, string) (map[string][]string, error)
	}{{"composites", s.AllComposites}, {"user mappings", s.AllUserRoleMappings}, {"group mappings", s.AllGroupRoleMappings}} {
		roleTestMustPairs(t, c.what+" after the realm went", c.read, f.realm.ID, nil)
	}
}
