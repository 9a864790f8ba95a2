package console

import (
	"errors"
	"net/http"
	"net/url"
	"slices"

	"github.com/idenplane/idenplane/app/authz"
	pages "github.com/idenplane/idenplane/ui/console"
)

func rolePath(realm, name, rest string) string {
	return realmPath(realm, "/roles/"+url.PathEscape(name)+rest)
}
func adminRole(realm, name, rest string) string {
	return adminRealm(realm, "/roles/"+url.PathEscape(name)+rest)
}

// roleRep is a role as the API lists it.
type roleRep struct {
	Name       string `json:"name"`
	ClientRole bool   `json:"clientRole"`
	ClientID   string `json:"clientId"`
}

// roleRef is a role's value in a form: its client ("" for the realm's)
// and its name, as a query string, so that any character of either
// reads back.
func roleRef(clientID, name string) string {
	return url.Values{"client": {clientID}, "role": {name}}.Encode()
}

func (rr roleRep) choice() pages.Choice {
	if !rr.ClientRole {
		return pages.Choice{Value: roleRef("", rr.Name), Label: rr.Name}
	}
	return pages.Choice{Value: roleRef(rr.ClientID, rr.Name), Label: rr.ClientID + " › " + rr.Name}
}

// rolesBody is the API's body naming the role of a form's value: realm
// roles by name, a client's by its clientId.
func rolesBody(ref string) map[string]any {
	v, _ := url.ParseQuery(ref)
	if client := v.Get("client"); client != "" {
		return map[string]any{"clientRoles": map[string][]string{client: {v.Get("role")}}}
	}
	return map[string]any{"roleNames": []string{v.Get("role")}}
}

// fieldFailure shows an API refusal of a one-field form at that field;
// anything else is no form's to show.
func fieldFailure(err error, field string) (pages.Form, bool) {
	var ae *apiError
	if !errors.As(err, &ae) || ae.Status >= 500 || ae.Status == http.StatusUnauthorized || ae.Status == http.StatusForbidden {
		return pages.Form{}, false
	}
	return pages.Form{Errors: map[string]string{field: ae.Description}}, true
}

// roleChoices are the realm's roles, and every client's when the
// administrator may read clients, less those in held and the role itself.
func (s *Service) roleChoices(r *http.Request, c *Ctx, realm string, held []pages.Choice, self string) ([]pages.Choice, error) {
	var all []roleRep
	if err := c.call(r, http.MethodGet, adminRealm(realm, "/roles"), nil, &all); err != nil {
		return nil, err
	}
	if c.can(authz.ClientsRead) {
		var clients []pages.ClientRow
		if err := c.call(r, http.MethodGet, adminRealm(realm, "/clients"), nil, &clients); err != nil {
			return nil, err
		}
		for _, cl := range clients {
			var roles []roleRep
			if err := c.call(r, http.MethodGet, adminClient(realm, cl.ClientID, "/roles"), nil, &roles); err != nil {
				return nil, err
			}
			for _, role := range roles {
				role.ClientRole, role.ClientID = true, cl.ClientID
				all = append(all, role)
			}
		}
	}
	var out []pages.Choice
	for _, role := range all {
		ch := role.choice()
		if ch.Value != self && !slices.Contains(held, ch) {
			out = append(out, ch)
		}
	}
	return out, nil
}

// rolePage reads a role, its composites and, for those who may change
// them, the roles that may be added.
func (s *Service) rolePage(r *http.Request, c *Ctx, f pages.Form) (pages.RolePage, error) {
	realm, name := pathVar(r, "realm"), pathVar(r, "roleName")
	var role struct {
		Description string `json:"description"`
	}
	if err := c.call(r, http.MethodGet, adminRole(realm, name, ""), nil, &role); err != nil {
		return pages.RolePage{}, err
	}
	p := pages.RolePage{Form: f, Name: name, Description: role.Description, Composites: []pages.Choice{}}
	var comps []roleRep
	if err := c.call(r, http.MethodGet, adminRole(realm, name, "/composites"), nil, &comps); err != nil {
		return p, err
	}
	for _, cr := range comps {
		p.Composites = append(p.Composites, cr.choice())
	}
	if c.can(authz.RolesWrite) {
		var err error
		if p.Choices, err = s.roleChoices(r, c, realm, p.Composites, roleRef("", name)); err != nil {
			return p, err
		}
	}
	return p, nil
}

func (s *Service) renderRole(w http.ResponseWriter, r *http.Request, c *Ctx, status int, f pages.Form) error {
	p, err := s.rolePage(r, c, f)
	if err != nil {
		return err
	}
	return c.render(w, r, status, pages.Role(c.nav(r, "roles", "console.role.title", p.Name), p))
}

// Role shows a realm role with its composites.
func (s *Service) Role(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	return s.renderRole(w, r, c, http.StatusOK, pages.Form{})
}

// SaveRole changes a role's description.
func (s *Service) SaveRole(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm, name := pathVar(r, "realm"), pathVar(r, "roleName")
	var before, after map[string]any
	if err := c.call(r, http.MethodGet, adminRole(realm, name, ""), nil, &before); err != nil {
		return err
	}
	body := map[string]any{"description": r.PostForm.Get("description")}
	if err := c.call(r, http.MethodPatch, adminRole(realm, name, ""), body, &after); err != nil {
		f, ok := formFailure(err, "description")
		if !ok {
			return err
		}
		return s.renderRole(w, r, c, http.StatusUnprocessableEntity, f)
	}
	redirect(w, r, rolePath(realm, name, ""), changed(before, after, []string{"description"})...)
	return nil
}

// AddComposite makes a role hold another, a realm role or a client's.
func (s *Service) AddComposite(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	return s.changeComposite(w, r, c, http.MethodPost, "console.done.compositeAdded")
}

// RemoveComposite takes a role out of a composite.
func (s *Service) RemoveComposite(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	return s.changeComposite(w, r, c, http.MethodDelete, "console.done.compositeRemoved")
}

func (s *Service) changeComposite(w http.ResponseWriter, r *http.Request, c *Ctx, method, done string) error {
	realm, name := pathVar(r, "realm"), pathVar(r, "roleName")
	return c.changeHeldRole(w, r, method, adminRole(realm, name, "/composites"), "composite", "composite",
		rolePath(realm, name, ""), done, func(f pages.Form) error {
			return s.renderRole(w, r, c, http.StatusUnprocessableEntity, f)
		})
}

// changeHeldRole adds (POST) or takes away (DELETE) the role a form posts
// as posted at the API's role list path: a success leads to back saying
// done, a refusal is drawn by refused with its message at the field at.
func (c *Ctx) changeHeldRole(w http.ResponseWriter, r *http.Request, method, path, posted, at, back, done string,
	refused func(pages.Form) error) error {
	if err := c.call(r, method, path, rolesBody(r.PostForm.Get(posted)), nil); err != nil {
		f, ok := fieldFailure(err, at)
		if !ok {
			return err
		}
		return refused(f)
	}
	redirect(w, r, back, done)
	return nil
}
