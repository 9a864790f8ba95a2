package storetest

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/idenplane/idenplane/store"
)

// adminSuite is the conformance tests of the admin API key, admin users
// and revoked admin tokens.
func adminSuite() []subTest {
	return []subTest{
		{"AdminAPIKey", testAdminAPIKey},
		{"AdminUsers", testAdminUsers},
		{"AdminTokenRevocation", testAdminTokenRevocation},
		{"NamedAdminAPIKeys", testNamedAdminAPIKeys},
	}
}

func testAdminAPIKey(t *testing.T, s *store.Store) {
	if h, err := s.AdminAPIKeyHash(testCtx); !errors.Is(err, store.ErrNotFound) || h != nil {
		t.Fatalf("AdminAPIKeyHash before one is set: %x, %v; want ErrNotFound", h, err)
	}
	first := bytes.Repeat([]byte{1}, 32)
	if err := s.SetAdminAPIKeyHash(testCtx, first); err != nil {
		t.Fatal(err)
	}
	if h, err := s.AdminAPIKeyHash(testCtx); err != nil || !bytes.Equal(h, first) {
		t.Fatalf("AdminAPIKeyHash = %x, %v; want %x", h, err, first)
	}
	second := bytes.Repeat([]byte{2}, 32)
	if err := s.SetAdminAPIKeyHash(testCtx, second); err != nil {
		t.Fatalf("replacing the key hash: %v", err)
	}
	if h, err := s.AdminAPIKeyHash(testCtx); err != nil || !bytes.Equal(h, second) {
		t.Fatalf("AdminAPIKeyHash after replace = %x, %v; want %x", h, err, second)
	}
}

// testAdminUsers: the admin users of versions before the system realm,
// kept until the first start moves them (ListAdminUsers, DeleteAdminUser).
func testAdminUsers(t *testing.T, s *store.Store) {
	if got, err := s.ListAdminUsers(testCtx); err != nil || len(got) != 0 {
		t.Fatalf("ListAdminUsers of an empty store = %v, %v", got, err)
	}
	root := &store.AdminUser{ID: "c0000000-0000-4000-8000-000000000001", Username: "root", PasswordHash: "hash-root", CreatedAt: 1000}
	second := &store.AdminUser{ID: "c0000000-0000-4000-8000-000000000003", Username: "ops", PasswordHash: "hash-ops", CreatedAt: 3000}
	for _, u := range []*store.AdminUser{second, root} {
		if err := s.CreateAdminUser(testCtx, u); err != nil {
			t.Fatal(err)
		}
	}
	dup := &store.AdminUser{ID: "c0000000-0000-4000-8000-000000000002", Username: "root", PasswordHash: "h", CreatedAt: 2000}
	mustBeErrConflict(t, "duplicate admin username", s.CreateAdminUser(testCtx, dup))
	got, err := s.ListAdminUsers(testCtx)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "admin users, oldest first", got, []*store.AdminUser{root, second})
	if err := s.DeleteAdminUser(testCtx, root.ID); err != nil {
		t.Fatal(err)
	}
	if got, err = s.ListAdminUsers(testCtx); err != nil || len(got) != 1 || got[0].ID != second.ID {
		t.Fatalf("after delete: %v, %v", got, err)
	}
}

func testAdminTokenRevocation(t *testing.T, s *store.Store) {
	future := s.Now().Add(time.Hour).UnixMilli()
	if revoked, err := s.AdminTokenRevoked(testCtx, "jti-1"); err != nil || revoked {
		t.Fatalf("unrevoked token reported revoked=%v, %v", revoked, err)
	}
	if err := s.RevokeAdminToken(testCtx, "jti-1", future); err != nil {
		t.Fatal(err)
	}
	if revoked, err := s.AdminTokenRevoked(testCtx, "jti-1"); err != nil || !revoked {
		t.Fatalf("revoked token reported revoked=%v, %v", revoked, err)
	}
	if revoked, err := s.AdminTokenRevoked(testCtx, "jti-2"); err != nil || revoked {
		t.Fatalf("another token reported revoked=%v, %v", revoked, err)
	}
	// Revoking twice is fine.
	if err := s.RevokeAdminToken(testCtx, "jti-1", future); err != nil {
		t.Fatalf("second revocation: %v", err)
	}
	// Revocations of tokens that have expired anyway are forgotten at the
	// next revocation; live ones are kept.
	if err := s.RevokeAdminToken(testCtx, "jti-old", s.Now().Add(-time.Minute).UnixMilli()); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeAdminToken(testCtx, "jti-3", future); err != nil {
		t.Fatal(err)
	}
	for jti, want := range map[string]bool{"jti-old": false, "jti-1": true, "jti-3": true} {
		if revoked, err := s.AdminTokenRevoked(testCtx, jti); err != nil || revoked != want {
			t.Fatalf("%s revoked=%v (%v), want %v", jti, revoked, err, want)
		}
	}
}

