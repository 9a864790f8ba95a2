package scim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	filter "github.com/scim2/filter-parser/v2"

	"github.com/idenplane/idenplane/store"
)

// maxPatchOps bounds the operations of one PATCH.
const maxPatchOps = 1000

// Patch operations (RFC 7644 §3.5.2); their names come in any case.
const (
	opAdd     = "add"
	opReplace = "replace"
	opRemove  = "remove"
)

// patchOp is one operation of a PATCH request.
type patchOp struct {
	op      string
	rawPath string
	path    *filter.Path // nil without a path
	value   any
	hasVal  bool
}

// readPatch reads a PatchOp body: its schema, and operations whose names
// and member names may come in any case, as Entra ID sends them.
func readPatch(body map[string]any) ([]patchOp, error) {
	if err := checkSchemas(body, schemaPatchOp); err != nil {
		return nil, err
	}
	raw, ok := body[keyOf(body, "Operations")].([]any)
	if !ok || len(raw) == 0 {
		return nil, badRequest(typeInvalidSyntax, "Operations must list at least one operation")
	}
	if len(raw) > maxPatchOps {
		return nil, badRequest(typeInvalidValue, "at most %d operations", maxPatchOps)
	}
	ops := make([]patchOp, len(raw))
	for i, item := range raw {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, badRequest(typeInvalidSyntax, "Operations[%d] must be an object", i)
		}
		var op patchOp
		for k, v := range m {
			switch strings.ToLower(k) {
			case "op":
				s, _ := v.(string)
				op.op = strings.ToLower(s)
			case "path":
				s, ok := v.(string)
				if !ok {
					return nil, badRequest(typeInvalidPath, "Operations[%d].path must be a string", i)
				}
				op.rawPath = strings.TrimSpace(s)
			case "value":
				op.value, op.hasVal = v, true
			}
			// Other members are ignored: Entra ID names its operations
			// ("name": "addMember").
		}
		switch op.op {
		case opAdd, opReplace, opRemove:
		default:
			return nil, badRequest(typeInvalidValue, "Operations[%d].op must be add, replace or remove", i)
		}
		if op.rawPath != "" {
			p, err := parsePath(op.rawPath)
			if err != nil {
				return nil, err
			}
			op.path = p
		}
		if op.op != opRemove && (!op.hasVal || op.value == nil) {
			return nil, badRequest(typeInvalidValue, "Operations[%d] (%s) needs a value", i, op.op)
		}
		ops[i] = op
	}
	return ops, nil
}

// parsePath parses a PATCH path (RFC 7644 §3.5.2), bounded as filters are.
func parsePath(raw string) (*filter.Path, error) {
	if err := checkBounds(raw); err != nil {
		return nil, badRequest(typeInvalidPath, "the path %s", err)
	}
	p, err := filter.ParsePath([]byte(raw))
	if err != nil {
		return nil, badRequest(typeInvalidPath, "malformed path %q", raw)
	}
	return &p, nil
}

// patcher applies operations to a resource as SCIM shows it.
type patcher struct {
	defs       []attribute // the top level's, extensions as complex attributes under their URNs
	core       string      // the core schema's URN
	extensions []string
}

// apply applies ops to doc in order; an operation that fails leaves the
// caller to drop doc, so a PATCH changes all or nothing.
func (p patcher) apply(doc map[string]any, ops []patchOp) error {
	for i, op := range ops {
		if err := p.applyOne(doc, op); err != nil {
			if e, ok := err.(*Error); ok {
				e.Detail = fmt.Sprintf("Operations[%d]: %s", i, e.Detail)
			}
			return err
		}
	}
	return nil
}

func (p patcher) applyOne(doc map[string]any, op patchOp) error {
	if op.path == nil {
		if op.op == opRemove {
			return badRequest(typeNoTarget, "remove needs a path")
		}
		obj, ok := op.value.(map[string]any)
		if !ok {
			return badRequest(typeInvalidValue, "without a path, the value must be an object of attributes")
		}
		for k, v := range obj {
			sub := op
			sub.value = v
			if def := find(p.defs, k); def != nil {
				if unchangedReadOnly(doc, def, v) {
					continue
				}
				if err := p.applyTo(doc, target{holder: doc, def: def}, sub); err != nil {
					return err
				}
				continue
			}
			// Entra ID names attributes by path here too ("name.givenName",
			// an extension's URN path).
			path, err := parsePath(k)
			if err != nil {
				return badRequest(typeInvalidSyntax, "unknown attribute %q", k)
			}
			sub.path, sub.rawPath = path, k
			if err := p.applyOne(doc, sub); err != nil {
				return err
			}
		}
		return nil
	}
	if ap := op.path.AttributePath; ap.URIPrefix == nil && ap.SubAttribute == nil && op.path.ValueExpression == nil &&
		op.op != opRemove && unchangedReadOnly(doc, find(p.defs, ap.AttributeName), op.value) {
		return nil
	}
	t, err := p.resolve(doc, op)
	if err != nil {
		return err
	}
	return p.applyTo(doc, t, op)
}

