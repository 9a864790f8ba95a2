package openapi

import (
	"encoding/json"
	"net/http"
	"testing"
)

// A route that also serves pages documents the page a browser gets where
// a script gets another success status (204 after a form's post); a route
// of the API alone does not.
func TestPagesRouteDocumentsItsPage(t *testing.T) {
	routes := []Route{
		{Method: http.MethodPost, Path: "/realms/{realm}/account/thing", Access: User, Errors: APIErrors, Pages: true},
		{Method: http.MethodPost, Path: "/realms/{realm}/api/thing", Access: User, Errors: APIErrors},
	}
	ops := map[string]Op{
		"POST /realms/{realm}/account/thing": {Status: http.StatusNoContent},
		"POST /realms/{realm}/api/thing":     {Status: http.StatusNoContent},
	}
	d, err := Build(Info{APIError: struct{}{}}, routes, ops)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]struct {
			Responses map[string]struct {
				Content map[string]any `json:"content"`
			} `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(d.JSON, &doc); err != nil {
		t.Fatal(err)
	}
	page := doc.Paths["/realms/{realm}/account/thing"]["post"].Responses
	if _, ok := page["204"]; !ok {
		t.Errorf("pages route: no 204: %v", page)
	}
	if _, ok := page["200"].Content["text/html"]; !ok {
		t.Errorf("pages route: no 200 page: %v", page)
	}
	if api := doc.Paths["/realms/{realm}/api/thing"]["post"].Responses; len(api["200"].Content) != 0 {
		t.Errorf("API route documents a page: %v", api["200"])
	}
}
