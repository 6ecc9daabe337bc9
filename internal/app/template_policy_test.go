package app_test

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// Call is one request a resource policy judges. Principal is an IAM principal's ARN, or
// a service principal ("sns.amazonaws.com") when Service is set; Resource is in Symbol
// form ("!GetAtt MovementsQueue.Arn"); Context holds the request's condition keys
// (aws:SourceArn, aws:SecureTransport), aws:PrincipalArn added from Principal.
type Call struct {
	Principal string
	Service   bool
	Action    string
	Resource  string
	Context   map[string]string
}

// Verdict is what a resource policy says of a Call: an explicit Deny wins; otherwise an
// Allow lets in a principal of any account, and a principal of the resource's own
// account is let in by its IAM policies, as an administrator's are.
type Verdict struct{ Allowed, Denied bool }

// Judge evaluates the policy document doc (resolved, Symbol-comparable) for c, the way
// IAM evaluates Effect, Principal, Action, Resource and the Condition operators the
// template uses (String…, Arn…, Bool, and their Not… forms; a key missing from the
// request matches only a negated operator). Anything else is an error.
func Judge(doc any, c Call) (Verdict, error) {
	ctx := map[string]string{}
	for k, v := range c.Context {
		ctx[strings.ToLower(k)] = v
	}
	if !c.Service {
		ctx["aws:principalarn"] = c.Principal
	}
	var v Verdict
	for _, raw := range list(get(doc, "Statement")) {
		st, ok := raw.(map[string]any)
		if !ok {
			return v, fmt.Errorf("statement %v is not a mapping", raw)
		}
		applies, err := matches(st, c, ctx)
		if err != nil || !applies {
			if err != nil {
				return v, err
			}
			continue
		}
		switch st["Effect"] {
		case "Deny":
			v.Denied = true
		case "Allow":
			v.Allowed = true
		}
	}
	return v, nil
}

// matches reports whether statement st applies to c.
func matches(st map[string]any, c Call, ctx map[string]string) (bool, error) {
	for _, k := range []string{"NotPrincipal", "NotAction", "NotResource"} {
		if _, ok := st[k]; ok {
			return false, fmt.Errorf("statement %v: %s is not evaluated", st, k)
		}
	}
	if !principalMatches(st["Principal"], c) || !anyGlob(Strings(st["Action"]), c.Action) || !anyGlob(Strings(st["Resource"]), c.Resource) {
		return false, nil
	}
	cond, _ := st["Condition"].(map[string]any)
	for op, keys := range cond {
		for key, want := range mapping(keys) {
			ok, err := condition(op, Strings(want), ctx, strings.ToLower(key))
			if err != nil || !ok {
				return false, err
			}
		}
	}
	return true, nil
}

// principalMatches reports whether p ("*", {AWS: …} or {Service: …}) names c's principal.
func principalMatches(p any, c Call) bool {
	if p == "*" {
		return true
	}
	kind := "AWS"
	if c.Service {
		kind = "Service"
	}
	names := Strings(get(p, kind))
	return slices.Contains(names, "*") || slices.Contains(names, c.Principal)
}

// condition evaluates one operator on one key against the values wanted.
func condition(op string, want []string, ctx map[string]string, key string) (bool, error) {
	got, present := ctx[key]
	negated := strings.Contains(op, "Not")
	if !present {
		return negated, nil
	}
	var hit bool
	switch strings.Replace(op, "Not", "", 1) {
	case "StringEquals", "ArnEquals", "Bool":
		hit = slices.Contains(want, got)
	case "StringLike", "ArnLike":
		hit = anyGlob(want, got)
	default:
		return false, fmt.Errorf("condition operator %s is not evaluated", op)
	}
	return hit != negated, nil
}

// anyGlob reports whether any of patterns (with * and ?) matches s.
func anyGlob(patterns []string, s string) bool {
	for _, p := range patterns {
		// path.Match's * stops at "/", which IAM's does not: compare with "/" made plain.
		if ok, _ := path.Match(strings.ReplaceAll(p, "/", "\x00"), strings.ReplaceAll(s, "/", "\x00")); ok || p == s {
			return true
		}
	}
	return false
}
