package store

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// CredentialTOTP is a TOTP authenticator (RFC 6238). WebAuthn keys are
// another type in the same table (webauthn.go).
const CredentialTOTP = "totp"

// ErrStepUsed: a TOTP code of a time step no later than the last one the
// credential accepted. Each code works once.
var ErrStepUsed = errors.New("TOTP time step already used")

// Credential is a second factor of a user. Its secret is sealed with the
// master key in the row; reads return it opened.
type Credential struct {
	ID      string
	RealmID string
	UserID  string
	Type    string
	Label   string
	Secret  []byte
	// Confirmed is false while an enrolment waits for the first code that
	// proves the authenticator holds the secret.
	Confirmed    bool
	LastUsedStep int64 // the last TOTP time step accepted
	CreatedAt    int64 // Unix milliseconds: confirmation, or the start of an enrolment
}

const credentialColumns = `id, realm_id, user_id, type, label, secret, confirmed, last_used_step, created_at`

// credentialAAD binds a sealed secret to its row and user: copied to
// another row, it does not open.
func credentialAAD(id, userID string) string {
	return "user_credentials.secret:" + id + ":" + userID
}

func (s *Store) scanCredential(row scanner) (*Credential, error) {
	var c Credential
	var sealed []byte
	if err := row.Scan(&c.ID, &c.RealmID, &c.UserID, &c.Type, &c.Label, &sealed, &c.Confirmed, &c.LastUsedStep,
		&c.CreatedAt); err != nil {
		return nil, mapErr(err)
	}
	secret, err := s.open(sealed, credentialAAD(c.ID, c.UserID))
	if err != nil {
		return nil, err
	}
	c.Secret = secret
	return &c, nil
}

// BeginCredential stores c unconfirmed, replacing the user's earlier
// unconfirmed credential of its type: only the newest enrolment can be
// confirmed. An unknown user or realm is ErrNotFound.
func (s *Store) BeginCredential(ctx context.Context, c *Credential) error {
	if len(c.Secret) == 0 {
		return fmt.Errorf("credential %s: no secret", c.ID)
	}
	return s.Tx(ctx, func(tx *Store) error {
		if _, err := tx.w.ExecContext(ctx, `DELETE FROM user_credentials WHERE user_id = $1 AND type = $2 AND NOT confirmed`,
			c.UserID, c.Type); err != nil {
			return fmt.Errorf("replace pending %s credential: %w", c.Type, mapErr(err))
		}
		var n int
		if err := tx.w.QueryRowContext(ctx, `SELECT count(*) FROM users WHERE id = $1 AND realm_id = $2`,
			c.UserID, c.RealmID).Scan(&n); err != nil {
			return mapErr(err)
		} else if n == 0 {
			return fmt.Errorf("credential of user %s: %w", c.UserID, ErrNotFound)
		}
		_, err := tx.w.ExecContext(ctx, "INSERT INTO user_credentials ("+credentialColumns+") VALUES ("+placeholders(9)+")",
			c.ID, c.RealmID, c.UserID, c.Type, c.Label, tx.seal(c.Secret, credentialAAD(c.ID, c.UserID)), false,
			c.LastUsedStep, c.CreatedAt)
		if err != nil {
			return fmt.Errorf("begin %s credential: %w", c.Type, mapErr(err))
		}
		c.Confirmed = false
		return nil
	})
}

// PendingCredential is the user's unconfirmed credential of type typ.
func (s *Store) PendingCredential(ctx context.Context, realmID, userID, typ string) (*Credential, error) {
	c, err := s.scanCredential(s.r.QueryRowContext(ctx, "SELECT "+credentialColumns+` FROM user_credentials
		WHERE realm_id = $1 AND user_id = $2 AND type = $3 AND NOT confirmed`, realmID, userID, typ))
	if err != nil {
		return nil, fmt.Errorf("pending %s credential of user %s: %w", typ, userID, err)
	}
	return c, nil
}

