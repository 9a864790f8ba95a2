package scim

import (
	"maps"
	"strings"

	filter "github.com/scim2/filter-parser/v2"
)

// project shapes a rendered resource by the attributes and
// excludedAttributes parameters (RFC 7644 §3.4.2.5): with attributes, the
// resource shows those and what is always returned (id, schemas); else
// it shows all but the excluded ones. Names are case-insensitive and may
// carry their schema's URN; names of nothing are ignored.
func project(res map[string]any, attributes, excluded []string) (map[string]any, error) {
	if len(attributes) == 0 && len(excluded) == 0 {
		return res, nil
	}
	if len(attributes) > 0 {
		out := map[string]any{"schemas": res["schemas"], "id": res["id"]}
		for _, a := range attributes {
			container, name, sub, err := locate(res, a)
			if err != nil {
				return nil, err
			}
			copyPath(out, res, container, name, sub)
		}
		return out, nil
	}
	out := maps.Clone(res)
	for _, a := range excluded {
		container, name, sub, err := locate(res, a)
		if err != nil {
			return nil, err
		}
		if strings.EqualFold(name, "id") || strings.EqualFold(name, "schemas") {
			continue
		}
		removePath(out, container, name, sub)
	}
	return out, nil
}

// locate splits an attribute path of a parameter into the key of the
// extension holding it ("" for the top level), the attribute's key and a
// sub-attribute.
func locate(res map[string]any, path string) (container, name, sub string, err error) {
	for k := range res {
		if strings.HasPrefix(k, "urn:") && strings.EqualFold(k, path) {
			return "", k, "", nil // a whole extension
		}
	}
	p, perr := filter.ParseAttrPath([]byte(path))
	if perr != nil {
		return "", "", "", badRequest(typeInvalidValue, "malformed attribute name %q", path)
	}
	if uri := p.URI(); uri != "" {
		for k := range res {
			if strings.HasPrefix(k, "urn:") && strings.EqualFold(k, uri) {
				container = k
			}
		}
	}
	return container, p.AttributeName, p.SubAttributeName(), nil
}

// keyOf is the key of m equal to name but for case, or "".
func keyOf(m map[string]any, name string) string {
	for k := range m {
		if strings.EqualFold(k, name) {
			return k
		}
	}
	return ""
}

func holder(m map[string]any, container string) map[string]any {
	if container == "" {
		return m
	}
	c, _ := m[container].(map[string]any)
	return c
}

func copyPath(out, res map[string]any, container, name, sub string) {
	from := holder(res, container)
	if from == nil {
		return
	}
	k := keyOf(from, name)
	if k == "" {
		return
	}
	to := out
	if container != "" {
		c, _ := out[container].(map[string]any)
		if c == nil {
			c = map[string]any{}
			out[container] = c
		}
		to = c
	}
	if sub == "" {
		to[k] = from[k]
		return
	}
	switch v := from[k].(type) {
	case map[string]any:
		if sk := keyOf(v, sub); sk != "" {
			m, _ := to[k].(map[string]any)
			if m == nil {
				m = map[string]any{}
			}
			m[sk] = v[sk]
			to[k] = m
		}
	case []any:
		list := make([]any, 0, len(v))
		for _, item := range v {
			if e, ok := item.(map[string]any); ok {
				if sk := keyOf(e, sub); sk != "" {
					list = append(list, map[string]any{sk: e[sk]})
				}
			}
		}
		to[k] = list
	}
}

func removePath(out map[string]any, container, name, sub string) {
	if container != "" {
		c, _ := out[container].(map[string]any)
		if c == nil {
			return
		}
		c = maps.Clone(c)
		out[container] = c
		out = c
	}
	k := keyOf(out, name)
	if k == "" {
		return
	}
	if sub == "" {
		delete(out, k)
		return
	}
	switch v := out[k].(type) {
	case map[string]any:
		v = maps.Clone(v)
		delete(v, keyOf(v, sub))
		out[k] = v
	case []any:
		list := make([]any, len(v))
		for i, item := range v {
			e, _ := item.(map[string]any)
			e = maps.Clone(e)
			delete(e, keyOf(e, sub))
			list[i] = e
		}
		out[k] = list
	}
}
