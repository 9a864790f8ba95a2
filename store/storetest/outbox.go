package storetest

import (
	"errors"
	"testing"

	"github.com/idenplane/idenplane/store"
)

// outboxSuite is the conformance tests of the email outbox.
func outboxSuite() []subTest {
	return []subTest{
		{"OutboxDueOrderAndLimit", testOutboxDueOrderAndLimit},
		{"OutboxRetryAndGiveUp", testOutboxRetryAndGiveUp},
		{"OutboxSentIsFinal", testOutboxSentIsFinal},
		{"OutboxEnqueueInTx", testOutboxEnqueueInTx},
		{"OutboxDeleteFinished", testOutboxDeleteFinished},
	}
}

func outboxTestMail(id string, due int64) *store.OutboxEmail {
	return &store.OutboxEmail{ID: id, RealmID: sessionsTestRealm, Recipient: id + "@example.test", Template: "verify-email",
		Subject:  "Subject " + id,
		HTMLBody: "<p>" + id + "</p>", TextBody: id, NextAttemptAt: due, CreatedAt: due}
}

func outboxTestDueIDs(t *testing.T, s *store.Store, now int64, limit int) []string {
	t.Helper()
	due, err := s.DueEmails(testCtx, now, limit)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range due {
		ids = append(ids, e.ID)
	}
	return ids
}

func testOutboxDueOrderAndLimit(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	now := sessionsTestNow
	for _, e := range []*store.OutboxEmail{outboxTestMail("b", now-10), outboxTestMail("a", now-20), outboxTestMail("later", now+1000)} {
		if err := s.EnqueueEmail(testCtx, e); err != nil {
			t.Fatal(err)
		}
	}
	mustEqual(t, "due", outboxTestDueIDs(t, s, now, 10), []string{"a", "b"})
	mustEqual(t, "due limited", outboxTestDueIDs(t, s, now, 1), []string{"a"})
	mustEqual(t, "due later", outboxTestDueIDs(t, s, now+1000, 10), []string{"a", "b", "later"})
	due, err := s.DueEmails(testCtx, now, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := outboxTestMail("a", now-20)
	want.RealmName = "acme"
	mustEqual(t, "due mail", due[0], want)
}

func testOutboxRetryAndGiveUp(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	now := sessionsTestNow
	if err := s.EnqueueEmail(testCtx, outboxTestMail("m", now)); err != nil {
		t.Fatal(err)
	}
	if err := s.MarkEmailFailed(testCtx, "m", 1, "connection refused", now+60_000, now); err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "due before retry", outboxTestDueIDs(t, s, now+59_999, 10), []string(nil))
	mustEqual(t, "due at retry", outboxTestDueIDs(t, s, now+60_000, 10), []string{"m"})
	e, err := s.GetOutboxEmail(testCtx, "m")
	if err != nil {
		t.Fatal(err)
	}
	if e.Attempts != 1 || e.LastError != "connection refused" || e.FailedAt != 0 || e.SentAt != 0 {
		t.Fatalf("after a failed attempt: %+v", e)
	}
	if err := s.MarkEmailFailed(testCtx, "m", 2, "still down", 0, now+70_000); err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "due after giving up", outboxTestDueIDs(t, s, now+1e9, 10), []string(nil))
	if e, err = s.GetOutboxEmail(testCtx, "m"); err != nil {
		t.Fatal(err)
	}
	if e.Attempts != 2 || e.FailedAt != now+70_000 || e.LastError != "still down" || e.HTMLBody != "" || e.TextBody != "" {
		t.Fatalf("after giving up: %+v", e)
	}
	mustBeErrNotFound(t, "sending an abandoned mail", s.MarkEmailSent(testCtx, "m", 3, now))
}

func testOutboxSentIsFinal(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	now := sessionsTestNow
	if err := s.EnqueueEmail(testCtx, outboxTestMail("m", now)); err != nil {
		t.Fatal(err)
	}
	if err := s.MarkEmailSent(testCtx, "m", 1, now+5); err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "due after send", outboxTestDueIDs(t, s, now+1e9, 10), []string(nil))
	mustBeErrNotFound(t, "second send", s.MarkEmailSent(testCtx, "m", 2, now+6))
	mustBeErrNotFound(t, "failing a sent mail", s.MarkEmailFailed(testCtx, "m", 2, "x", now+60_000, now+6))
	mustBeErrNotFound(t, "unknown mail", s.MarkEmailSent(testCtx, "nope", 1, now))
	e, err := s.GetOutboxEmail(testCtx, "m")
	if err != nil || e.SentAt != now+5 || e.Attempts != 1 || e.Template != "verify-email" || e.Recipient != "m@example.test" {
		t.Fatalf("sent mail %+v, %v", e, err)
	}
	if e.HTMLBody != "" || e.TextBody != "" {
		t.Fatalf("a sent mail kept its bodies: %+v", e)
	}
}

// A mail enqueued in a transaction that rolls back was never queued, and
// one for an unknown realm is refused.
func testOutboxEnqueueInTx(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	now := sessionsTestNow
	boom := errors.New("boom")
	err := s.Tx(testCtx, func(tx *store.Store) error {
		if err := tx.EnqueueEmail(testCtx, outboxTestMail("m", now)); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatal(err)
	}
	mustEqual(t, "due after rollback", outboxTestDueIDs(t, s, now, 10), []string(nil))
	bad := outboxTestMail("x", now)
	bad.RealmID = "no-such-realm"
	mustBeErrNotFound(t, "unknown realm", s.EnqueueEmail(testCtx, bad))
}

// The retention sweep deletes what was sent or given up before its limit
// and leaves pending mail, however old.
func testOutboxDeleteFinished(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	now := sessionsTestNow
	for _, id := range []string{"old-sent", "old-failed", "new-sent", "pending"} {
		if err := s.EnqueueEmail(testCtx, outboxTestMail(id, now-100)); err != nil {
			t.Fatal(err)
		}
	}
	for _, err := range []error{s.MarkEmailSent(testCtx, "old-sent", 1, now-50), s.MarkEmailFailed(testCtx, "old-failed", 5, "down", 0, now-50),
		s.MarkEmailSent(testCtx, "new-sent", 1, now)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	n, err := s.DeleteFinishedEmails(testCtx, now-10)
	if err != nil || n != 2 {
		t.Fatalf("deleted %d, %v; want the 2 finished before the limit", n, err)
	}
	for id, kept := range map[string]bool{"old-sent": false, "old-failed": false, "new-sent": true, "pending": true} {
		_, err := s.GetOutboxEmail(testCtx, id)
		if kept && err != nil {
			t.Errorf("%s: %v, want kept", id, err)
		} else if !kept && !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s: %v, want deleted", id, err)
		}
	}
}
