package webhooks

import (
	"context"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/bus"
	"github.com/idenplane/idenplane/store"
)

// Wants says whether an enabled webhook of the realm takes events of type
// t (bus.Subscriber).
func (s *Service) Wants(ctx context.Context, realm *store.Realm, t bus.Type) bool {
	hooks, err := s.enabledWebhooks(ctx, realm.ID)
	if err != nil {
		return true // let Queue meet the error and fail the event's transaction
	}
	for _, h := range hooks {
		if bus.Matches(h.Events, t) {
			return true
		}
	}
	return false
}

// Queue writes, in tx, a message of e for every enabled webhook of its
// realm that takes it (bus.Subscriber).
func (s *Service) Queue(ctx context.Context, tx *store.Store, e *bus.Event) (bool, error) {
	hooks, err := s.enabledWebhooks(ctx, e.Realm.ID)
	if err != nil || len(hooks) == 0 {
		return false, err
	}
	var msgs []*store.WebhookMessage
	for _, w := range hooks {
		if !bus.Matches(w.Events, e.Type) {
			continue
		}
		body, err := e.JSON()
		if err != nil {
			return false, err
		}
		msgs = append(msgs, s.message(w.ID, e, body))
	}
	if len(msgs) == 0 {
		return false, nil
	}
	return true, tx.AddWebhookMessages(ctx, msgs)
}

// message makes the outbox row of one event for one webhook.
func (s *Service) message(webhookID string, e *bus.Event, body []byte) *store.WebhookMessage {
	// Version 7 IDs grow with time: a webhook's messages of one
	// millisecond still go out in the order they were made.
	return &store.WebhookMessage{ID: "msg_" + uuid.Must(uuid.NewV7()).String(), WebhookID: webhookID, EventType: string(e.Type),
		Payload: body, CreatedAt: e.Time.UnixMilli(), State: store.WebhookPending, NextAttemptAt: e.Time.UnixMilli()}
}
