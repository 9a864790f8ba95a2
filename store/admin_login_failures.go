package store

import (
	"context"
	"fmt"
)

// AdminLoginFailure is one failed admin login counted under a throttle
// key (its hash: the caller's).
type AdminLoginFailure struct {
	KeyHash  string
	FailedAt int64 // Unix milliseconds
}

// RecordAdminLoginFailures records a failure at at under each key hash,
// and deletes the failures at or before forgetBefore, in one transaction.
func (s *Store) RecordAdminLoginFailures(ctx context.Context, keyHashes []string, at, forgetBefore int64) error {
	return s.Tx(ctx, func(tx *Store) error {
		if _, err := tx.w.ExecContext(ctx, "DELETE FROM admin_login_failures WHERE failed_at <= $1", forgetBefore); err != nil {
			return fmt.Errorf("forget old admin login failures: %w", mapErr(err))
		}
		for _, k := range keyHashes {
			if _, err := tx.w.ExecContext(ctx, "INSERT INTO admin_login_failures (key_hash, failed_at) VALUES ($1, $2)", k, at); err != nil {
				return fmt.Errorf("record admin login failure: %w", mapErr(err))
			}
		}
		return nil
	})
}

// ClearAdminLoginFailures forgets the failures under a key hash.
func (s *Store) ClearAdminLoginFailures(ctx context.Context, keyHash string) error {
	if _, err := s.w.ExecContext(ctx, "DELETE FROM admin_login_failures WHERE key_hash = $1", keyHash); err != nil {
		return fmt.Errorf("clear admin login failures: %w", mapErr(err))
	}
	return nil
}

// AdminLoginFailures lists the failures after since, oldest first, those
// of one millisecond by key hash.
func (s *Store) AdminLoginFailures(ctx context.Context, since int64) ([]AdminLoginFailure, error) {
	rows, err := s.r.QueryContext(ctx,
		"SELECT key_hash, failed_at FROM admin_login_failures WHERE failed_at > $1 ORDER BY failed_at, key_hash", since)
	if err != nil {
		return nil, fmt.Errorf("admin login failures: %w", mapErr(err))
	}
	defer rows.Close()
	var out []AdminLoginFailure
	for rows.Next() {
		var f AdminLoginFailure
		if err := rows.Scan(&f.KeyHash, &f.FailedAt); err != nil {
			return nil, fmt.Errorf("admin login failures: %w", mapErr(err))
		}
		out = append(out, f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("admin login failures: %w", mapErr(err))
	}
	return out, nil
}
