package scim_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/idenplane/idenplane/app/apptest"
)

func TestServiceProviderConfig(t *testing.T) {
	s := newServer(t)
	cred := s.createToken("acme", "entra")["token"].(string)
	for _, base := range []string{"/scim/v2/acme", "/scim/v2"} {
		r := s.scim(http.MethodGet, base+"/ServiceProviderConfig", cred, nil)
		apptest.MustStatus(t, r, http.StatusOK)
		if ct := r.Header.Get("Content-Type"); ct != "application/scim+json" {
			t.Fatalf("Content-Type %q", ct)
		}
		spc := r.Object(t)
		if spc["schemas"].([]any)[0] != "urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig" {
			t.Fatalf("schemas %v", spc["schemas"])
		}
		schemes := spc["authenticationSchemes"].([]any)
		if len(schemes) != 1 || schemes[0].(map[string]any)["type"] != "oauthbearertoken" {
			t.Fatalf("authenticationSchemes %v", schemes)
		}
		if loc := spc["meta"].(map[string]any)["location"]; loc != apptest.BaseURL+base+"/ServiceProviderConfig" {
			t.Fatalf("location %v", loc)
		}
		for feature, want := range map[string]bool{"patch": true, "bulk": true, "filter": true, "changePassword": true,
			"sort": true, "etag": true} {
			if got := spc[feature].(map[string]any)["supported"]; got != want {
				t.Fatalf("%s: %v, want supported %v", feature, spc[feature], want)
			}
		}
		if max := spc["filter"].(map[string]any)["maxResults"]; max != 1000.0 {
			t.Fatalf("filter.maxResults %v", max)
		}
		if bulk := spc["bulk"].(map[string]any); bulk["maxOperations"] != 100.0 || bulk["maxPayloadSize"] != 1048576.0 {
			t.Fatalf("bulk %v", bulk)
		}
	}
}

func TestSchemas(t *testing.T) {
	s := newServer(t)
	cred := s.createToken("acme", "entra")["token"].(string)
	r := s.scim(http.MethodGet, "/scim/v2/acme/Schemas", cred, nil)
	apptest.MustStatus(t, r, http.StatusOK)
	var list struct {
		Schemas      []string
		TotalResults int
		Resources    []map[string]any
	}
	r.Decode(t, &list)
	if list.Schemas[0] != "urn:ietf:params:scim:api:messages:2.0:ListResponse" || list.TotalResults != 3 || len(list.Resources) != 3 {
		t.Fatalf("schemas %s", r.Body)
	}
	want := map[string]string{
		"urn:ietf:params:scim:schemas:core:2.0:User":                 "userName",
		"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User": "employeeNumber",
		"urn:ietf:params:scim:schemas:core:2.0:Group":                "members",
	}
	for _, res := range list.Resources {
		id := res["id"].(string)
		attr, ok := want[id]
		if !ok {
			t.Fatalf("schema %s", id)
		}
		if !hasAttribute(res, attr) {
			t.Fatalf("schema %s lacks %s", id, attr)
		}
		one := s.scim(http.MethodGet, "/scim/v2/acme/Schemas/"+url.PathEscape(id), cred, nil)
		apptest.MustStatus(t, one, http.StatusOK)
		got := one.Object(t)
		if got["id"] != id || got["meta"].(map[string]any)["location"] != apptest.BaseURL+"/scim/v2/acme/Schemas/"+id {
			t.Fatalf("schema by id: %s", one.Body)
		}
	}
	// password is write-only and never returned; groups are read-only.
	user := s.scim(http.MethodGet, "/scim/v2/Schemas/urn:ietf:params:scim:schemas:core:2.0:User", cred, nil).Object(t)
	for name, want := range map[string][2]string{"password": {"writeOnly", "never"}, "groups": {"readOnly", "default"},
		"userName": {"readWrite", "default"}} {
		a := attributeOf(user, name)
		if a == nil || a["mutability"] != want[0] || a["returned"] != want[1] {
			t.Fatalf("%s: %v", name, a)
		}
	}
	mustSCIMError(t, s.scim(http.MethodGet, "/scim/v2/acme/Schemas/urn:nope", cred, nil), http.StatusNotFound, "")
	mustSCIMError(t, s.scim(http.MethodGet, "/scim/v2/acme/Schemas?filter=id+eq+%22x%22", cred, nil), http.StatusForbidden, "")
}

func TestResourceTypes(t *testing.T) {
	s := newServer(t)
	cred := s.createToken("acme", "entra")["token"].(string)
	r := s.scim(http.MethodGet, "/scim/v2/acme/ResourceTypes", cred, nil)
	apptest.MustStatus(t, r, http.StatusOK)
	var list struct {
		TotalResults int
		Resources    []map[string]any
	}
	r.Decode(t, &list)
	if list.TotalResults != 2 {
		t.Fatalf("resource types %s", r.Body)
	}
	for _, tc := range []struct{ id, endpoint, schema, extension string }{
		{"User", "/Users", "urn:ietf:params:scim:schemas:core:2.0:User", "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"},
		{"Group", "/Groups", "urn:ietf:params:scim:schemas:core:2.0:Group", ""},
	} {
		got := s.scim(http.MethodGet, "/scim/v2/acme/ResourceTypes/"+tc.id, cred, nil).Object(t)
		exts := got["schemaExtensions"].([]any)
		if got["endpoint"] != tc.endpoint || got["schema"] != tc.schema || (tc.extension == "") != (len(exts) == 0) {
			t.Fatalf("resource type %s: %v", tc.id, got)
		}
		if tc.extension != "" && exts[0].(map[string]any)["schema"] != tc.extension {
			t.Fatalf("resource type %s: extensions %v", tc.id, exts)
		}
	}
	mustSCIMError(t, s.scim(http.MethodGet, "/scim/v2/acme/ResourceTypes/Printer", cred, nil), http.StatusNotFound, "")
	mustSCIMError(t, s.scim(http.MethodGet, "/scim/v2/ResourceTypes?filter=id+pr", cred, nil), http.StatusForbidden, "")
}

// attributeOf is the schema's top-level attribute named name.
func attributeOf(schema map[string]any, name string) map[string]any {
	for _, a := range schema["attributes"].([]any) {
		if a := a.(map[string]any); a["name"] == name {
			return a
		}
	}
	return nil
}

func hasAttribute(schema map[string]any, name string) bool { return attributeOf(schema, name) != nil }
