package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
)

// ErrCodeReused: an authorization code was presented after it had been
// redeemed, so it may have been stolen. What its first redemption issued is
// revoked.
var ErrCodeReused = errors.New("authorization code already redeemed")

// AuthRequest is an authorization request from the authorization endpoint
// until its code is redeemed. It is pending until a user authenticates for
// it, then done once a code is issued; the code is stored as its hash only.
//
// The access token issued for a code carries the request's ID as its jti,
// so a replayed code can revoke it without the token being stored.
type AuthRequest struct {
	ID                  string
	RealmID             string
	ClientID            string // the client's internal ID
	RedirectURI         string
	Scopes              []string
	State               string
	Nonce               string
	ResponseType        string
	ResponseMode        string
	CodeChallenge       string
	CodeChallengeMethod string
	Prompt              []string
	MaxAge              *int // seconds; nil when not asked
	LoginHint           string
	// Once a user has authenticated: the user, the SSO session, and when
	// and how the user authenticated.
	UserID      string
	SessionID   string
	AuthTime    int64 // Unix milliseconds, as are the times below
	AMR         []string
	Done        bool   // a code has been issued
	CodeHash    []byte // HashToken of the code, once issued
	CodeUsedAt  int64  // 0 until the code is redeemed
	TokenFamily string // the refresh-token family the redemption started; "" for none
	// OrgHint is the organization (slug) the request named with
	// organization or kc_org; Org is what the sign-in settled on.
	OrgHint   string
	Org       OrgChoice
	CreatedAt int64
	// ExpiresAt is when a pending request or an issued code expires; once
	// redeemed, when the access token issued for it expires.
	ExpiresAt int64
}

const authRequestColumns = `id, realm_id, client_id, redirect_uri, scopes, state, nonce, response_type, response_mode,
	code_challenge, code_challenge_method, prompt, max_age, login_hint, user_id, session_id, auth_time, amr, done,
	code_hash, code_used_at, token_family, created_at, expires_at, org_hint, organization_id`

func scanAuthRequest(row scanner) (*AuthRequest, error) {
	var r AuthRequest
	var scopes, prompt, amr string
	var maxAge, used sql.NullInt64
	var user, session, org sql.NullString
	err := row.Scan(&r.ID, &r.RealmID, &r.ClientID, &r.RedirectURI, &scopes, &r.State, &r.Nonce, &r.ResponseType,
		&r.ResponseMode, &r.CodeChallenge, &r.CodeChallengeMethod, &prompt, &maxAge, &r.LoginHint, &user, &session,
		&r.AuthTime, &amr, &r.Done, &r.CodeHash, &used, &r.TokenFamily, &r.CreatedAt, &r.ExpiresAt, &r.OrgHint, &org)
	if err != nil {
		return nil, mapErr(err)
	}
	r.Org = OrgChoice{Made: org.Valid, ID: org.String}
	r.UserID, r.SessionID, r.CodeUsedAt = user.String, session.String, used.Int64
	if maxAge.Valid {
		v := int(maxAge.Int64)
		r.MaxAge = &v
	}
	for _, f := range []struct {
		name string
		raw  string
		dst  *[]string
	}{{"scopes", scopes, &r.Scopes}, {"prompt", prompt, &r.Prompt}, {"amr", amr, &r.AMR}} {
		if err := json.Unmarshal([]byte(f.raw), f.dst); err != nil {
			return nil, fmt.Errorf("decode %s of auth request %s: %w", f.name, r.ID, err)
		}
	}
	return &r, nil
}

