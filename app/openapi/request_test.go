package openapi

import (
	"encoding/json"
	"net/http"
	"testing"
)

// A request body is required unless the operation says it may be left out.
func TestRequestBodyOptional(t *testing.T) {
	const path = "/admin/things/{id}/rotate"
	routes := []Route{{Method: http.MethodPost, Path: path, Access: Admin, Permission: "things:write", Errors: APIErrors}}
	for _, optional := range []bool{false, true} {
		d, err := Build(Info{APIError: struct{}{}}, routes,
			map[string]Op{"POST " + path: {Request: inner{}, RequestOptional: optional, Response: inner{}}})
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Paths map[string]map[string]struct {
				RequestBody struct {
					Required bool `json:"required"`
				} `json:"requestBody"`
			} `json:"paths"`
		}
		if err := json.Unmarshal(d.JSON, &doc); err != nil {
			t.Fatal(err)
		}
		if got := doc.Paths[path]["post"].RequestBody.Required; got == optional {
			t.Errorf("RequestOptional %v: requestBody.required is %v", optional, got)
		}
	}
}
