package scim_test

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"testing"

	"github.com/idenplane/idenplane/app/apptest"
)

func patchBody(ops ...map[string]any) map[string]any {
	list := make([]any, len(ops))
	for i, op := range ops {
		list[i] = op
	}
	return map[string]any{"schemas": []string{"urn:ietf:params:scim:api:messages:2.0:PatchOp"}, "Operations": list}
}

func op(name, path string, value any) map[string]any {
	m := map[string]any{"op": name}
	if path != "" {
		m["path"] = path
	}
	if value != nil {
		m["value"] = value
	}
	return m
}

// RFC 7644 §3.5.1: PUT replaces every attribute; what the body leaves out
// is gone, but the password and active.
func TestReplaceUser(t *testing.T) {
	p := newProvisioner(t)
	u := p.create(userBody("bjensen", "title", "Tour Guide", "nickName", "Babs", "active", false,
		"emails", []any{map[string]any{"value": "bjensen@example.com", "type": "work"}}))
	id := u["id"].(string)
	r := p.do(http.MethodPut, "/Users/"+id, userBody("BJensen2", "externalId", "bj", "name", map[string]any{"givenName": "Barbara"},
		"emails", []any{map[string]any{"value": "b2@example.com", "type": "home", "primary": true}}, "id", "ignored", "meta", map[string]any{}))
	apptest.MustStatus(t, r, http.StatusOK)
	got := r.Object(t)
	if got["userName"] != "bjensen2" || got["externalId"] != "bj" || got["title"] != nil || got["nickName"] != nil ||
		got["active"] != false || got["id"] != id || r.Header.Get("ETag") == u["meta"].(map[string]any)["version"] {
		t.Fatalf("replaced %s", r.Body)
	}
	admin := p.Admin(http.MethodGet, "/admin/realms/acme/users/"+id, nil).Object(t)
	if admin["email"] != "b2@example.com" || admin["firstName"] != "Barbara" || admin["enabled"] != false {
		t.Fatalf("the realm's user %v", admin)
	}
	mustSCIMError(t, p.do(http.MethodPut, "/Users/"+id, map[string]any{"userName": "x"}), http.StatusBadRequest, "invalidSyntax")
	mustSCIMError(t, p.do(http.MethodPut, "/Users/nope", userBody("x")), http.StatusNotFound, "")
}

// ETags: If-Match on PUT, PATCH and DELETE (412 when stale), If-None-Match
// on GET (304 when current).
func TestVersions(t *testing.T) {
	p := newProvisioner(t)
	u := p.create(userBody("bjensen"))
	id, v1 := u["id"].(string), u["meta"].(map[string]any)["version"].(string)
	r := p.do(http.MethodGet, "/Users/"+id, nil, "If-None-Match: "+v1)
	apptest.MustStatus(t, r, http.StatusNotModified)
	if len(r.Body) != 0 || r.Header.Get("ETag") != v1 {
		t.Fatalf("304 with %q, ETag %q", r.Body, r.Header.Get("ETag"))
	}
	apptest.MustStatus(t, p.do(http.MethodGet, "/Users/"+id, nil, `If-None-Match: W/"other"`), http.StatusOK)

	r = p.do(http.MethodPatch, "/Users/"+id, patchBody(op("replace", "title", "Guide")), "If-Match: "+v1)
	apptest.MustStatus(t, r, http.StatusOK)
	v2 := r.Header.Get("ETag")
	if v2 == v1 || v2 != r.Object(t)["meta"].(map[string]any)["version"] {
		t.Fatalf("versions %s then %s", v1, v2)
	}
	// The admin API changes the user: its version moves too.
	apptest.MustStatus(t, p.Admin(http.MethodPatch, "/admin/realms/acme/users/"+id, map[string]any{"firstName": "Barbara"}), http.StatusOK)
	for _, tc := range []struct {
		method string
		body   any
	}{
		{http.MethodPatch, patchBody(op("replace", "title", "Boss"))},
		{http.MethodPut, userBody("bjensen")},
		{http.MethodDelete, nil},
	} {
		mustSCIMError(t, p.do(tc.method, "/Users/"+id, tc.body, "If-Match: "+v2), http.StatusPreconditionFailed, "")
	}
	got := p.do(http.MethodGet, "/Users/"+id, nil).Object(t)
	if got["title"] != "Guide" {
		t.Fatalf("a refused write changed the user: %v", got)
	}
	v3 := got["meta"].(map[string]any)["version"].(string)
	apptest.MustStatus(t, p.do(http.MethodPut, "/Users/"+id, userBody("bjensen"), "If-Match: "+v3), http.StatusOK)
	apptest.MustStatus(t, p.do(http.MethodDelete, "/Users/"+id, nil, "If-Match: *"), http.StatusNoContent)
	mustSCIMError(t, p.do(http.MethodGet, "/Users/"+id, nil), http.StatusNotFound, "")
	mustSCIMError(t, p.do(http.MethodDelete, "/Users/"+id, nil), http.StatusNotFound, "")
	apptest.MustStatus(t, p.Admin(http.MethodGet, "/admin/realms/acme/users/"+id, nil), http.StatusNotFound)
}

