package app_test

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// Env is the template under one set of parameter values, as CloudFormation would see it
// on deploy: every condition decided, resources and outputs of false conditions gone,
// Ref to a parameter replaced by its value, Fn::If decided, AWS::NoValue removed.
// Everything else (Ref and Fn::GetAtt of resources, pseudo parameters, Fn::Sub …) stays
// symbolic, with its arguments resolved. Conditions holds every condition's value.
type Env struct {
	Conditions map[string]bool
	params     map[string]any
	t          *Template
}

// asAnyList is ss as a list of values, as a decoded template holds one.
func asAnyList(ss []string) []any {
	out := make([]any, len(ss))
	for i, x := range ss {
		out[i] = x
	}
	return out
}

// Env returns the template with values for some parameters and defaults for the rest.
// It fails on an unknown parameter, a parameter left without a value, a value outside
// AllowedValues or not matching AllowedPattern, and a condition it cannot decide.
func (t *Template) Env(values map[string]any) (*Env, error) {
	e := &Env{Conditions: map[string]bool{}, params: map[string]any{}, t: t}
	for name, v := range values {
		if _, ok := t.Parameters[name]; !ok {
			return nil, fmt.Errorf("stack: no parameter %q", name)
		}
		e.params[name] = v
	}
	for _, name := range slices.Sorted(maps.Keys(t.Parameters)) {
		p := t.Parameters[name]
		v, ok := e.params[name]
		if !ok {
			if p.Default == nil {
				return nil, fmt.Errorf("stack: parameter %s has no default and no value", name)
			}
			v = p.Default
			e.params[name] = v
		}
		if text, ok := v.(string); ok && p.Type == "CommaDelimitedList" { // a list of the text's parts
			e.params[name] = asAnyList(strings.Split(text, ","))
		}
		if p.AllowedValues != nil && !slices.ContainsFunc(p.AllowedValues, func(a any) bool { return fmt.Sprint(a) == fmt.Sprint(v) }) {
			return nil, fmt.Errorf("stack: parameter %s: %v is not one of %v", name, v, p.AllowedValues)
		}
		if p.AllowedPattern != "" {
			re, err := regexp.Compile("^(?:" + p.AllowedPattern + ")$") // the whole value must match
			if err != nil {
				return nil, fmt.Errorf("stack: parameter %s: AllowedPattern: %w", name, err)
			}
			for _, x := range list(e.params[name]) { // a list's each element, as CloudFormation does
				if !re.MatchString(fmt.Sprint(x)) {
					return nil, fmt.Errorf("stack: parameter %s: %v does not match %s", name, x, p.AllowedPattern)
				}
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(t.Conditions)) {
		if _, err := e.condition(name, nil); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// Resources returns the resources that exist under e, with their properties and
// metadata resolved.
func (e *Env) Resources() (map[string]Resource, error) {
	out := map[string]Resource{}
	for id, r := range e.t.Resources {
		if r.Condition != "" && !e.Conditions[r.Condition] {
			continue
		}
		props, err := e.Resolve(r.Properties)
		if err != nil {
			return nil, fmt.Errorf("stack: resource %s: %w", id, err)
		}
		meta, err := e.Resolve(r.Metadata)
		if err != nil {
			return nil, fmt.Errorf("stack: resource %s: %w", id, err)
		}
		r.Properties, r.Metadata = mapping(props), mapping(meta)
		out[id] = r
	}
	return out, nil
}

// Outputs returns the outputs that exist under e, their values resolved.
func (e *Env) Outputs() (map[string]any, error) {
	out := map[string]any{}
	for name, o := range e.t.Outputs {
		if o.Condition != "" && !e.Conditions[o.Condition] {
			continue
		}
		v, err := e.Resolve(o.Value)
		if err != nil {
			return nil, fmt.Errorf("stack: output %s: %w", name, err)
		}
		out[name] = v
	}
	return out, nil
}

// noValue stands for AWS::NoValue while resolving: the enclosing key or list element
// is dropped.
type noValue struct{}

// Resolve evaluates v under e. A value that is AWS::NoValue as a whole resolves to nil.
func (e *Env) Resolve(v any) (any, error) {
	r, err := e.resolve(v)
	if _, gone := r.(noValue); gone {
		return nil, err
	}
	return r, err
}

func (e *Env) resolve(v any) (any, error) {
	switch v := v.(type) {
	case map[string]any:
		if len(v) == 1 {
			if ref, ok := v["Ref"].(string); ok {
				if ref == "AWS::NoValue" {
					return noValue{}, nil
				}
				if p, ok := e.params[ref]; ok {
					return p, nil
				}
				return v, nil
			}
			if args, ok := v["Fn::If"]; ok {
				return e.fnIf(args)
			}
			if args, ok := v["Fn::Split"]; ok {
				return e.fnSplit(args)
			}
			if args, ok := v["Fn::Join"]; ok {
				return e.fnJoin(args)
			}
		}
		out := make(map[string]any, len(v))
		for k, x := range v {
			r, err := e.resolve(x)
			if err != nil {
				return nil, err
			}
			if _, gone := r.(noValue); !gone {
				out[k] = r
			}
		}
		return out, nil
	case []any:
		out := make([]any, 0, len(v))
		for _, x := range v {
			r, err := e.resolve(x)
			if err != nil {
				return nil, err
			}
			if _, gone := r.(noValue); !gone {
				out = append(out, r)
			}
		}
		return out, nil
	default:
		return v, nil
	}
}

func (e *Env) fnIf(args any) (any, error) {
	a, ok := args.([]any)
	if !ok || len(a) != 3 {
		return nil, fmt.Errorf("Fn::If wants [condition, then, else], got %v", args)
	}
	name, ok := a[0].(string)
	if !ok {
		return nil, fmt.Errorf("Fn::If: condition name %v is not a string", a[0])
	}
	holds, known := e.Conditions[name]
	if !known {
		return nil, fmt.Errorf("Fn::If: no condition %q", name)
	}
	if holds {
		return e.resolve(a[1])
	}
	return e.resolve(a[2])
}

// fnSplit splits a string the parameters decide into a list; a string that is
// symbolic (a resource's attribute) stays an Fn::Split of it.
func (e *Env) fnSplit(args any) (any, error) {
	a, ok := args.([]any)
	if !ok || len(a) != 2 {
		return nil, fmt.Errorf("Fn::Split wants [delimiter, string], got %v", args)
	}
	src, err := e.resolve(a[1])
	if err != nil {
		return nil, err
	}
	delim, okDelim := a[0].(string)
	if !okDelim {
		return map[string]any{"Fn::Split": []any{a[0], src}}, nil
	}
	if parts, ok := joined(src, delim); ok {
		return parts, nil
	}
	return map[string]any{"Fn::Split": []any{a[0], src}}, nil
}

// joined is what splitting v at delim gives: the parts of a string, or of an Fn::Join
// by the same delimiter, whose symbolic elements (a Ref, an Fn::GetAtt) stay whole.
func joined(v any, delim string) ([]any, bool) {
	if s, ok := v.(string); ok {
		return asAnyList(strings.Split(s, delim)), true
	}
	j, ok := mapping(v)["Fn::Join"].([]any)
	if !ok || len(j) != 2 || j[0] != delim {
		return nil, false
	}
	var out []any
	for _, x := range list(j[1]) {
		if parts, ok := joined(x, delim); ok {
			out = append(out, parts...)
		} else {
			out = append(out, x)
		}
	}
	return out, true
}

// fnJoin joins a list of strings the parameters decide; a list with a symbolic element
// stays an Fn::Join of it.
func (e *Env) fnJoin(args any) (any, error) {
	a, ok := args.([]any)
	if !ok || len(a) != 2 {
		return nil, fmt.Errorf("Fn::Join wants [delimiter, list], got %v", args)
	}
	r, err := e.resolve(a[1])
	if err != nil {
		return nil, err
	}
	delim, okDelim := a[0].(string)
	list, okList := r.([]any)
	parts := make([]string, len(list))
	for i, x := range list {
		s, isString := x.(string)
		okList = okList && isString
		parts[i] = s
	}
	if !okDelim || !okList {
		return map[string]any{"Fn::Join": []any{a[0], r}}, nil
	}
	return strings.Join(parts, delim), nil
}

// condition decides the named condition, remembering the result; deciding lists the
// conditions being decided, to report a cycle instead of recursing forever.
func (e *Env) condition(name string, deciding []string) (bool, error) {
	if b, ok := e.Conditions[name]; ok {
		return b, nil
	}
	if slices.Contains(deciding, name) {
		return false, fmt.Errorf("stack: condition %s refers to itself through %v", name, deciding)
	}
	expr, ok := e.t.Conditions[name]
	if !ok {
		return false, fmt.Errorf("stack: no condition %q", name)
	}
	b, err := e.decide(expr, append(deciding, name))
	if err != nil {
		return false, fmt.Errorf("stack: condition %s: %w", name, err)
	}
	e.Conditions[name] = b
	return b, nil
}

// decide evaluates a condition expression: Fn::Equals, Fn::Not, Fn::And, Fn::Or and
// Condition, over parameter values and literals.
func (e *Env) decide(expr any, deciding []string) (bool, error) {
	m, ok := expr.(map[string]any)
	if !ok || len(m) != 1 {
		return false, fmt.Errorf("%v is not a condition function", expr)
	}
	var (
		fn   string
		args any
	)
	for fn, args = range m { // the only key
	}
	if fn == "Condition" {
		name, ok := args.(string)
		if !ok {
			return false, fmt.Errorf("a Condition reference needs a name, got %v", args)
		}
		return e.condition(name, deciding)
	}
	list, ok := args.([]any)
	if !ok {
		return false, fmt.Errorf("%s wants a list, got %v", fn, args)
	}
	switch fn {
	case "Fn::Equals":
		if len(list) != 2 {
			return false, fmt.Errorf("Fn::Equals wants two values, got %v", list)
		}
		a, err := e.scalar(list[0])
		if err != nil {
			return false, err
		}
		b, err := e.scalar(list[1])
		if err != nil {
			return false, err
		}
		return a == b, nil
	case "Fn::Not", "Fn::And", "Fn::Or":
		if fn == "Fn::Not" && len(list) != 1 {
			return false, fmt.Errorf("Fn::Not wants one condition, got %v", list)
		}
		all, some := true, false
		for _, c := range list {
			b, err := e.decide(c, deciding)
			if err != nil {
				return false, err
			}
			all, some = all && b, some || b
		}
		switch fn {
		case "Fn::Not":
			return !all, nil
		case "Fn::And":
			return all, nil
		default:
			return some, nil
		}
	}
	return false, fmt.Errorf("%s is not supported in conditions", fn)
}

// scalar resolves an Fn::Equals operand to its text, as CloudFormation compares them.
func (e *Env) scalar(v any) (string, error) {
	r, err := e.resolve(v)
	if err != nil {
		return "", err
	}
	switch r.(type) {
	case map[string]any, []any, noValue:
		return "", fmt.Errorf("Fn::Equals operand %v does not resolve to a value", v)
	}
	return fmt.Sprint(r), nil
}
