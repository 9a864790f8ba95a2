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
	Mappers     []*ProtocolMapper // filled (never nil) by the Get and List methods
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
	if m.Config == nil {
		m.Config = map[string]string{}
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

// queryScopes runs a scope query and fills in each scope's mappers. Both
// queries read one snapshot, so a scope never shows another moment's mappers.
func (s *Store) queryScopes(ctx context.Context, q string, args ...any) ([]*ClientScope, error) {
	var scopes []*ClientScope
	err := s.ReadTx(ctx, func(tx *Store) error {
		var err error
		if scopes, err = tx.scanScopes(ctx, q, args...); err != nil || len(scopes) == 0 {
			return err
		}
		return tx.fillMappers(ctx, scopes)
	})
	return scopes, err
}

func (s *Store) scanScopes(ctx context.Context, q string, args ...any) ([]*ClientScope, error) {
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list client scopes: %w", mapErr(err))
	}
	defer rows.Close()
	var scopes []*ClientScope
	for rows.Next() {
		c, err := scanScope(rows)
		if err != nil {
			return nil, err
		}
		scopes = append(scopes, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list client scopes: %w", mapErr(err))
	}
	return scopes, nil
}

// fillMappers loads the mappers of scopes, in name order, in one query.
func (s *Store) fillMappers(ctx context.Context, scopes []*ClientScope) error {
	byID := make(map[string]*ClientScope, len(scopes))
	ids := make([]any, len(scopes))
	for i, c := range scopes {
		byID[c.ID] = c
		ids[i] = c.ID
		c.Mappers = []*ProtocolMapper{}
	}
	rows, err := s.r.QueryContext(ctx, "SELECT "+mapperColumns+" FROM protocol_mappers WHERE scope_id IN ("+
		placeholders(len(ids))+") ORDER BY name, id", ids...)
	if err != nil {
		return fmt.Errorf("list mappers: %w", mapErr(err))
	}
	defer rows.Close()
	for rows.Next() {
		m, err := scanMapper(rows)
		if err != nil {
			return err
		}
		byID[m.ScopeID].Mappers = append(byID[m.ScopeID].Mappers, m)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("list mappers: %w", mapErr(err))
	}
	return nil
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
	return s.queryScopes(ctx, "SELECT "+scopeColumns+" FROM client_scopes WHERE realm_id = $1 ORDER BY name, id", realmID)
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

// encodeConfig stores a nil config as an empty object, so it reads back as one.
func encodeConfig(config map[string]string) (string, error) {
	if config == nil {
		config = map[string]string{}
	}
	b, err := json.Marshal(config)
	if err != nil {
		return "", fmt.Errorf("encode mapper config: %w", err)
	}
	return string(b), nil
}

// CreateMapper inserts m; a name taken in its scope is ErrConflict, and an
// unknown scope ErrNotFound.
func (s *Store) CreateMapper(ctx context.Context, m *ProtocolMapper) error {
	config, err := encodeConfig(m.Config)
	if err != nil {
		return err
	}
	_, err = s.w.ExecContext(ctx, "INSERT INTO protocol_mappers ("+mapperColumns+") VALUES ($1, $2, $3, $4, $5, $6, $7)",
		m.ID, m.ScopeID, m.Name, m.MapperType, m.Protocol, config, m.CreatedAt)
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
	config, err := encodeConfig(m.Config)
	if err != nil {
		return err
	}
	res, err := s.w.ExecContext(ctx, "UPDATE protocol_mappers SET name = $1, config = $2 WHERE scope_id = $3 AND id = $4",
		m.Name, config, m.ScopeID, m.ID)
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
// scope already assigned to the client, either way, is ErrConflict; a client
// and scope that are not both in one realm are ErrNotFound.
func (s *Store) LinkClientScope(ctx context.Context, clientID, scopeID, kind string) error {
	if kind != ScopeDefault && kind != ScopeOptional {
		return fmt.Errorf("assign client scope: kind %q is neither %s nor %s", kind, ScopeDefault, ScopeOptional)
	}
	// The join only yields a row when both exist in the same realm.
	res, err := s.w.ExecContext(ctx, `INSERT INTO client_scope_links (client_id, scope_id, kind)
		SELECT c.id, s.id, $3 FROM clients c JOIN client_scopes s ON s.realm_id = c.realm_id
		WHERE c.id = $1 AND s.id = $2`, clientID, scopeID, kind)
	if err != nil {
		return fmt.Errorf("assign client scope: %w", mapErr(err))
	}
	return affectedOne(res, "client "+clientID+" and client scope "+scopeID+" in one realm")
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
		ORDER BY c.name, c.id`, realmID, clientID, kind)
}
