package webhooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/idenplane/idenplane/app/bus"
	"github.com/idenplane/idenplane/store"
)

const (
	// DefaultRetryBase is the wait before a message's first retry.
	DefaultRetryBase = 5 * time.Second
	// maxRetryWait caps the doubling waits between retries.
	maxRetryWait = time.Hour
	// RetryFor is how long a message is retried before it is given up on,
	// and how long an endpoint may fail every attempt before it is
	// disabled.
	RetryFor = 24 * time.Hour
	// DefaultAttemptTimeout bounds one attempt, the answer read included.
	DefaultAttemptTimeout = 10 * time.Second
	// PollInterval is how often the worker looks for due messages when
	// nothing wakes it.
	PollInterval = time.Second
	// RotationGrace is how long a rotated-out secret still signs beside
	// the new one.
	RotationGrace = 24 * time.Hour
	// batchSize bounds the messages of one webhook a pass sends, one
	// after the other, and records in one transaction.
	batchSize = 32
	// maxParallel bounds the webhooks a pass sends to at once.
	maxParallel = 64
	// maxErrorLength bounds an attempt's recorded error.
	maxErrorLength = 300
)

// Start runs the delivery worker until ctx ends and returns a function
// that waits for it. One server of a fleet delivers at a time.
func (s *Service) Start(ctx context.Context) (wait func()) {
	return s.deps.Store.Worker(ctx, "webhooks", PollInterval, s.wake, func(ctx context.Context) { s.DeliverDue(ctx) })
}

