package webhooks

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/store"
)

// Payload is the body of every delivery: Standard Webhooks' recommended
// shape, with the realm the event happened in.
type Payload struct {
	Type      EventType `json:"type"`
	Timestamp string    `json:"timestamp"` // RFC 3339, milliseconds, UTC
	Realm     string    `json:"realm"`
	Data      any       `json:"data"`
}

// Publish queues an event of type t with data for every enabled webhook of
// the realm that takes it, in tx: the caller's transaction, so that the
// event and its messages commit together. The caller wakes the worker
// (Wake) once tx has committed.
func (s *Service) Publish(ctx context.Context, tx *store.Store, realm *store.Realm, t EventType, data any) (int, error) {
	hooks, err := s.enabledWebhooks(ctx, realm.ID)
	if err != nil || len(hooks) == 0 {
		return 0, err
	}
	var msgs []*store.WebhookMessage
	for _, w := range hooks {
		if matches(w.Events, t) {
			m, err := s.message(w.ID, realm, t, data)
			if err != nil {
				return 0, err
			}
			msgs = append(msgs, m)
		}
	}
	if len(msgs) == 0 {
		return 0, nil
	}
	return len(msgs), tx.AddWebhookMessages(ctx, msgs)
}

// message makes the outbox row of one event for one webhook.
func (s *Service) message(webhookID string, realm *store.Realm, t EventType, data any) (*store.WebhookMessage, error) {
	now := s.deps.Now()
	body, err := json.Marshal(Payload{Type: t, Timestamp: now.UTC().Format(time.RFC3339Nano), Realm: realm.Name, Data: data})
	if err != nil {
		return nil, fmt.Errorf("webhook payload of %s: %w", t, err)
	}
	// Version 7 IDs grow with time: a webhook's messages of one
	// millisecond still go out in the order they were made.
	return &store.WebhookMessage{ID: "msg_" + uuid.Must(uuid.NewV7()).String(), WebhookID: webhookID, EventType: string(t),
		Payload: body, CreatedAt: now.UnixMilli(), State: store.WebhookPending, NextAttemptAt: now.UnixMilli()}, nil
}
