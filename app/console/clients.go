package console

import (
	"cmp"
	"net/http"
	"net/url"
	"slices"
	"strings"

	pages "github.com/idenplane/idenplane/ui/console"
)

func clientPath(realm, clientID, rest string) string {
	return realmPath(realm, "/clients/"+url.PathEscape(clientID)+rest)
}
func adminClient(realm, clientID, rest string) string {
	return adminRealm(realm, "/clients/"+url.PathEscape(clientID)+rest)
}

// grantTypes are the grants a client's form offers, by their OAuth names
// (the API's); defaultGrants are the API's default for a new client.
var (
	grantTypes = []string{"authorization_code", "refresh_token", "client_credentials",
		"urn:ietf:params:oauth:grant-type:device_code", "password"}
	defaultGrants = []string{"authorization_code", "refresh_token"}
)

// clientConfidential is the API's type of a client that keeps a secret.
const clientConfidential = "CONFIDENTIAL"

// Clients lists a realm's clients, sorted by ?sort (clientId or name).
func (s *Service) Clients(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm := pathVar(r, "realm")
	var list []pages.ClientRow
	if err := c.call(r, http.MethodGet, adminRealm(realm, "/clients"), nil, &list); err != nil {
		return err
	}
	sort := r.URL.Query().Get("sort")
	if sort == "name" {
		slices.SortStableFunc(list, func(a, b pages.ClientRow) int { return cmp.Compare(a.Name, b.Name) })
	} else {
		sort = "clientId"
		slices.SortStableFunc(list, func(a, b pages.ClientRow) int { return cmp.Compare(a.ClientID, b.ClientID) })
	}
	return c.render(w, r, http.StatusOK, pages.Clients(c.nav(r, pages.SectionClients, "console.clients.title", realm),
		pages.ClientList{Clients: list, Sort: sort}))
}

var (
	clientTexts  = []string{"name", "description", "backchannelLogoutUri"}
	clientLists  = []string{"redirectUris", "webOrigins"}
	clientChecks = []string{"enabled", "requireConsent"}
	clientFields = slices.Concat([]string{"clientId", "clientType", "grantTypes"}, clientTexts, clientLists, clientChecks)
)

// clientBody reads a client's form: texts, one URI a line, checkboxes
// and the grants ticked.
func clientBody(r *http.Request) map[string]any {
	body, _ := readForm(r, clientTexts, nil, clientChecks)
	for _, k := range clientLists {
		list := []string{}
		for line := range strings.Lines(r.PostForm.Get(k)) {
			if line = strings.TrimSpace(line); line != "" {
				list = append(list, line)
			}
		}
		body[k] = list
	}
	grants := []string{}
	for _, g := range r.PostForm["grantTypes"] {
		if slices.Contains(grantTypes, g) {
			grants = append(grants, g)
		}
	}
	body["grantTypes"] = grants
	return body
}

func clientForm(values map[string]string, f pages.Form) pages.ClientForm {
	return pages.ClientForm{Form: f, Values: values, GrantTypes: grantTypes}
}

// postedValues are a client form's values to show it again, the grants
// ticked among them.
func postedValues(r *http.Request) map[string]string {
	v := formValues(r)
	v["grantTypes"] = strings.Join(r.PostForm["grantTypes"], "\n")
	return v
}

// NewClient shows the form of a new client.
func (s *Service) NewClient(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm := pathVar(r, "realm")
	values := map[string]string{"enabled": "true", "clientType": clientConfidential,
		"grantTypes": strings.Join(defaultGrants, "\n")}
	return c.render(w, r, http.StatusOK, pages.NewClient(c.nav(r, pages.SectionClients, "console.clients.new", realm),
		clientForm(values, pages.Form{})))
}

// CreateClient creates a client with POST .../clients; a confidential
// client's secret is shown on the answer, once: only its hash is kept.
func (s *Service) CreateClient(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm := pathVar(r, "realm")
	body := clientBody(r)
	body["clientId"] = strings.TrimSpace(r.PostForm.Get("clientId"))
	body["clientType"] = r.PostForm.Get("clientType")
	var created pages.ClientSecret
	if err := c.call(r, http.MethodPost, adminRealm(realm, "/clients"), body, &created); err != nil {
		f, ok := formFailure(err, clientFields...)
		if !ok {
			return err
		}
		return c.render(w, r, http.StatusUnprocessableEntity, pages.NewClient(c.nav(r, pages.SectionClients, "console.clients.new", realm),
			clientForm(postedValues(r), f)))
	}
	if created.Secret == "" {
		redirect(w, r, clientPath(realm, created.ClientID, ""), "console.done.clientCreated")
		return nil
	}
	created.Done = "console.done.clientCreated"
	return c.render(w, r, http.StatusCreated, pages.SecretPage(c.nav(r, pages.SectionClients, "console.secret.title"), created,
		clientPath(realm, created.ClientID, "")))
}

