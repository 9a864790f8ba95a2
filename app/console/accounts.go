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
