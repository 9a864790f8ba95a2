package app

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app/mail"
	"github.com/idenplane/idenplane/store"
)

// testClock is a clock the test moves by hand.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// outboxTestServer is an App on a hand-moved clock whose realm acme sends
// through a Resend stand-in, with alice (who has an email) in it.
func outboxTestServer(t *testing.T) (*testServer, *testClock, *providerTestServer, string) {
	clock := &testClock{t: time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)}
	s := newTestServer(t, allowLoopback, func(c *Config) { c.Now = clock.now })
	s.createRealm("acme")
	alice := s.createUser("acme", map[string]any{"username": "alice", "email": "alice@example.test"})
	p := startProviderTestServer(t, "resend", nil)
	s.setRealmEmail("acme", func(r *store.Realm) {
		r.EmailProvider, r.EmailProviderConfig = "resend", providerConfig("resend", p.url)
	})
	return s, clock, p, alice["id"].(string)
}

// outboxOnly returns the one mail in the outbox, whatever its state.
func outboxOnly(t *testing.T, s *testServer) *store.OutboxEmail {
	t.Helper()
	var id string
	err := s.store.ReadTx(context.Background(), func(tx *store.Store) error {
		due, err := tx.DueEmails(context.Background(), 1<<62, 10)
		if len(due) == 1 {
			id = due[0].ID
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if id == "" {
		t.Fatal("no pending mail in the outbox")
	}
	e, err := s.store.GetOutboxEmail(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// A provider failing, then working: the mail waits out the backoff on the
// App's clock and goes on the next attempt that is due.
func TestOutboxRetriesUntilSent(t *testing.T) {
	s, clock, p, alice := outboxTestServer(t)
	ctx := context.Background()
	mustStatus(t, s.admin(http.MethodPost, "/admin/realms/acme/users/"+alice+"/send-verification-email", nil), http.StatusOK)
	p.answerWith(http.StatusServiceUnavailable, `{"message":"try later"}`)

	if n := s.app.mail.DeliverDue(ctx); n != 0 || p.count() != 1 {
		t.Fatalf("sent %d with %d requests, want 0 and 1", n, p.count())
	}
	e := outboxOnly(t, s)
	if e.Attempts != 1 || !strings.Contains(e.LastError, "503") || e.NextAttemptAt != clock.now().Add(time.Minute).UnixMilli() {
		t.Fatalf("after one failure: %+v", e)
	}
	// Not due yet: no request.
	clock.advance(59 * time.Second)
	if s.app.mail.DeliverDue(ctx); p.count() != 1 {
		t.Fatalf("%d requests before the retry was due", p.count())
	}
	clock.advance(time.Second)
	if s.app.mail.DeliverDue(ctx); p.count() != 2 {
		t.Fatalf("%d requests", p.count())
	}
	if e = outboxOnly(t, s); e.Attempts != 2 || e.NextAttemptAt != clock.now().Add(5*time.Minute).UnixMilli() {
		t.Fatalf("after two failures: %+v", e)
	}
	p.answerWith(0, "")
	clock.advance(5 * time.Minute)
	if n := s.app.mail.DeliverDue(ctx); n != 1 || p.count() != 3 {
		t.Fatalf("sent %d with %d requests", n, p.count())
	}
	if e, err := s.store.GetOutboxEmail(ctx, e.ID); err != nil || e.SentAt != clock.now().UnixMilli() || e.Attempts != 3 || e.LastError != "" {
		t.Fatalf("after sending: %+v, %v", e, err)
	}
	clock.advance(24 * time.Hour)
	if s.app.mail.DeliverDue(ctx); p.count() != 3 {
		t.Fatal("a sent mail was sent again")
	}
	// The mail carried a working link.
	token := verificationToken(t, p.bodies[2])
	realm, _ := s.store.GetRealm(ctx, "acme")
	if _, err := s.store.ConsumeActionToken(ctx, realm.ID, store.HashToken(token), store.ActionVerifyEmail, clock.now().UnixMilli()-23*3600_000); err != nil {
		t.Fatalf("the mailed token: %v", err)
	}
}

// With the provider down, the mail stays in the outbox through every
// retry, and is kept (marked failed) when the worker gives up.
func TestOutboxKeepsMailWhileProviderDown(t *testing.T) {
	s, clock, p, alice := outboxTestServer(t)
	ctx := context.Background()
	p.answerWith(http.StatusInternalServerError, `{"message":"down"}`)
	mustStatus(t, s.admin(http.MethodPost, "/admin/realms/acme/users/"+alice+"/send-verification-email", nil), http.StatusOK)
	waits := []time.Duration{time.Minute, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour}
	var id string
	for i, wait := range waits {
		s.app.mail.DeliverDue(ctx)
		e := outboxOnly(t, s)
		id = e.ID
		if e.Attempts != i+1 || e.SentAt != 0 || e.FailedAt != 0 || e.Recipient != "alice@example.test" {
			t.Fatalf("after %d failures: %+v", i+1, e)
		}
		clock.advance(wait)
	}
	s.app.mail.DeliverDue(ctx)
	e, err := s.store.GetOutboxEmail(ctx, id)
	if err != nil || e.Attempts != 5 || e.FailedAt != clock.now().UnixMilli() || e.SentAt != 0 || !strings.Contains(e.LastError, "500") {
		t.Fatalf("after giving up: %+v, %v", e, err)
	}
	clock.advance(24 * time.Hour)
	if s.app.mail.DeliverDue(ctx); p.count() != 5 {
		t.Fatalf("%d requests, want 5 attempts in all", p.count())
	}
}

// The worker started by RunJobs sends a mail as soon as it is queued: the
// enqueue wakes it, well before its next poll.
func TestMailWorkerWokenByEnqueue(t *testing.T) {
	s := newTestServer(t, allowLoopback)
	s.createRealm("acme")
	alice := s.createUser("acme", map[string]any{"username": "alice", "email": "alice@example.test"})
	p := startProviderTestServer(t, "resend", nil)
	s.setRealmEmail("acme", func(r *store.Realm) {
		r.EmailProvider, r.EmailProviderConfig = "resend", providerConfig("resend", p.url)
	})
	ctx, cancel := context.WithCancel(context.Background())
	wait := s.app.mail.Start(ctx)
	defer wait()
	defer cancel()
	<-time.After(10 * time.Millisecond) // let the first (empty) pass finish, so the wake is what sends
	mustStatus(t, s.admin(http.MethodPost, "/admin/realms/acme/users/"+alice["id"].(string)+"/send-verification-email", nil), http.StatusOK)
	select {
	case <-p.received:
	case <-time.After(mail.PollInterval / 2):
		t.Fatal("the queued mail was not sent on wake")
	}
	if !strings.Contains(p.bodies[0], "/realms/acme/verify-email?token=") {
		t.Fatalf("text %q", p.bodies[0])
	}
}
