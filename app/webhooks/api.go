package webhooks

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net/http"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/bus"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/validate"
	"github.com/idenplane/idenplane/store"
)

const (
	maxURLLength         = 2048
	maxEvents            = 50
	maxDescriptionLength = 255
	defaultDeliveries    = 50
)

// Rep is a webhook as the admin API shows it. Secret is shown once: in the
// answer that made it (a create, a rotation).
type Rep struct {
	ID          string   `json:"id"`
	URL         string   `json:"url"`
	Events      []string `json:"events"`
	Enabled     bool     `json:"enabled"`
	Description string   `json:"description"`
	Secret      string   `json:"secret,omitempty"`
	// PreviousSecretValidUntil is when the secret a rotation replaced
	// stops signing (Unix milliseconds); 0 when none does.
	PreviousSecretValidUntil int64  `json:"previousSecretValidUntil,omitempty"`
	DisabledReason           string `json:"disabledReason,omitempty"`
	FailingSince             int64  `json:"failingSince,omitempty"`
	CreatedTimestamp         int64  `json:"createdTimestamp"`
	UpdatedTimestamp         int64  `json:"updatedTimestamp"`
}

// Input is the body of a create and of a PUT.
type Input struct {
	URL         string   `json:"url"`
	Events      []string `json:"events"`
	Enabled     *bool    `json:"enabled"` // absent: true
	Description string   `json:"description"`
}

// Patch is the body of a PATCH: the fields given change; rotateSecret
// makes a new secret, shown in the answer, the old one signing beside it
// for RotationGrace.
type Patch struct {
	URL          *string  `json:"url"`
	Events       []string `json:"events"`
	Enabled      *bool    `json:"enabled"`
	Description  *string  `json:"description"`
	RotateSecret bool     `json:"rotateSecret"`
}

// Attempt is one delivery attempt in the deliveries list.
type Attempt struct {
	ID            string `json:"id"`
	MessageID     string `json:"messageId"` // the webhook-id header
	EventType     string `json:"eventType"`
	AttemptedAt   int64  `json:"attemptedAt"`
	StatusCode    int    `json:"statusCode,omitempty"`
	DurationMs    int64  `json:"durationMs"`
	Error         string `json:"error,omitempty"`
	NextAttemptAt int64  `json:"nextAttemptAt,omitempty"`
}

func rep(w *store.Webhook, now int64) Rep {
	r := Rep{ID: w.ID, URL: w.URL, Events: w.Events, Enabled: w.Enabled, Description: w.Description,
		DisabledReason: w.DisabledReason, FailingSince: w.FailingSince, CreatedTimestamp: w.CreatedAt, UpdatedTimestamp: w.UpdatedAt}
	if w.PreviousSecret != "" && w.PreviousUntil > now {
		r.PreviousSecretValidUntil = w.PreviousUntil
	}
	return r
}

// newSecret is a Standard Webhooks secret: whsec_ and 32 random bytes in
// base64.
func newSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return "whsec_" + base64.StdEncoding.EncodeToString(b)
}

// checkURL refuses what the worker must never call (httpx.CheckEndpointURL).
func (s *Service) checkURL(ctx context.Context, raw string) error {
	return httpx.CheckEndpointURL(ctx, "url", raw, maxURLLength, s.deps.OutboundAllowed)
}

func checkEvents(events []string) error {
	if len(events) == 0 {
		return apperr.Field("events", "is required: the event types to send, such as user.created or user.*")
	}
	if len(events) > maxEvents {
		return apperr.Field("events", "holds more than %d entries", maxEvents)
	}
	for _, e := range events {
		if !bus.ValidPattern(e) {
			return apperr.Field("events", "%q is not an event type or a group of them (docs/events.md)", e)
		}
	}
	return nil
}

func checkDescription(d string) error {
	if d == "" {
		return nil
	}
	return validate.DisplayName("description", d, maxDescriptionLength)
}

// input reads and checks the body of a create or a PUT.
func (s *Service) input(r *http.Request) (Input, error) {
	var in Input
	if err := httpx.DecodeJSON(r, &in); err != nil {
		return in, err
	}
	if err := s.checkURL(r.Context(), in.URL); err != nil {
		return in, err
	}
	if err := checkEvents(in.Events); err != nil {
		return in, err
	}
	return in, checkDescription(in.Description)
}

// Create registers a webhook and answers it with its secret, once.
func (s *Service) Create(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	in, err := s.input(r)
	if err != nil {
		return err
	}
	now := s.deps.Now().UnixMilli()
	hook := &store.Webhook{ID: uuid.NewString(), RealmID: realm.ID, URL: in.URL, Events: in.Events, Enabled: in.Enabled == nil || *in.Enabled,
		Description: in.Description, Secret: newSecret(), CreatedAt: now, UpdatedAt: now}
	if err := s.deps.Store.CreateWebhook(r.Context(), hook); err != nil {
		return err
	}
	out := rep(hook, now)
	out.Secret = hook.Secret
	return httpx.Created(w, s.deps.BaseURL+r.URL.Path+"/"+hook.ID, out)
}

// List lists the realm's webhooks, without their secrets.
func (s *Service) List(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	hooks, err := s.deps.Store.ListWebhooks(r.Context(), realm.ID)
	if err != nil {
		return err
	}
	now := s.deps.Now().UnixMilli()
	out := make([]Rep, len(hooks))
	for i, h := range hooks {
		out[i] = rep(h, now)
	}
	return httpx.OK(w, out)
}

