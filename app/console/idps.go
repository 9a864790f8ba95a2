package console

import (
	"net/http"
	"slices"
	"strings"

	"github.com/idenplane/idenplane/app/authz"
	pages "github.com/idenplane/idenplane/ui/console"
)

// The pages of an identity provider: its creation from a preset (each
// with its mark), an OpenID Connect issuer's endpoints filled from its
// discovery document (the API fetches it, through the server's outbound
// guard), and its page where it changes.

const idpKind = "identity-providers"

// idpTypes are the API's provider types, generic ones first.
var idpTypes = []string{"oidc", "oauth2", "google", "microsoft", "github", "gitlab", "apple", "facebook", "linkedin", "discord"}

// idpEndpoints are the fields a discovery fills.
var idpEndpoints = []string{"authorizationUrl", "tokenUrl", "userinfoUrl", "jwksUrl", "logoutUrl"}

var (
	idpTexts  = slices.Concat([]string{"displayName", "clientId", "issuer", "tenant", "defaultScopes"}, idpEndpoints)
	idpChecks = []string{"enabled", "trustEmail", "syncUserProfile"}
	idpFields = slices.Concat([]string{"alias", "providerType", "clientSecret"}, idpTexts, idpChecks)
)

// idpIcon is the mark of a provider type (the generic one for oidc and
// oauth2).
func (s *Service) idpIcon(t string) string {
	switch t {
	case "oidc", "oauth2", "":
		return s.deps.Asset("idp/generic.svg")
	}
	return s.deps.Asset("idp/" + t + ".svg")
}

// idpSpecs are the inputs of a provider's form; create adds the alias and
// the preset.
func (s *Service) idpSpecs(create bool) []pages.FieldSpec {
	var out []pages.FieldSpec
	if create {
		icons := map[string]string{}
		for _, t := range idpTypes {
			icons[t] = s.idpIcon(t)
		}
		out = append(out, pages.FieldSpec{Name: "providerType", Kind: "preset", Options: idpTypes, Icons: icons},
			text("alias", true))
	}
	out = append(out, text("displayName", false), text("clientId", true), pages.FieldSpec{Name: "clientSecret", Kind: "password"},
		pages.FieldSpec{Name: "issuer", Kind: "url"}, text("tenant", false), text("defaultScopes", false))
	for _, e := range idpEndpoints {
		out = append(out, pages.FieldSpec{Name: e, Kind: "url"})
	}
	for _, k := range idpChecks {
		out = append(out, pages.FieldSpec{Name: k, Kind: "check"})
	}
	return out
}

// idpBody reads a provider's form: the texts, the checkboxes, and the
// secret only when one was typed (the API keeps the stored one for its
// redacted value).
func idpBody(r *http.Request, update bool) map[string]any {
	body, _ := readForm(r, idpTexts, nil, idpChecks)
	if v := r.PostForm.Get("clientSecret"); v != "" {
		body["clientSecret"] = v
	} else if update {
		body["clientSecret"] = redactedSecret
	}
	return body
}

// redactedSecret is the API's clientSecret of a provider read back: sent
// again, it keeps the stored secret.
const redactedSecret = "**********"

func (s *Service) newIdPPage(w http.ResponseWriter, r *http.Request, c *Ctx, status int, st state) error {
	realm := pathVar(r, "realm")
	form := st.fill(pages.ActionForm{ID: "idp", Action: realmPath(realm, "/"+idpKind+"/new"), Fields: s.idpSpecs(true),
		Button: "console.create", Values: map[string]string{"enabled": "true", "providerType": "oidc"}})
	d := pages.Detail{Back: realmPath(realm, "/"+idpKind), Sections: []pages.Section{
		{ID: "preset", Title: "console.idp.preset", Note: "console.idp.presetNote", Facts: st.result, Forms: []pages.ActionForm{form}},
		s.discoverSection(realmPath(realm, "/"+idpKind+"/new/discover"), st)}}
	return c.render(w, r, status, pages.DetailPage(c.nav(r, idpKind, "console.idp.new"), d))
}

// discoverSection is the form of a discovery: it posts the provider's
// form again (its values kept) with the issuer to read.
func (s *Service) discoverSection(action string, st state) pages.Section {
	return pages.Section{ID: "discover", Title: "console.idp.discover", Note: "console.idp.discoverNote",
		Forms: []pages.ActionForm{st.fill(pages.ActionForm{ID: "discovery", Action: action, Secondary: true,
			Fields: []pages.FieldSpec{{Name: "issuer", Kind: "url", Required: true}}, Button: "console.idp.discoverButton"})}}
}

// NewIdentityProvider shows the form of a new provider.
func (s *Service) NewIdentityProvider(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	return s.newIdPPage(w, r, c, http.StatusOK, state{})
}

// discovered asks the API for the issuer's endpoints; ok false is a
// refusal shown at the discovery form's field.
func (s *Service) discovered(r *http.Request, c *Ctx) (map[string]string, *state, error) {
	var d map[string]any
	err := c.call(r, http.MethodPost, adminRealm(pathVar(r, "realm"), "/"+idpKind+"/discover"),
		map[string]any{"issuer": strings.TrimSpace(r.PostForm.Get("issuer"))}, &d)
	if err != nil {
		f, ok := formFailure(err, "issuer")
		if !ok {
			return nil, nil, err
		}
		return nil, &state{form: "discovery", f: f, values: formValues(r)}, nil
	}
	values := stringValues(d, append([]string{"issuer"}, idpEndpoints...))
	return values, nil, nil
}

