package store

import (
	"context"
	"crypto/sha256"
	"fmt"
)

// Action token kinds: what a mailed link lets its holder do once.
const (
	ActionVerifyEmail   = "verify-email"
	ActionResetPassword = "reset-password"
)

// ActionToken is a single-use token mailed in a link. Only the SHA-256 of
// the token is stored (HashToken), so a copy of the database opens no
// inbox's links.
type ActionToken struct {
	Hash      []byte
	RealmID   string
	UserID    string
	Kind      string
	Email     string // the address it was sent to
	CreatedAt int64  // Unix milliseconds
	ExpiresAt int64
	UsedAt    int64 // 0 while unused
}

// CreateActionToken stores t. The user's earlier unused tokens of the same
// kind are voided in the same transaction: only the newest link works, so
// an old mail forwarded or left in a shared inbox stops mattering.
func (s *Store) CreateActionToken(ctx context.Context, t *ActionToken) error {
	if len(t.Hash) != sha256.Size {
		return fmt.Errorf("action token: the hash must be %d bytes: store HashToken(token), never the token", sha256.Size)
	}
	return s.Tx(ctx, func(tx *Store) error {
		if _, err := tx.w.ExecContext(ctx, `DELETE FROM action_tokens WHERE user_id = $1 AND kind = $2 AND used_at IS NULL`,
			t.UserID, t.Kind); err != nil {
			return fmt.Errorf("void earlier %s tokens: %w", t.Kind, mapErr(err))
		}
		_, err := tx.w.ExecContext(ctx, `INSERT INTO action_tokens (token_hash, realm_id, user_id, kind, email, created_at,
			expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`, t.Hash, t.RealmID, t.UserID, t.Kind, t.Email, t.CreatedAt, t.ExpiresAt)
		if err != nil {
			return fmt.Errorf("create %s token: %w", t.Kind, mapErr(err))
		}
		return nil
	})
}

// PeekActionToken checks, without using it, that the token of hash would
// be accepted by ConsumeActionToken at now. Anything else is ErrNotFound.
func (s *Store) PeekActionToken(ctx context.Context, realmID string, hash []byte, kind string, now int64) (*ActionToken, error) {
	var t ActionToken
	err := s.r.QueryRowContext(ctx, `SELECT a.token_hash, a.realm_id, a.user_id, a.kind, a.email, a.created_at, a.expires_at
		FROM action_tokens a JOIN users u ON u.id = a.user_id
		WHERE a.token_hash = $1 AND a.realm_id = $2 AND a.kind = $3 AND a.used_at IS NULL AND a.expires_at > $4
		AND u.email = a.email`, hash, realmID, kind, now).Scan(
		&t.Hash, &t.RealmID, &t.UserID, &t.Kind, &t.Email, &t.CreatedAt, &t.ExpiresAt)
	if err != nil {
		return nil, fmt.Errorf("%s token: %w", kind, mapErr(err))
	}
	return &t, nil
}

// ConsumeActionToken uses the token of hash once: it must be of the realm
// and kind, unused, unexpired at now, and its user's email must still be
// the one it was sent to. Anything else is ErrNotFound, without saying
// which, as the link's holder should learn nothing more. The check and the
// marking happen in one transaction, so two clicks cannot both succeed.
func (s *Store) ConsumeActionToken(ctx context.Context, realmID string, hash []byte, kind string, now int64) (*ActionToken, error) {
	var t *ActionToken
	err := s.Tx(ctx, func(tx *Store) error {
		var err error
		// Inside the transaction the check reads what the marking writes.
		if t, err = tx.PeekActionToken(ctx, realmID, hash, kind, now); err != nil {
			return err
		}
		res, err := tx.w.ExecContext(ctx, `UPDATE action_tokens SET used_at = $1 WHERE token_hash = $2 AND used_at IS NULL`, now, hash)
		if n, err := rowsAffected(res, err, "use "+kind+" token"); err != nil {
			return err
		} else if n != 1 {
			return fmt.Errorf("%s token: %w", kind, ErrNotFound)
		}
		t.UsedAt = now
		return nil
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// DeleteExpiredActionTokens forgets tokens expired by now, used or not.
func (s *Store) DeleteExpiredActionTokens(ctx context.Context, now int64) (int64, error) {
	res, err := s.w.ExecContext(ctx, `DELETE FROM action_tokens WHERE expires_at <= $1`, now)
	return rowsAffected(res, err, "delete expired action tokens")
}
