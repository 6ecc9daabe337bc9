package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCompareCommandPrintsTheDocumentedJSON(t *testing.T) {
	var stdout, stderr bytes.Buffer
	dir := t.TempDir()
	page, link := filepath.Join(dir, "compare.html"), filepath.Join(dir, "latest.html")
	if err := os.Symlink(page, link); err != nil { // the report goes where the link points
		t.Fatal(err)
	}
	code := run(context.Background(), []string{"compare", "--scenarios", "messageid-key,hot-account", "--movements", "12", "--accounts", "3",
		"--rtt", "0s", "--bench", "--bench-movements", "20", "--json", "--html", link}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var doc struct {
		RTTms     float64 `json:"rtt_ms"`
		ServiceMs float64 `json:"service_ms"`
		Results   []struct {
			Scenario         string  `json:"scenario"`
			Strategy         string  `json:"strategy"`
			Movements        int     `json:"movements"`
			DoubleApplied    int     `json:"double_applied"`
			Lost             int     `json:"lost"`
			Stuck            int     `json:"stuck"`
			Parked           int     `json:"parked"`
			BalanceErrors    int     `json:"balance_errors"`
			MoneyCreated     string  `json:"money_created"`
			CallsPerMovement float64 `json:"calls_per_movement"`
			WCUPerMovement   float64 `json:"wcu_per_movement"`
			RCUPerMovement   float64 `json:"rcu_per_movement"`
			P50ms            float64 `json:"p50_ms"`
			P99ms            float64 `json:"p99_ms"`
		} `json:"results"`
		Bench []struct {
			Case             string  `json:"case"`
			Strategy         string  `json:"strategy"`
			Consumers        int     `json:"consumers"`
			Queue            string  `json:"queue"`
			Movements        int     `json:"movements"`
			CallsPerMovement float64 `json:"calls_per_movement"`
			WCUPerMovement   float64 `json:"wcu_per_movement"`
			RetriedShare     float64 `json:"retried_share"`
			Transfers        int     `json:"transfers"`
			TransfersRetried int     `json:"transfers_retried"`
			ThroughputPerS   float64 `json:"throughput_per_s"`
			StoreMsPerCall   float64 `json:"store_ms_per_call"`
		} `json:"bench"`
	}
	raw := stdout.Bytes()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("stdout is not the documented document: %v\n%s", err, raw)
	}
	if len(doc.Results) != 4 || len(doc.Bench) != 16 || doc.ServiceMs != 1 {
		t.Fatalf("%d results and %d bench rows, service %v ms; want 4 and 16, and the default 1 ms", len(doc.Results), len(doc.Bench), doc.ServiceMs)
	}
	for _, r := range doc.Results {
		if r.Scenario == "messageid-key" && r.Strategy == "separate-table" && r.DoubleApplied != 12 {
			t.Errorf("messageid-key on the baseline: %d double applied, want all 12 (every copy came under a new message id)", r.DoubleApplied)
		}
		if r.Strategy == "transaction" && (r.DoubleApplied != 0 || r.Lost != 0 || r.BalanceErrors != 0 || r.MoneyCreated != "0") {
			t.Errorf("transaction: %+v", r)
		}
	}
	if strings.Contains(stdout.String(), "verdict") {
		t.Errorf("the human table went to stdout with --json: %s", stdout.String())
	}
	html, err := os.ReadFile(page)
	if err != nil || !bytes.Contains(html, []byte(`class="bar"`)) {
		t.Errorf("HTML report: %v, %d bytes", err, len(html))
	}
	if st, err := os.Lstat(link); err != nil {
		t.Error(err)
	} else if st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("--html's symlink is now a %v file; want it left a link to the report", st.Mode())
	}
}

