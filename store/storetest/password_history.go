package storetest

import (
	"testing"

	"github.com/idenplane/idenplane/store"
)

func passwordHistorySuite() []subTest {
	return []subTest{
		{"PasswordHistoryKeeps", testPasswordHistoryKeeps},
		{"PasswordHistoryCascade", testPasswordHistoryCascade},
	}
}

func historyTestChange(t *testing.T, s *store.Store, user, hash string, at int64, keep int) {
	t.Helper()
	if err := s.ChangeUserPassword(testCtx, sessionsTestRealm, user, hash, at, false, keep); err != nil {
		t.Fatalf("change password of %s to %s: %v", user, hash, err)
	}
}

func historyTestList(t *testing.T, s *store.Store, user string, limit int) []string {
	t.Helper()
	h, err := s.PasswordHistory(testCtx, sessionsTestRealm, user, limit)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func testPasswordHistoryKeeps(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	// alice has no password yet: her first one replaces nothing.
	historyTestChange(t, s, "alice", "h1", 10, 2)
	mustEqual(t, "history after the first password", historyTestList(t, s, "alice", 10), []string(nil))
	for i, h := range []string{"h2", "h3", "h4"} {
		historyTestChange(t, s, "alice", h, int64(20+i), 2)
	}
	// The two newest previous ones, newest first; the current one is in users.
	mustEqual(t, "history", historyTestList(t, s, "alice", 10), []string{"h3", "h2"})
	mustEqual(t, "history limited", historyTestList(t, s, "alice", 1), []string{"h3"})
	u, err := s.GetUser(testCtx, sessionsTestRealm, "alice")
	if err != nil || u.PasswordHash != "h4" || u.PasswordChangedAt != 22 || u.RequirePasswordReset {
		t.Fatalf("user %+v %v", u, err)
	}
	if err := s.ChangeUserPassword(testCtx, sessionsTestRealm, "alice", "h5", 30, true, 3); err != nil {
		t.Fatal(err)
	}
	if u, _ := s.GetUser(testCtx, sessionsTestRealm, "alice"); u.PasswordHash != "h5" || !u.RequirePasswordReset {
		t.Fatalf("temporary password: %+v", u)
	}
	mustEqual(t, "history with a larger keep", historyTestList(t, s, "alice", 10), []string{"h4", "h3", "h2"})
	// A realm that stops remembering forgets at the next change.
	historyTestChange(t, s, "alice", "h6", 40, 0)
	mustEqual(t, "history with keep 0", historyTestList(t, s, "alice", 10), []string(nil))
	// Users keep their own histories.
	historyTestChange(t, s, "bob", "b1", 10, 5)
	historyTestChange(t, s, "bob", "b2", 11, 5)
	mustEqual(t, "bob's history", historyTestList(t, s, "bob", 10), []string{"b1"})
	// An unknown user: not found, and nothing kept.
	mustBeErrNotFound(t, "unknown user", s.ChangeUserPassword(testCtx, sessionsTestRealm, "nobody", "x", 50, false, 5))
	mustBeErrNotFound(t, "user of another realm", s.ChangeUserPassword(testCtx, sessionsTestOther, "bob", "x", 50, false, 5))
	mustEqual(t, "bob's history after a change in another realm", historyTestList(t, s, "bob", 10), []string{"b1"})
}

func testPasswordHistoryCascade(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	for _, user := range []string{"alice", "bob"} {
		historyTestChange(t, s, user, user+"1", 10, 5)
		historyTestChange(t, s, user, user+"2", 11, 5)
	}
	if err := s.DeleteUser(testCtx, sessionsTestRealm, "alice"); err != nil {
		t.Fatal(err)
	}
	// A user made again with the deleted one's ID has no history.
	mustCreateUser(t, s, testUser("alice", sessionsTestRealm, "alice", ""))
	if h := historyTestList(t, s, "alice", 10); len(h) != 0 {
		t.Fatalf("alice's history after her deletion: %v", h)
	}
	if h := historyTestList(t, s, "bob", 10); len(h) != 1 {
		t.Fatalf("bob's history after alice's deletion: %v, want his one old password", h)
	}
	if err := s.DeleteRealm(testCtx, "acme"); err != nil {
		t.Fatal(err)
	}
	// Nor has a realm made again with the deleted one's ID, or its users.
	mustCreateRealm(t, s, testRealm(sessionsTestRealm, "acme", 3000))
	for _, user := range []string{"alice", "bob"} {
		mustCreateUser(t, s, testUser(user, sessionsTestRealm, user, ""))
		if h := historyTestList(t, s, user, 10); len(h) != 0 {
			t.Fatalf("%s's history after the realm's deletion: %v", user, h)
		}
	}
}
