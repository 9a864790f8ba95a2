package app

import (
	"net/http"
	"reflect"
	"testing"
)

// The admin user API takes and shows the realm's custom attributes: a
// create or update with attributes is checked against the schema all at
// once and refused whole; one without leaves them; removed attributes are
// not shown.
func TestAdminUserCustomAttributes(t *testing.T) {
	e, _ := attributesEnv(t)
	const users = "/admin/realms/acme/users"
	attrsOf := func(r *testResponse) map[string][]string {
		t.Helper()
		var rep struct{ Attributes map[string][]string }
		r.decode(t, &rep)
		return rep.Attributes
	}

	r := e.admin(http.MethodPost, users, map[string]any{"username": "zoe", "attributes": map[string]any{
		"department": "hr", "age": "old", "nope": 1}})
	mustError(t, r, http.StatusBadRequest, "invalid_field", "attributes.nope")
	var refused struct {
		Errors []struct{ Field string }
	}
	r.decode(t, &refused)
	var fields []string
	for _, f := range refused.Errors {
		fields = append(fields, f.Field)
	}
	if want := []string{"attributes.nope", "attributes.age", "attributes.department", "attributes.internal"}; !reflect.DeepEqual(fields, want) {
		t.Errorf("faults %v, want %v", fields, want)
	}
	if got := e.admin(http.MethodGet, users+"?username=zoe&exact=true", nil); len(got.object(t)["users"].([]any)) != 0 {
		t.Fatal("a refused create made the user")
	}
	mustError(t, e.admin(http.MethodPost, users, map[string]any{"username": "zoe", "attributes": []string{"x"}}),
		http.StatusBadRequest, "invalid_field", "attributes")

	r = e.admin(http.MethodPost, users, map[string]any{"username": "zoe", "attributes": map[string]any{
		"department": "sales", "age": 40, "internal": "CC-9", "newsletter": false}})
	mustStatus(t, r, http.StatusCreated)
	id := r.object(t)["id"].(string)
	want := map[string][]string{"department": {"sales"}, "age": {"40"}, "internal": {"CC-9"}, "newsletter": {"false"}}
	if got := attrsOf(e.admin(http.MethodGet, users+"/"+id, nil)); !reflect.DeepEqual(got, want) {
		t.Fatalf("attributes %v, want %v", got, want)
	}

	for _, tc := range []struct {
		name, method string
		body         map[string]any
		status       int
		want         map[string][]string
	}{
		{"PATCH without attributes leaves them", http.MethodPatch, map[string]any{"firstName": "Zoe"}, http.StatusOK, want},
		{"PUT without attributes leaves them", http.MethodPut, map[string]any{"username": "zoe", "firstName": "Zoé"}, http.StatusOK, want},
		{"a bad value refuses the whole update", http.MethodPatch, map[string]any{"lastName": "Never",
			"attributes": map[string]any{"department": "sales", "internal": "CC-9", "age": "x"}}, http.StatusBadRequest, want},
		{"attributes replace the values held", http.MethodPatch, map[string]any{"attributes": map[string]any{
			"department": "engineering", "internal": "CC-9"}}, http.StatusOK,
			map[string][]string{"department": {"engineering"}, "internal": {"CC-9"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.admin(tc.method, users+"/"+id, tc.body)
			mustStatus(t, r, tc.status)
			got := e.admin(http.MethodGet, users+"/"+id, nil)
			if attrs := attrsOf(got); !reflect.DeepEqual(attrs, tc.want) {
				t.Errorf("attributes %v, want %v", attrs, tc.want)
			}
			if got.object(t)["lastName"] == "Never" {
				t.Error("a refused update changed the user")
			}
		})
	}

	// Removed from the schema, an attribute is no longer shown; lists of
	// users carry no attributes.
	var schema []struct{ ID, Name string }
	e.admin(http.MethodGet, "/admin/realms/acme/custom-attributes", nil).decode(t, &schema)
	for _, a := range schema {
		if a.Name == "internal" {
			mustStatus(t, e.admin(http.MethodDelete, "/admin/realms/acme/custom-attributes/"+a.ID, nil), http.StatusNoContent)
		}
	}
	if got := attrsOf(e.admin(http.MethodGet, users+"/"+id, nil)); !reflect.DeepEqual(got, map[string][]string{"department": {"engineering"}}) {
		t.Errorf("after removing internal: %v", got)
	}
	list := e.admin(http.MethodGet, users+"?username=zoe&exact=true", nil).object(t)["users"].([]any)
	if _, ok := list[0].(map[string]any)["attributes"]; ok {
		t.Error("a list of users carries attributes")
	}
}
