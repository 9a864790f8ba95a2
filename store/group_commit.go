package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// groupCommit shares write transactions between concurrent callers of
// GroupTx, as the login events' batches do: every caller's work is
// committed, and flushed to disk, before its GroupTx returns, but callers
// that arrive while a transaction is under way go into the next one
// together, each in a savepoint of its own. Under load a refresh then pays
// a share of one commit and one flush instead of a whole one, and the
// single writer connection is held for less time per request.
//
// There is no writer goroutine: the first caller to find no transaction
// under way leads, runs what is queued, and hands the lead to the oldest
// caller that queued meanwhile, so no one caller writes for everyone.
type groupCommit struct {
	mu      sync.Mutex
	pending []*groupMember
	writing bool
	last    time.Time // when the last transaction ended
}

// minGroupGap spaces the transactions under load, so that more callers
// share each: a commit writes every page its rows touched (the table's and
// each index's) and flushes, however few rows it holds. A caller waits at
// most this long, and only when the previous commit was that recent.
const minGroupGap = time.Millisecond

type groupMember struct {
	ctx  context.Context
	fn   func(tx *Store) error
	done chan error // the member's outcome, or errLeadNext
}

var errLeadNext = errors.New("lead the next group commit")

// GroupTx is Tx for short, frequent writes: fn runs in a savepoint of a
// transaction it may share with other callers, and GroupTx returns once
// that transaction is committed. fn returning an error rolls back its own
// writes only. fn must not depend on running alone: what the others of
// its transaction wrote before it is visible to it, as it would be had
// they committed first. A transaction fn runs in is not cancelled with
// ctx: a caller that hangs up does not undo the others.
func (s *Store) GroupTx(ctx context.Context, fn func(tx *Store) error) error {
	if s.inTx {
		return fn(s)
	}
	g := s.group
	me := &groupMember{ctx: context.WithoutCancel(ctx), fn: fn, done: make(chan error, 1)}
	g.mu.Lock()
	g.pending = append(g.pending, me)
	lead := !g.writing
	g.writing = true
	g.mu.Unlock()
	if !lead {
		if err := <-me.done; !errors.Is(err, errLeadNext) {
			return err
		}
	}
	if wait := minGroupGap - time.Since(g.last); wait > 0 {
		time.Sleep(wait)
	}
	g.mu.Lock()
	batch := g.pending
	g.pending = nil
	g.mu.Unlock()

	results := s.runGroup(batch)
	var mine error
	for i, m := range batch {
		if m == me {
			mine = results[i]
		} else {
			m.done <- results[i]
		}
	}

	g.mu.Lock()
	g.last = time.Now()
	if len(g.pending) > 0 {
		g.pending[0].done <- errLeadNext
	} else {
		g.writing = false
	}
	g.mu.Unlock()
	return mine
}

// runGroup runs batch in one transaction, each member in a savepoint, and
// returns each member's outcome. A failed commit fails every member that
// had succeeded: none of their writes landed.
func (s *Store) runGroup(batch []*groupMember) []error {
	results := make([]error, len(batch))
	if len(batch) == 1 {
		// Alone, a savepoint would only add two statements.
		results[0] = s.Tx(batch[0].ctx, batch[0].fn)
		return results
	}
	ctx := batch[0].ctx
	err := s.inTransaction(ctx, s.writer, nil, func(tx *Store) error {
		for i, m := range batch {
			var err error
			if results[i], err = tx.savepoint(m.ctx, m.fn); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		for i := range results {
			if results[i] == nil {
				results[i] = err
			}
		}
	}
	return results
}

// savepoint runs fn inside the transaction tx and returns its outcome,
// undoing fn's writes alone if it fails. A savepoint statement failing
// leaves the transaction in no known state: that error is returned apart,
// and the whole transaction must be rolled back.
func (s *Store) savepoint(ctx context.Context, fn func(tx *Store) error) (outcome, err error) {
	if _, err := s.w.ExecContext(ctx, "SAVEPOINT member"); err != nil {
		return nil, fmt.Errorf("savepoint: %w", mapErr(err))
	}
	outcome = fn(s)
	if outcome != nil {
		if _, err := s.w.ExecContext(ctx, "ROLLBACK TO SAVEPOINT member"); err != nil {
			return outcome, fmt.Errorf("roll back to savepoint: %w", mapErr(err))
		}
	}
	if _, err := s.w.ExecContext(ctx, "RELEASE SAVEPOINT member"); err != nil {
		return outcome, fmt.Errorf("release savepoint: %w", mapErr(err))
	}
	return outcome, nil
}
