package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/idenplane/idenplane/store"
)

// groupSuite is the conformance tests of the group tables.
func groupSuite() []subTest {
	return []subTest{
		{"GroupCreateGet", testGroupCreateGet},
		{"GroupSiblingNames", testGroupSiblingNames},
		{"GroupUnknownParent", testGroupUnknownParent},
		{"GroupUpdate", testGroupUpdate},
		{"GroupMove", testGroupMove},
		{"GroupMoveCycles", testGroupMoveCycles},
		{"GroupAncestryFamily", testGroupAncestryFamily},
		{"GroupDeleteCascades", testGroupDeleteCascades},
		{"GroupMembership", testGroupMembership},
		{"GroupMembersPaging", testGroupMembersPaging},
		{"GroupUserGroups", testGroupUserGroups},
		{"GroupCounts", testGroupCounts},
		{"GroupRealmDeleteCascades", testGroupRealmDeleteCascades},
	}
}

const (
	groupTestRealmID  = "11111111-1111-4111-8111-111111111111"
	groupTestRealm2ID = "22222222-2222-4222-8222-222222222222"
)

// groupTestID makes a distinct UUID-shaped group ID from n.
func groupTestID(n int) string { return fmt.Sprintf("99999999-0000-4000-8000-%012d", n) }

func groupTestRealms(t *testing.T, s *store.Store) {
	t.Helper()
	mustCreateRealm(t, s, testRealm(groupTestRealmID, "acme", 1000))
	mustCreateRealm(t, s, testRealm(groupTestRealm2ID, "other", 2000))
}

func groupTestCreate(t *testing.T, s *store.Store, realmID string, n int, parentID, name string) *store.Group {
	t.Helper()
	g := &store.Group{ID: groupTestID(n), RealmID: realmID, ParentID: parentID, Name: name,
		Description: "about " + name, CreatedAt: int64(1000 + n)}
	if err := s.CreateGroup(testCtx, g); err != nil {
		t.Fatalf("create group %s: %v", name, err)
	}
	return g
}

func groupTestNames(groups []*store.Group) []string {
	names := make([]string, len(groups))
	for i, g := range groups {
		names[i] = g.Name
	}
	return names
}

func groupTestUsernames(users []*store.User) []string {
	names := make([]string, len(users))
	for i, u := range users {
		names[i] = u.Username
	}
	return names
}

func groupTestMustGet(t *testing.T, s *store.Store, realmID, id string) *store.Group {
	t.Helper()
	g, err := s.GetGroup(testCtx, realmID, id)
	if err != nil {
		t.Fatalf("get group %s: %v", id, err)
	}
	return g
}

func groupTestMustNotExist(t *testing.T, s *store.Store, realmID, id string) {
	t.Helper()
	if _, err := s.GetGroup(testCtx, realmID, id); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("group %s: %v, want ErrNotFound", id, err)
	}
}

func testGroupCreateGet(t *testing.T, s *store.Store) {
	groupTestRealms(t, s)
	top := groupTestCreate(t, s, groupTestRealmID, 1, "", "staff")
	sub := groupTestCreate(t, s, groupTestRealmID, 2, top.ID, "admins")
	mustEqual(t, "top group", groupTestMustGet(t, s, groupTestRealmID, top.ID), top)
	mustEqual(t, "subgroup", groupTestMustGet(t, s, groupTestRealmID, sub.ID), sub)
	// A group is found only in its own realm.
	groupTestMustNotExist(t, s, groupTestRealm2ID, top.ID)
	groupTestMustNotExist(t, s, groupTestRealmID, groupTestID(404))

	// The list is flat and ordered by name, subgroups included.
	groupTestCreate(t, s, groupTestRealmID, 3, "", "billing")
	groupTestCreate(t, s, groupTestRealm2ID, 4, "", "elsewhere")
	all, err := s.ListGroups(testCtx, groupTestRealmID)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "realm groups", groupTestNames(all), []string{"admins", "billing", "staff"})
	mustEqual(t, "listed subgroup", all[0], sub)

	// An ID already taken is a conflict, whatever the name.
	dup := &store.Group{ID: top.ID, RealmID: groupTestRealmID, Name: "fresh", CreatedAt: 1}
	mustBeErrConflict(t, "duplicate id", s.CreateGroup(testCtx, dup))
	// An unknown realm is ErrNotFound.
	stray := &store.Group{ID: groupTestID(5), RealmID: "33333333-3333-4333-8333-333333333333", Name: "stray", CreatedAt: 1}
	mustBeErrNotFound(t, "unknown realm", s.CreateGroup(testCtx, stray))
}

