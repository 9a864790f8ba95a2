package app

import (
	"context"
	"net/http"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
)

// mappingScope says which of a holder's roles a role-mappings path covers.
type mappingScope int

const (
	realmScope  mappingScope = iota // .../role-mappings/realm: realm roles
	clientScope                     // .../role-mappings/clients/{clientId}: that client's roles
	allScope                        // .../role-mappings: every direct mapping; writes name realm roles
)

// roleHolder is a user or a group whose role mappings a request addresses.
type roleHolder struct {
	realm     *store.Realm
	mappings  store.RoleHolder
	effective func(ctx context.Context) ([]*store.Role, error)
}

type roleHolderLoader func(r *http.Request) (*roleHolder, error)

func (a *App) userRoleHolder(r *http.Request) (*roleHolder, error) {
	realm, u, err := a.user(r)
	if err != nil {
		return nil, err
	}
	return &roleHolder{realm, store.UserRoles(u.ID), func(ctx context.Context) ([]*store.Role, error) {
		return a.store.EffectiveRoles(ctx, u.ID)
	}}, nil
}

func (a *App) groupRoleHolder(r *http.Request) (*roleHolder, error) {
	realm, g, err := a.group(r)
	if err != nil {
		return nil, err
	}
	return &roleHolder{realm, store.GroupRoles(g.ID), func(ctx context.Context) ([]*store.Role, error) {
		return a.store.EffectiveGroupRoles(ctx, g.ID)
	}}, nil
}

// mappingRequest is a role-mappings request with its holder and scope loaded.
type mappingRequest struct {
	holder *roleHolder
	scope  mappingScope
	client *store.Client // the path's client, for clientScope
}

// loadMapping loads the holder, then the client the path names: an unknown
// realm, holder or client is a 404, in that order.
func (a *App) loadMapping(r *http.Request, load roleHolderLoader, scope mappingScope) (*mappingRequest, error) {
	h, err := load(r)
	if err != nil {
		return nil, err
	}
	m := &mappingRequest{holder: h, scope: scope}
	if scope == clientScope {
		if _, m.client, err = a.client(r); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// listFilter is the store's name for the scope: "" realm roles, a client's
// internal ID, or "*" for all.
func (m *mappingRequest) listFilter() string {
	switch m.scope {
	case clientScope:
		return m.client.ID
	case allScope:
		return "*"
	}
	return ""
}

// container is where the roles a write names live.
func (m *mappingRequest) container() roleContainer {
	return roleContainer{realm: m.holder.realm, client: m.client}
}

func (a *App) listRoleMappings(load roleHolderLoader, scope mappingScope) httpx.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		m, err := a.loadMapping(r, load, scope)
		if err != nil {
			return err
		}
		roles, err := a.store.ListRoleMappings(r.Context(), m.holder.mappings, m.listFilter())
		if err != nil {
			return err
		}
		return httpx.List(w, roles, toRoleRep)
	}
}

// roleNamesBody is the spec's role assignment body.
type roleNamesBody struct {
	RoleNames []string `json:"roleNames"`
}

func decodeRoleNames(r *http.Request) ([]string, error) {
	var body roleNamesBody
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return nil, err
	}
	switch {
	case body.RoleNames == nil:
		return nil, apperr.Field("roleNames", "is required")
	case len(body.RoleNames) == 0:
		return nil, apperr.Field("roleNames", "must name at least one role")
	}
	return body.RoleNames, nil
}

// changeRoleMappings maps or unmaps the named roles, all or nothing, and
// answers the holder's direct mappings of the path's scope after the
// change. Mapping a mapped role or unmapping an unmapped one is no error.
func (a *App) changeRoleMappings(load roleHolderLoader, scope mappingScope, add bool) httpx.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		m, err := a.loadMapping(r, load, scope)
		if err != nil {
			return err
		}
		names, err := decodeRoleNames(r)
		if err != nil {
			return err
		}
		var after []*store.Role
		err = a.store.Tx(r.Context(), func(tx *store.Store) error {
			roles, err := resolveRoleNames(r.Context(), tx, m.container(), "roleNames", names)
			if err != nil {
				return err
			}
			ids := make([]string, len(roles))
			for i, role := range roles {
				ids[i] = role.ID
			}
			if add {
				err = tx.AddRoleMappings(r.Context(), m.holder.mappings, ids)
			} else {
				err = tx.RemoveRoleMappings(r.Context(), m.holder.mappings, ids)
			}
			if err != nil {
				return err
			}
			after, err = tx.ListRoleMappings(r.Context(), m.holder.mappings, m.listFilter())
			return err
		})
		if err != nil {
			return err
		}
		return httpx.List(w, after, toRoleRep)
	}
}

// listEffectiveRoles answers every role of the scope the holder has:
// directly, through groups and their ancestors, and through composites.
func (a *App) listEffectiveRoles(load roleHolderLoader, scope mappingScope) httpx.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		m, err := a.loadMapping(r, load, scope)
		if err != nil {
			return err
		}
		all, err := m.holder.effective(r.Context())
		if err != nil {
			return err
		}
		want := m.container().clientID()
		roles := make([]*store.Role, 0, len(all))
		for _, role := range all {
			if role.ClientID == want {
				roles = append(roles, role)
			}
		}
		return httpx.List(w, roles, toRoleRep)
	}
}
