package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
)

// ErrTokenReused: a refresh token was presented after it had been
// rotated, so it may have been stolen. Its family is revoked.
var ErrTokenReused = errors.New("refresh token already rotated")

// ErrTokenRevoked: a refresh token was presented after it had been
// revoked (by its client, a logout, an administrator) while it was its
// family's live one. Revocation takes the whole family or session, so
// nothing is left to revoke, and nothing suggests a stolen copy.
var ErrTokenRevoked = errors.New("refresh token revoked")

// RefreshToken is an opaque refresh token, stored as its SHA-256 only.
// Each use rotates it: the successor keeps the family, the presented one
// is marked rotated.
type RefreshToken struct {
	ID        string
	RealmID   string
	TokenHash []byte // HashToken of the token
	FamilyID  string // the ID of the family's first token
	// SessionID is the OAuth session the token was issued under: deleting
	// the session deletes the token. An offline token's session is an
	// offline one, so that SSO logout leaves it alone. "" for none.
	SessionID string
	ClientID  string // the client's internal ID
	UserID    string
	Scopes    []string
	Offline   bool
	AuthTime  int64 // Unix milliseconds, as are the times below
	AMR       []string
	Org       OrgChoice // the organization the grant's sign-in settled on
	CreatedAt int64
	ExpiresAt int64
	RotatedAt int64 // 0 until rotated
	RevokedAt int64 // 0 until revoked
}

// Live says whether the token can still be used at now.
func (t *RefreshToken) Live(now int64) bool {
	return t.RotatedAt == 0 && t.RevokedAt == 0 && t.ExpiresAt > now
}

