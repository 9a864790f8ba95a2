package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// Organization is a group of a realm's users with its own members, roles,
// invitations and domains (Keycloak's organizations; the slug is its alias).
type Organization struct {
	ID          string
	RealmID     string
	Slug        string // lowercase, unique in the realm, never changed
	Name        string
	Description string
	Enabled     bool
	Attributes  map[string][]string
	Domains     []OrgDomain // in name order
	CreatedAt   int64       // Unix milliseconds
}

// OrgDomain is an email domain an organization claims. It is the
// organization's alone in the realm once verified.
type OrgDomain struct {
	Name        string // lowercase
	Verified    bool
	Challenge   string // the TXT value asked for while verification is pending
	ChallengeAt int64  // when it was asked for, Unix milliseconds
}

// OrganizationQuery selects a page of a realm's organizations.
type OrganizationQuery struct {
	// Search matches a part of the name or of a domain, ignoring case;
	// with Exact, the whole name or a whole domain. Empty: every one.
	Search     string
	Exact      bool
	First, Max int
}

const orgColumns = "id, realm_id, slug, name, description, enabled, attributes, created_at"

func scanOrganization(row scanner) (*Organization, error) {
	var o Organization
	var attrs string
	if err := row.Scan(&o.ID, &o.RealmID, &o.Slug, &o.Name, &o.Description, &o.Enabled, &attrs, &o.CreatedAt); err != nil {
		return nil, mapErr(err)
	}
	if err := json.Unmarshal([]byte(attrs), &o.Attributes); err != nil {
		return nil, fmt.Errorf("organization %s attributes: %w", o.ID, err)
	}
	return &o, nil
}

func orgAttributes(o *Organization) (string, error) {
	attrs := o.Attributes
	if attrs == nil {
		attrs = map[string][]string{}
	}
	b, err := json.Marshal(attrs)
	return string(b), err
}

