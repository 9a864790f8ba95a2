package store

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
)

// Webhook is a realm's endpoint for events (app/webhooks). Secret and
// PreviousSecret are clear here and sealed at rest.
type Webhook struct {
	ID          string
	RealmID     string
	URL         string
	Events      []string // event types, and patterns ending in ".*" or "*"
	Enabled     bool
	Description string
	Secret      string
	// PreviousSecret signs beside Secret until PreviousUntil (Unix
	// milliseconds) after a rotation; "" when none.
	PreviousSecret string
	PreviousUntil  int64
	// DisabledReason says why deliveries turned the webhook off; "" when
	// they did not.
	DisabledReason string
	// FailingSince is when the endpoint began failing every attempt, 0
	// while its deliveries succeed.
	FailingSince int64
	CreatedAt    int64
	UpdatedAt    int64
}

const webhookColumns = `id, realm_id, url, events, enabled, description, secret, previous_secret, previous_until,
	disabled_reason, failing_since, created_at, updated_at`

func webhookSecretAAD(id string) string   { return "webhooks.secret:" + id }
func webhookPreviousAAD(id string) string { return "webhooks.previous_secret:" + id }

func (s *Store) scanWebhook(row scanner) (*Webhook, error) {
	var w Webhook
	var events string
	var secret, previous []byte
	err := row.Scan(&w.ID, &w.RealmID, &w.URL, &events, &w.Enabled, &w.Description, &secret, &previous, &w.PreviousUntil,
		&w.DisabledReason, &w.FailingSince, &w.CreatedAt, &w.UpdatedAt)
	if err != nil {
		return nil, mapErr(err)
	}
	if err := json.Unmarshal([]byte(events), &w.Events); err != nil {
		return nil, fmt.Errorf("events of webhook %s: %w", w.ID, err)
	}
	plain, err := s.open(secret, webhookSecretAAD(w.ID))
	if err != nil {
		return nil, err
	}
	w.Secret = string(plain)
	if plain, err = s.open(previous, webhookPreviousAAD(w.ID)); err != nil {
		return nil, err
	}
	w.PreviousSecret = string(plain)
	return &w, nil
}

// webhookValues are w's column values, in webhookColumns' order.
func (s *Store) webhookValues(w *Webhook) []any {
	events, _ := json.Marshal(w.Events)
	var previous []byte
	if w.PreviousSecret != "" {
		previous = s.seal([]byte(w.PreviousSecret), webhookPreviousAAD(w.ID))
	}
	return []any{w.ID, w.RealmID, w.URL, string(events), w.Enabled, w.Description,
		s.seal([]byte(w.Secret), webhookSecretAAD(w.ID)), previous, w.PreviousUntil, w.DisabledReason, w.FailingSince,
		w.CreatedAt, w.UpdatedAt}
}

// CreateWebhook stores a new webhook.
func (s *Store) CreateWebhook(ctx context.Context, w *Webhook) error {
	if _, err := s.w.ExecContext(ctx, "INSERT INTO webhooks ("+webhookColumns+") VALUES ("+placeholders(13)+")",
		s.webhookValues(w)...); err != nil {
		return fmt.Errorf("create webhook: %w", mapErr(err))
	}
	return nil
}

// GetWebhook finds a webhook of a realm by ID.
func (s *Store) GetWebhook(ctx context.Context, realmID, id string) (*Webhook, error) {
	w, err := s.scanWebhook(s.r.QueryRowContext(ctx,
		"SELECT "+webhookColumns+" FROM webhooks WHERE realm_id = $1 AND id = $2", realmID, id))
	if err != nil {
		return nil, fmt.Errorf("webhook %s: %w", id, err)
	}
	return w, nil
}

// WebhookByID finds a webhook whatever its realm: the worker's, which
// knows a message's webhook by ID alone.
func (s *Store) WebhookByID(ctx context.Context, id string) (*Webhook, error) {
	w, err := s.scanWebhook(s.r.QueryRowContext(ctx, "SELECT "+webhookColumns+" FROM webhooks WHERE id = $1", id))
	if err != nil {
		return nil, fmt.Errorf("webhook %s: %w", id, err)
	}
	return w, nil
}

// ListWebhooks lists a realm's webhooks, oldest first.
func (s *Store) ListWebhooks(ctx context.Context, realmID string) ([]*Webhook, error) {
	return s.queryWebhooks(ctx, "SELECT "+webhookColumns+" FROM webhooks WHERE realm_id = $1 ORDER BY created_at, id", realmID)
}

// EnabledWebhooks lists a realm's enabled webhooks, oldest first: those an
// event is offered to.
func (s *Store) EnabledWebhooks(ctx context.Context, realmID string) ([]*Webhook, error) {
	return s.queryWebhooks(ctx, "SELECT "+webhookColumns+" FROM webhooks WHERE realm_id = $1 AND enabled ORDER BY created_at, id",
		realmID)
}