func testNamedAdminAPIKeys(t *testing.T, s *store.Store) {
	realmID := "11111111-1111-4111-8111-111111111111"
	if err := s.CreateRealm(testCtx, testRealm(realmID, "acme", 1000)); err != nil {
		t.Fatal(err)
	}
	ci := &store.AdminAPIKey{ID: "00000000000000c1", Name: "ci", SecretHash: bytes.Repeat([]byte{1}, 32), Prefix: "ipk_00000000000000c1_AAAA",
		Permissions: []string{"users:read"}, RealmID: realmID, ExpiresAt: 9000, CreatedAt: 1000, CreatedBy: "user:root"}
	all := &store.AdminAPIKey{ID: "00000000000000a1", Name: "all", SecretHash: bytes.Repeat([]byte{2}, 32), Prefix: "ipk_00000000000000a1_BBBB",
		Permissions: []string{"all"}, CreatedAt: 1000, CreatedBy: "api-key:bootstrap"}
	for _, k := range []*store.AdminAPIKey{ci, all} {
		if err := s.CreateAdminAPIKey(testCtx, k); err != nil {
			t.Fatal(err)
		}
	}
	dup := *all
	dup.ID = "00000000000000d1"
	if err := s.CreateAdminAPIKey(testCtx, &dup); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a second key named all: %v, want ErrConflict", err)
	}
	if got, err := s.GetAdminAPIKey(testCtx, ci.ID); err != nil {
		t.Fatal(err)
	} else {
		mustEqual(t, "key by id", got, ci)
	}
	if _, err := s.GetAdminAPIKey(testCtx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown key: %v", err)
	}
	list, err := s.ListAdminAPIKeys(testCtx)
	if err != nil || len(list) != 2 || list[0].Name != "all" || list[1].Name != "ci" {
		t.Fatalf("list %v, %v; want all, ci", list, err)
	}

	// A rotation with a grace keeps the old hash until then; one without
	// keeps none.
	if err := s.RotateAdminAPIKey(testCtx, ci.ID, bytes.Repeat([]byte{3}, 32), "ipk_00000000000000c1_CCCC", 2000, 5000); err != nil {
		t.Fatal(err)
	}
	got, _ := s.GetAdminAPIKey(testCtx, ci.ID)
	if !bytes.Equal(got.PreviousHash, ci.SecretHash) || got.PreviousUntil != 5000 || got.RotatedAt != 2000 ||
		got.Prefix != "ipk_00000000000000c1_CCCC" || got.SecretHash[0] != 3 {
		t.Fatalf("after a rotation with grace: %+v", got)
	}
	if err := s.RotateAdminAPIKey(testCtx, ci.ID, bytes.Repeat([]byte{4}, 32), "ipk_00000000000000c1_DDDD", 3000, 3000); err != nil {
		t.Fatal(err)
	}
	got, _ = s.GetAdminAPIKey(testCtx, ci.ID)
	if got.PreviousHash != nil || got.PreviousUntil != 0 || got.SecretHash[0] != 4 {
		t.Fatalf("after a rotation without grace: %+v", got)
	}

	if err := s.TouchAdminAPIKey(testCtx, ci.ID, 3500); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeAdminAPIKey(testCtx, ci.ID, 4000); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeAdminAPIKey(testCtx, ci.ID, 4500); err != nil {
		t.Fatal(err)
	}
	got, _ = s.GetAdminAPIKey(testCtx, ci.ID)
	if got.RevokedAt != 4000 || got.LastUsedAt != 3500 {
		t.Fatalf("after use and revocations: %+v", got)
	}
	if err := s.RotateAdminAPIKey(testCtx, ci.ID, bytes.Repeat([]byte{5}, 32), "x", 5000, 0); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("rotating a revoked key: %v, want ErrNotFound", err)
	}
	if err := s.RevokeAdminAPIKey(testCtx, "nope", 1); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("revoking an unknown key: %v", err)
	}

	// A key confined to a realm goes with it.
	if err := s.DeleteRealm(testCtx, "acme"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetAdminAPIKey(testCtx, ci.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the key of a deleted realm: %v", err)
	}
}
