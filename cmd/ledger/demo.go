package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ledger-dev/ledger/internal/audit"
	"github.com/ledger-dev/ledger/internal/demo"
	"github.com/ledger-dev/ledger/internal/sim"
	"github.com/ledger-dev/ledger/internal/worker"
)

var demoCommand = command{
	name:    "demo",
	summary: "the product end to end on the embedded DynamoDB: at-least-once delivery, exact balances",
	run:     runDemo,
}

// demoJSON is the document `ledger demo --json` prints: everything the text summary
// shows. Deliveries counts the messages sent; Handled, their deliveries to the consumer,
// every retry and redelivery included.
type demoJSON struct {
	Seed        uint64          `json:"seed"`
	Accounts    int             `json:"accounts"`
	Movements   int             `json:"movements"`
	Deliveries  int             `json:"deliveries"`
	Handled     int             `json:"handled"`
	Outcomes    worker.Outcomes `json:"outcomes"`
	Audit       audit.Report    `json:"audit"`
	Transfers   int             `json:"transfers"`
	Repartos    repartosJSON    `json:"repartos"`
	Reversals   int             `json:"reversals"`
	Refunds     refundsJSON     `json:"refunds"`
	Reversed    reversedJSON    `json:"reversed"`
	Holds       holdsJSON       `json:"holds"`
	Refused     int             `json:"refused"`
	RefusedWhat []string        `json:"refused_what"` // each movement refused by design, in a few words
	Freeze      freezeJSON      `json:"freeze"`
	Balances    []balanceJSON   `json:"balances"`
	ExactlyOnce bool            `json:"exactly_once"`
	Wrong       []string        `json:"wrong,omitempty"` // what the ledger recorded otherwise than the workload
	DurationS   float64         `json:"duration_s"`
}

// balanceJSON is one account's balance as the ledger holds it and as the workload
// says it must be, in decimal text.
type balanceJSON struct {
	Cuenta   string `json:"cuenta"`
	Saldo    string `json:"saldo"`
	Expected string `json:"expected"`
}

// repartosJSON counts the demo's repartos, the accounts they credit (their legs) and
// the parts of the widest.
type repartosJSON struct {
	Count  int `json:"count"`
	Legs   int `json:"legs"`
	Widest int `json:"widest"`
}

// refundsJSON counts the demo's refunds in parts of abonos and cargos, and the
// movements they refunded until nothing was left.
type refundsJSON struct {
	Partial        int `json:"partial"`
	RefundedInFull int `json:"refunded_in_full"`
}

// reversedJSON counts the transfers and repartos the demo reversed whole, and the legs
// their reversals took back from the accounts they credited.
type reversedJSON struct {
	Transfers int `json:"transfers"`
	Repartos  int `json:"repartos"`
	Legs      int `json:"legs"`
}

// holdsJSON counts the demo's holds by what became of them.
type holdsJSON struct {
	Taken          int `json:"taken"`
	Captured       int `json:"captured"`
	PartlyCaptured int `json:"partly_captured"`
	Released       int `json:"released"`
	Expired        int `json:"expired"`
}

// freezeJSON is the demo's freeze: the account ("" for none), for how long it was
// frozen in simulated seconds, and how many of its debits waited meanwhile.
type freezeJSON struct {
	Cuenta       string  `json:"cuenta"`
	FrozenS      float64 `json:"frozen_s"`
	DebitsWaited int     `json:"debits_waited"`
}

// newDemoJSON is s as `ledger demo --json` prints it.
func newDemoJSON(s demo.Summary) demoJSON {
	k := s.Kinds
	balances := make([]balanceJSON, len(s.Balances))
	for i, b := range s.Balances {
		balances[i] = balanceJSON{Cuenta: b.Cuenta, Saldo: b.Saldo.StringFixed(2), Expected: b.Expected.StringFixed(2)}
	}
	return demoJSON{
		Seed: s.Seed, Accounts: s.Accounts, Movements: s.Movements, Deliveries: s.Deliveries, Handled: s.Handled, Outcomes: s.Outcomes, Audit: s.Audit,
		Transfers: k.Transfers, Repartos: repartosJSON{Count: k.Repartos, Legs: k.Partes, Widest: k.MostPartes},
		Reversals: k.Reversals, Refunds: refundsJSON{Partial: k.Refunds, RefundedInFull: k.RefundedInFull},
		Reversed: reversedJSON{Transfers: k.ReversedTransfers, Repartos: k.ReversedRepartos, Legs: k.ReversedTransfers + k.ReversedPartes},
		Holds:    holdsJSON{Taken: k.Holds, Captured: k.Captured, PartlyCaptured: k.PartlyCaptured, Released: k.Released, Expired: k.Lapsed},
		Refused:  len(s.Refused), RefusedWhat: s.Refused,
		Freeze:   freezeJSON{Cuenta: s.Freeze.Cuenta, FrozenS: s.Freeze.Frozen.Seconds(), DebitsWaited: s.Freeze.Waited},
		Balances: balances, ExactlyOnce: s.ExactlyOnce, Wrong: s.Wrong, DurationS: s.Elapsed.Seconds(),
	}
}

