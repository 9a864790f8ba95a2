package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// toYAML writes a JSON document as block-style YAML with the same keys in
// the same order. Strings and keys stay JSON's double-quoted strings,
// which YAML reads alike, so nothing needs escaping twice.
func toYAML(doc []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	v, err := readNode(dec)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	writeNode(&b, v, 0, false)
	return []byte(b.String()), nil
}

// node is a JSON value whose objects keep their keys' order.
type node struct {
	keys   []string
	vals   []*node
	items  []*node
	object bool
	array  bool
	scalar string // JSON text of a scalar
}

func readNode(dec *json.Decoder) (*node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		n := &node{object: t == '{', array: t == '['}
		for dec.More() {
			if n.object {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				n.keys = append(n.keys, k.(string))
			}
			child, err := readNode(dec)
			if err != nil {
				return nil, err
			}
			if n.object {
				n.vals = append(n.vals, child)
			} else {
				n.items = append(n.items, child)
			}
		}
		if _, err := dec.Token(); err != nil {
			return nil, err
		}
		return n, nil
	case string:
		q, _ := json.Marshal(t)
		return &node{scalar: string(q)}, nil
	case json.Number:
		return &node{scalar: t.String()}, nil
	case bool:
		return &node{scalar: fmt.Sprint(t)}, nil
	case nil:
		return &node{scalar: "null"}, nil
	}
	return nil, fmt.Errorf("unexpected JSON token %v", tok)
}

// inline answers a value written on its key's line: a scalar, or an
// empty object or array.
func (n *node) inline() (string, bool) {
	switch {
	case n.object && len(n.keys) == 0:
		return "{}", true
	case n.array && len(n.items) == 0:
		return "[]", true
	case !n.object && !n.array:
		return n.scalar, true
	}
	return "", false
}

// writeNode writes a non-scalar n at indent; its first line goes on the
// current line when onLine (after an item's "- ").
func writeNode(b *strings.Builder, n *node, indent int, onLine bool) {
	pad := strings.Repeat(" ", indent)
	if n.object {
		for i, k := range n.keys {
			if i > 0 || !onLine {
				b.WriteString(pad)
			}
			q, _ := json.Marshal(k)
			b.Write(q)
			b.WriteByte(':')
			if s, ok := n.vals[i].inline(); ok {
				b.WriteString(" " + s + "\n")
				continue
			}
			b.WriteByte('\n')
			if n.vals[i].array {
				writeNode(b, n.vals[i], indent, false)
			} else {
				writeNode(b, n.vals[i], indent+2, false)
			}
		}
		return
	}
	for _, it := range n.items {
		if s, ok := it.inline(); ok {
			b.WriteString(pad + "- " + s + "\n")
			continue
		}
		if it.array {
			b.WriteString(pad + "-\n")
		} else {
			b.WriteString(pad + "- ")
		}
		writeNode(b, it, indent+2, !it.array)
	}
}
