package openapi

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strings"
	"time"
	"unicode"
)

// Schema is a JSON Schema (2020-12, as OpenAPI 3.1 uses it).
type Schema = map[string]any

// direction says which side of a call a type's schema describes: an
// answer names every field the encoder always writes as required, a
// request requires nothing the type cannot tell (the handler checks its
// own required fields, answering the API's 400).
type direction int

const (
	answer direction = iota
	request
)

var (
	timeType          = reflect.TypeFor[time.Time]()
	rawMessageType    = reflect.TypeFor[json.RawMessage]()
	jsonMarshalerType = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

// schemas turns Go types into JSON Schemas the way encoding/json writes
// and the server's strict decoder reads them, keeping each named struct
// once under components/schemas.
type schemas struct {
	components map[string]Schema
	names      map[typeKey]string
	taken      map[string]bool
}

// typeKey is a named struct on one side of a call: each side is a
// component of its own, the request side named with Input after it.
type typeKey struct {
	t   reflect.Type
	dir direction
}

func newSchemas() *schemas {
	return &schemas{components: map[string]Schema{}, names: map[typeKey]string{}, taken: map[string]bool{}}
}

// of answers the schema of v's type, or nil when v is nil.
func (s *schemas) of(v any, dir direction) Schema {
	if v == nil {
		return nil
	}
	if sc, ok := v.(Schema); ok {
		return sc
	}
	return s.schema(reflect.TypeOf(v), dir)
}

func (s *schemas) schema(t reflect.Type, dir direction) Schema {
	switch {
	case t == timeType:
		return Schema{"type": "string", "format": "date-time"}
	case t == rawMessageType:
		return Schema{}
	case t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface && (t.Implements(jsonMarshalerType) || reflect.PointerTo(t).Implements(jsonMarshalerType)):
		// A type that writes itself: the document cannot see its shape.
		return Schema{}
	case t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface && (t.Implements(textMarshalerType) || reflect.PointerTo(t).Implements(textMarshalerType)):
		return Schema{"type": "string"}
	}
	switch t.Kind() {
	case reflect.Pointer:
		return s.schema(t.Elem(), dir)
	case reflect.Interface:
		return Schema{}
	case reflect.Bool:
		return Schema{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return Schema{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return Schema{"type": "number"}
	case reflect.String:
		return Schema{"type": "string"}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && t.Kind() == reflect.Slice {
			return Schema{"type": "string", "contentEncoding": "base64"}
		}
		return Schema{"type": "array", "items": s.schema(t.Elem(), dir)}
	case reflect.Map:
		return Schema{"type": "object", "additionalProperties": s.schema(t.Elem(), dir)}
	case reflect.Struct:
		return s.object(t, dir)
	}
	return Schema{}
}

// object answers a struct's schema: a reference to its component when it
// has a name, else the schema itself.
func (s *schemas) object(t reflect.Type, dir direction) Schema {
	if t.Name() == "" {
		return s.structSchema(t, dir)
	}
	key := typeKey{t, dir}
	name, ok := s.names[key]
	if !ok {
		name = s.componentName(t, dir)
		s.names[key] = name
		s.taken[name] = true
		s.components[name] = Schema{} // a placeholder, for types that hold themselves
		s.components[name] = s.structSchema(t, dir)
	}
	return Schema{"$ref": "#/components/schemas/" + name}
}

// componentName names a struct after its Go name, capitalised and without
// the Rep suffix of the API's representations (userRep is User), with its
// package's name before it when another package's type took the name.
func (s *schemas) componentName(t reflect.Type, dir direction) string {
	base := strings.TrimSuffix(t.Name(), "Rep")
	if base == "" {
		base = t.Name()
	}
	if i := strings.IndexByte(base, '['); i >= 0 { // a generic type's instance
		base = base[:i]
	}
	r := []rune(base)
	r[0] = unicode.ToUpper(r[0])
	name := string(r)
	if dir == request {
		name += "Input"
	}
	if s.taken[name] {
		pkg := t.PkgPath()
		pkg = pkg[strings.LastIndexByte(pkg, '/')+1:]
		p := []rune(pkg)
		p[0] = unicode.ToUpper(p[0])
		name = string(p) + name
	}
	return name
}

func (s *schemas) structSchema(t reflect.Type, dir direction) Schema {
	props := Schema{}
	var required []string
	s.fields(t, dir, props, &required)
	sc := Schema{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		sc["required"] = required
	}
	return sc
}

// fields adds t's fields as encoding/json sees them: exported, named by
// their tag, embedded structs' fields in line. As in encoding/json, a
// field of a shallower struct hides an embedded one of the same name (an
// import's credentials hide those of the user it embeds).
func (s *schemas) fields(t reflect.Type, dir direction, props Schema, required *[]string) {
	depths := map[string]int{}
	walkFields(t, 0, func(_ reflect.StructField, name, _ string, depth int) {
		if d, ok := depths[name]; !ok || depth < d {
			depths[name] = depth
		}
	})
	walkFields(t, 0, func(f reflect.StructField, name, opts string, depth int) {
		if depth != depths[name] {
			return
		}
		omit := strings.Contains(","+opts+",", ",omitempty,") || strings.Contains(","+opts+",", ",omitzero,")
		var sc Schema
		if strings.Contains(","+opts+",", ",string,") {
			sc = Schema{"type": "string"}
		} else {
			sc = s.schema(f.Type, dir)
		}
		if dir == request || (!omit && nullable(f.Type)) {
			sc = orNull(sc)
		}
		props[name] = sc
		if dir == answer && !omit {
			*required = append(*required, name)
		}
	})
}

// walkFields calls visit with each field encoding/json sees in t, in
// order, embedded structs' fields in line one level deeper, with its JSON
// name and tag options.
func walkFields(t reflect.Type, depth int, visit func(f reflect.StructField, name, opts string, depth int)) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				walkFields(ft, depth+1, visit)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		visit(f, name, opts, depth)
	}
}

// nullable says whether encoding/json may write null for a value of t.
func nullable(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Map:
		return true
	case reflect.Slice:
		return t != rawMessageType
	}
	return false
}

// orNull lets sc be null too.
func orNull(sc Schema) Schema {
	if len(sc) == 0 {
		return sc // anything already
	}
	if items, _ := sc["items"].(Schema); items["$ref"] != nil {
		// A list of components stays of type array, not ["array", "null"]:
		// libopenapi knows a component holding a list of itself (a tree)
		// from an endless one only by that type.
		return Schema{"anyOf": []Schema{sc, {"type": "null"}}}
	}
	if typ, ok := sc["type"].(string); ok && sc["$ref"] == nil {
		out := Schema{}
		for k, v := range sc {
			out[k] = v
		}
		out["type"] = []string{typ, "null"}
		return out
	}
	return Schema{"anyOf": []Schema{sc, {"type": "null"}}}
}
