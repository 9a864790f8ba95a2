package app

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
)

const groupsTestUnknownID = "6f1c7a43-0000-4000-8000-000000000404"

func groupsTestPath(realm string) string { return "/admin/realms/" + realm + "/groups" }

func groupsTestGroupPath(realm, id string) string { return groupsTestPath(realm) + "/" + id }

func groupsTestMembershipPath(realm, userID, groupID string) string {
	return userPath(realm, userID) + "/groups/" + groupID
}

// groupsTestCreate makes a group (a subgroup if parentID is not "") and
// returns its JSON.
func (s *testServer) groupsTestCreate(realm, name, parentID string) map[string]any {
	s.t.Helper()
	body := map[string]any{"name": name}
	if parentID != "" {
		body["parentId"] = parentID
	}
	r := s.admin(http.MethodPost, groupsTestPath(realm), body)
	mustStatus(s.t, r, http.StatusCreated)
	return r.object(s.t)
}

func (s *testServer) groupsTestGet(realm, id string) map[string]any {
	s.t.Helper()
	r := s.admin(http.MethodGet, groupsTestGroupPath(realm, id), nil)
	mustStatus(s.t, r, http.StatusOK)
	return r.object(s.t)
}

// groupsTestArray GETs path and returns the JSON array it answers.
func (s *testServer) groupsTestArray(path string) []any {
	s.t.Helper()
	r := s.admin(http.MethodGet, path, nil)
	mustStatus(s.t, r, http.StatusOK)
	var out []any
	r.decode(s.t, &out)
	if out == nil {
		s.t.Fatalf("GET %s: want an array, got %s", path, r.Body)
	}
	return out
}

// groupsTestList gets the tree listing with the given query string.
func (s *testServer) groupsTestList(realm, query string) []any {
	s.t.Helper()
	return s.groupsTestArray(groupsTestPath(realm) + query)
}

// groupsTestNode is the JSON of a group in a tree, for comparisons.
func groupsTestNode(g map[string]any, path string, subGroups ...any) map[string]any {
	node := map[string]any{"id": g["id"], "name": g["name"], "description": g["description"], "path": path,
		"subGroups": append([]any{}, subGroups...)}
	if p, ok := g["parentId"]; ok {
		node["parentId"] = p
	}
	return node
}

// groupsTestTree builds the tree staff/{admins/{root}, ops}, billing.
func groupsTestTree(s *testServer) (staff, admins, root, ops, billing map[string]any) {
	s.t.Helper()
	staff = s.groupsTestCreate("acme", "staff", "")
	billing = s.groupsTestCreate("acme", "billing", "")
	ops = s.groupsTestCreate("acme", "ops", staff["id"].(string))
	admins = s.groupsTestCreate("acme", "admins", staff["id"].(string))
	root = s.groupsTestCreate("acme", "root", admins["id"].(string))
	return staff, admins, root, ops, billing
}

func groupsTestMustMention(t *testing.T, r *testResponse, words ...string) {
	t.Helper()
	var body httpx.ErrorBody
	r.decode(t, &body)
	for _, w := range words {
		if !strings.Contains(body.Description, w) {
			t.Fatalf("error description %q does not mention %q", body.Description, w)
		}
	}
}

func TestGroupCreate(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	r := s.admin(http.MethodPost, groupsTestPath("acme"), map[string]any{"name": "  Staff ", "description": "Everyone on payroll"})
	mustStatus(t, r, http.StatusCreated)
	staff := r.object(t)
	id, _ := staff["id"].(string)
	if len(id) != 36 || strings.Count(id, "-") != 4 {
		t.Fatalf("id %v is not a UUID", staff["id"])
	}
	if loc := r.Header.Get("Location"); loc != "http://localhost:3000/admin/realms/acme/groups/"+id {
		t.Fatalf("Location %q", loc)
	}
	// The name is trimmed; a top-level group has no parentId.
	mustEqualJSON(t, "created group", staff, map[string]any{
		"id": id, "name": "Staff", "description": "Everyone on payroll", "path": "/Staff", "subGroups": []any{},
	})

	// A subgroup by parentId.
	r = s.admin(http.MethodPost, groupsTestPath("acme"), map[string]any{"name": "admins", "parentId": id})
	mustStatus(t, r, http.StatusCreated)
	admins := r.object(t)
	mustEqualJSON(t, "created subgroup", admins, map[string]any{
		"id": admins["id"], "name": "admins", "description": "", "parentId": id, "path": "/Staff/admins", "subGroups": []any{},
	})
	// A subgroup of the subgroup, by the children route.
	r = s.admin(http.MethodPost, groupsTestGroupPath("acme", admins["id"].(string))+"/children",
		map[string]any{"name": "root", "description": "full access"})
	mustStatus(t, r, http.StatusCreated)
	root := r.object(t)
	if loc := r.Header.Get("Location"); loc != "http://localhost:3000/admin/realms/acme/groups/"+root["id"].(string) {
		t.Fatalf("Location of a child %q", loc)
	}
	mustEqualJSON(t, "created child", root, map[string]any{
		"id": root["id"], "name": "root", "description": "full access", "parentId": admins["id"],
		"path": "/Staff/admins/root", "subGroups": []any{},
	})
	// Each is there on GET, and the tree holds them all.
	mustEqualJSON(t, "child on GET", s.groupsTestGet("acme", root["id"].(string)),
		cloneMap(root, map[string]any{"memberCount": 0, "roleCount": 0}))
	mustEqualJSON(t, "tree", s.groupsTestList("acme", ""), []any{
		groupsTestNode(staff, "/Staff", groupsTestNode(admins, "/Staff/admins", groupsTestNode(root, "/Staff/admins/root"))),
	})

	// Names at the length limit, counted in characters, are accepted.
	for _, name := range []string{strings.Repeat("n", 255), strings.Repeat("é", 255), "a"} {
		r = s.admin(http.MethodPost, groupsTestPath("acme"), map[string]any{"name": name, "description": strings.Repeat("d", 255)})
		mustStatus(t, r, http.StatusCreated)
		if got := r.object(t); got["name"] != name || got["path"] != "/"+name {
			t.Fatalf("group named %q: %v", name, got)
		}
	}
}

