package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// CredentialWebAuthn is a WebAuthn public key credential: a security key
// or a passkey. It is a user_credentials row, confirmed from the start
// (its registration proved the authenticator holds the key).
const CredentialWebAuthn = "webauthn"

// Kinds of WebAuthn ceremony. A login ceremony requires user
// verification (the key alone signs in); a second-factor one, after a
// password or for a step-up, does not, and is never taken as a login.
const (
	CeremonyRegister     = "register"
	CeremonyLogin        = "login"
	CeremonySecondFactor = "second-factor"
)

// StepWebAuthn is what a sign-in owes a user whose second factors are
// WebAuthn credentials only: an assertion of one (see auth_request_steps.go).
const StepWebAuthn = "webauthn"

// ErrSignCount: an assertion whose signature counter is not above the one
// stored, the sign of a cloned authenticator.
var ErrSignCount = errors.New("WebAuthn signature counter did not increase")

// WebAuthnCredential is one of a user's WebAuthn credentials.
type WebAuthnCredential struct {
	ID           string // the server's ID: names the credential in the account API
	RealmID      string
	UserID       string
	Name         string // the user's label for it
	CredentialID []byte // the authenticator's credential ID
	// Data is the whole credential record (public key, AAGUID, flags,
	// transports, attestation) as JSON. It is sealed at rest, bound to its
	// row: a public key swapped in by a hand on the database does not open.
	Data       []byte
	SignCount  int64 // the authenticator's signature counter, as last seen
	CreatedAt  int64 // Unix milliseconds
	LastUsedAt int64 // Unix milliseconds; 0 when never used to sign in
}

const webauthnColumns = `id, realm_id, user_id, label, credential_id, secret, last_used_step, created_at, last_used_at`

func (s *Store) scanWebAuthnCredential(row scanner) (*WebAuthnCredential, error) {
	var c WebAuthnCredential
	var sealed []byte
	var lastUsed *int64
	if err := row.Scan(&c.ID, &c.RealmID, &c.UserID, &c.Name, &c.CredentialID, &sealed, &c.SignCount, &c.CreatedAt,
		&lastUsed); err != nil {
		return nil, mapErr(err)
	}
	data, err := s.open(sealed, credentialAAD(c.ID, c.UserID))
	if err != nil {
		return nil, err
	}
	c.Data = data
	if lastUsed != nil {
		c.LastUsedAt = *lastUsed
	}
	return &c, nil
}

// AddWebAuthnCredential stores a registered credential. An unknown user
// is ErrNotFound; a credential ID the realm has already is ErrConflict.
func (s *Store) AddWebAuthnCredential(ctx context.Context, c *WebAuthnCredential) error {
	if len(c.CredentialID) == 0 || len(c.Data) == 0 {
		return fmt.Errorf("WebAuthn credential %s: no credential ID or record", c.ID)
	}
	var lastUsed *int64
	if c.LastUsedAt != 0 {
		lastUsed = &c.LastUsedAt
	}
	return s.Tx(ctx, func(tx *Store) error {
		var n int
		if err := tx.w.QueryRowContext(ctx, `SELECT count(*) FROM users WHERE id = $1 AND realm_id = $2`,
			c.UserID, c.RealmID).Scan(&n); err != nil {
			return mapErr(err)
		} else if n == 0 {
			return fmt.Errorf("WebAuthn credential of user %s: %w", c.UserID, ErrNotFound)
		}
		_, err := tx.w.ExecContext(ctx, `INSERT INTO user_credentials (id, realm_id, user_id, type, label, secret, confirmed,
			last_used_step, created_at, credential_id, last_used_at) VALUES ($1, $2, $3, $4, $5, $6, true, $7, $8, $9, $10)`,
			c.ID, c.RealmID, c.UserID, CredentialWebAuthn, c.Name, tx.seal(c.Data, credentialAAD(c.ID, c.UserID)),
			c.SignCount, c.CreatedAt, c.CredentialID, lastUsed)
		if err != nil {
			return fmt.Errorf("add WebAuthn credential: %w", mapErr(err))
		}
		return nil
	})
}

