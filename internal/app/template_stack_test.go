// The template tests read the SAM template (template.yaml) as data, so that tests can hold
// the deployable stack to what the code needs without deploying it: the table the
// migrations define, the permissions the code's calls require, the queue settings the
// consumer relies on.
//
// It reads CloudFormation YAML with its short forms (!Ref, !GetAtt, !Sub, !If …) and
// evaluates what depends only on parameters and conditions (Env). References to
// resources stay symbolic ({"Ref": "LedgerTable"}), which is what a check compares: "the
// consumer may PutItem on !GetAtt LedgerTable.Arn". It does not run the SAM transform:
// AWS::Serverless resources are read as written.

package app_test

import (
	"fmt"
	"os"
)

// Template is a CloudFormation template as written. Values are trees of map[string]any,
// []any and scalars (string, int, float64, bool, nil); intrinsic functions appear in
// their long form, a one-key map such as {"Fn::GetAtt": ["Queue", "Arn"]}.
type Template struct {
	Parameters map[string]Parameter
	Conditions map[string]any
	Resources  map[string]Resource
	Outputs    map[string]Output
}

// Parameter is a template parameter. Default is nil when the parameter has none;
// AllowedPattern is empty when there is none; MinValue and MaxValue are nil when
// unbounded.
type Parameter struct {
	Type           string
	Default        any
	AllowedValues  []any
	AllowedPattern string
	MinValue       *float64
	MaxValue       *float64
}

// Resource is a template resource. Condition is empty for an unconditional resource.
type Resource struct {
	Type                string
	Condition           string
	DeletionPolicy      string
	UpdateReplacePolicy string
	Metadata            map[string]any
	Properties          map[string]any
}

// Output is a template output. Condition is empty for an unconditional output.
type Output struct {
	Condition string
	Value     any
}

// Load reads and parses the template at path.
func Load(path string) (*Template, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("stack: %w", err)
	}
	t, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("stack: %s: %w", path, err)
	}
	return t, nil
}

// Parse parses a template's YAML.
func Parse(data []byte) (*Template, error) {
	doc, err := decodeYAML(data)
	if err != nil {
		return nil, err
	}
	root, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the template is not a mapping")
	}
	t := &Template{
		Parameters: map[string]Parameter{},
		Conditions: map[string]any{},
		Resources:  map[string]Resource{},
		Outputs:    map[string]Output{},
	}
	for name, raw := range mapping(root["Parameters"]) {
		p, err := parameter(raw)
		if err != nil {
			return nil, fmt.Errorf("parameter %s: %w", name, err)
		}
		t.Parameters[name] = p
	}
	for name, raw := range mapping(root["Conditions"]) {
		t.Conditions[name] = raw
	}
	for id, raw := range mapping(root["Resources"]) {
		r, err := resource(raw)
		if err != nil {
			return nil, fmt.Errorf("resource %s: %w", id, err)
		}
		t.Resources[id] = r
	}
	if len(t.Resources) == 0 {
		return nil, fmt.Errorf("the template has no resources")
	}
	for name, raw := range mapping(root["Outputs"]) {
		m := mapping(raw)
		cond, _ := m["Condition"].(string)
		t.Outputs[name] = Output{Condition: cond, Value: m["Value"]}
	}
	return t, nil
}

func parameter(raw any) (Parameter, error) {
	m := mapping(raw)
	p := Parameter{Default: m["Default"]}
	p.AllowedPattern, _ = m["AllowedPattern"].(string)
	var ok bool
	if p.Type, ok = m["Type"].(string); !ok {
		return Parameter{}, fmt.Errorf("no Type")
	}
	if v, present := m["AllowedValues"]; present {
		if p.AllowedValues, ok = v.([]any); !ok {
			return Parameter{}, fmt.Errorf("AllowedValues is not a list")
		}
	}
	for _, b := range []struct {
		key string
		dst **float64
	}{{"MinValue", &p.MinValue}, {"MaxValue", &p.MaxValue}} {
		if v, present := m[b.key]; present {
			f, err := Number(v)
			if err != nil {
				return Parameter{}, fmt.Errorf("%s: %w", b.key, err)
			}
			*b.dst = &f
		}
	}
	return p, nil
}

func resource(raw any) (Resource, error) {
	m := mapping(raw)
	r := Resource{Metadata: mapping(m["Metadata"]), Properties: mapping(m["Properties"])}
	var ok bool
	if r.Type, ok = m["Type"].(string); !ok {
		return Resource{}, fmt.Errorf("no Type")
	}
	for key, dst := range map[string]*string{"Condition": &r.Condition, "DeletionPolicy": &r.DeletionPolicy, "UpdateReplacePolicy": &r.UpdateReplacePolicy} {
		if v, present := m[key]; present {
			if *dst, ok = v.(string); !ok {
				return Resource{}, fmt.Errorf("%s is not a string", key)
			}
		}
	}
	return r, nil
}

// mapping is v as a mapping, or an empty one when v is not a mapping.
func mapping(v any) map[string]any {
	m, _ := v.(map[string]any)
	if m == nil {
		return map[string]any{}
	}
	return m
}
