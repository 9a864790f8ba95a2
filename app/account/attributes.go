package account

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// The realm's custom attributes on the account page. Those the schema lets
// the user edit (editableBy user) are fields of the profile form, checked by
// the identity core's rules; those only an administrator sets are shown,
// read-only, when the user holds values of them, as Keycloak shows an
// attribute the user may view but not edit. Values of attributes removed
// from the schema show nowhere.

// accountAttributes is the schema and the user's values of its attributes.
type accountAttributes struct {
	schema []*store.CustomAttribute
	held   map[string][]string // of the schema's attributes only
}

func (s *Service) loadAccountAttributes(ctx context.Context, c *Caller) (*accountAttributes, error) {
	schema, err := s.deps.Store.ListCustomAttributes(ctx, c.Realm.ID)
	if err != nil {
		return nil, err
	}
	all, err := s.deps.Store.UserCustomAttributes(ctx, c.User.ID)
	if err != nil {
		return nil, err
	}
	held := map[string][]string{}
	for _, attr := range schema {
		if v := all[attr.Name]; len(v) > 0 {
			held[attr.Name] = v
		}
	}
	return &accountAttributes{schema: schema, held: held}, nil
}

// editable is the attributes the user edits.
func (aa *accountAttributes) editable() []*store.CustomAttribute {
	return slices.DeleteFunc(slices.Clone(aa.schema), func(attr *store.CustomAttribute) bool {
		return attr.EditableBy != identity.EditableByUser
	})
}

// posted reads the editable attributes' values of the profile form: each
// field attributes.<name>, several for a multivalued one, empty ones
// being none.
func (aa *accountAttributes) posted(r *http.Request) map[string][]string {
	out := map[string][]string{}
	for _, attr := range aa.editable() {
		for _, v := range r.PostForm["attributes."+attr.Name] {
			if v = strings.TrimSpace(v); v != "" {
				out[attr.Name] = append(out[attr.Name], v)
			}
		}
	}
	return out
}

// fill puts the attributes on the profile form: the editable ones with
// values (stored, or as posted) and errors by field name, the others
// read-only.
func (aa *accountAttributes) fill(f *ui.AccountProfileForm, values map[string][]string, errs map[string]string) {
	for _, attr := range aa.schema {
		label := cmp.Or(attr.DisplayName, attr.Name)
		if attr.EditableBy != identity.EditableByUser {
			if v := aa.held[attr.Name]; len(v) > 0 {
				f.ReadOnly = append(f.ReadOnly, ui.AccountAttribute{Label: label, Values: v})
			}
			continue
		}
		fields := signin.AttributeFields([]*store.CustomAttribute{attr}, nil, errs)
		field := fields[0]
		vals := values[attr.Name]
		if !attr.Multivalued {
			if len(vals) > 0 {
				field.Value = vals[0]
			}
			f.Attributes = append(f.Attributes, field)
			continue
		}
		// A multivalued attribute: a field per value and one more for a
		// new one, all of one name.
		for i := range len(vals) + 1 {
			one := field
			if i > 0 {
				one.ID, one.Label, one.Error, one.Required = fmt.Sprintf("%s-%d", field.ID, i+1), fmt.Sprintf("%s (%d)", label, i+1), "", false
			}
			one.Value = ""
			if i < len(vals) {
				one.Value = vals[i]
			}
			f.Attributes = append(f.Attributes, one)
		}
	}
}

// checkAccountAttributes checks the posted values of the editable
// attributes, normalizing them in place; the error, an *apperr.Error, names
// every field at fault.
func (aa *accountAttributes) check(values map[string][]string) error {
	return identity.CheckAttributeValues(aa.editable(), values)
}

// attributeErrors are the message keys of err's fields, by field name.
func attributeErrors(err error) map[string]string {
	out := map[string]string{}
	var ae *apperr.Error
	if errors.As(err, &ae) {
		for _, f := range ae.Fields {
			if _, seen := out[f.Field]; !seen {
				out[f.Field] = f.Key
			}
		}
	}
	return out
}
