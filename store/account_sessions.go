package store

import (
	"context"
	"fmt"
)

// DeleteOtherUserSessions ends every session of a user except keep (an
// SSO session, or a lone offline one) and the client sessions under it.
// As with DeleteUserSessions, offline sessions stay: they end when their
// offline token is revoked. It returns the sessions that were active at
// now, for back-channel logout. keep "" ends them all.
func (s *Store) DeleteOtherUserSessions(ctx context.Context, realmID, userID, keep string, now int64) ([]*Session, error) {
	var ended []*Session
	err := s.Tx(ctx, func(tx *Store) error {
		const others = `realm_id = $1 AND user_id = $2 AND NOT offline AND id <> $3 AND (parent_id IS NULL OR parent_id <> $3)`
		var err error
		ended, err = tx.querySessions(ctx, tx.w, `s.realm_id = $1 AND s.user_id = $2 AND NOT s.offline AND s.id <> $3
			AND (s.parent_id IS NULL OR s.parent_id <> $3) AND s.expires_at > $4 ORDER BY s.started_at, s.id`, realmID, userID, keep, now)
		if err != nil {
			return err
		}
		if _, err := tx.w.ExecContext(ctx, "DELETE FROM user_sessions WHERE "+others, realmID, userID, keep); err != nil {
			return fmt.Errorf("delete other sessions of user %s: %w", userID, mapErr(err))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ended, nil
}
