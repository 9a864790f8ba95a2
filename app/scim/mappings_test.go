package scim_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/events"
)

const (
	enterpriseURN = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
	acmeURN       = "urn:ietf:params:scim:schemas:extension:acme:2.0:User"
	mappingsPath  = "/admin/realms/acme/scim/attribute-mappings"
)

// customAttribute adds an attribute to the realm's custom attribute schema.
func (s *server) customAttribute(body map[string]any) {
	s.T.Helper()
	apptest.MustStatus(s.T, s.Admin(http.MethodPost, "/admin/realms/acme/custom-attributes", body), http.StatusCreated)
}

// mapping creates an attribute mapping and returns it.
func (s *server) mapping(path, target string) map[string]any {
	s.T.Helper()
	s.clock.Advance(time.Millisecond) // the list is oldest first
	r := s.Admin(http.MethodPost, mappingsPath, map[string]any{"scimPath": path, "target": target})
	apptest.MustStatus(s.T, r, http.StatusCreated)
	return r.Object(s.T)
}

func TestMappingsAdmin(t *testing.T) {
	s := newServer(t)
	s.customAttribute(map[string]any{"name": "costCenter", "type": "string"})
	s.customAttribute(map[string]any{"name": "city", "type": "string"})
	m := s.mapping("URN:ietf:params:scim:schemas:extension:enterprise:2.0:User:COSTCENTER", "attributes.costCenter")
	if m["scimPath"] != enterpriseURN+":costCenter" || m["target"] != "attributes.costCenter" || m["id"] == "" || m["createdAt"] == nil {
		t.Fatalf("created %v", m)
	}
	s.mapping(`Addresses[Type eq "Work"].LOCALITY`, "attributes.city")

	for _, c := range []struct {
		name, path, target string
		status             int
		field              string
	}{
		{"no path", "", "firstName", http.StatusBadRequest, "scimPath"},
		{"a path that does not parse", `emails[type eq`, "firstName", http.StatusBadRequest, "scimPath"},
		{"an unknown attribute", "shoeSize", "firstName", http.StatusBadRequest, "scimPath"},
		{"an unknown sub-attribute", "name.nickname", "firstName", http.StatusBadRequest, "scimPath"},
		{"a complex attribute whole", "name", "firstName", http.StatusBadRequest, "scimPath"},
		{"a reserved attribute", "userName", "firstName", http.StatusBadRequest, "scimPath"},
		{"the row's given name", "name.givenName", "lastName", http.StatusBadRequest, "scimPath"},
		{"a read-only attribute", "groups", "firstName", http.StatusBadRequest, "scimPath"},
		{"the manager", enterpriseURN + ":manager.value", "firstName", http.StatusBadRequest, "scimPath"},
		{"a multi-valued attribute without a type", "addresses.locality", "firstName", http.StatusBadRequest, "scimPath"},
		{"a selection by more than the type", `addresses[type eq "work" and primary eq true].locality`, "firstName", http.StatusBadRequest, "scimPath"},
		{"emails by type", `emails[type eq "work"].value`, "firstName", http.StatusBadRequest, "scimPath"},
		{"a nested extension attribute", acmeURN + ":badge.number", "firstName", http.StatusBadRequest, "scimPath"},
		{"the group schema", "urn:ietf:params:scim:schemas:core:2.0:Group:badge", "firstName", http.StatusBadRequest, "scimPath"},
		{"no target", "title", "", http.StatusBadRequest, "target"},
		{"an unknown user field", "title", "password", http.StatusBadRequest, "target"},
		{"an attribute not in the schema", "title", "attributes.nope", http.StatusBadRequest, "target"},
		{"a path mapped already, in another spelling", "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:costcenter", "firstName", http.StatusConflict, "scimPath"},
		{"the same selection, another case", `addresses[type eq "WORK"].locality`, "firstName", http.StatusConflict, "scimPath"},
		{"a target mapped already", "title", "attributes.city", http.StatusConflict, "target"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := s.Admin(http.MethodPost, mappingsPath, map[string]any{"scimPath": c.path, "target": c.target})
			code := "invalid_field"
			if c.status == http.StatusConflict {
				code = "conflict"
			}
			apptest.MustError(t, r, c.status, code, c.field)
		})
	}
	apptest.MustError(t, s.Admin(http.MethodPost, mappingsPath, map[string]any{"scimPath": "title", "target": "firstName", "x": 1}),
		http.StatusBadRequest, "unknown_field", "x")

	var list []map[string]any
	s.Admin(http.MethodGet, mappingsPath, nil).Decode(t, &list)
	if len(list) != 2 || list[0]["id"] != m["id"] || list[1]["scimPath"] != `addresses[type eq "work"].locality` {
		t.Fatalf("list %v", list)
	}
	apptest.MustStatus(t, s.Admin(http.MethodDelete, mappingsPath+"/"+m["id"].(string), nil), http.StatusNoContent)
	apptest.MustError(t, s.Admin(http.MethodDelete, mappingsPath+"/"+m["id"].(string), nil), http.StatusNotFound, "not_found", "")
	s.CreateRealm("beta")
	apptest.MustError(t, s.Admin(http.MethodDelete, "/admin/realms/beta/scim/attribute-mappings/"+list[1]["id"].(string), nil),
		http.StatusNotFound, "not_found", "")
	s.Admin(http.MethodGet, mappingsPath, nil).Decode(t, &list)
	if len(list) != 1 {
		t.Fatalf("after the delete %v", list)
	}
}

