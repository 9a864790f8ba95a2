package store

import (
	"context"
	"errors"
	"fmt"
)

// IdentityProvider is an upstream provider a realm's people may sign in
// with (identity brokering).
type IdentityProvider struct {
	ID               string
	RealmID          string
	Alias            string // unique in the realm; names the provider in paths
	DisplayName      string
	ProviderType     string // oidc, oauth2, or a social preset
	Enabled          bool
	ClientID         string
	ClientSecret     string // plaintext here; sealed in the database
	AuthorizationURL string
	TokenURL         string
	UserinfoURL      string
	JWKSURL          string
	Issuer           string
	DefaultScopes    string // space-separated
	TrustEmail       bool
	SyncUserProfile  bool
	Config           string // JSON object: the provider's other settings, read by the broker
	CreatedAt        int64
}

const identityProviderColumns = `id, realm_id, alias, display_name, provider_type, enabled, client_id, client_secret,
	authorization_url, token_url, userinfo_url, jwks_url, issuer, default_scopes, trust_email, sync_user_profile,
	config, created_at`

func identityProviderAAD(id string) string { return "identity_provider.client_secret:" + id }

func (s *Store) identityProviderValues(p *IdentityProvider) []any {
	var secret []byte
	if p.ClientSecret != "" {
		secret = s.seal([]byte(p.ClientSecret), identityProviderAAD(p.ID))
	}
	config := p.Config
	if config == "" {
		config = "{}"
	}
	return []any{p.ID, p.RealmID, p.Alias, p.DisplayName, p.ProviderType, p.Enabled, p.ClientID, secret,
		p.AuthorizationURL, p.TokenURL, p.UserinfoURL, p.JWKSURL, p.Issuer, p.DefaultScopes, p.TrustEmail,
		p.SyncUserProfile, config, p.CreatedAt}
}

func (s *Store) scanIdentityProvider(row scanner) (*IdentityProvider, error) {
	var p IdentityProvider
	var secret []byte
	err := row.Scan(&p.ID, &p.RealmID, &p.Alias, &p.DisplayName, &p.ProviderType, &p.Enabled, &p.ClientID, &secret,
		&p.AuthorizationURL, &p.TokenURL, &p.UserinfoURL, &p.JWKSURL, &p.Issuer, &p.DefaultScopes, &p.TrustEmail,
		&p.SyncUserProfile, &p.Config, &p.CreatedAt)
	if err != nil {
		return nil, mapErr(err)
	}
	plain, err := s.open(secret, identityProviderAAD(p.ID))
	if err != nil {
		return nil, err
	}
	p.ClientSecret = string(plain)
	return &p, nil
}

// CreateIdentityProvider inserts p; a taken alias is ErrConflict.
func (s *Store) CreateIdentityProvider(ctx context.Context, p *IdentityProvider) error {
	_, err := s.w.ExecContext(ctx, "INSERT INTO identity_providers ("+identityProviderColumns+") VALUES ("+
		placeholders(18)+")", s.identityProviderValues(p)...)
	if err != nil {
		return fmt.Errorf("create identity provider %s: %w", p.Alias, mapErr(err))
	}
	return nil
}

// GetIdentityProvider finds a realm's provider by alias.
func (s *Store) GetIdentityProvider(ctx context.Context, realmID, alias string) (*IdentityProvider, error) {
	p, err := s.scanIdentityProvider(s.r.QueryRowContext(ctx, "SELECT "+identityProviderColumns+
		" FROM identity_providers WHERE realm_id = $1 AND alias = $2", realmID, alias))
	if errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("identity provider %s: %w", alias, ErrNotFound)
	}
	return p, err
}

// ListIdentityProviders returns a realm's providers by alias.
func (s *Store) ListIdentityProviders(ctx context.Context, realmID string) ([]*IdentityProvider, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT "+identityProviderColumns+
		" FROM identity_providers WHERE realm_id = $1 ORDER BY alias", realmID)
	if err != nil {
		return nil, fmt.Errorf("list identity providers: %w", mapErr(err))
	}
	defer rows.Close()
	out := []*IdentityProvider{}
	for rows.Next() {
		p, err := s.scanIdentityProvider(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list identity providers: %w", mapErr(err))
	}
	return out, nil
}

// UpdateIdentityProvider writes every field of p but its ID, realm and
// creation time; a taken alias is ErrConflict.
func (s *Store) UpdateIdentityProvider(ctx context.Context, p *IdentityProvider) error {
	v := s.identityProviderValues(p)
	res, err := s.w.ExecContext(ctx, `UPDATE identity_providers SET alias = $1, display_name = $2, provider_type = $3,
		enabled = $4, client_id = $5, client_secret = $6, authorization_url = $7, token_url = $8, userinfo_url = $9,
		jwks_url = $10, issuer = $11, default_scopes = $12, trust_email = $13, sync_user_profile = $14, config = $15
		WHERE realm_id = $16 AND id = $17`, append(v[2:17], p.RealmID, p.ID)...)
	if err != nil {
		return fmt.Errorf("update identity provider %s: %w", p.Alias, mapErr(err))
	}
	return affectedOne(res, "identity provider "+p.Alias)
}

// DeleteIdentityProvider removes a provider with its users' links to it and
// its organization's SSO connection.
func (s *Store) DeleteIdentityProvider(ctx context.Context, realmID, id string) error {
	res, err := s.w.ExecContext(ctx, "DELETE FROM identity_providers WHERE realm_id = $1 AND id = $2", realmID, id)
	if err != nil {
		return fmt.Errorf("delete identity provider %s: %w", id, mapErr(err))
	}
	return affectedOne(res, "identity provider "+id)
}
