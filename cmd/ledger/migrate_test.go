package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/ledger-dev/ledger/internal/config"
	"github.com/ledger-dev/ledger/internal/testenv"
	"github.com/ledger-dev/ledger/migrations"
)

func TestMigrateCommandIsIdempotent(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	table := env.Table() + "-cli"
	var out, errOut bytes.Buffer
	for i, want := range []string{"created", "unchanged"} {
		out.Reset()
		if code := run(context.Background(), []string{"migrate", "--endpoint", env.Endpoint, "--table", table}, &out, &errOut); code != 0 {
			t.Fatalf("run %d: exit %d: %s", i, code, errOut.String())
		}
		if !strings.Contains(out.String(), "0001_ledger") || !strings.Contains(out.String(), want) {
			t.Errorf("run %d printed %q, want 0001_ledger %s", i, out.String(), want)
		}
	}
	if errOut.Len() != 0 {
		t.Errorf("stderr = %q, want the result on stdout alone", errOut.String())
	}
}

// A --wait that runs out blames itself, in one line, not the endpoint it reached.
func TestMigrateSaysItsWaitRanOut(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"migrate", "--endpoint", env.Endpoint, "--table", env.Table() + "-late", "--wait", "1ns"}, &out, &errOut)
	if code != 1 || !strings.HasPrefix(errOut.String(), "ledger migrate: gave up after --wait 1ns: ") || strings.Count(errOut.String(), "\n") != 1 {
		t.Errorf("exit %d, stderr %q; want 1 and one line saying --wait ran out", code, errOut.String())
	}
}

