package compare

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"text/tabwriter"

	"github.com/ledger-dev/ledger/internal/ledger"
)

// WriteText writes rep as terminal tables no wider than 100 columns (latencies and read
// units are in the JSON report only).
func WriteText(w io.Writer, rep Report) error {
	fmt.Fprintf(w, "ledger compare: seed %d, %d movements per scenario (%d accounts; hot-account 1),\nrtt %g ms per call, on %s\n\n",
		rep.Seed, rep.Movements, rep.Accounts, rep.RTTms, rep.Backend)
	const cols = "%-18s %7v %5v %5v %6v %10v %6v %6v"
	fmt.Fprintf(w, cols+"  %s\n", "scenario", "double", "lost", "stuck", "saldos", "money", "calls", "WCU", "verdict")
	fmt.Fprintf(w, cols+"\n", "  strategy", "applied", "", "", "wrong", "created", "/mov", "/mov")
	for i, r := range rep.Results {
		if i == 0 || rep.Results[i-1].Scenario != r.Scenario {
			fmt.Fprintln(w, r.Scenario)
		}
		fmt.Fprintf(w, cols+"  %s\n", "  "+string(r.Strategy), r.DoubleApplied, r.Lost, r.Stuck, r.BalanceErrors, r.MoneyCreated.StringFixed(2),
			fmt.Sprintf("%.2f", r.CallsPerMovement), fmt.Sprintf("%.2f", r.WCUPerMovement), r.Verdict())
	}
	for _, r := range rep.Results {
		for _, why := range slices.Sorted(maps.Keys(r.DeadLetters)) {
			fmt.Fprintf(w, "  %s/%s: %d message(s) ended in the dead-letter queue after %d receives\n    (last: %s)\n", r.Scenario, r.Strategy, r.DeadLetters[why], maxReceive, why)
		}
	}
	if len(rep.Bench) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\nbench: throughput side by side in this process, at rtt %g ms per call, no faults\n", rep.RTTms)
	fmt.Fprintf(w, "(store ms/call: the store's own time per call, the rtt excluded; where it rivals\nthe rtt, the store bounds the figure)\n\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "case\tconsumers\tstrategy\tmovements\tcalls/mov\tWCU/mov\tmovements/s\tstore ms/call\t")
	for _, b := range rep.Bench {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%.2f\t%.2f\t%.1f\t%.2f\t\n", b.Case, b.Consumers, b.Strategy, b.Movements, b.CallsPerMovement, b.WCUPerMovement, b.ThroughputPerS, b.StoreMsPerCall)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	for _, r := range Ratios(rep.Bench) {
		fmt.Fprintf(w, "throughput %-12s %2d consumer(s): transaction / separate-table = %.2f×\n", r.Case, r.Consumers, r.Ratio)
	}
	return nil
}

// Ratio is the transaction strategy's throughput over the baseline's on one case.
type Ratio struct {
	Case      string
	Consumers int
	Ratio     float64
}

// Ratios pairs the benchmark's results by case and consumers.
func Ratios(bench []BenchResult) []Ratio {
	var out []Ratio
	for _, tx := range bench {
		if tx.Strategy != ledger.Transaction {
			continue
		}
		for _, b := range bench {
			if b.Strategy == ledger.SeparateTable && b.Case == tx.Case && b.Consumers == tx.Consumers && b.ThroughputPerS > 0 {
				out = append(out, Ratio{Case: tx.Case, Consumers: tx.Consumers, Ratio: tx.ThroughputPerS / b.ThroughputPerS})
			}
		}
	}
	return out
}
