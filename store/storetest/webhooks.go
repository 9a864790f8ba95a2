package storetest

import (
	"errors"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/store"
)

func webhookSuite() []subTest {
	return []subTest{
		{"WebhookCRUD", testWebhookCRUD},
		{"WebhookQueueInOrder", testWebhookQueue},
	}
}

func testWebhook(id, realmID string, at int64) *store.Webhook {
	return &store.Webhook{ID: id, RealmID: realmID, URL: "https://hooks.example.test/" + id, Events: []string{"user.*", "login.failed"},
		Enabled: true, Description: "hook " + id, Secret: "whsec_c2VjcmV0LW9mLQ==" + id, CreatedAt: at, UpdatedAt: at}
}

func testWebhookCRUD(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	a, b := testWebhook("w1", sessionsTestRealm, 10), testWebhook("w2", sessionsTestRealm, 20)
	b.PreviousSecret, b.PreviousUntil = "whsec_b2xk", 5000
	for _, w := range []*store.Webhook{a, b, testWebhook("w3", sessionsTestOther, 5)} {
		if err := s.CreateWebhook(testCtx, w); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.GetWebhook(testCtx, sessionsTestRealm, "w2")
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "webhook", got, b)
	if _, err := s.GetWebhook(testCtx, sessionsTestOther, "w2"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("another realm's webhook: %v", err)
	}
	list, err := s.ListWebhooks(testCtx, sessionsTestRealm)
	if err != nil || len(list) != 2 || list[0].ID != "w1" || list[1].ID != "w2" {
		t.Fatalf("list: %+v %v", list, err)
	}
	a.Enabled, a.Events, a.URL, a.UpdatedAt = false, []string{"*"}, "https://other.example.test/", 30
	if err := s.UpdateWebhook(testCtx, a); err != nil {
		t.Fatal(err)
	}
	enabled, err := s.EnabledWebhooks(testCtx, sessionsTestRealm)
	if err != nil || len(enabled) != 1 || enabled[0].ID != "w2" {
		t.Fatalf("enabled after disabling w1: %+v %v", enabled, err)
	}
	got, _ = s.GetWebhook(testCtx, sessionsTestRealm, "w1")
	mustEqual(t, "updated webhook", got, a)
	if err := s.SetWebhookHealth(testCtx, "w2", 40, "failing for a day", 50); err != nil {
		t.Fatal(err)
	}
	got, _ = s.GetWebhook(testCtx, sessionsTestRealm, "w2")
	if got.Enabled || got.DisabledReason != "failing for a day" || got.FailingSince != 40 || got.UpdatedAt != 50 {
		t.Fatalf("after auto-disable: %+v", got)
	}
	if err := s.DeleteWebhook(testCtx, sessionsTestRealm, "w1"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteWebhook(testCtx, sessionsTestRealm, "w1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
}

// Each webhook's messages go out in order: only the oldest pending one of
// each is due, and the next once it is delivered or given up on.
func testWebhookQueue(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	for _, w := range []*store.Webhook{testWebhook("w1", sessionsTestRealm, 10), testWebhook("w2", sessionsTestRealm, 20)} {
		if err := s.CreateWebhook(testCtx, w); err != nil {
			t.Fatal(err)
		}
	}
	msg := func(id, hook string, at int64) *store.WebhookMessage {
		return &store.WebhookMessage{ID: id, WebhookID: hook, EventType: "user.created", Payload: []byte(`{"id":"` + id + `"}`),
			CreatedAt: at, State: store.WebhookPending, NextAttemptAt: at}
	}
	if err := s.AddWebhookMessages(testCtx, []*store.WebhookMessage{msg("m1", "w1", 100), msg("m2", "w1", 101),
		msg("m3", "w2", 102), msg("m4", "w1", 103), msg("m5", "w1", 104)}); err != nil {
		t.Fatal(err)
	}
	// The batches: each webhook's oldest pending messages, in order, at
	// most three; w1's first.
	due := func(now int64) (ids []string) {
		t.Helper()
		batches, err := s.DueWebhookMessages(testCtx, now, 3)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range batches {
			var batch []string
			for _, m := range b {
				batch = append(batch, m.ID)
			}
			ids = append(ids, strings.Join(batch, ","))
		}
		return ids
	}
	mustEqual(t, "due at 200", due(200), []string{"m1,m2,m4", "m3"})
	// m1 fails and waits; m2 waits behind it.
	if err := s.RecordWebhookAttempts(testCtx, []store.WebhookOutcome{{Attempt: &store.WebhookAttempt{ID: "a1", WebhookID: "w1",
		MessageID: "m1", AttemptedAt: 200, StatusCode: 500, DurationMs: 3, Error: "HTTP 500", NextAttemptAt: 300},
		State: store.WebhookPending}}, 200); err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "due at 250", due(250), []string{"m3"})
	if err := s.RecordWebhookAttempts(testCtx, []store.WebhookOutcome{{Attempt: &store.WebhookAttempt{ID: "a2", WebhookID: "w1",
		MessageID: "m1", AttemptedAt: 300, StatusCode: 204, DurationMs: 2}, State: store.WebhookDelivered}}, 300); err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "due at 300", due(300), []string{"m2,m4,m5", "m3"})
	attempts, err := s.ListWebhookAttempts(testCtx, "w1", 0, 10)
	if err != nil || len(attempts) != 2 || attempts[0].ID != "a2" || attempts[1].StatusCode != 500 ||
		attempts[1].EventType != "user.created" || attempts[1].NextAttemptAt != 300 {
		t.Fatalf("attempts: %+v %v", attempts, err)
	}
	if page, _ := s.ListWebhookAttempts(testCtx, "w1", 1, 10); len(page) != 1 || page[0].ID != "a1" {
		t.Fatalf("second page: %+v", page)
	}
	if n, err := s.DeleteFinishedWebhookMessages(testCtx, 300); err != nil || n != 1 {
		t.Fatalf("deleted %d finished messages (%v), want m1", n, err)
	}
	if left, _ := s.ListWebhookAttempts(testCtx, "w1", 0, 10); len(left) != 0 {
		t.Fatalf("attempts of a deleted message kept: %+v", left)
	}
}