// A usage error names the one thing wrong, in one line, then says where help is; it
// exits 2 and prints nothing on stdout.
func TestUsageErrorsNameTheOneThingWrong(t *testing.T) {
	cases := []struct {
		args []string
		says string
	}{
		{nil, "give a command"},
		{[]string{"nonsense"}, `unknown command "nonsense"`},
		{[]string{"migrate", "--no-such-flag"}, "flag provided but not defined: -no-such-flag"},
		{[]string{"migrate", "stray"}, `unexpected argument "stray"`},
		{[]string{"migrate", "--table", "a b"}, "--table: table name"},
		{[]string{"demo", "--movements", "0"}, "--movements must be within 1–10000, not 0"},
		{[]string{"send", "--queue-url", "q", "--generate", "3", "--duplicates", "11"}, "--duplicates must be within 0–10"},
		{[]string{"send", "--queue-url", "q", "--from", "."}, "--from: . is a directory"},
		{[]string{"up", "--from", "no-such-file.jsonl"}, "--from: stat no-such-file.jsonl"},
		{[]string{"up", "--addr", "bogus"}, "--addr: address bogus: missing port in address"},
		{[]string{"up", "--endpoint", "::not a url"}, "--endpoint: awsconf: endpoint"},
		{[]string{"compare", "--html", "/no/such/dir/r.html"}, "--html: open /no/such/dir/r.html: no such file or directory"},
		{[]string{"compare", "--endpoint", "::not a url"}, `--endpoint: awsconf: endpoint "::not a url": want a URL`},
		{[]string{"compare", "--bench-movements", "0"}, "--bench-movements must be within 11–1000000, not 0"},
		{[]string{"compare", "--movements", "2"}, "--movements must be at least 3 for crash-between-legs, not 2"},
		{[]string{"compare", "--movements", "2", "--scenarios", "duplicates,crash-between-legs"}, "--movements must be at least 3"},
		{[]string{"cuenta"}, "give the account"},
		{[]string{"cuenta", "ES76", "--limite", "-5"}, "--limite must be a decimal ≥ 0"},
		{[]string{"cuenta", "ES76", "--bloquear", "--desbloquear"}, "not both"},
		{[]string{"cuenta", "ES76", "--json", "stray"}, `unexpected argument "stray"`},
		{[]string{"cuenta", "--json", "ES76", "stray"}, `unexpected argument "stray"`},
		{[]string{"cuenta", "--json", "ES76", "--limite", "x"}, "--limite must be a decimal"},
		{[]string{"consume", "--queue-url", "movimientos"}, `--queue-url: "movimientos" is not a queue URL`},
		{[]string{"consume", "--queue-url", "http://127.0.0.1:1/q", "--retry-delay", "0s"}, "--retry-delay must be within 1s–11h0m0s, not 0s"},
		{[]string{"consume", "--queue-url", "http://127.0.0.1:1/q", "--dlq-url", "movimientos-dlq"}, `--dlq-url: "movimientos-dlq" is not a queue URL`},
		{[]string{"up", "--queue-url", "movimientos"}, `--queue-url: "movimientos" is not a queue URL`},
		{[]string{"up", "--queue-url", "http://127.0.0.1:1/q", "--dlq-url", "movimientos-dlq"}, `--dlq-url: "movimientos-dlq" is not a queue URL`},
		{[]string{"up", "--dlq-url", "http://127.0.0.1:1/q-dlq"}, "--dlq-url needs --queue-url"},
		{[]string{"send", "--queue-url", "q", "--from", "x", "--duplicates", "0.2"}, "--duplicates"},
		{[]string{"send", "--queue-url", "q", "--generate", "5", "--duplicates", "NaN"}, "--duplicates must be within 0–10, not NaN"},
		{[]string{"send", "--queue-url", "http://127.0.0.1:1/q", "--generate", "1000001"}, "--generate must be within 1–1000000"},
		{[]string{"send", "--queue-url", "http://127.0.0.1:1/q", "--generate", "0"}, "--generate must be within 1–1000000, not 0"},
		{[]string{"send", "--queue-url", "http://127.0.0.1:1/q", "--from", "x", "--generate", "0"}, "give exactly one of --from and --generate"},
		{[]string{"send", "--queue-url", "movimientos", "--generate", "5"}, `--queue-url: "movimientos" is not a queue URL`},
		{[]string{"send", "--topic-arn", "movimientos", "--generate", "5"}, `--topic-arn: "movimientos" is not an SNS topic ARN`},
		{[]string{"demo", "--movements", "10001"}, "--movements must be within 1–10000, not 10001"},
		{[]string{"demo", "--consumers", "65"}, "--consumers must be within 1–64, not 65"},
		{[]string{"consume", "--queue-url", "http://127.0.0.1:1/q", "--pollers", "65"}, "--pollers must be within 1–64, not 65"},
		{[]string{"audit", "--segments", "65"}, "--segments must be within 1–64, not 65"},
		{[]string{"compare", "--seed", "0"}, "--seed must be at least 1"},
		{[]string{"send", "--queue-url", "http://127.0.0.1:1/q", "--generate", "5", "--duplicates", "10.01"}, "--duplicates must be within 0–10, not 10.01"},
		{[]string{"send", "--queue-url", "http://127.0.0.1:1/q", "--from", "x", "--seed", "9"}, "--accounts and --seed shape a generated workload"},
		{[]string{"up", "--sqs-endpoint", "http://127.0.0.1:1"}, "--sqs-endpoint needs --queue-url"},
		{[]string{"cuenta", "ES76", "--limite="}, `--limite must be a decimal ≥ 0 in plain notation such as 500.00, not ""`},
		{[]string{"compare", "--accounts", "100001"}, "--accounts must be within 1–100000"},
		{[]string{"cuenta", "ES76", "--limite", "1e3"}, "--limite must be a decimal ≥ 0 in plain notation"},
		{[]string{"serve", "--addr", "nonsense"}, "--addr: address nonsense: missing port in address"},
		{[]string{"up", "--addr", "127.0.0.1:99999"}, `--addr: port "99999": want a number within 0–65535`},
		{[]string{"consume", "--queue-url", "http://127.0.0.1:1/q", "--sqs-endpoint", "notaurl"}, "--sqs-endpoint: awsconf: endpoint"},
	}
	for _, tc := range cases {
		var out, errOut bytes.Buffer
		code := run(context.Background(), tc.args, &out, &errOut)
		lines := strings.Split(strings.TrimSpace(errOut.String()), "\n")
		if code != 2 || !strings.Contains(lines[0], tc.says) || len(lines) > 2 || out.Len() != 0 {
			t.Errorf("ledger %v: exit %d, stderr %q; want 2 and one line saying %q", tc.args, code, errOut.String(), tc.says)
		}
	}
}

