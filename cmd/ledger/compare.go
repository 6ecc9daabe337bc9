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
	"github.com/ledger-dev/ledger/internal/sim"
)

var compareCommand = command{
	name:    "compare",
	summary: "this design and the separate-table baseline under the same workload and faults",
	run:     runCompare,
}

// maxRTT bounds --rtt: a longer simulated round trip only makes a run slower.
const maxRTT = time.Second

// compareHelp is ledger compare's --help.
var compareHelp = helpText{synopsis: "[--scenarios a,b] [--seed S] [--rtt D] [--movements N] [--accounts N] [--bench] [--bench-movements N] [--service-time D] [--json] [--html FILE] [--endpoint URL]", about: `
Runs each scenario's workload, deliveries and faults on this design (the transaction
strategy) and on the separate-table baseline, and reports what each made of them; it
exits 1 unless the transaction strategy applied every movement exactly once. Each
scenario generates --movements on --accounts (hot-account on one). One --seed, one run:
the same workload, schedule, faults and crash points. DynamoDB is a fresh embedded store
per run unless --endpoint names one. The bench runs its consumers on simulated time,
each call costing --rtt plus --service-time, so one seed gives the same figures on any
machine (the back-off's random waits aside).`, example: `
ledger compare --bench --html compare.html
ledger compare --scenarios crash-after-effect,messageid-key --json
ledger compare --bench --bench-movements 10000 --scenarios hot-account`}

// compareCmd is ledger compare's command line.
type compareCmd struct {
	*flags
	scenarios      string
	names          []string // --scenarios, once validated; nil for all
	seed           uint64
	rtt            time.Duration
	service        time.Duration
	movements      int
	accounts       int
	bench          bool
	benchMovements int
	asJSON         bool
	htmlFile       string
	endpoint       string
}

// newCompareCmd declares ledger compare's flags.
func newCompareCmd(stdout, stderr io.Writer) *compareCmd {
	c := &compareCmd{flags: newFlags("compare", compareHelp, stdout, stderr)}
	c.StringVar(&c.scenarios, "scenarios", "", "comma-separated scenarios (default: all): "+strings.Join(compare.Names(), ","))
	c.seedVar(&c.seed)
	c.DurationVar(&c.rtt, "rtt", 5*time.Millisecond, "simulated round trip: every DynamoDB call takes at least this long (the store's own time counts toward it); in the bench, each call's network time on its simulated clock")
	c.DurationVar(&c.service, "service-time", time.Millisecond, "the bench's modelled DynamoDB time per call, beside --rtt, on its simulated clock")
	c.movementsVar(&c.movements, 100)
	c.accountsVar(&c.accounts, 8)
	c.BoolVar(&c.bench, "bench", false, "also measure throughput on simulated time: unbatched, hot-account and transfers, 1 and 10 consumers, standard and FIFO queues, both strategies")
	c.IntVar(&c.benchMovements, "bench-movements", 400, "movements per benchmark run, its warm-up included: the table counts those after it (10000 shows the steady state; it takes minutes)")
	c.jsonVar(&c.asJSON)
	c.StringVar(&c.htmlFile, "html", "", "also write a self-contained HTML report to this file")
	c.endpointVar(&c.endpoint)
	return c
}

// runCompare is ledger compare: it parses the command line, then validates it and runs.
func runCompare(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCompareCmd(stdout, stderr)
	return c.execute(ctx, args, 0, c)
}

// validate checks the sizes and the seed, the scenarios and the movements they need,
// then the endpoint.
func (c *compareCmd) validate() error {
	switch {
	case c.movements < 1 || c.movements > sim.MaxMovements:
		return fmt.Errorf("--movements must be within 1–%d, not %d", sim.MaxMovements, c.movements)
	case c.accounts < 1 || c.accounts > sim.MaxAccounts:
		return fmt.Errorf("--accounts must be within 1–%d, not %d", sim.MaxAccounts, c.accounts)
	case c.benchMovements < compare.MinBenchMovements || c.benchMovements > sim.MaxMovements:
		return fmt.Errorf("--bench-movements must be within %d–%d, not %d", compare.MinBenchMovements, sim.MaxMovements, c.benchMovements)
	case c.seed == 0:
		return errors.New("--seed must be at least 1")
	case c.rtt < 0 || c.rtt > maxRTT:
		return fmt.Errorf("--rtt must be within 0–%v, not %v", maxRTT, c.rtt)
	case c.service < 0 || c.service > maxRTT:
		return fmt.Errorf("--service-time must be within 0–%v, not %v", maxRTT, c.service)
	case c.bench && c.rtt+c.service <= 0:
		return errors.New("--rtt and --service-time are both 0: the bench's calls would take no time, and throughput would have no measure")
	}
	if c.scenarios != "" {
		c.names = strings.Split(c.scenarios, ",")
		for _, n := range c.names {
			if compare.Describe(n) == "" {
				return fmt.Errorf("unknown scenario %q: want some of %s", n, strings.Join(compare.Names(), ","))
			}
		}
	}
	if c.movements < compare.MinTransferMovements && (c.names == nil || slices.Contains(c.names, compare.TransferScenario)) {
		return fmt.Errorf("--movements must be at least %d for %s, not %d", compare.MinTransferMovements, compare.TransferScenario, c.movements)
	}
	return checkEndpointFlag("--endpoint", c.endpoint)
}

