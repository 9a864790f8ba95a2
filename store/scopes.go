package store

import (
	"context"
	"encoding/json"
	"fmt"
)

// ClientScope is a named bundle of protocol mappers a client can request.
type ClientScope struct {
	ID          string
	RealmID     string
	Name        string
	Description string
	Protocol    string
	CreatedAt   int64
	Mappers     []*ProtocolMapper // filled by the Get and List methods
}

// ProtocolMapper turns user data into one claim of a token.
type ProtocolMapper struct {
	ID         string
	ScopeID    string
	Name       string
	MapperType string
	Protocol   string
	Config     map[string]string
	CreatedAt  int64
}

const (
	scopeColumns  = "id, realm_id, name, description, protocol, created_at"
	mapperColumns = "id, scope_id, name, mapper_type, protocol, config, created_at"
)

// Scope link kinds: default scopes always apply, optional ones on request.
const (
	ScopeDefault  = "default"
	ScopeOptional = "optional"
)

func scanScope(row scanner) (*ClientScope, error) {
	var c ClientScope
	if err := row.Scan(&c.ID, &c.RealmID, &c.Name, &c.Description, &c.Protocol, &c.CreatedAt); err != nil {
		return nil, mapErr(err)
	}
	return &c, nil
}

func scanMapper(row scanner) (*ProtocolMapper, error) {
	var m ProtocolMapper
	var config string
	if err := row.Scan(&m.ID, &m.ScopeID, &m.Name, &m.MapperType, &m.Protocol, &config, &m.CreatedAt); err != nil {
		return nil, mapErr(err)
	}
	if err := json.Unmarshal([]byte(config), &m.Config); err != nil {
		return nil, fmt.Errorf("decode mapper %s config: %w", m.Name, err)
	}
	return &m, nil
}

// CreateClientScope inserts c and its mappers; a taken name is ErrConflict.
func (s *Store) CreateClientScope(ctx context.Context, c *ClientScope) error {
	return s.Tx(ctx, func(tx *Store) error {
		_, err := tx.w.ExecContext(ctx, "INSERT INTO client_scopes ("+scopeColumns+") VALUES ($1, $2, $3, $4, $5, $6)",
			c.ID, c.RealmID, c.Name, c.Description, c.Protocol, c.CreatedAt)
		if err != nil {
			return fmt.Errorf("create client scope %s: %w", c.Name, mapErr(err))
		}
		for _, m := range c.Mappers {
			if err := tx.CreateMapper(ctx, m); err != nil {
				return err
			}
		}
		return nil
	})
}

