package attributes_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/apptest/realapp"
	"github.com/idenplane/idenplane/app/attributes"
	"github.com/idenplane/idenplane/app/httpx"
)

const attrsPath = "/admin/realms/acme/custom-attributes"

func newServer(t *testing.T) *apptest.Server {
	t.Helper()
	s := realapp.New(t)
	s.CreateRealm("acme")
	return s
}

func create(s *apptest.Server, body map[string]any) attributes.AttributeRep {
	s.T.Helper()
	r := s.Admin(http.MethodPost, attrsPath, body)
	apptest.MustStatus(s.T, r, http.StatusCreated)
	var a attributes.AttributeRep
	r.Decode(s.T, &a)
	return a
}

func names(s *apptest.Server) []string {
	s.T.Helper()
	r := s.Admin(http.MethodGet, attrsPath, nil)
	apptest.MustStatus(s.T, r, http.StatusOK)
	var list []attributes.AttributeRep
	r.Decode(s.T, &list)
	out := []string{}
	for _, a := range list {
		out = append(out, a.Name+":"+a.Type)
	}
	return out
}

func TestAttributeSchema(t *testing.T) {
	s := newServer(t)
	a := create(s, map[string]any{"name": "department", "displayName": "Department", "type": "enum",
		"options": []string{"sales", "ops"}, "required": true, "editableBy": "user", "onRegistration": true, "inTokens": true})
	if a.ID == "" || a.Type != "enum" || !slices.Equal(a.Options, []string{"sales", "ops"}) || !a.Required ||
		a.EditableBy != "user" || !a.OnRegistration || !a.InTokens || a.CreatedTimestamp == 0 {
		t.Errorf("created %+v", a)
	}
	b := create(s, map[string]any{"name": "age", "type": "number", "validation": map[string]any{"min": 0, "max": 150}})
	if b.EditableBy != "admin" || *b.Validation.Max != 150 {
		t.Errorf("defaults %+v", b)
	}
	r := s.Admin(http.MethodGet, attrsPath+"/"+a.ID, nil)
	apptest.MustStatus(t, r, http.StatusOK)
	var got attributes.AttributeRep
	if r.Decode(t, &got); !reflect.DeepEqual(got, a) {
		t.Errorf("read back %+v, want %+v", got, a)
	}
	// PUT of one attribute: the whole attribute, which may repeat its id.
	r = s.Admin(http.MethodPut, attrsPath+"/"+b.ID, map[string]any{"id": b.ID, "name": "age", "type": "number",
		"displayName": "Age", "validation": map[string]any{"min": 18}})
	apptest.MustStatus(t, r, http.StatusOK)
	if r.Decode(t, &got); got.DisplayName != "Age" || *got.Validation.Min != 18 || got.Validation.Max != nil || got.ID != b.ID {
		t.Errorf("updated %+v", got)
	}
	if n := names(s); !slices.Equal(n, []string{"age:number", "department:enum"}) {
		t.Errorf("schema %v", n)
	}
	apptest.MustStatus(t, s.Admin(http.MethodDelete, attrsPath+"/"+b.ID, nil), http.StatusNoContent)
	apptest.MustError(t, s.Admin(http.MethodGet, attrsPath+"/"+b.ID, nil), 404, "not_found", "")
	apptest.MustError(t, s.Admin(http.MethodDelete, attrsPath+"/"+b.ID, nil), 404, "not_found", "")
}