// mappedProvisioner is a realm whose custom attributes SCIM writes
// through mappings of a core attribute, the enterprise extension, an
// address's sub-attribute and an extension of the realm's own, and whose
// first name comes from nickName.
func mappedProvisioner(t *testing.T) *provisioner {
	p := newProvisioner(t)
	p.customAttribute(map[string]any{"name": "costCenter", "type": "string", "validation": map[string]any{"pattern": "[0-9]{4}"}})
	p.customAttribute(map[string]any{"name": "jobTitle", "type": "string"})
	p.customAttribute(map[string]any{"name": "city", "type": "string"})
	p.customAttribute(map[string]any{"name": "level", "type": "number", "validation": map[string]any{"min": 1, "max": 10}})
	p.customAttribute(map[string]any{"name": "badge", "type": "string"})
	p.mapping(enterpriseURN+":costCenter", "attributes.costCenter")
	p.mapping("title", "attributes.jobTitle")
	p.mapping(`addresses[type eq "work"].locality`, "attributes.city")
	p.mapping(acmeURN+":level", "attributes.level")
	p.mapping(acmeURN+":badge", "attributes.badge")
	p.mapping("nickName", "firstName")
	return p
}

func mappedUser(userName string, level any) map[string]any {
	return map[string]any{
		"schemas":     []string{"urn:ietf:params:scim:schemas:core:2.0:User", enterpriseURN, acmeURN},
		"userName":    userName,
		"title":       "Tour Guide",
		"nickName":    "Babs",
		"name":        map[string]any{"givenName": "Barbara", "familyName": "Jensen"},
		"addresses":   []any{map[string]any{"type": "work", "locality": "Paris", "country": "FR"}},
		enterpriseURN: map[string]any{"costCenter": "4130", "department": "Tours"},
		acmeURN:       map[string]any{"level": level, "badge": "B-7"},
	}
}

