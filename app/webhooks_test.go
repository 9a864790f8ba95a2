package app

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/idenplane/idenplane/app/bus"
	"github.com/idenplane/idenplane/app/webhooks"
)

// hookReceiver is a webhook endpoint on loopback: it verifies every
// delivery with the Standard Webhooks library under the secrets it is
// given, and answers with the statuses queued (200 once they run out).
type hookReceiver struct {
	t   *testing.T
	url string
	mu  sync.Mutex
	// secrets each delivery must verify under, every one of them.
	secrets  []string
	answers  []int
	received []hookDelivery
}

type hookDelivery struct {
	id, signature string
	payload       bus.Payload
}

func newHookReceiver(t *testing.T) *hookReceiver {
	h := &hookReceiver{t: t}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		defer h.mu.Unlock()
		for _, secret := range h.secrets {
			wh, err := standardwebhooks.NewWebhook(secret)
			if err != nil {
				t.Errorf("secret %q: %v", secret, err)
				continue
			}
			// The receiver's clock is the real one; the server signs on
			// its own, which the tests move: the timestamp is not checked.
			if err := wh.VerifyIgnoringTimestamp(body, r.Header); err != nil {
				t.Errorf("delivery %s does not verify under %s…: %v", r.Header.Get("webhook-id"), secret[:10], err)
			}
		}
		var p bus.Payload
		if err := json.Unmarshal(body, &p); err != nil {
			t.Errorf("payload %s: %v", body, err)
		}
		h.received = append(h.received, hookDelivery{id: r.Header.Get("webhook-id"), signature: r.Header.Get("webhook-signature"), payload: p})
		status := http.StatusOK
		if len(h.answers) > 0 {
			status, h.answers = h.answers[0], h.answers[1:]
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	h.url = srv.URL + "/hook"
	return h
}

func (h *hookReceiver) set(secrets []string, answers ...int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.secrets, h.answers = secrets, answers
}

func (h *hookReceiver) deliveries() []hookDelivery {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]hookDelivery(nil), h.received...)
}

func (h *hookReceiver) types() (out []string) {
	for _, d := range h.deliveries() {
		out = append(out, string(d.payload.Type))
	}
	return out
}

// hookTestServer is an App on a hand-moved clock that may call loopback,
// with realm acme, a client cli allowed the password grant, and bob.
func hookTestServer(t *testing.T) (*testServer, *testClock) {
	clock := &testClock{t: time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)}
	s := newTestServer(t, allowLoopback, func(c *Config) { c.Now = clock.now })
	s.createRealm("acme")
	mustStatus(t, s.admin(http.MethodPost, "/admin/realms/acme/clients", map[string]any{"clientId": "cli", "clientType": "PUBLIC",
		"grantTypes": []string{"password"}}), http.StatusCreated)
	return s, clock
}

func (s *testServer) createHook(t *testing.T, body map[string]any) (id, secret string) {
	t.Helper()
	r := s.admin(http.MethodPost, "/admin/realms/acme/webhooks", body)
	mustStatus(t, r, http.StatusCreated)
	obj := r.object(t)
	id, _ = obj["id"].(string)
	secret, _ = obj["secret"].(string)
	if !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("created webhook without a Standard Webhooks secret: %v", obj)
	}
	return id, secret
}

// deliverAll runs the worker's passes until one delivers nothing.
func (s *testServer) deliverAll(t *testing.T) {
	t.Helper()
	for range 20 {
		if s.app.webhooks.DeliverDue(context.Background()) == 0 {
			return
		}
	}
	t.Fatal("deliveries did not settle in 20 passes")
}

func (s *testServer) passwordSignIn(username, password string) int {
	s.t.Helper()
	form := url.Values{"grant_type": {"password"}, "client_id": {"cli"}, "username": {username}, "password": {password}}
	return s.request(http.MethodPost, "/realms/acme/protocol/openid-connect/token", form.Encode(),
		"Content-Type: application/x-www-form-urlencoded").Status
}

