package store

import (
	"context"
	"encoding/json"
	"fmt"
)

// ActionUpdatePassword is the pending step of a user who must choose a new
// password before signing in.
const ActionUpdatePassword = "UPDATE_PASSWORD"

// PendingLogin is a sign-in whose password was right but which waits for a
// required step before its authorization request is authenticated. It
// lives as long as its request.
type PendingLogin struct {
	AuthRequestID string
	RealmID       string
	UserID        string
	Action        string // the step, such as ActionUpdatePassword
	BrowserHash   []byte // HashToken of the browser's CSRF cookie
	RememberMe    bool
	// AMR is how the sign-in authenticated before the step; nil for a row
	// saved before schema version 12, which kept no more than whether a
	// second factor passed.
	AMR       []string
	CreatedAt int64 // Unix milliseconds
}

// SavePendingLogin records p, replacing what its request had pending. The
// request must be of the realm, not authenticated, not done and not
// expired at now, and the user of the realm; otherwise ErrNotFound.
func (s *Store) SavePendingLogin(ctx context.Context, p *PendingLogin, now int64) error {
	res, err := s.w.ExecContext(ctx, `INSERT INTO pending_logins
			(auth_request_id, realm_id, user_id, action, browser_hash, remember_me, created_at, amr)
		SELECT $1, $2, $3, $4, $5, $6, $7, $9
		WHERE EXISTS (SELECT 1 FROM auth_requests WHERE id = $1 AND realm_id = $2 AND user_id IS NULL AND NOT done
				AND expires_at > $8)
			AND EXISTS (SELECT 1 FROM users WHERE id = $3 AND realm_id = $2)
		ON CONFLICT (auth_request_id) DO UPDATE SET user_id = excluded.user_id, action = excluded.action,
			browser_hash = excluded.browser_hash, remember_me = excluded.remember_me, created_at = excluded.created_at,
			amr = excluded.amr`,
		p.AuthRequestID, p.RealmID, p.UserID, p.Action, p.BrowserHash, p.RememberMe, p.CreatedAt, now, jsonList(p.AMR))
	if err != nil {
		return fmt.Errorf("save pending login of auth request %s: %w", p.AuthRequestID, mapErr(err))
	}
	return affectedOne(res, "pending auth request "+p.AuthRequestID+" and user "+p.UserID)
}

// GetPendingLogin finds what the realm's request authRequestID waits for.
func (s *Store) GetPendingLogin(ctx context.Context, realmID, authRequestID string) (*PendingLogin, error) {
	var p PendingLogin
	var amr string
	err := s.r.QueryRowContext(ctx, `SELECT auth_request_id, realm_id, user_id, action, browser_hash, remember_me, created_at, amr
		FROM pending_logins WHERE realm_id = $1 AND auth_request_id = $2`, realmID, authRequestID).Scan(
		&p.AuthRequestID, &p.RealmID, &p.UserID, &p.Action, &p.BrowserHash, &p.RememberMe, &p.CreatedAt, &amr)
	if err != nil {
		return nil, fmt.Errorf("pending login of auth request %s: %w", authRequestID, mapErr(err))
	}
	if amr != "" {
		if err := json.Unmarshal([]byte(amr), &p.AMR); err != nil {
			return nil, fmt.Errorf("pending login of auth request %s: amr: %w", authRequestID, err)
		}
	}
	return &p, nil
}

// DeletePendingLogin ends the pending step of a request of the realm, for
// the user it names: a step finished twice, or for another user, is
// ErrNotFound.
func (s *Store) DeletePendingLogin(ctx context.Context, realmID, authRequestID, userID string) error {
	res, err := s.w.ExecContext(ctx, "DELETE FROM pending_logins WHERE realm_id = $1 AND auth_request_id = $2 AND user_id = $3",
		realmID, authRequestID, userID)
	if err != nil {
		return fmt.Errorf("delete pending login of auth request %s: %w", authRequestID, mapErr(err))
	}
	return affectedOne(res, "pending login of auth request "+authRequestID)
}