func TestMappingsAct(t *testing.T) {
	p := mappedProvisioner(t)
	u := p.create(mappedUser("bjensen", 3))
	id := u["id"].(string)

	attrs := p.Admin(http.MethodGet, "/admin/realms/acme/users/"+id+"/attributes", nil).Object(t)
	if !equalJSON(attrs, map[string]any{"costCenter": []string{"4130"}, "jobTitle": []string{"Tour Guide"},
		"city": []string{"Paris"}, "level": []string{"3"}, "badge": []string{"B-7"}}) {
		t.Fatalf("the user's custom attributes %v", attrs)
	}
	admin := p.Admin(http.MethodGet, "/admin/realms/acme/users/"+id, nil).Object(t)
	if admin["firstName"] != "Babs" || admin["lastName"] != "Jensen" {
		t.Fatalf("the realm's user %v", admin)
	}
	check := func(res map[string]any, title, city string, level float64) {
		t.Helper()
		ext, _ := res[acmeURN].(map[string]any)
		ent, _ := res[enterpriseURN].(map[string]any)
		addr := asList(res["addresses"])
		name, _ := res["name"].(map[string]any)
		if res["title"] != title || ext["level"] != level || ext["badge"] != "B-7" || ent["costCenter"] != "4130" ||
			ent["department"] != "Tours" || len(addr) != 1 || addr[0].(map[string]any)["locality"] != city ||
			addr[0].(map[string]any)["country"] != "FR" || res["nickName"] != "Babs" || name["givenName"] != "Barbara" {
			b, _ := json.Marshal(res)
			t.Fatalf("the user as SCIM shows it: %s", b)
		}
		if !equalJSON(res["schemas"], []string{"urn:ietf:params:scim:schemas:core:2.0:User", enterpriseURN, acmeURN}) {
			t.Fatalf("schemas %v", res["schemas"])
		}
	}
	check(u, "Tour Guide", "Paris", 3)
	got := p.do(http.MethodGet, "/Users/"+id, nil)
	apptest.MustStatus(t, got, http.StatusOK)
	check(got.Object(t), "Tour Guide", "Paris", 3)

	// The values the realm's schema refuses: every one named, nothing written.
	bad := mappedUser("bjensen2", 42)
	bad[enterpriseURN].(map[string]any)["costCenter"] = "41a"
	r := p.do(http.MethodPost, "/Users", bad)
	mustSCIMError(t, r, http.StatusBadRequest, "invalidValue")
	detail := r.Object(t)["detail"].(string)
	if !strings.Contains(detail, enterpriseURN+":costCenter") || !strings.Contains(detail, acmeURN+":level") {
		t.Fatalf("detail %q names not both values", detail)
	}
	mustSCIMError(t, p.do(http.MethodPost, "/Users", mappedUser("bjensen2", "high")), http.StatusBadRequest, "invalidValue")
	mustSCIMError(t, p.do(http.MethodPost, "/Users", mappedUser("bjensen2", true)), http.StatusBadRequest, "invalidValue")
	if n := listTotal(t, p, `userName eq "bjensen2"`); n != 0 {
		t.Fatalf("a refused user was written: %d", n)
	}

	// PATCH at the mapped paths, the address's own type included.
	r = p.do(http.MethodPatch, "/Users/"+id, patchBody(op("replace", acmeURN+":level", 5),
		op("replace", `addresses[type eq "work"].locality`, "Lyon"), op("replace", "title", "Chief Guide")))
	apptest.MustStatus(t, r, http.StatusOK)
	check(r.Object(t), "Chief Guide", "Lyon", 5)
	mustSCIMError(t, p.do(http.MethodPatch, "/Users/"+id, patchBody(op("replace", acmeURN+":level", 0))),
		http.StatusBadRequest, "invalidValue")
	attrs = p.Admin(http.MethodGet, "/admin/realms/acme/users/"+id+"/attributes", nil).Object(t)
	if !equalJSON(attrs["level"], []string{"5"}) || !equalJSON(attrs["city"], []string{"Lyon"}) {
		t.Fatalf("after PATCH %v", attrs)
	}

	// What the admin API writes to the target shows at the SCIM path.
	attrs["city"] = "Nice"
	apptest.MustStatus(t, p.Admin(http.MethodPut, "/admin/realms/acme/users/"+id+"/attributes", attrs), http.StatusOK)
	check(p.do(http.MethodGet, "/Users/"+id, nil).Object(t), "Chief Guide", "Nice", 5)

	// PUT without the mapped attributes clears them.
	r = p.do(http.MethodPut, "/Users/"+id, userBody("bjensen"))
	apptest.MustStatus(t, r, http.StatusOK)
	if res := r.Object(t); res["title"] != nil || res[acmeURN] != nil || res["addresses"] != nil {
		t.Fatalf("after PUT %s", r.Body)
	}
	if attrs := p.Admin(http.MethodGet, "/admin/realms/acme/users/"+id+"/attributes", nil).Object(t); len(attrs) != 0 {
		t.Fatalf("after PUT %v", attrs)
	}
}

func listTotal(t *testing.T, p *provisioner, filter string) int {
	t.Helper()
	r := p.do(http.MethodPost, "/Users/.search", map[string]any{"schemas": []string{"urn:ietf:params:scim:api:messages:2.0:SearchRequest"},
		"filter": filter})
	apptest.MustStatus(t, r, http.StatusOK)
	return int(r.Object(t)["totalResults"].(float64))
}

