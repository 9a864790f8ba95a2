package console

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/idenplane/idenplane/app/authz"
	pages "github.com/idenplane/idenplane/ui/console"
)

// membersPage is how many members a group's page shows at a time.
const membersPage = 20

func groupPath(realm, id, rest string) string {
	return realmPath(realm, "/groups/"+url.PathEscape(id)+rest)
}
func adminGroup(realm, id, rest string) string {
	return adminRealm(realm, "/groups/"+url.PathEscape(id)+rest)
}

// groupFields are the group's settings the form changes.
var groupFields = []string{"name", "description"}

// groupPage reads a group, its place, a page of its members and its
// realm roles, and what the administrator may change them to.
func (s *Service) groupPage(r *http.Request, c *Ctx, f pages.Form, values map[string]string) (pages.GroupPage, error) {
	realm, id := pathVar(r, "realm"), pathVar(r, "groupId")
	p := pages.GroupPage{Form: f, Values: values}
	if err := c.call(r, http.MethodGet, adminGroup(realm, id, ""), nil, &p.Group); err != nil {
		return p, err
	}
	if p.Values == nil {
		p.Values = map[string]string{"name": p.Group.Name, "description": p.Group.Description}
	}
	// A refused member's username stays in its field.
	p.Values["username"] = strings.TrimSpace(r.PostForm.Get("username"))
	if c.can(authz.GroupsWrite) {
		var tree []groupNode
		if err := c.call(r, http.MethodGet, adminRealm(realm, "/groups"), nil, &tree); err != nil {
			return p, err
		}
		// A group moves anywhere but under itself or its own subgroups.
		p.Parents = []pages.Choice{{Value: "", Label: "/"}}
		for _, g := range flatten(tree, nil) {
			if g.Value != id && !strings.HasPrefix(g.Label, p.Group.Path+"/") {
				p.Parents = append(p.Parents, g)
			}
		}
	}
	first, _ := strconv.Atoi(r.URL.Query().Get("first"))
	first = max(first, 0)
	var members []pages.UserRow
	q := url.Values{"first": {strconv.Itoa(first)}, "max": {strconv.Itoa(membersPage + 1)}}
	if err := c.call(r, http.MethodGet, adminGroup(realm, id, "/members?"+q.Encode()), nil, &members); err != nil {
		return p, err
	}
	p.MembersPager = pages.Pager{Total: -1}
	if len(members) > membersPage {
		members = members[:membersPage]
		p.MembersPager.Next = groupPath(realm, id, "?first="+strconv.Itoa(first+membersPage))
	}
	if first > 0 {
		p.MembersPager.Prev = groupPath(realm, id, "?first="+strconv.Itoa(max(first-membersPage, 0)))
	}
	if len(members) > 0 {
		p.MembersPager.From, p.MembersPager.To = first+1, first+len(members)
	}
	p.Members = []pages.Choice{}
	for _, m := range members {
		p.Members = append(p.Members, pages.Choice{Value: m.ID, Label: m.Username})
	}
	if c.can(authz.RolesRead) {
		var roles []roleRep
		if err := c.call(r, http.MethodGet, adminGroup(realm, id, "/role-mappings/realm"), nil, &roles); err != nil {
			return p, err
		}
		p.Roles = []pages.Choice{}
		for _, role := range roles {
			p.Roles = append(p.Roles, role.choice())
		}
		if c.can(authz.GroupsWrite) {
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
	}
	return p, nil
}

func (s *Service) renderGroup(w http.ResponseWriter, r *http.Request, c *Ctx, status int, f pages.Form, values map[string]string) error {
	p, err := s.groupPage(r, c, f, values)
	if err != nil {
		return err
	}
	return c.render(w, r, status, pages.Group(c.nav(r, "groups", "console.group.title", p.Group.Path), p))
}

// Group shows a group: its subgroups, settings, place, members and roles.
func (s *Service) Group(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	return s.renderGroup(w, r, c, http.StatusOK, pages.Form{}, nil)
}

// SaveGroup renames a group or changes its description.
func (s *Service) SaveGroup(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm, id := pathVar(r, "realm"), pathVar(r, "groupId")
	var before, after map[string]any
	if err := c.call(r, http.MethodGet, adminGroup(realm, id, ""), nil, &before); err != nil {
		return err
	}
	body, _ := readForm(r, groupFields, nil, nil)
	if err := c.call(r, http.MethodPatch, adminGroup(realm, id, ""), body, &after); err != nil {
		f, ok := formFailure(err, groupFields...)
		if !ok {
			return err
		}
		return s.renderGroup(w, r, c, http.StatusUnprocessableEntity, f, formValues(r))
	}
	redirect(w, r, groupPath(realm, id, ""), changed(before, after, groupFields)...)
	return nil
}

// MoveGroup puts a group under another, or at the top level: the API's
// move is a post of the group's id to the new parent's children.
func (s *Service) MoveGroup(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm, id := pathVar(r, "realm"), pathVar(r, "groupId")
	to := adminRealm(realm, "/groups")
	if parent := r.PostForm.Get("parent"); parent != "" {
		to = adminGroup(realm, parent, "/children")
	}
	if err := c.call(r, http.MethodPost, to, map[string]any{"id": id}, nil); err != nil {
		f, ok := fieldFailure(err, "parent")
		if !ok {
			return err
		}
		return s.renderGroup(w, r, c, http.StatusUnprocessableEntity, f, nil)
	}
	redirect(w, r, groupPath(realm, id, ""), "console.done.groupMoved")
	return nil
}

// AddMember puts the user of a username in the group.
func (s *Service) AddMember(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm, id := pathVar(r, "realm"), pathVar(r, "groupId")
	username := strings.TrimSpace(r.PostForm.Get("username"))
	var found struct {
		Users []pages.UserRow `json:"users"`
	}
	q := url.Values{"username": {username}, "exact": {"true"}}
	if err := c.call(r, http.MethodGet, adminRealm(realm, "/users?"+q.Encode()), nil, &found); err != nil {
		return err
	}
	if username == "" || len(found.Users) == 0 {
		return s.renderGroup(w, r, c, http.StatusUnprocessableEntity,
			pages.Form{Errors: map[string]string{"username": "console.group.noSuchUser"}}, nil)
	}
	if err := c.call(r, http.MethodPut, adminUser(realm, found.Users[0].ID, "/groups/"+url.PathEscape(id)), nil, nil); err != nil {
		f, ok := fieldFailure(err, "username")
		if !ok {
			return err
		}
		return s.renderGroup(w, r, c, http.StatusUnprocessableEntity, f, nil)
	}
	redirect(w, r, groupPath(realm, id, ""), "console.done.memberAdded")
	return nil
}

// RemoveMember takes a user out of the group.
func (s *Service) RemoveMember(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm, id := pathVar(r, "realm"), pathVar(r, "groupId")
	user := r.PostForm.Get("userId")
	if err := c.call(r, http.MethodDelete, adminUser(realm, user, "/groups/"+url.PathEscape(id)), nil, nil); err != nil {
		return err
	}
	redirect(w, r, groupPath(realm, id, ""), "console.done.memberRemoved")
	return nil
}

// GrantGroupRole maps a realm role to a group.
func (s *Service) GrantGroupRole(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	return s.changeGroupRole(w, r, c, http.MethodPost, "console.done.roleGranted")
}

// RevokeGroupRole unmaps a realm role from a group.
func (s *Service) RevokeGroupRole(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	return s.changeGroupRole(w, r, c, http.MethodDelete, "console.done.roleRevoked")
}

func (s *Service) changeGroupRole(w http.ResponseWriter, r *http.Request, c *Ctx, method, done string) error {
	realm, id := pathVar(r, "realm"), pathVar(r, "groupId")
	return c.changeHeldRole(w, r, method, adminGroup(realm, id, "/role-mappings/realm"), "role", "role",
		groupPath(realm, id, ""), done, func(f pages.Form) error {
			return s.renderGroup(w, r, c, http.StatusUnprocessableEntity, f, nil)
		})
}