func testGroupSiblingNames(t *testing.T, s *store.Store) {
	groupTestRealms(t, s)
	a := groupTestCreate(t, s, groupTestRealmID, 1, "", "a")
	b := groupTestCreate(t, s, groupTestRealmID, 2, "", "b")
	groupTestCreate(t, s, groupTestRealmID, 3, a.ID, "team")
	cases := []struct {
		name      string
		realmID   string
		parentID  string
		groupName string
		conflict  bool
	}{
		{"top-level clash", groupTestRealmID, "", "a", true},
		{"subgroup clash", groupTestRealmID, a.ID, "team", true},
		{"same name under another parent", groupTestRealmID, b.ID, "team", false},
		{"subgroup named as a top-level group", groupTestRealmID, a.ID, "b", false},
		{"top-level named as a subgroup", groupTestRealmID, "", "team", false},
		{"same name in another realm", groupTestRealm2ID, "", "a", false},
		{"names are case-sensitive", groupTestRealmID, "", "A", false},
	}
	for i, tc := range cases {
		g := &store.Group{ID: groupTestID(100 + i), RealmID: tc.realmID, ParentID: tc.parentID, Name: tc.groupName, CreatedAt: 1}
		err := s.CreateGroup(testCtx, g)
		var ce *store.ConflictError
		switch {
		case tc.conflict && (!errors.As(err, &ce) || ce.Column != "name"):
			t.Fatalf("%s: %v, want a conflict on name", tc.name, err)
		case !tc.conflict && err != nil:
			t.Fatalf("%s: %v", tc.name, err)
		}
	}
	all, err := s.ListGroups(testCtx, groupTestRealmID)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "groups after clashes", groupTestNames(all), []string{"A", "a", "b", "b", "team", "team", "team"})
}

func testGroupUnknownParent(t *testing.T, s *store.Store) {
	groupTestRealms(t, s)
	foreign := groupTestCreate(t, s, groupTestRealm2ID, 1, "", "foreign")
	for _, parent := range []string{groupTestID(404), foreign.ID} {
		g := &store.Group{ID: groupTestID(2), RealmID: groupTestRealmID, ParentID: parent, Name: "child", CreatedAt: 1}
		if err := s.CreateGroup(testCtx, g); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("parent %s: %v, want ErrNotFound", parent, err)
		}
	}
	groupTestMustNotExist(t, s, groupTestRealmID, groupTestID(2))
}

func testGroupUpdate(t *testing.T, s *store.Store) {
	groupTestRealms(t, s)
	a := groupTestCreate(t, s, groupTestRealmID, 1, "", "a")
	groupTestCreate(t, s, groupTestRealmID, 2, "", "b")
	a.Name, a.Description = "renamed", "new words"
	if err := s.UpdateGroup(testCtx, a); err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "updated group", groupTestMustGet(t, s, groupTestRealmID, a.ID), a)

	clash := *a
	clash.Name = "b"
	var ce *store.ConflictError
	if err := s.UpdateGroup(testCtx, &clash); !errors.As(err, &ce) || ce.Column != "name" {
		t.Fatalf("rename to a sibling's name: %v, want a conflict on name", err)
	}
	mustEqual(t, "group after a refused rename", groupTestMustGet(t, s, groupTestRealmID, a.ID), a)

	for _, g := range []*store.Group{
		{ID: groupTestID(404), RealmID: groupTestRealmID, Name: "x"},
		{ID: a.ID, RealmID: groupTestRealm2ID, Name: "x"}, // another realm's ID
	} {
		if err := s.UpdateGroup(testCtx, g); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("update %s in realm %s: %v, want ErrNotFound", g.ID, g.RealmID, err)
		}
	}
}

