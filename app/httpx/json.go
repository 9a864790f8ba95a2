// Package httpx is the HTTP toolkit every handler package shares: handlers
// that return errors, strict JSON bodies and updates, query parameters, and
// the renderers that turn an error into the answer of a route group.
package httpx

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"slices"
	"strings"

	"github.com/idenplane/idenplane/app/apperr"
)

// WriteJSON answers v as JSON with status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// ReadBody reads a JSON request body: it must be declared as JSON (415
// otherwise) and present (400). The size cap is set by middleware (413).
func ReadBody(r *http.Request) ([]byte, error) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
		return nil, apperr.New(http.StatusUnsupportedMediaType, apperr.CodeUnsupportedMedia, "request body must be application/json")
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, err
		}
		return nil, apperr.InvalidJSON("could not read request body")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, apperr.InvalidJSON("request body is required")
	}
	return body, nil
}

// DecodeJSON reads the body into v, refusing unknown fields and trailing data.
func DecodeJSON(r *http.Request, v any) error {
	body, err := ReadBody(r)
	if err != nil {
		return err
	}
	return StrictUnmarshal(body, v)
}

// StrictUnmarshal decodes body into v as DecodeJSON does.
func StrictUnmarshal(body []byte, v any) error {
	if t := firstToken(body); t != '{' {
		return apperr.InvalidJSON("request body must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	if err := endOfBody(dec); err != nil {
		return err
	}
	// encoding/json matches names case-insensitively; the API does not.
	var raw any
	if err := json.Unmarshal(body, &raw); err != nil {
		return jsonError(err)
	}
	return checkFieldNames(raw, reflect.TypeOf(v), "")
}

// endOfBody refuses anything after the first JSON value, even a stray bracket.
func endOfBody(dec *json.Decoder) error {
	if _, err := dec.Token(); err != io.EOF {
		return apperr.InvalidJSON("unexpected data after the JSON object")
	}
	return nil
}

// checkFieldNames walks a decoded body beside the Go type it was decoded
// into and refuses any key that matched a field only by ignoring case.
func checkFieldNames(v any, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch val := v.(type) {
	case map[string]any:
		if t.Kind() != reflect.Struct {
			return nil // a free-form object such as theme
		}
		fields := jsonFields(t)
		for k, sub := range val {
			ft, ok := fields[k]
			if !ok {
				return apperr.UnknownField(path + k)
			}
			if err := checkFieldNames(sub, ft, path+k+"."); err != nil {
				return err
			}
		}
	case []any:
		if t.Kind() != reflect.Slice {
			return nil
		}
		prefix := strings.TrimSuffix(path, ".")
		for i, sub := range val {
			if err := checkFieldNames(sub, t.Elem(), fmt.Sprintf("%s[%d].", prefix, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// jsonFields maps the exact JSON names of a struct's fields, embedded
// structs included, to their types. As in encoding/json, a field of the
// struct itself hides an embedded struct's field of the same name.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	var embedded []reflect.Type
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-":
		case f.Anonymous && name == "":
			embedded = append(embedded, f.Type)
		case f.IsExported():
			if name == "" {
				name = f.Name
			}
			out[name] = f.Type
		}
	}
	for _, e := range embedded {
		for name, ft := range jsonFields(e) {
			if _, hidden := out[name]; !hidden {
				out[name] = ft
			}
		}
	}
	return out
}

// IsObject says whether b, a JSON text, is an object (its first
// non-space byte is a brace); the decoders refuse anything else.
func IsObject(b []byte) bool { return firstToken(b) == '{' }

func firstToken(b []byte) byte {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return 0
	}
	return b[0]
}

// jsonError names what was wrong with a body: the syntax, a field of the
// wrong type, or a field the endpoint does not take.
func jsonError(err error) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return apperr.InvalidJSON("malformed JSON at byte %d: %s", syntax.Offset, syntax.Error())
	case errors.Is(err, io.ErrUnexpectedEOF):
		return apperr.InvalidJSON("malformed JSON: unexpected end of body")
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			return apperr.InvalidJSON("request body must be a JSON object")
		}
		return apperr.Field(field, "must be %s, not %s", jsonKind(typ.Type.Kind().String()), typ.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		field := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return apperr.UnknownField(field)
	}
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return err
	}
	return apperr.InvalidJSON("malformed JSON: %v", err)
}

func jsonKind(goKind string) string {
	switch goKind {
	case "int", "int64", "int32":
		return "an integer"
	case "bool":
		return "a boolean"
	case "string":
		return "a string"
	case "slice":
		return "an array"
	case "map", "struct":
		return "an object"
	case "ptr":
		return "a value of another type"
	}
	return "a " + goKind
}

// Update is the one way PUT and PATCH change a resource. current is the
// resource's updatable fields as JSON values; defaults are what a field
// returns to when set to null. PUT replaces each field the body names; PATCH
// applies the body as a JSON merge patch (RFC 7386), so nested objects merge.
// The result is decoded strictly into dst, so type errors name their field.
func Update(body []byte, current, defaults map[string]any, merge bool, dst any) error {
	if firstToken(body) != '{' {
		return apperr.InvalidJSON("request body must be a JSON object")
	}
	var patch map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&patch); err != nil {
		return jsonError(err)
	}
	if err := endOfBody(dec); err != nil {
		return err
	}
	keys := make([]string, 0, len(patch))
	for k := range patch {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if _, ok := defaults[k]; !ok {
			return apperr.UnknownField(k)
		}
	}
	for _, k := range keys {
		switch v := patch[k]; {
		case v == nil:
			delete(current, k)
		case merge:
			current[k] = mergePatch(current[k], v)
		default:
			current[k] = v
		}
	}
	for k, v := range defaults {
		if _, ok := current[k]; !ok && v != nil {
			current[k] = v
		}
	}
	merged, err := json.Marshal(current)
	if err != nil {
		return fmt.Errorf("encode merged update: %w", err)
	}
	return StrictUnmarshal(merged, dst)
}

// mergePatch applies an RFC 7386 merge patch to target.
func mergePatch(target, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	t, ok := target.(map[string]any)
	if !ok {
		t = map[string]any{}
	}
	for k, v := range p {
		if v == nil {
			delete(t, k)
		} else {
			t[k] = mergePatch(t[k], v)
		}
	}
	return t
}

// AsJSONMap turns a representation into its JSON object form, keeping only
// the given fields.
func AsJSONMap(v any, fields map[string]any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var all map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&all); err != nil {
		return nil, err
	}
	out := make(map[string]any, len(fields))
	for k := range fields {
		if v, ok := all[k]; ok {
			out[k] = v
		}
	}
	return out, nil
}
