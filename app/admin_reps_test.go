package app

import (
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"testing"
)

// objectKeys lists the keys of a JSON object in the order they are written.
func objectKeys(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not a JSON object: %s", raw)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// findByKey finds the object of list whose key is value.
func findByKey(t *testing.T, list []json.RawMessage, key, value string) json.RawMessage {
	t.Helper()
	for _, raw := range list {
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		if m[key] == value {
			return raw
		}
	}
	t.Fatalf("no object with %s %q in %s", key, value, list)
	return nil
}

// The admin API and the realm export show a client, a client scope and a
// protocol mapper in one representation: the same fields, in the same order,
// with the same values, and each view's own fields exactly where
// docs/realm-format.md and the API put them.
func TestRepresentationViews(t *testing.T) {
	s := newTestServer(t, fixedClock)
	s.createRealm("acme")
	base := "/admin/realms/acme"
	shared := []string{"id", "clientId", "name", "description", "clientType", "enabled", "redirectUris", "webOrigins",
		"grantTypes", "requireConsent", "backchannelLogoutUri", "backchannelLogoutSessionRequired", "idTokenOnRefresh"}
	apiClient := slices.Concat(shared, []string{"publicClient", "serviceAccountsEnabled", "createdTimestamp"})
	exportClient := slices.Concat(shared, []string{"createdTimestamp", "defaultClientScopes", "optionalClientScopes"})

	created := s.admin(http.MethodPost, base+"/clients", map[string]any{"clientId": "app",
		"grantTypes": []string{"authorization_code", "client_credentials"}})
	mustStatus(t, created, http.StatusCreated)
	public := s.admin(http.MethodPost, base+"/clients", map[string]any{"clientId": "spa", "clientType": "PUBLIC"})
	mustStatus(t, public, http.StatusCreated)
	// spa loses its scopes: the export still writes both lists, empty.
	for _, kind := range []string{"default", "optional"} {
		var linked []map[string]any
		s.admin(http.MethodGet, base+"/clients/spa/"+kind+"-client-scopes", nil).decode(t, &linked)
		for _, l := range linked {
			mustStatus(t, s.admin(http.MethodDelete, base+"/clients/spa/"+kind+"-client-scopes/"+l["id"].(string), nil), http.StatusNoContent)
		}
	}
	scope := s.admin(http.MethodPost, base+"/client-scopes", map[string]any{"name": "tenant", "protocolMappers": []any{
		map[string]any{"name": "tenant", "mapperType": "oidc-hardcoded-claim-mapper",
			"config": map[string]any{"claim.name": "tenant", "claim.value": "acme"}}}})
	mustStatus(t, scope, http.StatusCreated)
	scopeID := scope.object(t)["id"].(string)

	var export struct {
		Clients      []json.RawMessage `json:"clients"`
		ClientScopes []json.RawMessage `json:"clientScopes"`
	}
	var secretExport struct {
		Clients []json.RawMessage `json:"clients"`
	}
	s.admin(http.MethodGet, base+"/export", nil).decode(t, &export)
	s.admin(http.MethodGet, base+"/export?includeSecrets=true", nil).decode(t, &secretExport)
	exportedScope := findByKey(t, export.ClientScopes, "name", "tenant")
	var scopeMappers struct {
		ProtocolMappers []json.RawMessage `json:"protocolMappers"`
	}
	if err := json.Unmarshal(exportedScope, &scopeMappers); err != nil || len(scopeMappers.ProtocolMappers) != 1 {
		t.Fatalf("exported scope %s: %v", exportedScope, err)
	}
	var apiMappers []json.RawMessage
	s.admin(http.MethodGet, base+"/client-scopes/"+scopeID+"/protocol-mappers", nil).decode(t, &apiMappers)

	views := []struct {
		name string
		body json.RawMessage
		keys []string
	}{
		{"API client on create", created.Body, append(slices.Clone(apiClient), "secret")},
		{"API client", s.admin(http.MethodGet, base+"/clients/app", nil).Body, apiClient},
		{"API public client on create", public.Body, apiClient},
		{"API public client", s.admin(http.MethodGet, base+"/clients/spa", nil).Body, apiClient},
		{"API client after regenerate-secret", s.admin(http.MethodPost, base+"/clients/app/regenerate-secret", nil).Body,
			append(slices.Clone(apiClient), "secret")},
		{"exported client", findByKey(t, export.Clients, "clientId", "app"), append(slices.Clone(exportClient), "serviceAccount")},
		{"exported public client", findByKey(t, export.Clients, "clientId", "spa"), exportClient},
		{"exported client with secrets", findByKey(t, secretExport.Clients, "clientId", "app"),
			slices.Concat(shared, []string{"createdTimestamp", "secretHash", "defaultClientScopes", "optionalClientScopes", "serviceAccount"})},
		{"API scope", s.admin(http.MethodGet, base+"/client-scopes/"+scopeID, nil).Body,
			[]string{"id", "name", "description", "protocol", "protocolMappers"}},
		{"exported scope", exportedScope, []string{"id", "name", "description", "protocol", "createdTimestamp", "protocolMappers"}},
		{"API mapper", apiMappers[0], []string{"id", "name", "mapperType", "protocol", "config"}},
		{"exported mapper", scopeMappers.ProtocolMappers[0], []string{"id", "name", "mapperType", "protocol", "config", "createdTimestamp"}},
	}
	for _, v := range views {
		if got := objectKeys(t, v.body); !slices.Equal(got, v.keys) {
			t.Errorf("%s has the fields\n%v, want\n%v", v.name, got, v.keys)
		}
	}

	// Where the views share a field, they show the same value.
	same := func(name string, api, exported json.RawMessage) {
		t.Helper()
		var a, e map[string]any
		if err := json.Unmarshal(api, &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(exported, &e); err != nil {
			t.Fatal(err)
		}
		for k, v := range a {
			if ev, ok := e[k]; ok && k != "protocolMappers" && !reflect.DeepEqual(v, ev) {
				t.Errorf("%s: the API shows %s %v, the export %v", name, k, v, ev)
			}
		}
	}
	same("client", views[1].body, views[5].body)
	same("public client", views[3].body, views[6].body)
	same("scope", views[8].body, views[9].body)
	same("mapper", views[10].body, views[11].body)
	var spa map[string]any
	if err := json.Unmarshal(views[6].body, &spa); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(spa["defaultClientScopes"], []any{}) || !reflect.DeepEqual(spa["optionalClientScopes"], []any{}) {
		t.Errorf("exported spa has scopes %v and %v, want [] and []", spa["defaultClientScopes"], spa["optionalClientScopes"])
	}

	// The API's derived fields are no part of the format: an import refuses them.
	for _, field := range []string{"publicClient", "serviceAccountsEnabled"} {
		doc := map[string]any{"formatVersion": 1, "name": "copy", "clients": []any{map[string]any{
			"clientId": "spa", "clientType": "PUBLIC", field: true}}}
		r := s.admin(http.MethodPost, "/admin/realms/import", doc)
		mustStatus(t, r, http.StatusBadRequest)
		if body := r.object(t); body["error"] != "unknown_field" {
			t.Errorf("import with %s answered %v, want unknown_field", field, body)
		}
	}
}
