package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// TestCLIWebhookSurvivesKill: a user created while the webhook's endpoint
// fails is still delivered after the server is killed with SIGKILL and
// started again: the message was written with the event, not kept in
// memory.
func TestCLIWebhookSurvivesKill(t *testing.T) {
	var (
		mu       sync.Mutex
		secret   string
		answer   atomic.Int32
		attempts atomic.Int32
		got      = make(chan string, 10)
	)
	answer.Store(http.StatusServiceUnavailable)
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		attempts.Add(1)
		status := int(answer.Load())
		if status == http.StatusOK {
			mu.Lock()
			wh, err := standardwebhooks.NewWebhook(secret)
			mu.Unlock()
			if err != nil || wh.Verify(body, r.Header) != nil {
				t.Errorf("a delivery that does not verify: %s", body)
			}
			var p struct {
				Type string `json:"type"`
			}
			_ = json.Unmarshal(body, &p)
			got <- p.Type
		}
		w.WriteHeader(status)
	}))
	defer rcv.Close()

	db := t.TempDir() + "/hooks.db"
	env := []string{"IDENPLANE_ADMIN_API_KEY=" + cliAPIKey, "IDENPLANE_OUTBOUND_ALLOW=127.0.0.0/8"}
	s := cliStartServer(t, db, env...)
	s.must(http.MethodPost, "/admin/realms", cliAPIKey, map[string]any{"name": "acme"}, http.StatusCreated)
	var hook struct {
		Secret string `json:"secret"`
	}
	if err := json.Unmarshal(s.must(http.MethodPost, "/admin/realms/acme/webhooks", cliAPIKey,
		map[string]any{"url": rcv.URL + "/hook", "events": []string{"user.created"}}, http.StatusCreated), &hook); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	secret = hook.Secret
	mu.Unlock()
	s.must(http.MethodPost, "/admin/realms/acme/users", cliAPIKey, map[string]any{"username": "kept"}, http.StatusCreated)
	if !within(cliWaitBound, func() bool { return attempts.Load() > 0 }) {
		t.Fatal("the server never tried the failing endpoint")
	}
	if err := s.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	s.waitExit()

	answer.Store(http.StatusOK)
	s = cliStartServer(t, db, env...)
	select {
	case typ := <-got:
		if typ != "user.created" {
			t.Fatalf("delivered %q after the restart, want user.created", typ)
		}
	case <-time.After(cliWaitBound):
		t.Fatal("the event was not delivered after the restart")
	}
	s.stopGracefully()
}
