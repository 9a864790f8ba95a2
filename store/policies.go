package store

import (
	"context"
	"fmt"
)

// A realm's authorization policies (app/policies) and its policy
// settings, as the module's JSON.

// AuthzPolicy is an authorization policy of a realm. ResourceTypes and
// Actions are JSON arrays of strings; Expression is its CEL condition,
// which the store does not read.
type AuthzPolicy struct {
	ID            string
	RealmID       string
	Name          string // unique in the realm
	Description   string
	Enabled       bool
	Effect        string // permit, deny
	ResourceTypes string
	Actions       string
	Expression    string
	CreatedAt     int64 // Unix milliseconds
	UpdatedAt     int64
}

const authzPolicyColumns = `id, realm_id, name, description, enabled, effect, resource_types, actions, expression, created_at, updated_at`

func scanAuthzPolicy(row scanner) (*AuthzPolicy, error) {
	var p AuthzPolicy
	err := row.Scan(&p.ID, &p.RealmID, &p.Name, &p.Description, &p.Enabled, &p.Effect, &p.ResourceTypes, &p.Actions,
		&p.Expression, &p.CreatedAt, &p.UpdatedAt)
	if err != nil {
		return nil, mapErr(err)
	}
	return &p, nil
}

// CreateAuthzPolicy stores a new policy; a name the realm has is a
// *ConflictError on "name", an ID another realm's policy has one on "id".
func (s *Store) CreateAuthzPolicy(ctx context.Context, p *AuthzPolicy) error {
	_, err := s.w.ExecContext(ctx, "INSERT INTO authz_policies ("+authzPolicyColumns+") VALUES ("+placeholders(11)+")",
		p.ID, p.RealmID, p.Name, p.Description, p.Enabled, p.Effect, p.ResourceTypes, p.Actions, p.Expression, p.CreatedAt, p.UpdatedAt)
	if err != nil {
		return fmt.Errorf("create authorization policy %s: %w", p.Name, mapErr(err))
	}
	return nil
}

// GetAuthzPolicy finds a policy of the realm.
func (s *Store) GetAuthzPolicy(ctx context.Context, realmID, id string) (*AuthzPolicy, error) {
	p, err := scanAuthzPolicy(s.r.QueryRowContext(ctx, "SELECT "+authzPolicyColumns+" FROM authz_policies WHERE realm_id = $1 AND id = $2",
		realmID, id))
	if err != nil {
		return nil, fmt.Errorf("authorization policy %s: %w", id, err)
	}
	return p, nil
}

// ListAuthzPolicies lists the realm's policies by name.
func (s *Store) ListAuthzPolicies(ctx context.Context, realmID string) ([]*AuthzPolicy, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT "+authzPolicyColumns+" FROM authz_policies WHERE realm_id = $1 ORDER BY name, id", realmID)
	if err != nil {
		return nil, fmt.Errorf("list authorization policies: %w", mapErr(err))
	}
	defer rows.Close()
	out := []*AuthzPolicy{}
	for rows.Next() {
		p, err := scanAuthzPolicy(rows)
		if err != nil {
			return nil, fmt.Errorf("list authorization policies: %w", err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list authorization policies: %w", mapErr(err))
	}
	return out, nil
}

// CountAuthzPolicies counts the realm's policies.
func (s *Store) CountAuthzPolicies(ctx context.Context, realmID string) (int, error) {
	var n int
	if err := s.r.QueryRowContext(ctx, "SELECT COUNT(*) FROM authz_policies WHERE realm_id = $1", realmID).Scan(&n); err != nil {
		return 0, fmt.Errorf("count authorization policies: %w", mapErr(err))
	}
	return n, nil
}

// UpdateAuthzPolicy writes every field of p but its realm and creation
// time; ErrNotFound when the realm has no such policy.
func (s *Store) UpdateAuthzPolicy(ctx context.Context, p *AuthzPolicy) error {
	res, err := s.w.ExecContext(ctx, `UPDATE authz_policies SET name = $3, description = $4, enabled = $5, effect = $6,
		resource_types = $7, actions = $8, expression = $9, updated_at = $10 WHERE realm_id = $1 AND id = $2`,
		p.RealmID, p.ID, p.Name, p.Description, p.Enabled, p.Effect, p.ResourceTypes, p.Actions, p.Expression, p.UpdatedAt)
	n, err := rowsAffected(res, err, "update authorization policy "+p.ID)
	if err == nil && n == 0 {
		err = fmt.Errorf("authorization policy %s: %w", p.ID, ErrNotFound)
	}
	return err
}

// DeleteAuthzPolicy deletes a policy of the realm.
func (s *Store) DeleteAuthzPolicy(ctx context.Context, realmID, id string) error {
	res, err := s.w.ExecContext(ctx, "DELETE FROM authz_policies WHERE realm_id = $1 AND id = $2", realmID, id)
	n, err := rowsAffected(res, err, "delete authorization policy "+id)
	if err == nil && n == 0 {
		err = fmt.Errorf("authorization policy %s: %w", id, ErrNotFound)
	}
	return err
}

// AuthzPolicySettings answers the realm's policy settings; ErrNotFound
// when it keeps the defaults.
func (s *Store) AuthzPolicySettings(ctx context.Context, realmID string) (string, error) {
	var v string
	err := s.r.QueryRowContext(ctx, "SELECT settings FROM authz_policy_settings WHERE realm_id = $1", realmID).Scan(&v)
	if err != nil {
		return "", fmt.Errorf("authorization policy settings: %w", mapErr(err))
	}
	return v, nil
}

// PutAuthzPolicySettings replaces the realm's policy settings.
func (s *Store) PutAuthzPolicySettings(ctx context.Context, realmID, settings string, now int64) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO authz_policy_settings (realm_id, settings, updated_at) VALUES ($1, $2, $3)
		ON CONFLICT (realm_id) DO UPDATE SET settings = excluded.settings, updated_at = excluded.updated_at`, realmID, settings, now)
	if err != nil {
		return fmt.Errorf("authorization policy settings: %w", mapErr(err))
	}
	return nil
}
