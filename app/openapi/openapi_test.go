package openapi

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

type inner struct {
	Name string `json:"name"`
}

type sample struct {
	inner
	ID     string            `json:"id"`
	Note   string            `json:"note,omitempty"`
	Tags   []string          `json:"tags"`
	Parent *inner            `json:"parent"`
	Labels map[string]string `json:"labels,omitempty"`
	When   time.Time         `json:"when"`
	Count  int64             `json:"count,string"`
	Raw    json.RawMessage   `json:"raw,omitempty"`
	Hidden string            `json:"-"`
	_      string            // unexported: not a property
}

// Schemas say what encoding/json writes: fields without omitempty are
// required in an answer, pointers and slices without it may be null,
// embedded structs are in line, and a request requires nothing.
func TestSchemaOfGoTypes(t *testing.T) {
	s := newSchemas()
	ref := s.of(sample{}, answer)
	if ref["$ref"] != "#/components/schemas/Sample" {
		t.Fatalf("ref %v", ref)
	}
	got := s.components["Sample"]
	props := got["properties"].(Schema)
	for _, name := range []string{"name", "id", "note", "tags", "parent", "labels", "when", "count", "raw"} {
		if _, ok := props[name]; !ok {
			t.Errorf("no property %s", name)
		}
	}
	for _, name := range []string{"Hidden", "-", "_", "inner"} {
		if _, ok := props[name]; ok {
			t.Errorf("property %s", name)
		}
	}
	if want := []string{"name", "id", "tags", "parent", "when", "count"}; !reflect.DeepEqual(got["required"], want) {
		t.Errorf("required %v, want %v", got["required"], want)
	}
	if typ := props["tags"].(Schema)["type"]; !reflect.DeepEqual(typ, []string{"array", "null"}) {
		t.Errorf("tags type %v", typ)
	}
	if p := props["parent"].(Schema); p["anyOf"] == nil {
		t.Errorf("parent %v, want a reference or null", p)
	}
	if typ := props["count"].(Schema)["type"]; typ != "string" {
		t.Errorf("count type %v", typ)
	}
	if f := props["when"].(Schema)["format"]; f != "date-time" {
		t.Errorf("when format %v", f)
	}
	if got["additionalProperties"] != false {
		t.Error("unknown properties allowed")
	}

	in := s.of(sample{}, request)
	if in["$ref"] != "#/components/schemas/SampleInput" {
		t.Fatalf("request ref %v", in)
	}
	if r := s.components["SampleInput"]["required"]; r != nil {
		t.Errorf("a request requires %v", r)
	}
}

// Build refuses an operation for no route, and describes each route
// with its path parameters, permission and error shape.
func TestBuild(t *testing.T) {
	routes := []Route{
		{Method: http.MethodGet, Path: "/admin/realms/{realm}/things/{id:[0-9]+}", Access: Admin, Permission: "things:read", Errors: APIErrors},
		{Method: http.MethodPost, Path: "/realms/{realm}/protocol/openid-connect/token", Access: Public, Errors: OAuthErrors},
	}
	if _, err := Build(Info{APIError: struct{}{}}, routes, map[string]Op{"GET /nowhere": {}}); err == nil {
		t.Fatal("an operation for no route was accepted")
	}
	d, err := Build(Info{Title: "t", APIError: struct {
		Error string `json:"error"`
	}{}}, routes, map[string]Op{"GET /admin/realms/{realm}/things/{id:[0-9]+}": {Response: inner{}}})
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]struct {
			Permission string           `json:"x-permission"`
			Parameters []map[string]any `json:"parameters"`
			Responses  map[string]any   `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(d.JSON, &doc); err != nil {
		t.Fatal(err)
	}
	get := doc.Paths["/admin/realms/{realm}/things/{id}"]["get"]
	if get.Permission != "things:read" || len(get.Parameters) != 2 || get.Responses["200"] == nil || get.Responses["403"] == nil {
		t.Errorf("get: %+v", get)
	}
	token := doc.Paths["/realms/{realm}/protocol/openid-connect/token"]["post"]
	if !strings.Contains(string(mustMarshal(t, token.Responses["4XX"])), "OAuthError") {
		t.Errorf("token errors: %v", token.Responses["4XX"])
	}
	if d.Typed != 1 || len(d.Operations) != 2 {
		t.Errorf("typed %d of %d", d.Typed, len(d.Operations))
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The YAML rendering keeps keys in order, nests by indentation and
// quotes every string.
func TestYAML(t *testing.T) {
	y, err := toYAML([]byte(`{"b":1,"a":{"x":[1,{"k":"v","l":[]},[2]],"e":{}},"s":"a: b\n"}`))
	if err != nil {
		t.Fatal(err)
	}
	want := `"b": 1
"a":
  "x":
  - 1
  - "k": "v"
    "l": []
  -
    - 2
  "e": {}
"s": "a: b\n"
`
	if string(y) != want {
		t.Errorf("got\n%s\nwant\n%s", y, want)
	}
}

// A route of its own media types reads and answers them, its other
// statuses too, and an answer of another status may have no body.
func TestMediaTypesOfARoute(t *testing.T) {
	const path = "/scim/v2/{realm}/Things/{id}"
	routes := []Route{{Method: http.MethodPatch, Path: path, Access: SCIM, Errors: SCIMErrors}}
	d, err := Build(Info{APIError: struct{}{}}, routes, map[string]Op{"PATCH " + path: {
		Request: inner{}, RequestTypes: []string{"application/scim+json", "application/json"},
		Response: inner{}, ResponseType: "application/scim+json", Also: map[int]any{http.StatusNoContent: nil}}})
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]struct {
			RequestBody struct {
				Content map[string]any `json:"content"`
			} `json:"requestBody"`
			Responses map[string]struct {
				Content map[string]any `json:"content"`
			} `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(d.JSON, &doc); err != nil {
		t.Fatal(err)
	}
	op := doc.Paths[path]["patch"]
	if c := op.RequestBody.Content; len(c) != 2 || c["application/scim+json"] == nil || c["application/json"] == nil {
		t.Errorf("request media types %v", c)
	}
	if c := op.Responses["200"].Content; len(c) != 1 || c["application/scim+json"] == nil {
		t.Errorf("200 media types %v", c)
	}
	if r, ok := op.Responses["204"]; !ok || r.Content != nil {
		t.Errorf("204 %+v, want no body", r)
	}
}

