package storetest

import (
	"errors"
	"testing"

	"github.com/idenplane/idenplane/store"
)

func recoverySuite() []subTest {
	return []subTest{
		{"RecoveryFindUser", testRecoveryFindUser},
		{"RecoveryPeekToken", testRecoveryPeekToken},
		{"RecoveryMarkEmailVerified", testRecoveryMarkEmailVerified},
	}
}

func testRecoveryFindUser(t *testing.T, s *store.Store) {
	actionTestFixture(t, s)
	for _, login := range []string{"alice", "ALICE", " alice@Example.test "} {
		u, err := s.FindRecoveryUser(testCtx, sessionsTestRealm, login)
		if err != nil || u.ID != "alice" {
			t.Fatalf("%q: %+v, %v", login, u, err)
		}
	}
	for _, login := range []string{"", "nobody", "alice@example"} {
		if _, err := s.FindRecoveryUser(testCtx, sessionsTestRealm, login); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("%q: %v, want ErrNotFound", login, err)
		}
	}
	if _, err := s.FindRecoveryUser(testCtx, sessionsTestOther, "alice@example.test"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("other realm: %v, want ErrNotFound", err)
	}
	if err := s.ChangeUserStatus(testCtx, sessionsTestRealm, "alice", store.UserActive, store.UserPending); err != nil {
		t.Fatal(err)
	}
	if _, err := s.FindRecoveryUser(testCtx, sessionsTestRealm, "alice"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("pending user: %v, want ErrNotFound", err)
	}
}

func testRecoveryPeekToken(t *testing.T, s *store.Store) {
	tok := actionTestFixture(t, s)
	got, err := s.PeekActionToken(testCtx, sessionsTestRealm, store.HashToken("t1"), store.ActionVerifyEmail, sessionsTestNow)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "peeked token", got, tok)
	// Peeking does not use it.
	if _, err := s.ConsumeActionToken(testCtx, sessionsTestRealm, store.HashToken("t1"), store.ActionVerifyEmail, sessionsTestNow); err != nil {
		t.Fatal(err)
	}
	for name, at := range map[string]int64{"used": sessionsTestNow, "expired": tok.ExpiresAt} {
		if _, err := s.PeekActionToken(testCtx, sessionsTestRealm, store.HashToken("t1"), store.ActionVerifyEmail, at); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("%s: %v, want ErrNotFound", name, err)
		}
	}
	if _, err := s.PeekActionToken(testCtx, sessionsTestRealm, store.HashToken("t1"), store.ActionResetPassword, sessionsTestNow); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("other kind: %v, want ErrNotFound", err)
	}
}

func testRecoveryMarkEmailVerified(t *testing.T, s *store.Store) {
	actionTestFixture(t, s)
	mustBeErrNotFound(t, "other address", s.MarkEmailVerified(testCtx, sessionsTestRealm, "alice", "old@example.test"))
	if err := s.MarkEmailVerified(testCtx, sessionsTestRealm, "alice", "alice@example.test"); err != nil {
		t.Fatal(err)
	}
	u, err := s.GetUser(testCtx, sessionsTestRealm, "alice")
	if err != nil || !u.EmailVerified {
		t.Fatalf("user %+v, %v", u, err)
	}
}
