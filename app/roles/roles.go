// Package roles is the admin API of realm and client roles, their
// composites, and the role mappings of users and groups. Tokens read what
// a role grants through the token endpoints' caches; every write here moves
// the store's generation, which is what makes those caches read again.
package roles

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/validate"
	"github.com/idenplane/idenplane/store"
)

const (
	maxRoleNameLength        = 255
	maxRoleDescriptionLength = 255
)

// Deps is what the roles area uses.
type Deps struct {
	Store *store.Store
	Now   func() time.Time
	// Realm is the realm the request's path names, or the not-found error.
	Realm func(r *http.Request) (*store.Realm, error)
	// BaseURL is the server's external address, for the Location of a new
	// role.
	BaseURL string
}

// Service is the roles area: the admin API's handlers.
type Service struct{ deps Deps }

// New builds the roles area.
func New(d Deps) *Service { return &Service{deps: d} }

// RoleRep is a role as the API shows it. containerId is the realm's ID for
// a realm role and the client's internal ID for a client role, as in
// Keycloak; clientId is the owning client's public ID.
type RoleRep struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Composite   bool   `json:"composite"`
	ClientRole  bool   `json:"clientRole"`
	ContainerID string `json:"containerId"`
	ClientID    string `json:"clientId,omitempty"`
}

func toRoleRep(r *store.Role) RoleRep {
	rep := RoleRep{ID: r.ID, Name: r.Name, Description: r.Description, Composite: r.Composite,
		ContainerID: r.RealmID, ClientID: r.ClientClientID}
	if r.ClientID != "" {
		rep.ClientRole, rep.ContainerID = true, r.ClientID
	}
	return rep
}

// roleLabel names a role in error descriptions.
func roleLabel(r *store.Role) string {
	if r.ClientID != "" {
		return fmt.Sprintf("client role %q of %s", r.Name, r.ClientClientID)
	}
	return fmt.Sprintf("realm role %q", r.Name)
}

// roleContainer is where the roles of a request live: a realm, or one of
// its clients.
type roleContainer struct {
	realm  *store.Realm
	client *store.Client // nil for realm roles
}

// clientID is the container's client's internal ID, "" for the realm.
func (c roleContainer) clientID() string {
	if c.client == nil {
		return ""
	}
	return c.client.ID
}

func (c roleContainer) describe() string {
	if c.client == nil {
		return "realm " + c.realm.Name
	}
	return "client " + c.client.ClientID
}

// container loads the realm, and the client when the path names one.
func (s *Service) container(r *http.Request) (roleContainer, error) {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return roleContainer{}, err
	}
	if _, ok := mux.Vars(r)["clientId"]; !ok {
		return roleContainer{realm: realm}, nil
	}
	client, err := s.client(r, realm)
	return roleContainer{realm, client}, err
}

// client loads the client the path's {clientId} names in realm.
func (s *Service) client(r *http.Request, realm *store.Realm) (*store.Client, error) {
	return httpx.ChildOf(r, realm.ID, "clientId", "client", s.deps.Store.GetClientByClientID)
}

// role loads the container and the role named by {roleName} in the path.
func (s *Service) role(r *http.Request) (roleContainer, *store.Role, error) {
	c, err := s.container(r)
	if err != nil {
		return c, nil, err
	}
	name := mux.Vars(r)["roleName"]
	role, err := s.deps.Store.GetRole(r.Context(), c.realm.ID, c.clientID(), name)
	if errors.Is(err, store.ErrNotFound) {
		return c, nil, apperr.NotFound(fmt.Sprintf("role %q of %s", name, c.describe()))
	}
	return c, role, err
}

// Validate checks a role's name and description, for the admin API and
// realm import alike. Names must stay addressable as one path segment: no
// "/", and not "." or "..", which paths lose when cleaned.
func Validate(r *store.Role) error {
	switch {
	case r.Name == "":
		return apperr.Field("name", "must not be empty")
	case strings.TrimSpace(r.Name) != r.Name:
		return apperr.Field("name", "must not start or end with spaces")
	case strings.Contains(r.Name, "/"):
		return apperr.Field("name", "must not contain /")
	case r.Name == "." || r.Name == "..":
		return apperr.Field("name", "must not be %q", r.Name)
	}
	if err := validate.Identifier("name", r.Name, maxRoleNameLength); err != nil {
		return err
	}
	return validate.Text("description", r.Description, maxRoleDescriptionLength)
}

