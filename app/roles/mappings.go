package roles

import (
	"context"
	"net/http"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
)

// Holder is whose role mappings a path addresses.
type Holder int

const (
	UserHolder  Holder = iota // .../users/{userId}/role-mappings
	GroupHolder               // .../groups/{groupId}/role-mappings
)

// Scope says which of a holder's roles a role-mappings path covers.
type Scope int

const (
	RealmScope  Scope = iota // .../role-mappings/realm: realm roles
	ClientScope              // .../role-mappings/clients/{clientId}: that client's roles
	AllScope                 // .../role-mappings: every direct mapping; writes name realm roles
)

// roleHolder is a user or a group whose role mappings a request addresses.
type roleHolder struct {
	realm     *store.Realm
	mappings  store.RoleHolder
	effective func(ctx context.Context) ([]*store.Role, error)
}

// holder loads the realm, then the user or group the path names.
func (s *Service) holder(r *http.Request, h Holder) (*roleHolder, error) {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return nil, err
	}
	st := s.deps.Store
	if h == GroupHolder {
		g, err := httpx.ChildOf(r, realm.ID, "groupId", "group", st.GetGroup)
		if err != nil {
			return nil, err
		}
		return &roleHolder{realm, store.GroupRoles(g.ID), func(ctx context.Context) ([]*store.Role, error) {
			return st.EffectiveGroupRoles(ctx, g.ID)
		}}, nil
	}
	u, err := httpx.ChildOf(r, realm.ID, "userId", "user", st.GetUser)
	if err != nil {
		return nil, err
	}
	return &roleHolder{realm, store.UserRoles(u.ID), func(ctx context.Context) ([]*store.Role, error) {
		return st.EffectiveRoles(ctx, u.ID)
	}}, nil
}

// mappingRequest is a role-mappings request with its holder and scope loaded.
type mappingRequest struct {
	holder *roleHolder
	scope  Scope
	client *store.Client // the path's client, for ClientScope
}

// loadMapping loads the holder, then the client the path names: an unknown
// realm, holder or client is a 404, in that order.
func (s *Service) loadMapping(r *http.Request, h Holder, scope Scope) (*mappingRequest, error) {
	holder, err := s.holder(r, h)
	if err != nil {
		return nil, err
	}
	m := &mappingRequest{holder: holder, scope: scope}
	if scope == ClientScope {
		if m.client, err = s.client(r, holder.realm); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// listFilter is the store's name for the scope: "" realm roles, a client's
// internal ID, or "*" for all.
func (m *mappingRequest) listFilter() string {
	switch m.scope {
	case ClientScope:
		return m.client.ID
	case AllScope:
		return "*"
	}
	return ""
}

// container is where the roles a write names live.
func (m *mappingRequest) container() roleContainer {
	return roleContainer{realm: m.holder.realm, client: m.client}
}

// ListMappings answers GET on a holder's role-mappings path of scope: its
// direct mappings.
func (s *Service) ListMappings(h Holder, scope Scope) httpx.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		m, err := s.loadMapping(r, h, scope)
		if err != nil {
			return err
		}
		roles, err := s.deps.Store.ListRoleMappings(r.Context(), m.holder.mappings, m.listFilter())
		if err != nil {
			return err
		}
		return httpx.List(w, roles, toRoleRep)
	}
}

// RoleNamesBody is the spec's role assignment body.
type RoleNamesBody struct {
	RoleNames []string `json:"roleNames"`
}

func decodeRoleNames(r *http.Request) ([]string, error) {
	var body RoleNamesBody
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

// MapRoles answers POST on a holder's role-mappings path of scope.
func (s *Service) MapRoles(h Holder, scope Scope) httpx.HandlerFunc {
	return s.changeMappings(h, scope, true)
}

// UnmapRoles answers DELETE on a holder's role-mappings path of scope.
func (s *Service) UnmapRoles(h Holder, scope Scope) httpx.HandlerFunc {
	return s.changeMappings(h, scope, false)
}

// changeMappings maps or unmaps the named roles, all or nothing, and
// answers the holder's direct mappings of the path's scope after the
// change. Mapping a mapped role or unmapping an unmapped one is no error.
func (s *Service) changeMappings(h Holder, scope Scope, add bool) httpx.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		m, err := s.loadMapping(r, h, scope)
		if err != nil {
			return err
		}
		names, err := decodeRoleNames(r)
		if err != nil {
			return err
		}
		var after []*store.Role
		err = s.deps.Store.Tx(r.Context(), func(tx *store.Store) error {
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

// ListEffectiveRoles answers GET on a holder's role-mappings path of scope
// with /composite: every role of the scope the holder has, directly,
// through groups and their ancestors, and through composites.
func (s *Service) ListEffectiveRoles(h Holder, scope Scope) httpx.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		m, err := s.loadMapping(r, h, scope)
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
