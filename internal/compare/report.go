package compare

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"maps"
	"slices"
	"text/tabwriter"
)

// WriteText writes rep as terminal tables no wider than 100 columns; latencies and read
// units are in the JSON report.
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
		for _, why := range slices.Sorted(maps.Keys(r.ParkedWhy)) {
			fmt.Fprintf(w, "  %s/%s: %d delivery(ies) parked in error, as %s\n", r.Scenario, r.Strategy, r.ParkedWhy[why], why)
		}
	}
	if len(rep.Bench) == 0 {
		return nil
	}
	return writeBench(w, rep)
}

// writeBench writes the benchmark's table, its ratios and its transfers' collisions.
func writeBench(w io.Writer, rep Report) error {
	fmt.Fprintf(w, "\nbench: throughput on simulated time, %g ms round trip + %g ms service time per call, no\n", rep.RTTms, rep.ServiceMs)
	fmt.Fprintf(w, "faults (movs: movements measured; retried: movements with a write refused for another's and\n")
	fmt.Fprintf(w, "made again; store ms: the embedded store's own time per call, apart from every other figure)\n\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "case\tcons\tqueue\tstrategy\tmovs\tcalls/mov\tWCU/mov\tretried\tmov/s\tstore ms\t")
	for _, b := range rep.Bench {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%d\t%.2f\t%.2f\t%.0f%%\t%.0f\t%.2f\t\n", b.Case, b.Consumers, b.Queue, b.Strategy, b.Movements,
			b.CallsPerMovement, b.WCUPerMovement, 100*b.RetriedShare, b.ThroughputPerS, b.StoreMsPerCall)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	for _, r := range Ratios(rep.Bench) {
		fmt.Fprintf(w, "throughput %-11s %2d %-8s transaction / separate-table = %5.2f×", r.Case, r.Consumers, r.Queue, r.Ratio)
		if r.Queue == fifoQueue {
			fmt.Fprintf(w, " (%.2f× its best)", r.Best)
		}
		fmt.Fprintln(w)
	}
	for _, b := range rep.Bench {
		if b.Strategy == Transaction && b.Transfers > 0 {
			fmt.Fprintf(w, "transfers %s, %d consumers: %d of %d retried (%.0f%%): another batch wrote an account of theirs\n",
				b.Queue, b.Consumers, b.TransfersRetried, b.Transfers, 100*float64(b.TransfersRetried)/float64(b.Transfers))
		}
	}
	return nil
}

// Ratio is the transaction strategy's throughput over the baseline's on one case: on
// the same kind of queue (Ratio), and over the baseline's best on any (Best).
type Ratio struct {
	Case      string
	Consumers int
	Queue     string
	Ratio     float64
	Best      float64
}

// Ratios pairs the benchmark's results by case, consumers and queue.
func Ratios(bench []BenchResult) []Ratio {
	var out []Ratio
	for _, tx := range bench {
		if tx.Strategy != Transaction {
			continue
		}
		r := Ratio{Case: tx.Case, Consumers: tx.Consumers, Queue: tx.Queue}
		best := 0.0
		for _, b := range bench {
			if b.Strategy != SeparateTable || b.Case != tx.Case || b.Consumers != tx.Consumers || b.ThroughputPerS <= 0 {
				continue
			}
			best = max(best, b.ThroughputPerS)
			if b.Queue == tx.Queue {
				r.Ratio = tx.ThroughputPerS / b.ThroughputPerS
			}
		}
		if best > 0 && r.Ratio > 0 {
			r.Best = tx.ThroughputPerS / best
			out = append(out, r)
		}
	}
	return out
}

//go:embed report.html.tmpl
var reportTemplate string

var reportPage = template.Must(template.New("report").Parse(reportTemplate))

// WriteHTML writes rep as one self-contained page (no script, no external asset), so
// it can be mailed, archived or opened offline.
func WriteHTML(w io.Writer, rep Report) error {
	return reportPage.Execute(w, newPage(rep))
}

type page struct {
	Report  Report
	Summary []summary
	Titles  []string // the scenario table's chart columns, one per metric
	Rows    []row
	Bench   []chart
	Ratios  []Ratio
}

type summary struct {
	Strategy                              Strategy
	Exact, Delayed, Parked, Wrong, Result int
}

type row struct {
	Scenario, What string
	Verdicts       []bar // badges: no width
	Charts         []chart
}

type chart struct {
	Title string
	Bars  []bar
}

type bar struct {
	Label, Class string
	Width        float64 // percent of its track: 0–barMax
}

// barMax is a bar's length at its chart's largest value, in percent of its track: the
// page lays every bar out as a share of its column, so no bar runs past the window.
const barMax = 100.0

// metrics are the bar charts of a scenario row, labelled in format (money when empty).
var metrics = []struct {
	title, format string
	value         func(Result) float64
}{
	{"movements applied twice or lost", "%.0f", func(r Result) float64 { return float64(r.DoubleApplied + r.Lost) }},
	{"money created (+) or destroyed (−)", "", func(r Result) float64 { return r.MoneyCreated.Abs().InexactFloat64() }},
	{"deliveries stuck", "%.0f", func(r Result) float64 { return float64(r.Stuck) }},
	{"DynamoDB calls / movement", "%.2f", func(r Result) float64 { return r.CallsPerMovement }},
	{"WCU / movement", "%.2f", func(r Result) float64 { return r.WCUPerMovement }},
}

// money is r's MoneyCreated signed, to the cent: "+25.00", "−25.00", "0.00".
func money(r Result) string {
	s := r.MoneyCreated.Abs().StringFixed(2)
	switch r.MoneyCreated.Sign() {
	case 1:
		return "+" + s
	case -1:
		return "−" + s
	}
	return s
}

// newPage lays rep out for the page: the summary cards, a row of charts per scenario,
// each metric on one scale across scenarios, and the throughput charts.
func newPage(rep Report) page {
	p := page{Report: rep, Summary: summarize(rep.Results), Ratios: Ratios(rep.Bench)}
	for _, m := range metrics {
		p.Titles = append(p.Titles, m.title)
	}
	top := make([]float64, len(metrics)) // each metric's bars share one scale across scenarios
	for _, r := range rep.Results {
		for i, m := range metrics {
			top[i] = max(top[i], m.value(r))
		}
	}
	for _, r := range rep.Results {
		if len(p.Rows) == 0 || p.Rows[len(p.Rows)-1].Scenario != r.Scenario {
			p.Rows = append(p.Rows, row{Scenario: r.Scenario, What: Describe(r.Scenario), Charts: make([]chart, len(metrics))})
		}
		cur := &p.Rows[len(p.Rows)-1]
		cur.Verdicts = append(cur.Verdicts, bar{Label: fmt.Sprintf("%s: %s", r.Strategy, r.Verdict()), Class: verdictClass[r.Verdict()]})
		for i, m := range metrics {
			label := money(r)
			if m.format != "" {
				label = fmt.Sprintf(m.format, m.value(r))
			}
			cur.Charts[i].Title = m.title
			cur.Charts[i].Bars = append(cur.Charts[i].Bars, bar{Label: label, Width: scale(m.value(r), top[i]), Class: strategyClass[r.Strategy]})
		}
	}
	fastest := 0.0
	for _, b := range rep.Bench {
		fastest = max(fastest, b.ThroughputPerS)
	}
	for _, b := range rep.Bench {
		title := fmt.Sprintf("%s, %d consumer(s), %s queue: movements/s", b.Case, b.Consumers, b.Queue)
		if len(p.Bench) == 0 || p.Bench[len(p.Bench)-1].Title != title {
			p.Bench = append(p.Bench, chart{Title: title})
		}
		c := &p.Bench[len(p.Bench)-1]
		c.Bars = append(c.Bars, bar{Label: fmt.Sprintf("%.0f/s · %.2f calls · %.2f WCU", b.ThroughputPerS, b.CallsPerMovement, b.WCUPerMovement),
			Width: scale(b.ThroughputPerS, fastest), Class: strategyClass[b.Strategy]})
	}
	return p
}

// summarize counts each strategy's results by verdict.
func summarize(results []Result) []summary {
	var out []summary
	for _, s := range Strategies {
		sum := summary{Strategy: s}
		for _, r := range results {
			if r.Strategy != s {
				continue
			}
			sum.Result++
			switch r.Verdict() {
			case ExactlyOnce:
				sum.Exact++
			case Delayed:
				sum.Delayed++
			case ParkedInError:
				sum.Parked++
			default:
				sum.Wrong++
			}
		}
		out = append(out, sum)
	}
	return out
}

// scale is v's bar length; a value above zero always shows.
func scale(v, top float64) float64 {
	if v <= 0 || top <= 0 {
		return 0
	}
	return max(2, barMax*v/top)
}

// The CSS classes the page colours verdicts and strategies by.
var (
	verdictClass  = map[Verdict]string{ExactlyOnce: "ok", Delayed: "slow", ParkedInError: "bad", WrongMoney: "bad"}
	strategyClass = map[Strategy]string{Transaction: "tx", SeparateTable: "sep"}
)
