package console

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	pages "github.com/idenplane/idenplane/ui/console"
)

// apiKeysPath is the console's list of named admin API keys.
const apiKeysPath = Prefix + "/api-keys"

// adminAPIKey is the admin API's address of a named API key's resource.
func adminAPIKey(id, rest string) string { return "/admin/api-keys/" + url.PathEscape(id) + rest }

// APIKeys lists the named admin API keys.
func (s *Service) APIKeys(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	var list []pages.APIKeyRow
	if err := c.call(r, http.MethodGet, "/admin/api-keys", nil, &list); err != nil {
		return err
	}
	return c.render(w, r, http.StatusOK, pages.APIKeys(c.nav(r, pages.SectionAPIKeys, "console.apiKeys.title"), list))
}

// NewAPIKey shows the form of a new key.
func (s *Service) NewAPIKey(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	return c.render(w, r, http.StatusOK, pages.NewAPIKey(c.nav(r, pages.SectionAPIKeys, "console.apiKeys.new"),
		pages.Form{}, map[string]string{}))
}

// CreateAPIKey makes a key and shows it this once, with a copy button.
func (s *Service) CreateAPIKey(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	body := map[string]any{"name": strings.TrimSpace(r.PostForm.Get("name")),
		"permissions": strings.Fields(r.PostForm.Get("permissions"))}
	f := pages.Form{Errors: map[string]string{}}
	if days := strings.TrimSpace(r.PostForm.Get("expiresInDays")); days != "" {
		n, err := strconv.Atoi(days)
		if err != nil {
			f.Errors["expiresInDays"] = "console.error.number"
		}
		body["expiresInDays"] = n
	}
	if len(f.Errors) == 0 {
		var created pages.APIKeyRow
		err := c.call(r, http.MethodPost, "/admin/api-keys", body, &created)
		if err == nil {
			return s.showKey(w, r, c, http.StatusCreated, created, "console.done.created")
		}
		var ok bool
		if f, ok = formFailure(err, "name", "permissions", "expiresInDays"); !ok {
			return err
		}
	}
	return c.render(w, r, http.StatusUnprocessableEntity, pages.NewAPIKey(c.nav(r, pages.SectionAPIKeys, "console.apiKeys.new"),
		f, formValues(r)))
}

// showKey is the page of a key's secret, shown once.
func (s *Service) showKey(w http.ResponseWriter, r *http.Request, c *Ctx, status int, k pages.APIKeyRow, done string) error {
	return c.render(w, r, status, pages.SecretPage(c.nav(r, pages.SectionAPIKeys, "console.apiKeys.title"),
		pages.ClientSecret{ClientID: k.Name, Secret: k.APIKey, Done: done, Label: "console.apiKeys.key"}, apiKeysPath))
}

// ConfirmRotateAPIKey asks before a key's secret is replaced: the old one
// stops working at once.
func (s *Service) ConfirmRotateAPIKey(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	id := pathVar(r, "id")
	return c.render(w, r, http.StatusOK, pages.ConfirmPage(c.nav(r, pages.SectionAPIKeys, "console.confirm.title"), pages.Confirm{
		Message: "console.apiKeys.rotateConfirm", Action: apiKeysPath + "/" + url.PathEscape(id) + "/rotate",
		Cancel: apiKeysPath, Button: "console.apiKeys.rotate"}))
}

// RotateAPIKey gives a key a new secret and shows it this once.
func (s *Service) RotateAPIKey(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	var rotated pages.APIKeyRow
	if err := c.call(r, http.MethodPost, adminAPIKey(pathVar(r, "id"), "/rotate"), nil, &rotated); err != nil {
		return err
	}
	return s.showKey(w, r, c, http.StatusOK, rotated, "console.done.keyRotated")
}

// ConfirmRevokeAPIKey asks before a key is revoked.
func (s *Service) ConfirmRevokeAPIKey(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	id := pathVar(r, "id")
	return c.render(w, r, http.StatusOK, pages.ConfirmPage(c.nav(r, pages.SectionAPIKeys, "console.confirm.title"), pages.Confirm{
		Message: "console.apiKeys.revokeConfirm", Action: apiKeysPath + "/" + url.PathEscape(id) + "/revoke",
		Cancel: apiKeysPath, Button: "console.apiKeys.revoke"}))
}

// RevokeAPIKey revokes a key: it stops working at once.
func (s *Service) RevokeAPIKey(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	if err := c.call(r, http.MethodDelete, adminAPIKey(pathVar(r, "id"), ""), nil, nil); err != nil {
		return err
	}
	redirect(w, r, apiKeysPath, "console.done.keyRevoked")
	return nil
}