func testGroupMove(t *testing.T, s *store.Store) {
	groupTestRealms(t, s)
	a := groupTestCreate(t, s, groupTestRealmID, 1, "", "a")
	b := groupTestCreate(t, s, groupTestRealmID, 2, "", "b")
	team := groupTestCreate(t, s, groupTestRealmID, 3, a.ID, "team")
	groupTestCreate(t, s, groupTestRealmID, 4, b.ID, "team")
	c := groupTestCreate(t, s, groupTestRealmID, 5, "", "c")

	// Under a parent, back to the top level, and to where it already is.
	for _, parent := range []string{a.ID, "", "", b.ID} {
		if err := s.MoveGroup(testCtx, groupTestRealmID, c.ID, parent); err != nil {
			t.Fatalf("move under %q: %v", parent, err)
		}
		if got := groupTestMustGet(t, s, groupTestRealmID, c.ID); got.ParentID != parent || got.Name != "c" {
			t.Fatalf("after move under %q: %+v", parent, got)
		}
	}

	// A name taken among the new siblings: a conflict, and nothing moves.
	var ce *store.ConflictError
	if err := s.MoveGroup(testCtx, groupTestRealmID, team.ID, b.ID); !errors.As(err, &ce) || ce.Column != "name" {
		t.Fatalf("move into a name clash: %v, want a conflict on name", err)
	}
	if got := groupTestMustGet(t, s, groupTestRealmID, team.ID); got.ParentID != a.ID {
		t.Fatalf("clashing group moved anyway: %+v", got)
	}

	// Unknown group, unknown parent, a parent or group of another realm.
	foreign := groupTestCreate(t, s, groupTestRealm2ID, 6, "", "foreign")
	for _, m := range []struct{ realm, id, parent string }{
		{groupTestRealmID, groupTestID(404), a.ID},
		{groupTestRealmID, c.ID, groupTestID(404)},
		{groupTestRealmID, c.ID, foreign.ID},
		{groupTestRealm2ID, c.ID, ""},
	} {
		if err := s.MoveGroup(testCtx, m.realm, m.id, m.parent); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("move %s under %q in realm %s: %v, want ErrNotFound", m.id, m.parent, m.realm, err)
		}
	}
	if got := groupTestMustGet(t, s, groupTestRealmID, c.ID); got.ParentID != b.ID {
		t.Fatalf("group after refused moves: %+v", got)
	}
}

func testGroupMoveCycles(t *testing.T, s *store.Store) {
	groupTestRealms(t, s)
	root := groupTestCreate(t, s, groupTestRealmID, 1, "", "root")
	child := groupTestCreate(t, s, groupTestRealmID, 2, root.ID, "child")
	grandchild := groupTestCreate(t, s, groupTestRealmID, 3, child.ID, "grandchild")
	other := groupTestCreate(t, s, groupTestRealmID, 4, "", "other")
	cases := []struct {
		name      string
		id        string
		newParent string
	}{
		{"under itself", root.ID, root.ID},
		{"under its child", root.ID, child.ID},
		{"under its grandchild", root.ID, grandchild.ID},
		{"middle under its child", child.ID, grandchild.ID},
		{"leaf under itself", grandchild.ID, grandchild.ID},
	}
	for _, tc := range cases {
		if err := s.MoveGroup(testCtx, groupTestRealmID, tc.id, tc.newParent); !errors.Is(err, store.ErrCycle) {
			t.Fatalf("%s: %v, want ErrCycle", tc.name, err)
		}
	}
	for _, g := range []*store.Group{root, child, grandchild} {
		mustEqual(t, "group after refused moves", groupTestMustGet(t, s, groupTestRealmID, g.ID), g)
	}
	// Moves that only look alike are fine: a grandchild up to its
	// grandparent, and a subtree under an unrelated group.
	if err := s.MoveGroup(testCtx, groupTestRealmID, grandchild.ID, root.ID); err != nil {
		t.Fatalf("grandchild under root: %v", err)
	}
	if err := s.MoveGroup(testCtx, groupTestRealmID, root.ID, other.ID); err != nil {
		t.Fatalf("root under other: %v", err)
	}
	// Now other is root's ancestor: moving other under grandchild is a cycle.
	if err := s.MoveGroup(testCtx, groupTestRealmID, other.ID, grandchild.ID); !errors.Is(err, store.ErrCycle) {
		t.Fatalf("other under its great-grandchild: %v, want ErrCycle", err)
	}
}

