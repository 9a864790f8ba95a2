package scim

import (
	"fmt"
	"strings"
	"time"

	filter "github.com/scim2/filter-parser/v2"

	"github.com/idenplane/idenplane/store"
)

// Bounds of a filter: its length, and how deeply its parentheses,
// brackets and not() nest. The parser recurses, so depth is refused
// before it is asked.
const (
	maxFilterLength = 4096
	maxFilterDepth  = 16
)

// parseFilter parses a SCIM filter (RFC 7644 §3.4.2.2), refusing one too
// long or too deep before the parser sees it.
func parseFilter(raw string) (filter.Expression, error) {
	if err := checkBounds(raw); err != nil {
		return nil, badRequest(typeInvalidFilter, "the filter %s", err)
	}
	expr, err := filter.ParseFilter([]byte(raw))
	if err != nil {
		return nil, badRequest(typeInvalidFilter, "malformed filter: %v", err)
	}
	return expr, nil
}

// checkBounds refuses a filter or path over maxFilterLength or nesting
// deeper than maxFilterDepth.
func checkBounds(raw string) error {
	if len(raw) > maxFilterLength {
		return fmt.Errorf("is longer than %d bytes", maxFilterLength)
	}
	depth, deepest := 0, 0
	inString := false
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case c == '(' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == ')' || c == ']':
			depth--
		}
	}
	if deepest > maxFilterDepth {
		return fmt.Errorf("nests deeper than %d levels", maxFilterDepth)
	}
	return nil
}

// filterTarget is where a filter's attribute path leads on a user: a field
// of the users row, or the values of an attribute SCIM keeps (attr), or
// an element of a multi-valued one (with its sub-attributes).
type filterTarget struct {
	def   *attribute
	field string // a store.UserFields key, for the attributes the users row holds
	attr  string // a store.SCIMValue Attr
	// multi is a multi-valued attribute whose values filters read (emails,
	// phoneNumbers, groups); sub the sub-attribute named, "" for the value.
	multi bool
	sub   string
	// alsoField is a users row field that holds one more value of a
	// multi-valued attribute: the user's email, for the users SCIM never wrote.
	alsoField string
}

// resolvePath finds what a filter's attribute path names on a user of the
// model's realm. A path mapped to a users row field is that field; one
// mapped to a custom attribute reads the values SCIM wrote there.
func (m *userModel) resolvePath(p filter.AttributePath) (*filterTarget, error) {
	name, sub := p.AttributeName, p.SubAttributeName()
	defs, prefix := m.defs, ""
	uri := p.URI()
	switch {
	case uri == "", strings.EqualFold(uri, schemaUser):
		uri = ""
	default:
		ext := find(m.defs, uri)
		if ext == nil || !strings.HasPrefix(ext.Name, "urn:") {
			return nil, badRequest(typeInvalidFilter, "unknown schema %q in the filter", uri)
		}
		defs, prefix, uri = ext.SubAttributes, strings.ToLower(ext.Name)+".", ext.Name
	}
	def := find(defs, name)
	if def == nil || strings.HasPrefix(def.Name, "urn:") {
		return nil, badRequest(typeInvalidFilter, "unknown attribute %q in the filter", p.String())
	}
	key := mappingPath{ext: uri, attr: def.Name, sub: sub}.key()
	for _, am := range m.maps {
		if am.field != "" && am.path.valueType == "" && am.path.key() == key {
			field := "first_name"
			if am.field == targetLastName {
				field = "last_name"
			}
			return &filterTarget{def: &attribute{Name: def.Name, Type: typeString}, field: field}, nil
		}
	}
	if def.Type == typeDecimal || def.Type == typeBoolean && uri != "" || def.MultiValued && def.Type != typeComplex {
		return nil, badRequest(typeInvalidFilter, "%s cannot be filtered on: only the string attributes of an extension of the realm's own can", p.String())
	}
	if def.Returned == returnedNever {
		return nil, badRequest(typeInvalidFilter, "%s cannot be filtered on", def.Name)
	}
	if def.Type == typeComplex {
		if sub == "" && !def.MultiValued {
			return nil, badRequest(typeInvalidFilter, "%s is complex: name one of its sub-attributes", def.Name)
		}
		subDef := def
		if sub != "" {
			if subDef = find(def.SubAttributes, sub); subDef == nil {
				return nil, badRequest(typeInvalidFilter, "unknown attribute %q in the filter", p.String())
			}
		}
		if def.MultiValued {
			return multiTarget(def, subDef)
		}
		key := prefix + strings.ToLower(def.Name) + "." + strings.ToLower(subDef.Name)
		switch key {
		case "name.givenname":
			return &filterTarget{def: subDef, field: "first_name"}, nil
		case "name.familyname":
			return &filterTarget{def: subDef, field: "last_name"}, nil
		case "meta.created":
			return &filterTarget{def: subDef, field: "created"}, nil
		case "meta.lastmodified":
			return &filterTarget{def: subDef, field: "modified"}, nil
		case "meta.resourcetype", "meta.location", "meta.version":
			return nil, badRequest(typeInvalidFilter, "%s cannot be filtered on", p.String())
		}
		return &filterTarget{def: subDef, attr: key}, nil
	}
	if sub != "" {
		return nil, badRequest(typeInvalidFilter, "%s has no sub-attributes", def.Name)
	}
	switch prefix + strings.ToLower(def.Name) {
	case "id":
		return &filterTarget{def: def, field: "id"}, nil
	case "username":
		return &filterTarget{def: def, field: "username"}, nil
	case "active":
		return &filterTarget{def: def, field: "enabled"}, nil
	}
	return &filterTarget{def: def, attr: prefix + strings.ToLower(def.Name)}, nil
}

