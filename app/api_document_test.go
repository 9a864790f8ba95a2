package app

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/apptest/openapitest"
)

// notInDocument is what the OpenAPI document leaves out, being a
// browser's rather than an API: the console, static files and the SAML
// bindings by prefix, and the hosted pages the table registers as pages
// (formatBrowser), which TestOpenAPIOmitsOnlyPages keeps to pages.
var notInDocument = []string{"/console", "/assets/", "/realms/{realm}/protocol/saml"}

var pathParams = regexp.MustCompile(`\{[^}]+\}`)

func excluded(rt route) bool {
	for _, p := range notInDocument {
		if rt.path == p || strings.HasPrefix(rt.path, strings.TrimSuffix(p, "/")+"/") {
			return true
		}
	}
	return rt.format == formatBrowser
}

// Every route of the table is in the document, with its method, and
// nothing else is.
func TestOpenAPICoversTheRouteTable(t *testing.T) {
	s := newTestServer(t)
	r := s.request(http.MethodGet, pathOpenAPIJSON, nil)
	mustStatus(t, r, http.StatusOK)
	var doc struct {
		Paths map[string]map[string]struct {
			Permission string `json:"x-permission"`
		} `json:"paths"`
	}
	r.decode(t, &doc)
	inDoc := map[string]string{}
	for path, ops := range doc.Paths {
		for method, o := range ops {
			inDoc[strings.ToUpper(method)+" "+path] = o.Permission
		}
	}
	want := 0
	for _, rt := range s.app.table {
		key := rt.method + " " + rt.path
		perm, ok := inDoc[key]
		switch {
		case excluded(rt) && ok:
			t.Errorf("%s is in the document, but it is a page", key)
		case !excluded(rt) && !ok:
			t.Errorf("%s is not in the document", key)
		case ok && perm != string(rt.access.perm):
			t.Errorf("%s: the document says permission %q, the table %q", key, perm, rt.access.perm)
		}
		if !excluded(rt) {
			want++
		}
	}
	if len(inDoc) != want {
		t.Errorf("the document has %d operations, the table %d routes to document", len(inDoc), want)
	}
	d, err := s.app.apiDoc.document()
	if err != nil {
		t.Fatal(err)
	}
	// Every operation has its bodies, statuses and parameters described
	// (app/api_schemas*.go): a new route without them fails here.
	for _, o := range d.Operations {
		if !o.Typed {
			t.Errorf("%s %s has no description of its bodies in app/api_schemas*.go", o.Method, o.Path)
		}
	}
}

// The routes left out as pages answer pages (or redirects), never the
// APIs' JSON: a JSON route registered as a page would escape the document.
func TestOpenAPIOmitsOnlyPages(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	for _, rt := range s.app.table {
		if rt.format != formatBrowser || rt.method == http.MethodHead {
			continue
		}
		path := pathParams.ReplaceAllString(strings.ReplaceAll(rt.path, "{realm}", "acme"), "none")
		r := s.request(rt.method, path, nil)
		if ct := r.Header.Get("Content-Type"); strings.HasPrefix(ct, "application/json") {
			t.Errorf("%s %s is left out of the document as a page, but answers %d %s", rt.method, rt.path, r.Status, ct)
		}
	}
}

// The document is valid OpenAPI 3.1 (the linter of make lint reads the
// same), and its YAML is the same document.
func TestOpenAPIDocumentIsValid(t *testing.T) {
	s := newTestServer(t)
	j := s.request(http.MethodGet, pathOpenAPIJSON, nil)
	mustStatus(t, j, http.StatusOK)
	problems, err := openapitest.Check(j.Body)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("document: %s", p)
	}
	y := s.request(http.MethodGet, pathOpenAPIYAML, nil)
	mustStatus(t, y, http.StatusOK)
	if ct := y.Header.Get("Content-Type"); ct != "application/yaml" {
		t.Errorf("YAML answered as %q", ct)
	}
	fromYAML, err := openapitest.JSONOf(y.Body)
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	if err := json.Unmarshal(j.Body, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(fromYAML, &b); err != nil {
		t.Fatal(err)
	}
	aj, _ := json.Marshal(a)
	bj, _ := json.Marshal(b)
	if string(aj) != string(bj) {
		t.Errorf("the YAML document differs from the JSON one")
	}
}

// The reference page lists every operation, with no script.
func TestOpenAPIReferencePage(t *testing.T) {
	s := newTestServer(t)
	r := s.request(http.MethodGet, pathOpenAPI, nil)
	mustStatus(t, r, http.StatusOK)
	page := string(r.Body)
	if strings.Contains(page, "<script") {
		t.Error("the reference page has a script")
	}
	for _, want := range []string{`id="post_admin_realms_realm_users"`, "users:write", `href="/admin/openapi.json"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the reference page lacks %s", want)
		}
	}
}
