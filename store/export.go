package store

import (
	"context"
	"fmt"
)

// Bulk reads for realm export: one query per relation for the whole realm,
// not one per user or group.

// pairs runs a two-column query into a map from the first column to the
// second's values.
func (s *Store) pairs(ctx context.Context, q string, args ...any) (map[string][]string, error) {
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("export: %w", mapErr(err))
	}
	defer rows.Close()
	out := map[string][]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, mapErr(err)
		}
		out[k] = append(out[k], v)
	}
	return out, mapErr(rows.Err())
}

// AllUserRoleMappings maps each user of a realm to the IDs of the roles
// mapped to it directly.
func (s *Store) AllUserRoleMappings(ctx context.Context, realmID string) (map[string][]string, error) {
	return s.pairs(ctx, `SELECT m.user_id, m.role_id FROM user_roles m JOIN users u ON u.id = m.user_id
		WHERE u.realm_id = $1 ORDER BY m.user_id, m.role_id`, realmID)
}

// AllGroupRoleMappings maps each group of a realm to its directly mapped role IDs.
func (s *Store) AllGroupRoleMappings(ctx context.Context, realmID string) (map[string][]string, error) {
	return s.pairs(ctx, `SELECT m.group_id, m.role_id FROM group_roles m JOIN realm_groups g ON g.id = m.group_id
		WHERE g.realm_id = $1 ORDER BY m.group_id, m.role_id`, realmID)
}

// AllComposites maps each composite role of a realm to its children's IDs.
func (s *Store) AllComposites(ctx context.Context, realmID string) (map[string][]string, error) {
	return s.pairs(ctx, `SELECT rc.parent_id, rc.child_id FROM role_composites rc JOIN roles r ON r.id = rc.parent_id
		WHERE r.realm_id = $1 ORDER BY rc.parent_id, rc.child_id`, realmID)
}

// AllScopeLinks maps "<client id> <kind>" to the IDs of the client's scopes
// of that kind, for every client of a realm.
func (s *Store) AllScopeLinks(ctx context.Context, realmID string) (map[string][]string, error) {
	return s.pairs(ctx, `SELECT l.client_id || ' ' || l.kind, l.scope_id FROM client_scope_links l
		JOIN clients c ON c.id = l.client_id WHERE c.realm_id = $1 ORDER BY l.client_id, l.scope_id`, realmID)
}
