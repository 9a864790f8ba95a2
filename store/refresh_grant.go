package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
)

// RefreshGrant is a refresh token with what a refresh checks beside it.
// It is read on every refresh, so it reads only what a refresh or the
// introspection of a refresh token uses: the user has no PasswordHash and
// no PasswordChangedAt, and the sessions no PublicClientID (their Username
// is the user's).
type RefreshGrant struct {
	Token   *RefreshToken
	User    *User
	Session *Session // the token's OAuth session (an offline one for an offline token)
	SSO     *Session // the SSO session above Session; nil when it has none
}

// RefreshGrantByHash finds a token of the realm by its hash, whatever its
// state (see Live), with its user and its sessions, in one query. A token
// without a session is ErrNotFound, as nothing can be refreshed without
// one.
//
// The SQLite driver costs about three allocations and a microsecond per
// column of a row (its name and declared type, read on every query, then
// the value), so the query names no column the caller knows already (the
// realm, the hash, the sessions' user) and joins no client.
func (s *Store) RefreshGrantByHash(ctx context.Context, realmID string, hash []byte) (*RefreshGrant, error) {
	t := &RefreshToken{RealmID: realmID, TokenHash: hash}
	u := &User{RealmID: realmID}
	var (
		session, org, serviceAccount sql.NullString
		rotated, revoked             sql.NullInt64
		scopes, amr                  string
		oauth, sso                   grantSession
		hasSSO                       bool
	)
	dest := []any{&t.ID, &t.FamilyID, &session, &t.ClientID, &t.UserID, &scopes, &t.Offline, &t.AuthTime, &amr,
		&t.CreatedAt, &t.ExpiresAt, &rotated, &revoked, &org,
		&u.Username, &u.Email, &u.FirstName, &u.LastName, &u.Enabled, &u.EmailVerified, &u.RequirePasswordReset,
		&u.CreatedAt, &serviceAccount}
	dest = append(oauth.dest(dest), &hasSSO)
	dest = sso.dest(dest)
	if err := s.r.QueryRowContext(ctx, refreshGrantSQL, hash, realmID).Scan(dest...); err != nil {
		return nil, fmt.Errorf("refresh token: %w", mapErr(err))
	}
	t.SessionID, t.RotatedAt, t.RevokedAt = session.String, rotated.Int64, revoked.Int64
	t.Org = OrgChoice{Made: org.Valid, ID: org.String}
	if err := json.Unmarshal([]byte(scopes), &t.Scopes); err != nil {
		return nil, fmt.Errorf("decode scopes of refresh token %s: %w", t.ID, err)
	}
	if err := json.Unmarshal([]byte(amr), &t.AMR); err != nil {
		return nil, fmt.Errorf("decode amr of refresh token %s: %w", t.ID, err)
	}
	u.ID, u.ServiceAccountClientID = t.UserID, serviceAccount.String
	g := &RefreshGrant{Token: t, User: u}
	var err error
	if g.Session, err = oauth.session(u); err != nil {
		return nil, err
	}
	if hasSSO {
		if g.SSO, err = sso.session(u); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// grantSession is a session's columns in refreshGrantSQL.
type grantSession struct {
	s                   Session
	parent, client, imp sql.NullString
	amr, impName        string
	impEnds             int64
}

func (g *grantSession) dest(dest []any) []any {
	s := &g.s
	return append(dest, &s.ID, &s.Kind, &g.parent, &g.client, &s.IPAddress, &s.StartedAt, &s.LastAccessAt,
		&s.ExpiresAt, &s.AuthTime, &g.amr, &s.Offline, &g.imp, &g.impName, &g.impEnds)
}

// session is the session read, of user u.
func (g *grantSession) session(u *User) (*Session, error) {
	s := &g.s
	s.RealmID, s.UserID, s.Username, s.ParentID, s.ClientID = u.RealmID, u.ID, u.Username, g.parent.String, g.client.String
	if g.imp.Valid {
		s.Impersonator = &Impersonator{ID: g.imp.String, Username: g.impName, EndsAt: g.impEnds}
	}
	if err := json.Unmarshal([]byte(g.amr), &s.AMR); err != nil {
		return nil, fmt.Errorf("decode amr of session %s: %w", s.ID, err)
	}
	return s, nil
}

// refreshGrantSQL reads a token, its user, its session s and the session
// p above it. The sessions' user is the token's, as CreateRefreshToken and
// CreateSession check. p's columns are those of s, with a value where p is
// missing (the flag before them says so) that grantSession can read.
const refreshGrantSQL = `SELECT t.id, t.family_id, t.session_id, t.client_id, t.user_id, t.scopes, t.offline, t.auth_time,
	t.amr, t.created_at, t.expires_at, t.rotated_at, t.revoked_at, t.organization_id,
	u.username, u.email, u.first_name, u.last_name, u.enabled, u.email_verified, u.require_password_reset,
	u.created_at, u.service_account_client_id,
	s.id, s.kind, s.parent_id, s.client_id, s.ip_address, s.started_at, s.last_access_at, s.expires_at, s.auth_time,
	s.amr, s.offline, s.impersonator_id, s.impersonator_username, s.impersonation_ends_at,
	p.id IS NOT NULL,
	COALESCE(p.id, ''), COALESCE(p.kind, ''), p.parent_id, p.client_id, COALESCE(p.ip_address, ''),
	COALESCE(p.started_at, 0), COALESCE(p.last_access_at, 0), COALESCE(p.expires_at, 0), COALESCE(p.auth_time, 0),
	COALESCE(p.amr, '[]'), COALESCE(p.offline, FALSE), p.impersonator_id, COALESCE(p.impersonator_username, ''),
	COALESCE(p.impersonation_ends_at, 0)
	FROM refresh_tokens t
	JOIN users u ON u.id = t.user_id
	JOIN user_sessions s ON s.id = t.session_id AND s.user_id = t.user_id
	LEFT JOIN user_sessions p ON p.id = s.parent_id AND p.user_id = t.user_id
	WHERE t.token_hash = $1 AND t.realm_id = $2`
