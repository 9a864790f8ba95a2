package store

import (
	"context"
	"database/sql"
	"fmt"
)

// SCIMToken is a realm's SCIM provisioning token. Its secret is never
// stored: SecretHash is the SHA-256 of it.
type SCIMToken struct {
	ID         string
	RealmID    string
	Name       string
	SecretHash []byte
	Enabled    bool
	RevokedAt  int64 // Unix milliseconds; 0 while not revoked
	ExpiresAt  int64 // Unix milliseconds; 0 for no expiry
	CreatedAt  int64
	LastUsedAt int64 // 0 when never used
	UseCount   int64
}

const scimTokenColumns = `id, realm_id, name, secret_hash, enabled, revoked_at, expires_at, created_at, last_used_at, use_count`

func scanSCIMToken(row scanner) (*SCIMToken, error) {
	var t SCIMToken
	var revoked, expires, used sql.NullInt64
	err := row.Scan(&t.ID, &t.RealmID, &t.Name, &t.SecretHash, &t.Enabled, &revoked, &expires, &t.CreatedAt, &used, &t.UseCount)
	if err != nil {
		return nil, mapErr(err)
	}
	t.RevokedAt, t.ExpiresAt, t.LastUsedAt = revoked.Int64, expires.Int64, used.Int64
	return &t, nil
}

// CreateSCIMToken stores a new token. A name another token of the realm
// holds is a ConflictError on "name".
func (s *Store) CreateSCIMToken(ctx context.Context, t *SCIMToken) error {
	_, err := s.w.ExecContext(ctx, "INSERT INTO scim_tokens ("+scimTokenColumns+") VALUES ("+placeholders(10)+")",
		t.ID, t.RealmID, t.Name, t.SecretHash, t.Enabled, nullInt(t.RevokedAt), nullInt(t.ExpiresAt), t.CreatedAt,
		nullInt(t.LastUsedAt), t.UseCount)
	if err != nil {
		return fmt.Errorf("create SCIM token %s: %w", t.Name, mapErr(err))
	}
	return nil
}

// GetSCIMToken finds a token of a realm by ID.
func (s *Store) GetSCIMToken(ctx context.Context, realmID, id string) (*SCIMToken, error) {
	t, err := scanSCIMToken(s.r.QueryRowContext(ctx,
		"SELECT "+scimTokenColumns+" FROM scim_tokens WHERE realm_id = $1 AND id = $2", realmID, id))
	if err != nil {
		return nil, fmt.Errorf("SCIM token %s: %w", id, err)
	}
	return t, nil
}

// SCIMTokenByID finds a token by ID whatever its realm: a SCIM request
// names its token, and the realm is checked after the secret.
func (s *Store) SCIMTokenByID(ctx context.Context, id string) (*SCIMToken, error) {
	t, err := scanSCIMToken(s.r.QueryRowContext(ctx, "SELECT "+scimTokenColumns+" FROM scim_tokens WHERE id = $1", id))
	if err != nil {
		return nil, fmt.Errorf("SCIM token %s: %w", id, err)
	}
	return t, nil
}

// ListSCIMTokens lists a realm's tokens by name.
func (s *Store) ListSCIMTokens(ctx context.Context, realmID string) ([]*SCIMToken, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT "+scimTokenColumns+" FROM scim_tokens WHERE realm_id = $1 ORDER BY name, id", realmID)
	if err != nil {
		return nil, fmt.Errorf("list SCIM tokens: %w", mapErr(err))
	}
	defer rows.Close()
	out := []*SCIMToken{}
	for rows.Next() {
		t, err := scanSCIMToken(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, mapErr(rows.Err())
}

// SetSCIMTokenEnabled enables or disables a token that is not revoked; a
// revoked or unknown token is ErrNotFound.
func (s *Store) SetSCIMTokenEnabled(ctx context.Context, realmID, id string, enabled bool) error {
	res, err := s.w.ExecContext(ctx, "UPDATE scim_tokens SET enabled = $1 WHERE realm_id = $2 AND id = $3 AND revoked_at IS NULL",
		enabled, realmID, id)
	if err != nil {
		return fmt.Errorf("enable SCIM token %s: %w", id, mapErr(err))
	}
	return affectedOne(res, "SCIM token "+id)
}

// RevokeSCIMToken revokes a token for good, at now; revoking it again
// keeps the first time.
func (s *Store) RevokeSCIMToken(ctx context.Context, realmID, id string, now int64) error {
	res, err := s.w.ExecContext(ctx, `UPDATE scim_tokens SET enabled = FALSE, revoked_at = coalesce(revoked_at, $1)
		WHERE realm_id = $2 AND id = $3`, now, realmID, id)
	if err != nil {
		return fmt.Errorf("revoke SCIM token %s: %w", id, mapErr(err))
	}
	return affectedOne(res, "SCIM token "+id)
}

// DeleteSCIMToken removes a token.
func (s *Store) DeleteSCIMToken(ctx context.Context, realmID, id string) error {
	res, err := s.w.ExecContext(ctx, "DELETE FROM scim_tokens WHERE realm_id = $1 AND id = $2", realmID, id)
	if err != nil {
		return fmt.Errorf("delete SCIM token %s: %w", id, mapErr(err))
	}
	return affectedOne(res, "SCIM token "+id)
}

// TouchSCIMToken records a use of a token at now.
func (s *Store) TouchSCIMToken(ctx context.Context, id string, now int64) error {
	res, err := s.w.ExecContext(ctx, "UPDATE scim_tokens SET last_used_at = $1, use_count = use_count + 1 WHERE id = $2", now, id)
	if err != nil {
		return fmt.Errorf("record use of SCIM token %s: %w", id, mapErr(err))
	}
	return affectedOne(res, "SCIM token "+id)
}