// PATCH (RFC 7644 §3.5.2): each operation on a user, with paths, value
// filters and the extension's URN paths, in the shapes Entra ID and Okta
// send.
func TestPatchUser(t *testing.T) {
	type check func(t *testing.T, u map[string]any)
	attr := func(name string, want any) check {
		return func(t *testing.T, u map[string]any) {
			if got := u[name]; !equalJSON(got, want) {
				t.Fatalf("%s = %v, want %v", name, got, want)
			}
		}
	}
	emails := func(want ...map[string]any) check {
		list := make([]any, len(want))
		for i, w := range want {
			list[i] = w
		}
		return attr("emails", list)
	}
	sub := func(parent, name string, want any) check {
		return func(t *testing.T, u map[string]any) {
			m, _ := u[parent].(map[string]any)
			if got := m[name]; !equalJSON(got, want) {
				t.Fatalf("%s.%s = %v, want %v", parent, name, got, want)
			}
		}
	}
	work := map[string]any{"value": "bj@example.com", "type": "work", "primary": true}
	home := map[string]any{"value": "babs@home.test", "type": "home"}
	for _, tc := range []struct {
		name string
		ops  []map[string]any
		want []check
	}{
		{"add a simple attribute", []map[string]any{op("add", "nickName", "Babs")}, []check{attr("nickName", "Babs")}},
		{"replace a sub-attribute", []map[string]any{op("replace", "name.givenName", "Barbara")}, []check{sub("name", "givenName", "Barbara"), sub("name", "familyName", "Jensen")}},
		{"remove an attribute", []map[string]any{op("remove", "title", nil)}, []check{attr("title", nil)}},
		{"add an email", []map[string]any{op("add", "emails", []any{map[string]any{"value": "x@example.net", "type": "other"}})},
			[]check{emails(work, home, map[string]any{"value": "x@example.net", "type": "other"})}},
		{"remove by filter", []map[string]any{op("remove", `emails[type eq "home"]`, nil)}, []check{emails(work)}},
		{"replace a filtered value's sub-attribute", []map[string]any{op("replace", `emails[type eq "work"].value`, "new@example.com")},
			[]check{emails(map[string]any{"value": "new@example.com", "type": "work", "primary": true}, home)}},
		{"a filter matching nothing adds the value it describes (Entra ID)", []map[string]any{op("replace", `emails[type eq "other"].value`, "o@example.com")},
			[]check{emails(work, home, map[string]any{"value": "o@example.com", "type": "other"})}},
		{"a new primary clears the old", []map[string]any{op("replace", `emails[type eq "home"].primary`, true)},
			[]check{emails(map[string]any{"value": "bj@example.com", "type": "work"}, map[string]any{"value": "babs@home.test", "type": "home", "primary": true})}},
		{"replace without a path (Okta)", []map[string]any{op("replace", "", map[string]any{"title": "Boss", "Name": map[string]any{"middleName": "J"}})},
			[]check{attr("title", "Boss"), sub("name", "middleName", "J"), sub("name", "givenName", "Barbara")}},
		{"paths as keys without a path (Entra ID)", []map[string]any{op("Replace", "", map[string]any{"name.familyName": "J2", enterprise + ":department": "Ops"})},
			[]check{sub("name", "familyName", "J2"), sub(enterprise, "department", "Ops")}},
		{"the extension by URN path", []map[string]any{op("Add", enterprise+":employeeNumber", "42"), op("add", enterprise+":manager", "m-1")},
			[]check{sub(enterprise, "employeeNumber", "42"), sub(enterprise, "department", "Tours")}},
		{"remove from the extension", []map[string]any{op("remove", enterprise+":department", nil)}, []check{attr(enterprise, nil)}},
		{"the whole extension", []map[string]any{op("replace", enterprise, map[string]any{"division": "East"})},
			[]check{sub(enterprise, "division", "East"), sub(enterprise, "department", "Tours")}},
		{"a sub-attribute of every value", []map[string]any{op("replace", "emails.type", "other")},
			[]check{emails(map[string]any{"value": "bj@example.com", "type": "other", "primary": true}, map[string]any{"value": "babs@home.test", "type": "other"})}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProvisioner(t)
			u := p.create(map[string]any{"schemas": []string{"urn:ietf:params:scim:schemas:core:2.0:User"}, "userName": "bjensen",
				"title": "Guide", "name": map[string]any{"givenName": "Barbara", "familyName": "Jensen"},
				"emails": []any{work, home}, enterprise: map[string]any{"department": "Tours"}})
			r := p.do(http.MethodPatch, "/Users/"+u["id"].(string), patchBody(tc.ops...))
			apptest.MustStatus(t, r, http.StatusOK)
			got := r.Object(t)
			for _, c := range tc.want {
				c(t, got)
			}
			if again := p.do(http.MethodGet, "/Users/"+u["id"].(string), nil).Object(t); !equalJSON(again, got) {
				t.Fatalf("read back %v\nanswered %v", again, got)
			}
		})
	}
}

