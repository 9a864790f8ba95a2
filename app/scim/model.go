package scim

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

// typeDecimal is SCIM's type of a number (RFC 7643 §2.3.3): a custom
// attribute of type number, in an extension of the realm's own.
const typeDecimal = "decimal"

// userModel is what a user is in one realm's SCIM: the core schema and
// the enterprise extension, and the realm's attribute mappings with the
// extensions of its own they declare.
type userModel struct {
	defs       []attribute // the top level's; extensions as complex attributes under their URNs
	extensions []string    // the extensions' URNs, the enterprise one first
	custom     []schemaDef // the realm's own extensions, as discovery shows them
	maps       []activeMapping
}

// activeMapping is a mapping that acts: its target is a user field, or a
// custom attribute the realm's schema has. A mapping to an attribute the
// schema no longer has rests, and its SCIM path is as if unmapped.
type activeMapping struct {
	path  mappingPath
	field string                 // targetFirstName or targetLastName
	attr  *store.CustomAttribute // else, the custom attribute
}

// baseModel is a realm's without mappings.
var baseModel = &userModel{defs: userDefs, extensions: []string{schemaEnterprise}}

// model is the caller's realm's user model, read once per request.
func (s *Service) model(r *http.Request) (*userModel, error) {
	c := callerOf(r)
	if c.model != nil {
		return c.model, nil
	}
	ctx := r.Context()
	list, err := s.deps.Store.ListSCIMMappings(ctx, c.realm.ID)
	if err != nil {
		return nil, err
	}
	var schema []*store.CustomAttribute
	if slices.ContainsFunc(list, func(m *store.SCIMMapping) bool { return strings.HasPrefix(m.Target, targetAttrPrefix) }) {
		if schema, err = s.deps.Store.ListCustomAttributes(ctx, c.realm.ID); err != nil {
			return nil, err
		}
	}
	c.model = buildModel(list, schema)
	return c.model, nil
}

// buildModel is the model of a realm with the mappings and the custom
// attribute schema given.
func buildModel(list []*store.SCIMMapping, schema []*store.CustomAttribute) *userModel {
	if len(list) == 0 {
		return baseModel
	}
	m := &userModel{extensions: []string{schemaEnterprise}}
	var exts []*schemaDef
	for _, sm := range list {
		p, err := parseMappingPath(sm.Path)
		if err != nil {
			continue // checked when written: a path no longer understood rests
		}
		field, name, _ := parseTarget(sm.Target)
		am := activeMapping{path: p, field: field}
		if name != "" {
			i := slices.IndexFunc(schema, func(a *store.CustomAttribute) bool { return a.Name == name })
			if i < 0 {
				continue
			}
			am.attr = schema[i]
		}
		if p.ext != "" && p.ext != schemaEnterprise {
			i := slices.IndexFunc(exts, func(d *schemaDef) bool { return strings.EqualFold(d.ID, p.ext) })
			if i < 0 {
				exts = append(exts, &schemaDef{ID: p.ext, Name: p.ext[strings.LastIndex(p.ext, ":")+1:],
					Description: "Attributes of the realm's own, mapped by its administrator."})
				m.extensions = append(m.extensions, p.ext)
				i = len(exts) - 1
			}
			am.path.ext = exts[i].ID
			exts[i].Attributes = append(exts[i].Attributes, extensionAttribute(p.attr, am))
		}
		m.maps = append(m.maps, am)
	}
	m.defs = slices.Clone(userDefs)
	for _, d := range exts {
		m.custom = append(m.custom, *d)
		m.defs = append(m.defs, complexOf(d.ID, d.Description, false, d.Attributes...))
	}
	return m
}

// extensionAttribute is the definition of an attribute of a realm's own
// extension: of its custom attribute's type, or a string for a user field.
func extensionAttribute(name string, am activeMapping) attribute {
	if am.attr == nil {
		return str(name, "The user's "+am.field+".")
	}
	desc := am.attr.DisplayName
	if desc == "" {
		desc = "The custom attribute " + am.attr.Name + "."
	}
	a := str(name, desc)
	a.MultiValued = am.attr.Multivalued
	switch am.attr.Type {
	case "number":
		a.Type = typeDecimal
	case "boolean":
		a.Type = typeBoolean
	case "enum":
		a.CanonicalValues = am.attr.Options
	}
	return a
}

// hasAttributes says whether some mapping writes a custom attribute.
func (m *userModel) hasAttributes() bool {
	return slices.ContainsFunc(m.maps, func(am activeMapping) bool { return am.attr != nil })
}

// mapsField is the mapping that writes the users row's field, if any.
func (m *userModel) mapsField(field string) bool {
	return slices.ContainsFunc(m.maps, func(am activeMapping) bool { return am.field == field })
}

