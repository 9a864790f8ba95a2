package store

// Store-level benchmarks over a real SQLite file, to tell the database's
// share of an API call from the handler's.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

const benchStoreSeedCount = 100_000

// benchStoreOpen opens a fresh store in b.TempDir().
func benchStoreOpen(b *testing.B) *Store {
	b.Helper()
	schema, err := os.ReadFile(filepath.Join("..", "schema.sql"))
	if err != nil {
		b.Fatalf("read schema: %v", err)
	}
	s, err := Open(context.Background(), Config{
		Path: filepath.Join(b.TempDir(), "bench.db"), Schema: string(schema),
		MasterKey: bytes.Repeat([]byte{7}, MasterKeySize),
	})
	if err != nil {
		b.Fatalf("open store: %v", err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// benchStoreRealm inserts a realm with the settings the schema requires.
func benchStoreRealm(b *testing.B, s *Store, name string) *Realm {
	b.Helper()
	r := &Realm{
		ID: "realm-" + name, Name: name, Enabled: true, AccessTokenLifespan: 300, RefreshTokenLifespan: 1800,
		OfflineTokenLifespan: 2592000, SMTPPort: 587, EmailProvider: "smtp", PasswordMinLength: 8,
		MaxLoginFailures: 5, LockoutDuration: 900, FailureResetTime: 43200, EventsExpiration: 604800,
		ThemeName: "default", CreatedAt: time.Now().UnixMilli(),
	}
	if err := s.CreateRealm(context.Background(), r); err != nil {
		b.Fatalf("create realm: %v", err)
	}
	return r
}

func benchStoreUser(realmID string, i int, created int64) *User {
	return &User{
		ID: fmt.Sprintf("%s-user-%08d", realmID, i), RealmID: realmID, Username: fmt.Sprintf("user%06d", i),
		Email: fmt.Sprintf("user%06d@example.com", i), FirstName: "Bench", LastName: fmt.Sprintf("Person %d", i),
		Enabled: true, CreatedAt: created,
	}
}

// benchStoreSeedUsers inserts n users in one transaction.
func benchStoreSeedUsers(b *testing.B, s *Store, realmID string, n int) {
	b.Helper()
	ctx := context.Background()
	created := time.Now().UnixMilli()
	err := s.Tx(ctx, func(tx *Store) error {
		for i := range n {
			if err := tx.CreateUser(ctx, benchStoreUser(realmID, i, created)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatalf("seed %d users: %v", n, err)
	}
}

// BenchmarkCreateUser is one durable INSERT (its own transaction, synced).
func BenchmarkCreateUser(b *testing.B) {
	s := benchStoreOpen(b)
	r := benchStoreRealm(b, s, "r")
	ctx := context.Background()
	created := time.Now().UnixMilli()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if err := s.CreateUser(ctx, benchStoreUser(r.ID, i, created)); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkListUsersPage reads pages of 50 within the first 1000 of
// 100,000 users, with the total count the API returns.
func BenchmarkListUsersPage(b *testing.B) {
	b.StopTimer()
	s := benchStoreOpen(b)
	r := benchStoreRealm(b, s, "r")
	benchStoreSeedUsers(b, s, r.ID, benchStoreSeedCount)
	ctx := context.Background()
	users, total, err := s.ListUsers(ctx, r.ID, UserFilter{Limit: 50, Skip: 950})
	if err != nil || total != benchStoreSeedCount || len(users) != 50 || users[0].Username != "user000950" {
		b.Fatalf("page: %d users, total %d, err %v", len(users), total, err)
	}
	b.StartTimer()
	b.ResetTimer()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, _, err := s.ListUsers(ctx, r.ID, UserFilter{Limit: 50, Skip: (i * 50) % 1000}); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkRefreshGrantRead is what a refresh reads before it rotates its
// token: the token, its user, its OAuth session and the SSO session above,
// among 10,000 signed-in users, in one query or one read each.
func BenchmarkRefreshGrantRead(b *testing.B) {
	const n = 10_000
	s := benchStoreOpen(b)
	r := benchStoreRealm(b, s, "r")
	benchStoreSeedUsers(b, s, r.ID, n)
	ctx, now := context.Background(), time.Now().UnixMilli()
	if err := s.CreateClient(ctx, &Client{ID: "web", RealmID: r.ID, ClientID: "web-app", ClientType: "PUBLIC", CreatedAt: now}); err != nil {
		b.Fatal(err)
	}
	err := s.Tx(ctx, func(tx *Store) error {
		for i := range n {
			user, id := benchStoreUser(r.ID, i, now).ID, fmt.Sprint(i)
			for _, sess := range []*Session{
				{ID: "sso-" + id, RealmID: r.ID, UserID: user, Kind: SessionSSO, IPAddress: "192.0.2.1", StartedAt: now,
					LastAccessAt: now, ExpiresAt: now + 3_600_000, AuthTime: now, AMR: []string{"pwd"}},
				{ID: "oauth-" + id, RealmID: r.ID, UserID: user, Kind: SessionOAuth, ParentID: "sso-" + id, ClientID: "web",
					IPAddress: "192.0.2.1", StartedAt: now, LastAccessAt: now, ExpiresAt: now + 3_600_000, AuthTime: now},
			} {
				if err := tx.CreateSession(ctx, sess); err != nil {
					return err
				}
			}
			if err := tx.CreateRefreshToken(ctx, &RefreshToken{ID: "rt-" + id, RealmID: r.ID, TokenHash: HashToken(id),
				SessionID: "oauth-" + id, ClientID: "web", UserID: user, Scopes: []string{"openid"}, AuthTime: now,
				CreatedAt: now, ExpiresAt: now + 3_600_000}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("one query", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			g, err := s.RefreshGrantByHash(ctx, r.ID, HashToken(fmt.Sprint(i%n)))
			if err != nil || g.SSO == nil {
				b.Fatalf("grant %d: %+v, %v", i, g, err)
			}
			i += 7919 // a prime: the tokens in a scattered order
		}
	})
	b.Run("four reads", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			t, err := s.RefreshTokenByHash(ctx, r.ID, HashToken(fmt.Sprint(i%n)))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := s.GetUser(ctx, r.ID, t.UserID); err != nil {
				b.Fatal(err)
			}
			oauth, err := s.GetSession(ctx, r.ID, t.SessionID)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := s.GetSession(ctx, r.ID, oauth.ParentID); err != nil {
				b.Fatal(err)
			}
			i += 7919
		}
	})
}

// BenchmarkBulkWrites writes users many to a transaction, as an import or
// a directory's sync does: each user alone (CreateUser), then with three
// SCIM values (PutSCIMUser), and then renamed. Per user; the indexes of
// their texts (text_index.go) are taken in after each transaction.
func BenchmarkBulkWrites(b *testing.B) {
	const perTx = 1000
	ctx := context.Background()
	created := time.Now().UnixMilli()
	for _, bc := range []struct {
		name  string
		write func(tx *Store, realmID string, i int) error
	}{
		{"create", func(tx *Store, realmID string, i int) error {
			return tx.CreateUser(ctx, benchStoreUser(realmID, i, created))
		}},
		{"create+scim", func(tx *Store, realmID string, i int) error {
			u := benchStoreUser(realmID, i, created)
			if err := tx.CreateUser(ctx, u); err != nil {
				return err
			}
			display := fmt.Sprintf("Bench User %07d", i)
			return tx.PutSCIMUser(ctx, realmID, u.ID, SCIMUser{ModifiedAt: created, Data: `{}`}, []SCIMValue{
				{Attr: "externalid", Value: fmt.Sprintf("ext-%d", i), Fold: fmt.Sprintf("ext-%d", i)},
				{Attr: "displayname", Value: display, Fold: FoldCase(display)},
				{Attr: "emails", Value: u.Email, Fold: u.Email, Type: "work", Primary: true}})
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s := benchStoreOpen(b)
			r := benchStoreRealm(b, s, "r")
			n := 0
			for b.Loop() {
				err := s.Tx(ctx, func(tx *Store) error {
					for range perTx {
						if err := bc.write(tx, r.ID, n); err != nil {
							return err
						}
						n++
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(n), "µs/user")
			indexing := time.Now()
			if err := s.IndexTexts(ctx); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(time.Since(indexing).Microseconds())/float64(n), "index-µs/user")
		})
	}
}
