package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// SAMLKey is one of a realm's SAML signing keys: an RSA key and the
// self-signed certificate that publishes it. It moves through the states
// of the signing keys (KeyNext, KeyActive, KeyRetired). Reads never carry
// the private half; only SAMLKeyPrivate returns it.
type SAMLKey struct {
	ID           string // hex SHA-256 of the certificate
	RealmID      string
	PrivateKey   []byte // PKCS #8 DER; set to create a key, sealed in the database
	Certificate  []byte // DER
	Status       string
	CreatedAt    int64 // Unix milliseconds
	ActivatedAt  int64 // 0 until the key first signs
	RetiredAt    int64 // 0 until retired
	PublishUntil int64 // 0 until retired
}

const samlKeyColumns = `id, realm_id, certificate, status, created_at, activated_at, retired_at, publish_until`

// samlKeyAAD binds a sealed private key to its row.
func samlKeyAAD(id string) string { return "saml_key:" + id }

func scanSAMLKey(row scanner) (*SAMLKey, error) {
	var k SAMLKey
	var activated, retired, until sql.NullInt64
	if err := row.Scan(&k.ID, &k.RealmID, &k.Certificate, &k.Status, &k.CreatedAt, &activated, &retired,
		&until); err != nil {
		return nil, mapErr(err)
	}
	k.ActivatedAt, k.RetiredAt, k.PublishUntil = activated.Int64, retired.Int64, until.Int64
	return &k, nil
}

// CreateSAMLKey inserts k, sealing its private key. A second active key in
// the realm is ErrConflict; an unknown realm is ErrNotFound.
func (s *Store) CreateSAMLKey(ctx context.Context, k *SAMLKey) error {
	if len(k.PrivateKey) == 0 || len(k.Certificate) == 0 {
		return fmt.Errorf("create SAML key %s: no private key or certificate", k.ID)
	}
	_, err := s.w.ExecContext(ctx, `INSERT INTO saml_keys (`+samlKeyColumns+`, private_key) VALUES (`+placeholders(9)+`)`,
		k.ID, k.RealmID, k.Certificate, k.Status, k.CreatedAt, nullInt(k.ActivatedAt), nullInt(k.RetiredAt),
		nullInt(k.PublishUntil), s.seal(k.PrivateKey, samlKeyAAD(k.ID)))
	if err != nil {
		return fmt.Errorf("create SAML key %s: %w", k.ID, mapErr(err))
	}
	return nil
}

// ListSAMLKeys returns every stored SAML key of a realm: next keys, the
// active key, retired keys, newest first within each.
func (s *Store) ListSAMLKeys(ctx context.Context, realmID string) ([]*SAMLKey, error) {
	return s.querySAMLKeys(ctx, "SELECT "+samlKeyColumns+" FROM saml_keys WHERE realm_id = $1"+signingKeyOrder, realmID)
}

// PublishedSAMLKeys returns the SAML keys a realm publishes at now: next and
// active keys, and retired ones whose publish_until is still ahead.
func (s *Store) PublishedSAMLKeys(ctx context.Context, realmID string, now time.Time) ([]*SAMLKey, error) {
	return s.querySAMLKeys(ctx, "SELECT "+samlKeyColumns+` FROM saml_keys
		WHERE realm_id = $1 AND (status <> 'retired' OR publish_until > $2)`+signingKeyOrder, realmID, now.UnixMilli())
}

func (s *Store) querySAMLKeys(ctx context.Context, query string, args ...any) ([]*SAMLKey, error) {
	rows, err := s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list SAML keys: %w", mapErr(err))
	}
	defer rows.Close()
	out := []*SAMLKey{}
	for rows.Next() {
		k, err := scanSAMLKey(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, mapErr(rows.Err())
}

// SAMLKeyPrivate opens the private key of a realm's SAML key: PKCS #8 DER.
func (s *Store) SAMLKeyPrivate(ctx context.Context, realmID, id string) ([]byte, error) {
	var sealed []byte
	err := s.r.QueryRowContext(ctx, "SELECT private_key FROM saml_keys WHERE realm_id = $1 AND id = $2",
		realmID, id).Scan(&sealed)
	if err != nil {
		return nil, fmt.Errorf("SAML key %s: %w", id, mapErr(err))
	}
	der, err := s.open(sealed, samlKeyAAD(id))
	if err != nil {
		return nil, fmt.Errorf("SAML key %s: %w", id, err)
	}
	return der, nil
}

// ActivateSAMLKey makes the realm's next SAML key id sign from now on; the
// key active until then is retired and stays published until
// publishUntil. ErrNotFound when id is not a next key of the realm.
func (s *Store) ActivateSAMLKey(ctx context.Context, realmID, id string, now, publishUntil time.Time) error {
	return s.Tx(ctx, func(tx *Store) error {
		_, err := tx.w.ExecContext(ctx, `UPDATE saml_keys SET status = 'retired', retired_at = $1, publish_until = $2
			WHERE realm_id = $3 AND status = 'active'`, now.UnixMilli(), publishUntil.UnixMilli(), realmID)
		if err != nil {
			return fmt.Errorf("retire SAML key of realm %s: %w", realmID, mapErr(err))
		}
		res, err := tx.w.ExecContext(ctx, `UPDATE saml_keys SET status = 'active', activated_at = $1
			WHERE realm_id = $2 AND id = $3 AND status = 'next'`, now.UnixMilli(), realmID, id)
		if err != nil {
			return fmt.Errorf("activate SAML key %s: %w", id, mapErr(err))
		}
		return affectedOne(res, "next SAML key "+id)
	})
}

// DeleteExpiredSAMLKeys deletes the retired SAML keys of every realm whose
// publish_until is past at now, and says how many.
func (s *Store) DeleteExpiredSAMLKeys(ctx context.Context, now time.Time) (int64, error) {
	res, err := s.w.ExecContext(ctx, "DELETE FROM saml_keys WHERE status = 'retired' AND publish_until <= $1",
		now.UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("delete expired SAML keys: %w", mapErr(err))
	}
	n, err := res.RowsAffected()
	return n, mapErr(err)
}