// The largest values the usage errors allow are allowed: these fail on the endpoint
// (exit 1), not on the command line.
func TestFlagLimitsAreInclusive(t *testing.T) {
	for _, args := range [][]string{
		{"audit", "--segments", "64", "--endpoint", "http://127.0.0.1:1"},
		{"consume", "--queue-url", "http://127.0.0.1:1/q", "--pollers", "64", "--endpoint", "http://127.0.0.1:1"},
		{"send", "--queue-url", "http://127.0.0.1:1/q", "--generate", "5", "--duplicates", "10", "--endpoint", "http://127.0.0.1:1"},
	} {
		var out, errOut bytes.Buffer
		if code := run(context.Background(), args, &out, &errOut); code != 1 {
			t.Errorf("ledger %v: exit %d, stderr %q; want 1: the endpoint fails, not the flags", args, code, errOut.String())
		}
	}
}

// An AWS environment without a region or credentials is no usage error: the command
// line is right. It fails (exit 1) in one line that says what to set, offering no help.
// A command given no endpoint also says how to reach a local stack instead: that is
// what a user following the local tour left out.
func TestAMissingAWSAccountIsAFailure(t *testing.T) {
	testenv.NoAWSAccount(t)
	for _, tc := range []struct {
		args       []string
		noEndpoint bool
	}{
		{[]string{"audit"}, true},
		{[]string{"send", "--queue-url", "https://sqs.eu-west-1.amazonaws.com/1/q", "--generate", "1"}, true},
		{[]string{"up", "--addr", "127.0.0.1:0", "--endpoint", "https://dynamodb.eu-west-1.amazonaws.com"}, false},
	} {
		var out, errOut bytes.Buffer
		code := run(context.Background(), tc.args, &out, &errOut)
		if code != 1 || strings.Count(errOut.String(), "\n") != 1 || !strings.Contains(errOut.String(), "no AWS region: set AWS_REGION") ||
			strings.Contains(errOut.String(), "give --endpoint") != tc.noEndpoint {
			t.Errorf("ledger %v: exit %d, stderr %q; want 1 and one line naming AWS_REGION (and --endpoint: %v)", tc.args, code, errOut.String(), tc.noEndpoint)
		}
	}
	t.Setenv("AWS_REGION", "eu-west-1")
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"cuenta", "ES76"}, &out, &errOut); code != 1 ||
		!strings.Contains(errOut.String(), "no AWS credentials found") || !strings.Contains(errOut.String(), "give --endpoint") {
		t.Errorf("ledger cuenta without credentials: exit %d, stderr %q; want 1, naming credentials and --endpoint", code, errOut.String())
	}
}

// A queue on this machine with no endpoint serving it would be called in AWS, whose
// error names an AWS host: the command line is wrong, and says what it lacks. An
// endpoint the SDK's configuration names for SQS serves it as well as a flag.
func TestALocalQueueNeedsItsEndpoint(t *testing.T) {
	testenv.NoAWSAccount(t)
	for name, v := range map[string]string{"AWS_REGION": "eu-west-1", "AWS_ACCESS_KEY_ID": "AKIAEXAMPLE", "AWS_SECRET_ACCESS_KEY": "s"} {
		t.Setenv(name, v) // an AWS account: what is missing is only the endpoint
	}
	local := "http://127.0.0.1:1/123456789012/movimientos"
	for _, args := range [][]string{
		{"consume", "--queue-url", local},
		{"up", "--addr", "127.0.0.1:0", "--queue-url", local},
		{"send", "--queue-url", local, "--generate", "1"},
	} {
		var out, errOut bytes.Buffer
		if code := run(context.Background(), args, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "--queue-url "+local+" is on this machine") {
			t.Errorf("ledger %v: exit %d, stderr %q; want 2, naming the local queue", args, code, errOut.String())
		}
		// Given the endpoint, the command goes on (and fails on it: nothing listens there).
		errOut.Reset()
		if code := run(context.Background(), append(args, "--endpoint", "http://127.0.0.1:1"), &out, &errOut); code != 1 || strings.Contains(errOut.String(), "is on this machine") {
			t.Errorf("ledger %v --endpoint: exit %d, stderr %q; want 1 from the endpoint", args, code, errOut.String())
		}
	}
	t.Setenv("AWS_ENDPOINT_URL_SQS", "http://127.0.0.1:1")
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"up", "--addr", "127.0.0.1:0", "--queue-url", local}, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "cannot reach SQS") {
		t.Errorf("ledger up with AWS_ENDPOINT_URL_SQS: exit %d, stderr %q; want 1 from that endpoint", code, errOut.String())
	}
}

