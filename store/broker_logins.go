package store

import (
	"context"
	"database/sql"
	"encoding/hex"
	"fmt"
)

// BrokerLogin is a sign-in on its way through an upstream identity
// provider: made when the browser is sent upstream, taken (once) when it
// comes back to the callback.
type BrokerLogin struct {
	StateHash     []byte // HashToken of the state sent upstream
	RealmID       string
	ProviderID    string
	BrowserHash   []byte // HashToken of the browser's cookie
	Nonce         string
	CodeVerifier  string // PKCE; plaintext here, sealed in the database
	AuthRequestID string // the authorization request it continues; "" for none
	SignInFlowID  string // the sign-in flow it continues; "" for none
	LinkUserID    string // the signed-in user it links the provider to; "" for none
	CreatedAt     int64
	ExpiresAt     int64
}

func brokerLoginAAD(stateHash []byte) string {
	return "broker_login.code_verifier:" + hex.EncodeToString(stateHash)
}

// CreateBrokerLogin records l.
func (s *Store) CreateBrokerLogin(ctx context.Context, l *BrokerLogin) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO broker_logins (state_hash, realm_id, provider_id, browser_hash, nonce,
		code_verifier, auth_request_id, signin_flow_id, link_user_id, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		l.StateHash, l.RealmID, l.ProviderID, l.BrowserHash, l.Nonce, s.seal([]byte(l.CodeVerifier), brokerLoginAAD(l.StateHash)),
		nullString(l.AuthRequestID), nullString(l.SignInFlowID), nullString(l.LinkUserID), l.CreatedAt, l.ExpiresAt)
	if err != nil {
		return fmt.Errorf("create broker login: %w", mapErr(err))
	}
	return nil
}

// TakeBrokerLogin finds the realm's sign-in by its state's hash and deletes
// it, so a state is used once: an unknown, used or (at now) expired state is
// ErrNotFound.
func (s *Store) TakeBrokerLogin(ctx context.Context, realmID string, stateHash []byte, now int64) (*BrokerLogin, error) {
	var l BrokerLogin
	err := s.Tx(ctx, func(tx *Store) error {
		var verifier []byte
		var authRequest, flow, linkUser sql.NullString
		err := tx.w.QueryRowContext(ctx, `SELECT state_hash, realm_id, provider_id, browser_hash, nonce, code_verifier,
			auth_request_id, signin_flow_id, link_user_id, created_at, expires_at FROM broker_logins
			WHERE realm_id = $1 AND state_hash = $2`,
			realmID, stateHash).Scan(&l.StateHash, &l.RealmID, &l.ProviderID, &l.BrowserHash, &l.Nonce, &verifier,
			&authRequest, &flow, &linkUser, &l.CreatedAt, &l.ExpiresAt)
		if err != nil {
			return fmt.Errorf("broker login: %w", mapErr(err))
		}
		if _, err := tx.w.ExecContext(ctx, "DELETE FROM broker_logins WHERE state_hash = $1", stateHash); err != nil {
			return fmt.Errorf("delete broker login: %w", mapErr(err))
		}
		plain, err := tx.open(verifier, brokerLoginAAD(l.StateHash))
		if err != nil {
			return err
		}
		l.CodeVerifier, l.AuthRequestID, l.SignInFlowID, l.LinkUserID = string(plain), authRequest.String, flow.String, linkUser.String
		return nil
	})
	if err != nil {
		return nil, err
	}
	if l.ExpiresAt <= now {
		return nil, fmt.Errorf("broker login expired: %w", ErrNotFound)
	}
	return &l, nil
}

