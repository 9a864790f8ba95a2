package scim_test

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app/apptest"
)

func groupBody(name string, members ...string) map[string]any {
	list := make([]any, len(members))
	for i, m := range members {
		list[i] = map[string]any{"value": m}
	}
	return map[string]any{"schemas": []string{"urn:ietf:params:scim:schemas:core:2.0:Group"}, "displayName": name, "members": list}
}

// memberIDs reads a group back and lists its member IDs, sorted.
func (p *provisioner) memberIDs(id string) []string {
	p.T.Helper()
	r := p.do(http.MethodGet, "/Groups/"+id, nil)
	apptest.MustStatus(p.T, r, http.StatusOK)
	var ids []string
	for _, m := range asList(r.Object(p.T)["members"]) {
		ids = append(ids, m.(map[string]any)["value"].(string))
	}
	slices.Sort(ids)
	return ids
}

func asList(v any) []any { l, _ := v.([]any); return l }

func sorted(ids ...string) []string { slices.Sort(ids); return ids }

func TestGroups(t *testing.T) {
	p := newProvisioner(t)
	ids := seedPeople(p)
	r := p.do(http.MethodPost, "/Groups", map[string]any{"schemas": []string{"urn:ietf:params:scim:schemas:core:2.0:Group"},
		"displayName": "Tour Guides", "externalId": "G-1",
		"members": []any{map[string]any{"value": ids["alice"], "display": "Alice", "type": "User"}, map[string]any{"value": ids["bob"]}}})
	apptest.MustStatus(t, r, http.StatusCreated)
	g := r.Object(t)
	gid := g["id"].(string)
	meta := g["meta"].(map[string]any)
	if g["displayName"] != "Tour Guides" || g["externalId"] != "G-1" || len(asList(g["members"])) != 2 ||
		r.Header.Get("Location") != apptest.BaseURL+"/scim/v2/acme/Groups/"+gid || meta["resourceType"] != "Group" {
		t.Fatalf("created %s", r.Body)
	}
	member := asList(g["members"])[0].(map[string]any)
	if member["display"] != "alice" || member["$ref"] != apptest.BaseURL+"/scim/v2/acme/Users/"+ids["alice"] || member["type"] != "User" {
		t.Fatalf("member %v", member)
	}
	// The realm's group, and the users' read-only groups attribute.
	if got := p.Admin(http.MethodGet, "/admin/realms/acme/groups/"+gid, nil).Object(t)["name"]; got != "Tour Guides" {
		t.Fatalf("the realm's group is named %v", got)
	}
	groups := asList(p.do(http.MethodGet, "/Users/"+ids["alice"], nil).Object(t)["groups"])
	if len(groups) != 1 || groups[0].(map[string]any)["value"] != gid || groups[0].(map[string]any)["display"] != "Tour Guides" {
		t.Fatalf("alice's groups %v", groups)
	}
	p.create(userBody("erin"))
	apptest.MustStatus(t, p.do(http.MethodPost, "/Groups", groupBody("Sales")), http.StatusCreated)

	for _, tc := range []struct{ filter, want string }{
		{`displayName eq "tour guides"`, "Tour Guides"},
		{`displayName sw "S"`, "Sales"},
		{`externalId eq "G-1"`, "Tour Guides"},
		{`members eq "` + ids["bob"] + `"`, "Tour Guides"},
		{`members[value eq "` + ids["carol"] + `"]`, ""},
		{`not (members pr)`, "Sales"},
		{`id eq "` + gid + `"`, "Tour Guides"},
	} {
		r := p.do(http.MethodGet, "/Groups?excludedAttributes=members&filter="+url.QueryEscape(tc.filter), nil)
		apptest.MustStatus(t, r, http.StatusOK)
		var names []string
		for _, res := range asList(r.Object(t)["Resources"]) {
			res := res.(map[string]any)
			if _, ok := res["members"]; ok {
				t.Fatalf("members shown though excluded: %s", r.Body)
			}
			names = append(names, res["displayName"].(string))
		}
		if got := strings.Join(names, ","); got != tc.want {
			t.Fatalf("filter %s: %q, want %q", tc.filter, got, tc.want)
		}
	}
	r = p.do(http.MethodPost, "/Groups/.search", map[string]any{"schemas": []string{"urn:ietf:params:scim:api:messages:2.0:SearchRequest"},
		"sortBy": "displayName", "sortOrder": "descending", "count": 1})
	if res := asList(r.Object(t)["Resources"]); len(res) != 1 || res[0].(map[string]any)["displayName"] != "Tour Guides" {
		t.Fatalf(".search %s", r.Body)
	}

	// PUT replaces the name, the externalId and the members.
	r = p.do(http.MethodPut, "/Groups/"+gid, groupBody("Guides", ids["carol"]))
	apptest.MustStatus(t, r, http.StatusOK)
	if got := r.Object(t); got["displayName"] != "Guides" || got["externalId"] != nil || len(asList(got["members"])) != 1 {
		t.Fatalf("replaced %s", r.Body)
	}
	for _, tc := range []struct {
		name     string
		method   string
		body     any
		status   int
		scimType string
	}{
		{"a taken name", http.MethodPost, groupBody("Sales"), 409, "uniqueness"},
		{"a rename to a taken name", http.MethodPut, groupBody("Sales"), 409, "uniqueness"},
		{"no name", http.MethodPost, groupBody(""), 400, "invalidValue"},
		{"a slash in the name", http.MethodPost, groupBody("a/b"), 400, "invalidValue"},
		{"an unknown member", http.MethodPost, groupBody("New", "00000000-0000-4000-8000-000000000000"), 400, "invalidValue"},
		{"a group as member", http.MethodPost, map[string]any{"schemas": []string{"urn:ietf:params:scim:schemas:core:2.0:Group"},
			"displayName": "New", "members": []any{map[string]any{"value": gid, "type": "Group"}}}, 400, "invalidValue"},
		{"the user schema", http.MethodPost, map[string]any{"schemas": []string{"urn:ietf:params:scim:schemas:core:2.0:User"},
			"displayName": "New"}, 400, "invalidValue"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := "/Groups"
			if tc.method == http.MethodPut {
				path += "/" + gid
			}
			mustSCIMError(t, p.do(tc.method, path, tc.body), tc.status, tc.scimType)
		})
	}
	if got := p.memberIDs(gid); !slices.Equal(got, []string{ids["carol"]}) {
		t.Fatalf("members after refusals %v", got)
	}
	v := p.do(http.MethodGet, "/Groups/"+gid, nil).Header.Get("ETag")
	mustSCIMError(t, p.do(http.MethodDelete, "/Groups/"+gid, nil, `If-Match: W/"stale"`), http.StatusPreconditionFailed, "")
	apptest.MustStatus(t, p.do(http.MethodDelete, "/Groups/"+gid, nil, "If-Match: "+v), http.StatusNoContent)
	mustSCIMError(t, p.do(http.MethodGet, "/Groups/"+gid, nil), http.StatusNotFound, "")
	if groups := p.do(http.MethodGet, "/Users/"+ids["carol"], nil).Object(t)["groups"]; groups != nil {
		t.Fatalf("carol's groups after the deletion: %v", groups)
	}
}

