package storetest

import (
	"testing"

	"github.com/idenplane/idenplane/store"
)

func impersonationSuite() []subTest {
	return []subTest{
		{"ImpersonationSessions", testImpersonationSessions},
	}
}

// An impersonation's session names its impersonator on every read, the
// refresh grant's included, and its record outlives the session.
func testImpersonationSessions(t *testing.T, s *store.Store) {
	mustCreateRealm(t, s, testRealm("r1", "acme", 1000))
	mustCreateUser(t, s, testUser("u1", "r1", "alice", "alice@example.test"))
	imp := &store.Impersonator{ID: "admin-1", Username: "support", EndsAt: 5000}
	sess := &store.Session{ID: "s1", RealmID: "r1", UserID: "u1", Kind: store.SessionSSO, StartedAt: 1000, LastAccessAt: 1000,
		ExpiresAt: 5000, AuthTime: 1000, AMR: []string{}, Impersonator: imp}
	m := &store.Impersonation{ID: "m1", RealmID: "r1", UserID: "u1", ImpersonatorID: "admin-1", ImpersonatorUsername: "support",
		ImpersonatorRealm: "idenplane-admin", SessionID: "s1", StartedAt: 1000, EndsAt: 5000}
	err := s.Tx(testCtx, func(tx *store.Store) error {
		if err := tx.CreateSession(testCtx, sess); err != nil {
			return err
		}
		return tx.CreateImpersonation(testCtx, m)
	})
	if err != nil {
		t.Fatal(err)
	}
	mustCreateUser(t, s, testUser("u2", "r1", "bob", "bob@example.test"))
	own := &store.Session{ID: "s2", RealmID: "r1", UserID: "u2", Kind: store.SessionSSO, StartedAt: 1000, LastAccessAt: 1000,
		ExpiresAt: 5000, AuthTime: 1000, AMR: []string{"pwd"}}
	if err := s.CreateSession(testCtx, own); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetSession(testCtx, "r1", "s1")
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "impersonator", got.Impersonator, imp)
	if got, err := s.GetSession(testCtx, "r1", "s2"); err != nil || got.Impersonator != nil {
		t.Fatalf("the user's own session: %+v, %v", got, err)
	}

	active, err := s.ActiveImpersonations(testCtx, "r1", "u1", "", 2000)
	if err != nil || len(active) != 1 || active[0].SessionID != "s1" {
		t.Fatalf("active impersonations of u1: %+v, %v", active, err)
	}
	if on, err := s.AnyImpersonationSince(testCtx, 2000); err != nil || !on {
		t.Fatalf("any impersonation at 2000: %t, %v", on, err)
	}
	// The record is read by nothing the server caches: ending it keeps
	// the caches.
	gen := s.Generation()
	if err := s.EndImpersonation(testCtx, "r1", "m1", 3000); err != nil {
		t.Fatal(err)
	}
	if s.Generation() != gen {
		t.Fatal("ending an impersonation's record moved the cache generation")
	}
	if err := s.EndImpersonation(testCtx, "r1", "m1", 3100); err == nil {
		t.Fatal("an impersonation ended twice")
	}
	if active, err := s.ActiveImpersonations(testCtx, "r1", "", "s1", 3000); err != nil || len(active) != 0 {
		t.Fatalf("active after the end: %+v, %v", active, err)
	}
	if _, err := s.DeleteSession(testCtx, "r1", "s1", store.SessionSSO, 3000); err != nil {
		t.Fatal(err)
	}
	list, err := s.UserImpersonations(testCtx, "r1", "u1", 10)
	if err != nil || len(list) != 1 || list[0].EndedAt != 3000 || list[0].Active(3000) {
		t.Fatalf("the record after the session: %+v, %v", list, err)
	}
}