// demoHelp is ledger demo's --help.
var demoHelp = helpText{synopsis: "[--accounts N] [--movements N] [--seed S] [--consumers N] [--json]", about: `
Runs the product end to end on the embedded DynamoDB: a seeded workload, delivered at
least once as SQS delivers (duplicates under new message ids, SNS envelopes,
redeliveries, shuffled order), applied in concurrent batches, then audited. It exits 1
unless every movement was applied exactly once. One --seed gives the same movements,
messages and outcomes; how often each is handled varies. Time grows about in
proportion to --movements: 4000 take about 15 s on two cores. --json prints what the
text shows as one document: the seed and sizes, the outcomes, what the movements did,
every account's balance beside the expected one, the audit and the duration.`, example: `
ledger demo --accounts 50 --movements 2000 --seed 7`}

// demoCmd is ledger demo's command line.
type demoCmd struct {
	*flags
	accounts, movements, consumers int
	seed                           uint64
	asJSON                         bool
}

// newDemoCmd declares ledger demo's flags.
func newDemoCmd(stdout, stderr io.Writer) *demoCmd {
	c := &demoCmd{flags: newFlags("demo", demoHelp, stdout, stderr)}
	c.accountsVar(&c.accounts, 20)
	c.movementsVar(&c.movements, 1000)
	c.seedVar(&c.seed)
	c.IntVar(&c.consumers, "consumers", 4, "batches handled concurrently")
	c.jsonVar(&c.asJSON)
	return c
}

// runDemo is ledger demo: it parses the command line, then validates it and runs.
func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newDemoCmd(stdout, stderr)
	return c.execute(ctx, args, 0, c)
}

// validate checks the workload's sizes, then --seed.
func (c *demoCmd) validate() error {
	for _, f := range []struct {
		name   string
		v, max int
	}{{"--accounts", c.accounts, sim.MaxAccounts}, {"--movements", c.movements, demo.MaxMovements}, {"--consumers", c.consumers, demo.MaxConsumers}} {
		if f.v < 1 || f.v > f.max {
			return fmt.Errorf("%s must be within 1–%d, not %d", f.name, f.max, f.v)
		}
	}
	if c.seed == 0 {
		return errors.New("--seed must be at least 1")
	}
	return nil
}

// run runs the demo and prints its summary; a movement not applied exactly once is a
// failure.
func (c *demoCmd) run(ctx context.Context) error {
	s, err := demo.Run(ctx, demo.Options{Accounts: c.accounts, Movements: c.movements, Seed: c.seed, Consumers: c.consumers,
		Progress: c.stderr, Terminal: isTerminal(c.stderr)})
	if err != nil {
		return err
	}
	if c.asJSON {
		if err := json.NewEncoder(c.stdout).Encode(newDemoJSON(s)); err != nil {
			return err
		}
	} else {
		printDemo(c.stdout, s)
	}
	if !s.ExactlyOnce {
		return errReported
	}
	return nil
}