// Member changes by PATCH, in the shapes of RFC 7644 §3.5.2, Entra ID and
// Okta; the answer is 204 unless attributes are asked for.
func TestPatchGroupMembers(t *testing.T) {
	p := newProvisioner(t)
	ids := seedPeople(p)
	a, b, c, d := ids["alice"], ids["bob"], ids["carol"], ids["dave"]
	for _, tc := range []struct {
		name string
		ops  []map[string]any
		want []string
	}{
		{"add (RFC 7644 §3.5.2.1)", []map[string]any{op("add", "members", []any{map[string]any{"display": "Carol", "value": c}})}, sorted(a, b, c)},
		{"add one already in", []map[string]any{op("add", "members", []any{map[string]any{"value": a}})}, sorted(a, b)},
		{"remove by filter (RFC 7644 §3.5.2.2)", []map[string]any{op("remove", `members[value eq "`+a+`"]`, nil)}, []string{b}},
		{"remove several by filter", []map[string]any{op("remove", `members[value eq "`+a+`" or value eq "`+b+`"]`, nil)}, nil},
		{"remove all", []map[string]any{op("remove", "members", nil)}, nil},
		{"remove by value (Entra ID)", []map[string]any{op("Remove", "members", []any{map[string]any{"value": b}})}, []string{a}},
		{"replace (RFC 7644 §3.5.2.3)", []map[string]any{op("replace", "members", []any{map[string]any{"value": c}, map[string]any{"value": d}})}, sorted(c, d)},
		{"remove then add (RFC 7644 §3.5.2.2)", []map[string]any{op("remove", "members", nil), op("add", "members", []any{map[string]any{"value": d}})}, []string{d}},
		{"no path (Okta)", []map[string]any{op("replace", "", map[string]any{"displayName": "Renamed", "members": []any{map[string]any{"value": c}}})}, []string{c}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			created := p.do(http.MethodPost, "/Groups", groupBody(tc.name, a, b))
			apptest.MustStatus(t, created, http.StatusCreated)
			gid := created.Object(t)["id"].(string)
			before := created.Header.Get("ETag")
			p.clock.Advance(time.Second)
			r := p.do(http.MethodPatch, "/Groups/"+gid, patchBody(tc.ops...))
			apptest.MustStatus(t, r, http.StatusNoContent)
			if len(r.Body) != 0 || r.Header.Get("ETag") == "" {
				t.Fatalf("204 with %q, ETag %q", r.Body, r.Header.Get("ETag"))
			}
			if got := p.memberIDs(gid); !slices.Equal(got, tc.want) {
				t.Fatalf("members %v, want %v", got, tc.want)
			}
			if after := p.do(http.MethodGet, "/Groups/"+gid, nil).Header.Get("ETag"); after == before || after != r.Header.Get("ETag") {
				t.Fatalf("versions %s, %s, answered %s", before, after, r.Header.Get("ETag"))
			}
		})
	}
	gid := p.do(http.MethodPost, "/Groups", groupBody("Ops", a)).Object(t)["id"].(string)
	// Asking for attributes gets the group back.
	r := p.do(http.MethodPatch, "/Groups/"+gid+"?attributes=displayName,members", patchBody(op("replace", "displayName", "Ops 2")))
	apptest.MustStatus(t, r, http.StatusOK)
	if got := r.Object(t); got["displayName"] != "Ops 2" || len(asList(got["members"])) != 1 {
		t.Fatalf("answered %s", r.Body)
	}
	for _, tc := range []struct {
		name     string
		ops      []map[string]any
		scimType string
	}{
		{"an unknown user", []map[string]any{op("add", "members", []any{map[string]any{"value": "nobody"}})}, "invalidValue"},
		{"a later operation fails", []map[string]any{op("add", "members", []any{map[string]any{"value": b}}), op("replace", "displayName", "")}, "invalidValue"},
		{"a filter reading every member", []map[string]any{op("remove", `members[display eq "alice"]`, nil)}, "invalidFilter"},
		{"replace by filter", []map[string]any{op("replace", `members[value eq "`+a+`"]`, map[string]any{"value": b})}, "invalidPath"},
		{"a sub-attribute path", []map[string]any{op("replace", "members.value", b)}, "invalidPath"},
		{"read-only id", []map[string]any{op("replace", "id", "x")}, "mutability"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mustSCIMError(t, p.do(http.MethodPatch, "/Groups/"+gid, patchBody(tc.ops...)), http.StatusBadRequest, tc.scimType)
			if got := p.memberIDs(gid); !slices.Equal(got, []string{a}) {
				t.Fatalf("members after a refused PATCH: %v", got)
			}
		})
	}
}