func TestGroupCreateInvalid(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	s.createRealm("other")
	parent := s.groupsTestCreate("acme", "parent", "")
	foreign := s.groupsTestCreate("other", "foreign", "")
	pid, fid := parent["id"].(string), foreign["id"].(string)
	cases := []struct {
		name    string
		body    any
		headers []string
		status  int
		code    string
		field   string
	}{
		{"missing name", `{"description":"x"}`, nil, 400, "invalid_field", "name"},
		{"empty body object", `{}`, nil, 400, "invalid_field", "name"},
		{"null name", `{"name":null}`, nil, 400, "invalid_field", "name"},
		{"empty name", `{"name":""}`, nil, 400, "invalid_field", "name"},
		{"blank name", `{"name":"   "}`, nil, 400, "invalid_field", "name"},
		{"name with slash", `{"name":"a/b"}`, nil, 400, "invalid_field", "name"},
		{"name with control character", `{"name":"a\u0007b"}`, nil, 400, "invalid_field", "name"},
		{"name with newline", `{"name":"ab\n"}`, nil, 400, "invalid_field", "name"},
		{"name too long", map[string]any{"name": strings.Repeat("n", 256)}, nil, 400, "invalid_field", "name"},
		{"name number", `{"name":5}`, nil, 400, "invalid_field", "name"},
		{"name array", `{"name":["a"]}`, nil, 400, "invalid_field", "name"},
		{"description too long", map[string]any{"name": "x", "description": strings.Repeat("d", 256)}, nil, 400, "invalid_field", "description"},
		{"description control character", `{"name":"x","description":"a\u0000"}`, nil, 400, "invalid_field", "description"},
		{"description bool", `{"name":"x","description":true}`, nil, 400, "invalid_field", "description"},
		{"parentId not a UUID", `{"name":"x","parentId":"staff"}`, nil, 400, "invalid_field", "parentId"},
		{"parentId empty", `{"name":"x","parentId":""}`, nil, 400, "invalid_field", "parentId"},
		{"parentId number", `{"name":"x","parentId":7}`, nil, 400, "invalid_field", "parentId"},
		{"parentId unknown", `{"name":"x","parentId":"` + groupsTestUnknownID + `"}`, nil, 404, "not_found", "parentId"},
		{"parentId of another realm", `{"name":"x","parentId":"` + fid + `"}`, nil, 404, "not_found", "parentId"},
		{"parentId with id", `{"id":"` + pid + `","parentId":"` + pid + `"}`, nil, 400, "invalid_field", "parentId"},
		{"unknown field", `{"name":"x","attributes":{}}`, nil, 400, "unknown_field", "attributes"},
		{"subGroups", `{"name":"x","subGroups":[]}`, nil, 400, "unknown_field", "subGroups"},
		{"path", `{"name":"x","path":"/x"}`, nil, 400, "unknown_field", "path"},
		{"case-changed name", `{"Name":"x"}`, nil, 400, "unknown_field", "Name"},
		{"malformed", `{"name":`, nil, 400, "invalid_json", ""},
		{"trailing data", `{"name":"x"}]`, nil, 400, "invalid_json", ""},
		{"array", `[{"name":"x"}]`, nil, 400, "invalid_json", ""},
		{"empty", ``, nil, 400, "invalid_json", ""},
		{"text/plain", `{"name":"x"}`, []string{"Content-Type: text/plain"}, 415, "unsupported_media_type", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mustError(t, s.admin(http.MethodPost, groupsTestPath("acme"), c.body, c.headers...), c.status, c.code, c.field)
		})
	}
	// The children route takes the parent from the path, so parentId is not a field of its body.
	childCases := cases[:14]
	childCases = append(childCases,
		struct {
			name    string
			body    any
			headers []string
			status  int
			code    string
			field   string
		}{"parentId", `{"name":"x","parentId":"` + pid + `"}`, nil, 400, "unknown_field", "parentId"})
	for _, c := range childCases {
		t.Run("children "+c.name, func(t *testing.T) {
			mustError(t, s.admin(http.MethodPost, groupsTestGroupPath("acme", pid)+"/children", c.body, c.headers...), c.status, c.code, c.field)
		})
	}
	mustEqualJSON(t, "tree after rejected creates", s.groupsTestList("acme", ""), []any{groupsTestNode(parent, "/parent")})

	r := s.admin(http.MethodPost, groupsTestPath("acme"), `{"name":"x","parentId":"`+groupsTestUnknownID+`"}`)
	groupsTestMustMention(t, r, groupsTestUnknownID)
	mustError(t, s.admin(http.MethodPost, groupsTestPath("nope"), `{"name":"x"}`), 404, "not_found", "")
	r = s.admin(http.MethodPost, groupsTestGroupPath("acme", groupsTestUnknownID)+"/children", `{"name":"x"}`)
	mustError(t, r, 404, "not_found", "")
	groupsTestMustMention(t, r, "group "+groupsTestUnknownID)
	// A group of another realm is not a parent in this one.
	mustError(t, s.admin(http.MethodPost, groupsTestGroupPath("acme", fid)+"/children", `{"name":"x"}`), 404, "not_found", "")
}

