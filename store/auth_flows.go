package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// AuthFlow is an authentication flow of a realm: how its users sign in.
// The store keeps its steps as the JSON the caller gives (a list of
// app/signin.DefinitionStep), without reading them.
type AuthFlow struct {
	ID          string
	RealmID     string
	Alias       string // unique in the realm
	Description string
	Usage       string // browser, direct-grant, device
	Steps       string // JSON array
	BuiltIn     bool
	CreatedAt   int64 // Unix milliseconds
	UpdatedAt   int64
}

// The kinds of client a flow is bound to.
const (
	ClientKindOIDC = "oidc" // an OpenID Connect client
	ClientKindSAML = "saml" // a SAML service provider
)

// FlowBinding says that a client's sign-ins of a usage follow a flow.
type FlowBinding struct {
	RealmID    string
	ClientKind string // ClientKindOIDC or ClientKindSAML
	ClientID   string // the client's or service provider's internal ID
	// ClientName is the OIDC client's clientId or the service provider's
	// entity ID; read, never written.
	ClientName string
	Usage      string
	FlowID     string
}

// FlowInUseError refuses to remove a flow that clients' sign-ins follow.
type FlowInUseError struct {
	Bindings []*FlowBinding
}

func (e *FlowInUseError) Error() string {
	names := make([]string, len(e.Bindings))
	for i, b := range e.Bindings {
		names[i] = b.ClientName
	}
	return fmt.Sprintf("%v: the flow is bound to %s", ErrConflict, strings.Join(names, ", "))
}

func (e *FlowInUseError) Is(target error) bool { return target == ErrConflict }

const authFlowColumns = "id, realm_id, alias, description, usage, steps, built_in, created_at, updated_at"

func scanAuthFlow(row scanner) (*AuthFlow, error) {
	var f AuthFlow
	if err := row.Scan(&f.ID, &f.RealmID, &f.Alias, &f.Description, &f.Usage, &f.Steps, &f.BuiltIn,
		&f.CreatedAt, &f.UpdatedAt); err != nil {
		return nil, mapErr(err)
	}
	return &f, nil
}

// CreateAuthFlow inserts f; an alias taken in the realm is a
// *ConflictError on "alias".
func (s *Store) CreateAuthFlow(ctx context.Context, f *AuthFlow) error {
	_, err := s.w.ExecContext(ctx, "INSERT INTO auth_flows ("+authFlowColumns+") VALUES ("+placeholders(9)+")",
		f.ID, f.RealmID, f.Alias, f.Description, f.Usage, f.Steps, f.BuiltIn, f.CreatedAt, f.UpdatedAt)
	if err != nil {
		return fmt.Errorf("create auth flow %s: %w", f.Alias, mapErr(err))
	}
	return nil
}

// GetAuthFlow finds a realm's flow by ID.
func (s *Store) GetAuthFlow(ctx context.Context, realmID, id string) (*AuthFlow, error) {
	f, err := scanAuthFlow(s.r.QueryRowContext(ctx,
		"SELECT "+authFlowColumns+" FROM auth_flows WHERE realm_id = $1 AND id = $2", realmID, id))
	if err != nil {
		return nil, fmt.Errorf("auth flow %s: %w", id, err)
	}
	return f, nil
}

// GetAuthFlowByAlias finds a realm's flow by alias.
func (s *Store) GetAuthFlowByAlias(ctx context.Context, realmID, alias string) (*AuthFlow, error) {
	f, err := scanAuthFlow(s.r.QueryRowContext(ctx,
		"SELECT "+authFlowColumns+" FROM auth_flows WHERE realm_id = $1 AND alias = $2", realmID, alias))
	if err != nil {
		return nil, fmt.Errorf("auth flow %s: %w", alias, err)
	}
	return f, nil
}