// CreateAuthRequest stores r, in whatever state it is: a request answered
// at once from an SSO session comes authenticated and with its code. Its
// client must be of its realm and, once authenticated, its session an SSO
// session of its user there; otherwise ErrNotFound.
func (s *Store) CreateAuthRequest(ctx context.Context, r *AuthRequest) error {
	if r.CodeHash != nil && len(r.CodeHash) != sha256.Size {
		return fmt.Errorf("auth request %s: the code hash must be %d bytes: store HashToken(code), never the code",
			r.ID, sha256.Size)
	}
	return s.Tx(ctx, func(tx *Store) error {
		var clients, sessions int
		err := tx.w.QueryRowContext(ctx, `SELECT
			(SELECT count(*) FROM clients WHERE id = $1 AND realm_id = $2),
			(SELECT count(*) FROM user_sessions WHERE id = $3 AND realm_id = $2 AND user_id = $4 AND kind = 'sso')`,
			r.ClientID, r.RealmID, r.SessionID, r.UserID).Scan(&clients, &sessions)
		if err != nil {
			return fmt.Errorf("create auth request %s: %w", r.ID, mapErr(err))
		}
		switch {
		case clients == 0:
			return fmt.Errorf("create auth request %s: client %s: %w", r.ID, r.ClientID, ErrNotFound)
		case (r.UserID != "" || r.SessionID != "") && sessions == 0:
			return fmt.Errorf("create auth request %s: SSO session %s of user %s: %w", r.ID, r.SessionID, r.UserID, ErrNotFound)
		}
		var maxAge sql.NullInt64
		if r.MaxAge != nil {
			maxAge = sql.NullInt64{Int64: int64(*r.MaxAge), Valid: true}
		}
		_, err = tx.w.ExecContext(ctx, "INSERT INTO auth_requests ("+authRequestColumns+") VALUES ("+placeholders(26)+")",
			r.ID, r.RealmID, r.ClientID, r.RedirectURI, jsonList(r.Scopes), r.State, r.Nonce, r.ResponseType,
			r.ResponseMode, r.CodeChallenge, r.CodeChallengeMethod, jsonList(r.Prompt), maxAge, r.LoginHint,
			nullString(r.UserID), nullString(r.SessionID), r.AuthTime, jsonList(r.AMR), r.Done, r.CodeHash,
			nullInt(r.CodeUsedAt), r.TokenFamily, r.CreatedAt, r.ExpiresAt, r.OrgHint, r.Org.column())
		if err != nil {
			return fmt.Errorf("create auth request %s: %w", r.ID, mapErr(err))
		}
		return nil
	})
}

// GetAuthRequest finds a request of the realm, whatever its state.
func (s *Store) GetAuthRequest(ctx context.Context, realmID, id string) (*AuthRequest, error) {
	r, err := scanAuthRequest(s.r.QueryRowContext(ctx,
		"SELECT "+authRequestColumns+" FROM auth_requests WHERE realm_id = $1 AND id = $2", realmID, id))
	if err != nil {
		return nil, fmt.Errorf("auth request %s: %w", id, err)
	}
	return r, nil
}

// AuthRequestByCode finds a request of the realm by the hash of its code,
// whatever its state.
func (s *Store) AuthRequestByCode(ctx context.Context, realmID string, codeHash []byte) (*AuthRequest, error) {
	r, err := scanAuthRequest(s.r.QueryRowContext(ctx,
		"SELECT "+authRequestColumns+" FROM auth_requests WHERE realm_id = $1 AND code_hash = $2", realmID, codeHash))
	if err != nil {
		return nil, fmt.Errorf("auth request by code: %w", err)
	}
	return r, nil
}

// AuthenticateAuthRequest records that a user authenticated for a request
// pending at now, in the active SSO session sessionID of that user. A
// request not pending, or a session that is not such, is ErrNotFound. An
// organization settled on for an earlier authentication is forgotten.
func (s *Store) AuthenticateAuthRequest(ctx context.Context, realmID, id, userID, sessionID string, authTime int64, amr []string, now int64) error {
	res, err := s.w.ExecContext(ctx, `UPDATE auth_requests SET user_id = $1, session_id = $2, auth_time = $3, amr = $4,
		organization_id = NULL WHERE realm_id = $5 AND id = $6 AND NOT done AND expires_at > $7
			AND EXISTS (SELECT 1 FROM user_sessions WHERE id = $2 AND realm_id = $5 AND user_id = $1 AND kind = 'sso'
				AND expires_at > $7)`,
		userID, sessionID, authTime, jsonList(amr), realmID, id, now)
	if err != nil {
		return fmt.Errorf("authenticate auth request %s: %w", id, mapErr(err))
	}
	return affectedOne(res, "pending auth request "+id+" and active SSO session "+sessionID)
}

// SettleAuthRequestOrganization records the organization an authenticated
// request pending at now settled on, once: a request that settled already,
// or is not such, is ErrNotFound, so of two answers racing one counts.
func (s *Store) SettleAuthRequestOrganization(ctx context.Context, realmID, id string, org OrgChoice, now int64) error {
	if !org.Made {
		return fmt.Errorf("auth request %s: settle on an organization choice that was made", id)
	}
	res, err := s.w.ExecContext(ctx, `UPDATE auth_requests SET organization_id = $1
		WHERE realm_id = $2 AND id = $3 AND NOT done AND user_id IS NOT NULL AND expires_at > $4
			AND organization_id IS NULL`, org.ID, realmID, id, now)
	if err != nil {
		return fmt.Errorf("settle organization of auth request %s: %w", id, mapErr(err))
	}
	return affectedOne(res, "authenticated pending auth request "+id+" without an organization")
}

