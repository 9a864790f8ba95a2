package store

import (
	"context"
	"crypto/sha256"
	"fmt"
)

// What a sign-in whose password was right still owes before its code.
const (
	StepTOTP          = "totp"           // a TOTP or recovery code
	StepTOTPSetup     = "totp-setup"     // enrolment of a TOTP authenticator, the realm requiring one
	StepRecoveryCodes = "recovery-codes" // enrolled: the recovery codes were shown, the user goes on
)

// AuthRequestStep is the second step of a sign-in: its authorization
// request stays unauthenticated, and no code is issued, while the step
// exists.
type AuthRequestStep struct {
	AuthRequestID string
	UserID        string
	Pending       string
	// BrowserHash binds the step to the browser that gave the password:
	// the SHA-256 of its CSRF cookie.
	BrowserHash []byte
	PasswordAt  int64 // Unix milliseconds
	RememberMe  bool  // as chosen on the login form
	// Federated: the first factor was an upstream identity provider's
	// sign-in (amr fed), not a password.
	Federated bool
}

// CreateAuthRequestStep records st, replacing an earlier step of the
// request: a second password for the same request starts over. The
// request must be of the realm, pending and unexpired at now, and the
// user of the realm; otherwise ErrNotFound.
func (s *Store) CreateAuthRequestStep(ctx context.Context, realmID string, st *AuthRequestStep, now int64) error {
	if len(st.BrowserHash) != sha256.Size {
		return fmt.Errorf("auth request step: the browser hash must be %d bytes", sha256.Size)
	}
	return s.Tx(ctx, func(tx *Store) error {
		var n int
		err := tx.w.QueryRowContext(ctx, `SELECT
			(SELECT count(*) FROM auth_requests WHERE id = $1 AND realm_id = $2 AND NOT done AND expires_at > $3) +
			(SELECT count(*) FROM users WHERE id = $4 AND realm_id = $2)`, st.AuthRequestID, realmID, now, st.UserID).Scan(&n)
		if err != nil {
			return fmt.Errorf("auth request step: %w", mapErr(err))
		}
		if n != 2 {
			return fmt.Errorf("pending auth request %s of user %s: %w", st.AuthRequestID, st.UserID, ErrNotFound)
		}
		if _, err := tx.w.ExecContext(ctx, `DELETE FROM auth_request_steps WHERE auth_request_id = $1`, st.AuthRequestID); err != nil {
			return fmt.Errorf("replace auth request step: %w", mapErr(err))
		}
		_, err = tx.w.ExecContext(ctx, `INSERT INTO auth_request_steps (auth_request_id, user_id, pending, browser_hash,
			password_at, remember_me, federated) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
			st.AuthRequestID, st.UserID, st.Pending, st.BrowserHash, st.PasswordAt, st.RememberMe, st.Federated)
		if err != nil {
			return fmt.Errorf("create auth request step: %w", mapErr(err))
		}
		return nil
	})
}

// GetAuthRequestStep is the step of a request of the realm.
func (s *Store) GetAuthRequestStep(ctx context.Context, realmID, authRequestID string) (*AuthRequestStep, error) {
	var st AuthRequestStep
	err := s.r.QueryRowContext(ctx, `SELECT st.auth_request_id, st.user_id, st.pending, st.browser_hash, st.password_at,
		st.remember_me, st.federated
		FROM auth_request_steps st JOIN auth_requests ar ON ar.id = st.auth_request_id
		WHERE st.auth_request_id = $1 AND ar.realm_id = $2`, authRequestID, realmID).Scan(
		&st.AuthRequestID, &st.UserID, &st.Pending, &st.BrowserHash, &st.PasswordAt, &st.RememberMe, &st.Federated)
	if err != nil {
		return nil, fmt.Errorf("step of auth request %s: %w", authRequestID, mapErr(err))
	}
	return &st, nil
}

// AdvanceAuthRequestStep moves a request's step from one pending state to
// the next. A step not in state from is ErrNotFound, so of two requests
// racing, one advances.
func (s *Store) AdvanceAuthRequestStep(ctx context.Context, authRequestID, from, to string) error {
	res, err := s.w.ExecContext(ctx, `UPDATE auth_request_steps SET pending = $1 WHERE auth_request_id = $2 AND pending = $3`,
		to, authRequestID, from)
	if err != nil {
		return fmt.Errorf("advance step of auth request %s: %w", authRequestID, mapErr(err))
	}
	return affectedOne(res, "auth request step "+authRequestID+" "+from)
}

// CompleteAuthRequestStep removes a request's step in state pending, once
// what it owed is done. Anything else is ErrNotFound: run in the
// transaction that authenticates the request, it lets one completion
// through.
func (s *Store) CompleteAuthRequestStep(ctx context.Context, authRequestID, pending string) error {
	res, err := s.w.ExecContext(ctx, `DELETE FROM auth_request_steps WHERE auth_request_id = $1 AND pending = $2`,
		authRequestID, pending)
	if err != nil {
		return fmt.Errorf("complete step of auth request %s: %w", authRequestID, mapErr(err))
	}
	return affectedOne(res, "auth request step "+authRequestID+" "+pending)
}
