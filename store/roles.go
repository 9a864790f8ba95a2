package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Role is a realm role (ClientID empty) or a client role.
type Role struct {
	ID          string
	RealmID     string
	ClientID    string // internal ID of the owning client; empty for realm roles
	Name        string
	Description string
	CreatedAt   int64
	// Read-only, filled by queries:
	ClientClientID string // the owning client's public clientId
	Composite      bool   // the role includes other roles
}

// roleColumns reads roles (alias r, their client c) with the client's
// public ID and whether they are composite.
const roleColumns = `SELECT r.id, r.realm_id, r.client_id, r.name, r.description, r.created_at,
	coalesce(c.client_id, ''), EXISTS (SELECT 1 FROM role_composites rc WHERE rc.parent_id = r.id) `

// roleSelect reads roles; callers add joins and conditions after it.
const roleSelect = roleColumns + "FROM roles r LEFT JOIN clients c ON c.id = r.client_id "

// roleOrder lists realm roles first, then client roles by clientId. The
// coalesce keeps that order on every backend: SQLite sorts NULLs first,
// PostgreSQL last.
const roleOrder = " ORDER BY coalesce(c.client_id, ''), r.name"

func scanRole(row scanner) (*Role, error) {
	var r Role
	var clientID sql.NullString
	if err := row.Scan(&r.ID, &r.RealmID, &clientID, &r.Name, &r.Description, &r.CreatedAt,
		&r.ClientClientID, &r.Composite); err != nil {
		return nil, mapErr(err)
	}
	r.ClientID = clientID.String
	return &r, nil
}

func (s *Store) queryRoles(ctx context.Context, q string, args ...any) ([]*Role, error) {
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list roles: %w", mapErr(err))
	}
	defer rows.Close()
	var out []*Role
	for rows.Next() {
		r, err := scanRole(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, mapErr(rows.Err())
}

// CreateRole inserts r; a name taken in its realm or client is ErrConflict.
func (s *Store) CreateRole(ctx context.Context, r *Role) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO roles (id, realm_id, client_id, name, description, created_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, r.ID, r.RealmID, nullString(r.ClientID), r.Name, r.Description, r.CreatedAt)
	if err != nil {
		return fmt.Errorf("create role %s: %w", r.Name, mapErr(err))
	}
	return nil
}

// GetRole finds a realm role (clientID "") or a client role by name.
func (s *Store) GetRole(ctx context.Context, realmID, clientID, name string) (*Role, error) {
	q, args := roleSelect+"WHERE r.realm_id = $1 AND r.client_id IS NULL AND r.name = $2", []any{realmID, name}
	if clientID != "" {
		q, args = roleSelect+"WHERE r.realm_id = $1 AND r.client_id = $2 AND r.name = $3", []any{realmID, clientID, name}
	}
	r, err := scanRole(s.r.QueryRowContext(ctx, q, args...))
	if err != nil {
		return nil, fmt.Errorf("role %s: %w", name, err)
	}
	return r, nil
}

// GetRoleByID finds a role by its ID.
func (s *Store) GetRoleByID(ctx context.Context, realmID, id string) (*Role, error) {
	r, err := scanRole(s.r.QueryRowContext(ctx, roleSelect+"WHERE r.realm_id = $1 AND r.id = $2", realmID, id))
	if err != nil {
		return nil, fmt.Errorf("role %s: %w", id, err)
	}
	return r, nil
}

// ListRoles lists a realm's roles (clientID "") or a client's, by name.
func (s *Store) ListRoles(ctx context.Context, realmID, clientID string) ([]*Role, error) {
	if clientID == "" {
		return s.queryRoles(ctx, roleSelect+"WHERE r.realm_id = $1 AND r.client_id IS NULL ORDER BY r.name", realmID)
	}
	return s.queryRoles(ctx, roleSelect+"WHERE r.realm_id = $1 AND r.client_id = $2 ORDER BY r.name", realmID, clientID)
}

// ListAllRoles lists every realm and client role of a realm, for export.
func (s *Store) ListAllRoles(ctx context.Context, realmID string) ([]*Role, error) {
	return s.queryRoles(ctx, roleSelect+"WHERE r.realm_id = $1"+roleOrder, realmID)
}

// rolesByNameChunk bounds the placeholders of one RolesByName query, well
// under the limits of SQLite (32,766) and PostgreSQL (65,535).
const rolesByNameChunk = 500