// Entra ID deactivates with {"op": "Replace", "path": "active", "value":
// "False"}: the user is disabled and their sessions end, offline ones
// too, for good: a reactivation revives none.
func TestDeactivateEndsSessions(t *testing.T) {
	p := newProvisioner(t)
	u := p.create(userBody("bjensen", "password", "correct horse battery 1"))
	id := u["id"].(string)
	r := p.Admin(http.MethodPost, "/admin/realms/acme/clients", map[string]any{"clientId": "web",
		"redirectUris": []string{"https://web.test/cb"}, "grantTypes": []string{"password", "refresh_token"}})
	apptest.MustStatus(t, r, http.StatusCreated)
	basic := "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("web:"+r.Object(t)["secret"].(string)))
	form := "Content-Type: application/x-www-form-urlencoded"
	grant := p.Request(http.MethodPost, "/realms/acme/protocol/openid-connect/token",
		"grant_type=password&username=bjensen&password="+url.QueryEscape("correct horse battery 1"), form, basic)
	apptest.MustStatus(t, grant, http.StatusOK)
	refresh := grant.Object(t)["refresh_token"].(string)
	grant = p.Request(http.MethodPost, "/realms/acme/protocol/openid-connect/token",
		"grant_type=password&scope=openid+offline_access&username=bjensen&password="+url.QueryEscape("correct horse battery 1"),
		form, basic)
	apptest.MustStatus(t, grant, http.StatusOK)
	offline := grant.Object(t)["refresh_token"].(string)
	sessions := func() int {
		var list []any
		p.Admin(http.MethodGet, "/admin/realms/acme/users/"+id+"/sessions", nil).Decode(t, &list)
		return len(list)
	}
	if sessions() == 0 {
		t.Fatal("no session after the sign-in")
	}
	r = p.do(http.MethodPatch, "/Users/"+id, patchBody(op("Replace", "active", "False")))
	apptest.MustStatus(t, r, http.StatusOK)
	if r.Object(t)["active"] != false {
		t.Fatalf("after the deactivation: %s", r.Body)
	}
	if n := sessions(); n != 0 {
		t.Fatalf("%d sessions after the deactivation", n)
	}
	r = p.Request(http.MethodPost, "/realms/acme/protocol/openid-connect/token", "grant_type=refresh_token&refresh_token="+refresh, form, basic)
	if r.Status == http.StatusOK {
		t.Fatalf("the refresh token still works: %s", r.Body)
	}
	// Okta's shape reactivates.
	r = p.do(http.MethodPatch, "/Users/"+id, patchBody(op("replace", "", map[string]any{"active": true})))
	apptest.MustStatus(t, r, http.StatusOK)
	for _, rt := range []string{refresh, offline} {
		r = p.Request(http.MethodPost, "/realms/acme/protocol/openid-connect/token", "grant_type=refresh_token&refresh_token="+rt, form, basic)
		if r.Status != http.StatusBadRequest || r.Object(t)["error"] != "invalid_grant" {
			t.Fatalf("a refresh token of before the deactivation, once reactivated: %d %s", r.Status, r.Body)
		}
	}
	grant = p.Request(http.MethodPost, "/realms/acme/protocol/openid-connect/token",
		"grant_type=password&username=bjensen&password="+url.QueryEscape("correct horse battery 1"), form, basic)
	apptest.MustStatus(t, grant, http.StatusOK)
}

