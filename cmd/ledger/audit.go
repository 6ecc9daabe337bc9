package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/ledger-dev/ledger/internal/audit"
)

var auditCommand = command{
	name:    "audit",
	summary: "check every account's invariants; exit 1 and name each broken account",
	run:     runAudit,
}

// maxAuditSegments bounds --segments; see audit.Options.
const maxAuditSegments = 64

// auditHelp is ledger audit's --help.
var auditHelp = helpText{synopsis: "[--endpoint URL] [--table T] [--segments N] [--json]", about: `
Checks every account's invariants on the ledger table, in DynamoDB at --endpoint, and
exits 1 naming each broken account. An account busy while it is read is listed as
unverified: audit again.`, example: `
ledger audit --endpoint http://127.0.0.1:5000 --table ledger --json`}

// auditCmd is ledger audit's command line.
type auditCmd struct {
	*flags
	table    tableFlags
	segments int
	asJSON   bool
}

// newAuditCmd declares ledger audit's flags.
func newAuditCmd(stdout, stderr io.Writer) *auditCmd {
	c := &auditCmd{flags: newFlags("audit", auditHelp, stdout, stderr)}
	c.table.declare(c.flags)
	c.IntVar(&c.segments, "segments", 4, "parallel scan segments (1–64)")
	c.jsonVar(&c.asJSON)
	return c
}

// runAudit is ledger audit: it parses the command line, then validates it and runs.
func runAudit(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newAuditCmd(stdout, stderr)
	return c.execute(ctx, args, 0, c)
}

// validate checks --segments, then where the table is.
func (c *auditCmd) validate() error {
	if c.segments < 1 || c.segments > maxAuditSegments {
		return fmt.Errorf("--segments must be within 1–%d, not %d", maxAuditSegments, c.segments)
	}
	return c.table.validate()
}

// run audits the table and prints the verdict; broken accounts are a failure.
func (c *auditCmd) run(ctx context.Context) error {
	cfg, _, db, err := c.table.open(ctx, checkTable)
	if err != nil {
		return err
	}
	report, err := audit.Run(ctx, db, cfg.Table, audit.Options{Segments: c.segments})
	if err != nil {
		return err
	}
	if report.Accounts == 0 { // clean, but perhaps not the ledger's table
		fmt.Fprintf(c.stderr, "ledger audit: table %s holds no ledger account or movement (CUENTA#…); is it the ledger table?\n", cfg.Table)
	}
	if c.asJSON {
		if err := json.NewEncoder(c.stdout).Encode(report); err != nil {
			return err
		}
	} else {
		printAudit(c.stdout, cfg.Table, report)
	}
	if !report.OK {
		return errReported
	}
	return nil
}

// printAudit writes the verdict for people: a line per broken or unverified account, a
// line per sender of the records, then the counts.
func printAudit(w io.Writer, table string, report audit.Report) {
	for _, b := range report.Broken {
		fmt.Fprintf(w, "BROKEN %s: %s\n", b.Cuenta, b.Reason)
	}
	for _, u := range report.Unverified {
		fmt.Fprintf(w, "UNVERIFIED %s: %s\n", u.Cuenta, u.Reason)
	}
	for _, r := range report.Remitentes {
		fmt.Fprintf(w, "FROM %s: %d records\n", sender(r), r.Registros)
	}
	fmt.Fprintf(w, "audit of %s: %d accounts, %d applied movements, %d broken", table, report.Accounts, report.Movements, len(report.Broken))
	if n := len(report.Unverified); n > 0 {
		fmt.Fprintf(w, ", %d unverified (busy while read; audit again)", n)
	}
	fmt.Fprintln(w)
}

// sender names who sent a count's records, for people.
func sender(r audit.Remitente) string {
	s := cmp.Or(r.Remitente, "(no sender stated)")
	if r.Via != "" {
		s += " via " + r.Via
	}
	return s
}
