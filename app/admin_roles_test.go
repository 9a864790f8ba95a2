package app

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/roles"
	"github.com/idenplane/idenplane/store"
)

func rolesPath(realm string) string { return "/admin/realms/" + realm + "/roles" }

func rolesClientPath(realm, clientID string) string {
	return "/admin/realms/" + realm + "/clients/" + clientID + "/roles"
}

// rolesTestClient makes a client straight through the store, so these
// tests do not depend on the clients API.
func (s *testServer) rolesTestClient(realm, clientID string) *store.Client {
	s.t.Helper()
	rm, err := s.store.GetRealm(context.Background(), realm)
	if err != nil {
		s.t.Fatalf("realm %s: %v", realm, err)
	}
	c := &store.Client{ID: uuid.NewString(), RealmID: rm.ID, ClientID: clientID, ClientType: "CONFIDENTIAL",
		Enabled: true, CreatedAt: testEpoch.UnixMilli()}
	if err := s.store.CreateClient(context.Background(), c); err != nil {
		s.t.Fatalf("create client %s: %v", clientID, err)
	}
	return c
}

// rolesTestCreate makes a role at a roles collection path and returns its JSON.
func (s *testServer) rolesTestCreate(path, name string) map[string]any {
	s.t.Helper()
	r := s.admin(http.MethodPost, path, map[string]any{"name": name})
	mustStatus(s.t, r, http.StatusCreated)
	return r.object(s.t)
}

// rolesTestNames decodes an array of roles and names each as "name" (realm
// role) or "clientId/name" (client role), in the order given. The body must
// be an array, never null.
func rolesTestNames(t testing.TB, r *testResponse) []string {
	t.Helper()
	if !strings.HasPrefix(string(r.Body), "[") {
		t.Fatalf("want a JSON array, got %s", r.Body)
	}
	var reps []roles.RoleRep
	r.decode(t, &reps)
	out := make([]string, len(reps))
	for i, role := range reps {
		out[i] = role.Name
		if role.ClientRole {
			out[i] = role.ClientID + "/" + role.Name
		}
	}
	return out
}

// rolesTestMustNames GETs path and checks the role names it lists.
func (s *testServer) rolesTestMustNames(path string, want ...string) {
	s.t.Helper()
	r := s.admin(http.MethodGet, path, nil)
	mustStatus(s.t, r, http.StatusOK)
	rolesTestMustList(s.t, "GET "+path, r, want...)
}

func rolesTestMustList(t testing.TB, what string, r *testResponse, want ...string) {
	t.Helper()
	if got := rolesTestNames(t, r); !slices.Equal(got, want) {
		t.Fatalf("%s: roles %q, want %q", what, got, want)
	}
}