func testGroupAncestryFamily(t *testing.T, s *store.Store) {
	groupTestRealms(t, s)
	root := groupTestCreate(t, s, groupTestRealmID, 1, "", "root")
	mid := groupTestCreate(t, s, groupTestRealmID, 2, root.ID, "mid")
	leaf := groupTestCreate(t, s, groupTestRealmID, 3, mid.ID, "leaf")
	groupTestCreate(t, s, groupTestRealmID, 4, leaf.ID, "below")
	groupTestCreate(t, s, groupTestRealmID, 5, root.ID, "sibling")
	other := groupTestCreate(t, s, groupTestRealmID, 6, "", "other")
	groupTestCreate(t, s, groupTestRealmID, 7, other.ID, "other-child")

	ancestry := func(ids ...string) []string {
		t.Helper()
		got, err := s.GroupAncestry(testCtx, groupTestRealmID, ids...)
		if err != nil {
			t.Fatal(err)
		}
		return groupTestNames(got)
	}
	mustEqual(t, "ancestry of leaf", ancestry(leaf.ID), []string{"leaf", "mid", "root"})
	mustEqual(t, "ancestry of two", ancestry(leaf.ID, other.ID), []string{"leaf", "mid", "other", "root"})
	mustEqual(t, "ancestry of a top-level group", ancestry(root.ID), []string{"root"})
	mustEqual(t, "ancestry of none", ancestry(), []string{})
	mustEqual(t, "ancestry of an unknown group", ancestry(groupTestID(404)), []string{})
	got, err := s.GroupAncestry(testCtx, groupTestRealm2ID, leaf.ID)
	if err != nil || len(got) != 0 {
		t.Fatalf("ancestry from another realm: %v, %v", got, err)
	}

	family := func(realmID, id string) []string {
		t.Helper()
		got, err := s.GroupFamily(testCtx, realmID, id)
		if err != nil {
			t.Fatal(err)
		}
		return groupTestNames(got)
	}
	mustEqual(t, "family of mid", family(groupTestRealmID, mid.ID), []string{"below", "leaf", "mid", "root"})
	mustEqual(t, "family of root", family(groupTestRealmID, root.ID), []string{"below", "leaf", "mid", "root", "sibling"})
	mustEqual(t, "family of an unknown group", family(groupTestRealmID, groupTestID(404)), []string{})
	mustEqual(t, "family from another realm", family(groupTestRealm2ID, mid.ID), []string{})
}

func testGroupDeleteCascades(t *testing.T, s *store.Store) {
	groupTestRealms(t, s)
	root := groupTestCreate(t, s, groupTestRealmID, 1, "", "root")
	child := groupTestCreate(t, s, groupTestRealmID, 2, root.ID, "child")
	grandchild := groupTestCreate(t, s, groupTestRealmID, 3, child.ID, "grandchild")
	kept := groupTestCreate(t, s, groupTestRealmID, 4, "", "kept")
	u := mustCreateUser(t, s, testUser("aaaaaaaa-0000-4000-8000-000000000001", groupTestRealmID, "alice", ""))
	for _, g := range []*store.Group{root, child, grandchild, kept} {
		if err := s.AddGroupMember(testCtx, g.ID, u.ID); err != nil {
			t.Fatal(err)
		}
	}
	role := &store.Role{ID: "bbbbbbbb-0000-4000-8000-000000000001", RealmID: groupTestRealmID, Name: "viewer", CreatedAt: 1}
	if err := s.CreateRole(testCtx, role); err != nil {
		t.Fatal(err)
	}
	for _, g := range []*store.Group{grandchild, kept} {
		if err := s.AddRoleMappings(testCtx, store.GroupRoles(g.ID), []string{role.ID}); err != nil {
			t.Fatal(err)
		}
	}

	// Another realm's ID, or an unknown one, deletes nothing.
	for _, m := range []struct{ realm, id string }{{groupTestRealm2ID, root.ID}, {groupTestRealmID, groupTestID(404)}} {
		if err := s.DeleteGroup(testCtx, m.realm, m.id); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("delete %s in realm %s: %v, want ErrNotFound", m.id, m.realm, err)
		}
	}
	if err := s.DeleteGroup(testCtx, groupTestRealmID, root.ID); err != nil {
		t.Fatal(err)
	}
	for _, g := range []*store.Group{root, child, grandchild} {
		groupTestMustNotExist(t, s, groupTestRealmID, g.ID)
		if members, err := s.ListGroupMembers(testCtx, g.ID, 0, 10); err != nil || len(members) != 0 {
			t.Fatalf("members of deleted group %s: %v, %v", g.Name, members, err)
		}
		if roles, err := s.ListRoleMappings(testCtx, store.GroupRoles(g.ID), "*"); err != nil || len(roles) != 0 {
			t.Fatalf("roles of deleted group %s: %v, %v", g.Name, roles, err)
		}
	}
	groups, err := s.ListUserGroups(testCtx, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "user's groups after delete", groupTestNames(groups), []string{"kept"})
	members, roles, err := s.GroupCounts(testCtx, kept.ID)
	if err != nil || members != 1 || roles != 1 {
		t.Fatalf("kept group counts %d members, %d roles, %v", members, roles, err)
	}
	if _, err := s.GetRoleByID(testCtx, groupTestRealmID, role.ID); err != nil {
		t.Fatalf("role gone with the group: %v", err)
	}
	if _, err := s.GetUser(testCtx, groupTestRealmID, u.ID); err != nil {
		t.Fatalf("user gone with the group: %v", err)
	}
}

