package store

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"
)

// AdminEvent records one successful change made through the admin API.
type AdminEvent struct {
	ID             string
	RealmID        string
	Time           int64 // Unix milliseconds
	OperationType  string
	ResourceType   string
	ResourcePath   string
	AuthType       string // "api-key" or "user"
	AuthUserID     string
	AuthUsername   string
	IPAddress      string
	Representation string // JSON with secrets redacted; empty when there is none
}

// LoginEvent records one step of a user's or client's authentication.
type LoginEvent struct {
	ID        string
	RealmID   string
	Time      int64 // Unix milliseconds
	Type      EventType
	UserID    string
	ClientID  string
	SessionID string
	IPAddress string
	Error     string
	Details   map[string]string
}

// EventWindow selects events by time and pages them, newest first.
type EventWindow struct {
	From, To *int64 // Unix milliseconds, both inclusive; nil: unbounded
	First    int
	Max      int // 0: every matching event
}

// AdminEventFilter narrows an admin event query. Zero fields do not filter.
type AdminEventFilter struct {
	EventWindow
	OperationTypes     []string
	ResourceTypes      []string
	ResourcePathPrefix string
	AuthUserID         string
}

// LoginEventFilter narrows a login event query. Zero fields do not filter.
type LoginEventFilter struct {
	EventWindow
	Types    []string
	UserID   string
	ClientID string
}

// eventQuery builds a WHERE clause with numbered placeholders.
type eventQuery struct {
	where []string
	args  []any
}

func (q *eventQuery) arg(v any) string {
	q.args = append(q.args, v)
	return fmt.Sprintf("$%d", len(q.args))
}

func (q *eventQuery) eq(col, v string) {
	if v != "" {
		q.where = append(q.where, col+" = "+q.arg(v))
	}
}

func (q *eventQuery) in(col string, vals []string) {
	if len(vals) == 0 {
		return
	}
	ph := make([]string, len(vals))
	for i, v := range vals {
		ph[i] = q.arg(v)
	}
	q.where = append(q.where, col+" IN ("+strings.Join(ph, ", ")+")")
}

// sql returns the query over table for realmID, newest first, one page of it.
func (q *eventQuery) sql(columns, table, realmID string, f EventWindow) string {
	q.where = append([]string{"realm_id = " + q.arg(realmID)}, q.where...)
	if f.From != nil {
		q.where = append(q.where, "time >= "+q.arg(*f.From))
	}
	if f.To != nil {
		q.where = append(q.where, "time <= "+q.arg(*f.To))
	}
	limit := int64(f.Max)
	if limit <= 0 {
		// Both SQLite and PostgreSQL take the largest bigint as "no limit";
		// SQLite has no OFFSET without LIMIT.
		limit = math.MaxInt64
	}
	return fmt.Sprintf("SELECT %s FROM %s WHERE %s ORDER BY time DESC, id DESC LIMIT %s OFFSET %s",
		columns, table, strings.Join(q.where, " AND "), q.arg(limit), q.arg(f.First))
}

const adminEventColumns = `id, realm_id, time, operation_type, resource_type, resource_path, auth_type,
	auth_user_id, auth_username, ip_address, representation`

// AddAdminEvent stores e; an unknown realm is ErrNotFound.
func (s *Store) AddAdminEvent(ctx context.Context, e *AdminEvent) error {
	_, err := s.w.ExecContext(ctx, "INSERT INTO admin_events ("+adminEventColumns+") VALUES ("+placeholders(11)+")",
		e.ID, e.RealmID, e.Time, e.OperationType, e.ResourceType, e.ResourcePath, e.AuthType, e.AuthUserID,
		e.AuthUsername, e.IPAddress, e.Representation)
	if err != nil {
		return fmt.Errorf("add admin event: %w", mapErr(err))
	}
	return nil
}

// EachAdminEvent calls fn for every admin event of a realm that f selects,
// newest first, reading one row at a time so a full export never sits in
// memory. fn gets the same *AdminEvent each call and must not keep it.
func (s *Store) EachAdminEvent(ctx context.Context, realmID string, f AdminEventFilter, fn func(*AdminEvent) error) error {
	var q eventQuery
	q.in("operation_type", f.OperationTypes)
	q.in("resource_type", f.ResourceTypes)
	if f.ResourcePathPrefix != "" {
		// substr, not LIKE: LIKE ignores ASCII case in SQLite but not in
		// PostgreSQL, and its wildcards would need escaping.
		q.where = append(q.where, fmt.Sprintf("substr(resource_path, 1, %s) = %s",
			q.arg(utf8.RuneCountInString(f.ResourcePathPrefix)), q.arg(f.ResourcePathPrefix)))
	}
	q.eq("auth_user_id", f.AuthUserID)
	rows, err := s.r.QueryContext(ctx, q.sql(adminEventColumns, "admin_events", realmID, f.EventWindow), q.args...)
	if err != nil {
		return fmt.Errorf("query admin events: %w", mapErr(err))
	}
	defer rows.Close()
	var e AdminEvent
	for rows.Next() {
		if err := rows.Scan(&e.ID, &e.RealmID, &e.Time, &e.OperationType, &e.ResourceType, &e.ResourcePath,
			&e.AuthType, &e.AuthUserID, &e.AuthUsername, &e.IPAddress, &e.Representation); err != nil {
			return fmt.Errorf("read admin event: %w", mapErr(err))
		}
		if err := fn(&e); err != nil {
			return err
		}
	}
	return mapErr(rows.Err())
}

