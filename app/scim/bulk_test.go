package scim_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/apptest"
)

func bulkBody(failOnErrors int, ops ...map[string]any) map[string]any {
	b := map[string]any{"schemas": []string{"urn:ietf:params:scim:api:messages:2.0:BulkRequest"}, "Operations": ops}
	if failOnErrors > 0 {
		b["failOnErrors"] = failOnErrors
	}
	return b
}

type bulkResult struct {
	Method, BulkID, Version, Location, Status string
	Response                                  map[string]any
}

func (p *provisioner) bulk(body any) []bulkResult {
	p.T.Helper()
	r := p.do(http.MethodPost, "/Bulk", body)
	apptest.MustStatus(p.T, r, http.StatusOK)
	var out struct {
		Schemas    []string
		Operations []bulkResult
	}
	r.Decode(p.T, &out)
	if out.Schemas[0] != "urn:ietf:params:scim:api:messages:2.0:BulkResponse" {
		p.T.Fatalf("bulk response %s", r.Body)
	}
	return out.Operations
}

func statuses(results []bulkResult) string {
	s := make([]string, len(results))
	for i, r := range results {
		s[i] = r.Status
	}
	return strings.Join(s, " ")
}

// RFC 7644 §3.7.2: a group whose member is a user the same request
// creates, named by bulkId; the group comes first, so the user is made
// before it.
func TestBulkWithBulkIDs(t *testing.T) {
	p := newProvisioner(t)
	existing := p.create(userBody("old", "title", "Old"))
	oldID := existing["id"].(string)
	results := p.bulk(bulkBody(0,
		map[string]any{"method": "POST", "path": "/Groups", "bulkId": "ytrewq", "data": map[string]any{
			"schemas": []string{"urn:ietf:params:scim:schemas:core:2.0:Group"}, "displayName": "Tour Guides",
			"members": []any{map[string]any{"type": "User", "value": "bulkId:qwerty"}}}},
		map[string]any{"method": "POST", "path": "/Users", "bulkId": "qwerty", "data": userBody("Alice")},
		map[string]any{"method": "PATCH", "path": "/Users/bulkId:qwerty", "data": patchBody(op("add", "title", "Guide"))},
		map[string]any{"method": "PUT", "path": "/Users/" + oldID, "version": existing["meta"].(map[string]any)["version"],
			"data": userBody("old", "title", "Renewed")},
		map[string]any{"method": "DELETE", "path": "/Users/" + oldID},
	))
	if got := statuses(results); got != "201 201 200 200 204" {
		t.Fatalf("statuses %s: %+v", got, results)
	}
	userID := results[1].Location[strings.LastIndex(results[1].Location, "/")+1:]
	if results[1].BulkID != "qwerty" || results[1].Version == "" || !strings.HasPrefix(results[1].Location, apptest.BaseURL+"/scim/v2/acme/Users/") {
		t.Fatalf("the user's result %+v", results[1])
	}
	if got := p.memberIDs(results[0].Location[strings.LastIndex(results[0].Location, "/")+1:]); len(got) != 1 || got[0] != userID {
		t.Fatalf("the group's members %v, want %s", got, userID)
	}
	if u := p.do(http.MethodGet, "/Users/"+userID, nil).Object(t); u["title"] != "Guide" || u["userName"] != "alice" {
		t.Fatalf("the user %v", u)
	}
	mustSCIMError(t, p.do(http.MethodGet, "/Users/"+oldID, nil), http.StatusNotFound, "")
}