func TestRoleCreate(t *testing.T) {
	s := newTestServer(t, fixedClock)
	realm := s.createRealm("acme")
	web := s.rolesTestClient("acme", "web")
	api := s.rolesTestClient("acme", "api")

	r := s.admin(http.MethodPost, rolesPath("acme"), map[string]any{"name": "admin", "description": "Full access"})
	mustStatus(t, r, http.StatusCreated)
	admin := r.object(t)
	id, _ := admin["id"].(string)
	if _, err := uuid.Parse(id); err != nil {
		t.Fatalf("id %q is not a UUID", id)
	}
	mustEqualJSON(t, "created realm role", admin, map[string]any{
		"id": id, "name": "admin", "description": "Full access", "composite": false, "clientRole": false,
		"containerId": realm["id"],
	})
	if loc := r.Header.Get("Location"); loc != "http://localhost:3000/admin/realms/acme/roles/admin" {
		t.Fatalf("Location %q", loc)
	}
	got := s.admin(http.MethodGet, rolesPath("acme")+"/admin", nil)
	mustStatus(t, got, http.StatusOK)
	mustEqualJSON(t, "realm role on GET", got.object(t), admin)

	// A client role with the same name; description left out is empty.
	r = s.admin(http.MethodPost, rolesClientPath("acme", "web"), map[string]any{"name": "admin"})
	mustStatus(t, r, http.StatusCreated)
	webAdmin := r.object(t)
	mustEqualJSON(t, "created client role", webAdmin, map[string]any{
		"id": webAdmin["id"], "name": "admin", "description": "", "composite": false, "clientRole": true,
		"containerId": web.ID, "clientId": "web",
	})
	if webAdmin["id"] == id {
		t.Fatal("the client role reuses the realm role's ID")
	}
	if loc := r.Header.Get("Location"); loc != "http://localhost:3000/admin/realms/acme/clients/web/roles/admin" {
		t.Fatalf("Location %q", loc)
	}
	got = s.admin(http.MethodGet, rolesClientPath("acme", "web")+"/admin", nil)
	mustStatus(t, got, http.StatusOK)
	mustEqualJSON(t, "client role on GET", got.object(t), webAdmin)

	// Another client may use the name as well; null description is empty.
	r = s.admin(http.MethodPost, rolesClientPath("acme", "api"), map[string]any{"name": "admin", "description": nil})
	mustStatus(t, r, http.StatusCreated)
	if o := r.object(t); o["containerId"] != api.ID || o["description"] != "" {
		t.Fatalf("api role %v", o)
	}

	// Names may hold spaces, Unicode and URL-special characters; the
	// Location escapes them and leads back to the role.
	r = s.admin(http.MethodPost, rolesPath("acme"), map[string]any{"name": "Ops lead ü?#%", "description": "ü"})
	mustStatus(t, r, http.StatusCreated)
	loc := r.Header.Get("Location")
	if loc != "http://localhost:3000/admin/realms/acme/roles/Ops%20lead%20%C3%BC%3F%23%25" {
		t.Fatalf("Location %q", loc)
	}
	got = s.admin(http.MethodGet, strings.TrimPrefix(loc, "http://localhost:3000"), nil)
	mustStatus(t, got, http.StatusOK)
	mustEqualJSON(t, "role by its Location", got.object(t), r.object(t))

	// 255 characters is the longest name and description.
	long := strings.Repeat("é", 255)
	mustStatus(t, s.admin(http.MethodPost, rolesPath("acme"), map[string]any{"name": long, "description": long}), http.StatusCreated)
	s.rolesTestMustNames(rolesPath("acme"), "Ops lead ü?#%", "admin", long)
}

func TestRoleCreateInvalid(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	s.rolesTestClient("acme", "web")
	with := func(k string, v any) map[string]any { return map[string]any{"name": "ok", k: v} }
	cases := []struct {
		name    string
		body    any
		headers []string
		status  int
		code    string
		field   string
	}{
		{"missing name", map[string]any{"description": "x"}, nil, 400, "invalid_field", "name"},
		{"null name", with("name", nil), nil, 400, "invalid_field", "name"},
		{"empty name", with("name", ""), nil, 400, "invalid_field", "name"},
		{"leading space", with("name", " admin"), nil, 400, "invalid_field", "name"},
		{"trailing space", with("name", "admin "), nil, 400, "invalid_field", "name"},
		{"blank", with("name", "   "), nil, 400, "invalid_field", "name"},
		{"slash", with("name", "a/b"), nil, 400, "invalid_field", "name"},
		{"dot", with("name", "."), nil, 400, "invalid_field", "name"},
		{"dot dot", with("name", ".."), nil, 400, "invalid_field", "name"},
		{"256 chars", with("name", strings.Repeat("r", 256)), nil, 400, "invalid_field", "name"},
		{"newline", with("name", "ad\nmin"), nil, 400, "invalid_field", "name"},
		{"NUL", with("name", "ad\x00min"), nil, 400, "invalid_field", "name"},
		{"name number", with("name", 7), nil, 400, "invalid_field", "name"},
		{"name array", with("name", []string{"a"}), nil, 400, "invalid_field", "name"},
		{"description number", with("description", 1), nil, 400, "invalid_field", "description"},
		{"description 256 chars", with("description", strings.Repeat("d", 256)), nil, 400, "invalid_field", "description"},
		{"description control char", with("description", "bell\ahere"), nil, 400, "invalid_field", "description"},
		{"unknown field", with("composite", true), nil, 400, "unknown_field", "composite"},
		{"id", with("id", uuid.NewString()), nil, 400, "unknown_field", "id"},
		{"wrong case", map[string]any{"Name": "admin"}, nil, 400, "unknown_field", "Name"},
		{"malformed", `{"name":"admin"`, nil, 400, "invalid_json", ""},
		{"array body", `[{"name":"admin"}]`, nil, 400, "invalid_json", ""},
		{"empty body", "", nil, 400, "invalid_json", ""},
		{"trailing data", `{"name":"admin"}{}`, nil, 400, "invalid_json", ""},
		{"text/plain", `{"name":"admin"}`, []string{"Content-Type: text/plain"}, 415, "unsupported_media_type", ""},
	}
	for _, path := range []string{rolesPath("acme"), rolesClientPath("acme", "web")} {
		for _, c := range cases {
			t.Run(path+"/"+c.name, func(t *testing.T) {
				mustError(t, s.admin(http.MethodPost, path, c.body, c.headers...), c.status, c.code, c.field)
			})
		}
		s.rolesTestMustNames(path)
	}
}