// target is what a path names: an attribute (def) of holder, values of it
// selected by a filter, and a sub-attribute of it.
type target struct {
	holder map[string]any
	def    *attribute
	filter filter.Expression
	sub    *attribute
}

// resolve finds the target of op's path in doc, making the extension's
// object when an add or replace writes into one not there yet.
func (p patcher) resolve(doc map[string]any, op patchOp) (target, error) {
	for _, ext := range p.extensions {
		if strings.EqualFold(op.rawPath, ext) {
			return target{holder: doc, def: find(p.defs, ext)}, nil
		}
	}
	ap := op.path.AttributePath
	t := target{holder: doc, filter: op.path.ValueExpression}
	defs := p.defs
	if uri := ap.URI(); uri != "" && !strings.EqualFold(uri, p.core) {
		ext := find(p.defs, uri)
		if ext == nil {
			return t, badRequest(typeInvalidPath, "unknown schema %q in the path", uri)
		}
		key := ext.Name
		holder, _ := doc[key].(map[string]any)
		if holder == nil {
			holder = map[string]any{}
			if op.op != opRemove {
				doc[key] = holder
			}
		}
		t.holder, defs = holder, ext.SubAttributes
	}
	if t.def = find(defs, ap.AttributeName); t.def == nil || strings.HasPrefix(t.def.Name, "urn:") {
		return t, badRequest(typeInvalidPath, "unknown attribute %q", op.rawPath)
	}
	subName := ap.SubAttributeName()
	if op.path.SubAttribute != nil {
		if subName != "" {
			return t, badRequest(typeInvalidPath, "malformed path %q", op.rawPath)
		}
		subName = *op.path.SubAttribute
	}
	if subName != "" {
		if t.sub = find(t.def.SubAttributes, subName); t.sub == nil {
			return t, badRequest(typeInvalidPath, "unknown attribute %q", op.rawPath)
		}
	}
	if t.filter != nil && !t.def.MultiValued {
		return t, badRequest(typeInvalidPath, "%s is not multi-valued: it takes no filter", t.def.Name)
	}
	if t.def.Mutability == readOnly || (t.sub != nil && t.sub.Mutability == readOnly) {
		return t, badRequest(typeMutability, "%s is read-only", op.rawPath)
	}
	return t, nil
}

// applyTo applies op to the target.
func (p patcher) applyTo(doc map[string]any, t target, op patchOp) error {
	if t.def.Mutability == readOnly {
		return badRequest(typeMutability, "%s is read-only", t.def.Name)
	}
	key := keyOf(t.holder, t.def.Name)
	if key == "" {
		key = t.def.Name
	}
	switch {
	case t.def.MultiValued && (t.filter != nil || t.sub != nil):
		return p.applyToValues(t, key, op)
	case t.sub != nil: // a sub-attribute of a single complex attribute
		obj, _ := t.holder[key].(map[string]any)
		if op.op == opRemove {
			if obj != nil {
				delete(obj, keyOf(obj, t.sub.Name))
				if len(obj) == 0 {
					delete(t.holder, key)
				}
			}
			return nil
		}
		v, err := normalizeValue(t.sub, op.value, t.def.Name+"."+t.sub.Name)
		if err != nil {
			return err
		}
		if obj == nil {
			obj = map[string]any{}
		}
		setKey(obj, t.sub.Name, v)
		t.holder[key] = obj
		return nil
	}
	if op.op == opRemove {
		if t.def.MultiValued && op.hasVal && op.value != nil {
			return removeValues(t.holder, key, op.value)
		}
		delete(t.holder, key)
		return nil
	}
	value := op.value
	if s, ok := value.(string); ok && t.def.Type == typeComplex && !t.def.MultiValued && find(t.def.SubAttributes, "value") != nil {
		value = map[string]any{"value": s} // Entra ID sends the manager's id bare
	}
	v, err := normalizeValue(t.def, value, t.def.Name)
	if err != nil {
		return err
	}
	switch {
	case v == nil && op.op == opReplace:
		delete(t.holder, key)
	case v == nil:
	case t.def.MultiValued && op.op == opAdd:
		current, _ := t.holder[key].([]any)
		added := v.([]any)
		t.holder[key] = onePrimary(append(current, added...), len(current))
	case t.def.MultiValued:
		t.holder[key] = v
	case t.def.Type == typeComplex:
		obj, _ := t.holder[key].(map[string]any)
		if obj == nil {
			obj = map[string]any{}
		}
		for k, sv := range v.(map[string]any) {
			setKey(obj, k, sv)
		}
		t.holder[key] = obj
	default:
		t.holder[key] = v
	}
	return nil
}

