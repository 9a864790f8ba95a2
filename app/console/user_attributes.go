package console

import (
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/idenplane/idenplane/app/authz"
	pages "github.com/idenplane/idenplane/ui/console"
)

// A user's custom attributes are the values of the realm's schema
// (GET .../custom-attributes); the console changes them with the user's
// PUT, the whole representation as read with the attribute changed, so
// the API checks every value against the schema as for any other caller.

// heldAttributes are the attributes of a user's representation.
func heldAttributes(rep map[string]any) map[string][]string {
	out := map[string][]string{}
	m, _ := rep["attributes"].(map[string]any)
	for name, v := range m {
		list, _ := v.([]any)
		for _, e := range list {
			if s, ok := e.(string); ok {
				out[name] = append(out[name], s)
			}
		}
	}
	return out
}

// userAttributes fills the page's attributes: those the user holds and,
// for an administrator who may change them and read the schema, those
// the user may get.
func (s *Service) userAttributes(r *http.Request, c *Ctx, realm string, rep map[string]any, p *pages.UserPage) error {
	held := heldAttributes(rep)
	var schema []struct {
		Name        string `json:"name"`
		DisplayName string `json:"displayName"`
		Multivalued bool   `json:"multivalued"`
	}
	if c.can(authz.RealmRead) {
		if err := c.call(r, http.MethodGet, adminRealm(realm, "/custom-attributes"), nil, &schema); err != nil {
			return err
		}
	}
	for _, a := range schema {
		label := a.DisplayName
		if label == "" {
			label = a.Name
		}
		if v, ok := held[a.Name]; ok {
			p.Attributes = append(p.Attributes, pages.AttributeRow{Name: a.Name, Label: label, Value: strings.Join(v, "\n"),
				Multivalued: a.Multivalued})
			delete(held, a.Name)
		} else if c.can(authz.UsersWrite) {
			p.AttributeChoices = append(p.AttributeChoices, pages.Choice{Value: a.Name, Label: label})
		}
	}
	// Without the schema, the values are all there is to show.
	names := make([]string, 0, len(held))
	for name := range held {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		p.Attributes = append(p.Attributes, pages.AttributeRow{Name: name, Label: name,
			Value: strings.Join(held[name], "\n"), Multivalued: len(held[name]) > 1})
	}
	return nil
}

// attributeValues reads a value posted for an attribute: one a line, the
// empty lines left out.
func attributeValues(v string) []string {
	var out []string
	for _, line := range strings.Split(v, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, line)
		}
	}
	return out
}

// SetUserAttribute gives a user an attribute's value, or changes it.
func (s *Service) SetUserAttribute(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	name := r.PostForm.Get("name")
	value := r.PostForm.Get("value")
	return s.putAttribute(w, r, c, name, attributeValues(value), value)
}

// RemoveUserAttribute takes an attribute's values from a user.
func (s *Service) RemoveUserAttribute(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	return s.putAttribute(w, r, c, r.PostForm.Get("name"), nil, "")
}

func (s *Service) putAttribute(w http.ResponseWriter, r *http.Request, c *Ctx, name string, values []string, posted string) error {
	realm, id := pathVar(r, "realm"), pathVar(r, "userId")
	var rep map[string]any
	if err := c.call(r, http.MethodGet, adminUser(realm, id, ""), nil, &rep); err != nil {
		return err
	}
	attrs := heldAttributes(rep)
	_, had := attrs[name]
	done := "console.done.attributeSaved"
	if len(values) == 0 {
		delete(attrs, name)
		done = "console.done.attributeRemoved"
	} else {
		attrs[name] = values
	}
	// The representation as read goes back whole: PUT leaves out nothing
	// the user holds. Its ID and creation time are no fields to set.
	delete(rep, "id")
	delete(rep, "createdTimestamp")
	rep["attributes"] = attrs
	err := c.call(r, http.MethodPut, adminUser(realm, id, ""), rep, nil)
	if err == nil {
		if len(values) == 0 && !had {
			done = "console.done.nothingChanged"
		}
		redirect(w, r, userPath(realm, id, ""), done)
		return nil
	}
	af, ok := attributeFailure(err, name, posted)
	if !ok {
		return err
	}
	return s.renderUser(w, r, c, http.StatusUnprocessableEntity, pages.Form{}, nil, func(p *pages.UserPage) { p.AttributeForm = af })
}

// attributeFailure is the API's refusal of an attribute's value, at the
// input of that attribute (the API names it attributes.<name>), or about
// the attributes as a whole (another attribute the schema requires).
func attributeFailure(err error, name, posted string) (pages.AttributeForm, bool) {
	var ae *apiError
	if !errors.As(err, &ae) || ae.Status >= 500 || ae.Status == http.StatusUnauthorized || ae.Status == http.StatusForbidden {
		return pages.AttributeForm{}, false
	}
	af := pages.AttributeForm{Name: name, Value: posted}
	var others []string
	add := func(field, msg string) {
		switch {
		case field == "attributes."+name && af.Error == "":
			af.Error = msg
		case field != "" && !slices.Contains(others, field+": "+msg):
			others = append(others, field+": "+msg)
		}
	}
	// Each of errors has its own message; field's is all of them joined.
	for _, f := range ae.Errors {
		add(f.Field, f.Description)
	}
	if len(ae.Errors) == 0 {
		add(ae.Field, ae.Description)
	}
	if af.Error == "" {
		af.Error = ae.Description
		if len(others) > 0 {
			af.Error = strings.Join(others, "; ")
		}
	}
	return af, true
}