func TestMappedFiltersAndDiscovery(t *testing.T) {
	p := mappedProvisioner(t)
	p.create(mappedUser("bjensen", 3))
	b := mappedUser("jsmith", 7)
	b["title"], b["nickName"] = "Driver", "Jo"
	b[acmeURN].(map[string]any)["badge"] = "C-1"
	p.create(b)
	for _, c := range []struct {
		filter string
		want   int
	}{
		{`title eq "tour guide"`, 1},
		{`nickName eq "JO"`, 1},
		{`nickName sw "b"`, 1},
		{acmeURN + `:badge eq "c-1"`, 1},
		{acmeURN + `:badge pr`, 2},
		{enterpriseURN + `:costCenter eq "4130"`, 2},
	} {
		if n := listTotal(t, p, c.filter); n != c.want {
			t.Errorf("%s: %d users, want %d", c.filter, n, c.want)
		}
	}
	r := p.do(http.MethodGet, "/Users?filter="+strings.ReplaceAll(acmeURN+`:level gt 2`, " ", "%20"), nil)
	mustSCIMError(t, r, http.StatusBadRequest, "invalidFilter")

	var schema struct {
		ID         string
		Attributes []struct{ Name, Type string }
	}
	r = p.do(http.MethodGet, "/Schemas/"+acmeURN, nil)
	apptest.MustStatus(t, r, http.StatusOK)
	r.Decode(t, &schema)
	if schema.ID != acmeURN || len(schema.Attributes) != 2 || schema.Attributes[0].Name != "level" ||
		schema.Attributes[0].Type != "decimal" || schema.Attributes[1].Type != "string" {
		t.Fatalf("schema %s", r.Body)
	}
	rt := p.do(http.MethodGet, "/ResourceTypes/User", nil).Object(t)
	if !strings.Contains(jsonOf(rt["schemaExtensions"]), acmeURN) {
		t.Fatalf("resource type %v", rt)
	}

	// An attribute gone from the realm's schema: its mapping rests, the
	// value is shown nowhere, and the extension goes with its last one.
	var all []map[string]any
	p.Admin(http.MethodGet, "/admin/realms/acme/custom-attributes", nil).Decode(t, &all)
	for _, a := range all {
		if a["name"] == "level" || a["name"] == "badge" || a["name"] == "jobTitle" {
			apptest.MustStatus(t, p.Admin(http.MethodDelete, "/admin/realms/acme/custom-attributes/"+a["id"].(string), nil), http.StatusNoContent)
		}
	}
	res := p.do(http.MethodGet, "/Users?filter=userName%20eq%20%22bjensen%22", nil).Object(t)["Resources"].([]any)[0].(map[string]any)
	if res[acmeURN] != nil || res["title"] != nil || strings.Contains(jsonOf(res["schemas"]), acmeURN) {
		t.Fatalf("after the attributes' removal %v", res)
	}
	mustSCIMError(t, p.do(http.MethodGet, "/Schemas/"+acmeURN, nil), http.StatusNotFound, "")
	mustSCIMError(t, p.do(http.MethodPost, "/Users", mappedUser("x", 1)), http.StatusBadRequest, "invalidValue")
}

func jsonOf(v any) string { b, _ := json.Marshal(v); return string(b) }

func TestMappingsInRealmExport(t *testing.T) {
	s := newServer(t)
	s.customAttribute(map[string]any{"name": "city", "type": "string"})
	m := s.mapping(`addresses[type eq "work"].locality`, "attributes.city")
	s.mapping("nickName", "firstName")
	r := s.Admin(http.MethodGet, "/admin/realms/acme/export", nil)
	apptest.MustStatus(t, r, http.StatusOK)
	exported := r.Object(t)
	list := asList(exported["scimAttributeMappings"])
	if len(list) != 2 || !equalJSON(list[0], m) {
		t.Fatalf("exported %v, want the admin API's %v first", list, m)
	}

	exported["name"] = "acme-copy"
	apptest.MustStatus(t, s.Admin(http.MethodPost, "/admin/realms/import?asCopy=true", exported), http.StatusCreated)
	var copied []map[string]any
	s.Admin(http.MethodGet, "/admin/realms/acme-copy/scim/attribute-mappings", nil).Decode(t, &copied)
	if len(copied) != 2 || copied[0]["id"] == m["id"] || copied[0]["scimPath"] != m["scimPath"] || copied[1]["target"] != "firstName" {
		t.Fatalf("imported %v", copied)
	}

	for _, c := range []struct {
		name     string
		mappings []any
		status   int
		field    string
	}{
		{"a bad path", []any{map[string]any{"scimPath": "shoeSize", "target": "firstName"}}, http.StatusBadRequest,
			"scimAttributeMappings[0].scimPath"},
		{"a bad target", []any{map[string]any{"scimPath": "title", "target": "nope"}}, http.StatusBadRequest,
			"scimAttributeMappings[0].target"},
		{"a path twice", []any{map[string]any{"scimPath": "title", "target": "firstName"},
			map[string]any{"scimPath": "TITLE", "target": "lastName"}}, http.StatusConflict, "scimAttributeMappings[1].scimPath"},
	} {
		t.Run(c.name, func(t *testing.T) {
			exported["name"] = "other"
			exported["scimAttributeMappings"] = c.mappings
			code := "invalid_field"
			if c.status == http.StatusConflict {
				code = "conflict"
			}
			apptest.MustError(t, s.Admin(http.MethodPost, "/admin/realms/import?asCopy=true", exported), c.status, code, c.field)
		})
	}
}

