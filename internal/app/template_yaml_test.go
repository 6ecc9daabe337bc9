package app_test

import (
	"bytes"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// decodeYAML reads one YAML document into a value tree, rewriting CloudFormation's short
// forms into their long forms as CloudFormation itself does: !Ref X becomes
// {"Ref": "X"}, !Condition X becomes {"Condition": "X"}, any other !Name v becomes
// {"Fn::Name": v}, and !GetAtt's "Resource.Attribute" string is split into
// ["Resource", "Attribute"]. A repeated mapping key is an error, not a silent overwrite.
func decodeYAML(data []byte) (any, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("yaml: %w", err)
	}
	return fromNode(&doc)
}

func fromNode(n *yaml.Node) (any, error) {
	if strings.HasPrefix(n.Tag, "!") && !strings.HasPrefix(n.Tag, "!!") {
		return shortForm(n)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return fromNode(n.Content[0])
	case yaml.AliasNode:
		return fromNode(n.Alias)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if _, dup := m[k.Value]; dup {
				return nil, fmt.Errorf("line %d: key %q repeated", k.Line, k.Value)
			}
			val, err := fromNode(v)
			if err != nil {
				return nil, err
			}
			m[k.Value] = val
		}
		return m, nil
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			val, err := fromNode(c)
			if err != nil {
				return nil, err
			}
			s = append(s, val)
		}
		return s, nil
	default:
		var v any
		if err := n.Decode(&v); err != nil {
			return nil, fmt.Errorf("line %d: %w", n.Line, err)
		}
		return v, nil
	}
}

// shortForm turns a node tagged !Name into the long form of the intrinsic function.
func shortForm(n *yaml.Node) (any, error) {
	name := strings.TrimPrefix(n.Tag, "!")
	plain := *n
	plain.Tag = ""
	if n.Kind == yaml.ScalarNode {
		plain.Tag = "!!str" // a function's scalar argument is a string, even "5"
	}
	arg, err := fromNode(&plain)
	if err != nil {
		return nil, err
	}
	switch name {
	case "Ref", "Condition":
		return map[string]any{name: arg}, nil
	case "GetAtt":
		if s, ok := arg.(string); ok {
			res, attr, found := strings.Cut(s, ".")
			if !found {
				return nil, fmt.Errorf("line %d: !GetAtt %q: want Resource.Attribute", n.Line, s)
			}
			arg = []any{res, attr}
		}
	}
	return map[string]any{"Fn::" + name: arg}, nil
}