// DeliverDue sends each webhook's due messages in order, the webhooks in
// parallel, and says how many were delivered.
func (s *Service) DeliverDue(ctx context.Context) (delivered int) {
	due, err := s.deps.Store.DueWebhookMessages(ctx, s.deps.Now().UnixMilli(), batchSize)
	if err != nil {
		if ctx.Err() == nil {
			s.deps.Log.Error("reading the webhook outbox failed", "err", err)
		}
		return 0
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, batch := range due[:min(len(due), maxParallel)] {
		wg.Go(func() {
			n := s.deliver(ctx, batch)
			mu.Lock()
			delivered += n
			mu.Unlock()
		})
	}
	wg.Wait()
	return delivered
}

// deliver sends a webhook's messages one after the other until one fails,
// which waits for its retry and holds the rest behind it; it records the
// attempts together and says how many were delivered. A crash before the
// record sends them again: at least once.
func (s *Service) deliver(ctx context.Context, batch []*store.WebhookMessage) (delivered int) {
	w, err := s.deps.Store.WebhookByID(ctx, batch[0].WebhookID)
	if err != nil {
		return 0 // deleted meanwhile: its messages went with it
	}
	var outcomes []store.WebhookOutcome
	var sendErr error
	var start time.Time
	for _, m := range batch {
		start = s.deps.Now()
		var status int
		status, sendErr = s.send(ctx, w, m, start)
		if ctx.Err() != nil {
			break // shutting down: the message stays due
		}
		a := &store.WebhookAttempt{ID: uuid.Must(uuid.NewV7()).String(), WebhookID: w.ID, MessageID: m.ID,
			AttemptedAt: start.UnixMilli(), StatusCode: status, DurationMs: s.deps.Now().Sub(start).Milliseconds()}
		state := store.WebhookDelivered
		if sendErr != nil {
			a.Error = truncate(sendErr.Error(), maxErrorLength)
			state = store.WebhookPending
			next := start.Add(s.retryWait(m.Attempts + 1))
			if next.Sub(time.UnixMilli(m.CreatedAt)) > RetryFor {
				state = store.WebhookFailed
			} else {
				a.NextAttemptAt = next.UnixMilli()
			}
		}
		outcomes = append(outcomes, store.WebhookOutcome{Attempt: a, State: state})
		if sendErr != nil {
			break
		}
		delivered++
	}
	if len(outcomes) == 0 {
		return 0
	}
	if err := s.deps.Store.RecordWebhookAttempts(context.WithoutCancel(ctx), outcomes, s.deps.Now().UnixMilli()); err != nil {
		s.deps.Log.Error("recording webhook attempts failed", "webhook", w.ID, "err", err)
		return 0
	}
	s.health(ctx, w, sendErr, start)
	return delivered
}

// health keeps the endpoint's failing-since time, and disables a webhook
// whose every attempt has failed for RetryFor.
func (s *Service) health(ctx context.Context, w *store.Webhook, sendErr error, at time.Time) {
	ctx = context.WithoutCancel(ctx)
	var err error
	switch {
	case sendErr == nil && w.FailingSince != 0:
		err = s.deps.Store.SetWebhookHealth(ctx, w.ID, 0, "", at.UnixMilli())
	case sendErr != nil && w.FailingSince == 0:
		err = s.deps.Store.SetWebhookHealth(ctx, w.ID, at.UnixMilli(), "", at.UnixMilli())
	case sendErr != nil && at.Sub(time.UnixMilli(w.FailingSince)) >= RetryFor:
		reason := fmt.Sprintf("every delivery failed since %s; the last: %s",
			time.UnixMilli(w.FailingSince).UTC().Format(time.RFC3339), truncate(sendErr.Error(), maxErrorLength))
		err = s.deps.Store.SetWebhookHealth(ctx, w.ID, w.FailingSince, reason, at.UnixMilli())
		if err == nil {
			s.deps.Log.Warn("webhook disabled", "webhook", w.ID, "url", w.URL, "reason", reason)
			s.disabled(ctx, w, reason)
		}
	}
	if err != nil {
		s.deps.Log.Error("recording a webhook's health failed", "webhook", w.ID, "err", err)
	}
}

// disabled reports a webhook turned off, to the realm's other webhooks
// and its audit streams.
func (s *Service) disabled(ctx context.Context, w *store.Webhook, reason string) {
	realm, err := s.deps.Store.GetRealmByID(ctx, w.RealmID)
	if err == nil {
		err = s.deps.Bus.Publish(ctx, s.deps.Store, realm, bus.WebhookDisabled,
			map[string]any{"webhookId": w.ID, "url": w.URL, "reason": reason})
	}
	if err != nil {
		s.deps.Log.Error("webhook.disabled not published", "webhook", w.ID, "err", err)
	}
}

// retryWait is the wait after the nth failed attempt: RetryBase doubled
// for each before it, at most maxRetryWait, less up to a fifth at random
// so that the endpoints a failure hit together are not retried together.
func (s *Service) retryWait(n int) time.Duration {
	wait := s.deps.RetryBase
	for i := 1; i < n && wait < maxRetryWait; i++ {
		wait *= 2
	}
	wait = min(wait, maxRetryWait)
	return wait - time.Duration(rand.Int64N(int64(wait)/5+1))
}

// send posts m to w, signed with w's secrets in force at, and answers the
// status (0 without an answer) and why it failed.
func (s *Service) send(ctx context.Context, w *store.Webhook, m *store.WebhookMessage, at time.Time) (int, error) {
	sig, err := signature(w, m, at)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.deps.AttemptTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(m.Payload))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "idenplane-webhooks")
	req.Header.Set("webhook-id", m.ID)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(at.Unix(), 10))
	req.Header.Set("webhook-signature", sig)
	resp, err := s.deps.Client.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return 0, fmt.Errorf("no answer within %s", s.deps.AttemptTimeout)
		}
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return resp.StatusCode, nil
}

// signature is the webhook-signature header: v1 under the secret, and
// under the previous one too during a rotation's grace.
func signature(w *store.Webhook, m *store.WebhookMessage, at time.Time) (string, error) {
	secrets := []string{w.Secret}
	if w.PreviousSecret != "" && at.UnixMilli() < w.PreviousUntil {
		secrets = append(secrets, w.PreviousSecret)
	}
	var sigs []string
	for _, secret := range secrets {
		wh, err := standardwebhooks.NewWebhook(secret)
		if err != nil {
			return "", fmt.Errorf("secret of webhook %s: %w", w.ID, err)
		}
		sig, err := wh.Sign(m.ID, at, m.Payload)
		if err != nil {
			return "", err
		}
		sigs = append(sigs, sig)
	}
	return strings.Join(sigs, " "), nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
