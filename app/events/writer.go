package events

import (
	"context"
	"errors"
	"sync"
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
	if realm == nil || !realm.EventsEnabled || !recordsEventType(realm, e.Type) {
		return
	}
	// Version 7 IDs grow with time, so events of one millisecond still
	// list in the order they happened.
	e.ID = uuid.Must(uuid.NewV7()).String()
	e.RealmID = realm.ID
	e.Time = s.deps.Now().UnixMilli()
	if err := s.batch.add(context.WithoutCancel(ctx), s.deps.Store, &e); err != nil {
		s.deps.Log.ErrorContext(ctx, "login event not recorded", "realm", realm.Name, "type", e.Type, "err", err)
	}
}

// eventBatch writes login events by group commit: a request's event is
// written, and flushed to disk, before the request answers, as one write
// per event would; but requests arriving while a write is under way wait
// for the next, which takes all of them in one transaction. A grant under
// load then pays a share of one disk flush instead of a whole one, and no
// event is ever only in memory.
//
// There is no writer goroutine: the first request to find no write under
// way leads, writes what is queued, and hands the lead to the oldest
// request that queued meanwhile, so no one request writes for everyone.
type eventBatch struct {
	mu      sync.Mutex
	pending []*queuedEvent
	writing bool
	last    time.Time // when the last batch was written
}

// minEventBatchGap spaces the batches' commits under load. Every commit
// writes the events table's pages and both its indexes' to the log and
// flushes it, however few events it holds; when RS256 grants came in one
// at a time, that was a tenth of their server CPU and a p99 of 120 ms.
// One commit a millisecond at most makes the batches bigger, and costs a
// request at most that millisecond, only when the previous batch was
// that recent.
const minEventBatchGap = time.Millisecond

type queuedEvent struct {
	e    *store.LoginEvent
	done chan error // the batch's outcome, or errYourTurn
}

var errYourTurn = errors.New("lead the next event batch")

// add writes e in the next batch and returns that batch's outcome.
func (b *eventBatch) add(ctx context.Context, st *store.Store, e *store.LoginEvent) error {
	me := &queuedEvent{e: e, done: make(chan error, 1)}
	b.mu.Lock()
	b.pending = append(b.pending, me)
	lead := !b.writing
	b.writing = true
	b.mu.Unlock()
	if !lead {
		if err := <-me.done; !errors.Is(err, errYourTurn) {
			return err
		}
	}
	if wait := minEventBatchGap - time.Since(b.last); wait > 0 {
		time.Sleep(wait)
	}
	b.mu.Lock()
	batch := b.pending
	b.pending = nil
	b.mu.Unlock()

	events := make([]*store.LoginEvent, len(batch))
	for i, q := range batch {
		events[i] = q.e
	}
	err := st.AddLoginEvents(ctx, events)
	var mine error
	for i, q := range batch {
		res := err
		if err != nil && len(batch) > 1 {
			// One bad event must not lose the others: write each alone.
			res = st.AddLoginEvent(ctx, events[i])
		}
		if q == me {
			mine = res
		} else {
			q.done <- res
		}
	}

	b.mu.Lock()
	b.last = time.Now()
	if len(b.pending) > 0 {
		b.pending[0].done <- errYourTurn
	} else {
		b.writing = false
	}
	b.mu.Unlock()
	return mine
}