// client is the page of one client.
func (s *Service) clientPage(r *http.Request, c *Ctx) (map[string]any, error) {
	var rep map[string]any
	err := c.call(r, http.MethodGet, adminClient(pathVar(r, "realm"), pathVar(r, "clientId"), ""), nil, &rep)
	return rep, err
}

// Client shows a client's settings.
func (s *Service) Client(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	rep, err := s.clientPage(r, c)
	if err != nil {
		return err
	}
	f := clientForm(stringValues(rep, clientFields), pages.Form{})
	f.Endpoints = s.endpoints(pathVar(r, "realm"), rep)
	return c.render(w, r, http.StatusOK, pages.Client(c.nav(r, pages.SectionClients, "console.client.title", str(rep["clientId"])), f))
}

// SaveClient changes a client with PATCH; a refusal shows every field's
// message at once (redirect URIs among them).
func (s *Service) SaveClient(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm, id := pathVar(r, "realm"), pathVar(r, "clientId")
	before, err := s.clientPage(r, c)
	if err != nil {
		return err
	}
	var after map[string]any
	err = c.call(r, http.MethodPatch, adminClient(realm, id, ""), clientBody(r), &after)
	if err == nil {
		redirect(w, r, clientPath(realm, id, ""), changed(before, after, clientFields)...)
		return nil
	}
	f, ok := formFailure(err, clientFields...)
	if !ok {
		return err
	}
	values := postedValues(r)
	values["clientId"], values["clientType"] = str(before["clientId"]), str(before["clientType"])
	return c.render(w, r, http.StatusUnprocessableEntity, pages.Client(c.nav(r, pages.SectionClients, "console.client.title", id),
		clientForm(values, f)))
}

// ConfirmRegenerateSecret asks before a client's secret is replaced: the
// old one stops working.
func (s *Service) ConfirmRegenerateSecret(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm, id := pathVar(r, "realm"), pathVar(r, "clientId")
	return c.render(w, r, http.StatusOK, pages.ConfirmPage(c.nav(r, pages.SectionClients, "console.confirm.title"), pages.Confirm{
		Message: "console.client.regenerateConfirm", Args: []any{id}, Action: clientPath(realm, id, "/secret"),
		Cancel: clientPath(realm, id, ""), Button: "console.client.regenerate"}))
}

// RegenerateSecret replaces a client's secret and shows the new one, once.
func (s *Service) RegenerateSecret(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm, id := pathVar(r, "realm"), pathVar(r, "clientId")
	var rep pages.ClientSecret
	if err := c.call(r, http.MethodPost, adminClient(realm, id, "/regenerate-secret"), nil, &rep); err != nil {
		return err
	}
	rep.Done = "console.done.secretRegenerated"
	return c.render(w, r, http.StatusOK, pages.SecretPage(c.nav(r, pages.SectionClients, "console.secret.title"), rep,
		clientPath(realm, id, "")))
}

// ConfirmDeleteClient asks before a client is deleted.
func (s *Service) ConfirmDeleteClient(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm, id := pathVar(r, "realm"), pathVar(r, "clientId")
	if _, err := s.clientPage(r, c); err != nil {
		return err
	}
	return c.render(w, r, http.StatusOK, pages.ConfirmPage(c.nav(r, pages.SectionClients, "console.confirm.title"), pages.Confirm{
		Message: "console.client.deleteConfirm", Args: []any{id}, Action: clientPath(realm, id, "/delete"),
		Cancel: clientPath(realm, id, ""), Button: "console.client.delete"}))
}

// DeleteClient deletes a client.
func (s *Service) DeleteClient(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm, id := pathVar(r, "realm"), pathVar(r, "clientId")
	if err := c.call(r, http.MethodDelete, adminClient(realm, id, ""), nil, nil); err != nil {
		return err
	}
	redirect(w, r, realmPath(realm, "/clients"), "console.done.clientDeleted")
	return nil
}

// endpoints are the realm's OpenID Connect addresses, for an application
// of the client.
func (s *Service) endpoints(realm string, rep map[string]any) *pages.Endpoints {
	issuer := s.deps.BaseURL + "/realms/" + url.PathEscape(realm)
	p := issuer + "/protocol/openid-connect/"
	e := &pages.Endpoints{Issuer: issuer, Discovery: issuer + "/.well-known/openid-configuration", Authorization: p + "auth",
		Token: p + "token", Userinfo: p + "userinfo", Logout: p + "logout"}
	if uris, _ := rep["redirectUris"].([]any); len(uris) > 0 {
		e.Redirect, _ = uris[0].(string)
	}
	return e
}
