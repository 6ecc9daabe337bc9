package app_test

import (
	"fmt"
	"maps"
	"slices"
	"sort"
)

// Grant is one action a role may perform on one resource. Resource is in Symbol form
// ("!GetAtt LedgerTable.Arn"), so it can be compared with the template's own resources.
type Grant struct {
	Action   string
	Resource string
}

// String renders g as "action on resource".
func (g Grant) String() string { return g.Action + " on " + g.Resource }

// Grants returns every action the role with logical id role may perform under e, sorted
// and without repeats: the statements of its inline Policies and of each
// AWS::IAM::RolePolicy, AWS::IAM::Policy and AWS::IAM::ManagedPolicy that names it.
//
// It reads only what it can account for completely. Managed policy ARNs attached to the
// role (their statements are not in the template), and statements with Deny, NotAction,
// NotResource, NotPrincipal or Condition are errors, so that no permission a check
// should see is skipped unread.
func (e *Env) Grants(role string) ([]Grant, error) {
	res, err := e.Resources()
	if err != nil {
		return nil, err
	}
	r, ok := res[role]
	if !ok || r.Type != "AWS::IAM::Role" {
		return nil, fmt.Errorf("stack: %s is not an AWS::IAM::Role under these parameters", role)
	}
	if arns := Strings(r.Properties["ManagedPolicyArns"]); len(arns) > 0 {
		return nil, fmt.Errorf("stack: role %s attaches managed policies %v, whose statements are not in the template", role, arns)
	}
	docs := map[string]any{}
	for i, p := range list(r.Properties["Policies"]) {
		docs[fmt.Sprintf("%s.Policies[%d]", role, i)] = mapping(p)["PolicyDocument"]
	}
	self := Symbol(map[string]any{"Ref": role})
	for id, other := range res {
		switch other.Type {
		case "AWS::IAM::RolePolicy":
			if Symbol(other.Properties["RoleName"]) == self {
				docs[id] = other.Properties["PolicyDocument"]
			}
		case "AWS::IAM::Policy", "AWS::IAM::ManagedPolicy":
			if slices.Contains(Strings(other.Properties["Roles"]), self) {
				docs[id] = other.Properties["PolicyDocument"]
			}
		}
	}
	seen := map[Grant]bool{}
	for _, where := range slices.Sorted(maps.Keys(docs)) {
		for i, st := range list(mapping(docs[where])["Statement"]) {
			gs, err := statementGrants(mapping(st))
			if err != nil {
				return nil, fmt.Errorf("stack: %s statement %d: %w", where, i, err)
			}
			for _, g := range gs {
				seen[g] = true
			}
		}
	}
	out := slices.Collect(maps.Keys(seen))
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out, nil
}

func statementGrants(st map[string]any) ([]Grant, error) {
	for _, key := range []string{"NotAction", "NotResource", "NotPrincipal", "Condition"} {
		if _, ok := st[key]; ok {
			return nil, fmt.Errorf("%s is not supported", key)
		}
	}
	if st["Effect"] != "Allow" {
		return nil, fmt.Errorf("effect %v: only Allow is supported", st["Effect"])
	}
	actions, resources := Strings(st["Action"]), Strings(st["Resource"])
	if len(actions) == 0 || len(resources) == 0 {
		return nil, fmt.Errorf("no Action or no Resource")
	}
	var out []Grant
	for _, a := range actions {
		for _, r := range resources {
			out = append(out, Grant{Action: a, Resource: r})
		}
	}
	return out, nil
}

// list is v as a list: itself, or a one-element list for a single value, or nil.
func list(v any) []any {
	switch l := v.(type) {
	case nil:
		return nil
	case []any:
		return l
	}
	return []any{v}
}
