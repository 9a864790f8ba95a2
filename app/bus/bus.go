// Package bus is the server's one stream of events: the sign-in's login
// events, the admin API's changes and the other areas' lifecycle events,
// each published once, in a transaction, to the subscribers that take it
// (the webhooks, the audit streams, the plugins' observers). A subscriber
// queues what it will do with an event in that transaction, so the event
// and its outbox rows commit together, and does it once woken after the
// commit (docs/events.md).
package bus

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/store"
)

// Subscriber takes events off the bus.
type Subscriber interface {
	// Wants says whether it takes events of type t in realm: when no
	// subscriber does, the event is not made at all. It is asked on every
	// event, so it answers from a cache.
	Wants(ctx context.Context, realm *store.Realm, t Type) bool
	// Queue writes, in tx, what it will do with e, and says whether it
	// wrote anything.
	Queue(ctx context.Context, tx *store.Store, e *Event) (bool, error)
	// Wake starts the work queued, once its transaction has committed.
	Wake()
}

// Bus hands each event to its subscribers.
type Bus struct {
	subs []Subscriber
	now  func() time.Time
}

// New makes a bus without subscribers; now is the clock of the events'
// timestamps.
func New(now func() time.Time) *Bus {
	if now == nil {
		now = time.Now
	}
	return &Bus{now: now}
}

// Subscribe adds s. The server subscribes its areas while it is built,
// before any event.
func (b *Bus) Subscribe(s Subscriber) { b.subs = append(b.subs, s) }

// Wants says whether a subscriber takes events of type t in realm.
func (b *Bus) Wants(ctx context.Context, realm *store.Realm, t Type) bool {
	if b == nil || realm == nil || t == "" {
		return false
	}
	for _, s := range b.subs {
		if s.Wants(ctx, realm, t) {
			return true
		}
	}
	return false
}

// Queue offers the event of type t with data to every subscriber that
// takes it, in tx: the transaction that makes the change it reports. Wake
// what it answers once tx has committed.
func (b *Bus) Queue(ctx context.Context, tx *store.Store, realm *store.Realm, t Type, data any) (Pending, error) {
	if b == nil || realm == nil || t == "" {
		return nil, nil
	}
	var e *Event
	var pending Pending
	for _, s := range b.subs {
		if !s.Wants(ctx, realm, t) {
			continue
		}
		if e == nil {
			e = &Event{ID: "evt_" + uuid.Must(uuid.NewV7()).String(), Type: t, Realm: realm, Time: b.now(), Data: data}
		}
		queued, err := s.Queue(ctx, tx, e)
		if err != nil {
			return nil, fmt.Errorf("event %s: %w", t, err)
		}
		if queued {
			pending = append(pending, s)
		}
	}
	return pending, nil
}

// Publish queues the event in a transaction of its own and wakes its
// subscribers: for what is reported once its own change has committed (a
// sync that ran, a webhook turned off).
func (b *Bus) Publish(ctx context.Context, st *store.Store, realm *store.Realm, t Type, data any) error {
	if !b.Wants(ctx, realm, t) {
		return nil
	}
	var pending Pending
	err := st.Tx(ctx, func(tx *store.Store) error {
		var err error
		pending, err = b.Queue(ctx, tx, realm, t, data)
		return err
	})
	if err != nil {
		return err
	}
	pending.Wake()
	return nil
}

// Pending are the subscribers that queued work in a transaction.
type Pending []Subscriber

// Wake wakes each once.
func (p Pending) Wake() {
	for i, s := range p {
		if !contains(p[:i], s) {
			s.Wake()
		}
	}
}

func contains(p Pending, s Subscriber) bool {
	for _, o := range p {
		if o == s {
			return true
		}
	}
	return false
}

// Event is one event on the bus.
type Event struct {
	ID    string // "evt_" and a version 7 UUID: the same for every subscriber
	Type  Type
	Realm *store.Realm
	Time  time.Time
	Data  any
	body  []byte
}

// Payload is an event's JSON form, the body every subscriber sends
// (docs/events.md): Standard Webhooks' recommended shape, with the event's
// ID and realm.
type Payload struct {
	ID        string `json:"id"`
	Type      Type   `json:"type"`
	Timestamp string `json:"timestamp"` // RFC 3339, milliseconds, UTC
	Realm     string `json:"realm"`
	Data      any    `json:"data"`
}

// JSON is the event's payload, made once for all its subscribers.
func (e *Event) JSON() ([]byte, error) {
	if e.body != nil {
		return e.body, nil
	}
	body, err := json.Marshal(Payload{ID: e.ID, Type: e.Type, Timestamp: Timestamp(e.Time), Realm: e.Realm.Name, Data: e.Data})
	if err != nil {
		return nil, fmt.Errorf("payload of %s: %w", e.Type, err)
	}
	e.body = body
	return body, nil
}

// Timestamp is t as payloads write it.
func Timestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }
