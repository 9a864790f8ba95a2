package migration

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/idenplane/idenplane/app/apperr"
)

// The exports of other products are read as generic JSON and walked with
// the path of each value, so that a value of the wrong type is refused
// with its JSON path (users[3].credentials[0].secretData), whatever the
// product's version added around it. The first error sticks: later reads
// answer zero values, and the walk ends with that error.

type reader struct{ err error }

func (r *reader) fail(path, format string, args ...any) {
	if r.err == nil {
		r.err = apperr.Field(path, format, args...)
	}
}

// val is one value of the document and where it is.
type val struct {
	r    *reader
	v    any
	path string
	set  bool // present, and not null
}

// parseJSON reads one JSON value, numbers kept as text. A syntax error
// names the document (root) and the line and column.
func parseJSON(data []byte, root string) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, syntaxError(data, root, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, apperr.Field(root, "has data after its JSON value")
	}
	return v, nil
}

func syntaxError(data []byte, root string, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line := 1 + bytes.Count(data[:min(int(se.Offset), len(data))], []byte("\n"))
		return apperr.Field(root, "is not valid JSON (line %d): %v", line, se)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return apperr.Field(root, "is not valid JSON: it ends early")
	}
	return apperr.Field(root, "is not valid JSON: %v", err)
}

func (r *reader) root(v any, path string) val {
	return val{r: r, v: v, path: path, set: v != nil}
}

func (v val) describe() string {
	switch v.v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "null"
}

func (v val) child(path string, x any) val {
	return val{r: v.r, v: x, path: path, set: x != nil}
}

// object is the value as an object; a missing value is an empty one.
func (v val) object() map[string]any {
	if !v.set {
		return nil
	}
	m, ok := v.v.(map[string]any)
	if !ok {
		v.r.fail(v.path, "must be an object, not %s", v.describe())
	}
	return m
}

func (v val) join(key string) string {
	if v.path == "" {
		return key
	}
	return v.path + "." + key
}

// get is the member key of an object.
func (v val) get(key string) val {
	m := v.object()
	return v.child(v.join(key), m[key])
}

// getFold is the member key, or failing that one whose name is key in
// another case (Auth0's password export has been seen with _ID).
func (v val) getFold(key string) val {
	m := v.object()
	if _, ok := m[key]; ok {
		return v.get(key)
	}
	for _, k := range v.keys() {
		if strings.EqualFold(k, key) {
			return v.get(k)
		}
	}
	return v.get(key)
}

// has says whether the object has key, with a value other than null.
func (v val) has(key string) bool {
	return v.object()[key] != nil
}

// keys are the object's member names, sorted.
func (v val) keys() []string {
	m := v.object()
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// items are the elements of a list; a missing list is empty.
func (v val) items() []val {
	if !v.set {
		return nil
	}
	l, ok := v.v.([]any)
	if !ok {
		v.r.fail(v.path, "must be a list, not %s", v.describe())
		return nil
	}
	out := make([]val, len(l))
	for i, x := range l {
		out[i] = v.child(fmt.Sprintf("%s[%d]", v.path, i), x)
	}
	return out
}

func (v val) str() string {
	if !v.set {
		return ""
	}
	s, ok := v.v.(string)
	if !ok {
		v.r.fail(v.path, "must be a string, not %s", v.describe())
	}
	return s
}

// strPtr is the string, nil when absent.
func (v val) strPtr() *string {
	if !v.set {
		return nil
	}
	s := v.str()
	return &s
}

// boolean is the value as a boolean, def when absent. Keycloak writes some
// switches as the strings "true" and "false" (client attributes); those
// are read too.
func (v val) boolean(def bool) bool {
	if !v.set {
		return def
	}
	switch b := v.v.(type) {
	case bool:
		return b
	case string:
		if b == "true" || b == "false" {
			return b == "true"
		}
	}
	v.r.fail(v.path, "must be true or false, not %s", v.describe())
	return def
}

func (v val) boolPtr() *bool {
	if !v.set {
		return nil
	}
	b := v.boolean(false)
	return &b
}

// integer is the value as an integer, def when absent; a string of digits
// is read too (Keycloak's SMTP port is one).
func (v val) integer(def int64) int64 {
	if !v.set {
		return def
	}
	var text string
	switch n := v.v.(type) {
	case json.Number:
		text = n.String()
	case string:
		text = strings.TrimSpace(n)
	default:
		v.r.fail(v.path, "must be a number, not %s", v.describe())
		return def
	}
	i, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		v.r.fail(v.path, "must be a whole number")
		return def
	}
	return i
}

func (v val) intPtr() *int {
	if !v.set {
		return nil
	}
	i := int(v.integer(0))
	return &i
}

// strs is a list of strings.
func (v val) strs() []string {
	var out []string
	for _, it := range v.items() {
		out = append(out, it.str())
	}
	return out
}

// strMap is an object of strings (a mapper's config, a client's
// attributes); other values are written out as JSON text.
func (v val) strMap() map[string]string {
	out := map[string]string{}
	for _, k := range v.keys() {
		x := v.get(k)
		switch t := x.v.(type) {
		case string:
			out[k] = t
		case nil:
		case json.Number:
			out[k] = t.String()
		case bool:
			out[k] = strconv.FormatBool(t)
		default:
			v.r.fail(x.path, "must be a string, not %s", x.describe())
		}
	}
	return out
}

// multiMap is an object whose members are lists of strings, or strings
// (Keycloak's user attributes, its argon2 parameters).
func (v val) multiMap() map[string][]string {
	out := map[string][]string{}
	for _, k := range v.keys() {
		x := v.get(k)
		if s, ok := x.v.(string); ok {
			out[k] = []string{s}
			continue
		}
		out[k] = x.strs()
	}
	return out
}

// embedded is a string holding JSON (Keycloak's credentialData and
// secretData), parsed under the same path.
func (v val) embedded() val {
	s := v.str()
	if !v.set || v.r.err != nil {
		return v.child(v.path, nil)
	}
	x, err := parseJSON([]byte(s), v.path)
	if err != nil {
		v.r.fail(v.path, "must hold JSON: %s", strings.TrimPrefix(err.Error(), v.path+": "))
		return v.child(v.path, nil)
	}
	return v.child(v.path, x)
}
