package app_test

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
)

// Grant is one action a role may perform on one resource. Resource is in Symbol form
// ("!GetAtt LedgerTable.Arn"), so it can be compared with the template's own resources.
// LeadingKeys is the statement's dynamodb:LeadingKeys condition, its patterns sorted and
// joined by commas ("CUENTA#*"), or "" for a grant without a condition.
type Grant struct {
	Action      string
	Resource    string
	LeadingKeys string
}

// String renders g as "action on resource", and " for keys patterns" when conditioned.
func (g Grant) String() string {
	s := g.Action + " on " + g.Resource
	if g.LeadingKeys != "" {
		s += " for keys " + g.LeadingKeys
	}
	return s
}

// keyedActions are the DynamoDB actions on items of the base table or an index, which
// IAM authorises with the partition key values they name in dynamodb:LeadingKeys. A
// grant of one of them must be conditioned on the keys the code uses, so a role can
// touch only its own kind of item. Scan, DescribeTable and the like name no key: under
// ForAllValues an absent key matches, so a LeadingKeys condition on them would allow
// everything while seeming to restrict it.
var keyedActions = map[string]bool{
	"dynamodb:GetItem":            true,
	"dynamodb:PutItem":            true,
	"dynamodb:UpdateItem":         true,
	"dynamodb:DeleteItem":         true,
	"dynamodb:ConditionCheckItem": true,
	"dynamodb:Query":              true,
	"dynamodb:BatchGetItem":       true,
	"dynamodb:BatchWriteItem":     true,
}

// leadingKeysCondition is the one condition Grants reads.
const leadingKeysCondition = "ForAllValues:StringLike"

// Grants returns every action the role with logical id role may perform under e, sorted
// and without repeats: the statements of its inline Policies and of each
// AWS::IAM::RolePolicy, AWS::IAM::Policy and AWS::IAM::ManagedPolicy that names it.
//
// It reads only what it can account for completely. Managed policy ARNs attached to the
// role (their statements are not in the template), and statements with Deny, NotAction,
// NotResource, NotPrincipal, a wildcard DynamoDB action or any Condition but
// {"ForAllValues:StringLike": {"dynamodb:LeadingKeys": patterns}} are errors, so that no
// permission a check should see is skipped unread. That condition is required on every
// keyedActions grant and refused on any other.
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
	for _, key := range []string{"NotAction", "NotResource", "NotPrincipal"} {
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
	keys, err := leadingKeys(st["Condition"])
	if err != nil {
		return nil, err
	}
	var out []Grant
	for _, a := range actions {
		switch {
		case strings.HasPrefix(a, "dynamodb:") && strings.ContainsAny(a, "*?"):
			return nil, fmt.Errorf("%s: name each DynamoDB action, not a wildcard", a)
		case keyedActions[a] && keys == "":
			return nil, fmt.Errorf("%s without a dynamodb:LeadingKeys condition (%s): the role could touch any item of the table", a, leadingKeysCondition)
		case !keyedActions[a] && keys != "":
			return nil, fmt.Errorf("%s with a dynamodb:LeadingKeys condition: the action names no partition key, so the condition would not restrict it", a)
		}
		for _, r := range resources {
			out = append(out, Grant{Action: a, Resource: r, LeadingKeys: keys})
		}
	}
	return out, nil
}

// leadingKeys reads a statement's Condition: nothing, or exactly
// {"ForAllValues:StringLike": {"dynamodb:LeadingKeys": pattern or [patterns]}}, whose
// patterns it returns sorted and joined by commas. Any other condition is an error.
func leadingKeys(cond any) (string, error) {
	if cond == nil {
		return "", nil
	}
	ops := mapping(cond)
	keys := mapping(ops[leadingKeysCondition])
	patterns := Strings(keys["dynamodb:LeadingKeys"])
	if len(ops) != 1 || len(keys) != 1 || len(patterns) == 0 {
		return "", fmt.Errorf("Condition %s is not supported: only %s on dynamodb:LeadingKeys", Symbol(cond), leadingKeysCondition)
	}
	for _, p := range patterns {
		if p == "" || p == "*" {
			return "", fmt.Errorf("dynamodb:LeadingKeys pattern %q restricts nothing", p)
		}
	}
	slices.Sort(patterns)
	return strings.Join(slices.Compact(patterns), ","), nil
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
