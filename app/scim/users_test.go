package scim_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/apptest"
)

// provisioner is a SCIM client of realm acme.
type provisioner struct {
	*server
	cred string
}

func newProvisioner(t testing.TB) *provisioner {
	t.Helper()
	s := newServer(t)
	return &provisioner{server: s, cred: s.createToken("acme", "idp")["token"].(string)}
}

func (p *provisioner) do(method, path string, body any, headers ...string) *apptest.Response {
	p.T.Helper()
	return p.scim(method, "/scim/v2/acme"+path, p.cred, body, headers...)
}

// create provisions a user and returns it.
func (p *provisioner) create(body map[string]any) map[string]any {
	p.T.Helper()
	r := p.do(http.MethodPost, "/Users", body)
	apptest.MustStatus(p.T, r, http.StatusCreated)
	return r.Object(p.T)
}

func userBody(userName string, more ...any) map[string]any {
	b := map[string]any{"schemas": []string{"urn:ietf:params:scim:schemas:core:2.0:User"}, "userName": userName}
	for i := 0; i+1 < len(more); i += 2 {
		b[more[i].(string)] = more[i+1]
	}
	return b
}

// RFC 7644 §3.3's creation, with the enterprise extension.
func TestCreateUser(t *testing.T) {
	p := newProvisioner(t)
	r := p.do(http.MethodPost, "/Users", map[string]any{
		"schemas":    []string{"urn:ietf:params:scim:schemas:core:2.0:User", "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"},
		"userName":   "BJensen",
		"externalId": "bjensen",
		"name":       map[string]any{"formatted": "Ms. Barbara J Jensen III", "familyName": "Jensen", "givenName": "Barbara"},
		"emails": []any{map[string]any{"value": "bjensen@example.com", "type": "work", "primary": true},
			map[string]any{"value": "babs@jensen.org", "type": "home"}},
		"phoneNumbers": []any{map[string]any{"value": "555-555-8377", "type": "work"}},
		"title":        "Tour Guide",
		"password":     "t1meMa$heen and more",
		"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User": map[string]any{"employeeNumber": "701984",
			"department": "Tour Operations"},
		"groups": []any{map[string]any{"value": "ignored: read-only"}},
		"meta":   map[string]any{"resourceType": "User"},
	})
	apptest.MustStatus(t, r, http.StatusCreated)
	u := r.Object(t)
	id, _ := u["id"].(string)
	meta := u["meta"].(map[string]any)
	if u["userName"] != "bjensen" || u["externalId"] != "bjensen" || u["active"] != true || u["title"] != "Tour Guide" {
		t.Fatalf("created %s", r.Body)
	}
	if meta["location"] != apptest.BaseURL+"/scim/v2/acme/Users/"+id || r.Header.Get("Location") != meta["location"] ||
		r.Header.Get("ETag") != meta["version"] || meta["resourceType"] != "User" || meta["created"] == nil {
		t.Fatalf("meta %v, Location %q, ETag %q", meta, r.Header.Get("Location"), r.Header.Get("ETag"))
	}
	if _, ok := u["password"]; ok || strings.Contains(string(r.Body), "t1meMa") {
		t.Fatalf("the password is shown: %s", r.Body)
	}
	if _, ok := u["groups"]; ok {
		t.Fatalf("read-only groups were written: %s", r.Body)
	}
	if ext := u["urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"].(map[string]any); ext["department"] != "Tour Operations" {
		t.Fatalf("extension %v", ext)
	}
	// The identity core's user: the primary email, names, a password that signs in.
	admin := p.Admin(http.MethodGet, "/admin/realms/acme/users/"+id, nil).Object(t)
	if admin["username"] != "bjensen" || admin["email"] != "bjensen@example.com" || admin["firstName"] != "Barbara" ||
		admin["lastName"] != "Jensen" || admin["enabled"] != true {
		t.Fatalf("the realm's user %v", admin)
	}
	got := p.do(http.MethodGet, "/Users/"+id, nil)
	apptest.MustStatus(t, got, http.StatusOK)
	if got.Header.Get("ETag") != meta["version"] {
		t.Fatalf("GET ETag %q, created %v", got.Header.Get("ETag"), meta["version"])
	}
}

func TestCreateUserRefused(t *testing.T) {
	p := newProvisioner(t)
	p.create(userBody("taken", "emails", []any{map[string]any{"value": "taken@example.com"}}))
	p.Admin(http.MethodPut, "/admin/realms/acme", map[string]any{"passwordPolicy": "length(12)"})
	core := []string{"urn:ietf:params:scim:schemas:core:2.0:User"}
	for _, tc := range []struct {
		name     string
		body     any
		status   int
		scimType string
	}{
		{"userName taken", userBody("TAKEN"), 409, "uniqueness"},
		{"email taken", userBody("other", "emails", []any{map[string]any{"value": "Taken@example.com"}}), 409, "uniqueness"},
		{"no userName", map[string]any{"schemas": core}, 400, "invalidValue"},
		{"userName with a space", userBody("a b"), 400, "invalidValue"},
		{"no schemas", map[string]any{"userName": "x"}, 400, "invalidSyntax"},
		{"unknown schema", map[string]any{"schemas": []string{core[0], "urn:example:nope"}, "userName": "x"}, 400, "invalidValue"},
		{"unknown attribute", userBody("x", "shoeSize", "42"), 400, "invalidSyntax"},
		{"wrong type", userBody("x", "active", 7), 400, "invalidValue"},
		{"two primaries", userBody("x", "emails", []any{map[string]any{"value": "a@example.com", "primary": true},
			map[string]any{"value": "b@example.com", "primary": true}}), 400, "invalidValue"},
		{"malformed email", userBody("x", "emails", []any{map[string]any{"value": "not an email"}}), 400, "invalidValue"},
		{"not JSON", `{"userName": `, 400, "invalidSyntax"},
		{"an array", `[]`, 400, "invalidSyntax"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mustSCIMError(t, p.do(http.MethodPost, "/Users", tc.body), tc.status, tc.scimType)
		})
	}
	r := p.do(http.MethodGet, "/Users?count=10", nil)
	if n := r.Object(t)["totalResults"]; n != 1.0 {
		t.Fatalf("users after the refusals: %s", r.Body)
	}
}
