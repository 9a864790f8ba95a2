package store

import (
	"context"
	"encoding/hex"
	"fmt"
)

// OrgInvitation is an invitation by email to join an organization with a
// role. Its token is mailed and never stored: TokenHash is its SHA-256.
type OrgInvitation struct {
	ID        string
	OrgID     string
	Email     string // lowercase
	Role      string
	TokenHash []byte
	CreatedAt int64 // Unix milliseconds
	ExpiresAt int64
	UsedAt    int64  // 0 while unused
	UsedBy    string // the user who accepted it
}

const invitationColumns = "id, org_id, email, role, token_hash, created_at, expires_at, used_at, used_by"

func scanInvitation(row scanner) (*OrgInvitation, error) {
	var inv OrgInvitation
	var hash string
	if err := row.Scan(&inv.ID, &inv.OrgID, &inv.Email, &inv.Role, &hash, &inv.CreatedAt, &inv.ExpiresAt,
		&inv.UsedAt, &inv.UsedBy); err != nil {
		return nil, mapErr(err)
	}
	b, err := hex.DecodeString(hash)
	if err != nil {
		return nil, fmt.Errorf("invitation %s token hash: %w", inv.ID, err)
	}
	inv.TokenHash = b
	return &inv, nil
}

// CreateOrgInvitation stores an invitation.
func (s *Store) CreateOrgInvitation(ctx context.Context, inv *OrgInvitation) error {
	_, err := s.w.ExecContext(ctx, "INSERT INTO organization_invitations ("+invitationColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, inv.ID, inv.OrgID, inv.Email, inv.Role,
		hex.EncodeToString(inv.TokenHash), inv.CreatedAt, inv.ExpiresAt, inv.UsedAt, inv.UsedBy)
	if err != nil {
		return fmt.Errorf("create invitation: %w", mapErr(err))
	}
	return nil
}

// PendingOrgInvitations returns a page of an organization's invitations
// neither used nor expired at now, newest first.
func (s *Store) PendingOrgInvitations(ctx context.Context, orgID string, now int64, first, max int) ([]*OrgInvitation, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT "+invitationColumns+` FROM organization_invitations
		WHERE org_id = $1 AND used_at = 0 AND expires_at > $2 ORDER BY created_at DESC, id LIMIT $3 OFFSET $4`,
		orgID, now, max, first)
	if err != nil {
		return nil, fmt.Errorf("list invitations: %w", mapErr(err))
	}
	defer rows.Close()
	var out []*OrgInvitation
	for rows.Next() {
		inv, err := scanInvitation(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, inv)
	}
	return out, mapErr(rows.Err())
}

// OrgInvitationByToken finds an invitation by the SHA-256 of its token,
// used or not.
func (s *Store) OrgInvitationByToken(ctx context.Context, tokenHash []byte) (*OrgInvitation, error) {
	inv, err := scanInvitation(s.r.QueryRowContext(ctx, "SELECT "+invitationColumns+
		" FROM organization_invitations WHERE token_hash = $1", hex.EncodeToString(tokenHash)))
	if err != nil {
		return nil, fmt.Errorf("invitation: %w", err)
	}
	return inv, nil
}

// UseOrgInvitation marks an unused invitation used by a user; ErrNotFound
// when it is unknown or already used, so that it is used once whatever
// races it.
func (s *Store) UseOrgInvitation(ctx context.Context, id, userID string, now int64) error {
	res, err := s.w.ExecContext(ctx, `UPDATE organization_invitations SET used_at = $1, used_by = $2
		WHERE id = $3 AND used_at = 0`, now, userID, id)
	if err != nil {
		return fmt.Errorf("use invitation %s: %w", id, mapErr(err))
	}
	return affectedOne(res, "unused invitation "+id)
}

// GetOrganizationByID finds an organization of a realm by ID, with its
// domains.
func (s *Store) GetOrganizationByID(ctx context.Context, realmID, id string) (*Organization, error) {
	o, err := scanOrganization(s.r.QueryRowContext(ctx,
		"SELECT "+orgColumns+" FROM organizations WHERE realm_id = $1 AND id = $2", realmID, id))
	if err != nil {
		return nil, fmt.Errorf("organization %s: %w", id, err)
	}
	if o.Domains, err = s.orgDomains(ctx, o.ID); err != nil {
		return nil, err
	}
	return o, nil
}

// DeleteOrgInvitation deletes an organization's invitation not used yet,
// so that its link no longer works; ErrNotFound when it is unknown or
// used already.
func (s *Store) DeleteOrgInvitation(ctx context.Context, orgID, id string) error {
	res, err := s.w.ExecContext(ctx, `DELETE FROM organization_invitations WHERE org_id = $1 AND id = $2 AND used_at = 0`, orgID, id)
	if err != nil {
		return fmt.Errorf("delete invitation %s: %w", id, mapErr(err))
	}
	return affectedOne(res, "unused invitation "+id)
}
