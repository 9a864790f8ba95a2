package events

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/bus"
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
	ctx = context.WithoutCancel(ctx)
	rec := s.prepare(ctx, realm, e)
	if rec == nil {
		return
	}
	var err error
	if rec.keep {
		err = s.batch.Do(ctx, rec)
	} else {
		// Not kept, but published all the same.
		err = s.write(ctx, []*record{rec})
	}
	if err != nil {
		s.notRecorded(ctx, rec, err)
	}
	rec.pending.Wake()
}

// RecordIn is Record within tx, the transaction of the caller's own write
// (the session a sign-in lands in): the event commits with it, which spares
// the request a second commit and disk flush. The event is written in a
// savepoint, so that its failure is logged and undone alone, as Record's
// never fails the request. err is the savepoint's own failure, after which
// tx must be rolled back. Call committed once tx has committed: it wakes
// the subscribers the event queued work for.
func (s *Service) RecordIn(ctx context.Context, tx *store.Store, realm *store.Realm, e store.LoginEvent) (committed func(), err error) {
	rec := s.prepare(ctx, realm, e)
	if rec == nil {
		return func() {}, nil
	}
	outcome, err := tx.Savepoint(ctx, func(tx *store.Store) error { return s.writeIn(ctx, tx, []*record{rec}) })
	if err != nil {
		return nil, fmt.Errorf("login event: %w", err)
	}
	if outcome != nil {
		s.notRecorded(ctx, rec, outcome)
		return func() {}, nil
	}
	return rec.pending.Wake, nil
}

// prepare logs e when it is a failed or an administrator's sign-in, fills
// in its ID, realm and time, and says how it is to be written: nil when its
// realm neither keeps it nor has a subscriber for it.
func (s *Service) prepare(ctx context.Context, realm *store.Realm, e store.LoginEvent) *record {
	s.logSignIn(ctx, realm, &e)
	if realm == nil {
		return nil
	}
	// Version 7 IDs grow with time, so events of one millisecond still
	// list in the order they happened.
	e.ID = uuid.Must(uuid.NewV7()).String()
	e.RealmID = realm.ID
	e.Time = s.deps.Now().UnixMilli()
	rec := &record{realm: realm, event: &e, keep: realm.EventsEnabled && recordsEventType(realm, e.Type)}
	rec.busType, rec.busData = bus.OfLogin(&e)
	rec.published = s.deps.Bus.Wants(ctx, realm, rec.busType)
	if !rec.keep && !rec.published {
		return nil
	}
	return rec
}

func (s *Service) notRecorded(ctx context.Context, rec *record, err error) {
	s.deps.Log.ErrorContext(ctx, "login event not recorded", "realm", rec.realm.Name, "type", rec.event.Type, "err", err)
}

// record is a login event on its way to the database: kept when its realm
// keeps events of its type, and published when a subscriber of the bus
// takes it.
type record struct {
	realm     *store.Realm
	event     *store.LoginEvent
	keep      bool
	published bool
	busType   bus.Type
	busData   bus.LoginData
	pending   bus.Pending // the subscribers it queued work for
}

// write stores the events of recs that are kept, and publishes those the
// bus takes, in one transaction.
func (s *Service) write(ctx context.Context, recs []*record) error {
	return s.deps.Store.Tx(ctx, func(tx *store.Store) error { return s.writeIn(ctx, tx, recs) })
}

// writeIn is write within tx.
func (s *Service) writeIn(ctx context.Context, tx *store.Store, recs []*record) error {
	var kept []*store.LoginEvent
	for _, r := range recs {
		if r.keep {
			kept = append(kept, r.event)
		}
	}
	if len(kept) > 0 {
		if err := tx.AddLoginEvents(ctx, kept); err != nil {
			return err
		}
	}
	for _, r := range recs {
		if !r.published {
			continue
		}
		pending, err := s.deps.Bus.Queue(ctx, tx, r.realm, r.busType, r.busData)
		if err != nil {
			return err
		}
		r.pending = pending
	}
	return nil
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
func (s *Service) newEventBatcher() *store.Batcher[*record] {
	return store.NewBatcher(minEventBatchGap, func(ctx context.Context, recs []*record) []error {
		results := make([]error, len(recs))
		if err := s.write(ctx, recs); err != nil {
			for i, r := range recs {
				results[i] = err
				if len(recs) > 1 {
					// One bad event must not lose the others: write each alone.
					results[i] = s.write(ctx, []*record{r})
				}
			}
		}
		return results
	})
}
