package store

import (
	"context"
	"fmt"
)

// AdminAPIKeyHash returns the stored hash of the admin API key, or
// ErrNotFound before the first start has made one.
func (s *Store) AdminAPIKeyHash(ctx context.Context) ([]byte, error) {
	var h []byte
	if err := s.r.QueryRowContext(ctx, "SELECT key_hash FROM admin_api_key WHERE id = 1").Scan(&h); err != nil {
		return nil, fmt.Errorf("admin api key: %w", mapErr(err))
	}
	return h, nil
}

// SetAdminAPIKeyHash stores (or replaces) the admin API key's hash.
func (s *Store) SetAdminAPIKeyHash(ctx context.Context, hash []byte) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO admin_api_key (id, key_hash, created_at) VALUES (1, $1, $2)
		ON CONFLICT (id) DO UPDATE SET key_hash = excluded.key_hash, created_at = excluded.created_at`, hash, s.millis())
	if err != nil {
		return fmt.Errorf("store admin api key: %w", mapErr(err))
	}
	return nil
}

// AdminUser is an operator who signs in to the admin API with a password.
type AdminUser struct {
	ID           string
	Username     string
	PasswordHash string
	CreatedAt    int64
}

// CreateAdminUser inserts a; a taken username is ErrConflict.
func (s *Store) CreateAdminUser(ctx context.Context, a *AdminUser) error {
	_, err := s.w.ExecContext(ctx, "INSERT INTO admin_users (id, username, password_hash, created_at) VALUES ($1, $2, $3, $4)",
		a.ID, a.Username, a.PasswordHash, a.CreatedAt)
	if err != nil {
		return fmt.Errorf("create admin user %s: %w", a.Username, mapErr(err))
	}
	return nil
}

// RevokeAdminToken records that a token must no longer be accepted, and
// forgets revocations of tokens that have expired by now.
func (s *Store) RevokeAdminToken(ctx context.Context, tokenID string, expiresAt int64) error {
	return s.Tx(ctx, func(tx *Store) error {
		if _, err := tx.w.ExecContext(ctx, "DELETE FROM admin_token_revocations WHERE expires_at < $1", tx.millis()); err != nil {
			return mapErr(err)
		}
		_, err := tx.w.ExecContext(ctx, `INSERT INTO admin_token_revocations (token_id, expires_at) VALUES ($1, $2)
			ON CONFLICT (token_id) DO NOTHING`, tokenID, expiresAt)
		if err != nil {
			return fmt.Errorf("revoke admin token: %w", mapErr(err))
		}
		return nil
	})
}

// AdminTokenRevoked says whether a token was revoked.
func (s *Store) AdminTokenRevoked(ctx context.Context, tokenID string) (bool, error) {
	var n int
	err := s.r.QueryRowContext(ctx, "SELECT count(*) FROM admin_token_revocations WHERE token_id = $1", tokenID).Scan(&n)
	return n > 0, mapErr(err)
}