func roleConflict(err error, c roleContainer, name string) error {
	var ce *store.ConflictError
	if errors.As(err, &ce) && ce.Column == "name" {
		return &apperr.Error{Status: http.StatusConflict, Code: apperr.CodeConflict, Field: "name",
			Message: fmt.Sprintf("%s already has a role named %q", c.describe(), name), Cause: err}
	}
	return err
}

// RoleCreate is the body of a new role.
type RoleCreate struct {
	Name        *string `json:"name"`
	Description *string `json:"description"`
}

// CreateRole answers POST .../roles.
func (s *Service) CreateRole(w http.ResponseWriter, r *http.Request) error {
	c, err := s.container(r)
	if err != nil {
		return err
	}
	var body RoleCreate
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.Name == nil {
		return apperr.Field("name", "is required")
	}
	role := store.Role{ID: uuid.NewString(), RealmID: c.realm.ID, ClientID: c.clientID(), CreatedAt: s.deps.Now().UnixMilli()}
	if c.client != nil {
		role.ClientClientID = c.client.ClientID
	}
	role.Name = *body.Name
	if body.Description != nil {
		role.Description = *body.Description
	}
	if err := Validate(&role); err != nil {
		return err
	}
	if err := s.deps.Store.CreateRole(r.Context(), &role); err != nil {
		return roleConflict(err, c, role.Name)
	}
	// A role is addressed by its name, which may need escaping.
	return httpx.Created(w, s.deps.BaseURL+r.URL.EscapedPath()+"/"+url.PathEscape(role.Name), toRoleRep(&role))
}

// ListRoles answers GET .../roles.
func (s *Service) ListRoles(w http.ResponseWriter, r *http.Request) error {
	c, err := s.container(r)
	if err != nil {
		return err
	}
	roles, err := s.deps.Store.ListRoles(r.Context(), c.realm.ID, c.clientID())
	if err != nil {
		return err
	}
	return httpx.List(w, roles, toRoleRep)
}

// GetRole answers GET .../roles/{roleName}.
func (s *Service) GetRole(w http.ResponseWriter, r *http.Request) error {
	_, role, err := s.role(r)
	if err != nil {
		return err
	}
	return httpx.OK(w, toRoleRep(role))
}

// UpdateRole answers PUT and PATCH .../roles/{roleName}.
func (s *Service) UpdateRole(w http.ResponseWriter, r *http.Request) error {
	c, role, err := s.role(r)
	if err != nil {
		return err
	}
	// name has no default: null keeps the stored one.
	upd, err := httpx.ReadUpdate[RoleRep](r, toRoleRep(role), map[string]any{"name": role.Name, "description": nil})
	if err != nil {
		return err
	}
	role.Name, role.Description = upd.Name, upd.Description
	if err := Validate(role); err != nil {
		return err
	}
	if err := s.deps.Store.UpdateRole(r.Context(), role); err != nil {
		return roleConflict(err, c, role.Name)
	}
	return httpx.OK(w, toRoleRep(role))
}

// DeleteRole answers DELETE .../roles/{roleName}.
func (s *Service) DeleteRole(w http.ResponseWriter, r *http.Request) error {
	c, role, err := s.role(r)
	if err != nil {
		return err
	}
	// Mappings and composite links go with the role (ON DELETE CASCADE).
	if err := s.deps.Store.DeleteRole(r.Context(), c.realm.ID, role.ID); err != nil {
		return err
	}
	return httpx.NoContent(w)
}

// ListComposites answers GET .../roles/{roleName}/composites.
func (s *Service) ListComposites(w http.ResponseWriter, r *http.Request) error {
	_, role, err := s.role(r)
	if err != nil {
		return err
	}
	children, err := s.deps.Store.ListComposites(r.Context(), role.ID)
	if err != nil {
		return err
	}
	return httpx.List(w, children, toRoleRep)
}

// CompositesBody names roles by name, as Keycloak's admin console does:
// realm roles in roleNames, client roles under their client's clientId.
type CompositesBody struct {
	RoleNames   []string            `json:"roleNames"`
	ClientRoles map[string][]string `json:"clientRoles"`
}

// namedRole is a role resolved from a request body, with the body field
// that named it, so an error can point there.
type namedRole struct {
	role  *store.Role
	field string
}