func TestAttributeSchemaBadInput(t *testing.T) {
	s := newServer(t)
	taken := create(s, map[string]any{"name": "taken", "type": "string"})
	for _, tc := range []struct {
		name        string
		body        any
		status      int
		code, field string
	}{
		{"duplicate name", map[string]any{"name": "taken", "type": "string"}, 409, "conflict", "name"},
		{"no name", map[string]any{"type": "string"}, 400, "invalid_field", "name"},
		{"name with a space", map[string]any{"name": "a b", "type": "string"}, 400, "invalid_field", "name"},
		{"unknown type", map[string]any{"name": "x", "type": "float"}, 400, "invalid_field", "type"},
		{"no type", map[string]any{"name": "x"}, 400, "invalid_field", "type"},
		{"enum without options", map[string]any{"name": "x", "type": "enum"}, 400, "invalid_field", "options"},
		{"options of a string", map[string]any{"name": "x", "type": "string", "options": []string{"a"}}, 400, "invalid_field", "options"},
		{"option twice", map[string]any{"name": "x", "type": "enum", "options": []string{"a", "a"}}, 400, "invalid_field", "options[1]"},
		{"bad regex", map[string]any{"name": "x", "type": "string", "validation": map[string]any{"pattern": "(a"}}, 400, "invalid_field", "validation.pattern"},
		{"pattern on a number", map[string]any{"name": "x", "type": "number", "validation": map[string]any{"pattern": "a"}}, 400, "invalid_field", "validation.pattern"},
		{"min above max", map[string]any{"name": "x", "type": "number", "validation": map[string]any{"min": 5, "max": 1}}, 400, "invalid_field", "validation.min"},
		{"negative length", map[string]any{"name": "x", "type": "string", "validation": map[string]any{"minLength": -1}}, 400, "invalid_field", "validation.minLength"},
		{"min length above max", map[string]any{"name": "x", "type": "string", "validation": map[string]any{"minLength": 5, "maxLength": 2}}, 400, "invalid_field", "validation.minLength"},
		{"bounds on a string", map[string]any{"name": "x", "type": "string", "validation": map[string]any{"max": 2}}, 400, "invalid_field", "validation.min"},
		{"unknown editor", map[string]any{"name": "x", "type": "string", "editableBy": "anyone"}, 400, "invalid_field", "editableBy"},
		{"unknown rule", map[string]any{"name": "x", "type": "string", "validation": map[string]any{"email": true}}, 400, "unknown_field", "email"},
		{"required not a boolean", map[string]any{"name": "x", "type": "string", "required": "yes"}, 400, "invalid_field", "required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			apptest.MustError(t, s.Admin(http.MethodPost, attrsPath, tc.body), tc.status, tc.code, tc.field)
		})
	}
	apptest.MustError(t, s.Admin(http.MethodPut, attrsPath+"/"+taken.ID, map[string]any{"id": "other", "name": "taken", "type": "string"}),
		400, "invalid_field", "id")
	apptest.MustError(t, s.Admin(http.MethodPut, attrsPath+"/nope", map[string]any{"name": "x", "type": "string"}), 404, "not_found", "")
	if n := names(s); !slices.Equal(n, []string{"taken:string"}) {
		t.Errorf("schema after refused requests %v", n)
	}
}

func TestAttributeSchemaBulk(t *testing.T) {
	s := newServer(t)
	keep := create(s, map[string]any{"name": "keep", "type": "string"})
	create(s, map[string]any{"name": "drop", "type": "string"})

	r := s.Admin(http.MethodPut, attrsPath, map[string]any{"attributes": []any{
		map[string]any{"name": "keep", "type": "string", "displayName": "Kept"},
		map[string]any{"name": "added", "type": "boolean"},
	}})
	apptest.MustStatus(t, r, http.StatusOK)
	var list []attributes.AttributeRep
	r.Decode(t, &list)
	if len(list) != 2 || list[0].Name != "added" || list[1].ID != keep.ID || list[1].DisplayName != "Kept" {
		t.Errorf("after the bulk update %+v", list)
	}
	// All or nothing: one bad attribute changes nothing, and is named.
	for _, tc := range []struct {
		name        string
		body        any
		status      int
		code, field string
	}{
		{"bad second attribute", map[string]any{"attributes": []any{map[string]any{"name": "z", "type": "string"},
			map[string]any{"name": "y", "type": "nope"}}}, 400, "invalid_field", "attributes[1].type"},
		{"name twice", map[string]any{"attributes": []any{map[string]any{"name": "z", "type": "string"},
			map[string]any{"name": "z", "type": "string"}}}, 400, "invalid_field", "attributes[1].name"},
		{"unknown id", map[string]any{"attributes": []any{map[string]any{"id": "nope", "name": "z", "type": "string"}}}, 404, "not_found", "attributes[0].id"},
		{"no list", map[string]any{}, 400, "invalid_field", "attributes"},
		{"a list for a body", []any{}, 400, "invalid_json", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			apptest.MustError(t, s.Admin(http.MethodPut, attrsPath, tc.body), tc.status, tc.code, tc.field)
		})
	}
	if n := names(s); !slices.Equal(n, []string{"added:boolean", "keep:string"}) {
		t.Errorf("schema after refused bulk updates %v", n)
	}
	apptest.MustStatus(t, s.Admin(http.MethodPut, attrsPath, map[string]any{"attributes": []any{}}), http.StatusOK)
	if n := names(s); len(n) != 0 {
		t.Errorf("emptied schema %v", n)
	}
}

func userAttrs(s *apptest.Server, id string) map[string][]string {
	s.T.Helper()
	r := s.Admin(http.MethodGet, "/admin/realms/acme/users/"+id+"/attributes", nil)
	apptest.MustStatus(s.T, r, http.StatusOK)
	var m map[string][]string
	r.Decode(s.T, &m)
	return m
}

