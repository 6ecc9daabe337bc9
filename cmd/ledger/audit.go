package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/ledger-dev/ledger/internal/store"
)

var auditCommand = command{
	name:    "audit",
	summary: "check every account's invariants; exit 1 and name each broken account",
	run:     runAudit,
}

// maxAuditSegments bounds --segments; see store.AuditOptions.
const maxAuditSegments = 64

func runAudit(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("audit", helpText{synopsis: "[--endpoint URL] [--table T] [--segments N] [--json]", example: `
ledger audit --endpoint http://127.0.0.1:5000 --table ledger --json`}, stdout, stderr)
	endpoint := fs.String("endpoint", "", "DynamoDB endpoint URL (default: AWS, or AWS_ENDPOINT_URL_DYNAMODB)")
	table := fs.String("table", "", "ledger table name (default: $LEDGER_TABLE, else ledger)")
	segments := fs.Int("segments", 4, "parallel scan segments (1–64)")
	asJSON := fs.Bool("json", false, "print the verdict as one JSON document on stdout")
	if code, ok := fs.parse(args, 0); !ok {
		return code
	}
	if *segments < 1 || *segments > maxAuditSegments {
		return fs.usageError("--segments must be within 1–%d, not %d", maxAuditSegments, *segments)
	}
	cfg, _, db, code := fs.openTable(ctx, *table, *endpoint, checkTable)
	if code != 0 {
		return code
	}
	report, err := store.Audit(ctx, db, cfg.Table, store.AuditOptions{Segments: *segments})
	if err != nil {
		return fs.fail(err)
	}
	if report.Accounts == 0 { // clean, but perhaps not the ledger's table
		fmt.Fprintf(stderr, "ledger audit: table %s holds no ledger account or movement (CUENTA#…); is it the ledger table?\n", cfg.Table)
	}
	if *asJSON {
		if err := json.NewEncoder(stdout).Encode(report); err != nil {
			return fs.fail(err)
		}
	} else {
		printAudit(stdout, cfg.Table, report)
	}
	if !report.OK {
		return 1
	}
	return 0
}

// printAudit writes the verdict for people: a line per broken or unverified account,
// then the counts.
func printAudit(w io.Writer, table string, report store.AuditReport) {
	for _, b := range report.Broken {
		fmt.Fprintf(w, "BROKEN %s: %s\n", b.Cuenta, b.Reason)
	}
	for _, u := range report.Unverified {
		fmt.Fprintf(w, "UNVERIFIED %s: %s\n", u.Cuenta, u.Reason)
	}
	fmt.Fprintf(w, "audit of %s: %d accounts, %d applied movements, %d broken", table, report.Accounts, report.Movements, len(report.Broken))
	if n := len(report.Unverified); n > 0 {
		fmt.Fprintf(w, ", %d unverified (busy while read; audit again)", n)
	}
	fmt.Fprintln(w)
}
