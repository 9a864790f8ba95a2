package store

import (
	"errors"
	"testing"
)

func passwordHistorySuite() []suiteTest {
	return []suiteTest{
		{"PasswordHistoryKeeps", suitePasswordHistoryKeeps},
		{"PasswordHistoryCascade", suitePasswordHistoryCascade},
	}
}

func historyTestChange(t *testing.T, s *Store, user, hash string, at int64, keep int) {
	t.Helper()
	if err := s.ChangeUserPassword(suiteCtx, sessionsTestRealm, user, hash, at, false, keep); err != nil {
		t.Fatalf("change password of %s to %s: %v", user, hash, err)
	}
}

func historyTestList(t *testing.T, s *Store, user string, limit int) []string {
	t.Helper()
	h, err := s.PasswordHistory(suiteCtx, sessionsTestRealm, user, limit)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func suitePasswordHistoryKeeps(t *testing.T, s *Store) {
	sessionsTestFixture(t, s)
	// alice has no password yet: her first one replaces nothing.
	historyTestChange(t, s, "alice", "h1", 10, 2)
	suiteMustEqual(t, "history after the first password", historyTestList(t, s, "alice", 10), []string(nil))
	for i, h := range []string{"h2", "h3", "h4"} {
		historyTestChange(t, s, "alice", h, int64(20+i), 2)
	}
	// The two newest previous ones, newest first; the current one is in users.
	suiteMustEqual(t, "history", historyTestList(t, s, "alice", 10), []string{"h3", "h2"})
	suiteMustEqual(t, "history limited", historyTestList(t, s, "alice", 1), []string{"h3"})
	u, err := s.GetUser(suiteCtx, sessionsTestRealm, "alice")
	if err != nil || u.PasswordHash != "h4" || u.PasswordChangedAt != 22 || u.RequirePasswordReset {
		t.Fatalf("user %+v %v", u, err)
	}
	if err := s.ChangeUserPassword(suiteCtx, sessionsTestRealm, "alice", "h5", 30, true, 3); err != nil {
		t.Fatal(err)
	}
	if u, _ := s.GetUser(suiteCtx, sessionsTestRealm, "alice"); u.PasswordHash != "h5" || !u.RequirePasswordReset {
		t.Fatalf("temporary password: %+v", u)
	}
	suiteMustEqual(t, "history with a larger keep", historyTestList(t, s, "alice", 10), []string{"h4", "h3", "h2"})
	// A realm that stops remembering forgets at the next change.
	historyTestChange(t, s, "alice", "h6", 40, 0)
	suiteMustEqual(t, "history with keep 0", historyTestList(t, s, "alice", 10), []string(nil))
	// Users keep their own histories.
	historyTestChange(t, s, "bob", "b1", 10, 5)
	historyTestChange(t, s, "bob", "b2", 11, 5)
	suiteMustEqual(t, "bob's history", historyTestList(t, s, "bob", 10), []string{"b1"})
	// An unknown user: not found, and nothing kept.
	if err := s.ChangeUserPassword(suiteCtx, sessionsTestRealm, "nobody", "x", 50, false, 5); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown user: %v, want ErrNotFound", err)
	}
	if err := s.ChangeUserPassword(suiteCtx, sessionsTestOther, "bob", "x", 50, false, 5); !errors.Is(err, ErrNotFound) {
		t.Fatalf("user of another realm: %v, want ErrNotFound", err)
	}
	suiteMustEqual(t, "bob's history after a change in another realm", historyTestList(t, s, "bob", 10), []string{"b1"})
}

func suitePasswordHistoryCascade(t *testing.T, s *Store) {
	sessionsTestFixture(t, s)
	for _, user := range []string{"alice", "bob"} {
		historyTestChange(t, s, user, user+"1", 10, 5)
		historyTestChange(t, s, user, user+"2", 11, 5)
	}
	if err := s.DeleteUser(suiteCtx, sessionsTestRealm, "alice"); err != nil {
		t.Fatal(err)
	}
	// A user made again with the deleted one's ID has no history.
	suiteMustCreateUser(t, s, suiteUser("alice", sessionsTestRealm, "alice", ""))
	if h := historyTestList(t, s, "alice", 10); len(h) != 0 {
		t.Fatalf("alice's history after her deletion: %v", h)
	}
	if h := historyTestList(t, s, "bob", 10); len(h) != 1 {
		t.Fatalf("bob's history after alice's deletion: %v, want his one old password", h)
	}
	if err := s.DeleteRealm(suiteCtx, "acme"); err != nil {
		t.Fatal(err)
	}
	// Nor has a realm made again with the deleted one's ID, or its users.
	suiteMustCreateRealm(t, s, suiteRealm(sessionsTestRealm, "acme", 3000))
	for _, user := range []string{"alice", "bob"} {
		suiteMustCreateUser(t, s, suiteUser(user, sessionsTestRealm, user, ""))
		if h := historyTestList(t, s, user, 10); len(h) != 0 {
			t.Fatalf("%s's history after the realm's deletion: %v", user, h)
		}
	}
}