func TestRoleCreateDuplicate(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	s.createRealm("other")
	s.rolesTestClient("acme", "web")
	admin := s.rolesTestCreate(rolesPath("acme"), "admin")
	webAdmin := s.rolesTestCreate(rolesClientPath("acme", "web"), "admin")

	r := s.admin(http.MethodPost, rolesPath("acme"), map[string]any{"name": "admin", "description": "again"})
	mustError(t, r, http.StatusConflict, "conflict", "name")
	if d := r.object(t)["error_description"].(string); !strings.Contains(d, `"admin"`) || !strings.Contains(d, "realm acme") {
		t.Fatalf("conflict description %q should name the role and realm", d)
	}
	r = s.admin(http.MethodPost, rolesClientPath("acme", "web"), map[string]any{"name": "admin"})
	mustError(t, r, http.StatusConflict, "conflict", "name")
	if d := r.object(t)["error_description"].(string); !strings.Contains(d, "client web") {
		t.Fatalf("conflict description %q should name the client", d)
	}
	// The originals are untouched.
	got := s.admin(http.MethodGet, rolesPath("acme")+"/admin", nil)
	mustEqualJSON(t, "admin after conflict", got.object(t), admin)
	got = s.admin(http.MethodGet, rolesClientPath("acme", "web")+"/admin", nil)
	mustEqualJSON(t, "web admin after conflict", got.object(t), webAdmin)

	// Names are case-sensitive, as in Keycloak; another realm is separate.
	s.rolesTestCreate(rolesPath("acme"), "Admin")
	s.rolesTestCreate(rolesPath("other"), "admin")
	s.rolesTestMustNames(rolesPath("acme"), "Admin", "admin")
}

