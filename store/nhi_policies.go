package store

import (
	"context"
	"database/sql"
	"fmt"
)

// NHIPolicy is a credential policy: how long the credentials of the
// identities that name it may live and when they are due for rotation.
// Durations in seconds; 0 sets no bound.
type NHIPolicy struct {
	ID               string
	RealmID          string
	Name             string
	Description      string
	MaxAge           int64
	RotationInterval int64
	GracePeriod      int64
	WarnBefore       int64
	CreatedAt        int64
}

const nhiPolicyColumns = `id, realm_id, name, description, max_age, rotation_interval, grace_period, warn_before, created_at`

func scanNHIPolicy(row scanner) (*NHIPolicy, error) {
	var p NHIPolicy
	err := row.Scan(&p.ID, &p.RealmID, &p.Name, &p.Description, &p.MaxAge, &p.RotationInterval, &p.GracePeriod,
		&p.WarnBefore, &p.CreatedAt)
	if err != nil {
		return nil, mapErr(err)
	}
	return &p, nil
}

// CreateNHIPolicy stores a new policy; a name taken in the realm is a
// *ConflictError on "name".
func (s *Store) CreateNHIPolicy(ctx context.Context, p *NHIPolicy) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO nhi_credential_policies (`+nhiPolicyColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		p.ID, p.RealmID, p.Name, p.Description, p.MaxAge, p.RotationInterval, p.GracePeriod, p.WarnBefore, p.CreatedAt)
	if err != nil {
		return fmt.Errorf("create credential policy %s: %w", p.Name, mapErr(err))
	}
	return nil
}

// GetNHIPolicy loads one policy of the realm.
func (s *Store) GetNHIPolicy(ctx context.Context, realmID, id string) (*NHIPolicy, error) {
	p, err := scanNHIPolicy(s.r.QueryRowContext(ctx, `SELECT `+nhiPolicyColumns+` FROM nhi_credential_policies
		WHERE realm_id = $1 AND id = $2`, realmID, id))
	if err != nil {
		return nil, fmt.Errorf("credential policy %s: %w", id, err)
	}
	return p, nil
}

// ListNHIPolicies lists the realm's policies by name.
func (s *Store) ListNHIPolicies(ctx context.Context, realmID string) ([]*NHIPolicy, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+nhiPolicyColumns+` FROM nhi_credential_policies
		WHERE realm_id = $1 ORDER BY name`, realmID)
	if err != nil {
		return nil, fmt.Errorf("list credential policies: %w", mapErr(err))
	}
	defer rows.Close()
	var out []*NHIPolicy
	for rows.Next() {
		p, err := scanNHIPolicy(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, mapErr(rows.Err())
}

// UpdateNHIPolicy writes a policy's fields.
func (s *Store) UpdateNHIPolicy(ctx context.Context, p *NHIPolicy) error {
	res, err := s.w.ExecContext(ctx, `UPDATE nhi_credential_policies SET name = $3, description = $4, max_age = $5,
		rotation_interval = $6, grace_period = $7, warn_before = $8 WHERE realm_id = $1 AND id = $2`,
		p.RealmID, p.ID, p.Name, p.Description, p.MaxAge, p.RotationInterval, p.GracePeriod, p.WarnBefore)
	if err != nil {
		return fmt.Errorf("update credential policy %s: %w", p.ID, mapErr(err))
	}
	return affectedOne(res, "credential policy "+p.ID)
}

// DeleteNHIPolicy deletes a policy; the identities that named it name
// none after.
func (s *Store) DeleteNHIPolicy(ctx context.Context, realmID, id string) error {
	return s.Tx(ctx, func(tx *Store) error {
		if _, err := tx.w.ExecContext(ctx, `UPDATE nhi_identities SET policy_id = '' WHERE realm_id = $1 AND policy_id = $2`,
			realmID, id); err != nil {
			return fmt.Errorf("unassign credential policy %s: %w", id, mapErr(err))
		}
		res, err := tx.w.ExecContext(ctx, `DELETE FROM nhi_credential_policies WHERE realm_id = $1 AND id = $2`, realmID, id)
		if err != nil {
			return fmt.Errorf("delete credential policy %s: %w", id, mapErr(err))
		}
		return affectedOne(res, "credential policy "+id)
	})
}

// NHICredentialOf is a credential with its identity, as the rotation
// status and the upkeep job list them.
type NHICredentialOf struct {
	NHICredential
	NHIName           string
	PolicyID          string
	ExpiringNoticedAt int64
	ExpiredNoticedAt  int64
}

// ListWorkingNHICredentials lists the realm's credentials not revoked by
// now, of active or suspended identities, with their identities; with
// policyID, only those of identities that name it. realmID "" lists every
// realm's.
func (s *Store) ListWorkingNHICredentials(ctx context.Context, realmID, policyID string, now int64) ([]*NHICredentialOf, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT c.id, c.realm_id, c.nhi_id, c.type, c.name, c.prefix, c.key_id, c.created_at,
			c.expires_at, c.revoked_at, c.last_used_at, c.replaced_by, c.expiring_noticed_at, c.expired_noticed_at, n.name, n.policy_id
		FROM nhi_credentials c JOIN nhi_identities n ON n.id = c.nhi_id
		WHERE ($1 = '' OR c.realm_id = $1) AND ($2 = '' OR n.policy_id = $2) AND n.state != 'decommissioned'
			AND (c.revoked_at IS NULL OR c.revoked_at > $3)
		ORDER BY n.name, c.created_at, c.id`, realmID, policyID, now)
	if err != nil {
		return nil, fmt.Errorf("list working credentials: %w", mapErr(err))
	}
	defer rows.Close()
	var out []*NHICredentialOf
	for rows.Next() {
		var c NHICredentialOf
		var expires, revoked, used, expiring, expired sql.NullInt64
		if err := rows.Scan(&c.ID, &c.RealmID, &c.NHIID, &c.Type, &c.Name, &c.Prefix, &c.KeyID, &c.CreatedAt, &expires,
			&revoked, &used, &c.ReplacedBy, &expiring, &expired, &c.NHIName, &c.PolicyID); err != nil {
			return nil, mapErr(err)
		}
		c.ExpiresAt, c.RevokedAt, c.LastUsedAt = expires.Int64, revoked.Int64, used.Int64
		c.ExpiringNoticedAt, c.ExpiredNoticedAt = expiring.Int64, expired.Int64
		out = append(out, &c)
	}
	return out, mapErr(rows.Err())
}