// tree holds trees of its own type, as a group holds its subgroups.
type tree struct {
	Name     string `json:"name"`
	Children []tree `json:"children"`
}

// A type that holds itself is one component referring to itself; its
// list stays of type array (null besides), which libopenapi needs to
// tell a tree from an endless value.
func TestSchemaOfRecursiveType(t *testing.T) {
	s := newSchemas()
	if ref := s.of([]tree{}, answer); ref["items"].(Schema)["$ref"] != "#/components/schemas/Tree" {
		t.Fatalf("ref %v", ref)
	}
	children := s.components["Tree"]["properties"].(Schema)["children"].(Schema)
	want := Schema{"anyOf": []Schema{
		{"type": "array", "items": Schema{"$ref": "#/components/schemas/Tree"}},
		{"type": "null"},
	}}
	if !reflect.DeepEqual(children, want) {
		t.Errorf("children %v, want %v", children, want)
	}
	if len(s.components) != 1 {
		t.Errorf("components %v", s.components)
	}
}

// An optional request body is not required, and an Also without a body
// is a second success status that answers nothing.
func TestRequestOptionalAndBodilessAlso(t *testing.T) {
	const path = "/realms/{realm}/protocol/openid-connect/logout"
	routes := []Route{{Method: http.MethodPost, Path: path, Access: Public, Errors: OAuthErrors}}
	d, err := Build(Info{APIError: struct{}{}}, routes, map[string]Op{"POST " + path: {
		Form: Schema{"type": "object"}, RequestOptional: true, ResponseType: "text/html", Response: Schema{"type": "string"},
		Also: map[int]any{http.StatusNoContent: nil}}})
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]struct {
			RequestBody map[string]any            `json:"requestBody"`
			Responses   map[string]map[string]any `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(d.JSON, &doc); err != nil {
		t.Fatal(err)
	}
	post := doc.Paths[path]["post"]
	if post.RequestBody["required"] != false {
		t.Errorf("request body %v, want it optional", post.RequestBody)
	}
	noContent, ok := post.Responses["204"]
	if !ok || noContent["content"] != nil {
		t.Errorf("204 %v, want an answer without a body", noContent)
	}
	if post.Responses["200"]["content"] == nil {
		t.Errorf("200 %v, want the page", post.Responses["200"])
	}
}

type embeddedNote struct {
	Note []string `json:"note"`
}

type hidingNote struct {
	Note string `json:"note,omitempty"`
	embeddedNote
}

// A field hides an embedded struct's field of the same name, as in
// encoding/json: the outer field's schema is the one the document gives.
func TestShallowerFieldHidesEmbedded(t *testing.T) {
	s := newSchemas()
	s.of(hidingNote{}, answer)
	got := s.components["HidingNote"]
	if typ := got["properties"].(Schema)["note"].(Schema)["type"]; typ != "string" {
		t.Errorf("note type %v, want the outer field's string", typ)
	}
	if r := got["required"]; r != nil {
		t.Errorf("required %v, want none: the outer note is omitempty", r)
	}
}
