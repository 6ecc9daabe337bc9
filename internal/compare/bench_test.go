package compare

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/ledger-dev/ledger/internal/sim"
)

// benchOptions is a small benchmark run: every row, a few batches each.
var benchOptions = Options{Seed: 5, RTT: 5 * time.Millisecond, ServiceTime: time.Millisecond, BenchMovements: 80, Progress: func(string, ...any) {}}

// embeddedBench is the benchmark on a fresh embedded store per run, once per test binary.
var embeddedBench = sync.OnceValues(func() ([]BenchResult, error) {
	return runBench(context.Background(), benchOptions)
})

// slowStore is an embedded store behind a proxy that takes delay more over every call.
func slowStore(t *testing.T, delay time.Duration) string {
	t.Helper()
	srv, err := sim.StartDynamoDB()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	target, _ := url.Parse(srv.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(delay)
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(slow.Close)
	return slow.URL
}

// The benchmark's figures come from its simulated clock: one seed gives the same
// throughput, calls and capacity whether the store answers at once or takes its time,
// which only the store's own time per call shows.
func TestBenchFiguresDoNotDependOnTheStoresSpeed(t *testing.T) {
	fast, err := embeddedBench()
	if err != nil {
		t.Fatal(err)
	}
	opts := benchOptions
	opts.Endpoint = slowStore(t, 3*time.Millisecond)
	slow, err := runBench(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(slow) != len(fast) || len(fast) != 2*len(benchRows) {
		t.Fatalf("%d and %d rows, want %d", len(fast), len(slow), 2*len(benchRows))
	}
	for i, f := range fast {
		s := slow[i]
		if f.ThroughputPerS != s.ThroughputPerS || f.CallsPerMovement != s.CallsPerMovement || f.WCUPerMovement != s.WCUPerMovement || f.RetriedShare != s.RetriedShare {
			t.Errorf("%s/%d/%s/%s: %+v on a store 3 ms slower, %+v on the embedded one; want the same figures", f.Case, f.Consumers, f.Queue, f.Strategy, s, f)
		}
		// Only the slow store's floor is certain: the embedded store's own time per call
		// varies with the machine's load, and may exceed it.
		if s.StoreMsPerCall < 3 || f.StoreMsPerCall <= 0 {
			t.Errorf("%s/%d/%s/%s: store ms/call %.2f and %.2f; want each store's time shown, apart, the slower at least its 3 ms", f.Case, f.Consumers, f.Queue, f.Strategy, f.StoreMsPerCall, s.StoreMsPerCall)
		}
	}
}

// benchRowOf finds a benchmark result.
func benchRowOf(t *testing.T, rs []BenchResult, name string, consumers int, queue string, strategy Strategy) BenchResult {
	t.Helper()
	for _, r := range rs {
		if r.Case == name && r.Consumers == consumers && r.Queue == queue && r.Strategy == strategy {
			return r
		}
	}
	t.Fatalf("no bench row %s/%d/%s/%s", name, consumers, queue, strategy)
	return BenchResult{}
}

// On a FIFO queue ten consumers of a hot account take one batch at a time: nothing
// collides, so calls and capacity per movement are one consumer's, and so nearly is
// throughput, well ahead of the baseline however it is queued. Transfers still collide
// where their credited account is another group's.
func TestBenchFIFOKeepsAHotAccountAtOneConsumersCost(t *testing.T) {
	rs, err := embeddedBench()
	if err != nil {
		t.Fatal(err)
	}
	one := benchRowOf(t, rs, "hot-account", 1, standardQueue, Transaction)
	fifo := benchRowOf(t, rs, "hot-account", 10, fifoQueue, Transaction)
	best := max(benchRowOf(t, rs, "hot-account", 10, standardQueue, SeparateTable).ThroughputPerS, benchRowOf(t, rs, "hot-account", 10, fifoQueue, SeparateTable).ThroughputPerS)
	if fifo.CallsPerMovement > 0.12 || fifo.WCUPerMovement > one.WCUPerMovement+0.01 || fifo.RetriedShare != 0 {
		t.Errorf("hot account, 10 consumers, FIFO: %+v; want at most 0.12 calls and one consumer's %.2f WCU per movement, nothing retried", fifo, one.WCUPerMovement)
	}
	if fifo.ThroughputPerS < 0.9*one.ThroughputPerS || fifo.ThroughputPerS < 2.5*best {
		t.Errorf("hot account, 10 consumers, FIFO: %.0f movements/s; want 90%% of one consumer's %.0f and 2.5× the baseline's best %.0f", fifo.ThroughputPerS, one.ThroughputPerS, best)
	}
	if std := benchRowOf(t, rs, "hot-account", 10, standardQueue, Transaction); std.RetriedShare == 0 {
		t.Errorf("hot account, 10 consumers, standard queue: %+v; want writers colliding", std)
	}
	if tr := benchRowOf(t, rs, "transfers", 10, fifoQueue, Transaction); tr.Transfers == 0 || tr.TransfersRetried == 0 {
		t.Errorf("transfers, FIFO: %+v; want transfers, some of them retried", tr)
	}
}
