package app

import (
	"encoding/base64"
	"net/http"
	"testing"

	"github.com/idenplane/idenplane/app/httpx"
)

// TestRealmChildNotFound asks each module for a resource its path names
// and that does not exist: each answers 404 not_found, in JSON, with a
// message naming what and which ID was not found.
func TestRealmChildNotFound(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	mustStatus(t, s.admin(http.MethodPatch, "/admin/realms/acme", map[string]any{"impersonationEnabled": true}), http.StatusOK)
	secret := s.clientsTestCreate("acme", map[string]any{"clientId": "web", "redirectUris": []string{"https://web.test/cb"},
		"grantTypes": []string{"password"}})["secret"].(string)
	s.createUser("acme", map[string]any{"username": "alice", "email": "alice@example.test", "password": "correct horse 1"})
	grant := s.request(http.MethodPost, "/realms/acme/protocol/openid-connect/token",
		"grant_type=password&username=alice&password=correct+horse+1", "Content-Type: application/x-www-form-urlencoded",
		"Authorization: Basic "+base64.StdEncoding.EncodeToString([]byte("web:"+secret)))
	mustStatus(t, grant, http.StatusOK)
	alice := "Authorization: Bearer " + grant.object(t)["access_token"].(string)
	r := s.admin(http.MethodPost, "/admin/realms/acme/nhi", map[string]any{"kind": "workload", "name": "worker"})
	mustStatus(t, r, http.StatusCreated)
	worker := r.object(t)["id"].(string)

	const realm = "/admin/realms/acme"
	for _, tc := range []struct {
		name, method, path string
		body               any
		headers            []string // the admin key when nil
		message            string
	}{
		{"admin account", http.MethodGet, "/admin/accounts/nope-1", nil, nil, "admin account nope-1 not found"},
		{"admin API key", http.MethodGet, "/admin/api-keys/nope-2", nil, nil, "admin API key nope-2 not found"},
		{"admin API key rotated", http.MethodPost, "/admin/api-keys/nope-3/rotate", map[string]any{}, nil, "admin API key nope-3 not found"},
		{"custom attribute", http.MethodGet, realm + "/custom-attributes/nope-4", nil, nil, "custom attribute nope-4 not found"},
		{"user's attributes", http.MethodGet, realm + "/users/nope-5/attributes", nil, nil, "user nope-5 not found"},
		{"authentication flow", http.MethodGet, realm + "/auth-flows/nope-6", nil, nil, "authentication flow nope-6 not found"},
		{"identity provider", http.MethodGet, realm + "/identity-providers/nope-7", nil, nil, "identity provider nope-7 not found"},
		{"user's links", http.MethodGet, realm + "/users/nope-8/federated-identity", nil, nil, "user nope-8 not found"},
		{"stored upstream token", http.MethodGet, "/realms/acme/broker/nope-9/token", nil, []string{alice}, "identity provider nope-9 not found"},
		{"user impersonated", http.MethodPost, realm + "/users/nope-10/impersonate", nil, nil, "user nope-10 not found"},
		{"user federation provider", http.MethodGet, realm + "/user-federation/nope-11", nil, nil, "user federation provider nope-11 not found"},
		{"credential policy", http.MethodGet, realm + "/nhi/credential-policies/nope-12", nil, nil, "credential policy nope-12 not found"},
		{"organization", http.MethodGet, realm + "/organizations/nope-13", nil, nil, "organization nope-13 not found"},
		{"SCIM token", http.MethodGet, realm + "/scim/tokens/nope-14", nil, nil, "SCIM token nope-14 not found"},
		{"non-human identity", http.MethodGet, realm + "/nhi/nope-15", nil, nil, "identity nope-15 not found"},
		{"service account", http.MethodGet, realm + "/service-accounts/nope-16", nil, nil, "service account nope-16 not found"},
		{"workload as a service account", http.MethodGet, realm + "/service-accounts/" + worker, nil, nil,
			"service account " + worker + " not found"},
		{"identity's credential", http.MethodPost, realm + "/nhi/" + worker + "/credentials/nope-17/revoke", nil, nil,
			"credential nope-17 not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r *testResponse
			if tc.headers == nil {
				r = s.admin(tc.method, tc.path, tc.body)
			} else {
				r = s.request(tc.method, tc.path, tc.body, tc.headers...)
			}
			mustError(t, r, http.StatusNotFound, "not_found", "")
			var body httpx.ErrorBody
			r.decode(t, &body)
			if body.Description != tc.message {
				t.Errorf("message %q, want %q", body.Description, tc.message)
			}
		})
	}
}
