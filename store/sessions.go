package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
)

// Session kinds.
const (
	SessionSSO   = "sso"   // a user's login at the realm
	SessionOAuth = "oauth" // a client's session under an SSO session, or an offline one
)

// Session is an SSO session, or a client's OAuth session. An online OAuth
// session belongs to an SSO session and ends with it; an offline one has
// no parent, so it outlives SSO logout until its offline token ends.
type Session struct {
	ID           string
	RealmID      string
	UserID       string
	Kind         string // SessionSSO or SessionOAuth
	ParentID     string // online OAuth sessions: the SSO session; "" otherwise
	ClientID     string // OAuth sessions: the client's internal ID
	IPAddress    string
	StartedAt    int64 // Unix milliseconds, as are the times below
	LastAccessAt int64
	ExpiresAt    int64
	AuthTime     int64    // when the user authenticated
	AMR          []string // how: authentication method references
	Offline      bool
	// Impersonator is the administrator who started this SSO session as its
	// user (app/impersonation); nil for the user's own sessions.
	Impersonator *Impersonator

	// Filled by reads, for display.
	Username       string
	PublicClientID string // the client's clientId; "" for SSO sessions
}

// Impersonator is who acts in an impersonation's SSO session, and when
// the session ends at the latest, however it is used.
type Impersonator struct {
	ID       string // the administrator's user ID
	Username string
	EndsAt   int64 // Unix milliseconds
}

// Active says whether the session is still live at now.
func (s *Session) Active(now int64) bool { return s.ExpiresAt > now }

// ErrInvalidSession: the session breaks the rules of its kind.
var ErrInvalidSession = errors.New("invalid session")

// checkShape enforces the rules of the kinds: SSO sessions have neither
// client nor parent; OAuth sessions have a client, and a parent exactly
// when online.
func (s *Session) checkShape() error {
	switch {
	case s.Kind == SessionSSO && (s.ClientID != "" || s.ParentID != "" || s.Offline):
		return fmt.Errorf("%w: an SSO session has no client, parent or offline flag", ErrInvalidSession)
	case s.Kind == SessionOAuth && s.ClientID == "":
		return fmt.Errorf("%w: an OAuth session needs a client", ErrInvalidSession)
	case s.Kind == SessionOAuth && s.Offline && s.ParentID != "":
		return fmt.Errorf("%w: an offline session has no parent, so that it outlives SSO logout", ErrInvalidSession)
	case s.Kind == SessionOAuth && !s.Offline && s.ParentID == "":
		return fmt.Errorf("%w: an online OAuth session needs its SSO session as parent", ErrInvalidSession)
	case s.Kind != SessionSSO && s.Kind != SessionOAuth:
		return fmt.Errorf("%w: kind %q", ErrInvalidSession, s.Kind)
	}
	return nil
}

// sessionSelectColumns are what scanSession reads, from a session s, its
// user u and its client c.
const sessionSelectColumns = `s.id, s.realm_id, s.user_id, s.kind, s.parent_id, s.client_id, s.ip_address,
	s.started_at, s.last_access_at, s.expires_at, s.auth_time, s.amr, s.offline, s.impersonator_id,
	s.impersonator_username, s.impersonation_ends_at, u.username, c.client_id`

const sessionSelect = `SELECT ` + sessionSelectColumns + `
	FROM user_sessions s JOIN users u ON u.id = s.user_id LEFT JOIN clients c ON c.id = s.client_id`

func scanSession(row scanner) (*Session, error) {
	var s Session
	var parent, client, publicClient, impersonator sql.NullString
	var amr, impersonatorName string
	var impersonationEnds int64
	err := row.Scan(&s.ID, &s.RealmID, &s.UserID, &s.Kind, &parent, &client, &s.IPAddress, &s.StartedAt,
		&s.LastAccessAt, &s.ExpiresAt, &s.AuthTime, &amr, &s.Offline, &impersonator, &impersonatorName,
		&impersonationEnds, &s.Username, &publicClient)
	if err != nil {
		return nil, mapErr(err)
	}
	s.ParentID, s.ClientID, s.PublicClientID = parent.String, client.String, publicClient.String
	if impersonator.Valid {
		s.Impersonator = &Impersonator{ID: impersonator.String, Username: impersonatorName, EndsAt: impersonationEnds}
	}
	if err := json.Unmarshal([]byte(amr), &s.AMR); err != nil {
		return nil, fmt.Errorf("decode amr of session %s: %w", s.ID, err)
	}
	return &s, nil
}

func (s *Store) querySessions(ctx context.Context, q querier, where string, args ...any) ([]*Session, error) {
	rows, err := q.QueryContext(ctx, sessionSelect+" WHERE "+where, args...)
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", mapErr(err))
	}
	defer rows.Close()
	out := []*Session{}
	for rows.Next() {
		sess, err := scanSession(rows)
		if err != nil {
			return nil, fmt.Errorf("read session: %w", err)
		}
		out = append(out, sess)
	}
	return out, mapErr(rows.Err())
}