func testGroupMembership(t *testing.T, s *store.Store) {
	groupTestRealms(t, s)
	g := groupTestCreate(t, s, groupTestRealmID, 1, "", "staff")
	u := mustCreateUser(t, s, testUser("aaaaaaaa-0000-4000-8000-000000000001", groupTestRealmID, "alice", ""))
	for range 2 { // the second add is a no-op
		if err := s.AddGroupMember(testCtx, g.ID, u.ID); err != nil {
			t.Fatal(err)
		}
	}
	members, err := s.ListGroupMembers(testCtx, g.ID, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "members", members, []*store.User{u})

	for _, m := range []struct{ group, user string }{{groupTestID(404), u.ID}, {g.ID, "aaaaaaaa-0000-4000-8000-000000000404"}} {
		if err := s.AddGroupMember(testCtx, m.group, m.user); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("add user %s to group %s: %v, want ErrNotFound", m.user, m.group, err)
		}
	}

	if err := s.RemoveGroupMember(testCtx, g.ID, u.ID); err != nil {
		t.Fatal(err)
	}
	mustBeErrNotFound(t, "remove a non-member", s.RemoveGroupMember(testCtx, g.ID, u.ID))
	if members, err := s.ListGroupMembers(testCtx, g.ID, 0, 10); err != nil || len(members) != 0 {
		t.Fatalf("members after removal: %v, %v", members, err)
	}
	// Deleting the user ends its memberships.
	if err := s.AddGroupMember(testCtx, g.ID, u.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteUser(testCtx, groupTestRealmID, u.ID); err != nil {
		t.Fatal(err)
	}
	if members, _, err := s.GroupCounts(testCtx, g.ID); err != nil || members != 0 {
		t.Fatalf("members after user delete: %d, %v", members, err)
	}
}

func testGroupMembersPaging(t *testing.T, s *store.Store) {
	groupTestRealms(t, s)
	g := groupTestCreate(t, s, groupTestRealmID, 1, "", "staff")
	other := groupTestCreate(t, s, groupTestRealmID, 2, "", "other")
	// Created out of username order, so an order by insertion or ID fails.
	for i, name := range []string{"dave", "bob", "erin", "alice", "carol"} {
		u := mustCreateUser(t, s, testUser(fmt.Sprintf("aaaaaaaa-0000-4000-8000-%012d", 9-i), groupTestRealmID, name, ""))
		if err := s.AddGroupMember(testCtx, g.ID, u.ID); err != nil {
			t.Fatal(err)
		}
	}
	outsider := mustCreateUser(t, s, testUser("aaaaaaaa-0000-4000-8000-000000000100", groupTestRealmID, "aaron", ""))
	if err := s.AddGroupMember(testCtx, other.ID, outsider.ID); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		first, max int
		want       []string
	}{
		{0, 100, []string{"alice", "bob", "carol", "dave", "erin"}},
		{0, 2, []string{"alice", "bob"}},
		{2, 2, []string{"carol", "dave"}},
		{4, 2, []string{"erin"}},
		{5, 2, []string{}},
	}
	for _, tc := range cases {
		users, err := s.ListGroupMembers(testCtx, g.ID, tc.first, tc.max)
		if err != nil {
			t.Fatal(err)
		}
		mustEqual(t, fmt.Sprintf("members first=%d max=%d", tc.first, tc.max), groupTestUsernames(users), tc.want)
	}
}