func TestBulkErrors(t *testing.T) {
	p := newProvisioner(t)
	p.create(userBody("taken"))
	results := p.bulk(bulkBody(0,
		map[string]any{"method": "POST", "path": "/Users", "bulkId": "a", "data": userBody("taken")},
		map[string]any{"method": "PATCH", "path": "/Users/bulkId:a", "data": patchBody(op("add", "title", "x"))},
		map[string]any{"method": "POST", "path": "/Users", "bulkId": "b", "data": userBody("b", "title", "bulkId:nowhere")},
		map[string]any{"method": "POST", "path": "/Users", "bulkId": "c1", "data": userBody("c1", "title", "bulkId:c2")},
		map[string]any{"method": "POST", "path": "/Users", "bulkId": "c2", "data": userBody("c2", "title", "bulkId:c1")},
		map[string]any{"method": "GET", "path": "/Users"},
		map[string]any{"method": "POST", "path": "/Printers", "bulkId": "d", "data": map[string]any{}},
		map[string]any{"method": "DELETE", "path": "/Users/nope"},
		map[string]any{"method": "POST", "path": "/Users", "bulkId": "e", "data": userBody("fine")},
	))
	if got := statuses(results); got != "409 409 409 409 409 405 400 404 201" {
		t.Fatalf("statuses %s: %+v", got, results)
	}
	if results[0].Response["scimType"] != "uniqueness" || results[0].Response["status"] != "409" {
		t.Fatalf("the duplicate's response %v", results[0].Response)
	}

	// failOnErrors stops the request after that many errors.
	results = p.bulk(bulkBody(1,
		map[string]any{"method": "POST", "path": "/Users", "bulkId": "x", "data": userBody("taken")},
		map[string]any{"method": "POST", "path": "/Users", "bulkId": "y", "data": userBody("never")},
	))
	if got := statuses(results); got != "409" {
		t.Fatalf("with failOnErrors 1: %s", got)
	}
	if n := p.do(http.MethodGet, "/Users?filter=userName+eq+%22never%22", nil).Object(t)["totalResults"]; n != 0.0 {
		t.Fatalf("an operation after failOnErrors ran: %v", n)
	}
}

// RFC 7644 §3.7.4: over maxOperations or maxPayloadSize, 413.
func TestBulkLimits(t *testing.T) {
	p := newProvisioner(t)
	ops := make([]map[string]any, 101)
	for i := range ops {
		ops[i] = map[string]any{"method": "POST", "path": "/Users", "bulkId": fmt.Sprint(i), "data": userBody(fmt.Sprint("u", i))}
	}
	mustSCIMError(t, p.do(http.MethodPost, "/Bulk", bulkBody(0, ops...)), http.StatusRequestEntityTooLarge, "")
	huge := bulkBody(0, map[string]any{"method": "POST", "path": "/Users", "bulkId": "a",
		"data": userBody("a", "title", strings.Repeat("x", 10<<20))})
	mustSCIMError(t, p.do(http.MethodPost, "/Bulk", huge), http.StatusRequestEntityTooLarge, "")
	for _, tc := range []struct {
		name     string
		body     any
		scimType string
	}{
		{"no operations", bulkBody(0), "invalidSyntax"},
		{"a POST without bulkId", bulkBody(0, map[string]any{"method": "POST", "path": "/Users", "data": userBody("a")}), "invalidValue"},
		{"a bulkId twice", bulkBody(0, map[string]any{"method": "POST", "path": "/Users", "bulkId": "a", "data": userBody("a")},
			map[string]any{"method": "POST", "path": "/Users", "bulkId": "a", "data": userBody("b")}), "invalidValue"},
		{"an unknown member", bulkBody(0, map[string]any{"method": "POST", "path": "/Users", "bulkId": "a", "nope": 1}), "invalidSyntax"},
		{"the wrong schema", map[string]any{"schemas": []string{"urn:ietf:params:scim:api:messages:2.0:PatchOp"}}, "invalidValue"},
		{"failOnErrors 0", map[string]any{"schemas": []string{"urn:ietf:params:scim:api:messages:2.0:BulkRequest"}, "failOnErrors": 0,
			"Operations": []any{map[string]any{"method": "DELETE", "path": "/Users/x"}}}, "invalidValue"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mustSCIMError(t, p.do(http.MethodPost, "/Bulk", tc.body), http.StatusBadRequest, tc.scimType)
		})
	}
	if n := p.do(http.MethodGet, "/Users", nil).Object(t)["totalResults"]; n != 0.0 {
		t.Fatalf("%v users after refused bulk requests", n)
	}
}