// CreateOrganization inserts o with its domains. A slug taken in the realm
// is a *ConflictError on "slug"; a domain another organization of the
// realm has verified, one on "domain".
func (s *Store) CreateOrganization(ctx context.Context, o *Organization) error {
	attrs, err := orgAttributes(o)
	if err != nil {
		return err
	}
	return s.Tx(ctx, func(tx *Store) error {
		_, err := tx.w.ExecContext(ctx, `INSERT INTO organizations (`+orgColumns+`, name_search)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
			o.ID, o.RealmID, o.Slug, o.Name, o.Description, o.Enabled, attrs, o.CreatedAt, strings.ToLower(o.Name))
		if err != nil {
			return fmt.Errorf("create organization %s: %w", o.Slug, mapErr(err))
		}
		return tx.putOrgDomains(ctx, o)
	})
}

// putOrgDomains makes the organization's domains the names in o.Domains:
// a domain it keeps keeps its verification, a new one starts unverified,
// one left out is dropped.
func (s *Store) putOrgDomains(ctx context.Context, o *Organization) error {
	current, err := s.orgDomains(ctx, o.ID)
	if err != nil {
		return err
	}
	keep := make(map[string]bool, len(o.Domains))
	for _, d := range o.Domains {
		keep[d.Name] = true
	}
	for _, d := range current {
		if !keep[d.Name] {
			if _, err := s.w.ExecContext(ctx, "DELETE FROM organization_domains WHERE org_id = $1 AND name = $2", o.ID, d.Name); err != nil {
				return fmt.Errorf("drop domain %s: %w", d.Name, mapErr(err))
			}
		}
	}
	for _, d := range o.Domains {
		var taken int
		err := s.w.QueryRowContext(ctx, `SELECT count(*) FROM organization_domains
			WHERE realm_id = $1 AND name = $2 AND verified AND org_id <> $3`, o.RealmID, d.Name, o.ID).Scan(&taken)
		if err != nil {
			return fmt.Errorf("domain %s: %w", d.Name, mapErr(err))
		}
		if taken > 0 {
			return &ConflictError{Column: "domain", cause: fmt.Errorf("domain %s is verified by another organization", d.Name)}
		}
		_, err = s.w.ExecContext(ctx, `INSERT INTO organization_domains (org_id, realm_id, name) VALUES ($1, $2, $3)
			ON CONFLICT (org_id, name) DO NOTHING`, o.ID, o.RealmID, d.Name)
		if err != nil {
			return fmt.Errorf("add domain %s: %w", d.Name, mapErr(err))
		}
	}
	o.Domains, err = s.orgDomains(ctx, o.ID)
	return err
}

func (s *Store) orgDomains(ctx context.Context, orgID string) ([]OrgDomain, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT name, verified, challenge, challenge_at FROM organization_domains
		WHERE org_id = $1 ORDER BY name`, orgID)
	if err != nil {
		return nil, fmt.Errorf("organization domains: %w", mapErr(err))
	}
	defer rows.Close()
	var out []OrgDomain
	for rows.Next() {
		var d OrgDomain
		if err := rows.Scan(&d.Name, &d.Verified, &d.Challenge, &d.ChallengeAt); err != nil {
			return nil, mapErr(err)
		}
		out = append(out, d)
	}
	return out, mapErr(rows.Err())
}

// GetOrganization finds an organization of a realm by slug, with its
// domains.
func (s *Store) GetOrganization(ctx context.Context, realmID, slug string) (*Organization, error) {
	o, err := scanOrganization(s.r.QueryRowContext(ctx,
		"SELECT "+orgColumns+" FROM organizations WHERE realm_id = $1 AND slug = $2", realmID, slug))
	if err != nil {
		return nil, fmt.Errorf("organization %s: %w", slug, err)
	}
	if o.Domains, err = s.orgDomains(ctx, o.ID); err != nil {
		return nil, err
	}
	return o, nil
}

// ListOrganizations returns a page of a realm's organizations by name, with
// their domains.
func (s *Store) ListOrganizations(ctx context.Context, realmID string, q OrganizationQuery) ([]*Organization, error) {
	where, args := "realm_id = $1", []any{realmID}
	if q.Search != "" {
		op, v := "LIKE $2 ESCAPE '\\'", likePattern(q.Search)
		if q.Exact {
			op, v = "= $2", strings.ToLower(q.Search)
		}
		where += " AND (name_search " + op + " OR id IN (SELECT org_id FROM organization_domains WHERE realm_id = $1 AND name " + op + "))"
		args = append(args, v)
	}
	args = append(args, q.Max, q.First)
	n := len(args)
	rows, err := s.r.QueryContext(ctx, fmt.Sprintf("SELECT %s FROM organizations WHERE %s ORDER BY name_search, slug LIMIT $%d OFFSET $%d",
		orgColumns, where, n-1, n), args...)
	if err != nil {
		return nil, fmt.Errorf("list organizations: %w", mapErr(err))
	}
	var out []*Organization
	for rows.Next() {
		o, err := scanOrganization(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, o)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, mapErr(err)
	}
	for _, o := range out {
		if o.Domains, err = s.orgDomains(ctx, o.ID); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// UpdateOrganization writes an organization's name, description, enabled
// flag, attributes and domains (as CreateOrganization checks them; see
// putOrgDomains for what a kept domain keeps). Its slug never changes.
func (s *Store) UpdateOrganization(ctx context.Context, o *Organization) error {
	attrs, err := orgAttributes(o)
	if err != nil {
		return err
	}
	return s.Tx(ctx, func(tx *Store) error {
		res, err := tx.w.ExecContext(ctx, `UPDATE organizations SET name = $1, name_search = $2, description = $3,
			enabled = $4, attributes = $5 WHERE realm_id = $6 AND id = $7`,
			o.Name, strings.ToLower(o.Name), o.Description, o.Enabled, attrs, o.RealmID, o.ID)
		if err != nil {
			return fmt.Errorf("update organization %s: %w", o.Slug, mapErr(err))
		}
		if err := affectedOne(res, "organization "+o.Slug); err != nil {
			return err
		}
		return tx.putOrgDomains(ctx, o)
	})
}

// DeleteOrganization removes an organization with its domains, memberships,
// invitations and SSO connections; its members stay users of the realm.
func (s *Store) DeleteOrganization(ctx context.Context, realmID, slug string) error {
	res, err := s.w.ExecContext(ctx, "DELETE FROM organizations WHERE realm_id = $1 AND slug = $2", realmID, slug)
	if err != nil {
		return fmt.Errorf("delete organization %s: %w", slug, mapErr(err))
	}
	return affectedOne(res, "organization "+slug)
}

// SetDomainChallenge records the TXT value a domain of an organization is
// to publish, and when it was asked for; ErrNotFound if the organization
// does not list the domain.
func (s *Store) SetDomainChallenge(ctx context.Context, orgID, name, challenge string, at int64) error {
	res, err := s.w.ExecContext(ctx, `UPDATE organization_domains SET challenge = $1, challenge_at = $2
		WHERE org_id = $3 AND name = $4`, challenge, at, orgID, name)
	if err != nil {
		return fmt.Errorf("domain %s challenge: %w", name, mapErr(err))
	}
	return affectedOne(res, "domain "+name)
}

// VerifyDomain marks a domain of an organization verified and forgets its
// challenge. A domain another organization of the realm has verified is a
// *ConflictError; ErrNotFound if the organization does not list it.
func (s *Store) VerifyDomain(ctx context.Context, orgID, name string) error {
	res, err := s.w.ExecContext(ctx, `UPDATE organization_domains SET verified = TRUE, challenge = ''
		WHERE org_id = $1 AND name = $2`, orgID, name)
	if err != nil {
		return fmt.Errorf("verify domain %s: %w", name, mapErr(err))
	}
	return affectedOne(res, "domain "+name)
}
