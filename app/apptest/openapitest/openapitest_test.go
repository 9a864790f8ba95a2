package openapitest_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/apptest/openapitest"
	"github.com/idenplane/idenplane/app/openapi"
)

type thing struct {
	ID   string `json:"id"`
	Note string `json:"note,omitempty"`
}

type apiError struct {
	Error       string `json:"error"`
	Description string `json:"error_description"`
}

// recordingT keeps what the validator reports instead of failing.
type recordingT struct {
	testing.TB
	errors []string
}

func (r *recordingT) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

// The validator fails a test whose server answers what the document does
// not describe, and passes one that answers as documented.
func TestHandlerReportsUndocumentedAnswers(t *testing.T) {
	doc, err := openapi.Build(openapi.Info{Title: "t", Version: "1", APIError: apiError{}},
		[]openapi.Route{
			{Method: http.MethodGet, Path: "/things/{id}", Access: openapi.Admin, Permission: "things:read", Errors: openapi.APIErrors},
			{Method: http.MethodPost, Path: "/things", Access: openapi.Admin, Permission: "things:write", Errors: openapi.APIErrors},
		},
		map[string]openapi.Op{
			"GET /things/{id}": {Response: thing{}},
			"POST /things":     {Request: thing{}, Status: http.StatusCreated, Response: thing{}},
		})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, method, path, body string
		status                   int
		answer                   string
		want                     string // in the report; empty: no report
	}{
		{"as documented", "GET", "/things/a", "", 200, `{"id":"a"}`, ""},
		{"a field of the wrong type", "GET", "/things/a", "", 200, `{"id":1}`, "GET /things/a answered 200"},
		{"a field the type lacks", "GET", "/things/a", "", 200, `{"id":"a","secret":"x"}`, "secret"},
		{"a required field missing", "GET", "/things/a", "", 200, `{"note":"n"}`, "id"},
		{"an undocumented status", "POST", "/things", `{"id":"a"}`, 200, `{"id":"a"}`, "POST /things answered 200"},
		{"an error in another shape", "GET", "/things/a", "", 404, `{"message":"no"}`, "answered 404"},
		{"an error in the APIs' shape", "GET", "/things/a", "", 404, `{"error":"not_found","error_description":"no"}`, ""},
		{"an invalid request refused", "POST", "/things", `{"id":1}`, 400, `{"error":"invalid_request","error_description":"id"}`, ""},
		{"an invalid request served", "POST", "/things", `{"id":1}`, 201, `{"id":"1"}`, "the document says the request is invalid"},
		{"a route the document leaves out", "GET", "/page", "", 200, `<html>`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			rt := &recordingT{TB: t}
			h := openapitest.Handler(rt, func() ([]byte, error) { return doc.JSON, nil },
				http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(c.status)
					_, _ = w.Write([]byte(c.answer))
				}))
			req := httptest.NewRequest(c.method, c.path, strings.NewReader(c.body))
			if c.body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			h.ServeHTTP(httptest.NewRecorder(), req)
			got := strings.Join(rt.errors, "\n")
			switch {
			case c.want == "" && got != "":
				t.Errorf("reported %s", got)
			case c.want != "" && !strings.Contains(got, c.want):
				t.Errorf("report %q lacks %q", got, c.want)
			}
		})
	}
}

// node holds nodes of its own type, as a group holds its subgroups: its
// component refers to itself.
type node struct {
	Name     string `json:"name"`
	Children []node `json:"children"`
}

// A component that refers to itself through a list is a tree, not an
// endless value: the validator is built, and it checks every level of an
// answer.
func TestHandlerValidatesRecursiveComponents(t *testing.T) {
	doc, err := openapi.Build(openapi.Info{Title: "t", Version: "1", APIError: apiError{}},
		[]openapi.Route{{Method: http.MethodGet, Path: "/tree", Access: openapi.Admin, Permission: "tree:read", Errors: openapi.APIErrors}},
		map[string]openapi.Op{"GET /tree": {Response: node{}}})
	if err != nil {
		t.Fatal(err)
	}
	if problems, err := openapitest.Check(doc.JSON); err != nil || len(problems) > 0 {
		t.Fatalf("the document: %v %v", err, problems)
	}
	for _, c := range []struct {
		name, answer string
		want         string // in the report; empty: no report
	}{
		{"a leaf", `{"name":"a","children":[]}`, ""},
		{"three levels", `{"name":"a","children":[{"name":"b","children":[{"name":"c","children":[]}]}]}`, ""},
		{"a deep node of the wrong shape", `{"name":"a","children":[{"name":"b","children":[{"name":"c","children":[],"extra":1}]}]}`, "extra"},
		{"a deep node lacking a field", `{"name":"a","children":[{"name":"b","children":[{"children":[]}]}]}`, "name"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rt := &recordingT{TB: t}
			h := openapitest.Handler(rt, func() ([]byte, error) { return doc.JSON, nil },
				http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "application/json")
					_, _ = w.Write([]byte(c.answer))
				}))
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/tree", nil))
			got := strings.Join(rt.errors, "\n")
			switch {
			case c.want == "" && got != "":
				t.Errorf("reported %s", got)
			case c.want != "" && !strings.Contains(got, c.want):
				t.Errorf("report %q lacks %q", got, c.want)
			}
		})
	}
}
