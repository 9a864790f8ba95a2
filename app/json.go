package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"reflect"
	"slices"
	"strings"
)

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// readBody reads a JSON request body: it must be declared as JSON (415
// otherwise) and present (400). The size cap is set by middleware (413).
func readBody(r *http.Request) ([]byte, error) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
		return nil, errorf(http.StatusUnsupportedMediaType, "unsupported_media_type", "request body must be application/json")
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, err
		}
		return nil, errorf(http.StatusBadRequest, "invalid_json", "could not read request body")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, errorf(http.StatusBadRequest, "invalid_json", "request body is required")
	}
	return body, nil
}

// decodeJSON reads the body into v, refusing unknown fields and trailing data.
func decodeJSON(r *http.Request, v any) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	return strictUnmarshal(body, v)
}

func strictUnmarshal(body []byte, v any) error {
	if t := firstToken(body); t != '{' {
		return errorf(http.StatusBadRequest, "invalid_json", "request body must be a JSON object")
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
		return errorf(http.StatusBadRequest, "invalid_json", "unexpected data after the JSON object")
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
				return unknownField(path + k)
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
// structs included, to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-":
		case f.Anonymous && name == "":
			maps.Copy(out, jsonFields(f.Type))
		case f.IsExported():
			if name == "" {
				name = f.Name
			}
			out[name] = f.Type
		}
	}
	return out
}

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
		return errorf(http.StatusBadRequest, "invalid_json", "malformed JSON at byte %d: %s", syntax.Offset, syntax.Error())
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errorf(http.StatusBadRequest, "invalid_json", "malformed JSON: unexpected end of body")
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			return errorf(http.StatusBadRequest, "invalid_json", "request body must be a JSON object")
		}
		return fieldError(field, "must be %s, not %s", jsonKind(typ.Type.Kind().String()), typ.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		field := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return unknownField(field)
	}
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return err
	}
	return errorf(http.StatusBadRequest, "invalid_json", "malformed JSON: %v", err)
}

func unknownField(field string) *apiError {
	return &apiError{Status: http.StatusBadRequest, Code: "unknown_field", Field: field,
		Description: fmt.Sprintf("%s: not accepted by this endpoint", field)}
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

// update is the one way PUT and PATCH change a resource. current is the
// resource's updatable fields as JSON values; defaults are what a field
// returns to when set to null. PUT replaces each field the body names; PATCH
// applies the body as a JSON merge patch (RFC 7386), so nested objects merge.
// The result is decoded strictly into dst, so type errors name their field.
func update(body []byte, current, defaults map[string]any, merge bool, dst any) error {
	if firstToken(body) != '{' {
		return errorf(http.StatusBadRequest, "invalid_json", "request body must be a JSON object")
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
			return unknownField(k)
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
	return strictUnmarshal(merged, dst)
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

// asJSONMap turns a representation into its JSON object form, keeping only
// the given fields.
func asJSONMap(v any, fields map[string]any) (map[string]any, error) {
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
