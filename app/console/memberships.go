package console

import (
	"net/http"
	"net/url"
	"slices"

	"github.com/idenplane/idenplane/app/authz"
	pages "github.com/idenplane/idenplane/ui/console"
)

// groupNode is a group of the realm's tree as the API answers it.
type groupNode struct {
	ID        string      `json:"id"`
	Path      string      `json:"path"`
	SubGroups []groupNode `json:"subGroups"`
}

// flatten lists the tree's groups by path.
func flatten(nodes []groupNode, out []pages.Choice) []pages.Choice {
	for _, n := range nodes {
		out = append(out, pages.Choice{Value: n.ID, Label: n.Path})
		out = flatten(n.SubGroups, out)
	}
	return out
}

// memberships reads a user's groups and realm roles, and what may be
// added, as far as the administrator may read them.
func (s *Service) memberships(r *http.Request, c *Ctx, realm, id string, p *pages.UserPage) error {
	if !c.can(authz.UsersRead) {
		return nil
	}
	var groups []struct {
		ID   string `json:"id"`
		Path string `json:"path"`
	}
	if err := c.call(r, http.MethodGet, adminUser(realm, id, "/groups"), nil, &groups); err != nil {
		return err
	}
	p.Groups = []pages.Choice{}
	for _, g := range groups {
		p.Groups = append(p.Groups, pages.Choice{Value: g.ID, Label: g.Path})
	}
	var roles []struct {
		Name string `json:"name"`
	}
	if err := c.call(r, http.MethodGet, adminUser(realm, id, "/role-mappings/realm"), nil, &roles); err != nil {
		return err
	}
	p.Roles = []pages.Choice{}
	for _, role := range roles {
		p.Roles = append(p.Roles, pages.Choice{Value: role.Name, Label: role.Name})
	}
	if !c.can(authz.UsersWrite) {
		return nil
	}
	if c.can(authz.GroupsRead) {
		var tree []groupNode
		if err := c.call(r, http.MethodGet, adminRealm(realm, "/groups"), nil, &tree); err != nil {
			return err
		}
		for _, g := range flatten(tree, nil) {
			if !slices.Contains(p.Groups, g) {
				p.GroupChoices = append(p.GroupChoices, g)
			}
		}
	}
	if c.can(authz.RolesRead) {
		var all []struct {
			Name string `json:"name"`
		}
		if err := c.call(r, http.MethodGet, adminRealm(realm, "/roles"), nil, &all); err != nil {
			return err
		}
		for _, role := range all {
			ch := pages.Choice{Value: role.Name, Label: role.Name}
			if !slices.Contains(p.Roles, ch) {
				p.RoleChoices = append(p.RoleChoices, ch)
			}
		}
	}
	return nil
}

// JoinGroup puts a user in a group.
func (s *Service) JoinGroup(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm, id := pathVar(r, "realm"), pathVar(r, "userId")
	group := r.PostForm.Get("groupId")
	if err := c.call(r, http.MethodPut, adminUser(realm, id, "/groups/"+url.PathEscape(group)), nil, nil); err != nil {
		return err
	}
	redirect(w, r, userPath(realm, id, ""), "console.done.groupJoined")
	return nil
}

// LeaveGroup takes a user out of a group.
func (s *Service) LeaveGroup(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm, id := pathVar(r, "realm"), pathVar(r, "userId")
	group := r.PostForm.Get("groupId")
	if err := c.call(r, http.MethodDelete, adminUser(realm, id, "/groups/"+url.PathEscape(group)), nil, nil); err != nil {
		return err
	}
	redirect(w, r, userPath(realm, id, ""), "console.done.groupLeft")
	return nil
}

// GrantRole maps a realm role to a user.
func (s *Service) GrantRole(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	return s.changeRole(w, r, c, http.MethodPost, "console.done.roleGranted")
}

// RevokeRole unmaps a realm role from a user.
func (s *Service) RevokeRole(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	return s.changeRole(w, r, c, http.MethodDelete, "console.done.roleRevoked")
}

func (s *Service) changeRole(w http.ResponseWriter, r *http.Request, c *Ctx, method, done string) error {
	realm, id := pathVar(r, "realm"), pathVar(r, "userId")
	body := map[string]any{"roleNames": []string{r.PostForm.Get("roleName")}}
	if err := c.call(r, method, adminUser(realm, id, "/role-mappings/realm"), body, nil); err != nil {
		return err
	}
	redirect(w, r, userPath(realm, id, ""), done)
	return nil
}
