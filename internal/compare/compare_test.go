package compare

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/testenv"
)

// TestScenarios runs every scenario small, for both strategies, on the test backend
// (the embedded store, or moto when LEDGER_TEST_DYNAMODB_ENDPOINT is set). The
// transaction strategy must come out exactly right in every one; the baseline must
// show the failure each scenario is built to expose, where the design really has it.
func TestScenarios(t *testing.T) {
	rep, err := Run(context.Background(), Options{Seed: 3, Movements: 20, Accounts: 3, RTT: 2 * time.Millisecond, Endpoint: os.Getenv(testenv.DynamoDBEndpointEnv)})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]map[Strategy]Result{}
	for _, r := range rep.Results {
		if got[r.Scenario] == nil {
			got[r.Scenario] = map[Strategy]Result{}
		}
		got[r.Scenario][r.Strategy] = r
		t.Logf("%-22s %-15s double=%d lost=%d stuck=%d balance=%d money=%s calls=%.2f wcu=%.2f rcu=%.2f dead=%v parked=%v maxitem=%d",
			r.Scenario, r.Strategy, r.DoubleApplied, r.Lost, r.Stuck, r.BalanceErrors, r.MoneyCreated, r.CallsPerMovement, r.WCUPerMovement, r.RCUPerMovement, r.DeadLetters, r.ParkedWhy, r.MaxItemBytes)
	}
	if len(rep.Results) != 2*len(Names()) {
		t.Fatalf("%d results, want %d", len(rep.Results), 2*len(Names()))
	}
	for _, name := range Names() {
		tx := got[name][Transaction]
		if tx.Verdict() != ExactlyOnce || tx.Movements != 20 {
			t.Errorf("%s: transaction %+v, want every movement applied exactly once, no money made or lost, nothing stuck or parked", name, tx)
		}
		if tx.CallsPerMovement <= 0 || tx.WCUPerMovement <= 0 || tx.MaxItemBytes >= 1024 {
			t.Errorf("%s: transaction costs %+v: the meter saw nothing, or an item reached 1 KB", name, tx)
		}
	}
	base := func(name string) Result { return got[name][SeparateTable] }
	for _, name := range Names() { // the capacity model sizes writes by their request: it holds below 1 KB
		if b := base(name); b.MaxItemBytes <= 0 || b.MaxItemBytes >= 1024 {
			t.Errorf("%s: separate-table's largest item is %d bytes, want some and under 1 KB", name, b.MaxItemBytes)
		}
	}
	for _, name := range []string{"crash-after-effect", "lost-response", "late-duplicate", "messageid-key"} {
		if r := base(name); r.DoubleApplied == 0 || r.BalanceErrors == 0 {
			t.Errorf("%s: separate-table %+v, want movements applied twice and wrong balances", name, r)
		}
	}
	for _, name := range []string{"duplicates", "concurrent-duplicates", "crash-after-reserve", "hot-account"} {
		if r := base(name); !r.Correct() || r.Parked != 0 {
			t.Errorf("%s: separate-table %+v: the baseline handles this case; a failure here is a bug in it", name, r)
		}
	}
	// A transfer whose invocation died between its legs is debited again when it comes
	// back: a leg applied twice, and the money of the debit gone.
	if r := base("crash-between-legs"); r.DoubleApplied == 0 || r.Lost != 0 || !r.MoneyCreated.IsNegative() {
		t.Errorf("crash-between-legs: separate-table %+v, want transfers debited twice and money destroyed", r)
	}
	for _, name := range []string{"crash-after-reserve", "concurrent-duplicates"} {
		if r := base(name); r.Stuck == 0 {
			t.Errorf("%s: separate-table %+v, want deliveries refused while the key was in progress", name, r)
		}
	}
	// Without faults the baseline pays reserve, effect and mark for every movement; the
	// transaction strategy writes a batch of one account's movements in one call.
	if tx, b := got["hot-account"][Transaction], base("hot-account"); b.CallsPerMovement != 3 || tx.CallsPerMovement > 0.5 {
		t.Errorf("hot-account: %.2f calls per movement for transaction, %.2f for separate-table; want at most 0.5 and exactly 3",
			tx.CallsPerMovement, b.CallsPerMovement)
	}
}

func TestReportsRenderEveryScenario(t *testing.T) {
	rep := Report{RTTms: 5, Seed: 1, Movements: 10, Accounts: 2, Backend: "test",
		Results: []Result{
			{Scenario: "crash-after-effect", Strategy: Transaction, Movements: 10, CallsPerMovement: 1.5, WCUPerMovement: 4},
			{Scenario: "crash-after-effect", Strategy: SeparateTable, Movements: 10, DoubleApplied: 2, BalanceErrors: 1, CallsPerMovement: 3.2, WCUPerMovement: 3.2,
				MoneyCreated: decimal.RequireFromString("-25.5"), DeadLetters: map[string]int{"insufficient funds": 1}},
		},
		Bench: []BenchResult{
			{Case: "hot-account", Strategy: Transaction, Consumers: 1, Movements: 10, ThroughputPerS: 600},
			{Case: "hot-account", Strategy: SeparateTable, Consumers: 1, Movements: 10, ThroughputPerS: 50},
		},
	}
	var text, page strings.Builder
	if err := WriteText(&text, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"crash-after-effect", "wrong money", "exactly once", "-25.50", "transaction / separate-table = 12.00×", "dead-letter queue"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("terminal report lacks %q:\n%s", want, text.String())
		}
	}
	for line := range strings.Lines(text.String()) {
		if n := utf8.RuneCountInString(strings.TrimSuffix(line, "\n")); n > 100 {
			t.Errorf("terminal report has a line of %d columns: %q", n, line)
		}
	}
	if err := WriteHTML(&page, rep); err != nil {
		t.Fatal(err)
	}
	html := page.String()
	for _, want := range []string{`class="bar"`, "crash-after-effect", "separate-table: wrong money", "transaction: exactly once", "money created", "−25.50", Describe("crash-after-effect")} {
		if !strings.Contains(html, want) {
			t.Errorf("HTML report lacks %q", want)
		}
	}
	for _, external := range []string{"<script", "http://", "https://", "<link"} {
		if strings.Contains(html, external) {
			t.Errorf("HTML report is not self-contained: it has %q", external)
		}
	}
}

// One stuck message is enough to say delayed, and any wrong money outranks it.
func TestVerdictSaysTheWorst(t *testing.T) {
	for _, tc := range []struct {
		r    Result
		want Verdict
	}{
		{Result{}, ExactlyOnce},
		{Result{Stuck: 1}, Delayed},
		{Result{Stuck: 1, DoubleApplied: 1}, WrongMoney},
		{Result{Stuck: 1, Parked: 1}, ParkedInError},
		{Result{Parked: 1, Lost: 1}, WrongMoney},
		{Result{Lost: 1}, WrongMoney},
		{Result{BalanceErrors: 1}, WrongMoney},
		{Result{MoneyCreated: decimal.New(1, -2)}, WrongMoney},
	} {
		if got := tc.r.Verdict(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.r, got, tc.want)
		}
	}
}

// A scenario named twice runs once, and the report keeps its own order.
func TestScenariosRunOnceEachInReportOrder(t *testing.T) {
	o, err := Options{Scenarios: []string{"hot-account", "duplicates", "hot-account"}}.withDefaults()
	if err != nil || !slices.Equal(o.Scenarios, []string{"duplicates", "hot-account"}) {
		t.Errorf("scenarios %v (%v), want duplicates then hot-account, once each", o.Scenarios, err)
	}
}