func TestCompareCommandRefusesAnUnknownScenario(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"compare", "--scenarios", "duplicates,nonsense"}, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "nonsense") {
		t.Errorf("exit %d, stderr %q; want 2 naming the scenario", code, stderr.String())
	}
	// Ten movements are all warm-up: nothing would be left to measure.
	stderr.Reset()
	if code := run(context.Background(), []string{"compare", "--bench", "--bench-movements", "10"}, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "--bench-movements must be within 11–") {
		t.Errorf("exit %d, stderr %q; want 2 naming --bench-movements", code, stderr.String())
	}
}

// An endpoint that does not answer is one line at start, before any scenario runs.
func TestCompareCommandChecksTheEndpointFirst(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"compare", "--endpoint", "http://127.0.0.1:1", "--html", filepath.Join(t.TempDir(), "r.html")}, &stdout, &stderr)
	if code != 1 || strings.Count(stderr.String(), "\n") != 1 || !strings.Contains(stderr.String(), "cannot reach DynamoDB at http://127.0.0.1:1: dial tcp") {
		t.Errorf("exit %d, stderr %q; want 1 and one line saying the endpoint does not answer", code, stderr.String())
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout %q, want nothing", stdout.String())
	}
}

// An interrupted run says so in one line and keeps the last HTML report: the new one
// replaces it only once whole.
func TestAnInterruptedCompareKeepsTheLastReport(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "compare.html")
	if err := os.WriteFile(page, []byte("the last report"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // Ctrl-C
	var stdout, stderr bytes.Buffer
	code := run(ctx, []string{"compare", "--scenarios", "duplicates", "--html", page}, &stdout, &stderr)
	if code != 1 || stderr.String() != "ledger compare: interrupted\n" {
		t.Errorf("exit %d, stderr %q; want 1 and one line saying it was interrupted", code, stderr.String())
	}
	if kept, err := os.ReadFile(page); err != nil || string(kept) != "the last report" {
		t.Errorf("report after the interrupted run: %q, %v; want the last one", kept, err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 1 {
		t.Errorf("%d files in the report's directory, want the report alone", len(left))
	}
	fresh := filepath.Join(dir, "new.html") // none yet: none after a failed run either
	if code := run(ctx, []string{"compare", "--scenarios", "duplicates", "--html", fresh}, &stdout, &stderr); code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if _, err := os.Stat(fresh); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a new --html path after a failed run: %v, want no file", err)
	}
}

// validate names the first thing wrong: the sizes, the seed and the round trip, the
// scenarios and the movements they need, then the endpoint.
func TestCompareValidate(t *testing.T) {
	testValidate(t, newCompareCmd, []validateCase{
		{nil, ""},
		{[]string{"--movements", "2", "--scenarios", "duplicates,hot-account", "--rtt", "1s", "--bench-movements", "11"}, ""},
		{[]string{"--movements", "0", "--accounts", "0"}, "--movements must be within 1–1000000, not 0"},
		{[]string{"--accounts", "0", "--seed", "0"}, "--accounts must be within 1–100000, not 0"},
		{[]string{"--bench-movements", "10", "--seed", "0"}, "--bench-movements must be within 11–1000000, not 10"},
		{[]string{"--seed", "0", "--rtt", "-1ms"}, "--seed must be at least 1"},
		{[]string{"--rtt", "1001ms", "--scenarios", "nonsense"}, "--rtt must be within 0–1s, not 1.001s"},
		{[]string{"--service-time", "-1ms", "--scenarios", "nonsense"}, "--service-time must be within 0–1s, not -1ms"},
		{[]string{"--bench", "--rtt", "0s", "--service-time", "0s", "--scenarios", "nonsense"}, "--rtt and --service-time are both 0"},
		{[]string{"--rtt", "0s", "--service-time", "0s", "--movements", "3"}, ""},
		{[]string{"--scenarios", "duplicates,", "--movements", "2"}, `unknown scenario "": want some of duplicates,`},
		{[]string{"--movements", "2", "--endpoint", "x"}, "--movements must be at least 3 for crash-between-legs, not 2"},
		{[]string{"--endpoint", "x"}, `--endpoint: awsconf: endpoint "x"`},
	})
}
