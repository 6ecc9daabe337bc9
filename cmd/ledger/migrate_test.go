package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/ledger-dev/ledger/internal/testenv"
)

func TestMigrateCommandIsIdempotent(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	table := env.Table() + "-cli"
	var out, errOut bytes.Buffer
	for i, want := range []string{"created", "unchanged"} {
		errOut.Reset()
		if code := run(context.Background(), []string{"migrate", "--endpoint", env.Endpoint, "--table", table}, &out, &errOut); code != 0 {
			t.Fatalf("run %d: exit %d: %s", i, code, errOut.String())
		}
		if !strings.Contains(errOut.String(), "0001_ledger") || !strings.Contains(errOut.String(), want) {
			t.Errorf("run %d printed %q, want 0001_ledger %s", i, errOut.String(), want)
		}
	}
	if out.Len() != 0 {
		t.Errorf("human output went to stdout: %q", out.String())
	}
}

func TestUsageErrorsExitTwo(t *testing.T) {
	cases := [][]string{{}, {"nonsense"}, {"migrate", "--no-such-flag"}, {"migrate", "stray"}, {"migrate", "--table", "a b"}}
	for _, args := range cases {
		var out, errOut bytes.Buffer
		if code := run(context.Background(), args, &out, &errOut); code != 2 || errOut.Len() == 0 {
			t.Errorf("ledger %v: exit %d, stderr %q; want 2 and a message", args, code, errOut.String())
		}
	}
}

func TestHelpShowsAnExample(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"migrate", "--help"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(errOut.String(), "Example:") || !strings.Contains(errOut.String(), "--endpoint") {
		t.Errorf("help = %q", errOut.String())
	}
	out.Reset()
	if code := run(context.Background(), []string{"help"}, &out, &errOut); code != 0 || !strings.Contains(out.String(), "migrate") {
		t.Errorf("ledger help: exit %d, %q", code, out.String())
	}
}