// CredentialTypes lists the types of the user's confirmed credentials,
// each once. Every password sign-in asks which second factor it owes;
// this answers without opening any sealed secret.
func (s *Store) CredentialTypes(ctx context.Context, realmID, userID string) ([]string, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT DISTINCT type FROM user_credentials
		WHERE realm_id = $1 AND user_id = $2 AND confirmed ORDER BY type`, realmID, userID)
	if err != nil {
		return nil, fmt.Errorf("credential types of user %s: %w", userID, mapErr(err))
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, fmt.Errorf("credential types of user %s: %w", userID, mapErr(err))
		}
		out = append(out, t)
	}
	return out, mapErr(rows.Err())
}

// Credentials lists the user's confirmed credentials, oldest first, their
// secrets opened; the few rows are sorted here.
func (s *Store) Credentials(ctx context.Context, realmID, userID string) ([]*Credential, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT "+credentialColumns+` FROM user_credentials
		WHERE realm_id = $1 AND user_id = $2 AND confirmed`, realmID, userID)
	if err != nil {
		return nil, fmt.Errorf("credentials of user %s: %w", userID, mapErr(err))
	}
	defer rows.Close()
	var out []*Credential
	for rows.Next() {
		c, err := s.scanCredential(rows)
		if err != nil {
			return nil, fmt.Errorf("credentials of user %s: %w", userID, err)
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b *Credential) int {
		return cmp.Or(cmp.Compare(a.CreatedAt, b.CreatedAt), strings.Compare(a.ID, b.ID))
	})
	return out, mapErr(rows.Err())
}

// ConfirmCredential confirms the unconfirmed credential id at now,
// recording step as its last used time step. With recoveryHashes (the
// hashes of new recovery codes) the user's earlier set is replaced; with
// nil it is kept. A
// credential not pending is ErrNotFound; a user who has a confirmed one
// of the type already is ErrConflict.
func (s *Store) ConfirmCredential(ctx context.Context, realmID, id string, step int64, recoveryHashes [][]byte, now int64) error {
	for _, h := range recoveryHashes {
		if len(h) != sha256.Size {
			return fmt.Errorf("recovery codes: each hash must be %d bytes: store HashToken(code), never the code", sha256.Size)
		}
	}
	return s.Tx(ctx, func(tx *Store) error {
		var userID string
		err := tx.w.QueryRowContext(ctx, `UPDATE user_credentials SET confirmed = true, last_used_step = $1, created_at = $2
			WHERE realm_id = $3 AND id = $4 AND NOT confirmed RETURNING user_id`, step, now, realmID, id).Scan(&userID)
		if err != nil {
			return fmt.Errorf("confirm credential %s: %w", id, mapErr(err))
		}
		if recoveryHashes == nil {
			return nil
		}
		return tx.replaceRecoveryCodes(ctx, realmID, userID, recoveryHashes, now)
	})
}

func (s *Store) replaceRecoveryCodes(ctx context.Context, realmID, userID string, hashes [][]byte, now int64) error {
	if _, err := s.w.ExecContext(ctx, `DELETE FROM recovery_codes WHERE user_id = $1`, userID); err != nil {
		return fmt.Errorf("replace recovery codes: %w", mapErr(err))
	}
	for _, h := range hashes {
		if _, err := s.w.ExecContext(ctx, `INSERT INTO recovery_codes (user_id, realm_id, code_hash, created_at)
			VALUES ($1, $2, $3, $4)`, userID, realmID, h, now); err != nil {
			return fmt.Errorf("store recovery code: %w", mapErr(err))
		}
	}
	return nil
}

// UseCredentialStep records that the credential accepted a code of time
// step step. The update is the check: it succeeds only while step is
// later than the last one used, so of two requests with the same code
// exactly one wins. Anything else is ErrStepUsed.
func (s *Store) UseCredentialStep(ctx context.Context, realmID, id string, step int64) error {
	res, err := s.w.ExecContext(ctx, `UPDATE user_credentials SET last_used_step = $1
		WHERE id = $2 AND realm_id = $3 AND confirmed AND last_used_step < $1`, step, id, realmID)
	n, err := rowsAffected(res, err, "use step of credential "+id)
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("credential %s step %d: %w", id, step, ErrStepUsed)
	}
	return nil
}

// UseRecoveryCode spends the user's unused recovery code of this hash at
// now. Anything else is ErrNotFound.
func (s *Store) UseRecoveryCode(ctx context.Context, realmID, userID string, hash []byte, now int64) error {
	res, err := s.w.ExecContext(ctx, `UPDATE recovery_codes SET used_at = $1
		WHERE user_id = $2 AND realm_id = $3 AND code_hash = $4 AND used_at IS NULL`, now, userID, realmID, hash)
	if err != nil {
		return fmt.Errorf("use recovery code: %w", mapErr(err))
	}
	return affectedOne(res, "unused recovery code of user "+userID)
}

// RecoveryCodesLeft counts the user's unused recovery codes.
func (s *Store) RecoveryCodesLeft(ctx context.Context, realmID, userID string) (int, error) {
	var n int
	err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM recovery_codes WHERE user_id = $1 AND realm_id = $2 AND used_at IS NULL`,
		userID, realmID).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count recovery codes: %w", mapErr(err))
	}
	return n, nil
}