// HashToken is what the store keeps of a token: its SHA-256. Tokens are
// random, so a slow hash would add nothing.
func HashToken(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

const refreshTokenColumns = `id, realm_id, token_hash, family_id, session_id, client_id, user_id, scopes, offline,
	auth_time, amr, created_at, expires_at, rotated_at, revoked_at, organization_id`

func scanRefreshToken(row scanner) (*RefreshToken, error) {
	var t RefreshToken
	var session, org sql.NullString
	var rotated, revoked sql.NullInt64
	var scopes, amr string
	err := row.Scan(&t.ID, &t.RealmID, &t.TokenHash, &t.FamilyID, &session, &t.ClientID, &t.UserID, &scopes,
		&t.Offline, &t.AuthTime, &amr, &t.CreatedAt, &t.ExpiresAt, &rotated, &revoked, &org)
	if err != nil {
		return nil, mapErr(err)
	}
	t.Org = OrgChoice{Made: org.Valid, ID: org.String}
	t.SessionID, t.RotatedAt, t.RevokedAt = session.String, rotated.Int64, revoked.Int64
	if err := json.Unmarshal([]byte(scopes), &t.Scopes); err != nil {
		return nil, fmt.Errorf("decode scopes of refresh token %s: %w", t.ID, err)
	}
	if err := json.Unmarshal([]byte(amr), &t.AMR); err != nil {
		return nil, fmt.Errorf("decode amr of refresh token %s: %w", t.ID, err)
	}
	return &t, nil
}

// insertRefreshToken checks that t's user, client and session belong
// together, then stores it.
func (s *Store) insertRefreshToken(ctx context.Context, t *RefreshToken) error {
	if len(t.TokenHash) != sha256.Size {
		return fmt.Errorf("refresh token %s: the hash must be %d bytes: store HashToken(token), never the token",
			t.ID, sha256.Size)
	}
	var users, clients, sessions int
	err := s.w.QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM users WHERE id = $1 AND realm_id = $2),
		(SELECT count(*) FROM clients WHERE id = $3 AND realm_id = $2),
		(SELECT count(*) FROM user_sessions WHERE id = $4 AND realm_id = $2 AND user_id = $1 AND offline = $5)`,
		t.UserID, t.RealmID, t.ClientID, t.SessionID, t.Offline).Scan(&users, &clients, &sessions)
	if err != nil {
		return fmt.Errorf("create refresh token %s: %w", t.ID, mapErr(err))
	}
	switch {
	case users == 0:
		return fmt.Errorf("create refresh token %s: user %s: %w", t.ID, t.UserID, ErrNotFound)
	case clients == 0:
		return fmt.Errorf("create refresh token %s: client %s: %w", t.ID, t.ClientID, ErrNotFound)
	case t.SessionID != "" && sessions == 0:
		return fmt.Errorf("create refresh token %s: session %s of the user, offline=%t: %w",
			t.ID, t.SessionID, t.Offline, ErrNotFound)
	}
	return s.insertRefreshTokenRow(ctx, t)
}

// insertRefreshTokenSQL is built once: every refresh inserts a token.
var insertRefreshTokenSQL = "INSERT INTO refresh_tokens (" + refreshTokenColumns + ") VALUES (" + placeholders(16) + ")"

// insertRefreshTokenRow stores t as it is.
func (s *Store) insertRefreshTokenRow(ctx context.Context, t *RefreshToken) error {
	_, err := s.w.ExecContext(ctx, insertRefreshTokenSQL,
		t.ID, t.RealmID, t.TokenHash, t.FamilyID, nullString(t.SessionID), t.ClientID, t.UserID, jsonList(t.Scopes),
		t.Offline, t.AuthTime, jsonList(t.AMR), t.CreatedAt, t.ExpiresAt, nullInt(t.RotatedAt), nullInt(t.RevokedAt),
		t.Org.column())
	if err != nil {
		return fmt.Errorf("create refresh token %s: %w", t.ID, mapErr(err))
	}
	return nil
}

// CreateRefreshToken stores the first token of a new family, whose ID
// becomes the family's. Its user, client and session must be of its realm,
// and its session of its user, offline exactly when it is; otherwise
// ErrNotFound.
func (s *Store) CreateRefreshToken(ctx context.Context, t *RefreshToken) error {
	t.FamilyID = t.ID
	return s.Tx(ctx, func(tx *Store) error { return tx.insertRefreshToken(ctx, t) })
}

func (s *Store) refreshTokenByHash(ctx context.Context, q querier, realmID string, hash []byte) (*RefreshToken, error) {
	t, err := scanRefreshToken(q.QueryRowContext(ctx,
		"SELECT "+refreshTokenColumns+" FROM refresh_tokens WHERE token_hash = $1 AND realm_id = $2", hash, realmID))
	if err != nil {
		return nil, fmt.Errorf("refresh token: %w", err)
	}
	return t, nil
}

// RefreshTokenByHash finds a token of the realm by its hash, whatever its
// state: see Live.
func (s *Store) RefreshTokenByHash(ctx context.Context, realmID string, hash []byte) (*RefreshToken, error) {
	return s.refreshTokenByHash(ctx, s.r, realmID, hash)
}

// RotateRefreshToken trades the token with the presented hash for next, in
// one transaction. next brings its ID, TokenHash, Scopes, CreatedAt and
// ExpiresAt; the family, session, client, user, offline flag, auth time,
// amr and organization are copied from the presented token, which is
// returned as it was presented.
//
// A token unknown in the realm, expired, or whose session has expired is
// ErrNotFound. A token already rotated is ErrTokenReused: its whole family
// is revoked before the error returns, and the presented token is
// returned with it so the caller can end its session too. A token revoked
// before it was ever rotated is ErrTokenRevoked.
func (s *Store) RotateRefreshToken(ctx context.Context, realmID string, presentedHash []byte, next *RefreshToken, now int64) (*RefreshToken, error) {
	return s.rotateRefreshToken(ctx, realmID, presentedHash, next, now, func(tx *Store) (*RefreshToken, error) {
		old, err := scanRefreshToken(tx.w.QueryRowContext(ctx, rotateRefreshTokenSQL+" RETURNING "+refreshTokenColumns,
			now, presentedHash, realmID))
		if err != nil {
			return nil, err
		}
		old.RotatedAt = 0 // as presented
		return old, nil
	})
}

// RotateReadRefreshToken is RotateRefreshToken for a caller that has read
// the presented token (RefreshGrantByHash), as a refresh does: what next
// copies from it is never changed once stored, so the statement that marks
// it rotated reads nothing back.
func (s *Store) RotateReadRefreshToken(ctx context.Context, presented, next *RefreshToken, now int64) error {
	_, err := s.rotateRefreshToken(ctx, presented.RealmID, presented.TokenHash, next, now, func(tx *Store) (*RefreshToken, error) {
		res, err := tx.w.ExecContext(ctx, rotateRefreshTokenSQL, now, presented.TokenHash, presented.RealmID)
		n, err := rowsAffected(res, err, "rotate refresh token "+presented.ID)
		switch {
		case err != nil:
			return nil, err
		case n == 0:
			return nil, ErrNotFound
		}
		return presented, nil
	})
	return err
}

// rotateRefreshToken runs a rotation: mark marks the presented token
// rotated and returns it, or ErrNotFound when it is not live, and the
// successor is inserted.
//
// It runs on every refresh, inside the writer's lock: a live token is
// checked and marked by one statement, and its successor inserted by a
// second. Only a refused token is read again, to say why.
func (s *Store) rotateRefreshToken(ctx context.Context, realmID string, hash []byte, next *RefreshToken, now int64,
	mark func(tx *Store) (*RefreshToken, error)) (*RefreshToken, error) {
	var old *RefreshToken
	reused := false
	err := s.Tx(ctx, func(tx *Store) error {
		var err error
		old, err = mark(tx)
		if errors.Is(err, ErrNotFound) {
			old, reused, err = tx.refusedRotation(ctx, realmID, hash, now)
			return err
		} else if err != nil {
			return fmt.Errorf("rotate refresh token: %w", err)
		}
		next.RealmID, next.FamilyID, next.SessionID, next.ClientID, next.UserID = old.RealmID, old.FamilyID, old.SessionID, old.ClientID, old.UserID
		next.Offline, next.AuthTime, next.AMR, next.RotatedAt, next.RevokedAt = old.Offline, old.AuthTime, old.AMR, 0, 0
		next.Org = old.Org
		// The presented token's user, client and session were checked when
		// it was stored, and the foreign keys hold them since.
		return tx.insertRefreshTokenRow(ctx, next)
	})
	if err != nil {
		return nil, err
	}
	if reused {
		return old, fmt.Errorf("refresh token %s of family %s: %w", old.ID, old.FamilyID, ErrTokenReused)
	}
	return old, nil
}

// rotateRefreshTokenSQL marks the presented token rotated if it is live
// and its session too.
const rotateRefreshTokenSQL = `UPDATE refresh_tokens SET rotated_at = $1
	WHERE token_hash = $2 AND realm_id = $3 AND rotated_at IS NULL AND revoked_at IS NULL AND expires_at > $1
	AND (session_id IS NULL OR EXISTS (SELECT 1 FROM user_sessions s WHERE s.id = refresh_tokens.session_id AND s.expires_at > $1))`

// refusedRotation says why a presented token could not be rotated, and
// revokes its family when it had been rotated before: reused reports it.
func (s *Store) refusedRotation(ctx context.Context, realmID string, hash []byte, now int64) (old *RefreshToken, reused bool, err error) {
	if old, err = s.refreshTokenByHash(ctx, s.w, realmID, hash); err != nil {
		return nil, false, err
	}
	switch {
	case old.RotatedAt != 0:
		_, err := s.RevokeRefreshFamily(ctx, realmID, old.FamilyID, now)
		return old, err == nil, err
	case old.RevokedAt != 0:
		return nil, false, fmt.Errorf("refresh token %s: %w", old.ID, ErrTokenRevoked)
	case old.ExpiresAt <= now:
		return nil, false, fmt.Errorf("refresh token %s expired: %w", old.ID, ErrNotFound)
	}
	return nil, false, fmt.Errorf("session %s of refresh token %s expired: %w", old.SessionID, old.ID, ErrNotFound)
}

func rowsAffected(res sql.Result, err error, what string) (int64, error) {
	if err != nil {
		return 0, fmt.Errorf("%s: %w", what, mapErr(err))
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("%s: %w", what, mapErr(err))
	}
	return n, nil
}

// RevokeRefreshFamily revokes every token of a family not yet revoked and
// counts them.
func (s *Store) RevokeRefreshFamily(ctx context.Context, realmID, familyID string, now int64) (int64, error) {
	res, err := s.w.ExecContext(ctx, `UPDATE refresh_tokens SET revoked_at = $1
		WHERE realm_id = $2 AND family_id = $3 AND revoked_at IS NULL`, now, realmID, familyID)
	return rowsAffected(res, err, "revoke refresh token family "+familyID)
}

// RevokeRefreshTokensOfSession revokes every token issued under a session
// not yet revoked and counts them.
func (s *Store) RevokeRefreshTokensOfSession(ctx context.Context, realmID, sessionID string, now int64) (int64, error) {
	res, err := s.w.ExecContext(ctx, `UPDATE refresh_tokens SET revoked_at = $1
		WHERE realm_id = $2 AND session_id = $3 AND revoked_at IS NULL`, now, realmID, sessionID)
	return rowsAffected(res, err, "revoke refresh tokens of session "+sessionID)
}

// OfflineToken is a live offline token as its user's admin sees it: one
// per family, addressed by the family ID, which rotation keeps.
type OfflineToken struct {
	ID             string // the family ID
	ClientID       string // the client's internal ID
	PublicClientID string
	Scopes         []string
	CreatedAt      int64 // when the family's first token was issued
	LastRefreshAt  int64 // when the current token was issued by rotation; 0 if never
	ExpiresAt      int64
}

// ListOfflineTokens returns a user's offline tokens live at now, newest
// family first.
func (s *Store) ListOfflineTokens(ctx context.Context, realmID, userID string, now int64) ([]*OfflineToken, error) {
	// The family's first token outlives the purge of its expired rotated
	// successors (DeleteExpiredRefreshTokens), so it still dates the family.
	rows, err := s.r.QueryContext(ctx, `SELECT t.id, t.family_id, t.client_id, c.client_id, t.scopes,
		COALESCE(f.created_at, t.created_at) AS family_created, t.created_at, t.expires_at
		FROM refresh_tokens t JOIN clients c ON c.id = t.client_id LEFT JOIN refresh_tokens f ON f.id = t.family_id
		WHERE t.realm_id = $1 AND t.user_id = $2 AND t.offline AND t.rotated_at IS NULL AND t.revoked_at IS NULL
			AND t.expires_at > $3
		ORDER BY family_created DESC, t.family_id`, realmID, userID, now)
	if err != nil {
		return nil, fmt.Errorf("list offline tokens of user %s: %w", userID, mapErr(err))
	}
	defer rows.Close()
	out := []*OfflineToken{}
	for rows.Next() {
		var o OfflineToken
		var id, scopes string
		var issued int64
		if err := rows.Scan(&id, &o.ID, &o.ClientID, &o.PublicClientID, &scopes, &o.CreatedAt, &issued, &o.ExpiresAt); err != nil {
			return nil, fmt.Errorf("read offline token: %w", mapErr(err))
		}
		if err := json.Unmarshal([]byte(scopes), &o.Scopes); err != nil {
			return nil, fmt.Errorf("decode scopes of refresh token %s: %w", id, err)
		}
		if id != o.ID {
			o.LastRefreshAt = issued
		}
		out = append(out, &o)
	}
	return out, mapErr(rows.Err())
}

// RevokeOfflineToken revokes a user's offline token family, live at now,
// and ends the offline sessions it leaves without a live token. A family
// that is not a live offline one of this user is ErrNotFound.
func (s *Store) RevokeOfflineToken(ctx context.Context, realmID, userID, familyID string, now int64) error {
	return s.Tx(ctx, func(tx *Store) error {
		var live int
		err := tx.w.QueryRowContext(ctx, `SELECT count(*) FROM refresh_tokens WHERE realm_id = $1 AND user_id = $2
			AND family_id = $3 AND offline AND rotated_at IS NULL AND revoked_at IS NULL AND expires_at > $4`,
			realmID, userID, familyID, now).Scan(&live)
		if err != nil {
			return fmt.Errorf("offline token %s: %w", familyID, mapErr(err))
		}
		if live == 0 {
			return fmt.Errorf("offline token %s: %w", familyID, ErrNotFound)
		}
		if _, err := tx.RevokeRefreshFamily(ctx, realmID, familyID, now); err != nil {
			return err
		}
		return tx.deleteDeadOfflineSessions(ctx, realmID, userID)
	})
}

// deleteDeadOfflineSessions ends a user's offline sessions whose every
// token is rotated or revoked: nothing can use them any more.
func (s *Store) deleteDeadOfflineSessions(ctx context.Context, realmID, userID string) error {
	_, err := s.w.ExecContext(ctx, `DELETE FROM user_sessions WHERE realm_id = $1 AND user_id = $2 AND offline
		AND EXISTS (SELECT 1 FROM refresh_tokens t WHERE t.session_id = user_sessions.id)
		AND NOT EXISTS (SELECT 1 FROM refresh_tokens t WHERE t.session_id = user_sessions.id
			AND t.rotated_at IS NULL AND t.revoked_at IS NULL)`, realmID, userID)
	if err != nil {
		return fmt.Errorf("delete dead offline sessions of user %s: %w", userID, mapErr(err))
	}
	return nil
}

// DeleteExpiredRefreshTokens removes the tokens of every realm that
// expired by now and counts them. A family's first token stays while the
// family has a live one, to date it.
func (s *Store) DeleteExpiredRefreshTokens(ctx context.Context, now int64) (int64, error) {
	res, err := s.w.ExecContext(ctx, `DELETE FROM refresh_tokens WHERE expires_at <= $1
		AND (id <> family_id OR NOT EXISTS (SELECT 1 FROM refresh_tokens l
			WHERE l.family_id = refresh_tokens.family_id AND l.expires_at > $1))`, now)
	return rowsAffected(res, err, "delete expired refresh tokens")
}
