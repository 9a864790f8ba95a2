package store

import (
	"errors"
	"testing"
)

func recoverySuite() []suiteTest {
	return []suiteTest{
		{"RecoveryFindUser", suiteRecoveryFindUser},
		{"RecoveryPeekToken", suiteRecoveryPeekToken},
		{"RecoveryMarkEmailVerified", suiteRecoveryMarkEmailVerified},
	}
}

func suiteRecoveryFindUser(t *testing.T, s *Store) {
	actionTestFixture(t, s)
	for _, login := range []string{"alice", "ALICE", " alice@Example.test "} {
		u, err := s.FindRecoveryUser(suiteCtx, sessionsTestRealm, login)
		if err != nil || u.ID != "alice" {
			t.Fatalf("%q: %+v, %v", login, u, err)
		}
	}
	for _, login := range []string{"", "nobody", "alice@example"} {
		if _, err := s.FindRecoveryUser(suiteCtx, sessionsTestRealm, login); !errors.Is(err, ErrNotFound) {
			t.Fatalf("%q: %v, want ErrNotFound", login, err)
		}
	}
	if _, err := s.FindRecoveryUser(suiteCtx, sessionsTestOther, "alice@example.test"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("other realm: %v, want ErrNotFound", err)
	}
	if err := s.ChangeUserStatus(suiteCtx, sessionsTestRealm, "alice", UserActive, UserPending); err != nil {
		t.Fatal(err)
	}
	if _, err := s.FindRecoveryUser(suiteCtx, sessionsTestRealm, "alice"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("pending user: %v, want ErrNotFound", err)
	}
}

func suiteRecoveryPeekToken(t *testing.T, s *Store) {
	tok := actionTestFixture(t, s)
	got, err := s.PeekActionToken(suiteCtx, sessionsTestRealm, HashToken("t1"), ActionVerifyEmail, sessionsTestNow)
	if err != nil {
		t.Fatal(err)
	}
	suiteMustEqual(t, "peeked token", got, tok)
	// Peeking does not use it.
	if _, err := s.ConsumeActionToken(suiteCtx, sessionsTestRealm, HashToken("t1"), ActionVerifyEmail, sessionsTestNow); err != nil {
		t.Fatal(err)
	}
	for name, at := range map[string]int64{"used": sessionsTestNow, "expired": tok.ExpiresAt} {
		if _, err := s.PeekActionToken(suiteCtx, sessionsTestRealm, HashToken("t1"), ActionVerifyEmail, at); !errors.Is(err, ErrNotFound) {
			t.Fatalf("%s: %v, want ErrNotFound", name, err)
		}
	}
	if _, err := s.PeekActionToken(suiteCtx, sessionsTestRealm, HashToken("t1"), ActionResetPassword, sessionsTestNow); !errors.Is(err, ErrNotFound) {
		t.Fatalf("other kind: %v, want ErrNotFound", err)
	}
}

func suiteRecoveryMarkEmailVerified(t *testing.T, s *Store) {
	actionTestFixture(t, s)
	if err := s.MarkEmailVerified(suiteCtx, sessionsTestRealm, "alice", "old@example.test"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("other address: %v, want ErrNotFound", err)
	}
	if err := s.MarkEmailVerified(suiteCtx, sessionsTestRealm, "alice", "alice@example.test"); err != nil {
		t.Fatal(err)
	}
	u, err := s.GetUser(suiteCtx, sessionsTestRealm, "alice")
	if err != nil || !u.EmailVerified {
		t.Fatalf("user %+v, %v", u, err)
	}
}
