package store

import (
	"context"
	"fmt"
)

// OrgMember is a user's membership of an organization.
type OrgMember struct {
	User     *User
	Role     string // owner, admin or member
	JoinedAt int64  // Unix milliseconds
}

// OrgMembership is one organization a user belongs to, as a token's
// organization claim shows it.
type OrgMembership struct {
	OrgID   string
	Slug    string
	Name    string
	Enabled bool
	Role    string
}

// AddOrgMember makes a user a member of an organization with a role. A
// user already a member is a *ConflictError on "user_id"; an unknown user
// or organization ErrNotFound.
func (s *Store) AddOrgMember(ctx context.Context, orgID, userID, role string, joinedAt int64) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO organization_members (org_id, user_id, role, created_at)
		VALUES ($1, $2, $3, $4)`, orgID, userID, role, joinedAt)
	if err != nil {
		return fmt.Errorf("add organization member %s: %w", userID, mapErr(err))
	}
	return nil
}

// GetOrgMember finds a member of an organization.
func (s *Store) GetOrgMember(ctx context.Context, orgID, userID string) (*OrgMember, error) {
	m := OrgMember{}
	u, err := scanUserWith(s.r.QueryRowContext(ctx, `SELECT `+prefixColumns("u", userColumns)+`, m.role, m.created_at
		FROM organization_members m JOIN users u ON u.id = m.user_id WHERE m.org_id = $1 AND m.user_id = $2`, orgID, userID),
		&m.Role, &m.JoinedAt)
	if err != nil {
		return nil, fmt.Errorf("organization member %s: %w", userID, err)
	}
	m.User = u
	return &m, nil
}

// SetOrgMemberRole changes a member's role; ErrNotFound if not a member.
func (s *Store) SetOrgMemberRole(ctx context.Context, orgID, userID, role string) error {
	res, err := s.w.ExecContext(ctx, "UPDATE organization_members SET role = $1 WHERE org_id = $2 AND user_id = $3",
		role, orgID, userID)
	if err != nil {
		return fmt.Errorf("set organization role of %s: %w", userID, mapErr(err))
	}
	return affectedOne(res, "organization member "+userID)
}

// RemoveOrgMember ends a membership; ErrNotFound if there is none.
func (s *Store) RemoveOrgMember(ctx context.Context, orgID, userID string) error {
	res, err := s.w.ExecContext(ctx, "DELETE FROM organization_members WHERE org_id = $1 AND user_id = $2", orgID, userID)
	if err != nil {
		return fmt.Errorf("remove organization member %s: %w", userID, mapErr(err))
	}
	return affectedOne(res, "organization member "+userID)
}

// CountOrgMembers counts an organization's members with a role.
func (s *Store) CountOrgMembers(ctx context.Context, orgID, role string) (int, error) {
	var n int
	err := s.r.QueryRowContext(ctx, "SELECT count(*) FROM organization_members WHERE org_id = $1 AND role = $2",
		orgID, role).Scan(&n)
	return n, mapErr(err)
}

// ListOrgMembers returns a page of an organization's members by username.
func (s *Store) ListOrgMembers(ctx context.Context, orgID string, first, max int) ([]*OrgMember, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+prefixColumns("u", userColumns)+`, m.role, m.created_at
		FROM organization_members m JOIN users u ON u.id = m.user_id WHERE m.org_id = $1
		ORDER BY u.username LIMIT $2 OFFSET $3`, orgID, max, first)
	if err != nil {
		return nil, fmt.Errorf("list organization members: %w", mapErr(err))
	}
	defer rows.Close()
	var out []*OrgMember
	for rows.Next() {
		m := OrgMember{}
		if m.User, err = scanUserWith(rows, &m.Role, &m.JoinedAt); err != nil {
			return nil, err
		}
		out = append(out, &m)
	}
	return out, mapErr(rows.Err())
}

// UserOrganizations lists the organizations a user belongs to, by slug.
func (s *Store) UserOrganizations(ctx context.Context, userID string) ([]OrgMembership, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT o.id, o.slug, o.name, o.enabled, m.role FROM organization_members m
		JOIN organizations o ON o.id = m.org_id WHERE m.user_id = $1 ORDER BY o.slug`, userID)
	if err != nil {
		return nil, fmt.Errorf("user organizations: %w", mapErr(err))
	}
	defer rows.Close()
	var out []OrgMembership
	for rows.Next() {
		var m OrgMembership
		if err := rows.Scan(&m.OrgID, &m.Slug, &m.Name, &m.Enabled, &m.Role); err != nil {
			return nil, mapErr(err)
		}
		out = append(out, m)
	}
	return out, mapErr(rows.Err())
}

// withColumns scans a row of a user's columns followed by more.
type withColumns struct {
	row   scanner
	extra []any
}

func (w withColumns) Scan(dest ...any) error { return w.row.Scan(append(dest, w.extra...)...) }

func scanUserWith(row scanner, extra ...any) (*User, error) { return scanUser(withColumns{row, extra}) }