func TestGroupCreateDuplicate(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	s.createRealm("other")
	staff, _, _, _, billing := groupsTestTree(s)
	sid, bid := staff["id"].(string), billing["id"].(string)

	// Clashes among siblings, by each way of creating.
	r := s.admin(http.MethodPost, groupsTestPath("acme"), map[string]any{"name": "staff"})
	mustError(t, r, http.StatusConflict, "conflict", "name")
	groupsTestMustMention(t, r, "staff")
	mustError(t, s.admin(http.MethodPost, groupsTestPath("acme"), map[string]any{"name": " billing "}), http.StatusConflict, "conflict", "name")
	mustError(t, s.admin(http.MethodPost, groupsTestPath("acme"), map[string]any{"name": "admins", "parentId": sid}), http.StatusConflict, "conflict", "name")
	mustError(t, s.admin(http.MethodPost, groupsTestGroupPath("acme", sid)+"/children", map[string]any{"name": "ops"}), http.StatusConflict, "conflict", "name")

	// The same name elsewhere is fine: under another parent, at another
	// level, in another realm, or in another case.
	under := s.groupsTestCreate("acme", "admins", bid)
	if under["path"] != "/billing/admins" {
		t.Fatalf("admins under billing: %v", under)
	}
	if top := s.groupsTestCreate("acme", "admins", ""); top["path"] != "/admins" {
		t.Fatalf("top-level admins: %v", top)
	}
	s.groupsTestCreate("acme", "Staff", "")
	s.groupsTestCreate("other", "staff", "")
	if got := s.groupsTestGet("acme", sid)["subGroups"].([]any); len(got) != 2 {
		t.Fatalf("staff has %d subgroups after clashes, want 2", len(got))
	}
}

func TestGroupListTree(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	s.createRealm("other")
	if got := s.groupsTestList("acme", ""); len(got) != 0 {
		t.Fatalf("empty realm lists %v", got)
	}
	staff, admins, root, ops, billing := groupsTestTree(s)
	s.groupsTestCreate("other", "elsewhere", "")
	full := []any{
		groupsTestNode(billing, "/billing"),
		groupsTestNode(staff, "/staff",
			groupsTestNode(admins, "/staff/admins", groupsTestNode(root, "/staff/admins/root")),
			groupsTestNode(ops, "/staff/ops")),
	}
	mustEqualJSON(t, "tree", s.groupsTestList("acme", ""), full)

	cases := []struct {
		name, query string
		want        []any
	}{
		{"first page", "?max=1", full[:1]},
		{"second page", "?first=1&max=1", full[1:]},
		{"past the end", "?first=2", []any{}},
		{"first only", "?first=1", full[1:]},
		{"max beyond", "?max=1000", full},
		// A search shows the matches with their ancestors, not their
		// other descendants or unrelated siblings.
		{"search subgroup", "?search=ADM", []any{
			groupsTestNode(staff, "/staff", groupsTestNode(admins, "/staff/admins")),
		}},
		{"search leaf", "?search=oo", []any{
			groupsTestNode(staff, "/staff", groupsTestNode(admins, "/staff/admins", groupsTestNode(root, "/staff/admins/root"))),
		}},
		{"search two branches", "?search=s", []any{
			groupsTestNode(staff, "/staff", groupsTestNode(admins, "/staff/admins"), groupsTestNode(ops, "/staff/ops")),
		}},
		{"search top level", "?search=bill", []any{groupsTestNode(billing, "/billing")}},
		{"search across the top", "?search=i", []any{
			groupsTestNode(billing, "/billing"),
			groupsTestNode(staff, "/staff", groupsTestNode(admins, "/staff/admins")),
		}},
		{"search paged", "?search=i&first=1&max=1", []any{
			groupsTestNode(staff, "/staff", groupsTestNode(admins, "/staff/admins")),
		}},
		{"search no match", "?search=zzz", []any{}},
		{"search other realm's group", "?search=elsewhere", []any{}},
		{"search LIKE wildcard literal", "?search=%25", []any{}},
		{"empty search", "?search=", full},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mustEqualJSON(t, "list "+c.query, s.groupsTestList("acme", c.query), c.want)
		})
	}
	for _, q := range []struct{ query, field string }{
		{"?first=-1", "first"}, {"?first=x", "first"}, {"?max=0", "max"}, {"?max=1001", "max"}, {"?max=1.5", "max"},
	} {
		mustError(t, s.admin(http.MethodGet, groupsTestPath("acme")+q.query, nil), 400, "invalid_parameter", q.field)
	}
	mustError(t, s.admin(http.MethodGet, groupsTestPath("nope"), nil), 404, "not_found", "")
	mustError(t, s.request(http.MethodGet, groupsTestPath("acme"), nil), 401, "unauthorized", "")
}

