package store

import (
	"context"
	"fmt"
)

// Ending a user's or a client's access for good: every session and
// refresh token goes, offline ones too, and the not-before second moves so
// that the access tokens without a session (the client credentials
// grant's) issued until then stay dead when the user or client is enabled
// again. An access token with a session dies with its session, which is
// never created again.

// EndUserAccess ends every session of the user (SSO, client and offline)
// with its refresh tokens, drops the device authorizations the user
// approved (a device not yet polling would get tokens of before), and
// moves the user's not-before to notBefore (Unix seconds) unless it is
// later already. It returns the sessions that were active at now.
func (s *Store) EndUserAccess(ctx context.Context, realmID, userID string, notBefore, now int64) ([]*Session, error) {
	var ended []*Session
	err := s.Tx(ctx, func(tx *Store) error {
		_, err := tx.w.ExecContext(ctx, `UPDATE users SET not_before = $3
			WHERE realm_id = $1 AND id = $2 AND not_before < $3`, realmID, userID, notBefore)
		if err != nil {
			return fmt.Errorf("move not-before of user %s: %w", userID, mapErr(err))
		}
		if ended, err = tx.querySessions(ctx, tx.w, `s.realm_id = $1 AND s.user_id = $2 AND s.expires_at > $3
			ORDER BY s.started_at, s.id`, realmID, userID, now); err != nil {
			return err
		}
		if _, err := tx.w.ExecContext(ctx, "DELETE FROM refresh_tokens WHERE realm_id = $1 AND user_id = $2", realmID, userID); err != nil {
			return fmt.Errorf("delete refresh tokens of user %s: %w", userID, mapErr(err))
		}
		if _, err := tx.w.ExecContext(ctx, "DELETE FROM user_sessions WHERE realm_id = $1 AND user_id = $2", realmID, userID); err != nil {
			return fmt.Errorf("delete sessions of user %s: %w", userID, mapErr(err))
		}
		if _, err := tx.w.ExecContext(ctx, "DELETE FROM device_authorizations WHERE realm_id = $1 AND user_id = $2", realmID, userID); err != nil {
			return fmt.Errorf("delete device authorizations of user %s: %w", userID, mapErr(err))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ended, nil
}

// EndClientAccess ends the client's sessions (its sessions under SSO
// sessions and its offline sessions; the SSO sessions stay), which take
// every refresh token of the client with them (each belongs to its
// client's session), drops its device authorizations, and moves the
// client's not-before to notBefore (Unix seconds) unless it is later
// already. id is the client's internal ID. It returns the sessions that
// were active at now.
func (s *Store) EndClientAccess(ctx context.Context, realmID, id string, notBefore, now int64) ([]*Session, error) {
	var ended []*Session
	err := s.Tx(ctx, func(tx *Store) error {
		if _, err := tx.w.ExecContext(ctx, `UPDATE clients SET not_before = $3
			WHERE realm_id = $1 AND id = $2 AND not_before < $3`, realmID, id, notBefore); err != nil {
			return fmt.Errorf("move not-before of client %s: %w", id, mapErr(err))
		}
		var err error
		if ended, err = tx.querySessions(ctx, tx.w, `s.realm_id = $1 AND s.client_id = $2 AND s.expires_at > $3
			ORDER BY s.started_at, s.id`, realmID, id, now); err != nil {
			return err
		}
		if _, err := tx.w.ExecContext(ctx, "DELETE FROM user_sessions WHERE realm_id = $1 AND client_id = $2", realmID, id); err != nil {
			return fmt.Errorf("delete sessions of client %s: %w", id, mapErr(err))
		}
		if _, err := tx.w.ExecContext(ctx, "DELETE FROM device_authorizations WHERE realm_id = $1 AND client_id = $2", realmID, id); err != nil {
			return fmt.Errorf("delete device authorizations of client %s: %w", id, mapErr(err))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ended, nil
}