// run checks the endpoint, runs the scenarios and prints the report (and writes it to
// --html); a transaction strategy that did not apply every movement exactly once is a
// failure.
func (c *compareCmd) run(ctx context.Context) error {
	if c.endpoint != "" {
		awsCfg, err := awsconf.Load(ctx, c.endpoint)
		if err == nil {
			err = checkEndpoint(ctx, awsconf.DynamoDB(awsCfg, c.endpoint), config.DefaultTable, c.endpoint) // its own tables are named at run time
		}
		if err != nil {
			return err
		}
	}
	var html *htmlReport
	if c.htmlFile != "" {
		var err error
		if html, err = openHTMLReport(c.htmlFile); err != nil {
			return badUsage("--html: %w", err)
		}
		defer html.close()
	}
	rep, err := compare.Run(ctx, compare.Options{
		Scenarios: c.names, Seed: c.seed, RTT: c.rtt, ServiceTime: c.service, Movements: c.movements, Accounts: c.accounts,
		Endpoint: c.endpoint, Bench: c.bench, BenchMovements: c.benchMovements,
		Progress: func(format string, args ...any) { fmt.Fprintf(c.stderr, "ledger compare: "+format, args...) },
	})
	if err != nil {
		return err
	}
	if err := c.print(rep, html); err != nil {
		return err
	}
	for _, r := range rep.Results {
		if v := r.Verdict(); r.Strategy == compare.Transaction && v != compare.ExactlyOnce {
			return fmt.Errorf("the transaction strategy's verdict in %s: %s", r.Scenario, v)
		}
	}
	return nil
}

// print prints the report on stdout, as tables or JSON, then writes it to html when
// --html is given.
func (c *compareCmd) print(rep compare.Report, html *htmlReport) error {
	var err error
	if c.asJSON {
		err = json.NewEncoder(c.stdout).Encode(rep)
	} else {
		err = compare.WriteText(c.stdout, rep)
	}
	if err != nil || html == nil {
		return err
	}
	if err := html.write(rep); err != nil {
		return err
	}
	fmt.Fprintf(c.stderr, "ledger compare: HTML report in %s\n", c.htmlFile)
	return nil
}

// htmlReport is --html's file, opened before the run so that a path that cannot be
// written is said at once. It is emptied only once the report is ready, so a run that
// fails keeps the last one; a file the run created goes when no report was written.
type htmlReport struct {
	path    string
	f       *os.File
	created bool // by openHTMLReport
	wrote   bool // write has begun
}

// openHTMLReport opens the file at path for the report, creating it when there is none.
func openHTMLReport(path string) (*htmlReport, error) {
	_, err := os.Stat(path)
	created := errors.Is(err, os.ErrNotExist)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o666)
	if err != nil {
		return nil, err
	}
	return &htmlReport{path: path, f: f, created: created}, nil
}

// write empties a regular file (a pipe or a device takes the report as it comes), then
// writes the report and closes it.
func (h *htmlReport) write(rep compare.Report) error {
	h.wrote = true
	if st, err := h.f.Stat(); err != nil {
		return err
	} else if st.Mode().IsRegular() {
		if err := h.f.Truncate(0); err != nil {
			return err
		}
	}
	if err := compare.WriteHTML(h.f, rep); err != nil {
		return err
	}
	return h.f.Close()
}

// close closes the file, and removes it when the run created it but wrote no report.
func (h *htmlReport) close() {
	h.f.Close()
	if h.created && !h.wrote {
		os.Remove(h.path)
	}
}
