package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// The flood guard's failures of a fleet (fleet.go), under their keys'
// hashes: each server counts those of every other, so a client that
// spreads its attempts over the servers gets no more of them.

// ThrottleFailureAt returns the time of the nth newest failure under
// keyHash after since (n from 1), and whether there are that many.
func (s *Store) ThrottleFailureAt(ctx context.Context, keyHash string, n int, since int64) (int64, bool, error) {
	var at int64
	err := s.r.QueryRowContext(ctx, `SELECT failed_at FROM throttle_failures WHERE key_hash = $1 AND failed_at > $2
		ORDER BY failed_at DESC LIMIT 1 OFFSET $3`, keyHash, since, max(n-1, 0)).Scan(&at)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("throttle failures: %w", mapErr(err))
	}
	return at, true, nil
}

// RecordThrottleFailures records a failure at at under each key hash,
// keeping the newest keep of each: past that, each new failure moves the
// window on without the table growing.
func (s *Store) RecordThrottleFailures(ctx context.Context, keyHashes []string, at int64, keep int) error {
	return s.Tx(ctx, func(tx *Store) error {
		for _, k := range keyHashes {
			if _, err := tx.w.ExecContext(ctx, "INSERT INTO throttle_failures (key_hash, failed_at) VALUES ($1, $2)", k, at); err != nil {
				return fmt.Errorf("record throttle failure: %w", mapErr(err))
			}
			if _, err := tx.w.ExecContext(ctx, `DELETE FROM throttle_failures WHERE key_hash = $1 AND failed_at <
				(SELECT failed_at FROM throttle_failures WHERE key_hash = $1 ORDER BY failed_at DESC LIMIT 1 OFFSET $2)`,
				k, keep-1); err != nil {
				return fmt.Errorf("trim throttle failures: %w", mapErr(err))
			}
		}
		return nil
	})
}

// ClearThrottleFailures forgets the failures under a key hash.
func (s *Store) ClearThrottleFailures(ctx context.Context, keyHash string) error {
	if _, err := s.w.ExecContext(ctx, "DELETE FROM throttle_failures WHERE key_hash = $1", keyHash); err != nil {
		return fmt.Errorf("clear throttle failures: %w", mapErr(err))
	}
	return nil
}

// DeleteOldThrottleFailures deletes the failures at or before before, and
// counts them.
func (s *Store) DeleteOldThrottleFailures(ctx context.Context, before int64) (int64, error) {
	res, err := s.w.ExecContext(ctx, "DELETE FROM throttle_failures WHERE failed_at <= $1", before)
	return rowsAffected(res, err, "delete old throttle failures")
}