// queryScopes runs a scope query and fills in each scope's mappers.
func (s *Store) queryScopes(ctx context.Context, q string, args ...any) ([]*ClientScope, error) {
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list client scopes: %w", mapErr(err))
	}
	var scopes []*ClientScope
	byID := map[string]*ClientScope{}
	for rows.Next() {
		c, err := scanScope(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		scopes = append(scopes, c)
		byID[c.ID] = c
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(scopes) == 0 {
		return scopes, mapErr(err)
	}
	// One query for the mappers of every scope of the realm.
	mrows, err := s.r.QueryContext(ctx, `SELECT `+prefixColumns("m", mapperColumns)+` FROM protocol_mappers m
		JOIN client_scopes c ON c.id = m.scope_id WHERE c.realm_id = $1 ORDER BY m.name`, scopes[0].RealmID)
	if err != nil {
		return nil, fmt.Errorf("list mappers: %w", mapErr(err))
	}
	defer mrows.Close()
	for mrows.Next() {
		m, err := scanMapper(mrows)
		if err != nil {
			return nil, err
		}
		if c, ok := byID[m.ScopeID]; ok {
			c.Mappers = append(c.Mappers, m)
		}
	}
	return scopes, mapErr(mrows.Err())
}

// GetClientScope finds a scope by ID, with its mappers.
func (s *Store) GetClientScope(ctx context.Context, realmID, id string) (*ClientScope, error) {
	scopes, err := s.queryScopes(ctx, "SELECT "+scopeColumns+" FROM client_scopes WHERE realm_id = $1 AND id = $2", realmID, id)
	if err != nil {
		return nil, err
	}
	if len(scopes) == 0 {
		return nil, fmt.Errorf("client scope %s: %w", id, ErrNotFound)
	}
	return scopes[0], nil
}

// ListClientScopes returns a realm's scopes by name, with their mappers.
func (s *Store) ListClientScopes(ctx context.Context, realmID string) ([]*ClientScope, error) {
	return s.queryScopes(ctx, "SELECT "+scopeColumns+" FROM client_scopes WHERE realm_id = $1 ORDER BY name", realmID)
}

// UpdateClientScope writes a scope's name, description and protocol.
func (s *Store) UpdateClientScope(ctx context.Context, c *ClientScope) error {
	res, err := s.w.ExecContext(ctx, `UPDATE client_scopes SET name = $1, description = $2, protocol = $3
		WHERE realm_id = $4 AND id = $5`, c.Name, c.Description, c.Protocol, c.RealmID, c.ID)
	if err != nil {
		return fmt.Errorf("update client scope %s: %w", c.Name, mapErr(err))
	}
	return affectedOne(res, "client scope "+c.ID)
}

// DeleteClientScope removes a scope, its mappers and its client links.
func (s *Store) DeleteClientScope(ctx context.Context, realmID, id string) error {
	res, err := s.w.ExecContext(ctx, "DELETE FROM client_scopes WHERE realm_id = $1 AND id = $2", realmID, id)
	if err != nil {
		return fmt.Errorf("delete client scope %s: %w", id, mapErr(err))
	}
	return affectedOne(res, "client scope "+id)
}

// CreateMapper inserts m; a name taken in its scope is ErrConflict.
func (s *Store) CreateMapper(ctx context.Context, m *ProtocolMapper) error {
	config, err := json.Marshal(m.Config)
	if err != nil {
		return fmt.Errorf("encode mapper config: %w", err)
	}
	if m.Config == nil {
		config = []byte("{}")
	}
	_, err = s.w.ExecContext(ctx, "INSERT INTO protocol_mappers ("+mapperColumns+") VALUES ($1, $2, $3, $4, $5, $6, $7)",
		m.ID, m.ScopeID, m.Name, m.MapperType, m.Protocol, string(config), m.CreatedAt)
	if err != nil {
		return fmt.Errorf("create mapper %s: %w", m.Name, mapErr(err))
	}
	return nil
}

// GetMapper finds a mapper of a scope.
func (s *Store) GetMapper(ctx context.Context, scopeID, id string) (*ProtocolMapper, error) {
	m, err := scanMapper(s.r.QueryRowContext(ctx,
		"SELECT "+mapperColumns+" FROM protocol_mappers WHERE scope_id = $1 AND id = $2", scopeID, id))
	if err != nil {
		return nil, fmt.Errorf("mapper %s: %w", id, err)
	}
	return m, nil
}

// UpdateMapper writes a mapper's name and config.
func (s *Store) UpdateMapper(ctx context.Context, m *ProtocolMapper) error {
	config, err := json.Marshal(m.Config)
	if err != nil {
		return fmt.Errorf("encode mapper config: %w", err)
	}
	res, err := s.w.ExecContext(ctx, "UPDATE protocol_mappers SET name = $1, config = $2 WHERE scope_id = $3 AND id = $4",
		m.Name, string(config), m.ScopeID, m.ID)
	if err != nil {
		return fmt.Errorf("update mapper %s: %w", m.Name, mapErr(err))
	}
	return affectedOne(res, "mapper "+m.ID)
}

// DeleteMapper removes a mapper.
func (s *Store) DeleteMapper(ctx context.Context, scopeID, id string) error {
	res, err := s.w.ExecContext(ctx, "DELETE FROM protocol_mappers WHERE scope_id = $1 AND id = $2", scopeID, id)
	if err != nil {
		return fmt.Errorf("delete mapper %s: %w", id, mapErr(err))
	}
	return affectedOne(res, "mapper "+id)
}

// LinkClientScope assigns a scope to a client as default or optional. A
// scope already assigned to the client, either way, is ErrConflict.
func (s *Store) LinkClientScope(ctx context.Context, clientID, scopeID, kind string) error {
	_, err := s.w.ExecContext(ctx, "INSERT INTO client_scope_links (client_id, scope_id, kind) VALUES ($1, $2, $3)",
		clientID, scopeID, kind)
	if err != nil {
		return fmt.Errorf("assign client scope: %w", mapErr(err))
	}
	return nil
}

// UnlinkClientScope removes a scope assignment of the given kind.
func (s *Store) UnlinkClientScope(ctx context.Context, clientID, scopeID, kind string) error {
	res, err := s.w.ExecContext(ctx, "DELETE FROM client_scope_links WHERE client_id = $1 AND scope_id = $2 AND kind = $3",
		clientID, scopeID, kind)
	if err != nil {
		return fmt.Errorf("remove client scope: %w", mapErr(err))
	}
	return affectedOne(res, kind+" scope "+scopeID+" of client "+clientID)
}

// ListLinkedScopes returns a client's default or optional scopes, with mappers.
func (s *Store) ListLinkedScopes(ctx context.Context, realmID, clientID, kind string) ([]*ClientScope, error) {
	return s.queryScopes(ctx, `SELECT `+prefixColumns("c", scopeColumns)+` FROM client_scopes c
		JOIN client_scope_links l ON l.scope_id = c.id WHERE c.realm_id = $1 AND l.client_id = $2 AND l.kind = $3
		ORDER BY c.name`, realmID, clientID, kind)
}