// multiTarget is a multi-valued attribute's target: filters read emails,
// phone numbers, addresses (by their sub-attributes) and groups.
func multiTarget(def, sub *attribute) (*filterTarget, error) {
	t := &filterTarget{def: sub, attr: strings.ToLower(def.Name), multi: true}
	if sub != def {
		t.sub = sub.Name
	}
	switch def.Name {
	case "emails":
		t.alsoField = "email"
	case "phoneNumbers":
	case "addresses":
		return t, nil // with no sub-attribute, only in a value path or with pr
	case "groups":
		if t.sub != "" && t.sub != "value" {
			return nil, badRequest(typeInvalidFilter, "groups can be filtered on by value only")
		}
		t.attr = "groups"
	default:
		return nil, badRequest(typeInvalidFilter, "%s cannot be filtered on", def.Name)
	}
	if t.sub == "display" {
		return nil, badRequest(typeInvalidFilter, "%s.display cannot be filtered on", def.Name)
	}
	if t.sub == "" {
		t.def = find(def.SubAttributes, "value")
	}
	return t, nil
}

// resolver finds what a filter's attribute path names on a resource.
type resolver func(filter.AttributePath) (*filterTarget, error)

// userMatch translates a filter on users of the model's realm to a
// store.Match.
func (m *userModel) userMatch(e filter.Expression) (*store.Match, error) {
	return translate(e, m.resolvePath)
}

// translate translates a filter to a store.Match, its attribute paths
// resolved by resolve.
func translate(e filter.Expression, resolve resolver) (*store.Match, error) {
	switch e := e.(type) {
	case *filter.LogicalExpression:
		return logical(e, func(x filter.Expression) (*store.Match, error) { return translate(x, resolve) })
	case *filter.NotExpression:
		sub, err := translate(e.Expression, resolve)
		if err != nil {
			return nil, err
		}
		return &store.Match{Op: store.MatchNot, Subs: []*store.Match{sub}}, nil
	case *filter.ValuePath:
		t, err := resolve(e.AttributePath)
		if err != nil {
			return nil, err
		}
		if !t.multi || t.sub != "" {
			return nil, badRequest(typeInvalidFilter, "%s is not a multi-valued attribute", e.AttributePath.String())
		}
		within, err := valueMatch(e.ValueFilter, t, resolve)
		if err != nil {
			return nil, err
		}
		return &store.Match{Op: store.MatchHas, Attr: t.attr, Subs: []*store.Match{within}}, nil
	case *filter.AttributeExpression:
		t, err := resolve(e.AttributePath)
		if err != nil {
			return nil, err
		}
		return attrMatch(t, e)
	}
	return nil, badRequest(typeInvalidFilter, "unsupported filter expression")
}

func logical(e *filter.LogicalExpression, sub func(filter.Expression) (*store.Match, error)) (*store.Match, error) {
	left, err := sub(e.Left)
	if err != nil {
		return nil, err
	}
	right, err := sub(e.Right)
	if err != nil {
		return nil, err
	}
	op := store.MatchAnd
	if e.Operator == filter.OR {
		op = store.MatchOr
	}
	return &store.Match{Op: op, Subs: []*store.Match{left, right}}, nil
}

// attrMatch is one comparison on a user.
func attrMatch(t *filterTarget, e *filter.AttributeExpression) (*store.Match, error) {
	if t.multi && t.attr == "addresses" && t.sub == "" {
		if e.Operator == filter.PR {
			return &store.Match{Op: store.MatchHas, Attr: t.attr}, nil
		}
		return nil, badRequest(typeInvalidFilter, "addresses has no value: name one of its sub-attributes, as addresses.locality")
	}
	if t.multi {
		within, err := comparison(t.def, valueField(t), e, t.fold())
		if err != nil {
			return nil, err
		}
		m := &store.Match{Op: store.MatchHas, Attr: t.attr, Subs: []*store.Match{within}}
		if t.sub == "" {
			m.Also = t.alsoField
		}
		return m, nil
	}
	if t.field != "" {
		if e.Operator == filter.PR && t.def.Type != typeString && t.def.Type != typeReference {
			return &store.Match{Op: store.MatchPr, Field: "id"}, nil // always there
		}
		return comparison(t.def, t.field, e, t.fold())
	}
	if e.Operator == filter.PR {
		return &store.Match{Op: store.MatchHas, Attr: t.attr}, nil
	}
	within, err := comparison(t.def, valueColumn(t.def), e, t.fold())
	if err != nil {
		return nil, err
	}
	if e.Operator == filter.NE {
		// ne holds for a user without the attribute too.
		within.Op = store.MatchEq
		return &store.Match{Op: store.MatchNot, Subs: []*store.Match{{Op: store.MatchHas, Attr: t.attr, Subs: []*store.Match{within}}}}, nil
	}
	return &store.Match{Op: store.MatchHas, Attr: t.attr, Subs: []*store.Match{within}}, nil
}

