package store

import (
	"context"
	"errors"
	"fmt"
)

// RecordLogoutTokenID remembers the jti of a back-channel logout token
// until expiresAt, so that the token is accepted once only: a jti already
// seen is ErrConflict. Ids expired by now are forgotten in the same
// transaction, which keeps the table as small as the acceptance window.
func (s *Store) RecordLogoutTokenID(ctx context.Context, jti string, expiresAt, now int64) error {
	return s.Tx(ctx, func(tx *Store) error {
		if _, err := tx.w.ExecContext(ctx, "DELETE FROM logout_token_ids WHERE expires_at <= $1", now); err != nil {
			return fmt.Errorf("purge logout token ids: %w", mapErr(err))
		}
		res, err := tx.w.ExecContext(ctx, `INSERT INTO logout_token_ids (jti, expires_at) VALUES ($1, $2)
			ON CONFLICT (jti) DO NOTHING`, jti, expiresAt)
		n, err := rowsAffected(res, err, "record logout token id "+jti)
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("logout token id %s: %w", jti, ErrConflict)
		}
		return nil
	})
}

// LogoutRefreshToken is logout by refresh token: the token, found by its
// hash, must be live at now and belong to the realm and to client (the
// client's internal ID), or it is ErrNotFound. Its family is revoked and
// its session ended: for an online token the whole SSO session above it,
// with every client's session and token under it; for an offline token
// its offline session. It returns the token and the sessions ended, which
// name the clients to notify by back-channel logout; a session that has
// already expired ends nothing more.
func (s *Store) LogoutRefreshToken(ctx context.Context, realmID string, hash []byte, clientID string, now int64) (*RefreshToken, []*Session, error) {
	var rt *RefreshToken
	var ended []*Session
	err := s.Tx(ctx, func(tx *Store) error {
		var err error
		if rt, err = tx.refreshTokenByHash(ctx, tx.w, realmID, hash); err != nil {
			return err
		}
		if rt.ClientID != clientID || !rt.Live(now) {
			return fmt.Errorf("live refresh token of client %s: %w", clientID, ErrNotFound)
		}
		if _, err := tx.RevokeRefreshFamily(ctx, realmID, rt.FamilyID, now); err != nil {
			return err
		}
		if rt.SessionID == "" {
			return nil
		}
		sessions, err := tx.querySessions(ctx, tx.w, "s.realm_id = $1 AND s.id = $2", realmID, rt.SessionID)
		if err != nil || len(sessions) == 0 {
			return err
		}
		id, kind := sessions[0].ID, SessionOAuth
		if sessions[0].ParentID != "" {
			id, kind = sessions[0].ParentID, SessionSSO
		}
		ended, err = tx.DeleteSession(ctx, realmID, id, kind, now)
		if errors.Is(err, ErrNotFound) {
			return nil // expired: nothing left to end
		}
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return rt, ended, nil
}