func TestRoleNotFound(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	s.rolesTestClient("acme", "web")
	s.rolesTestCreate(rolesPath("acme"), "admin")
	body := map[string]any{"name": "x"}
	composites := map[string]any{"roleNames": []string{"admin"}}
	for _, c := range []struct {
		method, path string
		body         any
	}{
		{http.MethodPost, rolesPath("nope"), body},
		{http.MethodGet, rolesPath("nope"), nil},
		{http.MethodGet, rolesPath("nope") + "/admin", nil},
		{http.MethodPost, rolesClientPath("nope", "web"), body},
		{http.MethodPost, rolesClientPath("acme", "nope"), body},
		{http.MethodGet, rolesClientPath("acme", "nope"), nil},
		{http.MethodGet, rolesClientPath("acme", "nope") + "/admin", nil},
		{http.MethodGet, rolesPath("acme") + "/ghost", nil},
		{http.MethodPut, rolesPath("acme") + "/ghost", body},
		{http.MethodPatch, rolesPath("acme") + "/ghost", body},
		{http.MethodDelete, rolesPath("acme") + "/ghost", nil},
		{http.MethodGet, rolesPath("acme") + "/ghost/composites", nil},
		{http.MethodPost, rolesPath("acme") + "/ghost/composites", composites},
		{http.MethodDelete, rolesPath("acme") + "/ghost/composites", composites},
		// A realm role is not a client role of the same name.
		{http.MethodGet, rolesClientPath("acme", "web") + "/admin", nil},
		{http.MethodPut, rolesClientPath("acme", "web") + "/admin", body},
		{http.MethodDelete, rolesClientPath("acme", "web") + "/admin", nil},
		{http.MethodGet, rolesClientPath("acme", "web") + "/admin/composites", nil},
		{http.MethodPost, rolesClientPath("acme", "web") + "/admin/composites", composites},
	} {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			mustError(t, s.admin(c.method, c.path, c.body), http.StatusNotFound, "not_found", "")
		})
	}
	// Without credentials nothing is revealed.
	mustError(t, s.request(http.MethodGet, rolesPath("acme"), nil), http.StatusUnauthorized, "unauthorized", "")
	mustError(t, s.request(http.MethodPost, rolesPath("acme"), body), http.StatusUnauthorized, "unauthorized", "")
	s.rolesTestMustNames(rolesPath("acme"), "admin")
}

func TestRoleList(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	s.rolesTestClient("acme", "web")
	s.rolesTestClient("acme", "api")
	// Empty lists are arrays.
	r := s.admin(http.MethodGet, rolesPath("acme"), nil)
	mustStatus(t, r, http.StatusOK)
	if strings.TrimSpace(string(r.Body)) != "[]" {
		t.Fatalf("empty realm role list %s", r.Body)
	}
	for _, n := range []string{"zeta", "alpha", "Mid"} {
		s.rolesTestCreate(rolesPath("acme"), n)
		s.rolesTestCreate(rolesClientPath("acme", "web"), "w-"+n)
	}
	s.rolesTestMustNames(rolesPath("acme"), "Mid", "alpha", "zeta")
	s.rolesTestMustNames(rolesClientPath("acme", "web"), "web/w-Mid", "web/w-alpha", "web/w-zeta")
	s.rolesTestMustNames(rolesClientPath("acme", "api"))
}