func TestGroupSearchUnicodeCase(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	g := s.groupsTestCreate("acme", "ÉQUIPE", "")
	mustEqualJSON(t, "search", s.groupsTestList("acme", "?search=équ"), []any{groupsTestNode(g, "/ÉQUIPE")})
}

// groupsTestMapRole maps a new realm role to a group through the store:
// role mappings are another area's endpoints.
func groupsTestMapRole(t *testing.T, s *testServer, realmID, groupID, name string) {
	t.Helper()
	ctx := context.Background()
	role := &store.Role{ID: fmt.Sprintf("bbbbbbbb-0000-4000-8000-%012d", len(name)), RealmID: realmID, Name: name, CreatedAt: 1}
	if err := s.store.CreateRole(ctx, role); err != nil {
		t.Fatal(err)
	}
	if err := s.store.AddRoleMappings(ctx, store.GroupRoles(groupID), []string{role.ID}); err != nil {
		t.Fatal(err)
	}
}

func TestGroupGet(t *testing.T) {
	s := newTestServer(t)
	realm := s.createRealm("acme")
	s.createRealm("other")
	staff, admins, root, ops, _ := groupsTestTree(s)
	sid := staff["id"].(string)
	for _, name := range []string{"alice", "bob"} {
		u := s.createUser("acme", map[string]any{"username": name})
		mustStatus(t, s.admin(http.MethodPut, groupsTestMembershipPath("acme", u["id"].(string), sid), nil), http.StatusOK)
		// Members of subgroups are not counted.
		mustStatus(t, s.admin(http.MethodPut, groupsTestMembershipPath("acme", u["id"].(string), ops["id"].(string)), nil), http.StatusOK)
	}
	groupsTestMapRole(t, s, realm["id"].(string), sid, "viewer")
	groupsTestMapRole(t, s, realm["id"].(string), sid, "auditor")
	groupsTestMapRole(t, s, realm["id"].(string), root["id"].(string), "superuser")

	want := groupsTestNode(staff, "/staff",
		groupsTestNode(admins, "/staff/admins", groupsTestNode(root, "/staff/admins/root")),
		groupsTestNode(ops, "/staff/ops"))
	want["memberCount"], want["roleCount"] = 2, 2
	mustEqualJSON(t, "staff", s.groupsTestGet("acme", sid), want)

	want = groupsTestNode(admins, "/staff/admins", groupsTestNode(root, "/staff/admins/root"))
	want["memberCount"], want["roleCount"] = 0, 0
	mustEqualJSON(t, "admins", s.groupsTestGet("acme", admins["id"].(string)), want)

	want = groupsTestNode(root, "/staff/admins/root")
	want["memberCount"], want["roleCount"] = 0, 1
	mustEqualJSON(t, "root", s.groupsTestGet("acme", root["id"].(string)), want)

	r := s.admin(http.MethodGet, groupsTestGroupPath("acme", groupsTestUnknownID), nil)
	mustError(t, r, 404, "not_found", "")
	groupsTestMustMention(t, r, "group "+groupsTestUnknownID)
	mustError(t, s.admin(http.MethodGet, groupsTestGroupPath("acme", "not-a-uuid"), nil), 404, "not_found", "")
	mustError(t, s.admin(http.MethodGet, groupsTestGroupPath("other", sid), nil), 404, "not_found", "")
	mustError(t, s.admin(http.MethodGet, groupsTestGroupPath("nope", sid), nil), 404, "not_found", "")
}

func TestGroupChildren(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	staff, admins, root, ops, billing := groupsTestTree(s)
	path := groupsTestGroupPath("acme", staff["id"].(string)) + "/children"
	adminsTree := groupsTestNode(admins, "/staff/admins", groupsTestNode(root, "/staff/admins/root"))
	mustEqualJSON(t, "children", s.groupsTestArray(path), []any{adminsTree, groupsTestNode(ops, "/staff/ops")})
	mustEqualJSON(t, "children page", s.groupsTestArray(path+"?first=1&max=1"), []any{groupsTestNode(ops, "/staff/ops")})
	mustEqualJSON(t, "leaf's children", s.groupsTestArray(groupsTestGroupPath("acme", billing["id"].(string))+"/children"), []any{})
	mustError(t, s.admin(http.MethodGet, path+"?max=0", nil), 400, "invalid_parameter", "max")
	mustError(t, s.admin(http.MethodGet, groupsTestGroupPath("acme", groupsTestUnknownID)+"/children", nil), 404, "not_found", "")
}