func TestUserAttributes(t *testing.T) {
	s := newServer(t)
	create(s, map[string]any{"name": "department", "type": "enum", "options": []string{"sales", "ops"}, "required": true})
	create(s, map[string]any{"name": "age", "type": "number", "validation": map[string]any{"min": 0, "max": 150}})
	create(s, map[string]any{"name": "employee", "type": "boolean"})
	create(s, map[string]any{"name": "started", "type": "date"})
	create(s, map[string]any{"name": "badge", "type": "string", "validation": map[string]any{"pattern": "[A-Z]{2}[0-9]+", "maxLength": 8}})
	create(s, map[string]any{"name": "languages", "type": "string", "multivalued": true})
	id := s.CreateUser("acme", map[string]any{"username": "alice"})["id"].(string)
	path := "/admin/realms/acme/users/" + id + "/attributes"

	r := s.Admin(http.MethodPut, path, map[string]any{"department": "ops", "age": 42.50, "employee": true,
		"started": "2024-02-29", "badge": "AB123", "languages": []any{"en", "fr"}})
	apptest.MustStatus(t, r, http.StatusOK)
	want := map[string][]string{"department": {"ops"}, "age": {"42.5"}, "employee": {"true"}, "started": {"2024-02-29"},
		"badge": {"AB123"}, "languages": {"en", "fr"}}
	if got := userAttrs(s, id); !reflect.DeepEqual(got, want) {
		t.Errorf("attributes %v, want %v", got, want)
	}
	// What a GET gave, sent back, is accepted as it is.
	apptest.MustStatus(t, s.Admin(http.MethodPut, path, want), http.StatusOK)

	// Every value at fault is reported at once, and nothing is written.
	r = s.Admin(http.MethodPut, path, map[string]any{"age": "old", "employee": "yes", "started": "2024-02-30",
		"badge": "ab123", "languages": "en", "nickname": "al"})
	apptest.MustError(t, r, 400, "invalid_field", "attributes.nickname")
	var body httpx.ErrorBody
	r.Decode(t, &body)
	var fields []string
	for _, e := range body.Errors {
		fields = append(fields, e.Field)
	}
	wantFields := []string{"attributes.nickname", "attributes.department", "attributes.age", "attributes.employee",
		"attributes.started", "attributes.badge"}
	slices.Sort(fields)
	slices.Sort(wantFields)
	if !slices.Equal(fields, wantFields) {
		t.Errorf("fields at fault %v, want %v (%s)", fields, wantFields, r.Body)
	}
	if got := userAttrs(s, id); !reflect.DeepEqual(got, want) {
		t.Errorf("a refused update wrote %v", got)
	}
	for _, tc := range []struct {
		name  string
		body  any
		field string
	}{
		{"out of range", map[string]any{"department": "ops", "age": 151}, "attributes.age"},
		{"too long", map[string]any{"department": "ops", "badge": "AB1234567"}, "attributes.badge"},
		{"two values of a single one", map[string]any{"department": []string{"ops", "sales"}}, "attributes.department"},
		{"not an option", map[string]any{"department": "Ops"}, "attributes.department"},
		{"an object", map[string]any{"department": map[string]any{"a": 1}}, "attributes.department"},
		{"a nested list", map[string]any{"department": "ops", "languages": []any{[]any{"en"}}}, "attributes.languages"},
		{"required left out", map[string]any{"age": 3}, "attributes.department"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			apptest.MustError(t, s.Admin(http.MethodPut, path, tc.body), 400, "invalid_field", tc.field)
		})
	}
	apptest.MustError(t, s.Admin(http.MethodPut, "/admin/realms/acme/users/nope/attributes", map[string]any{}), 404, "not_found", "")
	apptest.MustError(t, s.Admin(http.MethodPut, path, `["a"]`), 400, "invalid_json", "")

	// Removed from the schema, an attribute's values are no longer shown;
	// added again, they are.
	list := s.Admin(http.MethodGet, attrsPath, nil)
	var schema []attributes.AttributeRep
	list.Decode(t, &schema)
	i := slices.IndexFunc(schema, func(a attributes.AttributeRep) bool { return a.Name == "badge" })
	apptest.MustStatus(t, s.Admin(http.MethodDelete, attrsPath+"/"+schema[i].ID, nil), http.StatusNoContent)
	if got := userAttrs(s, id); got["badge"] != nil || len(got) != 5 {
		t.Errorf("after the schema lost badge: %v", got)
	}
	raw, _ := json.Marshal(userAttrs(s, id))
	if strings.Contains(string(raw), "AB123") {
		t.Errorf("a removed attribute's value shows: %s", raw)
	}
}