// webhook is the webhook the path names, or a 404.
func (s *Service) webhook(r *http.Request) (*store.Webhook, error) {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return nil, err
	}
	h, err := s.deps.Store.GetWebhook(r.Context(), realm.ID, mux.Vars(r)["id"])
	if errors.Is(err, store.ErrNotFound) {
		return nil, apperr.NotFound("webhook")
	}
	return h, err
}

// Get answers one webhook, without its secret.
func (s *Service) Get(w http.ResponseWriter, r *http.Request) error {
	h, err := s.webhook(r)
	if err != nil {
		return err
	}
	return httpx.OK(w, rep(h, s.deps.Now().UnixMilli()))
}

// Put replaces a webhook's URL, events, state and description; its secret
// stays.
func (s *Service) Put(w http.ResponseWriter, r *http.Request) error {
	h, err := s.webhook(r)
	if err != nil {
		return err
	}
	in, err := s.input(r)
	if err != nil {
		return err
	}
	h.URL, h.Events, h.Description = in.URL, in.Events, in.Description
	s.setEnabled(h, in.Enabled == nil || *in.Enabled)
	return s.save(w, r, h, "")
}

// Patch changes the fields given, and rotates the secret when asked.
func (s *Service) Patch(w http.ResponseWriter, r *http.Request) error {
	h, err := s.webhook(r)
	if err != nil {
		return err
	}
	var in Patch
	if err := httpx.DecodeJSON(r, &in); err != nil {
		return err
	}
	if in.URL != nil {
		if err := s.checkURL(r.Context(), *in.URL); err != nil {
			return err
		}
		h.URL = *in.URL
	}
	if in.Events != nil {
		if err := checkEvents(in.Events); err != nil {
			return err
		}
		h.Events = in.Events
	}
	if in.Description != nil {
		if err := checkDescription(*in.Description); err != nil {
			return err
		}
		h.Description = *in.Description
	}
	if in.Enabled != nil {
		s.setEnabled(h, *in.Enabled)
	}
	secret := ""
	if in.RotateSecret {
		secret = newSecret()
		h.PreviousSecret, h.PreviousUntil, h.Secret = h.Secret, s.deps.Now().Add(RotationGrace).UnixMilli(), secret
	}
	return s.save(w, r, h, secret)
}

// setEnabled turns h on or off; turning it on forgets why it was turned
// off and how long it had been failing.
func (s *Service) setEnabled(h *store.Webhook, on bool) {
	if on && !h.Enabled {
		h.DisabledReason, h.FailingSince = "", 0
	}
	h.Enabled = on
}

func (s *Service) save(w http.ResponseWriter, r *http.Request, h *store.Webhook, secret string) error {
	now := s.deps.Now().UnixMilli()
	h.UpdatedAt = now
	if err := s.deps.Store.UpdateWebhook(r.Context(), h); err != nil {
		return err
	}
	out := rep(h, now)
	out.Secret = secret
	return httpx.OK(w, out)
}

// Delete deletes a webhook with its queued messages and attempts.
func (s *Service) Delete(w http.ResponseWriter, r *http.Request) error {
	h, err := s.webhook(r)
	if err != nil {
		return err
	}
	if err := s.deps.Store.DeleteWebhook(r.Context(), h.RealmID, h.ID); err != nil {
		return err
	}
	return httpx.NoContent(w)
}

// TestDelivery is the answer of the test endpoint: the message queued.
type TestDelivery struct {
	MessageID string `json:"messageId"`
}

// Test queues a webhook.test event for this webhook alone, whatever it
// subscribed to, and answers 202: the deliveries list shows the outcome.
func (s *Service) Test(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	h, err := s.webhook(r)
	if err != nil {
		return err
	}
	if !h.Enabled {
		return apperr.Conflict("enabled", "the webhook is disabled: enable it to send it events")
	}
	e := &bus.Event{ID: "evt_" + uuid.Must(uuid.NewV7()).String(), Type: bus.WebhookTest, Realm: realm, Time: s.deps.Now(),
		Data: map[string]any{"webhookId": h.ID, "message": "a test event from Idenplane"}}
	body, err := e.JSON()
	if err != nil {
		return err
	}
	m := s.message(h.ID, e, body)
	if err := s.deps.Store.AddWebhookMessages(r.Context(), []*store.WebhookMessage{m}); err != nil {
		return err
	}
	s.Wake()
	httpx.WriteJSON(w, http.StatusAccepted, TestDelivery{MessageID: m.ID})
	return nil
}

// Deliveries lists the webhook's delivery attempts, newest first, paged
// with first and max.
func (s *Service) Deliveries(w http.ResponseWriter, r *http.Request) error {
	h, err := s.webhook(r)
	if err != nil {
		return err
	}
	return httpx.ListPage(w, r, defaultDeliveries, func(first, max int) ([]*store.WebhookAttempt, error) {
		return s.deps.Store.ListWebhookAttempts(r.Context(), h.ID, first, max)
	}, func(a *store.WebhookAttempt) Attempt {
		return Attempt{ID: a.ID, MessageID: a.MessageID, EventType: a.EventType, AttemptedAt: a.AttemptedAt,
			StatusCode: a.StatusCode, DurationMs: a.DurationMs, Error: a.Error, NextAttemptAt: a.NextAttemptAt}
	})
}