func TestGroupUpdate(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	staff, admins, root, _, _ := groupsTestTree(s)
	aid := admins["id"].(string)
	path := groupsTestGroupPath("acme", aid)
	steps := []struct {
		method string
		body   string
		name   string
		desc   string
	}{
		{http.MethodPut, `{"name":"Admins","description":"keys to everything"}`, "Admins", "keys to everything"},
		{http.MethodPut, `{"description":"only this"}`, "Admins", "only this"},
		{http.MethodPut, `{"name":" sudoers "}`, "sudoers", "only this"},
		{http.MethodPut, `{"name":null,"description":null}`, "sudoers", ""},
		{http.MethodPatch, `{"description":"patched"}`, "sudoers", "patched"},
		{http.MethodPatch, `{"name":"admins"}`, "admins", "patched"},
		{http.MethodPatch, `{}`, "admins", "patched"},
		{http.MethodPatch, `{"description":null}`, "admins", ""},
		{http.MethodPut, `{"name":"ops2","description":"d"}`, "ops2", "d"},
	}
	for _, st := range steps {
		r := s.admin(st.method, path, st.body)
		mustStatus(t, r, http.StatusOK)
		want := groupsTestNode(map[string]any{"id": aid, "name": st.name, "description": st.desc, "parentId": staff["id"]},
			"/staff/"+st.name, groupsTestNode(root, "/staff/"+st.name+"/root"))
		mustEqualJSON(t, st.method+" "+st.body, r.object(t), want)
		want["memberCount"], want["roleCount"] = 0, 0
		mustEqualJSON(t, "GET after "+st.method+" "+st.body, s.groupsTestGet("acme", aid), want)
	}
	// A subgroup's path follows its parent's new name.
	if got := s.groupsTestGet("acme", root["id"].(string))["path"]; got != "/staff/ops2/root" {
		t.Fatalf("root's path after parent rename: %v", got)
	}
	// Renaming to its own name is no clash.
	mustStatus(t, s.admin(http.MethodPut, path, `{"name":"ops2"}`), http.StatusOK)
}

func TestGroupUpdateRejected(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	staff, admins, _, _, _ := groupsTestTree(s)
	aid := admins["id"].(string)
	before := s.groupsTestGet("acme", aid)
	cases := []struct {
		name    string
		body    any
		headers []string
		status  int
		code    string
		field   string
	}{
		{"parentId", `{"parentId":"` + staff["id"].(string) + `"}`, nil, 400, "unknown_field", "parentId"},
		{"id", `{"id":"` + aid + `"}`, nil, 400, "unknown_field", "id"},
		{"subGroups", `{"name":"x","subGroups":[]}`, nil, 400, "unknown_field", "subGroups"},
		{"path", `{"path":"/x"}`, nil, 400, "unknown_field", "path"},
		{"memberCount", `{"memberCount":1}`, nil, 400, "unknown_field", "memberCount"},
		{"case-changed name", `{"NAME":"x"}`, nil, 400, "unknown_field", "NAME"},
		{"empty name", `{"name":""}`, nil, 400, "invalid_field", "name"},
		{"blank name", `{"name":" "}`, nil, 400, "invalid_field", "name"},
		{"name with slash", `{"name":"a/b"}`, nil, 400, "invalid_field", "name"},
		{"name too long", map[string]any{"name": strings.Repeat("n", 256)}, nil, 400, "invalid_field", "name"},
		{"name number", `{"name":1}`, nil, 400, "invalid_field", "name"},
		{"name object", `{"name":{}}`, nil, 400, "invalid_field", "name"},
		{"description control", `{"description":"\u001b[31m"}`, nil, 400, "invalid_field", "description"},
		{"description too long", map[string]any{"description": strings.Repeat("d", 256)}, nil, 400, "invalid_field", "description"},
		{"sibling's name", `{"name":"ops"}`, nil, 409, "conflict", "name"},
		{"sibling's name padded", `{"name":" ops","description":"x"}`, nil, 409, "conflict", "name"},
		{"malformed", `{"name":`, nil, 400, "invalid_json", ""},
		{"array", `[]`, nil, 400, "invalid_json", ""},
		{"empty", ``, nil, 400, "invalid_json", ""},
		{"text/plain", `{"name":"x"}`, []string{"Content-Type: text/plain"}, 415, "unsupported_media_type", ""},
	}
	for _, method := range []string{http.MethodPut, http.MethodPatch} {
		for _, c := range cases {
			t.Run(method+" "+c.name, func(t *testing.T) {
				mustError(t, s.admin(method, groupsTestGroupPath("acme", aid), c.body, c.headers...), c.status, c.code, c.field)
				mustEqualJSON(t, "group after rejected update", s.groupsTestGet("acme", aid), before)
			})
		}
		mustError(t, s.admin(method, groupsTestGroupPath("acme", groupsTestUnknownID), `{"name":"x"}`), 404, "not_found", "")
		mustError(t, s.admin(method, groupsTestGroupPath("nope", aid), `{"name":"x"}`), 404, "not_found", "")
	}
	// A top-level group clashes with top-level siblings only.
	mustError(t, s.admin(http.MethodPut, groupsTestGroupPath("acme", staff["id"].(string)), `{"name":"billing"}`), 409, "conflict", "name")
	mustStatus(t, s.admin(http.MethodPut, groupsTestGroupPath("acme", staff["id"].(string)), `{"name":"admins"}`), http.StatusOK)
}

