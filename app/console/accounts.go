package console

import (
	"net/http"
	"net/url"
	"strings"

	pages "github.com/idenplane/idenplane/ui/console"
)

// accountsPath is the console's list of administrators.
const accountsPath = Prefix + "/accounts"

// adminAccount is the admin API's address of an administrator's resource.
func adminAccount(id, rest string) string { return "/admin/accounts/" + url.PathEscape(id) + rest }

// Accounts lists the administrators.
func (s *Service) Accounts(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	var list []pages.AccountRow
	if err := c.call(r, http.MethodGet, "/admin/accounts", nil, &list); err != nil {
		return err
	}
	return c.render(w, r, http.StatusOK, pages.Accounts(c.nav(r, pages.SectionAccounts, "console.accounts.title"), list))
}

// NewAccount shows the form of a new administrator.
func (s *Service) NewAccount(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	return c.render(w, r, http.StatusOK, pages.NewAccount(c.nav(r, pages.SectionAccounts, "console.accounts.new"),
		pages.Form{}, map[string]string{}))
}

// CreateAccount makes an administrator without a password, so that the
// API's answer holds the enrolment link, shown this once. Permissions
// left empty are the API's default: every one.
func (s *Service) CreateAccount(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	body := map[string]any{"username": strings.TrimSpace(r.PostForm.Get("username"))}
	if email := strings.TrimSpace(r.PostForm.Get("email")); email != "" {
		body["email"] = email
	}
	if perms := strings.Fields(r.PostForm.Get("permissions")); len(perms) > 0 {
		body["permissions"] = perms
	}
	var created struct {
		Username      string `json:"username"`
		EnrolmentLink string `json:"enrolmentLink"`
	}
	if err := c.call(r, http.MethodPost, "/admin/accounts", body, &created); err != nil {
		f, ok := formFailure(err, "username", "email", "permissions")
		if !ok {
			return err
		}
		return c.render(w, r, http.StatusUnprocessableEntity, pages.NewAccount(c.nav(r, pages.SectionAccounts, "console.accounts.new"),
			f, formValues(r)))
	}
	return c.render(w, r, http.StatusCreated, pages.SecretPage(c.nav(r, pages.SectionAccounts, "console.accounts.new"),
		pages.ClientSecret{ClientID: created.Username, Secret: created.EnrolmentLink, Done: "console.done.created",
			Label: "console.accounts.enrolmentLink", Once: "console.accounts.linkOnce"}, accountsPath))
}

// SetAccountEnabled disables or enables an administrator.
func (s *Service) SetAccountEnabled(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	enabled := r.PostForm.Get("enabled") == "true"
	if err := c.call(r, http.MethodPut, adminAccount(pathVar(r, "id"), ""), map[string]any{"enabled": enabled}, nil); err != nil {
		return err
	}
	done := "console.done.accountDisabled"
	if enabled {
		done = "console.done.accountEnabled"
	}
	redirect(w, r, accountsPath, done)
	return nil
}

// EndAccountSessions signs an administrator out of every console session.
func (s *Service) EndAccountSessions(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	if err := c.call(r, http.MethodDelete, adminAccount(pathVar(r, "id"), "/sessions"), nil, nil); err != nil {
		return err
	}
	redirect(w, r, accountsPath, "console.done.sessionsEnded")
	return nil
}

// accountPage reads an administrator's page: the account and its
// sign-in sessions.
func (s *Service) accountPage(r *http.Request, c *Ctx, f pages.Form, values map[string]string) (pages.AccountPage, error) {
	id := pathVar(r, "id")
	var rep map[string]any
	if err := c.call(r, http.MethodGet, adminAccount(id, ""), nil, &rep); err != nil {
		return pages.AccountPage{}, err
	}
	p := pages.AccountPage{Form: f, Values: values, Account: pages.AccountRow{ID: id, Username: str(rep["username"]),
		Email: str(rep["email"]), Realm: str(rep["realm"])}}
	p.Account.Enabled, _ = rep["enabled"].(bool)
	if p.Values == nil {
		p.Values = stringValues(rep, accountFields)
	}
	if err := c.call(r, http.MethodGet, adminAccount(id, "/sessions"), nil, &p.Sessions); err != nil {
		return p, err
	}
	realms, err := c.realms(r)
	if err != nil {
		return p, err
	}
	for _, name := range realms {
		if name != s.deps.SystemRealm {
			p.Realms = append(p.Realms, name)
		}
	}
	return p, nil
}