// A PATCH changes all or nothing, and refuses what SCIM forbids.
func TestPatchRefused(t *testing.T) {
	p := newProvisioner(t)
	p.create(userBody("taken"))
	u := p.create(userBody("bjensen", "title", "Guide"))
	id := u["id"].(string)
	for _, tc := range []struct {
		name     string
		body     any
		status   int
		scimType string
	}{
		{"second operation fails", patchBody(op("replace", "title", "Boss"), op("replace", "shoeSize", "42")), 400, "invalidPath"},
		{"rename to a taken userName", patchBody(op("replace", "title", "Boss"), op("replace", "userName", "TAKEN")), 409, "uniqueness"},
		{"read-only id", patchBody(op("replace", "id", "x")), 400, "mutability"},
		{"read-only groups", patchBody(op("add", "groups", []any{map[string]any{"value": "g"}})), 400, "mutability"},
		{"read-only meta", patchBody(op("replace", "meta.created", "2020-01-01T00:00:00Z")), 400, "mutability"},
		{"remove without a path", patchBody(op("remove", "", nil)), 400, "noTarget"},
		{"a filter matching nothing that describes no value", patchBody(op("replace", `emails[value co "x"].type`, "work")), 400, "noTarget"},
		{"malformed path", patchBody(op("replace", "emails[type eq", "x")), 400, "invalidPath"},
		{"filter on a single value", patchBody(op("replace", `title[value eq "x"]`, "x")), 400, "invalidPath"},
		{"unknown schema in a path", patchBody(op("replace", "urn:example:nope:title", "x")), 400, "invalidPath"},
		{"unknown operation", patchBody(op("move", "title", "x")), 400, "invalidValue"},
		{"add without a value", patchBody(op("add", "title", nil)), 400, "invalidValue"},
		{"wrong value type", patchBody(op("replace", "active", "maybe")), 400, "invalidValue"},
		{"no operations", patchBody(), 400, "invalidSyntax"},
		{"wrong schema", map[string]any{"schemas": []string{"urn:ietf:params:scim:schemas:core:2.0:User"}, "Operations": []any{op("add", "title", "x")}}, 400, "invalidValue"},
		{"remove the userName", patchBody(op("remove", "userName", nil)), 400, "invalidValue"},
		{"password against the policy", patchBody(op("replace", "password", "short")), 400, "invalidValue"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mustSCIMError(t, p.do(http.MethodPatch, "/Users/"+id, tc.body), tc.status, tc.scimType)
		})
	}
	if got := p.do(http.MethodGet, "/Users/"+id, nil).Object(t); got["title"] != "Guide" || got["userName"] != "bjensen" ||
		got["meta"].(map[string]any)["version"] != u["meta"].(map[string]any)["version"] {
		t.Fatalf("a refused PATCH changed the user: %v", got)
	}
}

// A password set by PATCH obeys the realm's policy and signs in.
func TestPatchPassword(t *testing.T) {
	p := newProvisioner(t)
	id := p.create(userBody("bjensen"))["id"].(string)
	apptest.MustStatus(t, p.do(http.MethodPatch, "/Users/"+id, patchBody(op("replace", "password", "a good long password 7"))), http.StatusOK)
	realm := p.Realm("acme")
	u, err := p.Store.GetUser(t.Context(), realm.ID, id)
	if err != nil || u.PasswordHash == "" || u.PasswordHash == "a good long password 7" {
		t.Fatalf("stored password %q %v", u.PasswordHash, err)
	}
}
