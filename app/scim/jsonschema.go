package scim

// The JSON Schemas of the resources, for the API document. A resource is
// a document the server builds from its attribute definitions, not a Go
// type, so its schema is made from the same definitions the Schemas
// endpoint shows and bodies are checked against.

// UserJSONSchema is a User as the server answers it, or, with request
// set, as a creation or a replacement gives it.
func UserJSONSchema(request bool) map[string]any {
	sc := resourceJSONSchema(userDefs, request)
	if !request {
		// A realm's attribute mappings may declare extensions of its own.
		sc["patternProperties"] = map[string]any{"^urn:": map[string]any{"type": "object",
			"description": "An extension of the realm's own, as its attribute mappings declare it."}}
	}
	return sc
}

// GroupJSONSchema is a Group as the server answers it, or, with request
// set, as a creation or a replacement gives it.
func GroupJSONSchema(request bool) map[string]any {
	return resourceJSONSchema(groupDefs, request)
}

// resourceJSONSchema is a resource of the attributes defs. An answer
// shows its attributes under their defined names, never a password, and
// always its id and schemas (RFC 7643 §7's returned "always"). A request
// may name attributes in any case (RFC 7643 §2.1), give a single value
// for a multi-valued attribute, a boolean as text, null for an attribute
// it leaves out, and read-only attributes, which are ignored.
func resourceJSONSchema(defs []attribute, request bool) map[string]any {
	props := map[string]any{"schemas": map[string]any{"type": "array", "items": map[string]any{"type": "string"},
		"description": "The URNs of the schemas the resource holds: its core schema and its extensions."}}
	for i := range defs {
		if !request && defs[i].Returned == returnedNever {
			continue
		}
		props[defs[i].Name] = attributeJSONSchema(&defs[i], request)
	}
	sc := map[string]any{"type": "object", "properties": props}
	if request {
		sc["description"] = "Attribute names are case-insensitive (RFC 7643 §2.1)."
	} else {
		sc["required"] = []string{"schemas", "id"}
		sc["additionalProperties"] = false
	}
	return sc
}

func attributeJSONSchema(def *attribute, request bool) map[string]any {
	if request && def.Mutability == readOnly {
		return map[string]any{"description": def.Description + " Read-only: ignored in a request."}
	}
	var sc map[string]any
	switch def.Type {
	case typeComplex:
		props := map[string]any{}
		for i := range def.SubAttributes {
			if !request && def.SubAttributes[i].Returned == returnedNever {
				continue
			}
			props[def.SubAttributes[i].Name] = attributeJSONSchema(&def.SubAttributes[i], request)
		}
		sc = map[string]any{"type": "object", "properties": props}
		if !request {
			sc["additionalProperties"] = false
		}
	case typeBoolean:
		sc = map[string]any{"type": "boolean"}
		if request {
			sc["type"] = []string{"boolean", "string"}
		}
	case typeDecimal:
		sc = map[string]any{"type": "number"}
	case typeDateTime:
		sc = map[string]any{"type": "string", "format": "date-time"}
	default:
		sc = map[string]any{"type": "string"}
	}
	if def.MultiValued {
		list := map[string]any{"type": "array", "items": sc}
		if request {
			return map[string]any{"description": def.Description, "anyOf": []any{list, sc, map[string]any{"type": "null"}}}
		}
		sc = list
	} else if request {
		sc = map[string]any{"anyOf": []any{sc, map[string]any{"type": "null"}}}
	}
	sc["description"] = def.Description
	return sc
}