// WebAuthnCredentials lists the user's WebAuthn credentials, oldest first.
func (s *Store) WebAuthnCredentials(ctx context.Context, realmID, userID string) ([]*WebAuthnCredential, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT "+webauthnColumns+` FROM user_credentials
		WHERE user_id = $1 AND type = $2 AND realm_id = $3 AND confirmed`, userID, CredentialWebAuthn, realmID)
	if err != nil {
		return nil, fmt.Errorf("WebAuthn credentials of user %s: %w", userID, mapErr(err))
	}
	defer rows.Close()
	var out []*WebAuthnCredential
	for rows.Next() {
		c, err := s.scanWebAuthnCredential(rows)
		if err != nil {
			return nil, fmt.Errorf("WebAuthn credentials of user %s: %w", userID, err)
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b *WebAuthnCredential) int {
		return cmp.Or(cmp.Compare(a.CreatedAt, b.CreatedAt), strings.Compare(a.ID, b.ID))
	})
	return out, mapErr(rows.Err())
}

// WebAuthnCredentialByCredentialID finds a credential of the realm by the
// authenticator's credential ID, as a passkey sign-in names it.
func (s *Store) WebAuthnCredentialByCredentialID(ctx context.Context, realmID string, credentialID []byte) (*WebAuthnCredential, error) {
	c, err := s.scanWebAuthnCredential(s.r.QueryRowContext(ctx, "SELECT "+webauthnColumns+` FROM user_credentials
		WHERE realm_id = $1 AND credential_id = $2 AND type = $3`, realmID, credentialID, CredentialWebAuthn))
	if err != nil {
		return nil, fmt.Errorf("WebAuthn credential by credential ID: %w", err)
	}
	return c, nil
}

// UseWebAuthnCredential records a sign-in with the credential at now: its
// new signature counter and its record as the assertion left it (flags
// such as the backup state may change). The update is the clone check:
// it succeeds only when signCount is above the stored counter, or both
// are zero (an authenticator without a counter), so of two sign-ins with
// the same counter value exactly one wins. Anything else is ErrSignCount;
// an unknown credential is ErrNotFound.
func (s *Store) UseWebAuthnCredential(ctx context.Context, realmID, id string, signCount int64, data []byte, now int64) error {
	return s.Tx(ctx, func(tx *Store) error {
		var userID string
		err := tx.w.QueryRowContext(ctx, `SELECT user_id FROM user_credentials WHERE id = $1 AND realm_id = $2 AND type = $3`,
			id, realmID, CredentialWebAuthn).Scan(&userID)
		if err != nil {
			return fmt.Errorf("WebAuthn credential %s: %w", id, mapErr(err))
		}
		res, err := tx.w.ExecContext(ctx, `UPDATE user_credentials SET last_used_step = $1, last_used_at = $2, secret = $3
			WHERE id = $4 AND realm_id = $5 AND (last_used_step < $1 OR ($1 = 0 AND last_used_step = 0))`,
			signCount, now, tx.seal(data, credentialAAD(id, userID)), id, realmID)
		n, err := rowsAffected(res, err, "use WebAuthn credential "+id)
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("WebAuthn credential %s counter %d: %w", id, signCount, ErrSignCount)
		}
		return nil
	})
}

// DeleteWebAuthnCredential removes one of the user's WebAuthn credentials
// (ErrNotFound when the user has no such credential). Recovery codes go
// with the user's last credential, as in DeleteCredentials.
func (s *Store) DeleteWebAuthnCredential(ctx context.Context, realmID, userID, id string) error {
	return s.Tx(ctx, func(tx *Store) error {
		res, err := tx.w.ExecContext(ctx, `DELETE FROM user_credentials WHERE id = $1 AND realm_id = $2 AND user_id = $3 AND type = $4`,
			id, realmID, userID, CredentialWebAuthn)
		if err != nil {
			return fmt.Errorf("delete WebAuthn credential %s: %w", id, mapErr(err))
		}
		if err := affectedOne(res, "WebAuthn credential "+id); err != nil {
			return err
		}
		_, err = tx.w.ExecContext(ctx, `DELETE FROM recovery_codes WHERE user_id = $1 AND realm_id = $2
			AND NOT EXISTS (SELECT 1 FROM user_credentials WHERE user_id = $1 AND confirmed)`, userID, realmID)
		if err != nil {
			return fmt.Errorf("delete recovery codes of user %s: %w", userID, mapErr(err))
		}
		return nil
	})
}

// WebAuthnUserHandle is the user's WebAuthn user handle. The first call
// for a user stores fresh as the handle; later calls return it. An
// unknown user is ErrNotFound.
func (s *Store) WebAuthnUserHandle(ctx context.Context, realmID, userID string, fresh []byte) ([]byte, error) {
	if len(fresh) == 0 {
		return nil, fmt.Errorf("WebAuthn user handle: no fresh handle given")
	}
	var handle []byte
	err := s.Tx(ctx, func(tx *Store) error {
		if _, err := tx.w.ExecContext(ctx, `INSERT INTO webauthn_user_handles (user_id, realm_id, handle)
			SELECT id, realm_id, $3 FROM users WHERE id = $1 AND realm_id = $2
			ON CONFLICT (user_id) DO NOTHING`, userID, realmID, fresh); err != nil {
			return fmt.Errorf("WebAuthn user handle: %w", mapErr(err))
		}
		err := tx.w.QueryRowContext(ctx, `SELECT handle FROM webauthn_user_handles WHERE user_id = $1 AND realm_id = $2`,
			userID, realmID).Scan(&handle)
		if err != nil {
			return fmt.Errorf("WebAuthn user handle of user %s: %w", userID, mapErr(err))
		}
		return nil
	})
	return handle, err
}

// WebAuthnCeremony is a registration or authentication between its
// options and the authenticator's response.
type WebAuthnCeremony struct {
	ID          string // given to the client; only its hash is stored
	RealmID     string
	UserID      string // "" for a passkey sign-in, whose user the response names
	Kind        string // CeremonyRegister, CeremonyLogin or CeremonySecondFactor
	SessionData []byte // what the response is checked against, JSON
	ExpiresAt   int64  // Unix milliseconds
}

// CreateWebAuthnCeremony stores a ceremony. A user not of the realm is
// ErrNotFound.
func (s *Store) CreateWebAuthnCeremony(ctx context.Context, c *WebAuthnCeremony) error {
	var userID *string
	if c.UserID != "" {
		userID = &c.UserID
		var n int
		if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM users WHERE id = $1 AND realm_id = $2`,
			c.UserID, c.RealmID).Scan(&n); err != nil {
			return mapErr(err)
		} else if n == 0 {
			return fmt.Errorf("WebAuthn ceremony of user %s: %w", c.UserID, ErrNotFound)
		}
	}
	_, err := s.w.ExecContext(ctx, `INSERT INTO webauthn_ceremonies (id_hash, realm_id, user_id, kind, session_data, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, HashToken(c.ID), c.RealmID, userID, c.Kind, string(c.SessionData), c.ExpiresAt)
	if err != nil {
		return fmt.Errorf("create WebAuthn ceremony: %w", mapErr(err))
	}
	return nil
}

// TakeWebAuthnCeremony removes the realm's ceremony id and returns it,
// when it has not expired at now: a ceremony is answered once, right or
// wrong. Anything else is ErrNotFound.
func (s *Store) TakeWebAuthnCeremony(ctx context.Context, realmID, id string, now int64) (*WebAuthnCeremony, error) {
	c := WebAuthnCeremony{ID: id}
	var userID *string
	var data string
	err := s.w.QueryRowContext(ctx, `DELETE FROM webauthn_ceremonies WHERE id_hash = $1 AND realm_id = $2
		RETURNING realm_id, user_id, kind, session_data, expires_at`, HashToken(id), realmID).Scan(
		&c.RealmID, &userID, &c.Kind, &data, &c.ExpiresAt)
	if err != nil {
		return nil, fmt.Errorf("WebAuthn ceremony: %w", mapErr(err))
	}
	if c.ExpiresAt <= now {
		return nil, fmt.Errorf("WebAuthn ceremony expired: %w", ErrNotFound)
	}
	if userID != nil {
		c.UserID = *userID
	}
	c.SessionData = []byte(data)
	return &c, nil
}

// DeleteExpiredWebAuthnCeremonies removes the ceremonies expired at now
// and counts them.
func (s *Store) DeleteExpiredWebAuthnCeremonies(ctx context.Context, now int64) (int64, error) {
	res, err := s.w.ExecContext(ctx, `DELETE FROM webauthn_ceremonies WHERE expires_at <= $1`, now)
	return rowsAffected(res, err, "delete expired WebAuthn ceremonies")
}