// RolesByName resolves names to roles of a realm (clientID "") or client,
// in the order first named, and returns the names that match no role.
func (s *Store) RolesByName(ctx context.Context, realmID, clientID string, names []string) ([]*Role, []string, error) {
	var unique []string
	seen := map[string]bool{}
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			unique = append(unique, n)
		}
	}
	byName := make(map[string]*Role, len(unique))
	for chunk := range slices.Chunk(unique, rolesByNameChunk) {
		q, args := roleSelect+"WHERE r.realm_id = $1 AND r.client_id IS NULL", []any{realmID}
		if clientID != "" {
			q, args = roleSelect+"WHERE r.realm_id = $1 AND r.client_id = $2", []any{realmID, clientID}
		}
		marks := make([]string, len(chunk))
		for i, n := range chunk {
			args = append(args, n)
			marks[i] = fmt.Sprintf("$%d", len(args))
		}
		roles, err := s.queryRoles(ctx, q+" AND r.name IN ("+strings.Join(marks, ", ")+")", args...)
		if err != nil {
			return nil, nil, err
		}
		for _, r := range roles {
			byName[r.Name] = r
		}
	}
	var found []*Role
	var missing []string
	for _, n := range unique {
		if r, ok := byName[n]; ok {
			found = append(found, r)
		} else {
			missing = append(missing, n)
		}
	}
	return found, missing, nil
}

// UpdateRole writes a role's name and description.
func (s *Store) UpdateRole(ctx context.Context, r *Role) error {
	res, err := s.w.ExecContext(ctx, "UPDATE roles SET name = $1, description = $2 WHERE realm_id = $3 AND id = $4",
		r.Name, r.Description, r.RealmID, r.ID)
	if err != nil {
		return fmt.Errorf("update role %s: %w", r.Name, mapErr(err))
	}
	return affectedOne(res, "role "+r.Name)
}

// DeleteRole removes a role and every mapping and composite link to it.
func (s *Store) DeleteRole(ctx context.Context, realmID, id string) error {
	res, err := s.w.ExecContext(ctx, "DELETE FROM roles WHERE realm_id = $1 AND id = $2", realmID, id)
	if err != nil {
		return fmt.Errorf("delete role %s: %w", id, mapErr(err))
	}
	return affectedOne(res, "role "+id)
}

// ErrCycle: the change would make a role include itself, or a group its own
// ancestor.
var ErrCycle = errors.New("would create a cycle")

// AddComposites makes parent include children. A child that already
// includes parent, directly or not, is ErrCycle and nothing is added.
func (s *Store) AddComposites(ctx context.Context, parentID string, childIDs []string) error {
	return s.Tx(ctx, func(tx *Store) error {
		for _, child := range childIDs {
			if child == parentID {
				return fmt.Errorf("role includes itself: %w", ErrCycle)
			}
			var n int
			// Seeded from the table rather than "SELECT $1" so PostgreSQL
			// knows the column's type.
			err := tx.w.QueryRowContext(ctx, `WITH RECURSIVE below(id) AS (
					SELECT id FROM roles WHERE id = $1
					UNION SELECT rc.child_id FROM role_composites rc JOIN below ON rc.parent_id = below.id)
				SELECT count(*) FROM below WHERE id = $2`, child, parentID).Scan(&n)
			if err != nil {
				return mapErr(err)
			}
			if n > 0 {
				return fmt.Errorf("role %s already includes the parent: %w", child, ErrCycle)
			}
			if _, err := tx.w.ExecContext(ctx, `INSERT INTO role_composites (parent_id, child_id) VALUES ($1, $2)
				ON CONFLICT DO NOTHING`, parentID, child); err != nil {
				return fmt.Errorf("add composite: %w", mapErr(err))
			}
		}
		return nil
	})
}

// RemoveComposites makes parent stop including children.
func (s *Store) RemoveComposites(ctx context.Context, parentID string, childIDs []string) error {
	return s.Tx(ctx, func(tx *Store) error {
		for _, child := range childIDs {
			if _, err := tx.w.ExecContext(ctx, "DELETE FROM role_composites WHERE parent_id = $1 AND child_id = $2",
				parentID, child); err != nil {
				return fmt.Errorf("remove composite: %w", mapErr(err))
			}
		}
		return nil
	})
}

// ListComposites lists the roles a role includes directly.
func (s *Store) ListComposites(ctx context.Context, parentID string) ([]*Role, error) {
	return s.queryRoles(ctx, roleSelect+"JOIN role_composites rc ON rc.child_id = r.id WHERE rc.parent_id = $1"+roleOrder, parentID)
}