// A user created by an admin and a failed sign-in reach a webhook that
// takes user.* and login.failed, in that order, each verifying under its
// secret; a successful sign-in, which it does not take, does not.
func TestWebhookDeliversEvents(t *testing.T) {
	s, _ := hookTestServer(t)
	rcv := newHookReceiver(t)
	id, secret := s.createHook(t, map[string]any{"url": rcv.url, "events": []string{"user.*", "login.failed"}, "description": "CRM"})
	rcv.set([]string{secret})
	if got := s.admin(http.MethodGet, "/admin/realms/acme/webhooks/"+id, nil).object(t); got["secret"] != nil || got["enabled"] != true {
		t.Fatalf("a read shows the secret, or the webhook is off: %v", got)
	}

	bob := s.createUser("acme", map[string]any{"username": "bob", "email": "bob@example.test", "password": "bob-password-1"})
	if st := s.passwordSignIn("bob", "wrong"); st != http.StatusUnauthorized && st != http.StatusBadRequest {
		t.Fatalf("wrong password: %d", st)
	}
	if st := s.passwordSignIn("bob", "bob-password-1"); st != http.StatusOK {
		t.Fatalf("right password: %d", st)
	}
	s.deliverAll(t)

	got := rcv.deliveries()
	if types := rcv.types(); strings.Join(types, ",") != "user.created,login.failed" {
		t.Fatalf("delivered %v, want user.created then login.failed", types)
	}
	created, failed := got[0].payload, got[1].payload
	if data, _ := created.Data.(map[string]any); created.Realm != "acme" || data["userId"] != bob["id"] {
		t.Fatalf("user.created payload %+v", created)
	}
	if data, _ := failed.Data.(map[string]any); data["clientId"] != "cli" || data["error"] == "" ||
		data["details"].(map[string]any)["username"] != "bob" {
		t.Fatalf("login.failed payload %+v", failed)
	}
	if !strings.HasPrefix(got[0].id, "msg_") || got[0].id == got[1].id {
		t.Fatalf("webhook-ids %q %q", got[0].id, got[1].id)
	}
	// The webhook's creation is in the admin events, its secret not.
	if trail := s.admin(http.MethodGet, "/admin/realms/acme/admin-events?resourceTypes=WEBHOOK", nil); !strings.Contains(string(trail.Body), id) ||
		strings.Contains(string(trail.Body), secret) {
		t.Fatalf("admin events of the webhook: %s", trail.Body)
	}
	var list []webhooks.Attempt
	s.admin(http.MethodGet, "/admin/realms/acme/webhooks/"+id+"/deliveries", nil).decode(t, &list)
	if len(list) != 2 || list[0].EventType != "login.failed" || list[0].StatusCode != http.StatusOK || list[1].MessageID != got[0].id {
		t.Fatalf("deliveries list %+v", list)
	}
}

// A failing endpoint is retried with growing waits on the server's clock,
// and the endpoint's next message waits behind the failing one; the same
// webhook-id comes on every attempt.
func TestWebhookRetriesInOrder(t *testing.T) {
	s, clock := hookTestServer(t)
	rcv := newHookReceiver(t)
	id, secret := s.createHook(t, map[string]any{"url": rcv.url, "events": []string{"user.created"}})
	rcv.set([]string{secret}, http.StatusInternalServerError, http.StatusServiceUnavailable)
	s.createUser("acme", map[string]any{"username": "first"})
	s.createUser("acme", map[string]any{"username": "second"})

	attempt := func(wantTotal int) webhooks.Attempt {
		t.Helper()
		s.app.webhooks.DeliverDue(context.Background())
		if n := len(rcv.deliveries()); n != wantTotal {
			t.Fatalf("%d requests at the receiver, want %d", n, wantTotal)
		}
		var list []webhooks.Attempt
		s.admin(http.MethodGet, "/admin/realms/acme/webhooks/"+id+"/deliveries?max=1", nil).decode(t, &list)
		return list[0]
	}
	first := attempt(1)
	if first.StatusCode != http.StatusInternalServerError || first.NextAttemptAt == 0 {
		t.Fatalf("first attempt %+v", first)
	}
	wait1 := time.Duration(first.NextAttemptAt-first.AttemptedAt) * time.Millisecond
	attempt(1) // not due yet: nothing sent, and the second user's message waits behind
	clock.advance(wait1)
	second := attempt(2)
	wait2 := time.Duration(second.NextAttemptAt-second.AttemptedAt) * time.Millisecond
	if second.StatusCode != http.StatusServiceUnavailable || wait2 <= wait1 {
		t.Fatalf("second attempt %+v: wait %s after %s, want a longer one", second, wait2, wait1)
	}
	clock.advance(wait2)
	// The third succeeds, and the message behind it goes in the same pass.
	if last := attempt(4); last.StatusCode != http.StatusOK {
		t.Fatalf("the second user's attempt %+v", last)
	}
	s.deliverAll(t)
	got := rcv.deliveries()
	names := []string{}
	for _, d := range got {
		user, _ := d.payload.Data.(map[string]any)["user"].(map[string]any)
		names = append(names, user["username"].(string))
	}
	if strings.Join(names, ",") != "first,first,first,second" || got[0].id != got[2].id {
		t.Fatalf("deliveries %v (ids %s %s): want first three times under one webhook-id, then second", names, got[0].id, got[2].id)
	}
}

