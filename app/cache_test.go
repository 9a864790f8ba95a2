package app

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/store"
)

// The token endpoint's lookups are cached; every admin change must reach
// the very next grant. Each case makes one grant to fill the caches, makes
// its change, and checks the next grant.
func TestCacheInvalidationOnAdminWrites(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, s *oidcTestServer)
		check  func(t *testing.T, r *testResponse)
	}{
		{
			name: "client disabled",
			change: func(t *testing.T, s *oidcTestServer) {
				mustStatus(t, s.admin(http.MethodPatch, "/admin/realms/acme/clients/reports", map[string]any{"enabled": false}), http.StatusOK)
			},
			check: func(t *testing.T, r *testResponse) { mustOAuthError(t, r, http.StatusUnauthorized, "invalid_client") },
		},
		{
			name: "grant type taken away",
			change: func(t *testing.T, s *oidcTestServer) {
				mustStatus(t, s.admin(http.MethodPatch, "/admin/realms/acme/clients/reports",
					map[string]any{"grantTypes": []string{"authorization_code"}}), http.StatusOK)
			},
			check: func(t *testing.T, r *testResponse) {
				mustOAuthError(t, r, http.StatusBadRequest, "unauthorized_client")
			},
		},
		{
			name: "secret regenerated: the old one fails",
			change: func(t *testing.T, s *oidcTestServer) {
				mustStatus(t, s.admin(http.MethodPost, "/admin/realms/acme/clients/reports/regenerate-secret", nil), http.StatusOK)
			},
			check: func(t *testing.T, r *testResponse) { mustOAuthError(t, r, http.StatusUnauthorized, "invalid_client") },
		},
		{
			name: "realm disabled",
			change: func(t *testing.T, s *oidcTestServer) {
				mustStatus(t, s.admin(http.MethodPatch, "/admin/realms/acme", map[string]any{"enabled": false}), http.StatusOK)
			},
			check: func(t *testing.T, r *testResponse) { mustStatus(t, r, http.StatusNotFound) },
		},
		{
			name: "role taken from the service account",
			change: func(t *testing.T, s *oidcTestServer) {
				sa := s.admin(http.MethodGet, "/admin/realms/acme/clients/reports/service-account-user", nil).object(t)
				mustStatus(t, s.admin(http.MethodDelete, "/admin/realms/acme/users/"+sa["id"].(string)+"/role-mappings/realm",
					map[string]any{"roleNames": []string{"reporter"}}), http.StatusOK)
			},
			check: func(t *testing.T, r *testResponse) {
				if roles := tokenClaims(t, r)["realm_access"]; strings.Contains(mustJSON(t, roles), "reporter") {
					t.Fatalf("realm_access %v still has the role taken away", roles)
				}
			},
		},
		{
			name: "default scope unassigned",
			change: func(t *testing.T, s *oidcTestServer) {
				var scopes []map[string]any
				s.admin(http.MethodGet, "/admin/realms/acme/clients/reports/default-client-scopes", nil).decode(t, &scopes)
				for _, sc := range scopes {
					if sc["name"] == "profile" {
						mustStatus(t, s.admin(http.MethodDelete, "/admin/realms/acme/clients/reports/default-client-scopes/"+sc["id"].(string), nil),
							http.StatusNoContent)
						return
					}
				}
				t.Fatalf("client has no default scope profile: %v", scopes)
			},
			check: func(t *testing.T, r *testResponse) {
				if scope := tokenClaims(t, r)["scope"].(string); strings.Contains(scope, "profile") {
					t.Fatalf("scope %q still lists the unassigned profile", scope)
				}
			},
		},
		{
			// No path of the server gives an existing client an identity, but
			// the store allows it: the cached "backs none" must not outlive it.
			name: "client comes to back an identity: only its credentials count",
			change: func(t *testing.T, s *oidcTestServer) {
				ctx := context.Background()
				realm, err := s.store.GetRealm(ctx, "acme")
				if err != nil {
					t.Fatal(err)
				}
				c, err := s.store.GetClientByClientID(ctx, realm.ID, "reports")
				if err != nil {
					t.Fatal(err)
				}
				if err := s.store.CreateNHI(ctx, &store.NHI{ID: "nhi-reports", RealmID: realm.ID, ClientID: c.ID,
					Kind: "service", Name: "reports", State: "active", CreatedAt: 1, UpdatedAt: 1}); err != nil {
					t.Fatal(err)
				}
			},
			check: func(t *testing.T, r *testResponse) { mustOAuthError(t, r, http.StatusUnauthorized, "invalid_client") },
		},
		{
			name: "signing algorithm changed",
			change: func(t *testing.T, s *oidcTestServer) {
				mustStatus(t, s.admin(http.MethodPost, "/admin/realms/acme/keys/rotate",
					map[string]any{"algorithm": "ES256", "immediate": true}), http.StatusOK)
			},
			check: func(t *testing.T, r *testResponse) {
				mustStatus(t, r, http.StatusOK)
				var tok struct {
					AccessToken string `json:"access_token"`
				}
				r.decode(t, &tok)
				if header, _ := jwtParts(t, tok.AccessToken); header["alg"] != "ES256" {
					t.Fatalf("header %v: want the new ES256 key", header)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newOIDCTestServer(t)
			s.createRealm("acme")
			secret := s.machineClient(t, "acme", "reports")
			first := clientCredentialsGrant(s, "reports", secret)
			mustStatus(t, first, http.StatusOK)
			if roles := tokenClaims(t, first)["realm_access"]; !strings.Contains(mustJSON(t, roles), "reporter") {
				t.Fatalf("first token's realm_access %v lacks the role", roles)
			}
			tt.change(t, s)
			tt.check(t, clientCredentialsGrant(s, "reports", secret))
		})
	}
}

