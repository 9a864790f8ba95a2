package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// Group is a node of a realm's group tree.
type Group struct {
	ID          string
	RealmID     string
	ParentID    string // empty for a top-level group
	Name        string
	Description string
	CreatedAt   int64
}

const groupColumns = "id, realm_id, parent_id, name, description, created_at"

func scanGroup(row scanner) (*Group, error) {
	var g Group
	var parent sql.NullString
	if err := row.Scan(&g.ID, &g.RealmID, &parent, &g.Name, &g.Description, &g.CreatedAt); err != nil {
		return nil, mapErr(err)
	}
	g.ParentID = parent.String
	return &g, nil
}

func (s *Store) queryGroups(ctx context.Context, q string, args ...any) ([]*Group, error) {
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list groups: %w", mapErr(err))
	}
	defer rows.Close()
	var out []*Group
	for rows.Next() {
		g, err := scanGroup(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, mapErr(rows.Err())
}

// CreateGroup inserts g; a name taken among its siblings is ErrConflict,
// a parent that is not a group of the same realm ErrNotFound.
func (s *Store) CreateGroup(ctx context.Context, g *Group) error {
	return s.Tx(ctx, func(tx *Store) error {
		if g.ParentID != "" {
			// The foreign key alone would accept a parent from another realm.
			if _, err := tx.GetGroup(ctx, g.RealmID, g.ParentID); err != nil {
				return fmt.Errorf("create group %s: parent %w", g.Name, err)
			}
		}
		_, err := tx.w.ExecContext(ctx, "INSERT INTO realm_groups ("+groupColumns+", name_fold) VALUES ($1, $2, $3, $4, $5, $6, $7)",
			g.ID, g.RealmID, nullString(g.ParentID), g.Name, g.Description, g.CreatedAt, FoldCase(g.Name))
		if err != nil {
			return fmt.Errorf("create group %s: %w", g.Name, mapErr(err))
		}
		return nil
	})
}

// GetGroup finds a group of a realm by ID.
func (s *Store) GetGroup(ctx context.Context, realmID, id string) (*Group, error) {
	g, err := scanGroup(s.r.QueryRowContext(ctx,
		"SELECT "+groupColumns+" FROM realm_groups WHERE realm_id = $1 AND id = $2", realmID, id))
	if err != nil {
		return nil, fmt.Errorf("group %s: %w", id, err)
	}
	return g, nil
}

// ListGroups returns every group of a realm, flat, ordered by name; callers
// build the tree.
func (s *Store) ListGroups(ctx context.Context, realmID string) ([]*Group, error) {
	return s.queryGroups(ctx, "SELECT "+groupColumns+" FROM realm_groups WHERE realm_id = $1 ORDER BY name, id", realmID)
}

// groupAncestors is a recursive CTE, "up", of the groups whose IDs the
// caller's condition on realm_groups g selects, and all their ancestors.
const groupAncestors = `up(id, parent_id) AS (
		SELECT g.id, g.parent_id FROM realm_groups g WHERE g.realm_id = $1 AND %s
		UNION SELECT g.id, g.parent_id FROM realm_groups g JOIN up ON g.id = up.parent_id)`

// GroupAncestry returns the given groups of a realm with all their
// ancestors, in name order: enough to build their paths in one query.
// Unknown IDs are left out.
func (s *Store) GroupAncestry(ctx context.Context, realmID string, ids ...string) ([]*Group, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	args := []any{realmID}
	marks := make([]string, len(ids))
	for i, id := range ids {
		args = append(args, id)
		marks[i] = fmt.Sprintf("$%d", i+2)
	}
	cond := "g.id IN (" + strings.Join(marks, ", ") + ")"
	return s.queryGroups(ctx, "WITH RECURSIVE "+fmt.Sprintf(groupAncestors, cond)+`
		SELECT `+groupColumns+` FROM realm_groups WHERE id IN (SELECT id FROM up) ORDER BY name, id`, args...)
}

// GroupFamily returns a group of a realm with its ancestors and all its
// descendants, in name order: its path and subgroup tree in one query.
// An unknown group gives an empty list.
func (s *Store) GroupFamily(ctx context.Context, realmID, id string) ([]*Group, error) {
	return s.queryGroups(ctx, "WITH RECURSIVE "+fmt.Sprintf(groupAncestors, "g.id = $2")+`,
		down(id) AS (
			SELECT g.id FROM realm_groups g WHERE g.realm_id = $1 AND g.id = $2
			UNION SELECT g.id FROM realm_groups g JOIN down ON g.parent_id = down.id)
		SELECT `+groupColumns+` FROM realm_groups
		WHERE id IN (SELECT id FROM up) OR id IN (SELECT id FROM down) ORDER BY name, id`, realmID, id)
}

// UpdateGroup writes a group's name and description.
func (s *Store) UpdateGroup(ctx context.Context, g *Group) error {
	res, err := s.w.ExecContext(ctx, "UPDATE realm_groups SET name = $1, description = $2, name_fold = $5 WHERE realm_id = $3 AND id = $4",
		g.Name, g.Description, g.RealmID, g.ID, FoldCase(g.Name))
	if err != nil {
		return fmt.Errorf("update group %s: %w", g.Name, mapErr(err))
	}
	return affectedOne(res, "group "+g.ID)
}

// MoveGroup gives a group a new parent (empty: top level). Moving a group
// under itself or one of its descendants is ErrCycle; a parent that is not a
// group of the realm ErrNotFound; a name taken among the new siblings
// ErrConflict.
func (s *Store) MoveGroup(ctx context.Context, realmID, id, parentID string) error {
	return s.Tx(ctx, func(tx *Store) error {
		if parentID != "" {
			if _, err := tx.GetGroup(ctx, realmID, parentID); err != nil {
				return fmt.Errorf("move group %s: parent %w", id, err)
			}
			// The new parent and its ancestors must not include the group.
			var n int
			err := tx.w.QueryRowContext(ctx, "WITH RECURSIVE "+fmt.Sprintf(groupAncestors, "g.id = $2")+`
				SELECT count(*) FROM up WHERE id = $3`, realmID, parentID, id).Scan(&n)
			if err != nil {
				return fmt.Errorf("move group %s: %w", id, mapErr(err))
			}
			if n > 0 {
				return fmt.Errorf("group %s under %s: %w", id, parentID, ErrCycle)
			}
		}
		res, err := tx.w.ExecContext(ctx, "UPDATE realm_groups SET parent_id = $1 WHERE realm_id = $2 AND id = $3",
			nullString(parentID), realmID, id)
		if err != nil {
			return fmt.Errorf("move group %s: %w", id, mapErr(err))
		}
		return affectedOne(res, "group "+id)
	})
}

// DeleteGroup removes a group with its subgroups, memberships and mappings.
func (s *Store) DeleteGroup(ctx context.Context, realmID, id string) error {
	res, err := s.w.ExecContext(ctx, "DELETE FROM realm_groups WHERE realm_id = $1 AND id = $2", realmID, id)
	if err != nil {
		return fmt.Errorf("delete group %s: %w", id, mapErr(err))
	}
	return affectedOne(res, "group "+id)
}

// GroupCounts says how many users and roles are mapped directly to a group.
func (s *Store) GroupCounts(ctx context.Context, id string) (members, roles int, err error) {
	err = s.r.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM group_members WHERE group_id = $1),
		(SELECT count(*) FROM group_roles WHERE group_id = $1)`, id).Scan(&members, &roles)
	return members, roles, mapErr(err)
}

// AddGroupMember puts a user in a group; doing it twice is a no-op.
func (s *Store) AddGroupMember(ctx context.Context, groupID, userID string) error {
	_, err := s.w.ExecContext(ctx, "INSERT INTO group_members (group_id, user_id) VALUES ($1, $2) ON CONFLICT DO NOTHING",
		groupID, userID)
	if err != nil {
		return fmt.Errorf("add group member: %w", mapErr(err))
	}
	return nil
}

// RemoveGroupMember takes a user out of a group; ErrNotFound if not in it.
func (s *Store) RemoveGroupMember(ctx context.Context, groupID, userID string) error {
	res, err := s.w.ExecContext(ctx, "DELETE FROM group_members WHERE group_id = $1 AND user_id = $2", groupID, userID)
	if err != nil {
		return fmt.Errorf("remove group member: %w", mapErr(err))
	}
	return affectedOne(res, "membership of user "+userID+" in group "+groupID)
}

// ListGroupMembers returns a page of a group's direct members by username.
func (s *Store) ListGroupMembers(ctx context.Context, groupID string, first, max int) ([]*User, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+prefixColumns("u", userColumns)+` FROM users u
		JOIN group_members m ON m.user_id = u.id WHERE m.group_id = $1 ORDER BY u.username LIMIT $2 OFFSET $3`,
		groupID, max, first)
	if err != nil {
		return nil, fmt.Errorf("list group members: %w", mapErr(err))
	}
	defer rows.Close()
	var out []*User
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, mapErr(rows.Err())
}

// ListUserGroups returns the groups a user is directly a member of.
func (s *Store) ListUserGroups(ctx context.Context, userID string) ([]*Group, error) {
	return s.queryGroups(ctx, `SELECT `+prefixColumns("g", groupColumns)+` FROM realm_groups g
		JOIN group_members m ON m.group_id = g.id WHERE m.user_id = $1 ORDER BY g.name, g.id`, userID)
}

// GroupMemberships lists every (group, user) pair of a realm, for export.
func (s *Store) GroupMemberships(ctx context.Context, realmID string) (map[string][]string, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT m.user_id, m.group_id FROM group_members m
		JOIN realm_groups g ON g.id = m.group_id WHERE g.realm_id = $1 ORDER BY m.user_id, m.group_id`, realmID)
	if err != nil {
		return nil, fmt.Errorf("list memberships: %w", mapErr(err))
	}
	defer rows.Close()
	out := map[string][]string{}
	for rows.Next() {
		var user, group string
		if err := rows.Scan(&user, &group); err != nil {
			return nil, mapErr(err)
		}
		out[user] = append(out[user], group)
	}
	return out, mapErr(rows.Err())
}
