package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Signing key statuses. A key is published from creation until its
// publish_until after retirement, and signs only while active.
const (
	KeyNext    = "next"    // published so verifiers can fetch it; not signing yet
	KeyActive  = "active"  // signing; at most one per realm
	KeyRetired = "retired" // published until the tokens it signed expire
)

// SigningKey is one of a realm's token signing keys. Reads never carry the
// private half; only SigningKeyPrivate returns it.
type SigningKey struct {
	ID           string // the JWK kid
	RealmID      string
	Algorithm    string // RS256, ES256 or EdDSA
	PrivateKey   []byte // PKCS #8 DER; set to create a key, sealed in the database
	PublicJWK    string // JSON, public half only
	Status       string
	CreatedAt    int64 // Unix milliseconds
	ActivatedAt  int64 // 0 until the key first signs
	RetiredAt    int64 // 0 until retired
	PublishUntil int64 // 0 until retired
}

// KeySettings says how a realm's keys rotate.
type KeySettings struct {
	RealmID      string
	Algorithm    string
	RotationDays int // 0: rotate only on request
}

const signingKeyColumns = `id, realm_id, algorithm, public_jwk, status, created_at, activated_at, retired_at,
	publish_until`

// signingKeyOrder lists next keys first, then the active one, then the
// retired ones, newest first within each.
const signingKeyOrder = ` ORDER BY CASE status WHEN 'next' THEN 0 WHEN 'active' THEN 1 ELSE 2 END,
	created_at DESC, id`

// signingKeyAAD binds a sealed private key to its kid, so a ciphertext
// copied onto another key's row does not open.
func signingKeyAAD(kid string) string { return "signing_key:" + kid }

func scanSigningKey(row scanner) (*SigningKey, error) {
	var k SigningKey
	var activated, retired, until sql.NullInt64
	err := row.Scan(&k.ID, &k.RealmID, &k.Algorithm, &k.PublicJWK, &k.Status, &k.CreatedAt, &activated,
		&retired, &until)
	if err != nil {
		return nil, mapErr(err)
	}
	k.ActivatedAt, k.RetiredAt, k.PublishUntil = activated.Int64, retired.Int64, until.Int64
	return &k, nil
}

// CreateSigningKey inserts k, sealing its private key. A second active key
// in the realm is ErrConflict (column realm_id); an unknown realm is
// ErrNotFound.
func (s *Store) CreateSigningKey(ctx context.Context, k *SigningKey) error {
	if len(k.PrivateKey) == 0 {
		return fmt.Errorf("create signing key %s: no private key", k.ID)
	}
	_, err := s.w.ExecContext(ctx, `INSERT INTO signing_keys (`+signingKeyColumns+`, private_key)
		VALUES (`+placeholders(10)+`)`,
		k.ID, k.RealmID, k.Algorithm, k.PublicJWK, k.Status, k.CreatedAt, nullInt(k.ActivatedAt),
		nullInt(k.RetiredAt), nullInt(k.PublishUntil), s.seal(k.PrivateKey, signingKeyAAD(k.ID)))
	if err != nil {
		return fmt.Errorf("create signing key %s: %w", k.ID, mapErr(err))
	}
	return nil
}

// ListSigningKeys returns every stored key of a realm, published or not:
// next keys, the active key, retired keys newest first.
func (s *Store) ListSigningKeys(ctx context.Context, realmID string) ([]*SigningKey, error) {
	return s.querySigningKeys(ctx, "SELECT "+signingKeyColumns+" FROM signing_keys WHERE realm_id = $1"+
		signingKeyOrder, realmID)
}

// PublishedSigningKeys returns the keys a realm publishes at now: next and
// active keys, and retired ones whose publish_until is still ahead.
func (s *Store) PublishedSigningKeys(ctx context.Context, realmID string, now time.Time) ([]*SigningKey, error) {
	return s.querySigningKeys(ctx, "SELECT "+signingKeyColumns+` FROM signing_keys
		WHERE realm_id = $1 AND (status <> 'retired' OR publish_until > $2)`+signingKeyOrder,
		realmID, now.UnixMilli())
}