// DeleteCredentials removes the user's credentials of the given types,
// confirmed or not, or of every type when none is given, and counts the
// confirmed ones removed. Recovery codes go with the last confirmed
// credential: they stand in for a second factor the user no longer has.
func (s *Store) DeleteCredentials(ctx context.Context, realmID, userID string, types ...string) (int64, error) {
	var removed int64
	err := s.Tx(ctx, func(tx *Store) error {
		where, args := "realm_id = $1 AND user_id = $2", []any{realmID, userID}
		if len(types) > 0 {
			in := make([]string, len(types))
			for i, t := range types {
				in[i] = fmt.Sprintf("$%d", i+3)
				args = append(args, t)
			}
			where += " AND type IN (" + strings.Join(in, ", ") + ")"
		}
		var err error
		if err = tx.w.QueryRowContext(ctx, "SELECT count(*) FROM user_credentials WHERE confirmed AND "+where,
			args...).Scan(&removed); err != nil {
			return fmt.Errorf("count credentials: %w", mapErr(err))
		}
		if _, err = tx.w.ExecContext(ctx, "DELETE FROM user_credentials WHERE "+where, args...); err != nil {
			return fmt.Errorf("delete credentials of user %s: %w", userID, mapErr(err))
		}
		_, err = tx.w.ExecContext(ctx, `DELETE FROM recovery_codes WHERE user_id = $1 AND realm_id = $2
			AND NOT EXISTS (SELECT 1 FROM user_credentials WHERE user_id = $1 AND confirmed)`, userID, realmID)
		if err != nil {
			return fmt.Errorf("delete recovery codes of user %s: %w", userID, mapErr(err))
		}
		return nil
	})
	return removed, err
}

// FactorSnapshot is the second factors of a realm's users as stored,
// secrets still sealed, held while an import replaces the realm.
type FactorSnapshot struct {
	creds   []sealedCredential
	codes   []storedRecoveryCode
	handles []storedUserHandle
}

type sealedCredential struct {
	id, userID, typ, label string
	secret                 []byte
	confirmed              bool
	lastUsedStep           int64
	createdAt              int64
	credentialID           []byte // WebAuthn only
	lastUsedAt             *int64 // WebAuthn only
}

// storedUserHandle is a user's WebAuthn user handle: the passkeys on
// authenticators name the user by it, so it outlives a replacement too.
type storedUserHandle struct {
	userID string
	handle []byte
}

type storedRecoveryCode struct {
	userID    string
	hash      []byte
	createdAt int64
	usedAt    *int64
}

