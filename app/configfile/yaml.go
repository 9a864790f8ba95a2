package configfile

import (
	"errors"
	"fmt"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// parseYAML reads a YAML file: one mapping of flat keys, each value a
// scalar or a list of scalars. It reads the document's nodes rather than
// a map so that every refusal names its line and a key given twice is
// refused rather than the last one winning.
func parseYAML(data []byte, known func(string) bool) ([]Setting, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) && len(te.Errors) > 0 {
			return nil, errors.New(te.Errors[0])
		}
		return nil, err // yaml's own message says "yaml: line N: ..."
	}
	if len(doc.Content) == 0 {
		return nil, nil // an empty file sets nothing
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: the file must be a mapping of settings (key: value)", top.Line)
	}
	var out []Setting
	seen := map[string]int{}
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], top.Content[i+1]
		if first, dup := seen[k.Value]; dup {
			return nil, fmt.Errorf("line %d: %s is set twice (first at line %d)", k.Line, k.Value, first)
		}
		seen[k.Value] = k.Line
		value, err := yamlValue(v)
		if err != nil {
			return nil, fmt.Errorf("line %d: %s %w", k.Line, k.Value, err)
		}
		st, err := setting(k.Value, value, k.Line, known)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// yamlValue answers a node as the TOML reader's values are: a string, a
// boolean, an integer, a float or a list, so that both formats take the
// same values.
func yamlValue(n *yaml.Node) (any, error) {
	switch n.Kind {
	case yaml.AliasNode:
		return yamlValue(n.Alias)
	case yaml.MappingNode:
		return map[string]any{}, nil
	case yaml.SequenceNode:
		list := make([]any, len(n.Content))
		for i, e := range n.Content {
			if e.Kind != yaml.ScalarNode || e.ShortTag() != "!!str" {
				return nil, errors.New("must be a list of strings")
			}
			list[i] = e.Value
		}
		return list, nil
	}
	switch n.ShortTag() {
	case "!!bool":
		var b bool
		err := n.Decode(&b)
		return b, err
	case "!!int":
		i, err := strconv.ParseInt(n.Value, 0, 64)
		if err != nil {
			return nil, fmt.Errorf("is no integer flags take: %w", err)
		}
		return i, nil
	case "!!float":
		var f float64
		err := n.Decode(&f)
		return f, err
	case "!!null":
		return nil, errors.New("has no value")
	}
	return n.Value, nil
}