func (s *Store) queryWebhooks(ctx context.Context, query string, args ...any) ([]*Webhook, error) {
	rows, err := s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list webhooks: %w", mapErr(err))
	}
	defer rows.Close()
	out := []*Webhook{}
	for rows.Next() {
		w, err := s.scanWebhook(rows)
		if err != nil {
			return nil, fmt.Errorf("list webhooks: %w", err)
		}
		out = append(out, w)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list webhooks: %w", mapErr(err))
	}
	return out, nil
}

// UpdateWebhook writes every field of w but its realm and creation time.
func (s *Store) UpdateWebhook(ctx context.Context, w *Webhook) error {
	v := s.webhookValues(w)
	// v is in webhookColumns' order: all but created_at are written.
	res, err := s.w.ExecContext(ctx, `UPDATE webhooks SET url = $3, events = $4, enabled = $5, description = $6, secret = $7,
		previous_secret = $8, previous_until = $9, disabled_reason = $10, failing_since = $11, updated_at = $12
		WHERE id = $1 AND realm_id = $2`, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[12])
	n, err := rowsAffected(res, err, "update webhook "+w.ID)
	if err == nil && n == 0 {
		err = fmt.Errorf("webhook %s: %w", w.ID, ErrNotFound)
	}
	return err
}

// DeleteWebhook deletes a webhook with its messages and attempts.
func (s *Store) DeleteWebhook(ctx context.Context, realmID, id string) error {
	res, err := s.w.ExecContext(ctx, "DELETE FROM webhooks WHERE realm_id = $1 AND id = $2", realmID, id)
	n, err := rowsAffected(res, err, "delete webhook "+id)
	if err == nil && n == 0 {
		err = fmt.Errorf("webhook %s: %w", id, ErrNotFound)
	}
	return err
}

// The states of a webhook message.
const (
	WebhookPending   = "pending"
	WebhookDelivered = "delivered"
	WebhookFailed    = "failed" // given up on
)

// WebhookMessage is one event for one webhook: its outbox row.
type WebhookMessage struct {
	ID            string // the webhook-id header, the same on every attempt
	WebhookID     string
	EventType     string
	Payload       []byte // the JSON body sent
	CreatedAt     int64
	State         string
	Attempts      int
	NextAttemptAt int64
	FinishedAt    int64 // when delivered or given up on; 0 while pending
}

const webhookMessageColumns = `id, webhook_id, event_type, payload, created_at, state, attempts, next_attempt_at, finished_at`

func scanWebhookMessage(row scanner) (*WebhookMessage, error) {
	var m WebhookMessage
	if err := row.Scan(&m.ID, &m.WebhookID, &m.EventType, &m.Payload, &m.CreatedAt, &m.State, &m.Attempts,
		&m.NextAttemptAt, &m.FinishedAt); err != nil {
		return nil, mapErr(err)
	}
	return &m, nil
}

// AddWebhookMessages queues messages, in the caller's transaction when it
// runs in one: the event and its deliveries commit together.
func (s *Store) AddWebhookMessages(ctx context.Context, msgs []*WebhookMessage) error {
	for _, m := range msgs {
		if _, err := s.w.ExecContext(ctx, "INSERT INTO webhook_messages ("+webhookMessageColumns+") VALUES ("+placeholders(9)+")",
			m.ID, m.WebhookID, m.EventType, m.Payload, m.CreatedAt, m.State, m.Attempts, m.NextAttemptAt, m.FinishedAt); err != nil {
			return fmt.Errorf("queue webhook message: %w", mapErr(err))
		}
	}
	return nil
}

// DueWebhookMessages returns, for each enabled webhook whose oldest
// pending message is due at now, its oldest pending messages in the order
// they were queued, at most perWebhook: a webhook's messages go out in
// that order, each after the one before it is delivered or given up on.
// The webhooks come oldest message first.
func (s *Store) DueWebhookMessages(ctx context.Context, now int64, perWebhook int) ([][]*WebhookMessage, error) {
	// Per webhook, so that each read walks the queue index from the head
	// of one webhook's queue, however long the backlog behind it.
	rows, err := s.r.QueryContext(ctx, `SELECT w.id FROM webhooks w WHERE w.enabled
		AND EXISTS (SELECT 1 FROM webhook_messages m WHERE m.webhook_id = w.id AND m.state = 'pending')`)
	if err != nil {
		return nil, fmt.Errorf("due webhook messages: %w", mapErr(err))
	}
	var hooks []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, fmt.Errorf("due webhook messages: %w", mapErr(err))
		}
		hooks = append(hooks, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("due webhook messages: %w", mapErr(err))
	}
	var out [][]*WebhookMessage
	for _, id := range hooks {
		batch, err := s.pendingWebhookMessages(ctx, id, perWebhook)
		if err != nil {
			return nil, err
		}
		if len(batch) > 0 && batch[0].NextAttemptAt <= now {
			out = append(out, batch)
		}
	}
	slices.SortFunc(out, func(a, b []*WebhookMessage) int {
		return cmp.Or(cmp.Compare(a[0].CreatedAt, b[0].CreatedAt), cmp.Compare(a[0].ID, b[0].ID))
	})
	return out, nil
}

