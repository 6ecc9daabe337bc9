package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ledger-dev/ledger/internal/consumer"
	"github.com/ledger-dev/ledger/internal/demo"
	"github.com/ledger-dev/ledger/internal/store"
)

var demoCommand = command{
	name:    "demo",
	summary: "the product end to end on the embedded DynamoDB: at-least-once delivery, exact balances",
	run:     runDemo,
}

// demoJSON is `ledger demo --json`'s document (docs/design.md, "Commands").
type demoJSON struct {
	Accounts   int               `json:"accounts"`
	Movements  int               `json:"movements"`
	Deliveries int               `json:"deliveries"`
	Outcomes   consumer.Outcomes `json:"outcomes"`
	Audit      store.AuditReport `json:"audit"`
}

func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("demo", "[--accounts N] [--movements N] [--seed S] [--consumers N] [--json]", `
ledger demo --accounts 50 --movements 5000 --seed 7`, stdout, stderr)
	accounts := fs.Int("accounts", 20, "accounts in the workload")
	movements := fs.Int("movements", 1000, "movements in the workload (each delivered at least once)")
	seed := fs.Uint64("seed", 1, "seed of the workload and of the delivery schedule (same seed, same run)")
	consumers := fs.Int("consumers", 4, "batches handled concurrently")
	asJSON := fs.Bool("json", false, "print one JSON document on stdout instead of the human summary")
	if code, ok := fs.parse(args, 0); !ok {
		return code
	}
	for name, v := range map[string]int{"--accounts": *accounts, "--movements": *movements, "--consumers": *consumers} {
		if v < 1 {
			return fs.usageError("%s must be at least 1, not %d", name, v)
		}
	}
	if *seed == 0 {
		return fs.usageError("--seed must be at least 1")
	}
	s, err := demo.Run(ctx, demo.Options{Accounts: *accounts, Movements: *movements, Seed: *seed, Consumers: *consumers,
		Progress: stderr, Terminal: isTerminal(stderr)})
	if err != nil {
		return fs.fail(err)
	}
	if *asJSON {
		if err := json.NewEncoder(stdout).Encode(demoJSON{Accounts: s.Accounts, Movements: s.Movements, Deliveries: s.Deliveries, Outcomes: s.Outcomes, Audit: s.Audit}); err != nil {
			return fs.fail(err)
		}
	} else {
		printDemo(stdout, s)
	}
	if !s.ExactlyOnce {
		return 1
	}
	return 0
}

func printDemo(w io.Writer, s demo.Summary) {
	o := s.Outcomes
	fmt.Fprintf(w, "%d movements on %d accounts, sent as %d messages: duplicates under new message ids,\n", s.Movements, s.Accounts, s.Deliveries)
	fmt.Fprintf(w, "SNS envelopes, redeliveries, shuffled order; %d handled in concurrent batches.\n\n", s.Handled)
	fmt.Fprintf(w, "  applied                %6d\n  duplicate              %6d   recognised, nothing changed\n", o.Applied, o.Duplicate)
	fmt.Fprintf(w, "  conflicting duplicate  %6d   same id, other content: refused, parked\n", o.ConflictingDuplicate)
	fmt.Fprintf(w, "  rejected               %6d\n  failed                 %6d   malformed messages, parked with the reason\n\n", o.Rejected, o.Failed)
	fmt.Fprintln(w, "  cuenta            balance     expected")
	for i, b := range s.Balances {
		if i == 5 {
			fmt.Fprintf(w, "  … and %d more accounts\n", len(s.Balances)-5)
			break
		}
		mark := "ok"
		if !b.Saldo.Equal(b.Expected) {
			mark = "WRONG"
		}
		fmt.Fprintf(w, "  %-12s %12s %12s  %s\n", b.Cuenta, b.Saldo.StringFixed(2), b.Expected.StringFixed(2), mark)
	}
	fmt.Fprintln(w)
	if s.Audit.OK {
		fmt.Fprintf(w, "audit: ok — %d accounts, %d applied movements, every invariant holds\n", s.Audit.Accounts, s.Audit.Movements)
	} else {
		var names []string
		for _, b := range s.Audit.Broken {
			names = append(names, b.Cuenta+": "+b.Reason)
		}
		fmt.Fprintf(w, "audit: BROKEN\n  %s\n", strings.Join(names, "\n  "))
	}
	if s.ExactlyOnce {
		fmt.Fprintf(w, "every movement applied exactly once, every balance exact (%.1fs)\n", s.Elapsed.Seconds())
	} else {
		fmt.Fprintln(w, "NOT exactly once: see the counts above")
	}
}

// isTerminal reports whether w is a character device (a terminal), where a redrawn
// progress bar makes sense.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
