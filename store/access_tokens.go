package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
)

// Access tokens are JWTs: their signature and expiry are checked without
// the store. What can end one earlier is here: its revocation by jti, and
// the standing of its user, client and session.

// RevokeAccessToken lists an access token (by jti) as revoked until it
// would have expired anyway. Revoking it twice is no error.
func (s *Store) RevokeAccessToken(ctx context.Context, realmID, jti string, expiresAt int64) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO revoked_access_tokens (token_id, realm_id, expires_at) VALUES ($1, $2, $3)
		ON CONFLICT (token_id) DO NOTHING`, jti, realmID, expiresAt)
	if err != nil {
		return fmt.Errorf("revoke access token %s: %w", jti, mapErr(err))
	}
	return nil
}

// AccessTokenRevoked says whether the access token with this jti is revoked.
func (s *Store) AccessTokenRevoked(ctx context.Context, jti string) (bool, error) {
	var n int
	if err := s.r.QueryRowContext(ctx, "SELECT count(*) FROM revoked_access_tokens WHERE token_id = $1", jti).Scan(&n); err != nil {
		return false, fmt.Errorf("access token %s revoked: %w", jti, mapErr(err))
	}
	return n > 0, nil
}

// DeleteExpiredAccessTokenRevocations forgets the revocations of tokens
// expired by now, which their signature check refuses anyway.
func (s *Store) DeleteExpiredAccessTokenRevocations(ctx context.Context, now int64) (int64, error) {
	res, err := s.w.ExecContext(ctx, "DELETE FROM revoked_access_tokens WHERE expires_at <= $1", now)
	return rowsAffected(res, err, "delete expired access token revocations")
}

// AccessTokenClaims are the claims of an access token its standing is read
// by.
type AccessTokenClaims struct {
	RealmID   string
	TokenID   string // jti
	UserID    string // sub
	ClientID  string // azp: the client's clientId
	SessionID string // sid: an SSO or offline session; "" for none (client credentials)
	IssuedAt  int64  // iat, Unix seconds
	// CredentialID is the identity's credential (nhi_credentials) the
	// token was obtained with; "" for none.
	CredentialID string
}

// accessTokenStandingSQL reads in one statement what decides whether an
// access token stands. Its session part follows Keycloak: the token's
// session must be live and hold a session of the token's client (for an
// SSO session, an OAuth session under it; an offline session is the
// client's own) that started no later than the token was issued, so that
// the tokens of a client session that ended stay dead when the client
// signs in again under the same SSO session. iat counts whole seconds,
// hence the bound of $6, the end of the token's second. An SSO session
// without its client's session gives NULL, spelled out in the CASE: of
// the two-argument minimums, SQLite's min(a, NULL) is NULL but
// PostgreSQL's LEAST(a, NULL) is a. A token without a session stands only
// from its user's and client's not-before second on ($7 is its iat); one
// with a session needs nothing more, since ending access ends its session.
// A token obtained with an identity's credential stands while that
// credential is not revoked: its revocation time, 0 for none, NULL when the
// credential is gone.
const accessTokenStandingSQL = `SELECT c.enabled AND ($5 <> '' OR c.not_before <= $7),
	EXISTS (SELECT 1 FROM revoked_access_tokens WHERE token_id = $1),
	EXISTS (SELECT 1 FROM users WHERE id = $2 AND realm_id = $3 AND enabled AND ($5 <> '' OR not_before <= $7)),
	(SELECT max(CASE WHEN s.offline THEN s.expires_at WHEN o.id IS NULL THEN NULL
			WHEN o.expires_at < s.expires_at THEN o.expires_at ELSE s.expires_at END)
		FROM user_sessions s LEFT JOIN user_sessions o ON o.parent_id = s.id AND o.client_id = c.id AND o.started_at < $6
		WHERE s.id = $5 AND s.realm_id = $3 AND s.user_id = $2
			AND (s.kind = 'sso' OR s.offline AND s.client_id = c.id AND s.started_at < $6)),
	(SELECT COALESCE(revoked_at, 0) FROM nhi_credentials WHERE id = $8 AND realm_id = $3)
	FROM clients c WHERE c.realm_id = $3 AND c.client_id = $4`

// AccessTokenLiveUntil says until when (Unix milliseconds) an access token
// with claims t stands as far as the store knows: 0 when it is revoked, its
// user or client is gone or disabled, or its session has ended (or holds
// no session of its client started by then), it has no session and was
// issued before its user's or client's not-before, or its credential is
// gone or revoked; otherwise the expiry of its session (of the earlier of
// the SSO session and its client's session under it), or math.MaxInt64 for
// a token without a session, or its credential's revocation still to come
// if that is earlier. Sessions only
// slide forward until they end, and every write that ends one moves
// RevocationGeneration, so the answer holds while that generation stands
// and the time is before it.
func (s *Store) AccessTokenLiveUntil(ctx context.Context, t *AccessTokenClaims) (int64, error) {
	var clientEnabled, revoked, userEnabled bool
	var sessionExpires, credRevoked sql.NullInt64
	err := s.r.QueryRowContext(ctx, accessTokenStandingSQL, t.TokenID, t.UserID, t.RealmID, t.ClientID, t.SessionID,
		(t.IssuedAt+1)*1000, t.IssuedAt, t.CredentialID).Scan(&clientEnabled, &revoked, &userEnabled, &sessionExpires, &credRevoked)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil // the client is gone
	} else if err != nil {
		return 0, fmt.Errorf("standing of access token %s: %w", t.TokenID, mapErr(err))
	}
	until := int64(math.MaxInt64)
	if t.SessionID != "" {
		until = sessionExpires.Int64
	}
	switch {
	case !clientEnabled || revoked || !userEnabled:
		return 0, nil
	case t.CredentialID == "":
		return until, nil
	case !credRevoked.Valid:
		return 0, nil
	case credRevoked.Int64 != 0:
		return min(until, credRevoked.Int64), nil
	}
	return until, nil
}