func TestGroupDelete(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	staff, admins, root, ops, billing := groupsTestTree(s)
	alice := s.createUser("acme", map[string]any{"username": "alice"})
	uid := alice["id"].(string)
	for _, g := range []map[string]any{staff, root, billing} {
		mustStatus(t, s.admin(http.MethodPut, groupsTestMembershipPath("acme", uid, g["id"].(string)), nil), http.StatusOK)
	}

	r := s.admin(http.MethodDelete, groupsTestGroupPath("acme", admins["id"].(string)), nil)
	mustStatus(t, r, http.StatusOK)
	mustEqualJSON(t, "deleted group", r.object(t),
		groupsTestNode(admins, "/staff/admins", groupsTestNode(root, "/staff/admins/root")))
	for _, g := range []map[string]any{admins, root} {
		mustError(t, s.admin(http.MethodGet, groupsTestGroupPath("acme", g["id"].(string)), nil), 404, "not_found", "")
	}
	mustEqualJSON(t, "tree after delete", s.groupsTestList("acme", ""), []any{
		groupsTestNode(billing, "/billing"),
		groupsTestNode(staff, "/staff", groupsTestNode(ops, "/staff/ops")),
	})
	// The membership of the deleted subgroup went with it; the user stays.
	mustEqualJSON(t, "user's groups after delete", s.groupsTestArray(userPath("acme", uid)+"/groups"), []any{
		groupsTestFlat(billing, "/billing"), groupsTestFlat(staff, "/staff"),
	})
	s.getUserJSON("acme", uid)

	// Deleting a top-level group takes its whole subtree.
	r = s.admin(http.MethodDelete, groupsTestGroupPath("acme", staff["id"].(string)), nil)
	mustStatus(t, r, http.StatusOK)
	mustEqualJSON(t, "deleted top-level group", r.object(t), groupsTestNode(staff, "/staff", groupsTestNode(ops, "/staff/ops")))
	mustError(t, s.admin(http.MethodGet, groupsTestGroupPath("acme", ops["id"].(string)), nil), 404, "not_found", "")
	mustEqualJSON(t, "tree after second delete", s.groupsTestList("acme", ""), []any{groupsTestNode(billing, "/billing")})

	mustError(t, s.admin(http.MethodDelete, groupsTestGroupPath("acme", staff["id"].(string)), nil), 404, "not_found", "")
	mustError(t, s.admin(http.MethodDelete, groupsTestGroupPath("nope", billing["id"].(string)), nil), 404, "not_found", "")
	// The names are free again.
	if again := s.groupsTestCreate("acme", "staff", ""); again["id"] == staff["id"] {
		t.Fatalf("re-created group reuses id %v", again["id"])
	}
}

// groupsTestFlat is the JSON of a group in a flat list.
func groupsTestFlat(g map[string]any, path string) map[string]any {
	node := groupsTestNode(g, path)
	delete(node, "subGroups")
	return node
}

func TestGroupMove(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	staff, admins, root, ops, billing := groupsTestTree(s)
	sid, aid, rid, oid, bid := staff["id"].(string), admins["id"].(string), root["id"].(string), ops["id"].(string), billing["id"].(string)
	children := func(id string) string { return groupsTestGroupPath("acme", id) + "/children" }

	// admins (with root) under billing.
	r := s.admin(http.MethodPost, children(bid), map[string]any{"id": aid})
	mustStatus(t, r, http.StatusOK)
	moved := cloneMap(admins, map[string]any{"parentId": bid})
	mustEqualJSON(t, "moved group", r.object(t),
		groupsTestNode(moved, "/billing/admins", groupsTestNode(root, "/billing/admins/root")))
	mustEqualJSON(t, "tree after move", s.groupsTestList("acme", ""), []any{
		groupsTestNode(billing, "/billing", groupsTestNode(moved, "/billing/admins", groupsTestNode(root, "/billing/admins/root"))),
		groupsTestNode(staff, "/staff", groupsTestNode(ops, "/staff/ops")),
	})

	// root to the top level by POST .../groups with its id.
	r = s.admin(http.MethodPost, groupsTestPath("acme"), map[string]any{"id": rid})
	mustStatus(t, r, http.StatusOK)
	top := cloneMap(root, map[string]any{"parentId": nil})
	mustEqualJSON(t, "group moved to the top", r.object(t), groupsTestNode(top, "/root"))
	// Moving to where it already is changes nothing.
	r = s.admin(http.MethodPost, groupsTestPath("acme"), map[string]any{"id": rid})
	mustStatus(t, r, http.StatusOK)
	mustEqualJSON(t, "group moved in place", r.object(t), groupsTestNode(top, "/root"))

	// Cycles: under itself, its child, its grandchild.
	mustStatus(t, s.admin(http.MethodPost, children(rid), map[string]any{"id": sid}), http.StatusOK) // root/staff/ops
	for _, c := range []struct{ name, parent, id string }{
		{"under itself", rid, rid},
		{"under its child", sid, rid},
		{"under its grandchild", oid, rid},
		{"middle under its child", oid, sid},
	} {
		r := s.admin(http.MethodPost, children(c.parent), map[string]any{"id": c.id})
		mustError(t, r, http.StatusBadRequest, "invalid_field", "id")
		groupsTestMustMention(t, r, "cycle")
	}
	mustEqualJSON(t, "tree after refused cycles", s.groupsTestList("acme", ""), []any{
		groupsTestNode(billing, "/billing", groupsTestNode(moved, "/billing/admins")),
		groupsTestNode(top, "/root",
			groupsTestNode(cloneMap(staff, map[string]any{"parentId": rid}), "/root/staff", groupsTestNode(ops, "/root/staff/ops"))),
	})

	// A name taken among the new siblings.
	clash := s.groupsTestCreate("acme", "ops", bid)
	r = s.admin(http.MethodPost, children(sid), map[string]any{"id": clash["id"]})
	mustError(t, r, http.StatusConflict, "conflict", "name")
	mustError(t, s.admin(http.MethodPost, groupsTestPath("acme"), map[string]any{"id": s.groupsTestCreate("acme", "billing", rid)["id"]}), http.StatusConflict, "conflict", "name")
	if got := s.groupsTestGet("acme", clash["id"].(string))["path"]; got != "/billing/ops" {
		t.Fatalf("clashing group moved to %v", got)
	}

	s.createRealm("other")
	foreign := s.groupsTestCreate("other", "foreign", "")
	cases := []struct {
		name   string
		path   string
		body   string
		status int
		code   string
		field  string
	}{
		{"unknown id", children(bid), `{"id":"` + groupsTestUnknownID + `"}`, 404, "not_found", "id"},
		{"unknown id to the top", groupsTestPath("acme"), `{"id":"` + groupsTestUnknownID + `"}`, 404, "not_found", "id"},
		{"another realm's group", children(bid), `{"id":"` + foreign["id"].(string) + `"}`, 404, "not_found", "id"},
		{"id not a UUID", children(bid), `{"id":"staff"}`, 400, "invalid_field", "id"},
		{"id number", children(bid), `{"id":1}`, 400, "invalid_field", "id"},
		{"id with name", children(bid), `{"id":"` + oid + `","name":"x"}`, 400, "invalid_field", "name"},
		{"id with description", groupsTestPath("acme"), `{"id":"` + oid + `","description":"x"}`, 400, "invalid_field", "description"},
		{"unknown parent", children(groupsTestUnknownID), `{"id":"` + oid + `"}`, 404, "not_found", ""},
		{"another realm's parent", children(foreign["id"].(string)), `{"id":"` + oid + `"}`, 404, "not_found", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mustError(t, s.admin(http.MethodPost, c.path, c.body), c.status, c.code, c.field)
			if got := s.groupsTestGet("acme", oid)["path"]; got != "/root/staff/ops" {
				t.Fatalf("ops moved to %v", got)
			}
		})
	}
}