// CreateSession inserts sess. A session that breaks the rules of its kind
// (see checkShape) is ErrInvalidSession. Its user, client and parent must
// be of its realm, and the parent an online SSO session of the same user;
// otherwise ErrNotFound.
func (s *Store) CreateSession(ctx context.Context, sess *Session) error {
	if err := sess.checkShape(); err != nil {
		return fmt.Errorf("create session %s: %w", sess.ID, err)
	}
	return s.Tx(ctx, func(tx *Store) error {
		// Foreign keys only prove the rows exist; these prove they belong together.
		var users, clients, parents int
		err := tx.w.QueryRowContext(ctx, `SELECT
			(SELECT count(*) FROM users WHERE id = $1 AND realm_id = $2),
			(SELECT count(*) FROM clients WHERE id = $3 AND realm_id = $2),
			(SELECT count(*) FROM user_sessions WHERE id = $4 AND realm_id = $2 AND user_id = $1 AND kind = 'sso')`,
			sess.UserID, sess.RealmID, sess.ClientID, sess.ParentID).Scan(&users, &clients, &parents)
		if err != nil {
			return fmt.Errorf("create session %s: %w", sess.ID, mapErr(err))
		}
		switch {
		case users == 0:
			return fmt.Errorf("create session %s: user %s: %w", sess.ID, sess.UserID, ErrNotFound)
		case sess.ClientID != "" && clients == 0:
			return fmt.Errorf("create session %s: client %s: %w", sess.ID, sess.ClientID, ErrNotFound)
		case sess.ParentID != "" && parents == 0:
			return fmt.Errorf("create session %s: SSO session %s: %w", sess.ID, sess.ParentID, ErrNotFound)
		}
		var impersonator sql.NullString
		var impersonatorName string
		var impersonationEnds int64
		if m := sess.Impersonator; m != nil {
			impersonator, impersonatorName, impersonationEnds = sql.NullString{String: m.ID, Valid: true}, m.Username, m.EndsAt
		}
		_, err = tx.w.ExecContext(ctx, `INSERT INTO user_sessions (id, realm_id, user_id, kind, parent_id, client_id,
			ip_address, started_at, last_access_at, expires_at, auth_time, amr, offline, impersonator_id,
			impersonator_username, impersonation_ends_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
			sess.ID, sess.RealmID, sess.UserID, sess.Kind, nullString(sess.ParentID), nullString(sess.ClientID),
			sess.IPAddress, sess.StartedAt, sess.LastAccessAt, sess.ExpiresAt, sess.AuthTime, jsonList(sess.AMR),
			sess.Offline, impersonator, impersonatorName, impersonationEnds)
		if err != nil {
			return fmt.Errorf("create session %s: %w", sess.ID, mapErr(err))
		}
		return nil
	})
}

// GetSession finds a session of the realm, expired or not: see Active.
func (s *Store) GetSession(ctx context.Context, realmID, id string) (*Session, error) {
	sess, err := scanSession(s.r.QueryRowContext(ctx, sessionSelect+" WHERE s.realm_id = $1 AND s.id = $2", realmID, id))
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", id, err)
	}
	return sess, nil
}

// touchSessionSQL never shortens a session: a cache may hold the expiry
// it read until then (see sessionKeepers). The later of the two is a CASE:
// SQLite's max(a, b) is PostgreSQL's GREATEST(a, b).
const touchSessionSQL = `UPDATE user_sessions SET last_access_at = $1,
	expires_at = CASE WHEN $2 > expires_at THEN $2 ELSE expires_at END
	WHERE realm_id = $3 AND id = $4 AND expires_at > $1`

// TouchSession records an access at now and slides the expiry to
// expiresAt, never back. An expired session cannot be revived:
// ErrNotFound.
func (s *Store) TouchSession(ctx context.Context, realmID, id string, now, expiresAt int64) error {
	res, err := s.w.ExecContext(ctx, touchSessionSQL, now, expiresAt, realmID, id)
	if err != nil {
		return fmt.Errorf("touch session %s: %w", id, mapErr(err))
	}
	return affectedOne(res, "active session "+id)
}

// ListRealmSessions pages through a realm's sessions active at now, of
// both kinds, oldest first.
func (s *Store) ListRealmSessions(ctx context.Context, realmID string, now int64, first, max int) ([]*Session, error) {
	return s.querySessions(ctx, s.r, `s.realm_id = $1 AND s.expires_at > $2
		ORDER BY s.started_at, s.id LIMIT $3 OFFSET $4`, realmID, now, max, first)
}

// ListUserSessions returns a user's sessions active at now, offline ones
// included, oldest first.
func (s *Store) ListUserSessions(ctx context.Context, realmID, userID string, now int64) ([]*Session, error) {
	return s.querySessions(ctx, s.r, `s.realm_id = $1 AND s.user_id = $2 AND s.expires_at > $3
		ORDER BY s.started_at, s.id`, realmID, userID, now)
}

// DeleteSession ends a session of the given kind active at now, with its
// child OAuth sessions and every refresh token issued under them. It
// returns the active sessions it ended, the session first: the OAuth ones
// name the clients to notify by back-channel logout.
func (s *Store) DeleteSession(ctx context.Context, realmID, id, kind string, now int64) ([]*Session, error) {
	var ended []*Session
	err := s.Tx(ctx, func(tx *Store) error {
		var err error
		ended, err = tx.querySessions(ctx, tx.w, `s.realm_id = $1 AND s.expires_at > $2 AND ((s.id = $3 AND s.kind = $4) OR s.parent_id = $3)
			ORDER BY s.parent_id IS NOT NULL, s.started_at, s.id`, realmID, now, id, kind)
		if err != nil {
			return err
		}
		if len(ended) == 0 || ended[0].ID != id {
			return fmt.Errorf("active %s session %s: %w", kind, id, ErrNotFound)
		}
		// Child sessions and refresh tokens go by ON DELETE CASCADE.
		if _, err := tx.w.ExecContext(ctx, "DELETE FROM user_sessions WHERE realm_id = $1 AND id = $2", realmID, id); err != nil {
			return fmt.Errorf("delete session %s: %w", id, mapErr(err))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ended, nil
}

// EndClientSession ends the OAuth session id as revoking the grant it
// holds does: an online one with every other session of its client under
// the same SSO session, which stays with the sessions of other clients;
// an offline one alone. Their refresh tokens go with them. It returns the
// sessions it ended that were active at now; id not an OAuth session of
// the realm is ErrNotFound.
func (s *Store) EndClientSession(ctx context.Context, realmID, id string, now int64) ([]*Session, error) {
	var ended []*Session
	err := s.Tx(ctx, func(tx *Store) error {
		found, err := tx.querySessions(ctx, tx.w, "s.realm_id = $1 AND s.id = $2 AND s.kind = 'oauth'", realmID, id)
		if err != nil {
			return err
		}
		if len(found) == 0 {
			return fmt.Errorf("OAuth session %s: %w", id, ErrNotFound)
		}
		// An offline session has no parent: parent_id = NULL matches nothing.
		const which = `realm_id = $1 AND kind = 'oauth' AND (id = $2 OR (parent_id = $3 AND client_id = $4))`
		parent, client := nullString(found[0].ParentID), found[0].ClientID
		ended, err = tx.querySessions(ctx, tx.w, `s.realm_id = $1 AND s.kind = 'oauth' AND (s.id = $2 OR (s.parent_id = $3
			AND s.client_id = $4)) AND s.expires_at > $5 ORDER BY s.started_at, s.id`, realmID, id, parent, client, now)
		if err != nil {
			return err
		}
		if _, err := tx.w.ExecContext(ctx, "DELETE FROM user_sessions WHERE "+which, realmID, id, parent, client); err != nil {
			return fmt.Errorf("end client session %s: %w", id, mapErr(err))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ended, nil
}

// DeleteUserSessions ends every session of a user except offline ones,
// which, as in Keycloak, only end when their offline token is revoked. It
// returns the sessions that were active at now.
func (s *Store) DeleteUserSessions(ctx context.Context, realmID, userID string, now int64) ([]*Session, error) {
	var ended []*Session
	err := s.Tx(ctx, func(tx *Store) error {
		var err error
		ended, err = tx.querySessions(ctx, tx.w, `s.realm_id = $1 AND s.user_id = $2 AND NOT s.offline AND s.expires_at > $3
			ORDER BY s.started_at, s.id`, realmID, userID, now)
		if err != nil {
			return err
		}
		_, err = tx.w.ExecContext(ctx, "DELETE FROM user_sessions WHERE realm_id = $1 AND user_id = $2 AND NOT offline",
			realmID, userID)
		if err != nil {
			return fmt.Errorf("delete sessions of user %s: %w", userID, mapErr(err))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ended, nil
}

// DeleteExpiredSessions removes the sessions of every realm that expired
// by now, with their children and refresh tokens, and counts them.
func (s *Store) DeleteExpiredSessions(ctx context.Context, now int64) (int64, error) {
	res, err := s.w.ExecContext(ctx, "DELETE FROM user_sessions WHERE expires_at <= $1", now)
	return rowsAffected(res, err, "delete expired sessions")
}