func (s *Store) querySigningKeys(ctx context.Context, query string, args ...any) ([]*SigningKey, error) {
	rows, err := s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list signing keys: %w", mapErr(err))
	}
	defer rows.Close()
	out := []*SigningKey{}
	for rows.Next() {
		k, err := scanSigningKey(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, mapErr(rows.Err())
}

// GetActiveSigningKey returns the key a realm signs with, without its
// private half; ErrNotFound when the realm has none.
func (s *Store) GetActiveSigningKey(ctx context.Context, realmID string) (*SigningKey, error) {
	k, err := scanSigningKey(s.r.QueryRowContext(ctx, "SELECT "+signingKeyColumns+
		" FROM signing_keys WHERE realm_id = $1 AND status = 'active'", realmID))
	if err != nil {
		return nil, fmt.Errorf("active signing key of realm %s: %w", realmID, err)
	}
	return k, nil
}

// SigningKeyPrivate opens the private key of a realm's key: PKCS #8 DER.
func (s *Store) SigningKeyPrivate(ctx context.Context, realmID, kid string) ([]byte, error) {
	var sealed []byte
	err := s.r.QueryRowContext(ctx, "SELECT private_key FROM signing_keys WHERE realm_id = $1 AND id = $2",
		realmID, kid).Scan(&sealed)
	if err != nil {
		return nil, fmt.Errorf("signing key %s: %w", kid, mapErr(err))
	}
	der, err := s.open(sealed, signingKeyAAD(kid))
	if err != nil {
		return nil, fmt.Errorf("signing key %s: %w", kid, err)
	}
	return der, nil
}

// ActiveSigningKeyIDs returns the kid of every realm's active key.
func (s *Store) ActiveSigningKeyIDs(ctx context.Context) ([]string, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT id FROM signing_keys WHERE status = 'active'")
	if err != nil {
		return nil, fmt.Errorf("list active signing keys: %w", mapErr(err))
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, mapErr(err)
		}
		out = append(out, id)
	}
	return out, mapErr(rows.Err())
}

// ActivateSigningKey makes the realm's next key kid sign from now on. The
// key active until then is retired and stays published until publishUntil.
// ErrNotFound when kid is not a next key of the realm.
func (s *Store) ActivateSigningKey(ctx context.Context, realmID, kid string, now, publishUntil time.Time) error {
	return s.Tx(ctx, func(tx *Store) error {
		// Retire first: the unique index allows one active key per realm.
		_, err := tx.w.ExecContext(ctx, `UPDATE signing_keys SET status = 'retired', retired_at = $1, publish_until = $2
			WHERE realm_id = $3 AND status = 'active'`, now.UnixMilli(), publishUntil.UnixMilli(), realmID)
		if err != nil {
			return fmt.Errorf("retire signing key of realm %s: %w", realmID, mapErr(err))
		}
		res, err := tx.w.ExecContext(ctx, `UPDATE signing_keys SET status = 'active', activated_at = $1
			WHERE realm_id = $2 AND id = $3 AND status = 'next'`, now.UnixMilli(), realmID, kid)
		if err != nil {
			return fmt.Errorf("activate signing key %s: %w", kid, mapErr(err))
		}
		return affectedOne(res, "next signing key "+kid)
	})
}

// DeleteNextSigningKeys withdraws a realm's next keys. They never signed
// anything, so no token depends on them.
func (s *Store) DeleteNextSigningKeys(ctx context.Context, realmID string) error {
	_, err := s.w.ExecContext(ctx, "DELETE FROM signing_keys WHERE realm_id = $1 AND status = 'next'", realmID)
	if err != nil {
		return fmt.Errorf("delete next signing keys of realm %s: %w", realmID, mapErr(err))
	}
	return nil
}

// DeleteExpiredSigningKeys deletes the retired keys of every realm whose
// publish_until is past at now, and says how many.
func (s *Store) DeleteExpiredSigningKeys(ctx context.Context, now time.Time) (int64, error) {
	res, err := s.w.ExecContext(ctx, "DELETE FROM signing_keys WHERE status = 'retired' AND publish_until <= $1",
		now.UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("delete expired signing keys: %w", mapErr(err))
	}
	n, err := res.RowsAffected()
	return n, mapErr(err)
}

// GetKeySettings returns a realm's rotation settings; ErrNotFound for a
// realm that has none stored.
func (s *Store) GetKeySettings(ctx context.Context, realmID string) (*KeySettings, error) {
	ks := KeySettings{RealmID: realmID}
	err := s.r.QueryRowContext(ctx, "SELECT algorithm, rotation_days FROM realm_key_settings WHERE realm_id = $1",
		realmID).Scan(&ks.Algorithm, &ks.RotationDays)
	if err != nil {
		return nil, fmt.Errorf("key settings of realm %s: %w", realmID, mapErr(err))
	}
	return &ks, nil
}

// PutKeySettings creates or replaces a realm's rotation settings; an
// unknown realm is ErrNotFound.
func (s *Store) PutKeySettings(ctx context.Context, ks *KeySettings) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO realm_key_settings (realm_id, algorithm, rotation_days) VALUES ($1, $2, $3)
		ON CONFLICT (realm_id) DO UPDATE SET algorithm = excluded.algorithm, rotation_days = excluded.rotation_days`,
		ks.RealmID, ks.Algorithm, ks.RotationDays)
	if err != nil {
		return fmt.Errorf("put key settings of realm %s: %w", ks.RealmID, mapErr(err))
	}
	return nil
}

// Now is the store's clock, for rows written where no other clock is at
// hand, such as the first signing key of a realm created inside a Tx.
func (s *Store) Now() time.Time { return s.now() }
