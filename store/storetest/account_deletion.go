package storetest

import (
	"errors"
	"testing"

	"github.com/idenplane/idenplane/store"
)

// accountSuite is the conformance tests of account self-service:
// scheduled deletions, ending a user's other sessions, and the reads of
// a user's data export.
func accountSuite() []subTest {
	return []subTest{
		{"AccountDeletionSchedule", testAccountDeletionSchedule},
		{"AccountDeletionDue", testAccountDeletionDue},
		{"AccountDeletionGoesWithUser", testAccountDeletionGoesWithUser},
		{"AccountDeleteOtherSessions", testAccountDeleteOtherSessions},
		{"AccountExportReads", testAccountExportReads},
	}
}

func accountTestDeletion(user, realm string, requested, deleteAt int64) *store.AccountDeletion {
	return &store.AccountDeletion{UserID: user, RealmID: realm, RequestedAt: requested, DeleteAt: deleteAt}
}

func testAccountDeletionSchedule(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	now, hour := sessionsTestNow, sessionsTestHour
	if _, err := s.GetAccountDeletion(testCtx, sessionsTestRealm, "alice"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("nothing scheduled: %v, want ErrNotFound", err)
	}
	d := accountTestDeletion("alice", sessionsTestRealm, now, now+168*hour)
	if err := s.ScheduleAccountDeletion(testCtx, d); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetAccountDeletion(testCtx, sessionsTestRealm, "alice")
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "scheduled deletion", got, d)
	// A second request does not move the date.
	mustBeErrConflict(t, "second schedule", s.ScheduleAccountDeletion(testCtx, accountTestDeletion("alice", sessionsTestRealm, now+hour, now+169*hour)))
	if got, _ := s.GetAccountDeletion(testCtx, sessionsTestRealm, "alice"); got.DeleteAt != d.DeleteAt {
		t.Fatalf("delete at %d after a second request, want %d", got.DeleteAt, d.DeleteAt)
	}
	for name, bad := range map[string]*store.AccountDeletion{
		"unknown user":          accountTestDeletion("nobody", sessionsTestRealm, now, now+hour),
		"user of another realm": accountTestDeletion("carol", sessionsTestRealm, now, now+hour),
	} {
		if err := s.ScheduleAccountDeletion(testCtx, bad); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("%s: %v, want ErrNotFound", name, err)
		}
	}
	if _, err := s.GetAccountDeletion(testCtx, sessionsTestOther, "alice"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("read from another realm: %v, want ErrNotFound", err)
	}
	mustBeErrNotFound(t, "cancel from another realm", s.CancelAccountDeletion(testCtx, sessionsTestOther, "alice"))
	if err := s.CancelAccountDeletion(testCtx, sessionsTestRealm, "alice"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetAccountDeletion(testCtx, sessionsTestRealm, "alice"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("after cancel: %v, want ErrNotFound", err)
	}
	mustBeErrNotFound(t, "second cancel", s.CancelAccountDeletion(testCtx, sessionsTestRealm, "alice"))
	// Cancelled, it can be asked for again.
	if err := s.ScheduleAccountDeletion(testCtx, d); err != nil {
		t.Fatal(err)
	}
}

func testAccountDeletionDue(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	now, hour := sessionsTestNow, sessionsTestHour
	for _, d := range []*store.AccountDeletion{
		accountTestDeletion("bob", sessionsTestRealm, now-200*hour, now),        // due exactly now
		accountTestDeletion("carol", sessionsTestOther, now-300*hour, now-hour), // the longest overdue
		accountTestDeletion("alice", sessionsTestRealm, now-10*hour, now+1),     // not yet
	} {
		if err := s.ScheduleAccountDeletion(testCtx, d); err != nil {
			t.Fatal(err)
		}
	}
	due, err := s.DueAccountDeletions(testCtx, now, 10)
	if err != nil {
		t.Fatal(err)
	}
	want := []*store.AccountDeletion{
		{UserID: "carol", RealmID: sessionsTestOther, RequestedAt: now - 300*hour, DeleteAt: now - hour, RealmName: "other"},
		{UserID: "bob", RealmID: sessionsTestRealm, RequestedAt: now - 200*hour, DeleteAt: now, RealmName: "acme"},
	}
	mustEqual(t, "due deletions", due, want)
	if due, err := s.DueAccountDeletions(testCtx, now, 1); err != nil || len(due) != 1 || due[0].UserID != "carol" {
		t.Fatalf("limit 1: %v, %v", due, err)
	}
	if due, err := s.DueAccountDeletions(testCtx, now-2*hour, 10); err != nil || len(due) != 0 {
		t.Fatalf("before any is due: %v, %v", due, err)
	}
}

