package store

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
)

// RealmStats counts what a realm holds and what happened in it lately.
type RealmStats struct {
	Users              int // people: service-account users are counted apart
	ServiceAccounts    int
	Clients            int
	RealmRoles         int
	ClientRoles        int
	Groups             int
	ActiveSessions     int // live SSO sessions
	ClientSessions     int // live OAuth sessions of clients
	LoginEventsLastDay int
	LoginErrorsLastDay int // login events whose type ends in _ERROR
	AdminEventsLastDay int
}

const dayMillis = 24 * 60 * 60 * 1000

// GetRealmStats counts a realm's contents at now (Unix milliseconds).
func (s *Store) GetRealmStats(ctx context.Context, realmID string, now int64) (*RealmStats, error) {
	var st RealmStats
	err := s.r.QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM users WHERE realm_id = $1 AND service_account_client_id IS NULL),
		(SELECT count(*) FROM users WHERE realm_id = $1 AND service_account_client_id IS NOT NULL),
		(SELECT count(*) FROM clients WHERE realm_id = $1),
		(SELECT count(*) FROM roles WHERE realm_id = $1 AND client_id IS NULL),
		(SELECT count(*) FROM roles WHERE realm_id = $1 AND client_id IS NOT NULL),
		(SELECT count(*) FROM realm_groups WHERE realm_id = $1),
		(SELECT count(*) FROM user_sessions WHERE realm_id = $1 AND kind = 'sso' AND expires_at > $2),
		(SELECT count(*) FROM user_sessions WHERE realm_id = $1 AND kind = 'oauth' AND expires_at > $2),
		(SELECT count(*) FROM login_events WHERE realm_id = $1 AND time > $3),
		(SELECT count(*) FROM login_events WHERE realm_id = $1 AND time > $3 AND type LIKE '%\_ERROR' ESCAPE '\'),
		(SELECT count(*) FROM admin_events WHERE realm_id = $1 AND time > $3)`,
		realmID, now, now-dayMillis).Scan(&st.Users, &st.ServiceAccounts, &st.Clients, &st.RealmRoles,
		&st.ClientRoles, &st.Groups, &st.ActiveSessions, &st.ClientSessions, &st.LoginEventsLastDay,
		&st.LoginErrorsLastDay, &st.AdminEventsLastDay)
	if err != nil {
		return nil, fmt.Errorf("realm stats: %w", mapErr(err))
	}
	return &st, nil
}

// ConsentStats sums up the consents users of a realm gave its clients.
type ConsentStats struct {
	TotalConsents     int
	UsersWithConsents int
	Clients           []ClientConsents // most consented first
}

// ClientConsents is how many users consented to a client, and to each scope.
type ClientConsents struct {
	ClientID string // the public clientId
	Users    int
	Scopes   map[string]int
}

// GetConsentStats sums up a realm's consents.
func (s *Store) GetConsentStats(ctx context.Context, realmID string) (*ConsentStats, error) {
	st := &ConsentStats{Clients: []ClientConsents{}}
	err := s.ReadTx(ctx, func(tx *Store) error {
		err := tx.r.QueryRowContext(ctx, `SELECT count(*), count(DISTINCT uc.user_id) FROM user_consents uc
			JOIN clients c ON c.id = uc.client_id WHERE c.realm_id = $1`, realmID).Scan(&st.TotalConsents, &st.UsersWithConsents)
		if err != nil {
			return fmt.Errorf("count consents: %w", mapErr(err))
		}
		// Scopes are a JSON array per row, and plain SQL cannot unnest one
		// portably, so rows are summed here, one client at a time.
		rows, err := tx.r.QueryContext(ctx, `SELECT c.client_id, uc.scopes FROM user_consents uc
			JOIN clients c ON c.id = uc.client_id WHERE c.realm_id = $1 ORDER BY c.client_id`, realmID)
		if err != nil {
			return fmt.Errorf("list consents: %w", mapErr(err))
		}
		defer rows.Close()
		for rows.Next() {
			var clientID, raw string
			if err := rows.Scan(&clientID, &raw); err != nil {
				return fmt.Errorf("read consent: %w", mapErr(err))
			}
			var scopes []string
			if err := json.Unmarshal([]byte(raw), &scopes); err != nil {
				return fmt.Errorf("decode consent scopes of client %s: %w", clientID, err)
			}
			if n := len(st.Clients); n == 0 || st.Clients[n-1].ClientID != clientID {
				st.Clients = append(st.Clients, ClientConsents{ClientID: clientID, Scopes: map[string]int{}})
			}
			c := &st.Clients[len(st.Clients)-1]
			c.Users++
			slices.Sort(scopes)
			for _, sc := range slices.Compact(scopes) { // a scope listed twice is still one user
				c.Scopes[sc]++
			}
		}
		return mapErr(rows.Err())
	})
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(st.Clients, func(a, b ClientConsents) int { return cmp.Compare(b.Users, a.Users) })
	return st, nil
}

// ActiveSessionsByRealm counts the live SSO sessions of each realm at now
// (Unix milliseconds), by realm name; realms without one are left out.
func (s *Store) ActiveSessionsByRealm(ctx context.Context, now int64) (map[string]int, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT r.name, count(*) FROM user_sessions s JOIN realms r ON r.id = s.realm_id
		WHERE s.kind = 'sso' AND s.expires_at > $1 GROUP BY r.name`, now)
	if err != nil {
		return nil, fmt.Errorf("active sessions: %w", mapErr(err))
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var name string
		var n int
		if err := rows.Scan(&name, &n); err != nil {
			return nil, mapErr(err)
		}
		out[name] = n
	}
	return out, mapErr(rows.Err())
}