func TestRoleUpdate(t *testing.T) {
	s := newTestServer(t)
	realm := s.createRealm("acme")
	web := s.rolesTestClient("acme", "web")
	admin := s.rolesTestCreate(rolesPath("acme"), "admin")
	s.rolesTestCreate(rolesPath("acme"), "viewer")
	webRead := s.rolesTestCreate(rolesClientPath("acme", "web"), "read")
	base := rolesPath("acme")

	// PUT renames and describes.
	r := s.admin(http.MethodPut, base+"/admin", map[string]any{"name": "administrator", "description": "All of it"})
	mustStatus(t, r, http.StatusOK)
	want := cloneMap(admin, map[string]any{"name": "administrator", "description": "All of it"})
	mustEqualJSON(t, "renamed role", r.object(t), want)
	mustError(t, s.admin(http.MethodGet, base+"/admin", nil), http.StatusNotFound, "not_found", "")
	got := s.admin(http.MethodGet, base+"/administrator", nil)
	mustEqualJSON(t, "renamed role on GET", got.object(t), want)

	// PUT changes only what it names; PATCH too.
	r = s.admin(http.MethodPut, base+"/administrator", map[string]any{"description": "Everything"})
	mustStatus(t, r, http.StatusOK)
	want = cloneMap(want, map[string]any{"description": "Everything"})
	mustEqualJSON(t, "PUT description", r.object(t), want)
	r = s.admin(http.MethodPatch, base+"/administrator", map[string]any{"name": "root"})
	mustStatus(t, r, http.StatusOK)
	want = cloneMap(want, map[string]any{"name": "root"})
	mustEqualJSON(t, "PATCH name", r.object(t), want)
	r = s.admin(http.MethodPut, base+"/root", map[string]any{})
	mustStatus(t, r, http.StatusOK)
	mustEqualJSON(t, "empty PUT", r.object(t), want)
	// null resets description to empty and keeps the name.
	r = s.admin(http.MethodPatch, base+"/root", map[string]any{"name": nil, "description": nil})
	mustStatus(t, r, http.StatusOK)
	want = cloneMap(want, map[string]any{"description": ""})
	mustEqualJSON(t, "null fields", r.object(t), want)
	// Renaming to the same name is no conflict.
	mustStatus(t, s.admin(http.MethodPut, base+"/root", map[string]any{"name": "root"}), http.StatusOK)

	// Client roles update the same way, within their client.
	r = s.admin(http.MethodPatch, rolesClientPath("acme", "web")+"/read", map[string]any{"name": "viewer", "description": "d"})
	mustStatus(t, r, http.StatusOK)
	mustEqualJSON(t, "client role renamed like a realm role", r.object(t),
		cloneMap(webRead, map[string]any{"name": "viewer", "description": "d", "containerId": web.ID}))
	if want["containerId"] != realm["id"] {
		t.Fatalf("realm role container %v", want["containerId"])
	}

	cases := []struct {
		name   string
		method string
		body   any
		status int
		code   string
		field  string
	}{
		{"rename onto a sibling", http.MethodPut, map[string]any{"name": "viewer"}, 409, "conflict", "name"},
		{"empty name", http.MethodPut, map[string]any{"name": ""}, 400, "invalid_field", "name"},
		{"slash", http.MethodPatch, map[string]any{"name": "a/b"}, 400, "invalid_field", "name"},
		{"long name", http.MethodPatch, map[string]any{"name": strings.Repeat("n", 256)}, 400, "invalid_field", "name"},
		{"name number", http.MethodPut, map[string]any{"name": 1}, 400, "invalid_field", "name"},
		{"description object", http.MethodPatch, map[string]any{"description": map[string]any{}}, 400, "invalid_field", "description"},
		{"description control", http.MethodPut, map[string]any{"description": "\x07"}, 400, "invalid_field", "description"},
		{"id", http.MethodPut, map[string]any{"id": uuid.NewString()}, 400, "unknown_field", "id"},
		{"composite", http.MethodPatch, map[string]any{"composite": true}, 400, "unknown_field", "composite"},
		{"clientRole", http.MethodPut, map[string]any{"clientRole": true}, 400, "unknown_field", "clientRole"},
		{"malformed", http.MethodPut, `{"name":`, 400, "invalid_json", ""},
		{"array", http.MethodPatch, `["root"]`, 400, "invalid_json", ""},
		{"empty body", http.MethodPut, "", 400, "invalid_json", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mustError(t, s.admin(c.method, base+"/root", c.body), c.status, c.code, c.field)
		})
	}
	got = s.admin(http.MethodGet, base+"/root", nil)
	mustEqualJSON(t, "role after refused updates", got.object(t), want)
}