// DeleteExpiredBrokerLogins removes sign-ins and sign-outs that never
// came back, links never confirmed, and the upstream ID tokens of flows
// no session took.
func (s *Store) DeleteExpiredBrokerLogins(ctx context.Context, now int64) (int64, error) {
	res, err := s.w.ExecContext(ctx, "DELETE FROM broker_logins WHERE expires_at <= $1", now)
	logins, err := rowsAffected(res, err, "delete expired broker logins")
	if err != nil {
		return logins, err
	}
	res, err = s.w.ExecContext(ctx, "DELETE FROM broker_pending_links WHERE expires_at <= $1", now)
	links, err := rowsAffected(res, err, "delete expired broker pending links")
	if err != nil {
		return logins + links, err
	}
	res, err = s.w.ExecContext(ctx, "DELETE FROM broker_logouts WHERE expires_at <= $1", now)
	logouts, err := rowsAffected(res, err, "delete expired broker logouts")
	if err != nil {
		return logins + links + logouts, err
	}
	res, err = s.w.ExecContext(ctx, "DELETE FROM broker_flow_signins WHERE expires_at <= $1", now)
	tokens, err := rowsAffected(res, err, "delete expired broker flow sign-ins")
	return logins + links + logouts + tokens, err
}

// BrokerPendingLink is an upstream account that matched a local account by
// email, held while the person signs in to the local account to confirm
// the link.
type BrokerPendingLink struct {
	ID         string
	RealmID    string
	ProviderID string
	UserID     string // the local account
	// What the sign-in continues: an authorization request or a sign-in
	// flow, exactly one.
	AuthRequestID string
	SignInFlowID  string
	BrowserHash   []byte
	Identity      string // the mapped upstream identity, JSON; sealed in the database
	CreatedAt     int64
	ExpiresAt     int64
}

func pendingLinkAAD(id string) string { return "broker_pending_link.identity:" + id }

// CreateBrokerPendingLink records l.
func (s *Store) CreateBrokerPendingLink(ctx context.Context, l *BrokerPendingLink) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO broker_pending_links (id, realm_id, provider_id, user_id, auth_request_id,
		signin_flow_id, browser_hash, identity, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		l.ID, l.RealmID, l.ProviderID, l.UserID, nullString(l.AuthRequestID), nullString(l.SignInFlowID), l.BrowserHash,
		s.seal([]byte(l.Identity), pendingLinkAAD(l.ID)), l.CreatedAt, l.ExpiresAt)
	if err != nil {
		return fmt.Errorf("create broker pending link: %w", mapErr(err))
	}
	return nil
}

// GetBrokerPendingLink finds the realm's pending link; an expired one (at
// now) is ErrNotFound.
func (s *Store) GetBrokerPendingLink(ctx context.Context, realmID, id string, now int64) (*BrokerPendingLink, error) {
	var l BrokerPendingLink
	var identity []byte
	var authRequest, flow sql.NullString
	err := s.r.QueryRowContext(ctx, `SELECT id, realm_id, provider_id, user_id, auth_request_id, signin_flow_id, browser_hash,
		identity, created_at, expires_at FROM broker_pending_links WHERE realm_id = $1 AND id = $2 AND expires_at > $3`,
		realmID, id, now).Scan(&l.ID, &l.RealmID, &l.ProviderID, &l.UserID, &authRequest, &flow, &l.BrowserHash, &identity,
		&l.CreatedAt, &l.ExpiresAt)
	if err != nil {
		return nil, fmt.Errorf("broker pending link: %w", mapErr(err))
	}
	l.AuthRequestID, l.SignInFlowID = authRequest.String, flow.String
	plain, err := s.open(identity, pendingLinkAAD(l.ID))
	if err != nil {
		return nil, err
	}
	l.Identity = string(plain)
	return &l, nil
}

// DeleteBrokerPendingLink ends a pending link; a second deletion is
// ErrNotFound, so a link is confirmed once.
func (s *Store) DeleteBrokerPendingLink(ctx context.Context, realmID, id string) error {
	res, err := s.w.ExecContext(ctx, "DELETE FROM broker_pending_links WHERE realm_id = $1 AND id = $2", realmID, id)
	if err != nil {
		return fmt.Errorf("delete broker pending link: %w", mapErr(err))
	}
	return affectedOne(res, "broker pending link "+id)
}