// The upkeep job's statements on credentials. None ends a token: a token
// stands while its credential is not revoked, whatever the credential's
// own expiry (credentialKeepers).
const (
	noticeExpiringSQL      = `UPDATE nhi_credentials SET expiring_noticed_at = $2 WHERE id = $1 AND expiring_noticed_at IS NULL`
	noticeExpiredSQL       = `UPDATE nhi_credentials SET expired_noticed_at = $2 WHERE id = $1 AND expired_noticed_at IS NULL`
	expireNHICredentialSQL = `UPDATE nhi_credentials SET expires_at = $2
		WHERE id = $1 AND (expires_at IS NULL OR expires_at > $2)`
)

// NoticeNHICredential records that the upkeep job announced the
// credential expiring (expired false) or expired, at at; it answers
// false when that was already announced, so that each is announced once.
func (s *Store) NoticeNHICredential(ctx context.Context, id string, expired bool, at int64) (bool, error) {
	q := noticeExpiringSQL
	if expired {
		q = noticeExpiredSQL
	}
	res, err := s.w.ExecContext(ctx, q, id, at)
	if err != nil {
		return false, fmt.Errorf("notice credential %s: %w", id, mapErr(err))
	}
	n, err := res.RowsAffected()
	return n == 1, mapErr(err)
}

// ExpireNHICredential brings the credential's expiry forward to at, as a
// policy's maximum age does; a credential expiring earlier keeps its own.
func (s *Store) ExpireNHICredential(ctx context.Context, id string, at int64) error {
	_, err := s.w.ExecContext(ctx, expireNHICredentialSQL, id, at)
	if err != nil {
		return fmt.Errorf("expire credential %s: %w", id, mapErr(err))
	}
	return nil
}
