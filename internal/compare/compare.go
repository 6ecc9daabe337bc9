// Package compare is `ledger compare`: it runs both strategies through the same
// consumer, seeded workload, in-process faults and simulated time, and measures from the
// run what each does to the money and what it costs.
package compare

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// Options configure a comparison; zero values pick the defaults in brackets, if any.
type Options struct {
	Scenarios      []string                         // [all, in Names() order]
	Seed           uint64                           // workload, delivery schedule, faults and crash points
	RTT            time.Duration                    // every DynamoDB call takes at least this long; in the bench, its network round trip
	ServiceTime    time.Duration                    // the bench's DynamoDB time per call, beside RTT
	Movements      int                              // movements per scenario, at least 1
	Accounts       int                              // accounts per scenario, hot-account excepted, at least 1
	Endpoint       string                           // DynamoDB endpoint, each run on tables of its own [a fresh embedded store per run]
	Bench          bool                             // add the throughput benchmark
	BenchMovements int                              // movements per benchmark run, at least MinBenchMovements with Bench
	Progress       func(format string, args ...any) // receives a line per run [nothing]
}

// Result is one strategy under one scenario (docs/compare.md, `compare --json`). A
// transfer is lost or double applied when one of its legs is. Costs are per movement;
// P50 and P99 are the consumer's time to apply one, at the run's RTT.
type Result struct {
	Scenario      string   `json:"scenario"`
	Strategy      Strategy `json:"strategy"`
	Movements     int      `json:"movements"`
	DoubleApplied int      `json:"double_applied"` // movements whose effect landed more than once
	Lost          int      `json:"lost"`           // movements never applied
	Stuck         int      `json:"stuck"`          // deliveries refused while an in-progress reservation held the movement
	Parked        int      `json:"parked"`         // deliveries parked as permanent failures: the scenarios send none that should be
	BalanceErrors int      `json:"balance_errors"` // accounts whose final balance is not the workload's
	// MoneyCreated is the final balances less the credits and debits from outside:
	// negative when money was destroyed.
	MoneyCreated     decimal.Decimal `json:"money_created"`
	CallsPerMovement float64         `json:"calls_per_movement"`
	WCUPerMovement   float64         `json:"wcu_per_movement"`
	RCUPerMovement   float64         `json:"rcu_per_movement"`
	P50ms            float64         `json:"p50_ms"`
	P99ms            float64         `json:"p99_ms"`

	DeadLetters  map[string]int `json:"-"` // messages moved to the DLQ, by why they last failed
	ParkedWhy    map[string]int `json:"-"` // Parked, by outcome
	MaxItemBytes int            `json:"-"` // the largest item stored at the end
}

// Correct reports whether the money came out right.
func (r Result) Correct() bool {
	return r.DoubleApplied == 0 && r.Lost == 0 && r.BalanceErrors == 0 && r.MoneyCreated.IsZero()
}

// Verdict sums up a Result for people.
type Verdict string

// The verdicts, from best to worst.
const (
	ExactlyOnce   Verdict = "exactly once"
	Delayed       Verdict = "exactly once, delayed"
	ParkedInError Verdict = "parked in error"
	WrongMoney    Verdict = "wrong money"
)

// Verdict is r's verdict.
func (r Result) Verdict() Verdict {
	switch {
	case !r.Correct():
		return WrongMoney
	case r.Parked > 0:
		return ParkedInError
	case r.Stuck > 0:
		return Delayed
	}
	return ExactlyOnce
}

// BenchResult is one strategy on one benchmark case (docs/compare.md, `compare --bench`).
// ThroughputPerS is on the simulated clock (Options.RTT and ServiceTime per call);
// StoreMsPerCall is the store's own wall time per call, in none of the other figures.
// RetriedShare is the share of movements one of whose writes was retried because
// another writer's got in first; TransfersRetried counts the transfers among them.
type BenchResult struct {
	Case             string   `json:"case"`
	Strategy         Strategy `json:"strategy"`
	Consumers        int      `json:"consumers"`
	Queue            string   `json:"queue"` // standard or fifo
	Movements        int      `json:"movements"`
	CallsPerMovement float64  `json:"calls_per_movement"`
	WCUPerMovement   float64  `json:"wcu_per_movement"`
	RetriedShare     float64  `json:"retried_share"`
	Transfers        int      `json:"transfers"`
	TransfersRetried int      `json:"transfers_retried"`
	ThroughputPerS   float64  `json:"throughput_per_s"`
	StoreMsPerCall   float64  `json:"store_ms_per_call"`
}

// Report is a whole comparison: the `compare --json` document (docs/compare.md) and more.
type Report struct {
	RTTms     float64       `json:"rtt_ms"`
	ServiceMs float64       `json:"service_ms"`
	Results   []Result      `json:"results"`
	Bench     []BenchResult `json:"bench,omitempty"`
	Seed      uint64        `json:"-"`
	Backend   string        `json:"-"`
	Movements int           `json:"-"`
	Accounts  int           `json:"-"`
}

// Names lists the scenarios in report order.
func Names() []string {
	names := make([]string, len(scenarios))
	for i, s := range scenarios {
		names[i] = s.name
	}
	return names
}

// Describe says what a scenario does and exposes ("" for no scenario).
func Describe(name string) string {
	s, _ := scenarioNamed(name)
	return s.what
}

func (o Options) withDefaults() (Options, error) {
	for _, n := range o.Scenarios {
		if _, ok := scenarioNamed(n); !ok {
			return o, fmt.Errorf("compare: unknown scenario %q: want some of %s", n, strings.Join(Names(), ","))
		}
	}
	if len(o.Scenarios) > 0 { // each once, in report order
		o.Scenarios = slices.DeleteFunc(Names(), func(n string) bool { return !slices.Contains(o.Scenarios, n) })
	} else {
		o.Scenarios = Names()
	}
	if o.Progress == nil {
		o.Progress = func(string, ...any) {}
	}
	return o, nil
}