// applyToValues applies op to the values of a multi-valued attribute a
// filter selects (all of them without one), or to a sub-attribute of
// each.
func (p patcher) applyToValues(t target, key string, op patchOp) error {
	list, _ := t.holder[key].([]any)
	var hits []int
	for i, item := range list {
		m, _ := item.(map[string]any)
		ok, err := matches(t.filter, m, t.def)
		if err != nil {
			return err
		}
		if ok {
			hits = append(hits, i)
		}
	}
	if op.op == opRemove {
		if t.sub == nil {
			list = dropIndexes(list, hits)
		} else {
			for _, i := range hits {
				m := list[i].(map[string]any)
				delete(m, keyOf(m, t.sub.Name))
			}
		}
		if len(list) == 0 {
			delete(t.holder, key)
		} else {
			t.holder[key] = list
		}
		return nil
	}
	var value any
	var err error
	if t.sub != nil {
		value, err = normalizeValue(t.sub, op.value, t.def.Name+"."+t.sub.Name)
	} else {
		value, err = normalizeOne(t.def, op.value, t.def.Name)
	}
	if err != nil {
		return err
	}
	seeded := len(hits) == 0
	if seeded {
		// Entra ID replaces emails[type eq "work"].value on a user without
		// a work email: the value the filter describes is added.
		seed, ok := equalities(t.filter)
		if !ok {
			return badRequest(typeNoTarget, "no value of %s matches the filter", t.def.Name)
		}
		list = append(list, seed)
		hits = []int{len(list) - 1}
	}
	for _, i := range hits {
		m := list[i].(map[string]any)
		switch {
		case t.sub != nil:
			setKey(m, t.sub.Name, value)
		case op.op == opReplace && !seeded:
			m = map[string]any{}
			fallthrough
		default:
			if obj, ok := value.(map[string]any); ok {
				for k, v := range obj {
					setKey(m, k, v)
				}
			}
		}
		list[i] = m
	}
	t.holder[key] = onePrimary(list, hits[len(hits)-1])
	return nil
}

// unchangedReadOnly says whether an operation sets read-only def to the
// value it has: no change, so no refusal (Okta repeats a group's id beside
// its new name).
func unchangedReadOnly(doc map[string]any, def *attribute, v any) bool {
	return def != nil && def.Mutability == readOnly && equalValues(doc[keyOf(doc, def.Name)], v)
}

// equalValues says whether two JSON values are the same.
func equalValues(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}

// setKey sets m[name], replacing a key equal but for case; nil deletes.
func setKey(m map[string]any, name string, v any) {
	if k := keyOf(m, name); k != "" {
		delete(m, k)
	}
	if v != nil {
		m[name] = v
	}
}

// onePrimary keeps at most one value primary (RFC 7644 §3.5.2): when a
// value from index from on is primary, the others are no longer.
func onePrimary(list []any, from int) []any {
	keep := -1
	for i := len(list) - 1; i >= from && i >= 0; i-- {
		if m, _ := list[i].(map[string]any); m["primary"] == true {
			keep = i
			break
		}
	}
	if keep < 0 {
		return list
	}
	for i, item := range list {
		if m, _ := item.(map[string]any); i != keep && m["primary"] == true {
			delete(m, "primary")
		}
	}
	return list
}

func dropIndexes(list []any, drop []int) []any {
	out := make([]any, 0, len(list))
	for i, item := range list {
		if len(drop) > 0 && drop[0] == i {
			drop = drop[1:]
			continue
		}
		out = append(out, item)
	}
	return out
}