func TestRoleDelete(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	s.rolesTestClient("acme", "web")
	s.rolesTestCreate(rolesPath("acme"), "admin")
	s.rolesTestCreate(rolesPath("acme"), "viewer")
	s.rolesTestCreate(rolesClientPath("acme", "web"), "admin")

	r := s.admin(http.MethodDelete, rolesPath("acme")+"/admin", nil)
	mustStatus(t, r, http.StatusNoContent)
	if len(r.Body) != 0 {
		t.Fatalf("204 with a body: %s", r.Body)
	}
	mustError(t, s.admin(http.MethodGet, rolesPath("acme")+"/admin", nil), http.StatusNotFound, "not_found", "")
	mustError(t, s.admin(http.MethodDelete, rolesPath("acme")+"/admin", nil), http.StatusNotFound, "not_found", "")
	s.rolesTestMustNames(rolesPath("acme"), "viewer")
	// The client role of the same name stays.
	s.rolesTestMustNames(rolesClientPath("acme", "web"), "web/admin")
	mustStatus(t, s.admin(http.MethodDelete, rolesClientPath("acme", "web")+"/admin", nil), http.StatusNoContent)
	s.rolesTestMustNames(rolesClientPath("acme", "web"))
	// The name is free again.
	s.rolesTestCreate(rolesPath("acme"), "admin")
}

func TestRoleComposites(t *testing.T) {
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
	admin := rolesPath("acme") + "/admin"

	s.rolesTestMustNames(admin + "/composites")
	r := s.admin(http.MethodPost, admin+"/composites", map[string]any{
		"roleNames":   []string{"viewer", "editor", "viewer"},
		"clientRoles": map[string][]string{"web": {"read", "write"}, "api": {"call"}},
	})
	mustStatus(t, r, http.StatusOK)
	rolesTestMustList(t, "POST composites", r, "editor", "viewer", "api/call", "web/read", "web/write")
	s.rolesTestMustNames(admin+"/composites", "editor", "viewer", "api/call", "web/read", "web/write")
	got := s.admin(http.MethodGet, admin, nil)
	if got.object(t)["composite"] != true {
		t.Fatalf("admin after adding composites: %s", got.Body)
	}
	// The children are not composite; listing shows the flag per role.
	r = s.admin(http.MethodGet, rolesPath("acme"), nil)
	var listed []roles.RoleRep
	r.decode(t, &listed)
	for _, role := range listed {
		if role.Composite != (role.Name == "admin") {
			t.Fatalf("role %s composite=%v", role.Name, role.Composite)
		}
	}

	// Adding again is no error and changes nothing.
	r = s.admin(http.MethodPost, admin+"/composites", map[string]any{"roleNames": []string{"viewer"}})
	mustStatus(t, r, http.StatusOK)
	rolesTestMustList(t, "POST again", r, "editor", "viewer", "api/call", "web/read", "web/write")

	// Removing: unknown names fail, names not included are no error.
	r = s.admin(http.MethodDelete, admin+"/composites", map[string]any{
		"roleNames": []string{"viewer", "admin"}, "clientRoles": map[string][]string{"web": {"read"}},
	})
	mustStatus(t, r, http.StatusOK)
	rolesTestMustList(t, "DELETE composites", r, "editor", "api/call", "web/write")
	r = s.admin(http.MethodDelete, admin+"/composites", map[string]any{"roleNames": []string{"editor"},
		"clientRoles": map[string][]string{"web": {"write"}, "api": {"call"}}})
	mustStatus(t, r, http.StatusOK)
	rolesTestMustList(t, "DELETE the rest", r)
	if got := s.admin(http.MethodGet, admin, nil); got.object(t)["composite"] != false {
		t.Fatalf("admin with no composites left: %s", got.Body)
	}

	// A client role can be composite, of realm and client roles.
	read := rolesClientPath("acme", "web") + "/read"
	r = s.admin(http.MethodPost, read+"/composites", map[string]any{
		"roleNames": []string{"viewer"}, "clientRoles": map[string][]string{"web": {"write"}},
	})
	mustStatus(t, r, http.StatusOK)
	rolesTestMustList(t, "client role composites", r, "viewer", "web/write")
	s.rolesTestMustNames(read+"/composites", "viewer", "web/write")
	got = s.admin(http.MethodGet, read, nil)
	if o := got.object(t); o["composite"] != true || o["clientRole"] != true {
		t.Fatalf("web/read after adding composites: %s", got.Body)
	}
	// Deleting a child removes it from every composite.
	mustStatus(t, s.admin(http.MethodDelete, rolesPath("acme")+"/viewer", nil), http.StatusNoContent)
	s.rolesTestMustNames(read+"/composites", "web/write")
}

