package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/ledger-dev/ledger/internal/compare"
	"github.com/ledger-dev/ledger/internal/ledger"
)

var compareCommand = command{
	name:    "compare",
	summary: "this design and the separate-table baseline under the same workload and faults",
	run:     runCompare,
}

func runCompare(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("compare", "[--scenarios a,b] [--seed S] [--rtt D] [--movements N] [--accounts N] [--bench] [--bench-movements N] [--json] [--html FILE] [--endpoint URL]", `
ledger compare --bench --html compare.html
ledger compare --scenarios crash-after-effect,messageid-key --json
ledger compare --bench --bench-movements 10000 --scenarios hot-account`, stderr)
	scenarios := fs.String("scenarios", "", "comma-separated scenarios (default: all): "+strings.Join(compare.Names(), ","))
	seed := fs.Uint64("seed", 1, "seed of the workload, schedule, faults and crash points (same seed, same run)")
	rtt := fs.Duration("rtt", 5*time.Millisecond, "simulated round trip: every DynamoDB call takes at least this long (the store's own time counts toward it)")
	movements := fs.Int("movements", 100, "movements per scenario")
	accounts := fs.Int("accounts", 8, "accounts per scenario (hot-account always uses one)")
	bench := fs.Bool("bench", false, "also measure throughput: unbatched and hot-account, 1 and 10 consumers, both strategies")
	benchMovements := fs.Int("bench-movements", 400, "movements per benchmark run (the issue's target scale is 10000)")
	asJSON := fs.Bool("json", false, "print the report as one JSON document on stdout")
	htmlFile := fs.String("html", "", "write a self-contained HTML report to this file")
	endpoint := fs.String("endpoint", "", "DynamoDB endpoint URL, such as a moto server (default: a fresh embedded store per run)")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if *movements < 1 || *accounts < 1 || *benchMovements < 1 || *seed == 0 || *rtt < 0 || *rtt > time.Second {
		fmt.Fprintln(stderr, "ledger compare: --movements, --accounts, --bench-movements and --seed must be at least 1; --rtt within 0–1s")
		fs.Usage()
		return 2
	}
	var names []string
	if *scenarios != "" {
		names = strings.Split(*scenarios, ",")
		for _, n := range names {
			if compare.Describe(n) == "" {
				fmt.Fprintf(stderr, "ledger compare: unknown scenario %q: want some of %s\n", n, strings.Join(compare.Names(), ","))
				return 2
			}
		}
	}
	rep, err := compare.Run(ctx, compare.Options{
		Scenarios: names, Seed: *seed, RTT: *rtt, Movements: *movements, Accounts: *accounts,
		Endpoint: *endpoint, Bench: *bench, BenchMovements: *benchMovements,
		Progress: func(format string, args ...any) { fmt.Fprintf(stderr, "ledger compare: "+format, args...) },
	})
	if err != nil {
		fmt.Fprintf(stderr, "ledger compare: %v\n", err)
		return 1
	}
	fmt.Fprintln(stderr)
	if err := compare.WriteText(stderr, rep); err != nil {
		fmt.Fprintf(stderr, "ledger compare: %v\n", err)
		return 1
	}
	if *htmlFile != "" {
		if err := writeHTML(*htmlFile, rep); err != nil {
			fmt.Fprintf(stderr, "ledger compare: %v\n", err)
			return 1
		}
		fmt.Fprintf(stderr, "\nHTML report: %s\n", *htmlFile)
	}
	if *asJSON {
		if err := json.NewEncoder(stdout).Encode(rep); err != nil {
			fmt.Fprintf(stderr, "ledger compare: %v\n", err)
			return 1
		}
	}
	for _, r := range rep.Results {
		if r.Strategy == ledger.Transaction && !r.Correct() {
			fmt.Fprintf(stderr, "ledger compare: the transaction strategy got the money wrong in %s\n", r.Scenario)
			return 1
		}
	}
	return 0
}

func writeHTML(name string, rep compare.Report) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if err := compare.WriteHTML(f, rep); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
