package console

import (
	"net/http"
	"net/url"
	"slices"

	"github.com/idenplane/idenplane/app/authz"
	pages "github.com/idenplane/idenplane/ui/console"
)

// ScopeKinds are the ways a client scope is linked to a client: by the
// API's paths, default-client-scopes and optional-client-scopes.
var ScopeKinds = []string{"default", "optional"}

// linkedScope is a client scope as a client's links list it.
type linkedScope struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

func (l linkedScope) choice() pages.Choice { return pages.Choice{Value: l.ID, Label: l.Name} }

// clientAccessPage reads a client's linked scopes and its service
// account's realm roles, and what may be added to them.
func (s *Service) clientAccessPage(r *http.Request, c *Ctx, f pages.Form) (pages.ClientAccessPage, error) {
	realm, id := pathVar(r, "realm"), pathVar(r, "clientId")
	var client struct {
		ClientID               string `json:"clientId"`
		ServiceAccountsEnabled bool   `json:"serviceAccountsEnabled"`
	}
	if err := c.call(r, http.MethodGet, adminClient(realm, id, ""), nil, &client); err != nil {
		return pages.ClientAccessPage{}, err
	}
	p := pages.ClientAccessPage{Form: f, ClientID: client.ClientID}
	linked := map[string]*[]pages.Choice{"default": &p.Default, "optional": &p.Optional}
	taken := map[string]bool{}
	for _, kind := range ScopeKinds {
		var list []linkedScope
		if err := c.call(r, http.MethodGet, adminClient(realm, id, "/"+kind+"-client-scopes"), nil, &list); err != nil {
			return p, err
		}
		*linked[kind] = []pages.Choice{}
		for _, l := range list {
			*linked[kind] = append(*linked[kind], l.choice())
			taken[l.ID] = true
		}
	}
	if c.can(authz.ClientsWrite) && c.can(authz.ScopesRead) {
		var all []linkedScope
		if err := c.call(r, http.MethodGet, adminRealm(realm, "/client-scopes"), nil, &all); err != nil {
			return p, err
		}
		for _, l := range all {
			if !taken[l.ID] {
				p.ScopeChoices = append(p.ScopeChoices, l.choice())
			}
		}
	}
	if !client.ServiceAccountsEnabled || !c.can(authz.UsersRead) {
		return p, nil
	}
	var user struct {
		ID string `json:"id"`
	}
	if err := c.call(r, http.MethodGet, adminClient(realm, id, "/service-account-user"), nil, &user); err != nil {
		return p, err
	}
	p.ServiceAccount = user.ID
	var roles []roleRep
	if err := c.call(r, http.MethodGet, adminUser(realm, user.ID, "/role-mappings/realm"), nil, &roles); err != nil {
		return p, err
	}
	p.Roles = []pages.Choice{}
	for _, role := range roles {
		p.Roles = append(p.Roles, role.choice())
	}
	if c.can(authz.UsersWrite) && c.can(authz.RolesRead) {
		var all []roleRep
		if err := c.call(r, http.MethodGet, adminRealm(realm, "/roles"), nil, &all); err != nil {
			return p, err
		}
		for _, role := range all {
			if ch := role.choice(); !slices.Contains(p.Roles, ch) {
				p.RoleChoices = append(p.RoleChoices, ch)
			}
		}
	}
	return p, nil
}

func (s *Service) renderClientAccess(w http.ResponseWriter, r *http.Request, c *Ctx, status int, f pages.Form) error {
	p, err := s.clientAccessPage(r, c, f)
	if err != nil {
		return err
	}
	return c.render(w, r, status, pages.ClientAccess(c.nav(r, pages.SectionClients, "console.clientAccess.title", p.ClientID), p))
}

// ClientAccess shows a client's linked scopes and service account roles.
func (s *Service) ClientAccess(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	return s.renderClientAccess(w, r, c, http.StatusOK, pages.Form{})
}

// LinkScope links a client scope to a client as kind (default or
// optional).
func (s *Service) LinkScope(kind string) Handler {
	return func(w http.ResponseWriter, r *http.Request, c *Ctx) error {
		realm, id := pathVar(r, "realm"), pathVar(r, "clientId")
		body := map[string]any{"clientScopeId": r.PostForm.Get("scopeId")}
		if err := c.call(r, http.MethodPost, adminClient(realm, id, "/"+kind+"-client-scopes"), body, nil); err != nil {
			f, ok := fieldFailure(err, kind+"Scopes")
			if !ok {
				return err
			}
			return s.renderClientAccess(w, r, c, http.StatusUnprocessableEntity, f)
		}
		redirect(w, r, clientPath(realm, id, "/access"), "console.done.scopeLinked")
		return nil
	}
}

// UnlinkScope takes a client scope of kind off a client.
func (s *Service) UnlinkScope(kind string) Handler {
	return func(w http.ResponseWriter, r *http.Request, c *Ctx) error {
		realm, id := pathVar(r, "realm"), pathVar(r, "clientId")
		path := adminClient(realm, id, "/"+kind+"-client-scopes/"+url.PathEscape(r.PostForm.Get("scopeId")))
		if err := c.call(r, http.MethodDelete, path, nil, nil); err != nil {
			return err
		}
		redirect(w, r, clientPath(realm, id, "/access"), "console.done.scopeUnlinked")
		return nil
	}
}

// GrantServiceAccountRole maps a realm role to a client's service account.
func (s *Service) GrantServiceAccountRole(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	return s.changeServiceAccountRole(w, r, c, http.MethodPost, "console.done.roleGranted")
}

// RevokeServiceAccountRole unmaps a realm role from a client's service
// account.
func (s *Service) RevokeServiceAccountRole(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	return s.changeServiceAccountRole(w, r, c, http.MethodDelete, "console.done.roleRevoked")
}

func (s *Service) changeServiceAccountRole(w http.ResponseWriter, r *http.Request, c *Ctx, method, done string) error {
	realm, id := pathVar(r, "realm"), pathVar(r, "clientId")
	var user struct {
		ID string `json:"id"`
	}
	if err := c.call(r, http.MethodGet, adminClient(realm, id, "/service-account-user"), nil, &user); err != nil {
		return err
	}
	return c.changeHeldRole(w, r, method, adminUser(realm, user.ID, "/role-mappings/realm"), "role", "serviceAccountRoles",
		clientPath(realm, id, "/access"), done, func(f pages.Form) error {
			return s.renderClientAccess(w, r, c, http.StatusUnprocessableEntity, f)
		})
}