// removeValues removes the values of a multi-valued attribute whose
// value equals one given, as Entra ID removes group members:
// {"op": "remove", "path": "members", "value": [{"value": "id"}]}.
func removeValues(holder map[string]any, key string, given any) error {
	items, ok := given.([]any)
	if !ok {
		items = []any{given}
	}
	drop := map[string]bool{}
	for _, it := range items {
		m, ok := it.(map[string]any)
		if !ok {
			return badRequest(typeInvalidValue, "values to remove must be objects with a value")
		}
		drop[text(m, keyOf(m, "value"))] = true
	}
	list, _ := holder[key].([]any)
	out := list[:0]
	for _, item := range list {
		if m, _ := item.(map[string]any); !drop[text(m, "value")] {
			out = append(out, item)
		}
	}
	if len(out) == 0 {
		delete(holder, key)
	} else {
		holder[key] = out
	}
	return nil
}

// equalities is the value a filter of equalities joined by and
// describes ([type eq "work"] describes {"type": "work"}), and whether
// the filter is one.
func equalities(e filter.Expression) (map[string]any, bool) {
	switch e := e.(type) {
	case *filter.AttributeExpression:
		if e.Operator != filter.EQ || e.AttributePath.SubAttribute != nil || e.AttributePath.URIPrefix != nil {
			return nil, false
		}
		return map[string]any{e.AttributePath.AttributeName: e.CompareValue}, true
	case *filter.LogicalExpression:
		if e.Operator != filter.AND {
			return nil, false
		}
		l, ok := equalities(e.Left)
		if !ok {
			return nil, false
		}
		r, ok := equalities(e.Right)
		if !ok {
			return nil, false
		}
		for k, v := range r {
			l[k] = v
		}
		return l, true
	}
	return nil, false
}

// matches evaluates a value filter on one value of def (nil matches all).
func matches(e filter.Expression, m map[string]any, def *attribute) (bool, error) {
	switch e := e.(type) {
	case nil:
		return true, nil
	case *filter.LogicalExpression:
		l, err := matches(e.Left, m, def)
		if err != nil {
			return false, err
		}
		r, err := matches(e.Right, m, def)
		if err != nil {
			return false, err
		}
		if e.Operator == filter.AND {
			return l && r, nil
		}
		return l || r, nil
	case *filter.NotExpression:
		v, err := matches(e.Expression, m, def)
		return !v, err
	case *filter.AttributeExpression:
		if e.AttributePath.SubAttribute != nil || e.AttributePath.URIPrefix != nil {
			return false, badRequest(typeInvalidFilter, "inside [ ] name a sub-attribute of %s", def.Name)
		}
		sub := find(def.SubAttributes, e.AttributePath.AttributeName)
		if sub == nil {
			return false, badRequest(typeInvalidFilter, "%s has no sub-attribute %q", def.Name, e.AttributePath.AttributeName)
		}
		return compareValue(sub, m[keyOf(m, sub.Name)], e.Operator, e.CompareValue)
	}
	return false, badRequest(typeInvalidFilter, "unsupported filter inside [ ]")
}

// compareValue evaluates got op want for an attribute of def's type.
func compareValue(def *attribute, got any, op filter.CompareOperator, want any) (bool, error) {
	if op == filter.PR {
		return got != nil && got != "", nil
	}
	if def.Type == typeBoolean {
		w, ok := want.(bool)
		if !ok || (op != filter.EQ && op != filter.NE) {
			return false, badRequest(typeInvalidFilter, "%s is a boolean: compare it with eq or ne and true or false", def.Name)
		}
		g, _ := got.(bool)
		return (g == w) == (op == filter.EQ), nil
	}
	w, ok := want.(string)
	if !ok {
		return false, badRequest(typeInvalidFilter, "%s is a string: compare it with a quoted string", def.Name)
	}
	g, _ := got.(string)
	if !def.CaseExact {
		g, w = store.FoldCase(g), store.FoldCase(w)
	}
	switch op {
	case filter.EQ:
		return g == w, nil
	case filter.NE:
		return g != w, nil
	case filter.CO:
		return strings.Contains(g, w), nil
	case filter.SW:
		return strings.HasPrefix(g, w), nil
	case filter.EW:
		return strings.HasSuffix(g, w), nil
	case filter.GT:
		return g > w, nil
	case filter.GE:
		return g >= w, nil
	case filter.LT:
		return g < w, nil
	case filter.LE:
		return g <= w, nil
	}
	return false, badRequest(typeInvalidFilter, "unknown operator %q", op)
}