// IssueAuthCode marks a request authenticated and pending at now as done,
// with the code of this hash, valid until expiresAt. Anything else is
// ErrNotFound.
func (s *Store) IssueAuthCode(ctx context.Context, realmID, id string, codeHash []byte, now, expiresAt int64) error {
	if len(codeHash) != sha256.Size {
		return fmt.Errorf("auth request %s: the code hash must be %d bytes: store HashToken(code), never the code",
			id, sha256.Size)
	}
	res, err := s.w.ExecContext(ctx, `UPDATE auth_requests SET done = true, code_hash = $1, expires_at = $2
		WHERE realm_id = $3 AND id = $4 AND NOT done AND user_id IS NOT NULL AND expires_at > $5`,
		codeHash, expiresAt, realmID, id, now)
	if err != nil {
		return fmt.Errorf("issue code of auth request %s: %w", id, mapErr(err))
	}
	return affectedOne(res, "authenticated pending auth request "+id)
}

// RedeemAuthCode marks the code of a request as used at now, recording the
// refresh-token family the redemption starts ("" for none) and keeping the
// request until keepUntil, when the access token issued for it expires, so
// that a replay can still revoke what it issued. A code not issued or
// expired by now is ErrNotFound. A code already redeemed is ErrCodeReused,
// after RevokeAuthCodeGrant has revoked what its redemption issued.
func (s *Store) RedeemAuthCode(ctx context.Context, realmID, id, familyID string, now, keepUntil int64) error {
	reused := false
	err := s.Tx(ctx, func(tx *Store) error {
		r, err := scanAuthRequest(tx.w.QueryRowContext(ctx,
			"SELECT "+authRequestColumns+" FROM auth_requests WHERE realm_id = $1 AND id = $2", realmID, id))
		switch {
		case err != nil:
			return fmt.Errorf("auth request %s: %w", id, err)
		case r.CodeUsedAt != 0:
			reused = true
			return tx.RevokeAuthCodeGrant(ctx, realmID, id, now)
		case !r.Done || r.ExpiresAt <= now:
			return fmt.Errorf("code of auth request %s: %w", id, ErrNotFound)
		}
		_, err = tx.w.ExecContext(ctx, `UPDATE auth_requests SET code_used_at = $1, token_family = $2, expires_at = $3
			WHERE realm_id = $4 AND id = $5`, now, familyID, keepUntil, realmID, id)
		if err != nil {
			return fmt.Errorf("redeem code of auth request %s: %w", id, mapErr(err))
		}
		return nil
	})
	if err == nil && reused {
		return fmt.Errorf("code of auth request %s: %w", id, ErrCodeReused)
	}
	return err
}

// RevokeAuthCodeGrant revokes what the redemption of a request's code
// issued: its refresh-token family, and its access token (whose jti is the
// request's ID) until that would have expired anyway. A request whose code
// was not redeemed is ErrNotFound.
func (s *Store) RevokeAuthCodeGrant(ctx context.Context, realmID, id string, now int64) error {
	return s.Tx(ctx, func(tx *Store) error {
		var family string
		var expires int64
		err := tx.w.QueryRowContext(ctx, `SELECT token_family, expires_at FROM auth_requests
			WHERE realm_id = $1 AND id = $2 AND code_used_at IS NOT NULL`, realmID, id).Scan(&family, &expires)
		if err != nil {
			return fmt.Errorf("redeemed auth request %s: %w", id, mapErr(err))
		}
		if family != "" {
			if _, err := tx.RevokeRefreshFamily(ctx, realmID, family, now); err != nil {
				return err
			}
		}
		return tx.RevokeAccessToken(ctx, realmID, id, expires)
	})
}

// DeleteAuthRequest forgets a request of the realm, as when the user
// denies it.
func (s *Store) DeleteAuthRequest(ctx context.Context, realmID, id string) error {
	res, err := s.w.ExecContext(ctx, "DELETE FROM auth_requests WHERE realm_id = $1 AND id = $2", realmID, id)
	if err != nil {
		return fmt.Errorf("delete auth request %s: %w", id, mapErr(err))
	}
	return affectedOne(res, "auth request "+id)
}

// DeleteExpiredAuthRequests removes the requests of every realm that
// expired by now and counts them.
func (s *Store) DeleteExpiredAuthRequests(ctx context.Context, now int64) (int64, error) {
	res, err := s.w.ExecContext(ctx, "DELETE FROM auth_requests WHERE expires_at <= $1", now)
	return rowsAffected(res, err, "delete expired auth requests")
}
