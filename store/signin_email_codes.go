package store

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
)

// SignInEmailCode is a one-time code mailed to a user for a step of a
// sign-in's flow. The store keeps its hash only.
type SignInEmailCode struct {
	ID       string
	RealmID  string
	FlowID   string
	UserID   string
	CodeHash []byte // nil once used, or voided by wrong attempts or a newer code
	Attempts int    // wrong codes tried against it
	SentAt   int64  // Unix milliseconds
	// ExpiresAt is when the code stops working.
	ExpiresAt int64
}

// EmailCodeLimits bound how often codes are mailed: to one flow at most
// one per FlowGap, to one user at most UserMax per UserWindow (all in
// milliseconds).
type EmailCodeLimits struct {
	FlowGap    int64
	UserWindow int64
	UserMax    int
}

// ErrCodeMismatch is a wrong code tried against a live one.
var ErrCodeMismatch = errors.New("wrong code")

// SendLimitedError is a code not issued because one was mailed too
// recently; RetryAt is when one may be.
type SendLimitedError struct{ RetryAt int64 }

func (e *SendLimitedError) Error() string {
	return fmt.Sprintf("a code was mailed too recently: retry at %d", e.RetryAt)
}

// IssueSignInEmailCode stores c, the flow's code from now on, unless the
// limits refuse it (*SendLimitedError); the flow's earlier codes stop
// working. c.SentAt is now. Checked and written in one transaction, so
// concurrent requests cannot send past the limits.
func (s *Store) IssueSignInEmailCode(ctx context.Context, c *SignInEmailCode, limits EmailCodeLimits) error {
	return s.Tx(ctx, func(tx *Store) error {
		var last int64
		var n int
		if err := tx.w.QueryRowContext(ctx, `SELECT coalesce(max(sent_at), 0), count(*) FROM signin_email_codes
			WHERE flow_id = $1 AND realm_id = $2`, c.FlowID, c.RealmID).Scan(&last, &n); err != nil {
			return fmt.Errorf("email codes of flow %s: %w", c.FlowID, mapErr(err))
		}
		if n > 0 && c.SentAt < last+limits.FlowGap {
			return &SendLimitedError{RetryAt: last + limits.FlowGap}
		}
		var oldest int64
		if err := tx.w.QueryRowContext(ctx, `SELECT coalesce(min(sent_at), 0), count(*) FROM signin_email_codes
			WHERE user_id = $1 AND sent_at > $2`, c.UserID, c.SentAt-limits.UserWindow).Scan(&oldest, &n); err != nil {
			return fmt.Errorf("email codes of user %s: %w", c.UserID, mapErr(err))
		}
		if n >= limits.UserMax {
			return &SendLimitedError{RetryAt: oldest + limits.UserWindow}
		}
		if err := tx.userOfRealm(ctx, c.RealmID, c.UserID); err != nil {
			return err
		}
		if _, err := tx.w.ExecContext(ctx, `UPDATE signin_email_codes SET code_hash = NULL WHERE flow_id = $1 AND realm_id = $2`,
			c.FlowID, c.RealmID); err != nil {
			return fmt.Errorf("void email codes of flow %s: %w", c.FlowID, mapErr(err))
		}
		_, err := tx.w.ExecContext(ctx, `INSERT INTO signin_email_codes (id, realm_id, flow_id, user_id, code_hash, attempts,
			sent_at, expires_at) VALUES ($1, $2, $3, $4, $5, 0, $6, $7)`,
			c.ID, c.RealmID, c.FlowID, c.UserID, c.CodeHash, c.SentAt, c.ExpiresAt)
		if err != nil {
			return fmt.Errorf("store email code of flow %s: %w", c.FlowID, mapErr(err))
		}
		return nil
	})
}

// LiveSignInEmailCode is the flow's code that still works at now, or
// ErrNotFound.
func (s *Store) LiveSignInEmailCode(ctx context.Context, realmID, flowID string, now int64) (*SignInEmailCode, error) {
	var c SignInEmailCode
	err := s.r.QueryRowContext(ctx, `SELECT id, realm_id, flow_id, user_id, code_hash, attempts, sent_at, expires_at
		FROM signin_email_codes WHERE flow_id = $1 AND realm_id = $2 AND code_hash IS NOT NULL AND expires_at > $3`,
		flowID, realmID, now).Scan(&c.ID, &c.RealmID, &c.FlowID, &c.UserID, &c.CodeHash, &c.Attempts, &c.SentAt, &c.ExpiresAt)
	if err != nil {
		return nil, fmt.Errorf("live email code of flow %s: %w", flowID, mapErr(err))
	}
	return &c, nil
}

// UseSignInEmailCode spends the flow's live code if hash is its hash: a
// code works once, so of two uses of it, even at once, one passes and
// the other finds ErrNotFound. A wrong hash is ErrCodeMismatch and counts
// against the code, which stops working at maxAttempts wrong ones. No
// live code (none sent, expired, used, voided) is ErrNotFound.
func (s *Store) UseSignInEmailCode(ctx context.Context, realmID, flowID string, hash []byte, now int64, maxAttempts int) error {
	wrong := false
	err := s.Tx(ctx, func(tx *Store) error {
		c, err := tx.LiveSignInEmailCode(ctx, realmID, flowID, now)
		if err != nil {
			return err
		}
		if subtle.ConstantTimeCompare(c.CodeHash, hash) == 1 {
			res, err := tx.w.ExecContext(ctx, `UPDATE signin_email_codes SET code_hash = NULL WHERE id = $1 AND code_hash IS NOT NULL`, c.ID)
			if err != nil {
				return fmt.Errorf("use email code of flow %s: %w", flowID, mapErr(err))
			}
			return affectedOne(res, "email code of flow "+flowID)
		}
		if _, err := tx.w.ExecContext(ctx, `UPDATE signin_email_codes SET attempts = attempts + 1,
			code_hash = CASE WHEN attempts + 1 >= $2 THEN NULL ELSE code_hash END WHERE id = $1`, c.ID, maxAttempts); err != nil {
			return fmt.Errorf("count a wrong email code of flow %s: %w", flowID, mapErr(err))
		}
		// The count commits: the mismatch is told once it has.
		wrong = true
		return nil
	})
	if err == nil && wrong {
		return ErrCodeMismatch
	}
	return err
}

// DeleteStaleSignInEmailCodes removes the codes sent before before: past
// their expiry and the window of the sending limits.
func (s *Store) DeleteStaleSignInEmailCodes(ctx context.Context, before int64) (int64, error) {
	res, err := s.w.ExecContext(ctx, "DELETE FROM signin_email_codes WHERE sent_at < $1", before)
	return rowsAffected(res, err, "delete stale email codes")
}