// SnapshotFactors reads every second factor and recovery code of the
// realm's users.
func (s *Store) SnapshotFactors(ctx context.Context, realmID string) (*FactorSnapshot, error) {
	var snap FactorSnapshot
	rows, err := s.w.QueryContext(ctx, `SELECT id, user_id, type, label, secret, confirmed, last_used_step, created_at,
		credential_id, last_used_at FROM user_credentials WHERE realm_id = $1`, realmID)
	if err != nil {
		return nil, fmt.Errorf("snapshot credentials: %w", mapErr(err))
	}
	for rows.Next() {
		var c sealedCredential
		if err := rows.Scan(&c.id, &c.userID, &c.typ, &c.label, &c.secret, &c.confirmed, &c.lastUsedStep, &c.createdAt,
			&c.credentialID, &c.lastUsedAt); err != nil {
			rows.Close()
			return nil, mapErr(err)
		}
		snap.creds = append(snap.creds, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, mapErr(err)
	}
	rows, err = s.w.QueryContext(ctx, `SELECT user_id, code_hash, created_at, used_at FROM recovery_codes WHERE realm_id = $1`, realmID)
	if err != nil {
		return nil, fmt.Errorf("snapshot recovery codes: %w", mapErr(err))
	}
	for rows.Next() {
		var c storedRecoveryCode
		if err := rows.Scan(&c.userID, &c.hash, &c.createdAt, &c.usedAt); err != nil {
			rows.Close()
			return nil, mapErr(err)
		}
		snap.codes = append(snap.codes, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, mapErr(err)
	}
	rows, err = s.w.QueryContext(ctx, `SELECT user_id, handle FROM webauthn_user_handles WHERE realm_id = $1`, realmID)
	if err != nil {
		return nil, fmt.Errorf("snapshot WebAuthn user handles: %w", mapErr(err))
	}
	defer rows.Close()
	for rows.Next() {
		var h storedUserHandle
		if err := rows.Scan(&h.userID, &h.handle); err != nil {
			return nil, mapErr(err)
		}
		snap.handles = append(snap.handles, h)
	}
	return &snap, mapErr(rows.Err())
}

// RestoreFactors writes a snapshot back for the users of the realm that
// have the same IDs as before; the others' factors are dropped. Sealed
// secrets are bound to credential and user, not realm, so they open as
// before.
func (s *Store) RestoreFactors(ctx context.Context, realmID string, snap *FactorSnapshot) error {
	return s.Tx(ctx, func(tx *Store) error {
		for _, c := range snap.creds {
			_, err := tx.w.ExecContext(ctx, `INSERT INTO user_credentials (`+credentialColumns+`, credential_id, last_used_at)
				SELECT $1, $2, id, $3, $4, $5, $6, $7, $8, $10, $11 FROM users WHERE id = $9 AND realm_id = $2`,
				c.id, realmID, c.typ, c.label, c.secret, c.confirmed, c.lastUsedStep, c.createdAt, c.userID, c.credentialID, c.lastUsedAt)
			if err != nil {
				return fmt.Errorf("restore credential %s: %w", c.id, mapErr(err))
			}
		}
		for _, c := range snap.codes {
			_, err := tx.w.ExecContext(ctx, `INSERT INTO recovery_codes (user_id, realm_id, code_hash, created_at, used_at)
				SELECT id, $1, $2, $3, $4 FROM users WHERE id = $5 AND realm_id = $1`, realmID, c.hash, c.createdAt, c.usedAt, c.userID)
			if err != nil {
				return fmt.Errorf("restore recovery code: %w", mapErr(err))
			}
		}
		for _, h := range snap.handles {
			_, err := tx.w.ExecContext(ctx, `INSERT INTO webauthn_user_handles (user_id, realm_id, handle)
				SELECT id, $1, $2 FROM users WHERE id = $3 AND realm_id = $1`, realmID, h.handle, h.userID)
			if err != nil {
				return fmt.Errorf("restore WebAuthn user handle: %w", mapErr(err))
			}
		}
		return nil
	})
}
