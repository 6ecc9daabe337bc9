package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// stepsOf are options whose steps return what a test says, and note that they ran.
type stepsOf struct {
	invalid, failed error
	ran             *bool
}

func (o stepsOf) validate() error { return o.invalid }

func (o stepsOf) run(context.Context) error {
	*o.ran = true
	return o.failed
}

// A command's steps end in its exit code, what went wrong said in one line: the
// command line (exit 2, with where help is), before anything runs, or the work (exit 1).
func TestStepSaysWhatWentWrongInOneLine(t *testing.T) {
	const help = "run 'ledger x --help' for usage\n"
	cases := []struct {
		name           string
		invalid, fails error
		code           int
		stderr         string
		ran            bool
	}{
		{"done", nil, nil, 0, "", true},
		{"a bad flag", errors.New("--n must be within 1–64, not 65"), errors.New("not run"), 2, "ledger x: --n must be within 1–64, not 65\n" + help, false},
		{"a bad flag seen in the environment", nil, fmt.Errorf("queue: %w", usageErr{errors.New("no endpoint serves it")}), 2, "ledger x: queue: no endpoint serves it\n" + help, true},
		{"a failure", nil, errors.New("cannot reach DynamoDB:\nconnection refused"), 1, "ledger x: cannot reach DynamoDB: connection refused\n", true},
		{"a failure the result says", nil, errReported, 1, "", true},
		{"Ctrl-C", nil, fmt.Errorf("scan: %w", context.Canceled), 1, "ledger x: interrupted\n", true},
	}
	for _, tc := range cases {
		var stdout, stderr bytes.Buffer
		ran := false
		f := newFlags("x", helpText{}, &stdout, &stderr)
		code := f.step(context.Background(), stepsOf{invalid: tc.invalid, failed: tc.fails, ran: &ran})
		if code != tc.code || stderr.String() != tc.stderr || ran != tc.ran || stdout.Len() != 0 {
			t.Errorf("%s: exit %d, stderr %q, ran %v; want %d, %q, %v", tc.name, code, stderr.String(), ran, tc.code, tc.stderr, tc.ran)
		}
	}
}

// validateCase is a command line, and the start of what validate says of it: "" for
// nothing.
type validateCase struct {
	args []string
	says string
}

// parsedOptions are a command's options with its flags, which parse the command line.
type parsedOptions interface {
	options
	parse(args []string, want int) (code int, ok bool)
}

// testValidate parses each case's flags into a fresh command from newCmd, then checks
// what its validate says: nothing, or one line beginning with says.
func testValidate[C parsedOptions](t *testing.T, newCmd func(stdout, stderr io.Writer) C, cases []validateCase) {
	t.Helper()
	for _, tc := range cases {
		c := newCmd(io.Discard, io.Discard)
		if code, ok := c.parse(tc.args, 0); !ok {
			t.Errorf("%q: parse exited %d", tc.args, code)
			continue
		}
		err := c.validate()
		switch {
		case tc.says == "" && err != nil:
			t.Errorf("%q: validate = %q, want nil", tc.args, err)
		case tc.says != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.says) || strings.Contains(err.Error(), "\n")):
			t.Errorf("%q: validate = %v, want one line beginning %q", tc.args, err, tc.says)
		}
	}
}
