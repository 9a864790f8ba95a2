package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/google/uuid"
)

// Consent event actions.
const (
	ConsentGrant  = "GRANT"
	ConsentRevoke = "REVOKE"
)

// Consent is a user's standing consent to scopes of a client.
type Consent struct {
	UserID         string
	ClientID       string // the client's internal ID
	PublicClientID string // filled by reads
	Scopes         []string
	GrantedAt      int64 // Unix milliseconds
	UpdatedAt      int64
}

// ConsentEvent is one grant or revocation, for the consent history.
type ConsentEvent struct {
	ID             string
	UserID         string
	ClientID       string // the client's internal ID
	PublicClientID string
	Action         string   // ConsentGrant or ConsentRevoke
	Scopes         []string // granted, or held when revoked
	Time           int64    // Unix milliseconds
}

// scopeSet is scopes sorted without repeats: a consent is a set.
func scopeSet(scopes ...[]string) []string {
	out := append([]string{}, slices.Concat(scopes...)...)
	slices.Sort(out)
	return slices.Compact(out)
}

const consentSelect = `SELECT uc.user_id, uc.client_id, c.client_id, uc.scopes, uc.granted_at, uc.updated_at
	FROM user_consents uc JOIN clients c ON c.id = uc.client_id`

func scanConsent(row scanner) (*Consent, error) {
	var c Consent
	var scopes string
	if err := row.Scan(&c.UserID, &c.ClientID, &c.PublicClientID, &scopes, &c.GrantedAt, &c.UpdatedAt); err != nil {
		return nil, mapErr(err)
	}
	if err := json.Unmarshal([]byte(scopes), &c.Scopes); err != nil {
		return nil, fmt.Errorf("decode consent of user %s to client %s: %w", c.UserID, c.ClientID, err)
	}
	return &c, nil
}

func (s *Store) getConsent(ctx context.Context, q querier, userID, clientID string) (*Consent, error) {
	c, err := scanConsent(q.QueryRowContext(ctx, consentSelect+" WHERE uc.user_id = $1 AND uc.client_id = $2", userID, clientID))
	if err != nil {
		return nil, fmt.Errorf("consent of user %s to client %s: %w", userID, clientID, err)
	}
	return c, nil
}

// GetConsent finds a user's consent to a client (internal IDs).
func (s *Store) GetConsent(ctx context.Context, userID, clientID string) (*Consent, error) {
	return s.getConsent(ctx, s.r, userID, clientID)
}

// UpsertConsent sets a user's consent to exactly these scopes of a
// client, keeping the time of the first grant, and records the grant.
// now is Unix milliseconds. A user or client unknown, or of different
// realms, is ErrNotFound.
func (s *Store) UpsertConsent(ctx context.Context, userID, clientID string, scopes []string, now int64) error {
	return s.Tx(ctx, func(tx *Store) error {
		return tx.setConsent(ctx, userID, clientID, scopeSet(scopes), scopeSet(scopes), now)
	})
}

// GrantConsent adds scopes to a user's consent to a client (creating it
// if need be) and records the grant of these scopes, as the consent page
// does. A user or client unknown, or of different realms, is ErrNotFound.
func (s *Store) GrantConsent(ctx context.Context, userID, clientID string, scopes []string, now int64) error {
	return s.Tx(ctx, func(tx *Store) error {
		held := []string{}
		c, err := tx.getConsent(ctx, tx.w, userID, clientID)
		switch {
		case err == nil:
			held = c.Scopes
		case !errors.Is(err, ErrNotFound):
			return err
		}
		return tx.setConsent(ctx, userID, clientID, scopeSet(held, scopes), scopeSet(scopes), now)
	})
}

// setConsent stores a consent to the scopes held and records the grant of
// the scopes granted.
func (s *Store) setConsent(ctx context.Context, userID, clientID string, held, granted []string, now int64) error {
	var pairs int
	err := s.w.QueryRowContext(ctx, `SELECT count(*) FROM users u JOIN clients c ON c.realm_id = u.realm_id
		WHERE u.id = $1 AND c.id = $2`, userID, clientID).Scan(&pairs)
	if err != nil {
		return fmt.Errorf("consent of user %s to client %s: %w", userID, clientID, mapErr(err))
	}
	if pairs == 0 {
		return fmt.Errorf("consent of user %s to client %s: user or client of the realm: %w", userID, clientID, ErrNotFound)
	}
	_, err = s.w.ExecContext(ctx, `INSERT INTO user_consents (user_id, client_id, scopes, granted_at, updated_at)
		VALUES ($1, $2, $3, $4, $4)
		ON CONFLICT (user_id, client_id) DO UPDATE SET scopes = excluded.scopes, updated_at = excluded.updated_at`,
		userID, clientID, jsonList(held), now)
	if err != nil {
		return fmt.Errorf("upsert consent of user %s to client %s: %w", userID, clientID, mapErr(err))
	}
	return s.addConsentEvent(ctx, userID, clientID, ConsentGrant, granted, now)
}

func (s *Store) addConsentEvent(ctx context.Context, userID, clientID, action string, scopes []string, now int64) error {
	// Version 7 IDs grow with time, so events of one millisecond keep
	// their order in the history.
	_, err := s.w.ExecContext(ctx, `INSERT INTO consent_events (id, user_id, client_id, action, scopes, time)
		VALUES ($1, $2, $3, $4, $5, $6)`, uuid.Must(uuid.NewV7()).String(), userID, clientID, action, jsonList(scopes), now)
	if err != nil {
		return fmt.Errorf("record consent %s of user %s to client %s: %w", action, userID, clientID, mapErr(err))
	}
	return nil
}

