package store

import (
	"context"
	"fmt"
)

// SCIMMapping maps a SCIM attribute path of a realm's users to a user
// field or a custom attribute, where SCIM stores and reads its value.
// PathKey is Path's canonical form, unique in the realm; so is Target.
type SCIMMapping struct {
	ID        string
	RealmID   string
	Path      string
	PathKey   string
	Target    string
	CreatedAt int64 // Unix milliseconds
}

const scimMappingColumns = `id, realm_id, path, path_key, target, created_at`

// CreateSCIMMapping stores a new mapping. A path or a target another
// mapping of the realm holds is a ConflictError on "path_key" or "target".
func (s *Store) CreateSCIMMapping(ctx context.Context, m *SCIMMapping) error {
	_, err := s.w.ExecContext(ctx, "INSERT INTO scim_attribute_mappings ("+scimMappingColumns+") VALUES ("+placeholders(6)+")",
		m.ID, m.RealmID, m.Path, m.PathKey, m.Target, m.CreatedAt)
	if err != nil {
		return fmt.Errorf("create SCIM attribute mapping %s: %w", m.Path, mapErr(err))
	}
	return nil
}

// ListSCIMMappings lists a realm's mappings, oldest first (in the order
// written, among those of one millisecond).
func (s *Store) ListSCIMMappings(ctx context.Context, realmID string) ([]*SCIMMapping, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT "+scimMappingColumns+
		" FROM scim_attribute_mappings WHERE realm_id = $1 ORDER BY created_at, rowid", realmID)
	if err != nil {
		return nil, fmt.Errorf("list SCIM attribute mappings: %w", mapErr(err))
	}
	defer rows.Close()
	out := []*SCIMMapping{}
	for rows.Next() {
		var m SCIMMapping
		if err := rows.Scan(&m.ID, &m.RealmID, &m.Path, &m.PathKey, &m.Target, &m.CreatedAt); err != nil {
			return nil, mapErr(err)
		}
		out = append(out, &m)
	}
	return out, mapErr(rows.Err())
}

// DeleteSCIMMapping removes a mapping of a realm; ErrNotFound when the
// realm has none of that ID.
func (s *Store) DeleteSCIMMapping(ctx context.Context, realmID, id string) error {
	res, err := s.w.ExecContext(ctx, "DELETE FROM scim_attribute_mappings WHERE realm_id = $1 AND id = $2", realmID, id)
	if err != nil {
		return fmt.Errorf("delete SCIM attribute mapping %s: %w", id, mapErr(err))
	}
	return affectedOne(res, "SCIM attribute mapping "+id)
}
