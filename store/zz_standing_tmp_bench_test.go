package store

import (
	"context"
	"testing"
)

func BenchmarkTmpAccessTokenLiveUntil(b *testing.B) {
	s := benchStoreOpen(b)
	r := benchStoreRealm(b, s, "acme")
	ctx := context.Background()
	u := benchStoreUser(r.ID, 1, 1)
	if err := s.CreateUser(ctx, u); err != nil {
		b.Fatal(err)
	}
	if err := s.CreateClient(ctx, &Client{ID: "c1", RealmID: r.ID, ClientID: "web", ClientType: "PUBLIC", Enabled: true, CreatedAt: 1}); err != nil {
		b.Fatal(err)
	}
	if err := s.CreateSession(ctx, &Session{ID: "sso", RealmID: r.ID, UserID: u.ID, Kind: SessionSSO, StartedAt: 1000, LastAccessAt: 1000, ExpiresAt: 1 << 50, AMR: []string{"pwd"}}); err != nil {
		b.Fatal(err)
	}
	if err := s.CreateSession(ctx, &Session{ID: "o1", RealmID: r.ID, UserID: u.ID, Kind: SessionOAuth, ParentID: "sso", ClientID: "c1", StartedAt: 1000, LastAccessAt: 1000, ExpiresAt: 1 << 50, AMR: []string{"pwd"}}); err != nil {
		b.Fatal(err)
	}
	for _, sid := range []string{"sso", ""} {
		b.Run("sid="+sid, func(b *testing.B) {
			t := &AccessTokenClaims{RealmID: r.ID, TokenID: "jti", UserID: u.ID, ClientID: "web", SessionID: sid, IssuedAt: 5}
			for b.Loop() {
				if got, err := s.AccessTokenLiveUntil(ctx, t); err != nil || got == 0 {
					b.Fatal(got, err)
				}
			}
		})
	}
}
