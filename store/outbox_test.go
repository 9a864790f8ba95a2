package store

import (
	"errors"
	"testing"
)

// outboxSuite is the conformance tests of the email outbox.
func outboxSuite() []suiteTest {
	return []suiteTest{
		{"OutboxDueOrderAndLimit", suiteOutboxDueOrderAndLimit},
		{"OutboxRetryAndGiveUp", suiteOutboxRetryAndGiveUp},
		{"OutboxSentIsFinal", suiteOutboxSentIsFinal},
		{"OutboxEnqueueInTx", suiteOutboxEnqueueInTx},
	}
}

func outboxTestMail(id string, due int64) *OutboxEmail {
	return &OutboxEmail{ID: id, RealmID: sessionsTestRealm, Recipient: id + "@example.test", Subject: "Subject " + id,
		HTMLBody: "<p>" + id + "</p>", TextBody: id, NextAttemptAt: due, CreatedAt: due}
}

func outboxTestDueIDs(t *testing.T, s *Store, now int64, limit int) []string {
	t.Helper()
	due, err := s.DueEmails(suiteCtx, now, limit)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range due {
		ids = append(ids, e.ID)
	}
	return ids
}

func suiteOutboxDueOrderAndLimit(t *testing.T, s *Store) {
	sessionsTestFixture(t, s)
	now := sessionsTestNow
	for _, e := range []*OutboxEmail{outboxTestMail("b", now-10), outboxTestMail("a", now-20), outboxTestMail("later", now+1000)} {
		if err := s.EnqueueEmail(suiteCtx, e); err != nil {
			t.Fatal(err)
		}
	}
	suiteMustEqual(t, "due", outboxTestDueIDs(t, s, now, 10), []string{"a", "b"})
	suiteMustEqual(t, "due limited", outboxTestDueIDs(t, s, now, 1), []string{"a"})
	suiteMustEqual(t, "due later", outboxTestDueIDs(t, s, now+1000, 10), []string{"a", "b", "later"})
	due, err := s.DueEmails(suiteCtx, now, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := outboxTestMail("a", now-20)
	want.RealmName = "acme"
	suiteMustEqual(t, "due mail", due[0], want)
}

func suiteOutboxRetryAndGiveUp(t *testing.T, s *Store) {
	sessionsTestFixture(t, s)
	now := sessionsTestNow
	if err := s.EnqueueEmail(suiteCtx, outboxTestMail("m", now)); err != nil {
		t.Fatal(err)
	}
	if err := s.MarkEmailFailed(suiteCtx, "m", 1, "connection refused", now+60_000, now); err != nil {
		t.Fatal(err)
	}
	suiteMustEqual(t, "due before retry", outboxTestDueIDs(t, s, now+59_999, 10), []string(nil))
	suiteMustEqual(t, "due at retry", outboxTestDueIDs(t, s, now+60_000, 10), []string{"m"})
	e, err := s.GetOutboxEmail(suiteCtx, "m")
	if err != nil {
		t.Fatal(err)
	}
	if e.Attempts != 1 || e.LastError != "connection refused" || e.FailedAt != 0 || e.SentAt != 0 {
		t.Fatalf("after a failed attempt: %+v", e)
	}
	if err := s.MarkEmailFailed(suiteCtx, "m", 2, "still down", 0, now+70_000); err != nil {
		t.Fatal(err)
	}
	suiteMustEqual(t, "due after giving up", outboxTestDueIDs(t, s, now+1e9, 10), []string(nil))
	if e, err = s.GetOutboxEmail(suiteCtx, "m"); err != nil {
		t.Fatal(err)
	}
	if e.Attempts != 2 || e.FailedAt != now+70_000 || e.LastError != "still down" {
		t.Fatalf("after giving up: %+v", e)
	}
	if err := s.MarkEmailSent(suiteCtx, "m", 3, now); !errors.Is(err, ErrNotFound) {
		t.Fatalf("sending an abandoned mail: %v, want ErrNotFound", err)
	}
}

func suiteOutboxSentIsFinal(t *testing.T, s *Store) {
	sessionsTestFixture(t, s)
	now := sessionsTestNow
	if err := s.EnqueueEmail(suiteCtx, outboxTestMail("m", now)); err != nil {
		t.Fatal(err)
	}
	if err := s.MarkEmailSent(suiteCtx, "m", 1, now+5); err != nil {
		t.Fatal(err)
	}
	suiteMustEqual(t, "due after send", outboxTestDueIDs(t, s, now+1e9, 10), []string(nil))
	if err := s.MarkEmailSent(suiteCtx, "m", 2, now+6); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second send: %v, want ErrNotFound", err)
	}
	if err := s.MarkEmailFailed(suiteCtx, "m", 2, "x", now+60_000, now+6); !errors.Is(err, ErrNotFound) {
		t.Fatalf("failing a sent mail: %v, want ErrNotFound", err)
	}
	if err := s.MarkEmailSent(suiteCtx, "nope", 1, now); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown mail: %v, want ErrNotFound", err)
	}
	e, err := s.GetOutboxEmail(suiteCtx, "m")
	if err != nil || e.SentAt != now+5 || e.Attempts != 1 {
		t.Fatalf("sent mail %+v, %v", e, err)
	}
}

// A mail enqueued in a transaction that rolls back was never queued, and
// one for an unknown realm is refused.
func suiteOutboxEnqueueInTx(t *testing.T, s *Store) {
	sessionsTestFixture(t, s)
	now := sessionsTestNow
	boom := errors.New("boom")
	err := s.Tx(suiteCtx, func(tx *Store) error {
		if err := tx.EnqueueEmail(suiteCtx, outboxTestMail("m", now)); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatal(err)
	}
	suiteMustEqual(t, "due after rollback", outboxTestDueIDs(t, s, now, 10), []string(nil))
	bad := outboxTestMail("x", now)
	bad.RealmID = "no-such-realm"
	if err := s.EnqueueEmail(suiteCtx, bad); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown realm: %v, want ErrNotFound", err)
	}
}