func TestGroupMembers(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	s.createRealm("other")
	staff := s.groupsTestCreate("acme", "staff", "")
	gid := staff["id"].(string)
	path := groupsTestGroupPath("acme", gid) + "/members"
	mustEqualJSON(t, "no members", s.groupsTestArray(path), []any{})

	// 105 members, made in one transaction for speed, out of username order.
	ctx := context.Background()
	acmeID := s.getRealmJSON("acme")["id"].(string)
	err := s.store.Tx(ctx, func(tx *store.Store) error {
		for i := range 105 {
			u := &store.User{ID: fmt.Sprintf("aaaaaaaa-0000-4000-8000-%012d", i), RealmID: acmeID,
				Username: fmt.Sprintf("user%03d", 104-i), Enabled: true, CreatedAt: 1}
			if err := tx.CreateUser(ctx, u); err != nil {
				return err
			}
			if err := tx.AddGroupMember(ctx, gid, u.ID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	s.createUser("acme", map[string]any{"username": "outsider"})
	usernames := func(query string) []string {
		t.Helper()
		var names []string
		for _, u := range s.groupsTestArray(path + query) {
			names = append(names, u.(map[string]any)["username"].(string))
		}
		return names
	}
	page := usernames("")
	if len(page) != 100 || page[0] != "user000" || page[99] != "user099" {
		t.Fatalf("default page: %d members, %v … %v", len(page), page[0], page[len(page)-1])
	}
	for _, c := range []struct {
		query string
		want  []string
	}{
		{"?max=2", []string{"user000", "user001"}},
		{"?first=103", []string{"user103", "user104"}},
		{"?first=100&max=3", []string{"user100", "user101", "user102"}},
		{"?first=105", nil},
	} {
		mustEqualJSON(t, "members "+c.query, usernames(c.query), c.want)
	}
	// Members are shown as users are.
	members := s.groupsTestArray(path + "?max=1")
	mustEqualJSON(t, "member", members[0], map[string]any{
		"id": "aaaaaaaa-0000-4000-8000-000000000104", "username": "user000", "enabled": true,
		"emailVerified": false, "requirePasswordReset": false, "createdTimestamp": 1,
	})
	mustEqualJSON(t, "member on GET", s.getUserJSON("acme", "aaaaaaaa-0000-4000-8000-000000000104"), members[0])

	for _, q := range []struct{ query, field string }{{"?first=-1", "first"}, {"?max=0", "max"}, {"?max=1001", "max"}, {"?max=x", "max"}} {
		mustError(t, s.admin(http.MethodGet, path+q.query, nil), 400, "invalid_parameter", q.field)
	}
	mustError(t, s.admin(http.MethodGet, groupsTestGroupPath("acme", groupsTestUnknownID)+"/members", nil), 404, "not_found", "")
	mustError(t, s.admin(http.MethodGet, groupsTestGroupPath("other", gid)+"/members", nil), 404, "not_found", "")
}

func TestGroupMembership(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	s.createRealm("other")
	staff, admins, _, _, billing := groupsTestTree(s)
	alice := s.createUser("acme", map[string]any{"username": "alice"})
	uid, aid, sid, bid := alice["id"].(string), admins["id"].(string), staff["id"].(string), billing["id"].(string)
	userGroups := userPath("acme", uid) + "/groups"
	mustEqualJSON(t, "no groups", s.groupsTestArray(userGroups), []any{})

	// PUT joins, again is a no-op, and POST is the same.
	for _, m := range []string{http.MethodPut, http.MethodPut, http.MethodPost} {
		r := s.admin(m, groupsTestMembershipPath("acme", uid, aid), nil)
		mustStatus(t, r, http.StatusOK)
		mustEqualJSON(t, m+" membership", r.object(t), map[string]any{"userId": uid, "groupId": aid, "groupPath": "/staff/admins"})
	}
	mustStatus(t, s.admin(http.MethodPost, groupsTestMembershipPath("acme", uid, bid), nil), http.StatusOK)
	if got := s.groupsTestGet("acme", aid)["memberCount"]; got != 1.0 {
		t.Fatalf("admins memberCount %v after repeated joins", got)
	}
	// Direct groups only, flat, by name, each with its path.
	mustEqualJSON(t, "user's groups", s.groupsTestArray(userGroups), []any{
		groupsTestFlat(admins, "/staff/admins"), groupsTestFlat(billing, "/billing"),
	})
	members := s.groupsTestArray(groupsTestGroupPath("acme", aid) + "/members")
	mustEqualJSON(t, "admins' members", members, []any{alice})
	mustEqualJSON(t, "staff's members", s.groupsTestArray(groupsTestGroupPath("acme", sid)+"/members"), []any{})

	// A moved group's path shows in the user's groups.
	mustStatus(t, s.admin(http.MethodPost, groupsTestGroupPath("acme", bid)+"/children", map[string]any{"id": aid}), http.StatusOK)
	mustEqualJSON(t, "user's groups after a move", s.groupsTestArray(userGroups), []any{
		groupsTestFlat(cloneMap(admins, map[string]any{"parentId": bid}), "/billing/admins"), groupsTestFlat(billing, "/billing"),
	})

	// Leaving answers with the association, then 404.
	r := s.admin(http.MethodDelete, groupsTestMembershipPath("acme", uid, aid), nil)
	mustStatus(t, r, http.StatusOK)
	mustEqualJSON(t, "left", r.object(t), map[string]any{"userId": uid, "groupId": aid, "groupPath": "/billing/admins"})
	r = s.admin(http.MethodDelete, groupsTestMembershipPath("acme", uid, aid), nil)
	mustError(t, r, 404, "not_found", "")
	groupsTestMustMention(t, r, "not a member", uid, aid)
	mustEqualJSON(t, "user's groups after leaving", s.groupsTestArray(userGroups), []any{groupsTestFlat(billing, "/billing")})

	// Unknown or foreign users and groups, named in the error.
	bob := s.createUser("other", map[string]any{"username": "bob"})
	foreign := s.groupsTestCreate("other", "foreign", "")
	cases := []struct {
		name, realm, user, group, mention string
	}{
		{"unknown user", "acme", groupsTestUnknownID, aid, "user " + groupsTestUnknownID},
		{"unknown group", "acme", uid, groupsTestUnknownID, "group " + groupsTestUnknownID},
		{"another realm's group", "acme", uid, foreign["id"].(string), "group " + foreign["id"].(string)},
		{"another realm's user", "acme", bob["id"].(string), aid, "user " + bob["id"].(string)},
		{"unknown realm", "nope", uid, aid, "nope"},
	}
	for _, c := range cases {
		for _, m := range []string{http.MethodPut, http.MethodPost, http.MethodDelete} {
			t.Run(m+" "+c.name, func(t *testing.T) {
				r := s.admin(m, groupsTestMembershipPath(c.realm, c.user, c.group), nil)
				mustError(t, r, 404, "not_found", "")
				groupsTestMustMention(t, r, c.mention)
			})
		}
	}
	mustError(t, s.admin(http.MethodGet, userPath("acme", groupsTestUnknownID)+"/groups", nil), 404, "not_found", "")
	mustError(t, s.admin(http.MethodGet, userPath("other", uid)+"/groups", nil), 404, "not_found", "")
	mustEqualJSON(t, "foreign group's members", s.groupsTestArray(groupsTestGroupPath("other", foreign["id"].(string))+"/members"), []any{})

	// Deleting the user ends its memberships.
	mustStatus(t, s.admin(http.MethodDelete, userPath("acme", uid), nil), http.StatusNoContent)
	if got := s.groupsTestGet("acme", bid)["memberCount"]; got != 0.0 {
		t.Fatalf("billing memberCount %v after the user's deletion", got)
	}
}

func TestGroupRoutesRequireAdmin(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	g := s.groupsTestCreate("acme", "staff", "")
	u := s.createUser("acme", map[string]any{"username": "alice"})
	gp := groupsTestGroupPath("acme", g["id"].(string))
	mp := groupsTestMembershipPath("acme", u["id"].(string), g["id"].(string))
	for _, rt := range []struct{ method, path string }{
		{http.MethodPost, groupsTestPath("acme")}, {http.MethodGet, groupsTestPath("acme")},
		{http.MethodGet, gp}, {http.MethodPut, gp}, {http.MethodPatch, gp}, {http.MethodDelete, gp},
		{http.MethodPost, gp + "/children"}, {http.MethodGet, gp + "/children"}, {http.MethodGet, gp + "/members"},
		{http.MethodGet, userPath("acme", u["id"].(string)) + "/groups"},
		{http.MethodPut, mp}, {http.MethodPost, mp}, {http.MethodDelete, mp},
	} {
		mustError(t, s.request(rt.method, rt.path, `{"name":"x"}`), 401, "unauthorized", "")
	}
	mustEqualJSON(t, "group untouched", s.groupsTestGet("acme", g["id"].(string)),
		cloneMap(groupsTestNode(g, "/staff"), map[string]any{"memberCount": 0, "roleCount": 0}))
}