// The realm's schema rules every value SCIM writes to a custom attribute:
// type, options, dates, lengths, required; every value at fault named at once.
func TestMappedCustomAttributeRules(t *testing.T) {
	p := newProvisioner(t)
	p.customAttribute(map[string]any{"name": "tier", "type": "enum", "options": []string{"gold", "silver"}})
	p.customAttribute(map[string]any{"name": "hired", "type": "date"})
	p.customAttribute(map[string]any{"name": "skills", "type": "string", "multivalued": true, "validation": map[string]any{"maxLength": 5}})
	p.customAttribute(map[string]any{"name": "remote", "type": "boolean"})
	p.customAttribute(map[string]any{"name": "badge", "type": "string", "required": true})
	for _, name := range []string{"tier", "hired", "skills", "remote", "badge"} {
		p.mapping(acmeURN+":"+name, "attributes."+name)
	}
	body := func(ext map[string]any) map[string]any {
		return map[string]any{"schemas": []string{"urn:ietf:params:scim:schemas:core:2.0:User", acmeURN}, "userName": "bjensen", acmeURN: ext}
	}
	r := p.do(http.MethodPost, "/Users", body(map[string]any{"tier": "bronze", "hired": "yesterday", "skills": []any{"go", "haskell"},
		"remote": "True"}))
	mustSCIMError(t, r, http.StatusBadRequest, "invalidValue")
	detail := r.Object(t)["detail"].(string)
	for _, name := range []string{"tier", "hired", "skills", "badge"} {
		if !strings.Contains(detail, acmeURN+":"+name+":") {
			t.Errorf("detail %q does not name %s", detail, name)
		}
	}
	if strings.Contains(detail, "remote") {
		t.Errorf("detail %q names a right value", detail)
	}
	u := p.create(body(map[string]any{"tier": "gold", "hired": "2026-01-31", "skills": []any{"go", "sql"}, "remote": "True", "badge": "B-7"}))
	if !equalJSON(u[acmeURN], map[string]any{"tier": "gold", "hired": "2026-01-31", "skills": []any{"go", "sql"}, "remote": true, "badge": "B-7"}) {
		t.Fatalf("shown %v", u[acmeURN])
	}
	var schema struct{ Attributes []map[string]any }
	p.do(http.MethodGet, "/Schemas/"+acmeURN, nil).Decode(t, &schema)
	if len(schema.Attributes) != 5 || !equalJSON(schema.Attributes[0]["canonicalValues"], []string{"gold", "silver"}) ||
		schema.Attributes[2]["multiValued"] != true || schema.Attributes[3]["type"] != "boolean" {
		t.Fatalf("schema %v", schema.Attributes)
	}
}

// The mappings' admin routes write admin events of their own type.
func TestMappingsAdminEvents(t *testing.T) {
	s := newServer(t)
	apptest.MustStatus(t, s.Admin(http.MethodPut, "/admin/realms/acme/events/config", map[string]any{"adminEventsEnabled": true}), http.StatusOK)
	m := s.mapping("title", "firstName")
	apptest.MustStatus(t, s.Admin(http.MethodDelete, mappingsPath+"/"+m["id"].(string), nil), http.StatusNoContent)
	var list []events.AdminEventRep
	s.Admin(http.MethodGet, "/admin/realms/acme/admin-events?resourceType=SCIM_ATTRIBUTE_MAPPING", nil).Decode(t, &list)
	var got []string
	for _, e := range list {
		got = append(got, e.OperationType+" "+e.ResourcePath)
	}
	want := "DELETE scim/attribute-mappings/" + m["id"].(string) + ", CREATE scim/attribute-mappings/" + m["id"].(string)
	if strings.Join(got, ", ") != want {
		t.Fatalf("events %q, want %q", got, want)
	}
}