// holder is the object of doc that holds p's attribute: doc, or its
// extension's object (made when create is set and it is missing).
func (m *userModel) holder(doc map[string]any, p mappingPath, create bool) map[string]any {
	if p.ext == "" {
		return doc
	}
	key := p.ext
	if def := find(m.defs, p.ext); def != nil {
		key = def.Name
	}
	for k := range doc {
		if strings.EqualFold(k, key) {
			key = k
		}
	}
	h, _ := doc[key].(map[string]any)
	if h == nil && create {
		h = map[string]any{}
		doc[key] = h
	}
	return h
}

// take removes the value at p from doc and answers it (nil when absent).
func (m *userModel) take(doc map[string]any, p mappingPath) any {
	h := m.holder(doc, p, false)
	if h == nil {
		return nil
	}
	var v any
	switch {
	case p.valueType != "":
		list, _ := h[p.attr].([]any)
		for _, item := range list {
			if e, ok := item.(map[string]any); ok && strings.EqualFold(text(e, "type"), p.valueType) {
				v = e[p.sub]
				delete(e, p.sub)
				break
			}
		}
	case p.sub != "":
		c, _ := h[p.attr].(map[string]any)
		v = c[p.sub]
		delete(c, p.sub)
		if c != nil && len(c) == 0 {
			delete(h, p.attr)
		}
	default:
		v = h[p.attr]
		delete(h, p.attr)
	}
	if len(h) == 0 && p.ext != "" {
		for k := range doc {
			if strings.EqualFold(k, p.ext) {
				delete(doc, k)
			}
		}
	}
	return v
}

// put sets the value at p in doc: in the value of the type p selects,
// made when there is none.
func (m *userModel) put(doc map[string]any, p mappingPath, v any) {
	h := m.holder(doc, p, true)
	switch {
	case p.valueType != "":
		list, _ := h[p.attr].([]any)
		for _, item := range list {
			if e, ok := item.(map[string]any); ok && strings.EqualFold(text(e, "type"), p.valueType) {
				e[p.sub] = v
				return
			}
		}
		h[p.attr] = append(list, map[string]any{"type": p.valueType, p.sub: v})
	case p.sub != "":
		c, _ := h[p.attr].(map[string]any)
		if c == nil {
			c = map[string]any{}
			h[p.attr] = c
		}
		c[p.sub] = v
	default:
		h[p.attr] = v
	}
}

// texts is a normalized SCIM value as a custom attribute's values.
func texts(v any) []string {
	switch v := v.(type) {
	case nil:
		return nil
	case []any:
		var out []string
		for _, item := range v {
			out = append(out, texts(item)...)
		}
		return out
	case string:
		return []string{v}
	case float64:
		return []string{strconv.FormatFloat(v, 'f', -1, 64)}
	case bool:
		return []string{strconv.FormatBool(v)}
	}
	return nil
}

// typed is a custom attribute's values as SCIM shows them at am's path:
// of its extension attribute's type there, else as text.
func typed(am activeMapping, vals []string) any {
	one := func(s string) any {
		if am.path.ext == "" || am.path.ext == schemaEnterprise {
			return s
		}
		switch am.attr.Type {
		case "number":
			if f, err := strconv.ParseFloat(s, 64); err == nil {
				return f
			}
		case "boolean":
			if b, err := strconv.ParseBool(s); err == nil {
				return b
			}
		}
		return s
	}
	if am.attr.Multivalued && am.path.ext != "" && am.path.ext != schemaEnterprise {
		out := make([]any, len(vals))
		for i, s := range vals {
			out[i] = one(s)
		}
		return out
	}
	return one(vals[0])
}

// extract moves the mapped values out of a user's attributes into d: the
// users row's fields they write, and the custom attribute values, which
// are checked against the realm's schema, every value at fault named by
// its SCIM path.
func (m *userModel) extract(d *userDoc) error {
	for _, am := range m.maps {
		v := m.take(d.data, am.path)
		switch {
		case am.field == targetFirstName:
			d.givenName, _ = v.(string)
		case am.field == targetLastName:
			d.familyName, _ = v.(string)
		default:
			if d.attrs == nil {
				d.attrs = map[string][]string{}
			}
			if vals := texts(v); len(vals) > 0 {
				d.attrs[am.attr.Name] = vals
			}
			d.attrSchema = append(d.attrSchema, am.attr)
		}
	}
	if len(d.attrSchema) == 0 {
		return nil
	}
	return m.attributeError(identity.CheckAttributeValues(d.attrSchema, d.attrs))
}

// attributeError is an error of the custom attributes' rules as a SCIM
// error: 400 invalidValue naming each value at fault by its SCIM path.
func (m *userModel) attributeError(err error) error {
	if err == nil {
		return nil
	}
	ae := apperr.From(err)
	if len(ae.Fields) == 0 {
		return err
	}
	msgs := make([]string, len(ae.Fields))
	for i, f := range ae.Fields {
		name := strings.TrimPrefix(f.Field, targetAttrPrefix)
		path := name
		for _, am := range m.maps {
			if am.attr != nil && am.attr.Name == name {
				path = am.path.String()
			}
		}
		msgs[i] = path + ": " + f.Message
	}
	return badRequest(typeInvalidValue, "%s", strings.Join(msgs, "; "))
}