// ListAuthFlows returns a realm's flows by alias.
func (s *Store) ListAuthFlows(ctx context.Context, realmID string) ([]*AuthFlow, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT "+authFlowColumns+" FROM auth_flows WHERE realm_id = $1 ORDER BY alias", realmID)
	if err != nil {
		return nil, fmt.Errorf("list auth flows: %w", mapErr(err))
	}
	defer rows.Close()
	var out []*AuthFlow
	for rows.Next() {
		f, err := scanAuthFlow(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, mapErr(rows.Err())
}

// UpdateAuthFlow writes every field of f but its realm, ID and creation
// time; an alias taken by another flow of the realm is a *ConflictError
// on "alias".
func (s *Store) UpdateAuthFlow(ctx context.Context, f *AuthFlow) error {
	res, err := s.w.ExecContext(ctx, `UPDATE auth_flows SET alias = $3, description = $4, usage = $5, steps = $6,
		built_in = $7, updated_at = $8 WHERE realm_id = $1 AND id = $2`,
		f.RealmID, f.ID, f.Alias, f.Description, f.Usage, f.Steps, f.BuiltIn, f.UpdatedAt)
	if err != nil {
		return fmt.Errorf("update auth flow %s: %w", f.Alias, mapErr(err))
	}
	return affectedOne(res, "auth flow "+f.ID)
}

// DeleteAuthFlow removes a realm's flow; one that a client's sign-ins
// follow is refused with a *FlowInUseError naming them.
func (s *Store) DeleteAuthFlow(ctx context.Context, realmID, id string) error {
	return s.Tx(ctx, func(tx *Store) error {
		bound, err := tx.FlowBindings(ctx, realmID, id)
		if err != nil {
			return err
		}
		if len(bound) > 0 {
			return fmt.Errorf("delete auth flow %s: %w", id, &FlowInUseError{Bindings: bound})
		}
		res, err := tx.w.ExecContext(ctx, "DELETE FROM auth_flows WHERE realm_id = $1 AND id = $2", realmID, id)
		if err != nil {
			return fmt.Errorf("delete auth flow %s: %w", id, mapErr(err))
		}
		return affectedOne(res, "auth flow "+id)
	})
}

const flowBindingSelect = `SELECT b.realm_id, b.client_kind, COALESCE(b.oidc_client, b.saml_sp),
	COALESCE(c.client_id, sp.entity_id), b.usage, b.flow_id
	FROM auth_flow_bindings b
	LEFT JOIN clients c ON c.id = b.oidc_client
	LEFT JOIN saml_service_providers sp ON sp.id = b.saml_sp`

func (s *Store) queryFlowBindings(ctx context.Context, where string, args ...any) ([]*FlowBinding, error) {
	rows, err := s.r.QueryContext(ctx, flowBindingSelect+" WHERE "+where+" ORDER BY b.client_kind, 4, b.usage", args...)
	if err != nil {
		return nil, fmt.Errorf("list flow bindings: %w", mapErr(err))
	}
	defer rows.Close()
	var out []*FlowBinding
	for rows.Next() {
		var b FlowBinding
		if err := rows.Scan(&b.RealmID, &b.ClientKind, &b.ClientID, &b.ClientName, &b.Usage, &b.FlowID); err != nil {
			return nil, mapErr(err)
		}
		out = append(out, &b)
	}
	return out, mapErr(rows.Err())
}

// FlowBindings returns the bindings of a realm's flow, OIDC clients first,
// then service providers, each by name.
func (s *Store) FlowBindings(ctx context.Context, realmID, flowID string) ([]*FlowBinding, error) {
	return s.queryFlowBindings(ctx, "b.realm_id = $1 AND b.flow_id = $2", realmID, flowID)
}

// RealmFlowBindings returns every binding of a realm.
func (s *Store) RealmFlowBindings(ctx context.Context, realmID string) ([]*FlowBinding, error) {
	return s.queryFlowBindings(ctx, "b.realm_id = $1", realmID)
}

// BindFlow makes the client's sign-ins of b.Usage follow b.FlowID,
// replacing the flow they followed. The client and the flow must be of
// b.RealmID: another realm's, or none, is ErrNotFound.
func (s *Store) BindFlow(ctx context.Context, b *FlowBinding) error {
	var oidc, saml any
	var owner string
	switch b.ClientKind {
	case ClientKindOIDC:
		oidc, owner = b.ClientID, "SELECT realm_id FROM clients WHERE id = $1"
	case ClientKindSAML:
		saml, owner = b.ClientID, "SELECT realm_id FROM saml_service_providers WHERE id = $1"
	default:
		return fmt.Errorf("bind flow: client kind %q", b.ClientKind)
	}
	return s.Tx(ctx, func(tx *Store) error {
		var realmID string
		if err := tx.r.QueryRowContext(ctx, owner, b.ClientID).Scan(&realmID); err != nil || realmID != b.RealmID {
			return fmt.Errorf("bind flow: client %s: %w", b.ClientID, ErrNotFound)
		}
		if _, err := tx.GetAuthFlow(ctx, b.RealmID, b.FlowID); err != nil {
			return fmt.Errorf("bind flow: %w", err)
		}
		column := "oidc_client"
		if saml != nil {
			column = "saml_sp"
		}
		if _, err := tx.w.ExecContext(ctx, "DELETE FROM auth_flow_bindings WHERE "+column+" = $1 AND usage = $2",
			b.ClientID, b.Usage); err != nil {
			return fmt.Errorf("bind flow: %w", mapErr(err))
		}
		_, err := tx.w.ExecContext(ctx, `INSERT INTO auth_flow_bindings (realm_id, client_kind, oidc_client, saml_sp, usage, flow_id)
			VALUES ($1, $2, $3, $4, $5, $6)`, b.RealmID, b.ClientKind, oidc, saml, b.Usage, b.FlowID)
		if err != nil {
			return fmt.Errorf("bind flow: %w", mapErr(err))
		}
		return nil
	})
}

// FlowForClient returns the flow a client's sign-ins of usage follow, or
// ErrNotFound when none is bound: the sign-in then behaves as the
// built-in flows say.
func (s *Store) FlowForClient(ctx context.Context, realmID, clientKind, clientID, usage string) (*AuthFlow, error) {
	column := "oidc_client"
	switch clientKind {
	case ClientKindOIDC:
	case ClientKindSAML:
		column = "saml_sp"
	default:
		return nil, fmt.Errorf("flow for client %s: kind %q: %w", clientID, clientKind, ErrNotFound)
	}
	f, err := scanAuthFlow(s.r.QueryRowContext(ctx, "SELECT "+prefixed("f.", authFlowColumns)+
		" FROM auth_flow_bindings b JOIN auth_flows f ON f.id = b.flow_id WHERE b.realm_id = $1 AND b."+column+
		" = $2 AND b.usage = $3", realmID, clientID, usage))
	if errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("flow for client %s (%s): %w", clientID, usage, ErrNotFound)
	}
	return f, err
}

// prefixed qualifies each column of a comma-separated list with p.
func prefixed(p, columns string) string {
	cols := strings.Split(columns, ",")
	for i, c := range cols {
		cols[i] = p + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}