// RevokeConsent withdraws a user's consent to a client of the realm, as
// Keycloak does: it deletes the consent (recording the revocation),
// revokes the user's offline tokens of the client and ends the user's
// OAuth sessions of the client. It returns the sessions that were active
// at now, for back-channel logout. With neither a consent nor an offline
// token to revoke, it is ErrNotFound.
func (s *Store) RevokeConsent(ctx context.Context, realmID, userID, clientID string, now int64) ([]*Session, error) {
	var ended []*Session
	err := s.Tx(ctx, func(tx *Store) error {
		found := false
		c, err := scanConsent(tx.w.QueryRowContext(ctx, consentSelect+` WHERE uc.user_id = $1 AND uc.client_id = $2
			AND c.realm_id = $3`, userID, clientID, realmID))
		switch {
		case err == nil:
			found = true
			if _, err := tx.w.ExecContext(ctx, "DELETE FROM user_consents WHERE user_id = $1 AND client_id = $2",
				userID, clientID); err != nil {
				return fmt.Errorf("delete consent of user %s to client %s: %w", userID, clientID, mapErr(err))
			}
			if err := tx.addConsentEvent(ctx, userID, clientID, ConsentRevoke, c.Scopes, now); err != nil {
				return err
			}
		case !errors.Is(err, ErrNotFound):
			return fmt.Errorf("consent of user %s to client %s: %w", userID, clientID, err)
		}
		var live int
		err = tx.w.QueryRowContext(ctx, `SELECT count(*) FROM refresh_tokens WHERE realm_id = $1 AND user_id = $2
			AND client_id = $3 AND offline AND rotated_at IS NULL AND revoked_at IS NULL AND expires_at > $4`,
			realmID, userID, clientID, now).Scan(&live)
		if err != nil {
			return fmt.Errorf("offline tokens of user %s at client %s: %w", userID, clientID, mapErr(err))
		}
		if !found && live == 0 {
			return fmt.Errorf("consent or offline token of user %s to client %s: %w", userID, clientID, ErrNotFound)
		}
		if _, err := tx.w.ExecContext(ctx, `UPDATE refresh_tokens SET revoked_at = $1 WHERE realm_id = $2
			AND user_id = $3 AND client_id = $4 AND offline AND revoked_at IS NULL`, now, realmID, userID, clientID); err != nil {
			return fmt.Errorf("revoke offline tokens of user %s at client %s: %w", userID, clientID, mapErr(err))
		}
		ended, err = tx.querySessions(ctx, tx.w, `s.realm_id = $1 AND s.user_id = $2 AND s.client_id = $3
			AND s.expires_at > $4 ORDER BY s.started_at, s.id`, realmID, userID, clientID, now)
		if err != nil {
			return err
		}
		// Their refresh tokens go by ON DELETE CASCADE.
		if _, err := tx.w.ExecContext(ctx, "DELETE FROM user_sessions WHERE realm_id = $1 AND user_id = $2 AND client_id = $3",
			realmID, userID, clientID); err != nil {
			return fmt.Errorf("end sessions of user %s at client %s: %w", userID, clientID, mapErr(err))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ended, nil
}

// ListUserConsents returns a user's consents to clients of the realm, by clientId.
func (s *Store) ListUserConsents(ctx context.Context, realmID, userID string) ([]*Consent, error) {
	rows, err := s.r.QueryContext(ctx, consentSelect+" WHERE uc.user_id = $1 AND c.realm_id = $2 ORDER BY c.client_id",
		userID, realmID)
	if err != nil {
		return nil, fmt.Errorf("list consents of user %s: %w", userID, mapErr(err))
	}
	defer rows.Close()
	out := []*Consent{}
	for rows.Next() {
		c, err := scanConsent(rows)
		if err != nil {
			return nil, fmt.Errorf("read consent: %w", err)
		}
		out = append(out, c)
	}
	return out, mapErr(rows.Err())
}

// ConsentHistory pages through a user's grants and revocations at clients
// of the realm, newest first. Those of deleted clients go with them.
func (s *Store) ConsentHistory(ctx context.Context, realmID, userID string, first, max int) ([]*ConsentEvent, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT e.id, e.user_id, e.client_id, c.client_id, e.action, e.scopes, e.time
		FROM consent_events e JOIN clients c ON c.id = e.client_id
		WHERE e.user_id = $1 AND c.realm_id = $2 ORDER BY e.time DESC, e.id DESC LIMIT $3 OFFSET $4`,
		userID, realmID, max, first)
	if err != nil {
		return nil, fmt.Errorf("consent history of user %s: %w", userID, mapErr(err))
	}
	defer rows.Close()
	out := []*ConsentEvent{}
	for rows.Next() {
		var e ConsentEvent
		var scopes string
		if err := rows.Scan(&e.ID, &e.UserID, &e.ClientID, &e.PublicClientID, &e.Action, &scopes, &e.Time); err != nil {
			return nil, fmt.Errorf("read consent event: %w", mapErr(err))
		}
		if err := json.Unmarshal([]byte(scopes), &e.Scopes); err != nil {
			return nil, fmt.Errorf("decode scopes of consent event %s: %w", e.ID, err)
		}
		out = append(out, &e)
	}
	return out, mapErr(rows.Err())
}
