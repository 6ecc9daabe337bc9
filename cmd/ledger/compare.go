package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/ledger-dev/ledger/internal/awsconf"
	"github.com/ledger-dev/ledger/internal/compare"
	"github.com/ledger-dev/ledger/internal/config"
	"github.com/ledger-dev/ledger/internal/ledger"
	"github.com/ledger-dev/ledger/internal/sim"
)

var compareCommand = command{
	name:    "compare",
	summary: "this design and the separate-table baseline under the same workload and faults",
	run:     runCompare,
}

// maxRTT bounds --rtt: a longer simulated round trip only makes a run slower.
const maxRTT = time.Second

func runCompare(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("compare", helpText{synopsis: "[--scenarios a,b] [--seed S] [--rtt D] [--movements N] [--accounts N] [--bench] [--bench-movements N] [--json] [--html FILE] [--endpoint URL]", example: `
ledger compare --bench --html compare.html
ledger compare --scenarios crash-after-effect,messageid-key --json
ledger compare --bench --bench-movements 10000 --scenarios hot-account`}, stdout, stderr)
	scenarios := fs.String("scenarios", "", "comma-separated scenarios (default: all): "+strings.Join(compare.Names(), ","))
	seed := fs.Uint64("seed", 1, "seed of the workload, schedule, faults and crash points (same seed, same run)")
	rtt := fs.Duration("rtt", 5*time.Millisecond, "simulated round trip: every DynamoDB call takes at least this long (the store's own time counts toward it)")
	movements := fs.Int("movements", 100, "movements per scenario")
	accounts := fs.Int("accounts", 8, "accounts per scenario (hot-account always uses one)")
	bench := fs.Bool("bench", false, "also measure throughput: unbatched and hot-account, 1 and 10 consumers, both strategies")
	benchMovements := fs.Int("bench-movements", 400, "movements per benchmark run, its warm-up included: the table counts those after it (10000 shows the steady state; it takes minutes)")
	asJSON := fs.Bool("json", false, "print the report as one JSON document on stdout instead of the tables")
	htmlFile := fs.String("html", "", "also write a self-contained HTML report to this file")
	endpoint := fs.String("endpoint", "", "DynamoDB endpoint URL, such as a moto server (default: a fresh embedded store per run)")
	if code, ok := fs.parse(args, 0); !ok {
		return code
	}
	switch {
	case *movements < 1 || *movements > sim.MaxMovements:
		return fs.usageError("--movements must be within 1–%d, not %d", sim.MaxMovements, *movements)
	case *accounts < 1 || *accounts > sim.MaxAccounts:
		return fs.usageError("--accounts must be within 1–%d, not %d", sim.MaxAccounts, *accounts)
	case *benchMovements < compare.MinBenchMovements || *benchMovements > sim.MaxMovements:
		return fs.usageError("--bench-movements must be within %d–%d, not %d", compare.MinBenchMovements, sim.MaxMovements, *benchMovements)
	case *seed == 0:
		return fs.usageError("--seed must be at least 1")
	case *rtt < 0 || *rtt > maxRTT:
		return fs.usageError("--rtt must be within 0–%v, not %v", maxRTT, *rtt)
	}
	var names []string
	if *scenarios != "" {
		names = strings.Split(*scenarios, ",")
		for _, n := range names {
			if compare.Describe(n) == "" {
				return fs.usageError("unknown scenario %q: want some of %s", n, strings.Join(compare.Names(), ","))
			}
		}
	}
	if *movements < compare.MinTransferMovements && (names == nil || slices.Contains(names, compare.TransferScenario)) {
		return fs.usageError("--movements must be at least %d for %s, not %d", compare.MinTransferMovements, compare.TransferScenario, *movements)
	}
	if _, err := awsconf.IsLoopback(*endpoint); err != nil {
		return fs.usageError("--endpoint: %v", err)
	}
	if *endpoint != "" {
		awsCfg, err := awsconf.Load(ctx, *endpoint)
		if err == nil {
			err = checkEndpoint(ctx, awsconf.DynamoDB(awsCfg, *endpoint), config.DefaultTable, *endpoint) // its own tables are named at run time
		}
		if err != nil {
			return fs.fail(err)
		}
	}
	// A path that cannot be written is said now, not after the run. The file is emptied
	// only once the report is ready, so a run that fails keeps the last one.
	var html *os.File
	wrote := false
	if *htmlFile != "" {
		_, err := os.Stat(*htmlFile)
		created := errors.Is(err, os.ErrNotExist)
		if html, err = os.OpenFile(*htmlFile, os.O_WRONLY|os.O_CREATE, 0o666); err != nil {
			return fs.usageError("--html: %v", err)
		}
		defer html.Close()
		if created {
			defer func() {
				if !wrote {
					os.Remove(*htmlFile)
				}
			}()
		}
	}
	rep, err := compare.Run(ctx, compare.Options{
		Scenarios: names, Seed: *seed, RTT: *rtt, Movements: *movements, Accounts: *accounts,
		Endpoint: *endpoint, Bench: *bench, BenchMovements: *benchMovements,
		Progress: func(format string, args ...any) { fmt.Fprintf(stderr, "ledger compare: "+format, args...) },
	})
	if err != nil {
		return fs.fail(err)
	}
	if *asJSON {
		err = json.NewEncoder(stdout).Encode(rep)
	} else {
		err = compare.WriteText(stdout, rep)
	}
	if err != nil {
		return fs.fail(err)
	}
	if html != nil {
		wrote = true
		if st, err := html.Stat(); err != nil {
			return fs.fail(err)
		} else if st.Mode().IsRegular() { // a pipe or a device takes the report as it comes
			if err := html.Truncate(0); err != nil {
				return fs.fail(err)
			}
		}
		if err := compare.WriteHTML(html, rep); err != nil {
			return fs.fail(err)
		}
		if err := html.Close(); err != nil {
			return fs.fail(err)
		}
		fmt.Fprintf(stderr, "ledger compare: HTML report in %s\n", *htmlFile)
	}
	for _, r := range rep.Results {
		if v := r.Verdict(); r.Strategy == ledger.Transaction && v != compare.ExactlyOnce {
			return fs.fail(fmt.Errorf("the transaction strategy's verdict in %s: %s", r.Scenario, v))
		}
	}
	return 0
}