func clientCredentialsGrant(s *oidcTestServer, clientID, secret string) *testResponse {
	return s.request(http.MethodPost, "/realms/acme/protocol/openid-connect/token", "grant_type=client_credentials",
		"Content-Type: application/x-www-form-urlencoded",
		"Authorization: Basic "+base64.StdEncoding.EncodeToString([]byte(clientID+":"+secret)))
}

func tokenClaims(t *testing.T, r *testResponse) map[string]any {
	t.Helper()
	mustStatus(t, r, http.StatusOK)
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	r.decode(t, &tok)
	_, claims := jwtParts(t, tok.AccessToken)
	return claims
}

func mustOAuthError(t *testing.T, r *testResponse, status int, code string) {
	t.Helper()
	var e oauthError
	if r.Status != status || json.Unmarshal(r.Body, &e) != nil || e.Error != code {
		t.Fatalf("got %d %s, want %d %s", r.Status, r.Body, status, code)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The user listing's total is cached; a user created or deleted must
// change the next listing's total.
func TestCacheUserCountFollowsWrites(t *testing.T) {
	s := newTestServer(t)
	s.createRealm("acme")
	total := func() float64 {
		t.Helper()
		r := s.admin(http.MethodGet, "/admin/realms/acme/users?limit=1", nil)
		mustStatus(t, r, http.StatusOK)
		return r.object(t)["total"].(float64)
	}
	s.createUser("acme", map[string]any{"username": "ann"})
	if n := total(); n != 1 {
		t.Fatalf("total %v, want 1", n)
	}
	bob := s.createUser("acme", map[string]any{"username": "bob"})
	if n := total(); n != 2 {
		t.Fatalf("after a create: total %v, want 2", n)
	}
	mustStatus(t, s.admin(http.MethodDelete, "/admin/realms/acme/users/"+bob["id"].(string), nil), http.StatusNoContent)
	if n := total(); n != 1 {
		t.Fatalf("after a delete: total %v, want 1", n)
	}
}
