package console

import (
	"io"
	"net/http"
	"strings"

	"github.com/idenplane/idenplane/app/authz"
	pages "github.com/idenplane/idenplane/ui/console"
)

// The pages of a SAML service provider: its creation from its metadata
// (the address it publishes it at, which the API fetches through the
// server's outbound guard; a file uploaded; or the document pasted), and
// its page.

const spKind = "saml-service-providers"

var spCreateFields = []pages.FieldSpec{
	{Name: "metadataUrl", Kind: "url"}, {Name: "metadataFile", Kind: "file"}, {Name: "metadata", Kind: "textarea"},
	text("entityId", false), text("name", false), {Name: "acsUrl", Kind: "url"}, {Name: "enabled", Kind: "check"},
}

func (s *Service) newSPPage(w http.ResponseWriter, r *http.Request, c *Ctx, status int, st state) error {
	realm := pathVar(r, "realm")
	form := st.fill(pages.ActionForm{ID: "sp", Action: realmPath(realm, "/"+spKind+"/new"), Fields: spCreateFields,
		Button: "console.create", Multipart: true, Values: map[string]string{"enabled": "true"}})
	d := pages.Detail{Back: realmPath(realm, "/"+spKind), Sections: []pages.Section{{ID: "source", Title: "console.saml.source",
		Note: "console.saml.sourceNote", Forms: []pages.ActionForm{form}}}}
	return c.render(w, r, status, pages.DetailPage(c.nav(r, spKind, "console.saml.new"), d))
}

// NewSAMLServiceProvider shows the form of a new SP.
func (s *Service) NewSAMLServiceProvider(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	return s.newSPPage(w, r, c, http.StatusOK, state{})
}

// uploaded is the content of the form's file named name, "" for none.
func uploaded(r *http.Request, name string) (string, error) {
	if r.MultipartForm == nil || len(r.MultipartForm.File[name]) == 0 || r.MultipartForm.File[name][0].Size == 0 {
		return "", nil
	}
	f, err := r.MultipartForm.File[name][0].Open()
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	return string(b), err
}

// CreateSAMLServiceProvider creates an SP with POST .../saml-service-providers:
// its metadata by address (metadataUrl, which the API fetches), uploaded
// or pasted (metadata); a field filled in goes over the metadata's.
func (s *Service) CreateSAMLServiceProvider(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm := pathVar(r, "realm")
	body := map[string]any{"enabled": r.PostForm.Get("enabled") == "true"}
	for _, k := range []string{"entityId", "name", "acsUrl", "metadataUrl", "metadata"} {
		if v := strings.TrimSpace(r.PostForm.Get(k)); v != "" {
			body[k] = v
		}
	}
	file, err := uploaded(r, "metadataFile")
	if err != nil {
		return err
	}
	if countTrue(body["metadataUrl"] != nil, file != "", body["metadata"] != nil) > 1 {
		return s.newSPPage(w, r, c, http.StatusUnprocessableEntity, state{form: "sp", values: formValues(r),
			f: pages.Form{Errors: map[string]string{"metadataUrl": "console.saml.oneSource"}}})
	}
	if file != "" {
		body["metadata"] = file
	}
	var created map[string]any
	err = c.call(r, http.MethodPost, adminRealm(realm, "/"+spKind), body, &created)
	if err == nil {
		redirect(w, r, one(realm, spKind, cell(created["id"]), ""), "console.done.created")
		return nil
	}
	f, ok := formFailure(err, "metadataUrl", "metadata", "entityId", "name", "acsUrl", "enabled")
	if !ok {
		return err
	}
	if msg, isDoc := f.Errors["metadata"]; isDoc && file != "" {
		// The document came from the file: its message is the file's.
		delete(f.Errors, "metadata")
		f.Errors["metadataFile"] = msg
	}
	return s.newSPPage(w, r, c, http.StatusUnprocessableEntity, state{form: "sp", f: f, values: formValues(r)})
}

var (
	spEditTexts  = []string{"name", "acsUrl", "sloUrl"}
	spEditChecks = []string{"enabled", "signAssertions", "signResponses", "requestsSigned"}
	spEditFields = append(append([]string{}, spEditTexts...), spEditChecks...)
)

// SAMLServiceProvider shows one SP: what its metadata gave, and the
// settings that may change.
func (s *Service) SAMLServiceProvider(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	return s.spPage(w, r, c, http.StatusOK, state{})
}

func (s *Service) spPage(w http.ResponseWriter, r *http.Request, c *Ctx, status int, st state) error {
	realm, id := pathVar(r, "realm"), pathVar(r, "id")
	var rep map[string]any
	if err := c.call(r, http.MethodGet, apiOne(realm, spKind, id, ""), nil, &rep); err != nil {
		return err
	}
	d := pages.Detail{Back: realmPath(realm, "/"+spKind),
		Facts: factsOf(rep, "entityId", "name", "acsUrl", "sloUrl", "sloBinding", "nameIdFormat", "requestsSigned", "enabled")}
	if cell(rep["certificate"]) != "" {
		d.Facts = append(d.Facts, pages.Fact{Label: "console.field.certificate", Value: "✓"})
	}
	if c.can(authz.ClientsWrite) {
		fields := make([]pages.FieldSpec, 0, len(spEditFields))
		for _, k := range spEditTexts {
			fields = append(fields, text(k, false))
		}
		for _, k := range spEditChecks {
			fields = append(fields, pages.FieldSpec{Name: k, Kind: "check"})
		}
		edit := st.fill(pages.ActionForm{ID: "settings", Action: one(realm, spKind, id, ""), Fields: fields,
			Values: stringValues(rep, spEditFields), Button: "console.save"})
		d.Sections = append(d.Sections, pages.Section{ID: "settings", Title: "console.saml.settings", Forms: []pages.ActionForm{edit}},
			deleteSection(cell(rep["entityId"]), one(realm, spKind, id, "/delete")))
	}
	return c.render(w, r, status, pages.DetailPage(c.nav(r, spKind, "console.saml.title", cell(rep["name"])), d))
}

// SaveSAMLServiceProvider changes an SP's settings with PUT.
func (s *Service) SaveSAMLServiceProvider(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	realm, id := pathVar(r, "realm"), pathVar(r, "id")
	var before, after map[string]any
	if err := c.call(r, http.MethodGet, apiOne(realm, spKind, id, ""), nil, &before); err != nil {
		return err
	}
	body, _ := readForm(r, spEditTexts, nil, spEditChecks)
	err := c.call(r, http.MethodPut, apiOne(realm, spKind, id, ""), body, &after)
	if err == nil {
		redirect(w, r, one(realm, spKind, id, ""), changed(before, after, spEditFields)...)
		return nil
	}
	f, ok := formFailure(err, spEditFields...)
	if !ok {
		return err
	}
	return s.spPage(w, r, c, http.StatusUnprocessableEntity, state{form: "settings", f: f, values: formValues(r)})
}

func countTrue(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}
