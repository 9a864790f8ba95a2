package store

import (
	"context"
	"fmt"
)

// reauthenticateSessionSQL never shortens a session: a cache may hold the
// expiry it read until then (see sessionKeepers).
const reauthenticateSessionSQL = `UPDATE user_sessions SET auth_time = $1, amr = $2, last_access_at = $3,
	expires_at = CASE WHEN $4 > expires_at THEN $4 ELSE expires_at END
	WHERE realm_id = $5 AND id = $6 AND kind = 'sso' AND expires_at > $3`

// ReauthenticateSession records a new authentication of the user of an
// SSO session active at now (a login the client forced, or one past its
// max_age): when and how, the access, and the new expiry, never earlier
// than the one it had. Anything else is ErrNotFound.
func (s *Store) ReauthenticateSession(ctx context.Context, realmID, id string, authTime int64, amr []string, now, expiresAt int64) error {
	res, err := s.w.ExecContext(ctx, reauthenticateSessionSQL, authTime, jsonList(amr), now, expiresAt, realmID, id)
	if err != nil {
		return fmt.Errorf("reauthenticate session %s: %w", id, mapErr(err))
	}
	return affectedOne(res, "active SSO session "+id)
}

// clientSessionOfWhere finds a client's session under an SSO session
// through the SSO session's children, which are few. The expressions on
// the realm and the expiry (SQLite's unary plus, which PostgreSQL lacks)
// keep them off the index of the realm's live sessions:
// SQLite, without statistics, would prefer its two columns and read every
// live session of the realm at each code exchange (70% of the CPU of a
// brokered sign-in with 100,000 sessions).
const clientSessionOfWhere = `s.realm_id || '' = $1 AND s.user_id = $2 AND s.parent_id = $3
		AND s.client_id = $4 AND s.expires_at + 0 > $5 ORDER BY s.started_at DESC, s.id LIMIT 1`

// ClientSessionOf finds the online OAuth session of a client (internal ID)
// under the SSO session sso, active at now; the newest if there are
// several. None is ErrNotFound.
func (s *Store) ClientSessionOf(ctx context.Context, sso *Session, clientID string, now int64) (*Session, error) {
	sessions, err := s.querySessions(ctx, s.r, clientSessionOfWhere, sso.RealmID, sso.UserID, sso.ID, clientID, now)
	if err != nil {
		return nil, err
	}
	if len(sessions) == 0 {
		return nil, fmt.Errorf("session of client %s under %s: %w", clientID, sso.ID, ErrNotFound)
	}
	return sessions[0], nil
}
