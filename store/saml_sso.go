package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// RecordSAMLRequestID remembers a request ID of an issuer until
// expiresAt; one seen before is ErrConflict.
func (s *Store) RecordSAMLRequestID(ctx context.Context, realmID, issuer, requestID string, expiresAt time.Time) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO saml_request_ids (realm_id, issuer, request_id, expires_at)
		VALUES ($1, $2, $3, $4)`, realmID, issuer, requestID, expiresAt.UnixMilli())
	if err != nil {
		return fmt.Errorf("record SAML request ID: %w", mapErr(err))
	}
	return nil
}

// SAMLAuthRequest is an AuthnRequest waiting for its browser to sign in.
type SAMLAuthRequest struct {
	IDHash       []byte // SHA-256 of the handle the browser holds
	RealmID      string
	SPID         string
	RequestID    string // '' for an unsolicited response
	ACSURL       string
	RelayState   string
	NameIDFormat string
	ForceAuthn   bool
	// AuthnContext is the request's RequestedAuthnContext as the SAML
	// module keeps it (JSON); '' for none.
	AuthnContext string
	CreatedAt    int64 // Unix milliseconds
	ExpiresAt    int64
}

// CreateSAMLAuthRequest stores a waiting AuthnRequest.
func (s *Store) CreateSAMLAuthRequest(ctx context.Context, ar *SAMLAuthRequest) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO saml_auth_requests (id_hash, realm_id, sp_id, request_id, acs_url,
		relay_state, name_id_format, force_authn, authn_context, created_at, expires_at) VALUES (`+placeholders(11)+`)`,
		ar.IDHash, ar.RealmID, ar.SPID, ar.RequestID, ar.ACSURL, ar.RelayState, ar.NameIDFormat, ar.ForceAuthn,
		ar.AuthnContext, ar.CreatedAt, ar.ExpiresAt)
	if err != nil {
		return fmt.Errorf("create SAML auth request: %w", mapErr(err))
	}
	return nil
}

// TakeSAMLAuthRequest returns the realm's waiting AuthnRequest of that
// handle hash and deletes it: a request is answered once. One expired at
// now, or unknown, is ErrNotFound.
func (s *Store) TakeSAMLAuthRequest(ctx context.Context, realmID string, idHash []byte, now time.Time) (*SAMLAuthRequest, error) {
	var ar SAMLAuthRequest
	err := s.Tx(ctx, func(tx *Store) error {
		err := tx.w.QueryRowContext(ctx, `SELECT id_hash, realm_id, sp_id, request_id, acs_url, relay_state,
			name_id_format, force_authn, authn_context, created_at, expires_at FROM saml_auth_requests
			WHERE realm_id = $1 AND id_hash = $2 AND expires_at > $3`, realmID, idHash, now.UnixMilli()).Scan(
			&ar.IDHash, &ar.RealmID, &ar.SPID, &ar.RequestID, &ar.ACSURL, &ar.RelayState, &ar.NameIDFormat,
			&ar.ForceAuthn, &ar.AuthnContext, &ar.CreatedAt, &ar.ExpiresAt)
		if err != nil {
			return mapErr(err)
		}
		_, err = tx.w.ExecContext(ctx, "DELETE FROM saml_auth_requests WHERE id_hash = $1", idHash)
		return mapErr(err)
	})
	if err != nil {
		return nil, fmt.Errorf("take SAML auth request: %w", err)
	}
	return &ar, nil
}

// SAMLSession is a service provider an SSO session signed in to.
type SAMLSession struct {
	SessionIndex string
	RealmID      string
	SSOSessionID string
	SPID         string
	NameID       string
	NameIDFormat string
	CreatedAt    int64 // Unix milliseconds
}

// CreateSAMLSession records a sign-in of an SSO session at an SP; an
// ended SSO session or a deleted SP is ErrNotFound.
func (s *Store) CreateSAMLSession(ctx context.Context, ss *SAMLSession) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO saml_sessions (session_index, realm_id, sso_session_id, sp_id, name_id,
		name_id_format, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`, ss.SessionIndex, ss.RealmID, ss.SSOSessionID,
		ss.SPID, ss.NameID, ss.NameIDFormat, ss.CreatedAt)
	if err != nil {
		return fmt.Errorf("create SAML session: %w", mapErr(err))
	}
	return nil
}

// ListSAMLSessions returns the SAML sign-ins of an SSO session, oldest first.
func (s *Store) ListSAMLSessions(ctx context.Context, realmID, ssoSessionID string) ([]*SAMLSession, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT session_index, realm_id, sso_session_id, sp_id, name_id, name_id_format,
		created_at FROM saml_sessions WHERE realm_id = $1 AND sso_session_id = $2 ORDER BY created_at, session_index`,
		realmID, ssoSessionID)
	if err != nil {
		return nil, fmt.Errorf("list SAML sessions: %w", mapErr(err))
	}
	defer rows.Close()
	out := []*SAMLSession{}
	for rows.Next() {
		var ss SAMLSession
		if err := rows.Scan(&ss.SessionIndex, &ss.RealmID, &ss.SSOSessionID, &ss.SPID, &ss.NameID, &ss.NameIDFormat,
			&ss.CreatedAt); err != nil {
			return nil, mapErr(err)
		}
		out = append(out, &ss)
	}
	return out, mapErr(rows.Err())
}