func testGroupUserGroups(t *testing.T, s *store.Store) {
	groupTestRealms(t, s)
	root := groupTestCreate(t, s, groupTestRealmID, 1, "", "root")
	sub := groupTestCreate(t, s, groupTestRealmID, 2, root.ID, "sub")
	zeta := groupTestCreate(t, s, groupTestRealmID, 3, "", "zeta")
	groupTestCreate(t, s, groupTestRealmID, 4, "", "unjoined")
	alice := mustCreateUser(t, s, testUser("aaaaaaaa-0000-4000-8000-000000000001", groupTestRealmID, "alice", ""))
	bob := mustCreateUser(t, s, testUser("aaaaaaaa-0000-4000-8000-000000000002", groupTestRealmID, "bob", ""))
	for _, g := range []*store.Group{zeta, sub} {
		if err := s.AddGroupMember(testCtx, g.ID, alice.ID); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.AddGroupMember(testCtx, root.ID, bob.ID); err != nil {
		t.Fatal(err)
	}
	groups, err := s.ListUserGroups(testCtx, alice.ID)
	if err != nil {
		t.Fatal(err)
	}
	// Direct memberships only, by name: root is sub's parent, not alice's group.
	mustEqual(t, "alice's groups", groups, []*store.Group{sub, zeta})
	groups, err = s.ListUserGroups(testCtx, "aaaaaaaa-0000-4000-8000-000000000404")
	if err != nil || len(groups) != 0 {
		t.Fatalf("groups of an unknown user: %v, %v", groups, err)
	}

	all, err := s.GroupMemberships(testCtx, groupTestRealmID)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{alice.ID: {sub.ID, zeta.ID}, bob.ID: {root.ID}}
	for _, ids := range want {
		slices.Sort(ids)
	}
	mustEqual(t, "realm memberships", all, want)
}

func testGroupCounts(t *testing.T, s *store.Store) {
	groupTestRealms(t, s)
	g := groupTestCreate(t, s, groupTestRealmID, 1, "", "staff")
	sub := groupTestCreate(t, s, groupTestRealmID, 2, g.ID, "sub")
	members, roles, err := s.GroupCounts(testCtx, g.ID)
	if err != nil || members != 0 || roles != 0 {
		t.Fatalf("empty group counts %d, %d, %v", members, roles, err)
	}
	for i, name := range []string{"alice", "bob"} {
		u := mustCreateUser(t, s, testUser(fmt.Sprintf("aaaaaaaa-0000-4000-8000-%012d", i), groupTestRealmID, name, ""))
		if err := s.AddGroupMember(testCtx, g.ID, u.ID); err != nil {
			t.Fatal(err)
		}
		// Members of a subgroup are not direct members.
		if err := s.AddGroupMember(testCtx, sub.ID, u.ID); err != nil {
			t.Fatal(err)
		}
	}
	var roleIDs []string
	for i, name := range []string{"viewer", "editor", "owner"} {
		r := &store.Role{ID: fmt.Sprintf("bbbbbbbb-0000-4000-8000-%012d", i), RealmID: groupTestRealmID, Name: name, CreatedAt: 1}
		if err := s.CreateRole(testCtx, r); err != nil {
			t.Fatal(err)
		}
		roleIDs = append(roleIDs, r.ID)
	}
	if err := s.AddRoleMappings(testCtx, store.GroupRoles(g.ID), roleIDs); err != nil {
		t.Fatal(err)
	}
	if err := s.AddRoleMappings(testCtx, store.GroupRoles(sub.ID), roleIDs[:1]); err != nil {
		t.Fatal(err)
	}
	members, roles, err = s.GroupCounts(testCtx, g.ID)
	if err != nil || members != 2 || roles != 3 {
		t.Fatalf("group counts %d members, %d roles, %v; want 2, 3", members, roles, err)
	}
	members, roles, err = s.GroupCounts(testCtx, sub.ID)
	if err != nil || members != 2 || roles != 1 {
		t.Fatalf("subgroup counts %d members, %d roles, %v; want 2, 1", members, roles, err)
	}
}

func testGroupRealmDeleteCascades(t *testing.T, s *store.Store) {
	groupTestRealms(t, s)
	g := groupTestCreate(t, s, groupTestRealmID, 1, "", "staff")
	sub := groupTestCreate(t, s, groupTestRealmID, 2, g.ID, "sub")
	kept := groupTestCreate(t, s, groupTestRealm2ID, 3, "", "staff")
	u := mustCreateUser(t, s, testUser("aaaaaaaa-0000-4000-8000-000000000001", groupTestRealmID, "alice", ""))
	if err := s.AddGroupMember(testCtx, sub.ID, u.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteRealm(testCtx, "acme"); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{g.ID, sub.ID} {
		groupTestMustNotExist(t, s, groupTestRealmID, id)
	}
	if members, err := s.ListGroupMembers(testCtx, sub.ID, 0, 10); err != nil || len(members) != 0 {
		t.Fatalf("memberships after realm delete: %v, %v", members, err)
	}
	mustEqual(t, "other realm's group", groupTestMustGet(t, s, groupTestRealm2ID, kept.ID), kept)
}