func TestRoleCompositesInvalid(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	s.createRealm("other")
	s.rolesTestClient("acme", "web")
	s.rolesTestClient("other", "elsewhere")
	for _, n := range []string{"admin", "viewer"} {
		s.rolesTestCreate(rolesPath("acme"), n)
	}
	s.rolesTestCreate(rolesPath("other"), "foreign")
	s.rolesTestCreate(rolesClientPath("acme", "web"), "read")
	admin := rolesPath("acme") + "/admin/composites"
	mustStatus(t, s.admin(http.MethodPost, admin, map[string]any{"roleNames": []string{"viewer"}}), http.StatusOK)

	cases := []struct {
		name        string
		body        any
		status      int
		code, field string
		mentions    []string
	}{
		{"empty object", map[string]any{}, 400, "invalid_field", "roleNames", nil},
		{"empty lists", map[string]any{"roleNames": []string{}, "clientRoles": map[string][]string{"web": {}}}, 400, "invalid_field", "roleNames", nil},
		{"null lists", map[string]any{"roleNames": nil, "clientRoles": nil}, 400, "invalid_field", "roleNames", nil},
		{"unknown realm roles", map[string]any{"roleNames": []string{"ghost", "viewer", "spook"}}, 400, "invalid_field", "roleNames", []string{`"ghost"`, `"spook"`}},
		{"role of another realm", map[string]any{"roleNames": []string{"foreign"}}, 400, "invalid_field", "roleNames", []string{`"foreign"`}},
		{"client role named as realm role", map[string]any{"roleNames": []string{"read"}}, 400, "invalid_field", "roleNames", []string{`"read"`}},
		{"empty name", map[string]any{"roleNames": []string{""}}, 400, "invalid_field", "roleNames", nil},
		{"unknown client", map[string]any{"clientRoles": map[string][]string{"nope": {"read"}}}, 400, "invalid_field", "clientRoles.nope", []string{`"nope"`}},
		{"client of another realm", map[string]any{"clientRoles": map[string][]string{"elsewhere": {"x"}}}, 400, "invalid_field", "clientRoles.elsewhere", nil},
		{"unknown client role", map[string]any{"clientRoles": map[string][]string{"web": {"read", "write"}}}, 400, "invalid_field", "clientRoles.web", []string{`"write"`, "client web"}},
		{"empty client role name", map[string]any{"clientRoles": map[string][]string{"web": {""}}}, 400, "invalid_field", "clientRoles.web", nil},
		{"valid realm role, unknown client role", map[string]any{"roleNames": []string{"viewer"}, "clientRoles": map[string][]string{"web": {"nope"}}}, 400, "invalid_field", "clientRoles.web", nil},
		{"roleNames string", map[string]any{"roleNames": "viewer"}, 400, "invalid_field", "roleNames", nil},
		{"roleNames numbers", map[string]any{"roleNames": []int{1}}, 400, "invalid_field", "roleNames", nil},
		{"clientRoles array", map[string]any{"clientRoles": []string{"web"}}, 400, "invalid_field", "clientRoles", nil},
		{"clientRoles string value", map[string]any{"clientRoles": map[string]any{"web": "read"}}, 400, "invalid_field", "clientRoles", nil},
		{"unknown field", map[string]any{"roleNames": []string{"viewer"}, "composites": []string{}}, 400, "unknown_field", "composites", nil},
		{"malformed", `{"roleNames":[`, 400, "invalid_json", "", nil},
		{"empty body", "", 400, "invalid_json", "", nil},
	}
	for _, method := range []string{http.MethodPost, http.MethodDelete} {
		for _, c := range cases {
			t.Run(method+" "+c.name, func(t *testing.T) {
				r := s.admin(method, admin, c.body)
				mustError(t, r, c.status, c.code, c.field)
				d := r.object(t)["error_description"].(string)
				for _, m := range c.mentions {
					if !strings.Contains(d, m) {
						t.Fatalf("description %q does not mention %s", d, m)
					}
				}
			})
		}
	}
	// Nothing was applied by any refused request.
	s.rolesTestMustNames(admin, "viewer")
}

