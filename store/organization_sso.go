package store

import (
	"context"
	"fmt"
)

// AnyVerifiedDomain is an SSO connection's domain when it serves every
// domain its organization has verified (Keycloak's ANY).
const AnyVerifiedDomain = "ANY"

// OrgSSOConnection links an organization to one of the realm's identity
// providers: its people sign in there.
type OrgSSOConnection struct {
	ID            string
	OrgID         string
	ProviderID    string
	ProviderAlias string // read with the connection; set by the store
	Enabled       bool
	// Domain is one of the organization's domains, or AnyVerifiedDomain.
	Domain string
	// AutoJoin makes a user who signs in through the connection a member
	// of the organization, with the role member.
	AutoJoin bool
	// RedirectWhenEmailMatches sends a person whose email is of Domain
	// straight to the provider from the sign-in page.
	RedirectWhenEmailMatches bool
	// HideOnLogin keeps the provider's button off the sign-in page.
	HideOnLogin bool
	CreatedAt   int64 // Unix milliseconds
}

// SSODiscovery is a connection the sign-in page's home-realm discovery
// found for an email domain, with its organization.
type SSODiscovery struct {
	Connection *OrgSSOConnection
	OrgSlug    string
}

const ssoColumns = `c.id, c.org_id, c.provider_id, p.alias, c.enabled, c.domain, c.auto_join,
	c.redirect_when_email_matches, c.hide_on_login, c.created_at`

const ssoFrom = ` FROM organization_sso_connections c JOIN identity_providers p ON p.id = c.provider_id`

func scanSSOConnection(row scanner, extra ...any) (*OrgSSOConnection, error) {
	var c OrgSSOConnection
	dest := append([]any{&c.ID, &c.OrgID, &c.ProviderID, &c.ProviderAlias, &c.Enabled, &c.Domain, &c.AutoJoin,
		&c.RedirectWhenEmailMatches, &c.HideOnLogin, &c.CreatedAt}, extra...)
	if err := row.Scan(dest...); err != nil {
		return nil, mapErr(err)
	}
	return &c, nil
}

// CreateOrgSSOConnection inserts c. A provider that already serves an
// organization is a *ConflictError on "provider_id"; an unknown
// organization or provider ErrNotFound.
func (s *Store) CreateOrgSSOConnection(ctx context.Context, c *OrgSSOConnection) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO organization_sso_connections (id, org_id, provider_id, enabled, domain,
		auto_join, redirect_when_email_matches, hide_on_login, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		c.ID, c.OrgID, c.ProviderID, c.Enabled, c.Domain, c.AutoJoin, c.RedirectWhenEmailMatches, c.HideOnLogin, c.CreatedAt)
	if err != nil {
		return fmt.Errorf("create sso connection %s: %w", c.ID, mapErr(err))
	}
	return nil
}

// GetOrgSSOConnection finds a connection of an organization by ID.
func (s *Store) GetOrgSSOConnection(ctx context.Context, orgID, id string) (*OrgSSOConnection, error) {
	c, err := scanSSOConnection(s.r.QueryRowContext(ctx, "SELECT "+ssoColumns+ssoFrom+" WHERE c.org_id = $1 AND c.id = $2", orgID, id))
	if err != nil {
		return nil, fmt.Errorf("sso connection %s: %w", id, err)
	}
	return c, nil
}

