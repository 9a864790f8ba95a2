package store

import (
	"context"
	"fmt"
	"time"
)

// GroupTx's members share write transactions, as the login events'
// batches do (Batcher): each caller's work runs in a savepoint of its own.
// Under load a refresh then pays a share of one commit and one disk flush
// instead of a whole one, and the single writer connection is held for
// less time per request.
type groupMember struct {
	ctx context.Context
	fn  func(tx *Store) error
}

// minGroupGap spaces GroupTx's transactions under load (Batcher.gap).
const minGroupGap = time.Millisecond

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
	ctx = context.WithoutCancel(ctx)
	return s.group.Do(ctx, &groupMember{ctx: ctx, fn: fn})
}

// runGroup runs batch in one transaction, each member in a savepoint, and
// returns each member's outcome. A failed commit fails every member that
// had succeeded: none of their writes landed.
func (s *Store) runGroup(ctx context.Context, batch []*groupMember) []error {
	results := make([]error, len(batch))
	if len(batch) == 1 {
		// Alone, a savepoint would only add two statements.
		results[0] = s.Tx(batch[0].ctx, batch[0].fn)
		return results
	}
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

// Savepoint runs fn in a savepoint of the transaction s is in, so that a
// write riding in another's transaction (a login event in the write of the
// sign-in it reports) fails alone: outcome is fn's error, and fn's writes
// alone are undone. err is the savepoint's own failure, after which the
// transaction is in no known state and must be rolled back. Outside a
// transaction, fn runs in a transaction of its own, whose error is outcome.
func (s *Store) Savepoint(ctx context.Context, fn func(tx *Store) error) (outcome, err error) {
	if !s.inTx {
		return s.Tx(ctx, fn), nil
	}
	return s.savepoint(ctx, fn)
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
