package console

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/idenplane/idenplane/app/authz"
	pages "github.com/idenplane/idenplane/ui/console"
)

// usersPageSize is the rows of a page of users.
const usersPageSize = 20

func userPath(realm, id, rest string) string {
	return realmPath(realm, "/users/"+url.PathEscape(id)+rest)
}
func adminUser(realm, id, rest string) string {
	return adminRealm(realm, "/users/"+url.PathEscape(id)+rest)
}

// searchQuery is what the users page asks the API for: the beginning of
// a username, email, first or last name ("ali" finds Alice), which the
// API finds by index in a realm of any size; "*lid*" asks for a part
// anywhere, which reads every user.
func searchQuery(search string) string {
	if strings.Contains(search, "*") {
		return search
	}
	return search + "*"
}

// Users lists a realm's users a page at a time, found by ?search.
func (s *Service) Users(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm := pathVar(r, "realm")
	q := r.URL.Query()
	page, _ := strconv.Atoi(q.Get("page"))
	page = max(page, 0)
	search := q.Get("search")
	api := url.Values{"skip": {strconv.Itoa(page * usersPageSize)}, "limit": {strconv.Itoa(usersPageSize)}}
	if search != "" {
		api.Set("search", searchQuery(search))
	}
	var list struct {
		Total int             `json:"total"`
		Users []pages.UserRow `json:"users"`
	}
	if err := c.call(r, http.MethodGet, adminRealm(realm, "/users?"+api.Encode()), nil, &list); err != nil {
		return err
	}
	link := func(p int) string {
		v := url.Values{"page": {strconv.Itoa(p)}}
		if search != "" {
			v.Set("search", search)
		}
		return realmPath(realm, "/users?"+v.Encode())
	}
	pager := pages.Pager{Total: list.Total}
	if len(list.Users) > 0 {
		pager.From, pager.To = page*usersPageSize+1, page*usersPageSize+len(list.Users)
	}
	if page > 0 {
		pager.Prev = link(page - 1)
	}
	if pager.To < list.Total {
		pager.Next = link(page + 1)
	}
	return c.render(w, r, http.StatusOK, pages.Users(c.nav(r, pages.SectionUsers, "console.users.title", realm),
		pages.UserList{Search: search, Users: list.Users, Pager: pager}))
}

var (
	userTexts  = []string{"username", "email", "firstName", "lastName"}
	userChecks = []string{"enabled", "emailVerified", "requirePasswordReset"}
	userFields = append(append([]string{}, userTexts...), userChecks...)
)

// NewUser shows the form of a new user.
func (s *Service) NewUser(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm := pathVar(r, "realm")
	return c.render(w, r, http.StatusOK, pages.NewUser(c.nav(r, pages.SectionUsers, "console.users.new", realm),
		pages.UserForm{Values: map[string]string{"enabled": "true"}}))
}

// CreateUser creates a user with POST /admin/realms/{realm}/users.
func (s *Service) CreateUser(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm := pathVar(r, "realm")
	body, _ := readForm(r, userTexts, nil, userChecks)
	for _, k := range []string{"email", "firstName", "lastName"} {
		if body[k] == "" {
			delete(body, k)
		}
	}
	if p := r.PostForm.Get("password"); p != "" {
		body["password"] = p
	}
	var created struct {
		ID string `json:"id"`
	}
	if err := c.call(r, http.MethodPost, adminRealm(realm, "/users"), body, &created); err != nil {
		f, ok := formFailure(err, append(userFields, "password")...)
		if !ok {
			return err
		}
		return c.render(w, r, http.StatusUnprocessableEntity, pages.NewUser(c.nav(r, pages.SectionUsers, "console.users.new", realm),
			pages.UserForm{Form: f, Values: formValues(r)}))
	}
	redirect(w, r, userPath(realm, created.ID, ""), "console.done.userCreated")
	return nil
}