// DeleteExpiredSAMLRows deletes the request IDs, waiting AuthnRequests and
// logouts under way expired at now, and says how many.
func (s *Store) DeleteExpiredSAMLRows(ctx context.Context, now time.Time) (int64, error) {
	var total int64
	for _, q := range []string{"DELETE FROM saml_request_ids WHERE expires_at <= $1",
		"DELETE FROM saml_auth_requests WHERE expires_at <= $1", "DELETE FROM saml_logouts WHERE expires_at <= $1"} {
		res, err := s.w.ExecContext(ctx, q, now.UnixMilli())
		if err != nil {
			return total, fmt.Errorf("delete expired SAML rows: %w", mapErr(err))
		}
		n, err := res.RowsAffected()
		if err != nil {
			return total, mapErr(err)
		}
		total += n
	}
	return total, nil
}

// PutSAMLLogout creates or replaces the state of a logout under way.
func (s *Store) PutSAMLLogout(ctx context.Context, realmID string, idHash []byte, state string, expiresAt time.Time) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO saml_logouts (id_hash, realm_id, state, expires_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (id_hash) DO UPDATE SET state = excluded.state, expires_at = excluded.expires_at`,
		idHash, realmID, state, expiresAt.UnixMilli())
	if err != nil {
		return fmt.Errorf("put SAML logout: %w", mapErr(err))
	}
	return nil
}

// GetSAMLLogout returns the state of the realm's logout under way of that
// handle hash; unknown or expired at now is ErrNotFound.
func (s *Store) GetSAMLLogout(ctx context.Context, realmID string, idHash []byte, now time.Time) (string, error) {
	var state string
	err := s.r.QueryRowContext(ctx, "SELECT state FROM saml_logouts WHERE realm_id = $1 AND id_hash = $2 AND expires_at > $3",
		realmID, idHash, now.UnixMilli()).Scan(&state)
	if err != nil {
		return "", fmt.Errorf("SAML logout: %w", mapErr(err))
	}
	return state, nil
}

// DeleteSAMLLogout ends the record of a logout.
func (s *Store) DeleteSAMLLogout(ctx context.Context, idHash []byte) error {
	_, err := s.w.ExecContext(ctx, "DELETE FROM saml_logouts WHERE id_hash = $1", idHash)
	if err != nil {
		return fmt.Errorf("delete SAML logout: %w", mapErr(err))
	}
	return nil
}

// SAMLServiceProvidersOfSessions returns, for each of the realm's SSO
// sessions named, the entity IDs of the service providers it signed in
// to, in the order it did.
func (s *Store) SAMLServiceProvidersOfSessions(ctx context.Context, realmID string, ssoSessionIDs []string) (map[string][]string, error) {
	out := map[string][]string{}
	if len(ssoSessionIDs) == 0 {
		return out, nil
	}
	args := []any{realmID}
	ph := make([]string, len(ssoSessionIDs))
	for i, id := range ssoSessionIDs {
		args = append(args, id)
		ph[i] = fmt.Sprintf("$%d", i+2)
	}
	rows, err := s.r.QueryContext(ctx, `SELECT ss.sso_session_id, sp.entity_id FROM saml_sessions ss
		JOIN saml_service_providers sp ON sp.id = ss.sp_id
		WHERE ss.realm_id = $1 AND ss.sso_session_id IN (`+strings.Join(ph, ", ")+`)
		ORDER BY ss.created_at, ss.session_index`, args...)
	if err != nil {
		return nil, fmt.Errorf("SAML service providers of sessions: %w", mapErr(err))
	}
	defer rows.Close()
	for rows.Next() {
		var sess, entity string
		if err := rows.Scan(&sess, &entity); err != nil {
			return nil, mapErr(err)
		}
		if !slices.Contains(out[sess], entity) {
			out[sess] = append(out[sess], entity)
		}
	}
	return out, mapErr(rows.Err())
}

// GetSAMLSession finds the sign-in at an SP of SessionIndex index.
func (s *Store) GetSAMLSession(ctx context.Context, realmID, index string) (*SAMLSession, error) {
	var ss SAMLSession
	err := s.r.QueryRowContext(ctx, `SELECT session_index, realm_id, sso_session_id, sp_id, name_id, name_id_format,
		created_at FROM saml_sessions WHERE realm_id = $1 AND session_index = $2`, realmID, index).Scan(
		&ss.SessionIndex, &ss.RealmID, &ss.SSOSessionID, &ss.SPID, &ss.NameID, &ss.NameIDFormat, &ss.CreatedAt)
	if err != nil {
		return nil, fmt.Errorf("SAML session: %w", mapErr(err))
	}
	return &ss, nil
}