func TestRoleCompositeCycles(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	s.rolesTestClient("acme", "web")
	for _, n := range []string{"a", "b", "d"} {
		s.rolesTestCreate(rolesPath("acme"), n)
	}
	s.rolesTestCreate(rolesClientPath("acme", "web"), "c")
	path := func(n string) string {
		if n == "c" {
			return rolesClientPath("acme", "web") + "/c/composites"
		}
		return rolesPath("acme") + "/" + n + "/composites"
	}
	mustCycle := func(what string, r *testResponse, field string, mentions ...string) {
		t.Helper()
		mustError(t, r, http.StatusBadRequest, "invalid_field", field)
		d := r.object(t)["error_description"].(string)
		for _, m := range mentions {
			if !strings.Contains(d, m) {
				t.Fatalf("%s: description %q does not mention %q", what, d, m)
			}
		}
	}

	mustCycle("self", s.admin(http.MethodPost, path("a"), map[string]any{"roleNames": []string{"a"}}),
		"roleNames", `realm role "a"`, "itself")
	mustCycle("client role self", s.admin(http.MethodPost, path("c"), map[string]any{"clientRoles": map[string][]string{"web": {"c"}}}),
		"clientRoles.web", `client role "c" of web`, "itself")

	mustStatus(t, s.admin(http.MethodPost, path("a"), map[string]any{"roleNames": []string{"b"}}), http.StatusOK)
	mustCycle("2-cycle", s.admin(http.MethodPost, path("b"), map[string]any{"roleNames": []string{"a"}}),
		"roleNames", "cycle", `realm role "a" already includes realm role "b"`)

	mustStatus(t, s.admin(http.MethodPost, path("b"), map[string]any{"clientRoles": map[string][]string{"web": {"c"}}}), http.StatusOK)
	mustCycle("3-cycle through a client role", s.admin(http.MethodPost, path("c"), map[string]any{"roleNames": []string{"a"}}),
		"roleNames", "cycle", `realm role "a" already includes client role "c" of web`)

	// All or nothing: d is fine but a is not, so d is not added either.
	mustCycle("batch", s.admin(http.MethodPost, path("c"), map[string]any{"roleNames": []string{"d", "a"}}), "roleNames", "cycle")
	s.rolesTestMustNames(path("c"))
	// A diamond is no cycle.
	mustStatus(t, s.admin(http.MethodPost, path("a"), map[string]any{"clientRoles": map[string][]string{"web": {"c"}}}), http.StatusOK)
	s.rolesTestMustNames(path("a"), "b", "web/c")
	mustStatus(t, s.admin(http.MethodPost, path("c"), map[string]any{"roleNames": []string{"d"}}), http.StatusOK)
	mustCycle("4-cycle", s.admin(http.MethodPost, path("d"), map[string]any{"roleNames": []string{"b"}}), "roleNames", "cycle")
	s.rolesTestMustNames(path("d"))
	// Removing a link makes the reverse allowed.
	mustStatus(t, s.admin(http.MethodDelete, path("a"), map[string]any{"roleNames": []string{"b"}}), http.StatusOK)
	mustStatus(t, s.admin(http.MethodDelete, path("a"), map[string]any{"clientRoles": map[string][]string{"web": {"c"}}}), http.StatusOK)
	mustStatus(t, s.admin(http.MethodPost, path("b"), map[string]any{"roleNames": []string{"a"}}), http.StatusOK)
	s.rolesTestMustNames(path("b"), "a", "web/c")
}
