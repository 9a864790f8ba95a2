package scim

import (
	"fmt"
	"strings"
	"time"

	"github.com/idenplane/idenplane/app/validate"
)

// maxText bounds a string attribute, in characters.
const maxText = 1024

// maxValues bounds the values of a multi-valued attribute of a user
// (emails, phone numbers, addresses).
const maxValues = 100

// normalize checks the attributes of in against defs and answers them
// under their defined names (attribute names are case-insensitive, RFC
// 7643 §2.1) with values of their types. A null is an attribute not
// given; read-only attributes are dropped, as RFC 7643 §7 says a
// provider ignores them; an attribute no definition names is refused.
func normalize(defs []attribute, in map[string]any, path string) (map[string]any, error) {
	out := make(map[string]any, len(in))
	for k, v := range in {
		def := find(defs, k)
		if def == nil && empty(v) {
			continue // carries nothing: Entra ID sends "roles": [] whatever the schema says
		}
		if def == nil {
			return nil, badRequest(typeInvalidSyntax, "unknown attribute %q", path+k)
		}
		if _, twice := out[def.Name]; twice {
			return nil, badRequest(typeInvalidSyntax, "attribute %q given twice", path+def.Name)
		}
		if v == nil || def.Mutability == readOnly {
			continue
		}
		nv, err := normalizeValue(def, v, path+def.Name)
		if err != nil {
			return nil, err
		}
		if m, ok := nv.(map[string]any); nv == nil || ok && len(m) == 0 {
			continue
		}
		out[def.Name] = nv
	}
	return out, nil
}

// normalizeValue is v as a value of def: a list of values for a
// multi-valued attribute (a single value is taken as a list of one),
// nil for an empty list.
func normalizeValue(def *attribute, v any, path string) (any, error) {
	if !def.MultiValued {
		return normalizeOne(def, v, path)
	}
	list, ok := v.([]any)
	if !ok {
		list = []any{v}
	}
	if len(list) > maxValues {
		return nil, badRequest(typeInvalidValue, "%s: at most %d values", path, maxValues)
	}
	out := make([]any, 0, len(list))
	primaries := 0
	for i, item := range list {
		if item == nil {
			continue
		}
		nv, err := normalizeOne(def, item, fmt.Sprintf("%s[%d]", path, i))
		if err != nil {
			return nil, err
		}
		if m, ok := nv.(map[string]any); ok {
			if len(m) == 0 {
				continue
			}
			if m["primary"] == true {
				primaries++
			}
		}
		out = append(out, nv)
	}
	if primaries > 1 {
		return nil, badRequest(typeInvalidValue, "%s: at most one value may be primary", path)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// normalizeOne is v as one value of def's type. Booleans may come as the
// strings "true" and "false" in any case, as Microsoft Entra ID sends them.
func normalizeOne(def *attribute, v any, path string) (any, error) {
	switch def.Type {
	case typeComplex:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, badRequest(typeInvalidValue, "%s must be an object", path)
		}
		return normalize(def.SubAttributes, m, path+".")
	case typeBoolean:
		switch b := v.(type) {
		case bool:
			return b, nil
		case string:
			switch strings.ToLower(b) {
			case "true":
				return true, nil
			case "false":
				return false, nil
			}
		}
		return nil, badRequest(typeInvalidValue, "%s must be a boolean", path)
	case typeDecimal:
		// Text passes to the custom attribute's rules, which answer for
		// every value at fault at once.
		switch n := v.(type) {
		case float64:
			return n, nil
		case string:
			if n == "" {
				return nil, nil
			}
			return n, nil
		}
		return nil, badRequest(typeInvalidValue, "%s must be a number", path)
	case typeDateTime:
		s, ok := v.(string)
		if !ok {
			return nil, badRequest(typeInvalidValue, "%s must be a dateTime", path)
		}
		if _, err := time.Parse(time.RFC3339, s); err != nil {
			return nil, badRequest(typeInvalidValue, "%s must be a dateTime (RFC 3339)", path)
		}
		return s, nil
	}
	s, ok := v.(string)
	if !ok {
		return nil, badRequest(typeInvalidValue, "%s must be a string", path)
	}
	if err := validate.Text(path, s, maxText); err != nil {
		return nil, badRequest(typeInvalidValue, "%s", err.Error())
	}
	if s == "" {
		return nil, nil
	}
	return s, nil
}

// empty says whether v is null, "", [] or {}.
func empty(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case string:
		return v == ""
	case []any:
		return len(v) == 0
	case map[string]any:
		return len(v) == 0
	}
	return false
}

// primaryOf is the index of the primary value of a multi-valued
// attribute: the one marked primary, else the first; -1 for none.
func primaryOf(list []any) int {
	first := -1
	for i, item := range list {
		m, _ := item.(map[string]any)
		if m == nil {
			continue
		}
		if m["primary"] == true {
			return i
		}
		if first < 0 {
			first = i
		}
	}
	return first
}

// text is m[key] as a string, "" when absent.
func text(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}
