package app

import (
	"net/http"
	"strings"
	"testing"
)

// One write of every resource type through the API, each read back by
// filtering admin events on its resource type.
func TestAdminEventsEveryResourceType(t *testing.T) {
	s := newTestServer(t)
	mustStatus(t, s.admin(http.MethodPost, "/admin/realms", map[string]any{"name": "acme", "adminEventsEnabled": true}), http.StatusCreated)
	write := func(method, path string, body any) map[string]any {
		t.Helper()
		r := s.admin(method, "/admin/realms/acme"+path, body)
		if r.Status >= 300 {
			t.Fatalf("%s %s: %d %s", method, path, r.Status, r.Body)
		}
		if len(r.Body) > 0 && r.Body[0] == '{' {
			return r.object(t)
		}
		return nil
	}
	user := write(http.MethodPost, "/users", map[string]any{"username": "alice"})["id"].(string)
	client := write(http.MethodPost, "/clients", map[string]any{"clientId": "app"})
	write(http.MethodPost, "/roles", map[string]any{"name": "viewer"})
	write(http.MethodPost, "/clients/app/roles", map[string]any{"name": "read"})
	write(http.MethodPost, "/users/"+user+"/role-mappings/realm", map[string]any{"roleNames": []string{"viewer"}})
	write(http.MethodPost, "/users/"+user+"/role-mappings/clients/app", map[string]any{"roleNames": []string{"read"}})
	group := write(http.MethodPost, "/groups", map[string]any{"name": "staff"})["id"].(string)
	write(http.MethodPut, "/users/"+user+"/groups/"+group, nil)
	scope := write(http.MethodPost, "/client-scopes", map[string]any{"name": "tenant"})["id"].(string)
	write(http.MethodPost, "/client-scopes/"+scope+"/protocol-mappers", map[string]any{"name": "tenant",
		"mapperType": "oidc-hardcoded-claim-mapper", "config": map[string]any{"claim.name": "tenant", "claim.value": "acme"}})
	write(http.MethodPost, "/clients/app/optional-client-scopes", map[string]any{"clientScopeId": scope})
	write(http.MethodPost, "/clients/app/regenerate-secret", nil)
	policy := write(http.MethodPost, "/policies", map[string]any{"name": "readers", "effect": "permit",
		"target": map[string]any{"resourceTypes": []string{"document"}, "actions": []string{"read"}}})["id"].(string)
	write(http.MethodPost, "/policies/evaluate", map[string]any{"subject": map[string]any{"type": "service", "id": "s"},
		"action": map[string]any{"name": "read"}, "resource": map[string]any{"type": "document", "id": "d"}})

	for _, c := range []struct {
		resourceType string
		want         []string // "OPERATION path", newest first
	}{
		{"REALM", []string{"CREATE "}},
		{"USER", []string{"CREATE users/" + user}},
		{"CLIENT", []string{"ACTION clients/app/regenerate-secret", "CREATE clients/app"}},
		{"REALM_ROLE", []string{"CREATE roles/viewer"}},
		{"CLIENT_ROLE", []string{"CREATE clients/app/roles/read"}},
		{"REALM_ROLE_MAPPING", []string{"CREATE users/" + user + "/role-mappings/realm"}},
		{"CLIENT_ROLE_MAPPING", []string{"CREATE users/" + user + "/role-mappings/clients/app"}},
		{"GROUP", []string{"CREATE groups/" + group}},
		{"GROUP_MEMBERSHIP", []string{"UPDATE users/" + user + "/groups/" + group}},
		{"CLIENT_SCOPE", []string{"CREATE client-scopes/" + scope}},
		{"CLIENT_SCOPE_CLIENT_MAPPING", []string{"CREATE clients/app/optional-client-scopes/" + scope}},
		{"AUTHORIZATION_POLICY", []string{"CREATE policies/" + policy}},
	} {
		events := eventsTestAdminEvents(s, "acme", "?resourceType="+c.resourceType)
		var got []string
		for _, e := range events {
			got = append(got, e.OperationType+" "+e.ResourcePath)
		}
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("%s events %q, want %q", c.resourceType, got, c.want)
		}
	}
	mappers := eventsTestAdminEvents(s, "acme", "?resourceType=PROTOCOL_MAPPER")
	if len(mappers) != 1 || mappers[0].OperationType != "CREATE" ||
		!strings.HasPrefix(mappers[0].ResourcePath, "client-scopes/"+scope+"/protocol-mappers/") {
		t.Errorf("protocol mapper events %+v", mappers)
	}
	// The client secrets in the create and regenerate answers never reach the log.
	for _, e := range eventsTestAdminEvents(s, "acme", "?resourceType=CLIENT&operationType=CREATE") {
		if rep := eventsTestRep(t, e); rep["secret"] != redacted {
			t.Errorf("client create event shows secret %v", rep["secret"])
		}
	}
	if client["secret"] == nil || strings.Contains(string(s.admin(http.MethodGet, "/admin/realms/acme/events/admin/export", nil).Body), client["secret"].(string)) {
		t.Error("the client secret is in the admin events export")
	}
	// Filters combine: operation and resource type.
	if got := eventsTestAdminEvents(s, "acme", "?resourceType=CLIENT&operationType=ACTION"); len(got) != 1 {
		t.Errorf("ACTION on CLIENT: %d events, want 1", len(got))
	}
}
