package console

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/idenplane/idenplane/app/authz"
	pages "github.com/idenplane/idenplane/ui/console"
)

func scopePath(realm, id, rest string) string {
	return realmPath(realm, "/client-scopes/"+url.PathEscape(id)+rest)
}
func adminScope(realm, id, rest string) string {
	return adminRealm(realm, "/client-scopes/"+url.PathEscape(id)+rest)
}

// scopeFields are the settings of a client scope its form changes; its
// protocol is fixed at its creation.
var scopeFields = []string{"name", "description"}

// scopeRep is a client scope as the API shows it.
type scopeRep struct {
	ID              string            `json:"id"`
	Name            string            `json:"name"`
	Description     string            `json:"description"`
	Protocol        string            `json:"protocol"`
	ProtocolMappers []pages.MapperRow `json:"protocolMappers"`
}

func (s *Service) scopePage(r *http.Request, c *Ctx, f pages.Form, values map[string]string) (pages.ScopePage, error) {
	realm, id := pathVar(r, "realm"), pathVar(r, "scopeId")
	var rep scopeRep
	if err := c.call(r, http.MethodGet, adminScope(realm, id, ""), nil, &rep); err != nil {
		return pages.ScopePage{}, err
	}
	p := pages.ScopePage{Form: f, ID: rep.ID, Protocol: rep.Protocol, Values: values, Mappers: rep.ProtocolMappers}
	if p.Values == nil {
		p.Values = map[string]string{"name": rep.Name, "description": rep.Description}
	}
	if c.can(authz.ScopesWrite) {
		types, err := s.mapperTypes(r, c, realm)
		if err != nil {
			return p, err
		}
		for _, t := range types {
			if t.Protocol == rep.Protocol {
				p.Types = append(p.Types, t.MapperType)
			}
		}
	}
	return p, nil
}

// mapperTypes are the protocol mapper types the API knows.
func (s *Service) mapperTypes(r *http.Request, c *Ctx, realm string) ([]pages.MapperType, error) {
	var types []pages.MapperType
	err := c.call(r, http.MethodGet, adminRealm(realm, "/protocol-mapper-types"), nil, &types)
	return types, err
}

func (s *Service) renderScope(w http.ResponseWriter, r *http.Request, c *Ctx, status int, f pages.Form, values map[string]string) error {
	p, err := s.scopePage(r, c, f, values)
	if err != nil {
		return err
	}
	return c.render(w, r, status, pages.Scope(c.nav(r, "client-scopes", "console.scope.title", p.Values["name"]), p))
}

// Scope shows a client scope's settings and protocol mappers.
func (s *Service) Scope(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	return s.renderScope(w, r, c, http.StatusOK, pages.Form{}, nil)
}

// SaveScope changes a client scope's name and description.
func (s *Service) SaveScope(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm, id := pathVar(r, "realm"), pathVar(r, "scopeId")
	var before, after map[string]any
	if err := c.call(r, http.MethodGet, adminScope(realm, id, ""), nil, &before); err != nil {
		return err
	}
	body, _ := readForm(r, scopeFields, nil, nil)
	if err := c.call(r, http.MethodPut, adminScope(realm, id, ""), body, &after); err != nil {
		f, ok := formFailure(err, scopeFields...)
		if !ok {
			return err
		}
		return s.renderScope(w, r, c, http.StatusUnprocessableEntity, f, formValues(r))
	}
	redirect(w, r, scopePath(realm, id, ""), changed(before, after, scopeFields)...)
	return nil
}

// configPrefix starts the name of a mapper config input: the API names
// a config key's refusal config.<key> too.
const configPrefix = "config."

// mapperBody reads a mapper's form: its name and the type's config keys,
// each token's flag "true" or "false", other keys left out when empty.
func mapperBody(r *http.Request, t pages.MapperType) map[string]any {
	cfg := map[string]any{}
	for _, k := range slices.Concat(t.Required, t.Optional) {
		if v := strings.TrimSpace(r.PostForm.Get(configPrefix + k)); v != "" {
			cfg[k] = v
		}
	}
	for _, k := range t.Tokens {
		cfg[k] = "false"
		if r.PostForm.Get(configPrefix+k) == "true" {
			cfg[k] = "true"
		}
	}
	return map[string]any{"name": strings.TrimSpace(r.PostForm.Get("name")), "config": cfg}
}

// mapperFailure shows a refusal of a mapper's form at its fields: the
// API names a config key's message by the key, whole.
func mapperFailure(err error) (pages.Form, bool) {
	var ae *apiError
	if !errors.As(err, &ae) || ae.Status >= 500 || ae.Status == http.StatusUnauthorized || ae.Status == http.StatusForbidden {
		return pages.Form{}, false
	}
	f := pages.Form{Errors: map[string]string{}}
	add := func(field, msg string) {
		switch {
		case field == "name" || strings.HasPrefix(field, configPrefix):
			if _, ok := f.Errors[field]; !ok {
				f.Errors[field] = msg
			}
		case f.Alert == "":
			f.Alert = msg
		}
	}
	add(ae.Field, ae.Description)
	for _, e := range ae.Errors {
		add(e.Field, e.Description)
	}
	return f, true
}

