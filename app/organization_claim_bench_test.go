package app

import (
	"context"
	"net/http"
	"testing"
)

// BenchmarkAccessTokenOrganizationClaim measures minting an access token
// (claims and signature) for a user in three organizations, with the
// organization scope and without: the claim's cost is one query.
func BenchmarkAccessTokenOrganizationClaim(b *testing.B) {
	s := newTestServer(b)
	s.createRealm("bench")
	mustStatus(b, s.admin(http.MethodPost, "/admin/realms/bench/clients", map[string]any{"clientId": "web",
		"redirectUris": []string{"https://web.test/cb"}, "grantTypes": []string{"authorization_code"}}), http.StatusCreated)
	userID := s.createUser("bench", map[string]any{"username": "alice", "email": "alice@example.test"})["id"].(string)
	for i, slug := range []string{"acme", "bank", "cafe"} {
		mustStatus(b, s.admin(http.MethodPost, "/admin/realms/bench/organizations", map[string]any{"slug": slug, "name": slug}), http.StatusCreated)
		role := []string{"owner", "admin", "member"}[i]
		mustStatus(b, s.admin(http.MethodPost, "/admin/realms/bench/organizations/"+slug+"/members",
			map[string]any{"userId": userID, "role": role}), http.StatusCreated)
	}
	ctx := context.Background()
	a := s.app
	realm, err := a.store.GetRealm(ctx, "bench")
	if err != nil {
		b.Fatal(err)
	}
	client, err := a.store.GetClientByClientID(ctx, realm.ID, "web")
	if err != nil {
		b.Fatal(err)
	}
	user, err := a.store.GetUser(ctx, realm.ID, userID)
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		scope []string
	}{
		{"without", []string{"openid"}},
		{"with", []string{"openid", "organization"}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			scopes, err := a.grantScopes(ctx, realm, client, tc.scope)
			if err != nil {
				b.Fatal(err)
			}
			g := &tokenGrant{realm: realm, client: client, user: user, scopes: scopes, sid: "s"}
			b.ReportAllocs()
			for b.Loop() {
				if _, _, _, err := a.accessToken(ctx, g, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
