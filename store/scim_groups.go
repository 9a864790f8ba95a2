package store

import (
	"context"
	"database/sql"
	"fmt"
)

// SCIMGroup is what SCIM holds of a group beyond its realm_groups row.
type SCIMGroup struct {
	ExternalID string
	ModifiedAt int64 // Unix milliseconds; 0 when SCIM never wrote the group
}

// GroupFields are the fields of a group a Match or a sort may name. The
// name is compared lowercased by SQL's lower() (in SQLite, ASCII letters
// only).
var GroupFields = map[string]string{
	"id":          "g.id",
	"displayname": "g.name_fold",
	"externalid":  "coalesce(sg.external_id, '')",
	"created":     "g.created_at",
	"modified":    "coalesce(sg.modified_at, g.created_at)",
}

// SearchSCIMGroups answers one page of a realm's groups meeting q.Where
// (MatchHas of "members" reads memberships), ordered by SortField or by
// name, and how many meet it in all.
func (s *Store) SearchSCIMGroups(ctx context.Context, realmID string, q SCIMQuery) ([]*Group, int, error) {
	b := &matchSQL{args: []any{realmID}, fields: GroupFields, owner: "g.id", has: func(string, *matchSQL, string) string {
		return "SELECT v.group_id AS owner_id FROM (SELECT group_id, user_id AS value FROM group_members) v WHERE TRUE"
	}, likeIsExact: s.dialect.likeIsExact}
	none := func(*matchSQL, string) (string, error) { return "", nil }
	groups := []*Group{}
	total, err := s.searchSCIM(ctx, b, q, "realm_groups g", " LEFT JOIN scim_groups sg ON sg.group_id = g.id", "g.realm_id = $1",
		prefixColumns("g", groupColumns), "g.name", none, func(rows *sql.Rows) error {
			g, err := scanGroup(rows)
			if err == nil {
				groups = append(groups, g)
			}
			return err
		})
	return groups, total, err
}

// SCIMGroupOf reads what SCIM holds of a group; the zero SCIMGroup when
// SCIM never wrote it.
func (s *Store) SCIMGroupOf(ctx context.Context, groupID string) (SCIMGroup, error) {
	var g SCIMGroup
	err := s.r.QueryRowContext(ctx, "SELECT external_id, modified_at FROM scim_groups WHERE group_id = $1", groupID).
		Scan(&g.ExternalID, &g.ModifiedAt)
	if err == sql.ErrNoRows {
		return SCIMGroup{}, nil
	}
	return g, mapErr(err)
}

// PutSCIMGroup stores what SCIM holds of a group of realmID.
func (s *Store) PutSCIMGroup(ctx context.Context, realmID, groupID string, g SCIMGroup) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO scim_groups (group_id, realm_id, external_id, modified_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (group_id) DO UPDATE SET external_id = excluded.external_id, modified_at = excluded.modified_at`,
		groupID, realmID, g.ExternalID, g.ModifiedAt)
	if err != nil {
		return fmt.Errorf("store SCIM attributes of group %s: %w", groupID, mapErr(err))
	}
	return nil
}

// ClearGroupMembers takes every user out of a group.
func (s *Store) ClearGroupMembers(ctx context.Context, groupID string) error {
	if _, err := s.w.ExecContext(ctx, "DELETE FROM group_members WHERE group_id = $1", groupID); err != nil {
		return fmt.Errorf("clear members of group %s: %w", groupID, mapErr(err))
	}
	return nil
}

// RealmUsersExist says which of the given IDs are users of the realm.
func (s *Store) RealmUsersExist(ctx context.Context, realmID string, ids []string) (map[string]bool, error) {
	out := make(map[string]bool, len(ids))
	for chunk := range chunks(ids, 500) {
		rows, err := s.r.QueryContext(ctx, "SELECT id FROM users WHERE realm_id = $1 AND service_account_client_id IS NULL AND id IN ("+
			placeholdersFrom(2, len(chunk))+")", append([]any{realmID}, anys(chunk)...)...)
		if err != nil {
			return nil, fmt.Errorf("find users: %w", mapErr(err))
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, mapErr(err)
			}
			out[id] = true
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, mapErr(err)
		}
	}
	return out, nil
}

// CountSCIMResources counts a realm's users and groups SCIM has written.
func (s *Store) CountSCIMResources(ctx context.Context, realmID string) (users, groups int, err error) {
	err = s.r.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM scim_users WHERE realm_id = $1),
		(SELECT count(*) FROM scim_groups WHERE realm_id = $1)`, realmID).Scan(&users, &groups)
	if err != nil {
		return 0, 0, fmt.Errorf("count SCIM resources: %w", mapErr(err))
	}
	return users, groups, nil
}