// mapperType is the type named, among those the API knows.
func (s *Service) mapperType(r *http.Request, c *Ctx, realm, name string) (pages.MapperType, error) {
	types, err := s.mapperTypes(r, c, realm)
	if err != nil {
		return pages.MapperType{}, err
	}
	for _, t := range types {
		if t.MapperType == name {
			return t, nil
		}
	}
	return pages.MapperType{}, &pages.Failure{Status: http.StatusNotFound, Message: "console.mapper.noSuchType",
		Back: scopePath(realm, pathVar(r, "scopeId"), "")}
}

func (s *Service) renderMapper(w http.ResponseWriter, r *http.Request, c *Ctx, status int, f pages.MapperForm) error {
	var scope scopeRep
	if err := c.call(r, http.MethodGet, adminScope(pathVar(r, "realm"), pathVar(r, "scopeId"), ""), nil, &scope); err != nil {
		return err
	}
	f.ScopeID, f.ScopeName = scope.ID, scope.Name
	title := "console.mapper.new"
	if f.ID != "" {
		title = "console.mapper.title"
	}
	return c.render(w, r, status, pages.Mapper(c.nav(r, "client-scopes", title, f.Type.MapperType), f))
}

// NewMapper shows the form of a new mapper of the type asked for, with
// its config keys; flags of every token it can reach start ticked.
func (s *Service) NewMapper(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	t, err := s.mapperType(r, c, pathVar(r, "realm"), r.URL.Query().Get("type"))
	if err != nil {
		return err
	}
	values := map[string]string{}
	for _, k := range t.Tokens {
		values[configPrefix+k] = "true"
	}
	return s.renderMapper(w, r, c, http.StatusOK, pages.MapperForm{Type: t, Values: values})
}

// CreateMapper adds a mapper to a client scope.
func (s *Service) CreateMapper(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm, id := pathVar(r, "realm"), pathVar(r, "scopeId")
	t, err := s.mapperType(r, c, realm, r.PostForm.Get("mapperType"))
	if err != nil {
		return err
	}
	body := mapperBody(r, t)
	body["mapperType"], body["protocol"] = t.MapperType, t.Protocol
	if err := c.call(r, http.MethodPost, adminScope(realm, id, "/protocol-mappers"), body, nil); err != nil {
		f, ok := mapperFailure(err)
		if !ok {
			return err
		}
		return s.renderMapper(w, r, c, http.StatusUnprocessableEntity, pages.MapperForm{Form: f, Type: t, Values: formValues(r)})
	}
	redirect(w, r, scopePath(realm, id, ""), "console.done.mapperCreated")
	return nil
}

// mapper reads one mapper of the scope and its type.
func (s *Service) mapper(r *http.Request, c *Ctx) (pages.MapperRow, pages.MapperType, error) {
	realm := pathVar(r, "realm")
	var m pages.MapperRow
	if err := c.call(r, http.MethodGet, adminScope(realm, pathVar(r, "scopeId"), "/protocol-mappers/"+url.PathEscape(pathVar(r, "mapperId"))),
		nil, &m); err != nil {
		return m, pages.MapperType{}, err
	}
	t, err := s.mapperType(r, c, realm, m.MapperType)
	return m, t, err
}

// Mapper shows a mapper's form.
func (s *Service) Mapper(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	m, t, err := s.mapper(r, c)
	if err != nil {
		return err
	}
	values := map[string]string{"name": m.Name}
	for k, v := range m.Config {
		values[configPrefix+k] = v
	}
	return s.renderMapper(w, r, c, http.StatusOK, pages.MapperForm{ID: m.ID, Type: t, Values: values})
}

// SaveMapper changes a mapper: its name and its whole config.
func (s *Service) SaveMapper(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm, id := pathVar(r, "realm"), pathVar(r, "scopeId")
	m, t, err := s.mapper(r, c)
	if err != nil {
		return err
	}
	if err := c.call(r, http.MethodPut, adminScope(realm, id, "/protocol-mappers/"+url.PathEscape(m.ID)), mapperBody(r, t), nil); err != nil {
		f, ok := mapperFailure(err)
		if !ok {
			return err
		}
		return s.renderMapper(w, r, c, http.StatusUnprocessableEntity, pages.MapperForm{Form: f, ID: m.ID, Type: t, Values: formValues(r)})
	}
	redirect(w, r, scopePath(realm, id, ""), "console.done.mapperSaved")
	return nil
}

// ConfirmDeleteMapper asks before a mapper is deleted.
func (s *Service) ConfirmDeleteMapper(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm, id := pathVar(r, "realm"), pathVar(r, "scopeId")
	m, _, err := s.mapper(r, c)
	if err != nil {
		return err
	}
	return c.render(w, r, http.StatusOK, pages.ConfirmPage(c.nav(r, "client-scopes", "console.confirm.title"), pages.Confirm{
		Message: "console.mapper.deleteConfirm", Args: []any{m.Name}, Action: scopePath(realm, id, "/mappers/"+url.PathEscape(m.ID)+"/delete"),
		Cancel: scopePath(realm, id, ""), Button: "console.delete"}))
}

// DeleteMapper deletes a mapper.
func (s *Service) DeleteMapper(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm, id := pathVar(r, "realm"), pathVar(r, "scopeId")
	if err := c.call(r, http.MethodDelete, adminScope(realm, id, "/protocol-mappers/"+url.PathEscape(pathVar(r, "mapperId"))), nil, nil); err != nil {
		return err
	}
	redirect(w, r, scopePath(realm, id, ""), "console.done.mapperDeleted")
	return nil
}