// user reads the page of one user: the user, and their sessions when the
// administrator may see them.
func (s *Service) userPage(r *http.Request, c *Ctx, f pages.Form, values map[string]string) (pages.UserPage, error) {
	realm, id := pathVar(r, "realm"), pathVar(r, "userId")
	var rep map[string]any
	if err := c.call(r, http.MethodGet, adminUser(realm, id, ""), nil, &rep); err != nil {
		return pages.UserPage{}, err
	}
	p := pages.UserPage{ID: id, Username: str(rep["username"]), Form: f, Values: values}
	if p.Values == nil {
		p.Values = stringValues(rep, userFields)
	}
	if c.can(authz.SessionsRead) {
		if err := c.call(r, http.MethodGet, adminUser(realm, id, "/sessions"), nil, &p.Sessions); err != nil {
			return p, err
		}
	}
	if err := s.memberships(r, c, realm, id, &p); err != nil {
		return p, err
	}
	if c.can(authz.UsersRead) {
		p.MFA = &pages.MFAStatus{}
		if err := c.call(r, http.MethodGet, adminUser(realm, id, "/mfa/status"), nil, p.MFA); err != nil {
			return p, err
		}
	}
	p.Actions = requiredActions(rep, p.MFA)
	if err := s.userAttributes(r, c, realm, rep, &p); err != nil {
		return p, err
	}
	return p, s.identities(r, c, realm, id, &p)
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// User shows one user with their settings, password reset, sessions and
// deletion.
func (s *Service) User(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	return s.renderUser(w, r, c, http.StatusOK, pages.Form{}, nil, nil)
}

// renderUser draws the user's page, with f and values at its settings
// form and fill to mark another of its forms (a refusal's messages).
func (s *Service) renderUser(w http.ResponseWriter, r *http.Request, c *Ctx, status int, f pages.Form, values map[string]string,
	fill func(*pages.UserPage)) error {
	p, err := s.userPage(r, c, f, values)
	if err != nil {
		return err
	}
	if fill != nil {
		fill(&p)
	}
	return c.render(w, r, status, pages.User(c.nav(r, pages.SectionUsers, "console.user.title", p.Username), p))
}

// SaveUser changes a user with PATCH, and says which fields changed.
func (s *Service) SaveUser(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm, id := pathVar(r, "realm"), pathVar(r, "userId")
	var before map[string]any
	if err := c.call(r, http.MethodGet, adminUser(realm, id, ""), nil, &before); err != nil {
		return err
	}
	// The required actions' boxes are a form of their own
	// (SetRequiredActions): this one leaves them as they are.
	body, _ := readForm(r, userTexts, nil, []string{"enabled"})
	var after map[string]any
	err := c.call(r, http.MethodPatch, adminUser(realm, id, ""), body, &after)
	if err == nil {
		redirect(w, r, userPath(realm, id, ""), changed(before, after, userFields)...)
		return nil
	}
	f, ok := formFailure(err, userFields...)
	if !ok {
		return err
	}
	return s.renderUser(w, r, c, http.StatusUnprocessableEntity, f, formValues(r), nil)
}

// ResetPassword sets a user's password with PUT .../reset-password.
func (s *Service) ResetPassword(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm, id := pathVar(r, "realm"), pathVar(r, "userId")
	body := map[string]any{"password": r.PostForm.Get("password"), "temporary": r.PostForm.Get("temporary") == "true"}
	err := c.call(r, http.MethodPut, adminUser(realm, id, "/reset-password"), body, nil)
	if err == nil {
		redirect(w, r, userPath(realm, id, ""), "console.done.passwordSet")
		return nil
	}
	f, ok := formFailure(err, "password")
	if !ok {
		return err
	}
	return s.renderUser(w, r, c, http.StatusUnprocessableEntity, f, nil, nil)
}

// EndUserSessions signs a user out everywhere.
func (s *Service) EndUserSessions(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm, id := pathVar(r, "realm"), pathVar(r, "userId")
	if err := c.call(r, http.MethodDelete, adminUser(realm, id, "/sessions"), nil, nil); err != nil {
		return err
	}
	redirect(w, r, userPath(realm, id, ""), "console.done.sessionsEnded")
	return nil
}

// ConfirmDeleteUser asks before a user is deleted.
func (s *Service) ConfirmDeleteUser(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm, id := pathVar(r, "realm"), pathVar(r, "userId")
	var rep map[string]any
	if err := c.call(r, http.MethodGet, adminUser(realm, id, ""), nil, &rep); err != nil {
		return err
	}
	return c.render(w, r, http.StatusOK, pages.ConfirmPage(c.nav(r, pages.SectionUsers, "console.confirm.title"), pages.Confirm{
		Message: "console.user.deleteConfirm", Args: []any{str(rep["username"])}, Action: userPath(realm, id, "/delete"),
		Cancel: userPath(realm, id, ""), Button: "console.user.delete"}))
}

// DeleteUser deletes a user.
func (s *Service) DeleteUser(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm, id := pathVar(r, "realm"), pathVar(r, "userId")
	if err := c.call(r, http.MethodDelete, adminUser(realm, id, ""), nil, nil); err != nil {
		return err
	}
	redirect(w, r, realmPath(realm, "/users"), "console.done.userDeleted")
	return nil
}

// ConfirmRemoveFactors asks before a user's second factors are removed.
func (s *Service) ConfirmRemoveFactors(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm, id := pathVar(r, "realm"), pathVar(r, "userId")
	var rep map[string]any
	if err := c.call(r, http.MethodGet, adminUser(realm, id, ""), nil, &rep); err != nil {
		return err
	}
	return c.render(w, r, http.StatusOK, pages.ConfirmPage(c.nav(r, pages.SectionUsers, "console.confirm.title"), pages.Confirm{
		Message: "console.user.removeFactorsConfirm", Args: []any{str(rep["username"])}, Action: userPath(realm, id, "/mfa"),
		Cancel: userPath(realm, id, ""), Button: "console.user.removeFactors"}))
}

// RemoveFactors removes every second factor of a user (and signs them
// out, as the API does).
func (s *Service) RemoveFactors(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm, id := pathVar(r, "realm"), pathVar(r, "userId")
	if err := c.call(r, http.MethodDelete, adminUser(realm, id, "/mfa"), nil, nil); err != nil {
		return err
	}
	redirect(w, r, userPath(realm, id, ""), "console.done.factorsRemoved")
	return nil
}

// Unlock lifts a user's brute-force lockout.
func (s *Service) Unlock(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm, id := pathVar(r, "realm"), pathVar(r, "userId")
	if err := c.call(r, http.MethodPost, adminRealm(realm, "/brute-force/users/"+url.PathEscape(id)+"/unlock"), nil, nil); err != nil {
		return err
	}
	redirect(w, r, userPath(realm, id, ""), "console.done.unlocked")
	return nil
}