// resolveComposites checks a composites body and resolves every name in
// it, in a stable order: realm roles, then client roles by clientId.
func resolveComposites(ctx context.Context, tx *store.Store, realm *store.Realm, body *CompositesBody) ([]namedRole, error) {
	total := len(body.RoleNames)
	for _, names := range body.ClientRoles {
		total += len(names)
	}
	if total == 0 {
		return nil, apperr.Field("roleNames", "name at least one role, in roleNames or clientRoles")
	}
	var out []namedRole
	realmRoles, err := resolveRoleNames(ctx, tx, roleContainer{realm: realm}, "roleNames", body.RoleNames)
	if err != nil {
		return nil, err
	}
	for _, role := range realmRoles {
		out = append(out, namedRole{role, "roleNames"})
	}
	clientIDs := make([]string, 0, len(body.ClientRoles))
	for id := range body.ClientRoles {
		clientIDs = append(clientIDs, id)
	}
	slices.Sort(clientIDs)
	for _, id := range clientIDs {
		field := "clientRoles." + id
		client, err := tx.GetClientByClientID(ctx, realm.ID, id)
		if errors.Is(err, store.ErrNotFound) {
			return nil, apperr.Field(field, "realm %s has no client %q", realm.Name, id)
		} else if err != nil {
			return nil, err
		}
		roles, err := resolveRoleNames(ctx, tx, roleContainer{realm, client}, field, body.ClientRoles[id])
		if err != nil {
			return nil, err
		}
		for _, role := range roles {
			out = append(out, namedRole{role, field})
		}
	}
	return out, nil
}

// resolveRoleNames finds the named roles of a container. Any unknown name
// fails the whole request, naming every unknown one.
func resolveRoleNames(ctx context.Context, tx *store.Store, c roleContainer, field string, names []string) ([]*store.Role, error) {
	if slices.Contains(names, "") {
		return nil, apperr.Field(field, "role names must not be empty")
	}
	if len(names) == 0 {
		return nil, nil
	}
	roles, missing, err := tx.RolesByName(ctx, c.realm.ID, c.clientID(), names)
	if err != nil {
		return nil, err
	}
	if len(missing) > 0 {
		quoted := make([]string, len(missing))
		for i, m := range missing {
			quoted[i] = fmt.Sprintf("%q", m)
		}
		return nil, apperr.Field(field, "%s has no role named %s", c.describe(), strings.Join(quoted, ", "))
	}
	return roles, nil
}

// AddComposites answers POST .../roles/{roleName}/composites.
func (s *Service) AddComposites(w http.ResponseWriter, r *http.Request) error {
	return s.changeComposites(w, r, true)
}

// RemoveComposites answers DELETE .../roles/{roleName}/composites.
func (s *Service) RemoveComposites(w http.ResponseWriter, r *http.Request) error {
	return s.changeComposites(w, r, false)
}

// changeComposites adds or removes children of a composite role, all or
// nothing, and answers the role's direct composites after the change.
func (s *Service) changeComposites(w http.ResponseWriter, r *http.Request, add bool) error {
	c, parent, err := s.role(r)
	if err != nil {
		return err
	}
	var body CompositesBody
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return err
	}
	var children []*store.Role
	err = s.deps.Store.Tx(r.Context(), func(tx *store.Store) error {
		named, err := resolveComposites(r.Context(), tx, c.realm, &body)
		if err != nil {
			return err
		}
		if add {
			err = addCompositesOneByOne(r.Context(), tx, parent, named)
		} else {
			ids := make([]string, len(named))
			for i, n := range named {
				ids[i] = n.role.ID
			}
			err = tx.RemoveComposites(r.Context(), parent.ID, ids)
		}
		if err != nil {
			return err
		}
		children, err = tx.ListComposites(r.Context(), parent.ID)
		return err
	})
	if err != nil {
		return err
	}
	return httpx.List(w, children, toRoleRep)
}

// addCompositesOneByOne adds children one at a time, so a cycle names the
// child that makes it; the caller's transaction undoes those added before.
func addCompositesOneByOne(ctx context.Context, tx *store.Store, parent *store.Role, named []namedRole) error {
	for _, n := range named {
		err := tx.AddComposites(ctx, parent.ID, []string{n.role.ID})
		switch {
		case errors.Is(err, store.ErrCycle) && n.role.ID == parent.ID:
			return apperr.Field(n.field, "%s cannot include itself", roleLabel(parent))
		case errors.Is(err, store.ErrCycle):
			return apperr.Field(n.field, "%s already includes %s, directly or through other roles: adding it would make a cycle",
				roleLabel(n.role), roleLabel(parent))
		case err != nil:
			return err
		}
	}
	return nil
}
