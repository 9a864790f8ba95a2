package store

import (
	"context"
	"fmt"
)

// Sign-out at the upstream: the upstream ID token of a brokered sign-in
// follows it from the callback to the SSO session it ends in, and a
// sign-out sent through the upstream's end_session_endpoint waits for the
// browser to come back.

// brokerIDTokenAAD binds a sealed upstream ID token to its provider: the
// token moves from the sign-in's row to the session's with it.
func brokerIDTokenAAD(providerID string) string { return "broker.id_token:" + providerID }

// BrokerSession is the upstream an SSO session was signed in through.
type BrokerSession struct {
	ProviderID string
	IDToken    string // the upstream's ID token; plaintext here, sealed in the database
}

// PutBrokerSignIn keeps the upstream ID token of the sign-in of an
// authorization request, replacing one an earlier attempt left.
func (s *Store) PutBrokerSignIn(ctx context.Context, authRequestID, providerID, idToken string) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO broker_signins (auth_request_id, provider_id, id_token) VALUES ($1, $2, $3)
		ON CONFLICT (auth_request_id) DO UPDATE SET provider_id = excluded.provider_id, id_token = excluded.id_token`,
		authRequestID, providerID, s.seal([]byte(idToken), brokerIDTokenAAD(providerID)))
	if err != nil {
		return fmt.Errorf("put broker sign-in: %w", mapErr(err))
	}
	return nil
}

// BindBrokerSession hands the upstream ID token of the authorization
// request's sign-in, if it has one, to the SSO session the sign-in ended
// in (replacing what that session held). Without one, nothing changes.
func (s *Store) BindBrokerSession(ctx context.Context, authRequestID, sessionID string) error {
	return s.bindBrokerSession(ctx, "broker_signins", "auth_request_id", authRequestID, sessionID)
}

// bindBrokerSession moves the upstream ID token held in table's row whose
// column is key to the SSO session sessionID. table and column are the
// store's own names, never input.
func (s *Store) bindBrokerSession(ctx context.Context, table, column, key, sessionID string) error {
	res, err := s.w.ExecContext(ctx, `INSERT INTO broker_sessions (session_id, provider_id, id_token)
		SELECT $2, provider_id, id_token FROM `+table+` WHERE `+column+` = $1
		ON CONFLICT (session_id) DO UPDATE SET provider_id = excluded.provider_id, id_token = excluded.id_token`,
		key, sessionID)
	if n, err := rowsAffected(res, err, "bind broker session from "+table); err != nil || n == 0 {
		return err
	}
	if _, err = s.w.ExecContext(ctx, "DELETE FROM "+table+" WHERE "+column+" = $1", key); err != nil {
		return fmt.Errorf("delete from %s: %w", table, mapErr(err))
	}
	return nil
}

// PutBrokerFlowSignIn keeps the upstream ID token of the sign-in of a
// sign-in flow until expiresAt, replacing one an earlier attempt left.
func (s *Store) PutBrokerFlowSignIn(ctx context.Context, flowID, providerID, idToken string, expiresAt int64) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO broker_flow_signins (signin_flow_id, provider_id, id_token, expires_at)
		VALUES ($1, $2, $3, $4) ON CONFLICT (signin_flow_id) DO UPDATE SET provider_id = excluded.provider_id,
		id_token = excluded.id_token, expires_at = excluded.expires_at`,
		flowID, providerID, s.seal([]byte(idToken), brokerIDTokenAAD(providerID)), expiresAt)
	if err != nil {
		return fmt.Errorf("put broker flow sign-in: %w", mapErr(err))
	}
	return nil
}

// BindBrokerFlowSession hands the upstream ID token of the sign-in flow's
// brokered sign-in, if it had one, to the SSO session the flow ended in,
// as BindBrokerSession does for an authorization request's.
func (s *Store) BindBrokerFlowSession(ctx context.Context, flowID, sessionID string) error {
	return s.bindBrokerSession(ctx, "broker_flow_signins", "signin_flow_id", flowID, sessionID)
}

// GetBrokerSession is the upstream the SSO session was signed in
// through; ErrNotFound for a session signed in otherwise.
func (s *Store) GetBrokerSession(ctx context.Context, sessionID string) (*BrokerSession, error) {
	var b BrokerSession
	var sealed []byte
	err := s.r.QueryRowContext(ctx, "SELECT provider_id, id_token FROM broker_sessions WHERE session_id = $1", sessionID).
		Scan(&b.ProviderID, &sealed)
	if err != nil {
		return nil, fmt.Errorf("broker session: %w", mapErr(err))
	}
	plain, err := s.open(sealed, brokerIDTokenAAD(b.ProviderID))
	if err != nil {
		return nil, err
	}
	b.IDToken = string(plain)
	return &b, nil
}

// BrokerLogout is a sign-out sent through an upstream's end_session_endpoint.
type BrokerLogout struct {
	StateHash  []byte // HashToken of the state sent upstream
	RealmID    string
	ProviderID string
	Redirect   string // where the sign-out goes on to; "" for the signed-out page
	CreatedAt  int64
	ExpiresAt  int64
}

// CreateBrokerLogout records l.
func (s *Store) CreateBrokerLogout(ctx context.Context, l *BrokerLogout) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO broker_logouts (state_hash, realm_id, provider_id, redirect, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, l.StateHash, l.RealmID, l.ProviderID, l.Redirect, l.CreatedAt, l.ExpiresAt)
	if err != nil {
		return fmt.Errorf("create broker logout: %w", mapErr(err))
	}
	return nil
}

// TakeBrokerLogout finds the realm's sign-out by its state's hash and
// deletes it, so a state is used once: an unknown, used or (at now)
// expired state is ErrNotFound.
func (s *Store) TakeBrokerLogout(ctx context.Context, realmID string, stateHash []byte, now int64) (*BrokerLogout, error) {
	var l BrokerLogout
	err := s.Tx(ctx, func(tx *Store) error {
		err := tx.w.QueryRowContext(ctx, `SELECT state_hash, realm_id, provider_id, redirect, created_at, expires_at
			FROM broker_logouts WHERE realm_id = $1 AND state_hash = $2`, realmID, stateHash).
			Scan(&l.StateHash, &l.RealmID, &l.ProviderID, &l.Redirect, &l.CreatedAt, &l.ExpiresAt)
		if err != nil {
			return fmt.Errorf("broker logout: %w", mapErr(err))
		}
		_, err = tx.w.ExecContext(ctx, "DELETE FROM broker_logouts WHERE state_hash = $1", stateHash)
		return mapErr(err)
	})
	if err != nil {
		return nil, err
	}
	if l.ExpiresAt <= now {
		return nil, fmt.Errorf("broker logout expired: %w", ErrNotFound)
	}
	return &l, nil
}