// An endpoint that fails every attempt for a day is disabled, with the
// reason on it, and its message given up on.
func TestWebhookAutoDisabled(t *testing.T) {
	s, clock := hookTestServer(t)
	rcv := newHookReceiver(t)
	id, secret := s.createHook(t, map[string]any{"url": rcv.url, "events": []string{"user.created"}})
	watcher := newHookReceiver(t)
	_, watcherSecret := s.createHook(t, map[string]any{"url": watcher.url, "events": []string{"webhook.*"}})
	watcher.set([]string{watcherSecret})
	failing := make([]int, 100)
	for i := range failing {
		failing[i] = http.StatusBadGateway
	}
	rcv.set([]string{secret}, failing...)
	s.createUser("acme", map[string]any{"username": "lost"})
	for range 60 {
		s.app.webhooks.DeliverDue(context.Background())
		clock.advance(time.Hour)
	}
	got := s.admin(http.MethodGet, "/admin/realms/acme/webhooks/"+id, nil).object(t)
	if got["enabled"] != false || !strings.Contains(got["disabledReason"].(string), "HTTP 502") {
		t.Fatalf("after a day of failures: %v", got)
	}
	// The realm's other webhooks hear of it.
	s.deliverAll(t)
	if d := watcher.deliveries(); len(d) != 1 || d[0].payload.Type != bus.WebhookDisabled ||
		d[0].payload.Data.(map[string]any)["webhookId"] != id || d[0].payload.Data.(map[string]any)["reason"] != got["disabledReason"] {
		t.Fatalf("the watcher got %+v", d)
	}
	n := len(rcv.deliveries())
	s.createUser("acme", map[string]any{"username": "after"})
	s.deliverAll(t)
	if len(rcv.deliveries()) != n {
		t.Fatal("a disabled webhook was sent an event")
	}
	// Enabling it again clears the reason.
	mustStatus(t, s.admin(http.MethodPatch, "/admin/realms/acme/webhooks/"+id, map[string]any{"enabled": true}), http.StatusOK)
	if got := s.admin(http.MethodGet, "/admin/realms/acme/webhooks/"+id, nil).object(t); got["disabledReason"] != nil {
		t.Fatalf("enabled again: %v", got)
	}
}

// The test endpoint sends a webhook.test event; after a rotation the
// deliveries carry both signatures, each verifying under its secret.
func TestWebhookTestAndRotation(t *testing.T) {
	s, clock := hookTestServer(t)
	rcv := newHookReceiver(t)
	id, secret := s.createHook(t, map[string]any{"url": rcv.url, "events": []string{"login.succeeded"}})
	rcv.set([]string{secret})
	r := s.admin(http.MethodPost, "/admin/realms/acme/webhooks/"+id+"/test", nil)
	mustStatus(t, r, http.StatusAccepted)
	msg := r.object(t)["messageId"]
	s.deliverAll(t)
	if got := rcv.deliveries(); len(got) != 1 || got[0].payload.Type != bus.WebhookTest || got[0].id != msg {
		t.Fatalf("test delivery %+v, want one webhook.test as %v", got, msg)
	}

	r = s.admin(http.MethodPatch, "/admin/realms/acme/webhooks/"+id, map[string]any{"rotateSecret": true})
	mustStatus(t, r, http.StatusOK)
	rotated := r.object(t)
	newSecret, _ := rotated["secret"].(string)
	if newSecret == "" || newSecret == secret || rotated["previousSecretValidUntil"] == nil {
		t.Fatalf("rotation answered %v", rotated)
	}
	rcv.set([]string{secret, newSecret})
	mustStatus(t, s.admin(http.MethodPost, "/admin/realms/acme/webhooks/"+id+"/test", nil), http.StatusAccepted)
	s.deliverAll(t)
	if got := rcv.deliveries(); len(got) != 2 || len(strings.Fields(got[1].signature)) != 2 {
		t.Fatalf("delivery after the rotation: %+v, want two signatures", got)
	}
	// After the grace, the old secret signs no more.
	clock.advance(webhooks.RotationGrace + time.Minute)
	rcv.set([]string{newSecret})
	mustStatus(t, s.admin(http.MethodPost, "/admin/realms/acme/webhooks/"+id+"/test", nil), http.StatusAccepted)
	s.deliverAll(t)
	if got := rcv.deliveries(); len(got) != 3 || len(strings.Fields(got[2].signature)) != 1 {
		t.Fatalf("delivery after the grace: %+v, want one signature", got)
	}
	mustStatus(t, s.admin(http.MethodPatch, "/admin/realms/acme/webhooks/"+id, map[string]any{"enabled": false}), http.StatusOK)
	mustError(t, s.admin(http.MethodPost, "/admin/realms/acme/webhooks/"+id+"/test", nil), http.StatusConflict, "conflict", "enabled")
}