// A bad LEDGER_* variable is a failure of the environment, like a missing region: one
// line naming it, exit 1, and no offer of --help, which does not list them.
func TestABadLedgerVariableIsAFailure(t *testing.T) {
	t.Setenv("LEDGER_CONCURRENCY", "0")
	for _, args := range [][]string{{"audit", "--endpoint", "http://127.0.0.1:1"}, {"up", "--addr", "127.0.0.1:0"}} {
		var out, errOut bytes.Buffer
		code := run(context.Background(), args, &out, &errOut)
		if code != 1 || strings.Count(errOut.String(), "\n") != 1 || !strings.Contains(errOut.String(), "LEDGER_CONCURRENCY") {
			t.Errorf("ledger %v: exit %d, stderr %q; want 1 and one line naming LEDGER_CONCURRENCY", args, code, errOut.String())
		}
	}
	// The command line is checked first: its mistake is the one named, as a usage error.
	for _, args := range [][]string{{"audit", "--endpoint", "ftp://x"}, {"audit", "--table", "a b"}} {
		var out, errOut bytes.Buffer
		if code := run(context.Background(), args, &out, &errOut); code != 2 || strings.Contains(errOut.String(), "LEDGER_CONCURRENCY") {
			t.Errorf("ledger %v: exit %d, stderr %q; want 2 naming the flag", args, code, errOut.String())
		}
	}
}

func TestHelpShowsAnExample(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"migrate", "--help"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(out.String(), "Example:") || !strings.Contains(out.String(), "--endpoint") || errOut.Len() != 0 {
		t.Errorf("help = %q on stdout, %q on stderr; want it all on stdout", out.String(), errOut.String())
	}
	out.Reset()
	if code := run(context.Background(), []string{"help"}, &out, &errOut); code != 0 || !strings.Contains(out.String(), "migrate") {
		t.Errorf("ledger help: exit %d, %q", code, out.String())
	}
	for _, c := range commands() {
		out.Reset()
		if code := run(context.Background(), []string{c.name, "--help"}, &out, &errOut); code != 0 || !strings.Contains(out.String(), "Usage: ledger "+c.name) {
			t.Errorf("ledger %s --help: exit %d, stdout %q", c.name, code, out.String())
		}
	}
	out.Reset()
	if code := run(context.Background(), []string{"--version"}, &out, &errOut); code != 0 || !strings.HasPrefix(out.String(), "ledger ") {
		t.Errorf("ledger --version: exit %d, %q", code, out.String())
	}
}

// validate names the first thing wrong: --wait, then --endpoint, then --table.
func TestMigrateValidate(t *testing.T) {
	testValidate(t, newMigrateCmd, []validateCase{
		{nil, ""},
		{[]string{"--wait", "1ns", "--endpoint", "http://127.0.0.1:1", "--table", "ledger"}, ""},
		{[]string{"--wait", "0s", "--table", "ab"}, "--wait must be positive, not 0s"},
		{[]string{"--wait", "-1m"}, "--wait must be positive, not -1m0s"},
		{[]string{"--endpoint", "127.0.0.1:8000"}, `--endpoint: awsconf: endpoint "127.0.0.1:8000"`},
		{[]string{"--table", "a/b"}, `--table: table name "a/b"`},
	})
}

func TestTablesMapEveryMigratedTable(t *testing.T) {
	c, err := config.FromEnv(func(k string) string { return map[string]string{config.EnvTable: "prod-ledger"}[k] })
	if err != nil {
		t.Fatal(err)
	}
	got := tables(c)
	if got["ledger"] != "prod-ledger" {
		t.Errorf("tables = %v", got)
	}
	all, err := migrations.All()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range all {
		if got[m.Table] == "" {
			t.Errorf("migration %s creates table %q, which the configuration does not name", m.Name, m.Table)
		}
	}
}