// valueField is the store.ValueFields key of a multi-valued target's
// sub-attribute.
func valueField(t *filterTarget) string {
	switch t.sub {
	case "type":
		return "type" // lowercased when written
	case "primary":
		return "primary"
	}
	if t.attr == "groups" || t.attr == "members" {
		return "value"
	}
	if t.attr == "addresses" {
		return strings.ToLower(t.sub) // a store.AddressFields key, folded when written
	}
	return valueColumn(t.def)
}

// valueColumn is where a value of def is compared: as written when its
// case counts, else lowercased.
func valueColumn(def *attribute) string {
	if def.CaseExact {
		return "value"
	}
	return "fold"
}

// valueMatch translates the filter inside a value path, on the
// sub-attributes of one value of t's attribute.
func valueMatch(e filter.Expression, t *filterTarget, resolve resolver) (*store.Match, error) {
	switch e := e.(type) {
	case *filter.LogicalExpression:
		return logical(e, func(x filter.Expression) (*store.Match, error) { return valueMatch(x, t, resolve) })
	case *filter.NotExpression:
		sub, err := valueMatch(e.Expression, t, resolve)
		if err != nil {
			return nil, err
		}
		return &store.Match{Op: store.MatchNot, Subs: []*store.Match{sub}}, nil
	case *filter.AttributeExpression:
		if e.AttributePath.URIPrefix != nil || e.AttributePath.SubAttribute != nil {
			return nil, badRequest(typeInvalidFilter, "inside [ ] name a sub-attribute of %s", t.attr)
		}
		p := filter.AttributePath{AttributeName: parentName(t.attr), SubAttribute: &e.AttributePath.AttributeName}
		sub, err := resolve(p)
		if err != nil {
			return nil, err
		}
		return comparison(sub.def, valueField(sub), e, sub.fold())
	}
	return nil, badRequest(typeInvalidFilter, "unsupported filter inside [ ]")
}

// parentName is the defined name of a multi-valued attribute from its
// lowercased key.
func parentName(key string) string {
	if def := find(userDefs, key); def != nil {
		return def.Name
	}
	return key
}

// fold is how the values of t compare when their case does not count:
// userName and emails as the identity core stores them (strings.ToLower,
// by which it decides that two usernames or emails are one), every other
// attribute under Unicode simple case folding (store.FoldCase).
func (t *filterTarget) fold() func(string) string {
	if t.field == "username" || t.field == "email" || t.attr == "emails" {
		return strings.ToLower
	}
	return store.FoldCase
}

// comparison is field op value, the value checked against def's type and
// folded by fold where def's case does not count.
func comparison(def *attribute, field string, e *filter.AttributeExpression, fold func(string) string) (*store.Match, error) {
	op := string(e.Operator)
	m := &store.Match{Op: op, Field: field}
	if e.Operator == filter.PR {
		if def.Type == typeBoolean {
			return &store.Match{Op: store.MatchOr, Subs: []*store.Match{{Op: store.MatchEq, Field: field, Value: true},
				{Op: store.MatchEq, Field: field, Value: false}}}, nil
		}
		return m, nil
	}
	switch def.Type {
	case typeBoolean:
		b, ok := e.CompareValue.(bool)
		if !ok || (e.Operator != filter.EQ && e.Operator != filter.NE) {
			return nil, badRequest(typeInvalidFilter, "%s is a boolean: compare it with eq or ne and true or false", def.Name)
		}
		m.Value = b
	case typeDateTime:
		s, ok := e.CompareValue.(string)
		t, err := time.Parse(time.RFC3339, s)
		if !ok || err != nil {
			return nil, badRequest(typeInvalidFilter, "%s is a dateTime: compare it with an RFC 3339 time", def.Name)
		}
		switch e.Operator {
		case filter.CO, filter.SW, filter.EW:
			return nil, badRequest(typeInvalidFilter, "%s is a dateTime: %s does not apply", def.Name, op)
		}
		m.Value = t.UnixMilli()
	default:
		s, ok := e.CompareValue.(string)
		if !ok {
			return nil, badRequest(typeInvalidFilter, "%s is a string: compare it with a quoted string", def.Name)
		}
		if !def.CaseExact {
			s = fold(s)
		}
		m.Value = s
	}
	return m, nil
}