// RoleHolder names whose roles a mapping call changes: a user or a group.
type RoleHolder struct {
	table, column, id string
}

// UserRoles and GroupRoles address the role mappings of a user or a group.
func UserRoles(userID string) RoleHolder   { return RoleHolder{"user_roles", "user_id", userID} }
func GroupRoles(groupID string) RoleHolder { return RoleHolder{"group_roles", "group_id", groupID} }

// AddRoleMappings maps roles to the holder; mapping a role twice is a no-op.
func (s *Store) AddRoleMappings(ctx context.Context, h RoleHolder, roleIDs []string) error {
	return s.Tx(ctx, func(tx *Store) error {
		for _, id := range roleIDs {
			_, err := tx.w.ExecContext(ctx, "INSERT INTO "+h.table+" ("+h.column+", role_id) VALUES ($1, $2) ON CONFLICT DO NOTHING", h.id, id)
			if err != nil {
				return fmt.Errorf("map role: %w", mapErr(err))
			}
		}
		return nil
	})
}

// RemoveRoleMappings unmaps roles; unmapping one not mapped is a no-op.
func (s *Store) RemoveRoleMappings(ctx context.Context, h RoleHolder, roleIDs []string) error {
	return s.Tx(ctx, func(tx *Store) error {
		for _, id := range roleIDs {
			if _, err := tx.w.ExecContext(ctx, "DELETE FROM "+h.table+" WHERE "+h.column+" = $1 AND role_id = $2", h.id, id); err != nil {
				return fmt.Errorf("unmap role: %w", mapErr(err))
			}
		}
		return nil
	})
}

// ListRoleMappings lists the roles mapped directly to the holder: realm
// roles (clientID ""), one client's roles, or all of them (clientID "*").
func (s *Store) ListRoleMappings(ctx context.Context, h RoleHolder, clientID string) ([]*Role, error) {
	q := roleSelect + "JOIN " + h.table + " m ON m.role_id = r.id WHERE m." + h.column + " = $1"
	args := []any{h.id}
	switch clientID {
	case "*":
	case "":
		q += " AND r.client_id IS NULL"
	default:
		q += " AND r.client_id = $2"
		args = append(args, clientID)
	}
	return s.queryRoles(ctx, q+roleOrder, args...)
}

// EffectiveRoles is every role a user holds: mapped directly, through
// each group and its ancestors, and through composites, transitively.
func (s *Store) EffectiveRoles(ctx context.Context, userID string) ([]*Role, error) {
	return s.effectiveRoles(ctx, "SELECT group_id FROM group_members WHERE user_id = $1",
		"SELECT role_id FROM user_roles WHERE user_id = $1", userID)
}

// EffectiveGroupRoles is every role a group gives its members: mapped to it
// or to one of its ancestors, and through composites, transitively.
func (s *Store) EffectiveGroupRoles(ctx context.Context, groupID string) ([]*Role, error) {
	// The role seed repeats what the group seed brings in; UNION drops it.
	return s.effectiveRoles(ctx, "SELECT id FROM realm_groups WHERE id = $1",
		"SELECT role_id FROM group_roles WHERE group_id = $1", groupID)
}

// effectiveRoles closes a set of groups over their ancestors and a set of
// roles over the groups' mappings and composites. UNION (not UNION ALL)
// drops repeats, so the recursion stops even on a cycle. CROSS JOIN makes
// SQLite read the few holder groups first and seek their mappings, rather
// than scan every group mapping of the database; to PostgreSQL it is a
// plain join.
func (s *Store) effectiveRoles(ctx context.Context, seedGroups, seedRoles, id string) ([]*Role, error) {
	return s.queryRoles(ctx, `WITH RECURSIVE
		holder_groups(id) AS (
			`+seedGroups+`
			UNION SELECT g.parent_id FROM realm_groups g JOIN holder_groups hg ON g.id = hg.id WHERE g.parent_id IS NOT NULL),
		held(id) AS (
			`+seedRoles+`
			UNION SELECT gr.role_id FROM holder_groups hg CROSS JOIN group_roles gr WHERE gr.group_id = hg.id
			UNION SELECT rc.child_id FROM role_composites rc JOIN held ON rc.parent_id = held.id)
		`+roleColumns+"FROM held JOIN roles r ON r.id = held.id LEFT JOIN clients c ON c.id = r.client_id"+roleOrder, id)
}
