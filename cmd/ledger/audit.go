package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/ledger-dev/ledger/internal/awsconf"
	"github.com/ledger-dev/ledger/internal/store"
)

var auditCommand = command{
	name:    "audit",
	summary: "check every account's invariants; exit 1 and name each broken account",
	run:     runAudit,
}

func runAudit(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("audit", "[--endpoint URL] [--table T] [--segments N] [--json]", `
ledger audit --endpoint http://127.0.0.1:5000 --table ledger --json`, stderr)
	endpoint := fs.String("endpoint", "", "DynamoDB endpoint URL (default: AWS, or AWS_ENDPOINT_URL_DYNAMODB)")
	table := fs.String("table", "", "ledger table name (default: $LEDGER_TABLE, else ledger)")
	segments := fs.Int("segments", 4, "parallel scan segments (1–64)")
	asJSON := fs.Bool("json", false, "print the verdict as one JSON document on stdout")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if *segments < 1 || *segments > 64 {
		fmt.Fprintln(stderr, "ledger audit: --segments must be within 1–64")
		return 2
	}
	cfg, ok := envConfig("audit", *table, stderr)
	if !ok {
		return 2
	}
	awsCfg, err := awsconf.Load(ctx, *endpoint)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	report, err := store.Audit(ctx, awsconf.DynamoDB(awsCfg, *endpoint), cfg.Table, store.AuditOptions{Segments: *segments})
	if err != nil {
		fmt.Fprintf(stderr, "ledger audit: %v\n", err)
		return 1
	}
	if *asJSON {
		if err := json.NewEncoder(stdout).Encode(report); err != nil {
			fmt.Fprintf(stderr, "ledger audit: %v\n", err)
			return 1
		}
	}
	for _, b := range report.Broken {
		fmt.Fprintf(stderr, "BROKEN %s: %s\n", b.Cuenta, b.Reason)
	}
	fmt.Fprintf(stderr, "audit of %s: %d accounts, %d applied movements, %d broken\n", cfg.Table, report.Accounts, report.Movements, len(report.Broken))
	if !report.OK {
		return 1
	}
	return 0
}