// ListOrgSSOConnections lists an organization's connections, oldest first;
// the rowid keeps creation order among those made in one millisecond.
func (s *Store) ListOrgSSOConnections(ctx context.Context, orgID string) ([]*OrgSSOConnection, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT "+ssoColumns+ssoFrom+" WHERE c.org_id = $1 ORDER BY c.created_at, c.rowid", orgID)
	if err != nil {
		return nil, fmt.Errorf("list sso connections: %w", mapErr(err))
	}
	defer rows.Close()
	out := []*OrgSSOConnection{}
	for rows.Next() {
		c, err := scanSSOConnection(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, mapErr(rows.Err())
}

// UpdateOrgSSOConnection writes a connection's settings; its organization,
// provider and creation time never change. ErrNotFound if there is none.
func (s *Store) UpdateOrgSSOConnection(ctx context.Context, c *OrgSSOConnection) error {
	res, err := s.w.ExecContext(ctx, `UPDATE organization_sso_connections SET enabled = $1, domain = $2, auto_join = $3,
		redirect_when_email_matches = $4, hide_on_login = $5 WHERE org_id = $6 AND id = $7`,
		c.Enabled, c.Domain, c.AutoJoin, c.RedirectWhenEmailMatches, c.HideOnLogin, c.OrgID, c.ID)
	if err != nil {
		return fmt.Errorf("update sso connection %s: %w", c.ID, mapErr(err))
	}
	return affectedOne(res, "sso connection "+c.ID)
}

// DeleteOrgSSOConnection removes a connection; ErrNotFound if there is none.
func (s *Store) DeleteOrgSSOConnection(ctx context.Context, orgID, id string) error {
	res, err := s.w.ExecContext(ctx, "DELETE FROM organization_sso_connections WHERE org_id = $1 AND id = $2", orgID, id)
	if err != nil {
		return fmt.Errorf("delete sso connection %s: %w", id, mapErr(err))
	}
	return affectedOne(res, "sso connection "+id)
}

// SSOConnectionOfProvider finds the connection a provider serves, with its
// organization's slug; ErrNotFound if it serves none.
func (s *Store) SSOConnectionOfProvider(ctx context.Context, providerID string) (*SSODiscovery, error) {
	var slug string
	c, err := scanSSOConnection(s.r.QueryRowContext(ctx, "SELECT "+ssoColumns+", o.slug"+ssoFrom+
		" JOIN organizations o ON o.id = c.org_id WHERE c.provider_id = $1", providerID), &slug)
	if err != nil {
		return nil, fmt.Errorf("sso connection of provider %s: %w", providerID, err)
	}
	return &SSODiscovery{Connection: c, OrgSlug: slug}, nil
}

// DiscoverSSOConnection finds where an email of domain (lowercase) signs
// in: an enabled connection that redirects on a matching email, of an
// enabled provider, of the enabled organization that has verified the
// domain, naming that domain or any verified one. A connection naming the
// domain wins over one naming ANY, then the oldest. ErrNotFound if none.
func (s *Store) DiscoverSSOConnection(ctx context.Context, realmID, domain string) (*SSODiscovery, error) {
	var slug string
	c, err := scanSSOConnection(s.r.QueryRowContext(ctx, "SELECT "+ssoColumns+", o.slug"+ssoFrom+`
		JOIN organizations o ON o.id = c.org_id
		JOIN organization_domains d ON d.org_id = o.id AND d.name = $2 AND d.verified
		WHERE o.realm_id = $1 AND o.enabled AND c.enabled AND p.enabled AND c.redirect_when_email_matches
		AND (c.domain = $2 OR c.domain = $3)
		ORDER BY CASE WHEN c.domain = $2 THEN 0 ELSE 1 END, c.created_at, c.rowid LIMIT 1`,
		realmID, domain, AnyVerifiedDomain), &slug)
	if err != nil {
		return nil, fmt.Errorf("sso connection for %s: %w", domain, err)
	}
	return &SSODiscovery{Connection: c, OrgSlug: slug}, nil
}

// HiddenSSOProviders lists the aliases of a realm's providers whose
// connection keeps them off the sign-in page.
func (s *Store) HiddenSSOProviders(ctx context.Context, realmID string) ([]string, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT p.alias`+ssoFrom+` WHERE p.realm_id = $1 AND c.hide_on_login
		ORDER BY p.alias`, realmID)
	if err != nil {
		return nil, fmt.Errorf("hidden sso providers: %w", mapErr(err))
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var alias string
		if err := rows.Scan(&alias); err != nil {
			return nil, mapErr(err)
		}
		out = append(out, alias)
	}
	return out, mapErr(rows.Err())
}

// RealmHasSSODiscovery says whether an email may send someone of the realm
// to a provider from the sign-in page: some enabled connection redirects on
// a matching email.
func (s *Store) RealmHasSSODiscovery(ctx context.Context, realmID string) (bool, error) {
	var n int
	err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM organization_sso_connections c
		JOIN organizations o ON o.id = c.org_id WHERE o.realm_id = $1 AND o.enabled AND c.enabled
		AND c.redirect_when_email_matches`, realmID).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("sso discovery of realm %s: %w", realmID, mapErr(err))
	}
	return n > 0, nil
}
