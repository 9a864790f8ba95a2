package attributes_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/apptest/realapp"
	"github.com/idenplane/idenplane/app/httpx"
)

// FuzzPutUserAttributes drives PUT .../users/{id}/attributes with any body
// against a schema of every type: a 200 whose values read back as sent,
// or a 4xx in the API's shape that leaves the values as they were.
func FuzzPutUserAttributes(f *testing.F) {
	for _, seed := range []string{
		`{"department":"ops","age":42,"employee":true,"started":"2024-02-29","badge":"AB1","languages":["en","fr"]}`,
		`{"department":"ops","age":"1e400"}`, `{"department":"ops","age":-0.0}`, `{"department":null}`,
		`{"department":["ops",["x"]]}`, `{"department":{"a":1}}`, `{"department":"ops","badge":"ab"}`,
		`{"department":"ops","started":"2024-13-01"}`, `{"x":1}`, `[]`, `{"department":"ops\u0000"}`,
	} {
		f.Add(seed)
	}
	s := realapp.New(f)
	s.CreateRealm("acme")
	for _, a := range []map[string]any{
		{"name": "department", "type": "enum", "options": []string{"sales", "ops"}, "required": true},
		{"name": "age", "type": "number", "validation": map[string]any{"min": -1e6, "max": 1e6}},
		{"name": "employee", "type": "boolean"},
		{"name": "started", "type": "date"},
		{"name": "badge", "type": "string", "validation": map[string]any{"pattern": "[A-Z]{2}[0-9]+", "maxLength": 8}},
		{"name": "languages", "type": "string", "multivalued": true},
	} {
		apptest.MustStatus(f, s.Admin(http.MethodPost, attrsPath, a), http.StatusCreated)
	}
	id := s.CreateUser("acme", map[string]any{"username": "alice"})["id"].(string)
	path := "/admin/realms/acme/users/" + id + "/attributes"
	apptest.MustStatus(f, s.Admin(http.MethodPut, path, map[string]any{"department": "ops"}), http.StatusOK)
	f.Fuzz(func(t *testing.T, body string) {
		s.T = t
		before := s.Admin(http.MethodGet, path, nil)
		r := s.Admin(http.MethodPut, path, body)
		if r.Status == http.StatusOK {
			after := s.Admin(http.MethodGet, path, nil)
			if string(after.Body) != string(r.Body) {
				t.Fatalf("answered %s, reads back %s", r.Body, after.Body)
			}
			return
		}
		var e httpx.ErrorBody
		if r.Status < 400 || r.Status >= 500 || json.Unmarshal(r.Body, &e) != nil || e.Error == "" {
			t.Fatalf("answered %d: %s", r.Status, r.Body)
		}
		if after := s.Admin(http.MethodGet, path, nil); string(after.Body) != string(before.Body) {
			t.Fatalf("a refused update changed %s to %s", before.Body, after.Body)
		}
	})
}
