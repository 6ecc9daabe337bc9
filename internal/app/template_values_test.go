package app_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Number reads a numeric template value: a YAML number, or a string holding one (a Ref
// to a Number parameter is a string in CloudFormation).
func Number(v any) (float64, error) {
	switch n := v.(type) {
	case int:
		return float64(n), nil
	case float64:
		return n, nil
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(n), 64)
		if err != nil {
			return 0, fmt.Errorf("%q is not a number", n)
		}
		return f, nil
	}
	return 0, fmt.Errorf("%v (%T) is not a number", v, v)
}

// Strings reads a value that CloudFormation accepts as one string or a list of them,
// such as a policy statement's Action. Elements that are not strings (say, a Ref) are
// given in Symbol form.
func Strings(v any) []string {
	switch s := v.(type) {
	case nil:
		return nil
	case []any:
		out := make([]string, 0, len(s))
		for _, x := range s {
			out = append(out, Symbol(x))
		}
		return out
	}
	return []string{Symbol(v)}
}

// Symbol renders a value as text to compare and to print: a string as itself, a Ref or
// Fn::GetAtt or a one-string Fn::Sub in the short form a template author writes
// ("!Ref DeadLetterQueue", "!GetAtt LedgerTable.Arn", "!Sub ${LedgerTable.Arn}/index/x"),
// anything else as JSON.
func Symbol(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case map[string]any:
		if len(x) == 1 {
			if ref, ok := x["Ref"].(string); ok {
				return "!Ref " + ref
			}
			if ga, ok := x["Fn::GetAtt"].([]any); ok && len(ga) == 2 {
				return fmt.Sprintf("!GetAtt %v.%v", ga[0], ga[1])
			}
			if sub, ok := x["Fn::Sub"].(string); ok {
				return "!Sub " + sub
			}
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