// accountFields are the grant of an administrator, as the API names it.
var accountFields = []string{"permissions", "realm"}

// AdminAccount shows an administrator: the permissions and the realm
// they are confined to, their sessions, a new enrolment link, deletion.
func (s *Service) AdminAccount(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	p, err := s.accountPage(r, c, pages.Form{}, nil)
	if err != nil {
		return err
	}
	return c.render(w, r, http.StatusOK, pages.AccountDetail(c.nav(r, pages.SectionAccounts, "console.account1.title", p.Account.Username), p))
}

// SaveAdminAccount changes an administrator's permissions and realm with
// PUT /admin/accounts/{id}, and says which changed.
func (s *Service) SaveAdminAccount(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	id := pathVar(r, "id")
	var before map[string]any
	if err := c.call(r, http.MethodGet, adminAccount(id, ""), nil, &before); err != nil {
		return err
	}
	body := map[string]any{"permissions": strings.Fields(r.PostForm.Get("permissions")),
		"realm": strings.TrimSpace(r.PostForm.Get("realm"))}
	var after map[string]any
	err := c.call(r, http.MethodPut, adminAccount(id, ""), body, &after)
	if err == nil {
		redirect(w, r, accountsPath+"/"+url.PathEscape(id), changed(before, after, accountFields)...)
		return nil
	}
	f, ok := formFailure(err, accountFields...)
	if !ok {
		return err
	}
	p, perr := s.accountPage(r, c, f, formValues(r))
	if perr != nil {
		return perr
	}
	return c.render(w, r, http.StatusUnprocessableEntity, pages.AccountDetail(c.nav(r, pages.SectionAccounts, "console.account1.title", p.Account.Username), p))
}

// confirmAccount asks before a change to the administrator of the path.
func (s *Service) confirmAccount(w http.ResponseWriter, r *http.Request, c *Ctx, message, action, button string) error {
	id := pathVar(r, "id")
	var rep map[string]any
	if err := c.call(r, http.MethodGet, adminAccount(id, ""), nil, &rep); err != nil {
		return err
	}
	return c.render(w, r, http.StatusOK, pages.ConfirmPage(c.nav(r, pages.SectionAccounts, "console.confirm.title"), pages.Confirm{
		Message: message, Args: []any{str(rep["username"])}, Action: accountsPath + "/" + url.PathEscape(id) + action,
		Cancel: accountsPath + "/" + url.PathEscape(id), Button: button}))
}

// ConfirmDeleteAccount asks before an administrator is deleted.
func (s *Service) ConfirmDeleteAccount(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	return s.confirmAccount(w, r, c, "console.accounts.deleteConfirm", "/delete", "console.accounts.delete")
}

// DeleteAccount deletes an administrator: their sessions and tokens end.
func (s *Service) DeleteAccount(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	if err := c.call(r, http.MethodDelete, adminAccount(pathVar(r, "id"), ""), nil, nil); err != nil {
		return err
	}
	redirect(w, r, accountsPath, "console.done.accountDeleted")
	return nil
}

// ConfirmEnrolment asks before a new enrolment link voids the earlier.
func (s *Service) ConfirmEnrolment(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	return s.confirmAccount(w, r, c, "console.accounts.enrolmentConfirm", "/enrolment", "console.accounts.newEnrolment")
}

// NewEnrolment makes an administrator a new enrolment link, shown once.
func (s *Service) NewEnrolment(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	id := pathVar(r, "id")
	var rep map[string]any
	if err := c.call(r, http.MethodGet, adminAccount(id, ""), nil, &rep); err != nil {
		return err
	}
	var link struct {
		EnrolmentLink string `json:"enrolmentLink"`
	}
	if err := c.call(r, http.MethodPost, adminAccount(id, "/enrolment"), nil, &link); err != nil {
		return err
	}
	return c.render(w, r, http.StatusOK, pages.SecretPage(c.nav(r, pages.SectionAccounts, "console.accounts.newEnrolment"),
		pages.ClientSecret{ClientID: str(rep["username"]), Secret: link.EnrolmentLink, Done: "console.done.enrolmentMade",
			Label: "console.accounts.enrolmentLink", Once: "console.accounts.linkOnce"}, accountsPath+"/"+url.PathEscape(id)))
}