// Bad input is refused with the field named, and nothing is stored.
func TestWebhookBadInput(t *testing.T) {
	s := newTestServer(t) // no --outbound-allow: loopback is off limits
	s.createRealm("acme")
	for _, tc := range []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"no url", map[string]any{"events": []string{"user.*"}}, "url"},
		{"http", map[string]any{"url": "http://hooks.example.com/x", "events": []string{"user.*"}}, "url"},
		{"credentials", map[string]any{"url": "https://user:pw@hooks.example.com/x", "events": []string{"user.*"}}, "url"},
		{"fragment", map[string]any{"url": "https://hooks.example.com/x#frag", "events": []string{"user.*"}}, "url"},
		{"relative", map[string]any{"url": "/x", "events": []string{"user.*"}}, "url"},
		{"loopback", map[string]any{"url": "https://127.0.0.1/x", "events": []string{"user.*"}}, "url"},
		{"private", map[string]any{"url": "https://10.1.2.3/x", "events": []string{"user.*"}}, "url"},
		{"metadata", map[string]any{"url": "https://169.254.169.254/latest/meta-data", "events": []string{"user.*"}}, "url"},
		{"decimal address", map[string]any{"url": "https://2130706433/x", "events": []string{"user.*"}}, "url"},
		{"hex address", map[string]any{"url": "https://0x7f.1/x", "events": []string{"user.*"}}, "url"},
		{"name of loopback", map[string]any{"url": "https://localhost/x", "events": []string{"user.*"}}, "url"},
		{"http to loopback without --outbound-allow", map[string]any{"url": "http://127.0.0.1:9/x", "events": []string{"user.*"}}, "url"},
		{"no events", map[string]any{"url": "https://hooks.example.com/x"}, "events"},
		{"unknown event", map[string]any{"url": "https://hooks.example.com/x", "events": []string{"user.exploded"}}, "events"},
		{"unknown group", map[string]any{"url": "https://hooks.example.com/x", "events": []string{"cake.*"}}, "events"},
		{"long url", map[string]any{"url": "https://hooks.example.com/" + strings.Repeat("a", 2100), "events": []string{"*"}}, "url"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mustError(t, s.admin(http.MethodPost, "/admin/realms/acme/webhooks", tc.body), http.StatusBadRequest, "invalid_field", tc.field)
		})
	}
	mustError(t, s.admin(http.MethodPost, "/admin/realms/acme/webhooks", map[string]any{"url": "https://hooks.example.com/x",
		"events": []string{"*"}, "colour": "red"}), http.StatusBadRequest, "unknown_field", "colour")
	var list []webhooks.Rep
	s.admin(http.MethodGet, "/admin/realms/acme/webhooks", nil).decode(t, &list)
	if len(list) != 0 {
		t.Fatalf("refused webhooks stored: %+v", list)
	}
	mustStatus(t, s.admin(http.MethodGet, "/admin/realms/acme/webhooks/nope", nil), http.StatusNotFound)
	mustStatus(t, s.admin(http.MethodDelete, "/admin/realms/acme/webhooks/nope", nil), http.StatusNotFound)
}

// PUT replaces, DELETE removes with the queue.
func TestWebhookReplaceAndDelete(t *testing.T) {
	s, _ := hookTestServer(t)
	rcv := newHookReceiver(t)
	id, secret := s.createHook(t, map[string]any{"url": rcv.url, "events": []string{"user.created"}})
	rcv.set([]string{secret})
	r := s.admin(http.MethodPut, "/admin/realms/acme/webhooks/"+id, map[string]any{"url": rcv.url + "/v2",
		"events": []string{"user.deleted"}, "enabled": true, "description": "moved"})
	mustStatus(t, r, http.StatusOK)
	if got := r.object(t); got["description"] != "moved" || got["secret"] != nil {
		t.Fatalf("after PUT: %v", got)
	}
	s.createUser("acme", map[string]any{"username": "ignored"})
	s.deliverAll(t)
	if n := len(rcv.deliveries()); n != 0 {
		t.Fatalf("%d deliveries of an event the webhook no longer takes", n)
	}
	mustStatus(t, s.admin(http.MethodDelete, "/admin/realms/acme/webhooks/"+id, nil), http.StatusNoContent)
	mustStatus(t, s.admin(http.MethodGet, "/admin/realms/acme/webhooks/"+id, nil), http.StatusNotFound)
}
