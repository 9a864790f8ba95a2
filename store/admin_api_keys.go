package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
)

// AdminAPIKey is a named admin API key. Its secret is never stored:
// SecretHash is the SHA-256 of the whole key, and PreviousHash that of the
// secret a rotation replaced, which works until PreviousUntil.
type AdminAPIKey struct {
	ID          string
	Name        string
	SecretHash  []byte
	Prefix      string   // shown in lists: which secret is current
	Permissions []string // permission names, or ["all"]
	RealmID     string   // the one realm whose routes it acts on; "" for any
	ExpiresAt   int64    // Unix milliseconds; 0 for never
	CreatedAt   int64
	CreatedBy   string // who made it: "user:<name>", "api-key:<name>", ...
	LastUsedAt  int64  // 0 when never used
	RevokedAt   int64  // 0 while not revoked
	RotatedAt   int64  // 0 when never rotated
	// PreviousHash is the SHA-256 of the secret the last rotation
	// replaced, nil when none works any more.
	PreviousHash  []byte
	PreviousUntil int64 // Unix milliseconds
}

const adminAPIKeyColumns = `id, name, secret_hash, prefix, permissions, realm_id, expires_at, created_at, created_by,
	last_used_at, revoked_at, rotated_at, previous_secret_hash, previous_valid_until`

func scanAdminAPIKey(row scanner) (*AdminAPIKey, error) {
	var k AdminAPIKey
	var perms string
	var realm sql.NullString
	err := row.Scan(&k.ID, &k.Name, &k.SecretHash, &k.Prefix, &perms, &realm, &k.ExpiresAt, &k.CreatedAt, &k.CreatedBy,
		&k.LastUsedAt, &k.RevokedAt, &k.RotatedAt, &k.PreviousHash, &k.PreviousUntil)
	if err != nil {
		return nil, mapErr(err)
	}
	k.RealmID = realm.String
	if err := json.Unmarshal([]byte(perms), &k.Permissions); err != nil {
		return nil, fmt.Errorf("decode permissions of admin API key %s: %w", k.ID, err)
	}
	return &k, nil
}

// CreateAdminAPIKey stores a new key. A name another key holds is a
// ConflictError on "name"; an unknown realm is ErrNotFound.
func (s *Store) CreateAdminAPIKey(ctx context.Context, k *AdminAPIKey) error {
	_, err := s.w.ExecContext(ctx, "INSERT INTO admin_api_keys ("+adminAPIKeyColumns+") VALUES ("+placeholders(14)+")",
		k.ID, k.Name, k.SecretHash, k.Prefix, jsonList(k.Permissions), nullString(k.RealmID), k.ExpiresAt, k.CreatedAt,
		k.CreatedBy, k.LastUsedAt, k.RevokedAt, k.RotatedAt, k.PreviousHash, k.PreviousUntil)
	if err != nil {
		return fmt.Errorf("create admin API key %s: %w", k.Name, mapErr(err))
	}
	return nil
}

// GetAdminAPIKey finds a key by ID.
func (s *Store) GetAdminAPIKey(ctx context.Context, id string) (*AdminAPIKey, error) {
	k, err := scanAdminAPIKey(s.r.QueryRowContext(ctx, "SELECT "+adminAPIKeyColumns+" FROM admin_api_keys WHERE id = $1", id))
	if err != nil {
		return nil, fmt.Errorf("admin API key %s: %w", id, err)
	}
	return k, nil
}

// ListAdminAPIKeys lists every key by name.
func (s *Store) ListAdminAPIKeys(ctx context.Context) ([]*AdminAPIKey, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT "+adminAPIKeyColumns+" FROM admin_api_keys ORDER BY name, id")
	if err != nil {
		return nil, fmt.Errorf("list admin API keys: %w", mapErr(err))
	}
	defer rows.Close()
	out := []*AdminAPIKey{}
	for rows.Next() {
		k, err := scanAdminAPIKey(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, mapErr(rows.Err())
}

// RotateAdminAPIKey gives a key that is not revoked a new secret at now;
// the one it had keeps working until previousUntil (nothing keeps working
// when previousUntil is not after now). A revoked or unknown key is
// ErrNotFound.
func (s *Store) RotateAdminAPIKey(ctx context.Context, id string, hash []byte, prefix string, now, previousUntil int64) error {
	res, err := s.w.ExecContext(ctx, `UPDATE admin_api_keys SET
		previous_secret_hash = CASE WHEN CAST($5 AS BIGINT) > CAST($4 AS BIGINT) THEN secret_hash ELSE NULL END,
		previous_valid_until = CASE WHEN CAST($5 AS BIGINT) > CAST($4 AS BIGINT) THEN CAST($5 AS BIGINT) ELSE 0 END,
		secret_hash = $2, prefix = $3, rotated_at = $4
		WHERE id = $1 AND revoked_at = 0`, id, hash, prefix, now, previousUntil)
	if err != nil {
		return fmt.Errorf("rotate admin API key %s: %w", id, mapErr(err))
	}
	return affectedOne(res, "admin API key "+id)
}

// RevokeAdminAPIKey makes a key stop working at now, its previous secret
// too; revoking it again keeps the first time.
func (s *Store) RevokeAdminAPIKey(ctx context.Context, id string, now int64) error {
	res, err := s.w.ExecContext(ctx, `UPDATE admin_api_keys SET revoked_at = CASE WHEN revoked_at = 0 THEN $2 ELSE revoked_at END,
		previous_secret_hash = NULL, previous_valid_until = 0 WHERE id = $1`, id, now)
	if err != nil {
		return fmt.Errorf("revoke admin API key %s: %w", id, mapErr(err))
	}
	return affectedOne(res, "admin API key "+id)
}

// TouchAdminAPIKey records a use of a key at now.
func (s *Store) TouchAdminAPIKey(ctx context.Context, id string, now int64) error {
	_, err := s.w.ExecContext(ctx, "UPDATE admin_api_keys SET last_used_at = $2 WHERE id = $1", id, now)
	if err != nil {
		return fmt.Errorf("record use of admin API key %s: %w", id, mapErr(err))
	}
	return nil
}
