package events

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/store"
)

// Record writes a login event when the realm records login events of its
// type; ID, realm and time are filled in. A failure is logged and never
// fails the request the event describes, and the write outlives a client
// that hangs up.
//
// Every area that signs people in records through it: package app wraps it
// (filling in the caller's address), and a module takes it in its Deps as a
// function, so that it need not import this package.
func (s *Service) Record(ctx context.Context, realm *store.Realm, e store.LoginEvent) {
	s.logSignIn(ctx, realm, &e)
	if realm == nil || !realm.EventsEnabled || !recordsEventType(realm, e.Type) {
		return
	}
	// Version 7 IDs grow with time, so events of one millisecond still
	// list in the order they happened.
	e.ID = uuid.Must(uuid.NewV7()).String()
	e.RealmID = realm.ID
	e.Time = s.deps.Now().UnixMilli()
	if err := s.batch.Do(context.WithoutCancel(ctx), &e); err != nil {
		s.deps.Log.ErrorContext(ctx, "login event not recorded", "realm", realm.Name, "type", e.Type, "err", err)
	}
}

// minEventBatchGap spaces the events' batches (store.Batcher) under load.
// Every commit writes the events table's pages and both its indexes' to
// the log and flushes it, however few events it holds; when RS256 grants
// came in one at a time, that was a tenth of their server CPU and a p99 of
// 120 ms. One commit a millisecond at most makes the batches bigger, and
// costs a request at most that millisecond, only when the previous batch
// was that recent.
const minEventBatchGap = time.Millisecond

// newEventBatcher writes login events by group commit (store.Batcher): a
// request's event is written, and flushed to disk, before the request
// answers, but the events of concurrent requests share the transaction.
func newEventBatcher(st *store.Store) *store.Batcher[*store.LoginEvent] {
	return store.NewBatcher(minEventBatchGap, func(ctx context.Context, events []*store.LoginEvent) []error {
		results := make([]error, len(events))
		if err := st.AddLoginEvents(ctx, events); err != nil {
			for i, e := range events {
				results[i] = err
				if len(events) > 1 {
					// One bad event must not lose the others: write each alone.
					results[i] = st.AddLoginEvent(ctx, e)
				}
			}
		}
		return results
	})
}