// pendingWebhookMessages are a webhook's oldest pending messages, at most
// limit, in order.
func (s *Store) pendingWebhookMessages(ctx context.Context, webhookID string, limit int) ([]*WebhookMessage, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT "+webhookMessageColumns+` FROM webhook_messages
		WHERE webhook_id = $1 AND state = 'pending' ORDER BY created_at, id LIMIT $2`, webhookID, limit)
	if err != nil {
		return nil, fmt.Errorf("pending webhook messages: %w", mapErr(err))
	}
	defer rows.Close()
	var out []*WebhookMessage
	for rows.Next() {
		m, err := scanWebhookMessage(rows)
		if err != nil {
			return nil, fmt.Errorf("pending webhook messages: %w", err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pending webhook messages: %w", mapErr(err))
	}
	return out, nil
}

// WebhookAttempt is one try at delivering a message.
type WebhookAttempt struct {
	ID            string
	WebhookID     string
	MessageID     string
	EventType     string // the message's, on reads
	AttemptedAt   int64
	StatusCode    int // 0 when no answer came
	DurationMs    int64
	Error         string
	NextAttemptAt int64 // 0 when none follows
}

// WebhookOutcome is an attempt and the state it moved its message to:
// delivered, failed (given up on), or pending again for its
// NextAttemptAt.
type WebhookOutcome struct {
	Attempt *WebhookAttempt
	State   string
}

// RecordWebhookAttempts stores attempts and moves their messages on, in
// one transaction.
func (s *Store) RecordWebhookAttempts(ctx context.Context, outcomes []WebhookOutcome, now int64) error {
	return s.Tx(ctx, func(tx *Store) error {
		for _, o := range outcomes {
			a := o.Attempt
			if _, err := tx.w.ExecContext(ctx, `INSERT INTO webhook_attempts (id, webhook_id, message_id, attempted_at, status_code,
				duration_ms, error, next_attempt_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, a.ID, a.WebhookID, a.MessageID,
				a.AttemptedAt, a.StatusCode, a.DurationMs, a.Error, a.NextAttemptAt); err != nil {
				return fmt.Errorf("record webhook attempt: %w", mapErr(err))
			}
			finished := int64(0)
			if o.State != WebhookPending {
				finished = now
			}
			_, err := tx.w.ExecContext(ctx, `UPDATE webhook_messages SET state = $2, attempts = attempts + 1, next_attempt_at = $3,
				finished_at = $4 WHERE id = $1`, a.MessageID, o.State, a.NextAttemptAt, finished)
			if err != nil {
				return fmt.Errorf("move webhook message on: %w", mapErr(err))
			}
		}
		return nil
	})
}

// SetWebhookHealth records whether a webhook's endpoint is failing
// (failingSince, 0 when it answered) and, when disabledReason is not "",
// turns it off with that reason.
func (s *Store) SetWebhookHealth(ctx context.Context, id string, failingSince int64, disabledReason string, now int64) error {
	_, err := s.w.ExecContext(ctx, `UPDATE webhooks SET failing_since = $2,
		enabled = CASE WHEN $3 = '' THEN enabled ELSE FALSE END,
		disabled_reason = CASE WHEN $3 = '' THEN disabled_reason ELSE $3 END,
		updated_at = CASE WHEN $3 = '' THEN updated_at ELSE $4 END WHERE id = $1`, id, failingSince, disabledReason, now)
	if err != nil {
		return fmt.Errorf("webhook %s health: %w", id, mapErr(err))
	}
	return nil
}

// ListWebhookAttempts lists a webhook's attempts, newest first, skipping
// first and returning at most max.
func (s *Store) ListWebhookAttempts(ctx context.Context, webhookID string, first, max int) ([]*WebhookAttempt, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT a.id, a.webhook_id, a.message_id, m.event_type, a.attempted_at, a.status_code,
		a.duration_ms, a.error, a.next_attempt_at FROM webhook_attempts a JOIN webhook_messages m ON m.id = a.message_id
		WHERE a.webhook_id = $1 ORDER BY a.attempted_at DESC, a.id DESC LIMIT $2 OFFSET $3`, webhookID, max, first)
	if err != nil {
		return nil, fmt.Errorf("webhook attempts: %w", mapErr(err))
	}
	defer rows.Close()
	out := []*WebhookAttempt{}
	for rows.Next() {
		var a WebhookAttempt
		if err := rows.Scan(&a.ID, &a.WebhookID, &a.MessageID, &a.EventType, &a.AttemptedAt, &a.StatusCode, &a.DurationMs,
			&a.Error, &a.NextAttemptAt); err != nil {
			return nil, fmt.Errorf("webhook attempts: %w", mapErr(err))
		}
		out = append(out, &a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("webhook attempts: %w", mapErr(err))
	}
	return out, nil
}

// DeleteFinishedWebhookMessages deletes the messages delivered or given up
// on at or before before, with their attempts, and counts them.
func (s *Store) DeleteFinishedWebhookMessages(ctx context.Context, before int64) (int64, error) {
	res, err := s.w.ExecContext(ctx, "DELETE FROM webhook_messages WHERE state <> 'pending' AND finished_at <= $1", before)
	return rowsAffected(res, err, "delete finished webhook messages")
}