// ListAdminEvents returns the admin events of a realm that f selects, newest first.
func (s *Store) ListAdminEvents(ctx context.Context, realmID string, f AdminEventFilter) ([]*AdminEvent, error) {
	var out []*AdminEvent
	err := s.EachAdminEvent(ctx, realmID, f, func(e *AdminEvent) error {
		c := *e
		out = append(out, &c)
		return nil
	})
	return out, err
}

const loginEventColumns = "id, realm_id, time, type, user_id, client_id, session_id, ip_address, error, details"

// AddLoginEvent stores e; an unknown realm is ErrNotFound. Callers check the
// realm's EventsEnabled first.
func (s *Store) AddLoginEvent(ctx context.Context, e *LoginEvent) error {
	details := e.Details
	if details == nil {
		details = map[string]string{}
	}
	b, err := json.Marshal(details)
	if err != nil {
		return fmt.Errorf("encode login event details: %w", err)
	}
	_, err = s.w.ExecContext(ctx, "INSERT INTO login_events ("+loginEventColumns+") VALUES ("+placeholders(10)+")",
		e.ID, e.RealmID, e.Time, e.Type, e.UserID, e.ClientID, e.SessionID, e.IPAddress, e.Error, string(b))
	if err != nil {
		return fmt.Errorf("add login event: %w", mapErr(err))
	}
	return nil
}

// EachLoginEvent is EachAdminEvent for login events.
func (s *Store) EachLoginEvent(ctx context.Context, realmID string, f LoginEventFilter, fn func(*LoginEvent) error) error {
	var q eventQuery
	q.in("type", f.Types)
	q.eq("user_id", f.UserID)
	q.eq("client_id", f.ClientID)
	rows, err := s.r.QueryContext(ctx, q.sql(loginEventColumns, "login_events", realmID, f.EventWindow), q.args...)
	if err != nil {
		return fmt.Errorf("query login events: %w", mapErr(err))
	}
	defer rows.Close()
	var e LoginEvent
	var details string
	for rows.Next() {
		if err := rows.Scan(&e.ID, &e.RealmID, &e.Time, &e.Type, &e.UserID, &e.ClientID, &e.SessionID,
			&e.IPAddress, &e.Error, &details); err != nil {
			return fmt.Errorf("read login event: %w", mapErr(err))
		}
		e.Details = nil
		if err := json.Unmarshal([]byte(details), &e.Details); err != nil {
			return fmt.Errorf("decode details of login event %s: %w", e.ID, err)
		}
		if err := fn(&e); err != nil {
			return err
		}
	}
	return mapErr(rows.Err())
}

// ListLoginEvents returns the login events of a realm that f selects, newest first.
func (s *Store) ListLoginEvents(ctx context.Context, realmID string, f LoginEventFilter) ([]*LoginEvent, error) {
	var out []*LoginEvent
	err := s.EachLoginEvent(ctx, realmID, f, func(e *LoginEvent) error {
		c := *e
		out = append(out, &c)
		return nil
	})
	return out, err
}

// ClearLoginEvents deletes every login event of a realm.
func (s *Store) ClearLoginEvents(ctx context.Context, realmID string) error {
	if _, err := s.w.ExecContext(ctx, "DELETE FROM login_events WHERE realm_id = $1", realmID); err != nil {
		return fmt.Errorf("clear login events: %w", mapErr(err))
	}
	return nil
}

// DeleteExpiredEvents deletes the login and admin events older than their
// realm's eventsExpiration at now, and says how many of each. It deletes
// realm by realm, so that each delete reads the realm's oldest events in
// its (realm_id, time) index, not every event.
func (s *Store) DeleteExpiredEvents(ctx context.Context, now time.Time) (login, admin int64, err error) {
	err = s.Tx(ctx, func(tx *Store) error {
		type retention struct {
			realmID string
			before  int64
		}
		rows, err := tx.w.QueryContext(ctx, "SELECT id, $1 - events_expiration * 1000 FROM realms", now.UnixMilli())
		if err != nil {
			return fmt.Errorf("list realms: %w", mapErr(err))
		}
		var realms []retention
		for rows.Next() {
			var r retention
			if err := rows.Scan(&r.realmID, &r.before); err != nil {
				rows.Close()
				return mapErr(err)
			}
			realms = append(realms, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return mapErr(err)
		}
		for _, r := range realms {
			for _, t := range []struct {
				n     *int64
				query string
			}{
				{&login, "DELETE FROM login_events WHERE realm_id = $1 AND time < $2"},
				{&admin, "DELETE FROM admin_events WHERE realm_id = $1 AND time < $2"},
			} {
				res, err := tx.w.ExecContext(ctx, t.query, r.realmID, r.before)
				if err != nil {
					return fmt.Errorf("delete expired events: %w", mapErr(err))
				}
				n, err := res.RowsAffected()
				if err != nil {
					return mapErr(err)
				}
				*t.n += n
			}
		}
		return nil
	})
	return login, admin, err
}
