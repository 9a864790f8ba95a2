package store

import (
	"context"
	"encoding/json"
	"fmt"
)

// Client is an application that asks the realm for tokens.
type Client struct {
	ID                               string // internal UUID
	RealmID                          string
	ClientID                         string // the public identifier, unique in the realm
	Name                             string
	Description                      string
	ClientType                       string // CONFIDENTIAL or PUBLIC
	Enabled                          bool
	RedirectURIs                     []string
	WebOrigins                       []string
	GrantTypes                       []string
	RequireConsent                   bool
	BackchannelLogoutURI             string
	BackchannelLogoutSessionRequired bool
	OmitIDTokenOnRefresh             bool   // a refresh answers with the access token alone
	SecretHash                       []byte // SHA-256 of the secret; nil for public clients
	CreatedAt                        int64
}

const clientColumns = `id, realm_id, client_id, name, description, client_type, enabled, redirect_uris, web_origins,
	grant_types, require_consent, backchannel_logout_uri, backchannel_logout_session_required, secret_hash, created_at, omit_id_token_on_refresh`

func jsonList(v []string) string {
	if v == nil {
		v = []string{}
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func clientValues(c *Client) []any {
	return []any{c.ID, c.RealmID, c.ClientID, c.Name, c.Description, c.ClientType, c.Enabled,
		jsonList(c.RedirectURIs), jsonList(c.WebOrigins), jsonList(c.GrantTypes), c.RequireConsent,
		c.BackchannelLogoutURI, c.BackchannelLogoutSessionRequired, c.SecretHash, c.CreatedAt, c.OmitIDTokenOnRefresh}
}

func scanClient(row scanner) (*Client, error) {
	var c Client
	var redirects, origins, grants string
	err := row.Scan(&c.ID, &c.RealmID, &c.ClientID, &c.Name, &c.Description, &c.ClientType, &c.Enabled,
		&redirects, &origins, &grants, &c.RequireConsent, &c.BackchannelLogoutURI,
		&c.BackchannelLogoutSessionRequired, &c.SecretHash, &c.CreatedAt, &c.OmitIDTokenOnRefresh)
	if err != nil {
		return nil, mapErr(err)
	}
	for _, f := range []struct {
		raw string
		dst *[]string
	}{{redirects, &c.RedirectURIs}, {origins, &c.WebOrigins}, {grants, &c.GrantTypes}} {
		if err := json.Unmarshal([]byte(f.raw), f.dst); err != nil {
			return nil, fmt.Errorf("decode client %s: %w", c.ClientID, err)
		}
	}
	return &c, nil
}

// CreateClient inserts c; a clientId taken in the realm is ErrConflict.
func (s *Store) CreateClient(ctx context.Context, c *Client) error {
	vals := clientValues(c)
	_, err := s.w.ExecContext(ctx, "INSERT INTO clients ("+clientColumns+") VALUES ("+placeholders(len(vals))+")", vals...)
	if err != nil {
		return fmt.Errorf("create client %s: %w", c.ClientID, mapErr(err))
	}
	return nil
}

// GetClient finds a client by its internal ID.
func (s *Store) GetClient(ctx context.Context, realmID, id string) (*Client, error) {
	c, err := scanClient(s.r.QueryRowContext(ctx,
		"SELECT "+clientColumns+" FROM clients WHERE realm_id = $1 AND id = $2", realmID, id))
	if err != nil {
		return nil, fmt.Errorf("client %s: %w", id, err)
	}
	return c, nil
}

// GetClientByClientID finds a client by its public clientId.
func (s *Store) GetClientByClientID(ctx context.Context, realmID, clientID string) (*Client, error) {
	c, err := scanClient(s.r.QueryRowContext(ctx,
		"SELECT "+clientColumns+" FROM clients WHERE realm_id = $1 AND client_id = $2", realmID, clientID))
	if err != nil {
		return nil, fmt.Errorf("client %s: %w", clientID, err)
	}
	return c, nil
}

// ListClients returns a realm's clients ordered by clientId.
func (s *Store) ListClients(ctx context.Context, realmID string) ([]*Client, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT "+clientColumns+" FROM clients WHERE realm_id = $1 ORDER BY client_id", realmID)
	if err != nil {
		return nil, fmt.Errorf("list clients: %w", mapErr(err))
	}
	defer rows.Close()
	var out []*Client
	for rows.Next() {
		c, err := scanClient(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, mapErr(rows.Err())
}

// UpdateClient writes every field of c except its IDs, realm, secret and
// creation time.
func (s *Store) UpdateClient(ctx context.Context, c *Client) error {
	res, err := s.w.ExecContext(ctx, `UPDATE clients SET client_id = $1, name = $2, description = $3, client_type = $4,
		enabled = $5, redirect_uris = $6, web_origins = $7, grant_types = $8, require_consent = $9,
		backchannel_logout_uri = $10, backchannel_logout_session_required = $11, omit_id_token_on_refresh = $12
		WHERE realm_id = $13 AND id = $14`,
		c.ClientID, c.Name, c.Description, c.ClientType, c.Enabled, jsonList(c.RedirectURIs), jsonList(c.WebOrigins),
		jsonList(c.GrantTypes), c.RequireConsent, c.BackchannelLogoutURI, c.BackchannelLogoutSessionRequired,
		c.OmitIDTokenOnRefresh, c.RealmID, c.ID)
	if err != nil {
		return fmt.Errorf("update client %s: %w", c.ClientID, mapErr(err))
	}
	return affectedOne(res, "client "+c.ClientID)
}

// SetClientSecretHash replaces a client's secret hash (nil removes it).
func (s *Store) SetClientSecretHash(ctx context.Context, realmID, id string, hash []byte) error {
	res, err := s.w.ExecContext(ctx, "UPDATE clients SET secret_hash = $1 WHERE realm_id = $2 AND id = $3", hash, realmID, id)
	if err != nil {
		return fmt.Errorf("set secret of client %s: %w", id, mapErr(err))
	}
	return affectedOne(res, "client "+id)
}

// DeleteClient removes a client with its roles, scope links and service account.
func (s *Store) DeleteClient(ctx context.Context, realmID, id string) error {
	res, err := s.w.ExecContext(ctx, "DELETE FROM clients WHERE realm_id = $1 AND id = $2", realmID, id)
	if err != nil {
		return fmt.Errorf("delete client %s: %w", id, mapErr(err))
	}
	return affectedOne(res, "client "+id)
}

// GetServiceAccountUser finds the user a client acts as.
func (s *Store) GetServiceAccountUser(ctx context.Context, clientID string) (*User, error) {
	u, err := scanUser(s.r.QueryRowContext(ctx,
		"SELECT "+userColumns+" FROM users WHERE service_account_client_id = $1", clientID))
	if err != nil {
		return nil, fmt.Errorf("service account of client %s: %w", clientID, err)
	}
	return u, nil
}
