package app_test

import (
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// moduleRoot is the directory holding go.mod, found upwards from the test's directory.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// load parses the module's template.yaml.
func load(t *testing.T) *Template {
	t.Helper()
	tpl, err := Load(filepath.Join(moduleRoot(t), "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return tpl
}

// deployed is the template's resources under the given parameter values (defaults for
// the rest), with the Env they were resolved in.
func deployed(t *testing.T, tpl *Template, values map[string]any) (*Env, map[string]Resource) {
	t.Helper()
	e, err := tpl.Env(values)
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Resources()
	if err != nil {
		t.Fatal(err)
	}
	return e, res
}

// get walks nested mappings along path; nil when a step is missing.
func get(v any, path ...string) any {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// target is the logical id a Ref or Fn::GetAtt points to, or "" for anything else.
func target(v any) string {
	m, ok := v.(map[string]any)
	if !ok || len(m) != 1 {
		return ""
	}
	if ref, ok := m["Ref"].(string); ok {
		return ref
	}
	if ga, ok := m["Fn::GetAtt"].([]any); ok && len(ga) == 2 {
		s, _ := ga[0].(string)
		return s
	}
	return ""
}

// ofType lists the logical ids of the resources of type typ, sorted.
func ofType(res map[string]Resource, typ string) []string {
	var ids []string
	for id, r := range res {
		if r.Type == typ {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

// function finds the one AWS::Serverless::Function built from codeURI.
func function(t *testing.T, res map[string]Resource, codeURI string) (string, Resource) {
	t.Helper()
	var found []string
	for _, id := range ofType(res, "AWS::Serverless::Function") {
		if res[id].Properties["CodeUri"] == codeURI {
			found = append(found, id)
		}
	}
	if len(found) != 1 {
		t.Fatalf("functions with CodeUri %s: %v, want exactly one", codeURI, found)
	}
	return found[0], res[found[0]]
}

// sqsEvent is the one SQS event of a function.
func sqsEvent(t *testing.T, fn Resource) map[string]any {
	t.Helper()
	var found []map[string]any
	for _, ev := range get(fn.Properties, "Events").(map[string]any) {
		if get(ev, "Type") == "SQS" {
			found = append(found, get(ev, "Properties").(map[string]any))
		}
	}
	if len(found) != 1 {
		t.Fatalf("the consumer has %d SQS events, want 1", len(found))
	}
	return found[0]
}

// number reads a numeric value or fails the test.
func number(t *testing.T, what string, v any) float64 {
	t.Helper()
	f, err := Number(v)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return f
}

// worstCase is the largest value v can take on deploy: itself, or for a Ref to a
// parameter the parameter's MaxValue (or its only allowed values' largest).
func worstCase(t *testing.T, tpl *Template, what string, v any) float64 {
	t.Helper()
	name := target(v)
	if name == "" {
		return number(t, what, v)
	}
	p, ok := tpl.Parameters[name]
	if !ok {
		t.Fatalf("%s refers to %s, not a parameter", what, name)
	}
	if p.MaxValue != nil {
		return *p.MaxValue
	}
	if len(p.AllowedValues) == 0 {
		t.Fatalf("%s is parameter %s, which has no MaxValue or AllowedValues: unbounded", what, name)
	}
	worst := number(t, what, p.AllowedValues[0])
	for _, a := range p.AllowedValues[1:] {
		worst = max(worst, number(t, what, a))
	}
	return worst
}