// DiscoverNewIdentityProvider fills the new provider's form with what the
// issuer's discovery document gives: an OpenID Connect provider.
func (s *Service) DiscoverNewIdentityProvider(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	values, refused, err := s.discovered(r, c)
	if err != nil {
		return err
	}
	if refused != nil {
		return s.newIdPPage(w, r, c, http.StatusUnprocessableEntity, *refused)
	}
	values["providerType"], values["enabled"] = "oidc", "true"
	return s.newIdPPage(w, r, c, http.StatusOK, state{form: "idp", values: values, f: pages.Form{},
		result: []pages.Fact{{Label: "console.idp.discovered", Value: values["issuer"]}}})
}

// CreateIdentityProvider creates a provider with POST .../identity-providers;
// an OpenID Connect provider's endpoints left empty are the discovery's.
func (s *Service) CreateIdentityProvider(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm := pathVar(r, "realm")
	body := idpBody(r, false)
	body["alias"], body["providerType"] = strings.TrimSpace(r.PostForm.Get("alias")), r.PostForm.Get("providerType")
	for k, v := range body {
		if v == "" {
			delete(body, k) // the preset's or the discovery's
		}
	}
	var created map[string]any
	err := c.call(r, http.MethodPost, adminRealm(realm, "/"+idpKind), body, &created)
	if err == nil {
		redirect(w, r, one(realm, idpKind, cell(created["alias"]), ""), "console.done.created")
		return nil
	}
	f, ok := formFailure(err, idpFields...)
	if !ok {
		return err
	}
	return s.newIdPPage(w, r, c, http.StatusUnprocessableEntity, state{form: "idp", f: f, values: formValues(r)})
}

// IdentityProvider shows one provider with its mark, and its form.
func (s *Service) IdentityProvider(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	return s.idpPage(w, r, c, http.StatusOK, state{})
}

func (s *Service) idpPage(w http.ResponseWriter, r *http.Request, c *Ctx, status int, st state) error {
	realm, alias := pathVar(r, "realm"), pathVar(r, "id")
	var rep map[string]any
	if err := c.call(r, http.MethodGet, apiOne(realm, idpKind, alias, ""), nil, &rep); err != nil {
		return err
	}
	t := cell(rep["providerType"])
	d := pages.Detail{Back: realmPath(realm, "/"+idpKind), Icon: &pages.Icon{Src: s.idpIcon(t), Alt: "console.preset." + t},
		Facts: factsOf(rep, "alias", "providerType", "displayName", "enabled")}
	if c.can(authz.IdentityProvidersWrite) {
		self := one(realm, idpKind, alias, "")
		values := stringValues(rep, idpFields)
		delete(values, "clientSecret")
		edit := st.fill(pages.ActionForm{ID: "idp", Action: self, Fields: s.idpSpecs(false), Values: values, Button: "console.save"})
		sections := []pages.Section{{ID: "settings", Title: "console.idp.settings", Facts: st.result, Forms: []pages.ActionForm{edit}}}
		if t == "oidc" {
			sections = append(sections, s.discoverSection(self+"/discover", st))
		}
		d.Sections = append(sections, deleteSection(alias, self+"/delete"))
	}
	return c.render(w, r, status, pages.DetailPage(c.nav(r, idpKind, "console.idp.title", alias), d))
}

// DiscoverIdentityProvider fills a provider's form with what the issuer's
// discovery document gives, to be saved.
func (s *Service) DiscoverIdentityProvider(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm, alias := pathVar(r, "realm"), pathVar(r, "id")
	found, refused, err := s.discovered(r, c)
	if err != nil {
		return err
	}
	if refused != nil {
		return s.idpPage(w, r, c, http.StatusUnprocessableEntity, *refused)
	}
	var rep map[string]any
	if err := c.call(r, http.MethodGet, apiOne(realm, idpKind, alias, ""), nil, &rep); err != nil {
		return err
	}
	values := stringValues(rep, idpFields)
	delete(values, "clientSecret")
	for k, v := range found {
		values[k] = v
	}
	return s.idpPage(w, r, c, http.StatusOK, state{form: "idp", values: values,
		result: []pages.Fact{{Label: "console.idp.discovered", Value: found["issuer"]}}})
}

// SaveIdentityProvider changes a provider with PUT; the secret stays
// unless a new one is typed.
func (s *Service) SaveIdentityProvider(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm, alias := pathVar(r, "realm"), pathVar(r, "id")
	var before, after map[string]any
	if err := c.call(r, http.MethodGet, apiOne(realm, idpKind, alias, ""), nil, &before); err != nil {
		return err
	}
	err := c.call(r, http.MethodPut, apiOne(realm, idpKind, alias, ""), idpBody(r, true), &after)
	if err == nil {
		redirect(w, r, one(realm, idpKind, alias, ""), changed(before, after, slices.Concat(idpTexts, idpChecks))...)
		return nil
	}
	f, ok := formFailure(err, idpFields...)
	if !ok {
		return err
	}
	return s.idpPage(w, r, c, http.StatusUnprocessableEntity, state{form: "idp", f: f, values: formValues(r)})
}