// printDemo writes the demo's summary for people.
func printDemo(w io.Writer, s demo.Summary) {
	o, k := s.Outcomes, s.Kinds
	fmt.Fprintf(w, "%d movements on %d accounts (seed %d), sent as %d messages: duplicates under new message ids,\n", s.Movements, s.Accounts, s.Seed, s.Deliveries)
	fmt.Fprintf(w, "SNS envelopes, redeliveries, shuffled order. The consumer received messages %d times in all,\ncounting every retry and redelivery (this count varies from run to run).\n\n", s.Handled)
	fmt.Fprintf(w, "  applied                %6d", o.Applied)
	if lost := s.Movements - o.Applied; lost > 0 && s.ExactlyOnce { // else Wrong says what became of them
		fmt.Fprintf(w, "   and %d whose answer was lost after the commit: recognised when they came back", lost)
	}
	fmt.Fprintf(w, "\n  duplicate              %6d   recognised, nothing changed\n", o.Duplicate)
	fmt.Fprintf(w, "  conflicting duplicate  %6d   same id, other content: refused, parked\n", o.ConflictingDuplicate)
	fmt.Fprintf(w, "  rejected               %6d\n  failed                 %6d   malformed, or refused by design: parked with the reason, or in the DLQ once out of receives\n\n", o.Rejected, o.Failed)
	printKinds(w, k)
	fmt.Fprintf(w, "  refused by design      %6d", len(s.Refused))
	if len(s.Refused) > 0 {
		fmt.Fprintf(w, "   %s", strings.Join(s.Refused, "; "))
	}
	fmt.Fprintln(w)
	if f := s.Freeze; f.Cuenta != "" {
		fmt.Fprintf(w, "  freeze                 %s frozen for %s of simulated time; debits that waited: %d, applied once unfrozen\n", f.Cuenta, f.Frozen, f.Waited)
	} else {
		fmt.Fprintln(w, "  freeze                 none: the workload's tail has no debit to hold back")
	}
	fmt.Fprintln(w, "\n  cuenta            balance     expected")
	for _, b := range s.Balances[:min(len(s.Balances), 5)] {
		mark := "ok"
		if !b.Saldo.Equal(b.Expected) {
			mark = "WRONG"
		}
		fmt.Fprintf(w, "  %-12s %12s %12s  %s\n", b.Cuenta, b.Saldo.StringFixed(2), b.Expected.StringFixed(2), mark)
	}
	if more := len(s.Balances) - 5; more > 0 {
		fmt.Fprintf(w, "  … and %d more accounts\n", more)
	}
	fmt.Fprintln(w)
	if s.Audit.OK {
		fmt.Fprintf(w, "audit: ok — %d accounts, %d posted movements (a transfer or reparto posts on every account it moves; a hold or release, on none), every invariant holds\n", s.Audit.Accounts, s.Audit.Movements)
	} else {
		var names []string
		for _, b := range s.Audit.Broken {
			names = append(names, b.Cuenta+": "+b.Reason)
		}
		fmt.Fprintf(w, "audit: BROKEN\n  %s\n", strings.Join(names, "\n  "))
	}
	if s.ExactlyOnce {
		fmt.Fprintf(w, "every movement applied exactly once, every refused one refused, every balance exact (%.1fs)\n", s.Elapsed.Seconds())
		return
	}
	fmt.Fprintln(w, "NOT exactly once: see the counts above")
	for _, why := range s.Wrong[:min(len(s.Wrong), 10)] {
		fmt.Fprintf(w, "  %s\n", why)
	}
	if more := len(s.Wrong) - 10; more > 0 {
		fmt.Fprintf(w, "  … and %d more\n", more)
	}
}

// printKinds writes what the demo's movements did, kind by kind.
func printKinds(w io.Writer, k sim.Kinds) {
	fmt.Fprintf(w, "  transfers              %6d   both legs in one transaction\n", k.Transfers)
	fmt.Fprintf(w, "  repartos               %6d   %d legs, up to %d parts: every leg in one transaction\n", k.Repartos, k.Partes, k.MostPartes)
	fmt.Fprintf(w, "  reversals              %6d   each movement reversed at most once\n", k.Reversals)
	fmt.Fprintf(w, "  refunds in parts       %6d   never more than is left; %d movements refunded until nothing was left\n", k.Refunds, k.RefundedInFull)
	fmt.Fprintf(w, "  reversed whole         %6d   %d transfers and %d repartos, every leg paid back in one transaction\n",
		k.ReversedTransfers+k.ReversedRepartos, k.ReversedTransfers, k.ReversedRepartos)
	fmt.Fprintf(w, "  holds                  %6d   %d captured (%d in part), %d released, %d expired on the simulated clock\n",
		k.Holds, k.Captured, k.PartlyCaptured, k.Released, k.Lapsed)
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
