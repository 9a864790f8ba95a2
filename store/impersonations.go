package store

import (
	"context"
	"database/sql"
	"fmt"
)

// Impersonation is the record of an administrator's sign-in as a user
// (app/impersonation), kept after its session is gone.
type Impersonation struct {
	ID                   string
	RealmID              string
	UserID               string
	ImpersonatorID       string // the administrator's user ID, in ImpersonatorRealm
	ImpersonatorUsername string
	ImpersonatorRealm    string // the name of the administrator's realm
	SessionID            string // the SSO session it started
	StartedAt            int64  // Unix milliseconds, as are the times below
	EndsAt               int64  // when its session ends at the latest
	EndedAt              int64  // when it was ended before that; 0 if it was not
}

// Active says whether the impersonation still goes on at now.
func (m *Impersonation) Active(now int64) bool { return m.EndedAt == 0 && m.EndsAt > now }

const impersonationColumns = `id, realm_id, user_id, impersonator_id, impersonator_username, impersonator_realm,
	session_id, started_at, ends_at, ended_at`

func scanImpersonation(row scanner) (*Impersonation, error) {
	var m Impersonation
	var ended sql.NullInt64
	err := row.Scan(&m.ID, &m.RealmID, &m.UserID, &m.ImpersonatorID, &m.ImpersonatorUsername, &m.ImpersonatorRealm,
		&m.SessionID, &m.StartedAt, &m.EndsAt, &ended)
	if err != nil {
		return nil, mapErr(err)
	}
	m.EndedAt = ended.Int64
	return &m, nil
}

func (s *Store) queryImpersonations(ctx context.Context, q querier, where string, args ...any) ([]*Impersonation, error) {
	rows, err := q.QueryContext(ctx, "SELECT "+impersonationColumns+" FROM impersonations WHERE "+where, args...)
	if err != nil {
		return nil, fmt.Errorf("list impersonations: %w", mapErr(err))
	}
	defer rows.Close()
	out := []*Impersonation{}
	for rows.Next() {
		m, err := scanImpersonation(rows)
		if err != nil {
			return nil, fmt.Errorf("read impersonation: %w", err)
		}
		out = append(out, m)
	}
	return out, mapErr(rows.Err())
}

// CreateImpersonation records m. Its session is written by the caller, in
// the same transaction.
func (s *Store) CreateImpersonation(ctx context.Context, m *Impersonation) error {
	_, err := s.w.ExecContext(ctx, "INSERT INTO impersonations ("+impersonationColumns+
		") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, NULL)", m.ID, m.RealmID, m.UserID, m.ImpersonatorID,
		m.ImpersonatorUsername, m.ImpersonatorRealm, m.SessionID, m.StartedAt, m.EndsAt)
	if err != nil {
		return fmt.Errorf("create impersonation %s: %w", m.ID, mapErr(err))
	}
	return nil
}

// UserImpersonations lists the impersonations of a user, newest first, at
// most max.
func (s *Store) UserImpersonations(ctx context.Context, realmID, userID string, max int) ([]*Impersonation, error) {
	return s.queryImpersonations(ctx, s.r, "realm_id = $1 AND user_id = $2 ORDER BY started_at DESC, id DESC LIMIT $3",
		realmID, userID, max)
}

// ActiveImpersonations lists the impersonations of the realm going on at
// now: of the user when userID is given, else of the session sessionID.
func (s *Store) ActiveImpersonations(ctx context.Context, realmID, userID, sessionID string, now int64) ([]*Impersonation, error) {
	return s.queryImpersonations(ctx, s.r, `realm_id = $1 AND ($2 = '' OR user_id = $2) AND ($3 = '' OR session_id = $3)
		AND ended_at IS NULL AND ends_at > $4 ORDER BY started_at, id`, realmID, userID, sessionID, now)
}

// ImpersonationOfSession is the impersonation that started the session
// id, or ErrNotFound.
func (s *Store) ImpersonationOfSession(ctx context.Context, id string) (*Impersonation, error) {
	m, err := scanImpersonation(s.r.QueryRowContext(ctx, "SELECT "+impersonationColumns+
		" FROM impersonations WHERE session_id = $1", id))
	if err != nil {
		return nil, fmt.Errorf("impersonation of session %s: %w", id, err)
	}
	return m, nil
}

// AnyImpersonationSince says whether an impersonation of any realm ends
// after now.
func (s *Store) AnyImpersonationSince(ctx context.Context, now int64) (bool, error) {
	var n int
	err := s.r.QueryRowContext(ctx, "SELECT count(*) FROM (SELECT 1 FROM impersonations WHERE ends_at > $1 LIMIT 1) live", now).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("find impersonations: %w", mapErr(err))
	}
	return n > 0, nil
}

// EndImpersonation marks the impersonation id ended at now, in the
// caller's transaction, which also ends its session.
func (s *Store) EndImpersonation(ctx context.Context, realmID, id string, now int64) error {
	res, err := s.w.ExecContext(ctx, "UPDATE impersonations SET ended_at = $1 WHERE realm_id = $2 AND id = $3 AND ended_at IS NULL",
		now, realmID, id)
	if err != nil {
		return fmt.Errorf("end impersonation %s: %w", id, mapErr(err))
	}
	return affectedOne(res, "impersonation "+id)
}