func testAccountDeletionGoesWithUser(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	now := sessionsTestNow
	if err := s.ScheduleAccountDeletion(testCtx, accountTestDeletion("alice", sessionsTestRealm, now, now)); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteUser(testCtx, sessionsTestRealm, "alice"); err != nil {
		t.Fatal(err)
	}
	if due, err := s.DueAccountDeletions(testCtx, now, 10); err != nil || len(due) != 0 {
		t.Fatalf("deletions of a deleted user: %v, %v", due, err)
	}
	if err := s.ScheduleAccountDeletion(testCtx, accountTestDeletion("carol", sessionsTestOther, now, now)); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteRealm(testCtx, "other"); err != nil {
		t.Fatal(err)
	}
	if due, err := s.DueAccountDeletions(testCtx, now, 10); err != nil || len(due) != 0 {
		t.Fatalf("deletions of a deleted realm: %v, %v", due, err)
	}
}

func testAccountDeleteOtherSessions(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	now, hour := sessionsTestNow, sessionsTestHour
	sessionsTestMustCreate(t, s,
		sessionsTestSSO("s1", sessionsTestRealm, "alice", now-50, now+hour),
		sessionsTestOAuth("s1-web", sessionsTestRealm, "alice", "s1", "web", now-40, now+hour),
		sessionsTestSSO("s2", sessionsTestRealm, "alice", now-30, now+hour),
		sessionsTestOAuth("s2-cli", sessionsTestRealm, "alice", "s2", "cli", now-20, now+hour),
		sessionsTestSSO("s3", sessionsTestRealm, "alice", now-60, now-1), // expired, not yet purged
		sessionsTestOAuth("off", sessionsTestRealm, "alice", "", "cli", now-20, now+30*hour),
		sessionsTestSSO("bob", sessionsTestRealm, "bob", now-60, now+hour),
	)
	ended, err := s.DeleteOtherUserSessions(testCtx, sessionsTestRealm, "alice", "s1", now)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "ended sessions", sessionsTestIDs(ended), []string{"s2", "s2-cli"})
	for _, id := range []string{"s1", "s1-web", "off", "bob"} {
		if _, err := s.GetSession(testCtx, sessionsTestRealm, id); err != nil {
			t.Fatalf("session %s should stay: %v", id, err)
		}
	}
	for _, id := range []string{"s2", "s2-cli", "s3"} {
		mustBeErrNotFound(t, "session "+id, func() error { _, err := s.GetSession(testCtx, sessionsTestRealm, id); return err }())
	}
	// Without a session to keep, every online one ends.
	ended, err = s.DeleteOtherUserSessions(testCtx, sessionsTestRealm, "alice", "", now)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "ended sessions", sessionsTestIDs(ended), []string{"s1", "s1-web"})
	if _, err := s.GetSession(testCtx, sessionsTestRealm, "off"); err != nil {
		t.Fatalf("offline session: %v", err)
	}
	if ended, err := s.DeleteOtherUserSessions(testCtx, sessionsTestOther, "bob", "", now); err != nil || len(ended) != 0 {
		t.Fatalf("another realm: %v, %v", sessionsTestIDs(ended), err)
	}
	if _, err := s.GetSession(testCtx, sessionsTestRealm, "bob"); err != nil {
		t.Fatalf("another user's session: %v", err)
	}
}

func testAccountExportReads(t *testing.T, s *store.Store) {
	tok := actionTestFixture(t, s)
	got, err := s.UserActionTokens(testCtx, sessionsTestRealm, "alice")
	if err != nil {
		t.Fatal(err)
	}
	want := *tok
	want.Hash = nil
	mustEqual(t, "action tokens", got, []*store.ActionToken{&want})
	if got, err := s.UserActionTokens(testCtx, sessionsTestOther, "alice"); err != nil || len(got) != 0 {
		t.Fatalf("from another realm: %v, %v", got, err)
	}

	mail := &store.OutboxEmail{ID: "m1", RealmID: sessionsTestRealm, Recipient: "alice@example.test", Subject: "Verify",
		HTMLBody: "<a href=x?token=secret>", TextBody: "x?token=secret", NextAttemptAt: 5, CreatedAt: 5}
	other := &store.OutboxEmail{ID: "m2", RealmID: sessionsTestRealm, Recipient: "bob@example.test", Subject: "Hi",
		HTMLBody: "b", TextBody: "b", NextAttemptAt: 6, CreatedAt: 6}
	for _, m := range []*store.OutboxEmail{mail, other} {
		if err := s.EnqueueEmail(testCtx, m); err != nil {
			t.Fatal(err)
		}
	}
	mails, err := s.EmailsTo(testCtx, sessionsTestRealm, "alice@example.test")
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "mail to alice", mails, []*store.OutboxEmail{{ID: "m1", RealmID: sessionsTestRealm,
		Recipient: "alice@example.test", Subject: "Verify", CreatedAt: 5}})
	for _, tc := range []struct{ realm, to string }{{sessionsTestOther, "alice@example.test"}, {sessionsTestRealm, ""}} {
		if mails, err := s.EmailsTo(testCtx, tc.realm, tc.to); err != nil || len(mails) != 0 {
			t.Fatalf("%s %q: %v, %v", tc.realm, tc.to, mails, err)
		}
	}
}
