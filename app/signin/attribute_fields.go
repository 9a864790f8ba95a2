package signin

import (
	"cmp"

	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// AttributeFields is the pages' view of custom attributes as form fields
// (attributes.<name>), with their values and errors by field name: the
// register page's and the account's profile form's.
func AttributeFields(schema []*store.CustomAttribute, values map[string]string, errs map[string]string) []ui.RegisterField {
	out := make([]ui.RegisterField, 0, len(schema))
	for _, attr := range schema {
		name := "attributes." + attr.Name
		f := ui.RegisterField{Name: name, ID: "attr-" + attr.Name, Label: cmp.Or(attr.DisplayName, attr.Name),
			Required: attr.Required, Value: values[attr.Name], Error: errs[name]}
		switch attr.Type {
		case identity.AttrNumber:
			// Text with a decimal keyboard: a number input's step would
			// refuse the decimals the schema allows.
			f.Type, f.InputMode = "text", "decimal"
		case identity.AttrBoolean:
			f.Type = "checkbox"
		case identity.AttrDate:
			f.Type = "date"
		case identity.AttrEnum:
			f.Type, f.Options = "select", attr.Options
		default:
			f.Type = "text"
		}
		out = append(out, f)
	}
	return out
}
