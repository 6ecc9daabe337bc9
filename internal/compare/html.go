package compare

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"

	"github.com/ledger-dev/ledger/internal/ledger"
)

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
	Rows    []row
	Bench   []chart
	Ratios  []Ratio
}

type summary struct {
	Strategy                      ledger.Strategy
	Exact, Delayed, Wrong, Result int
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
	Width        float64 // of barMax
}

// A bar's length at the largest value of its metric, in SVG units; throughput's labels
// are longer.
const (
	barMax      = 125.0
	benchBarMax = 95.0
)

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

func newPage(rep Report) page {
	p := page{Report: rep, Ratios: Ratios(rep.Bench)}
	for _, s := range ledger.Strategies {
		sum := summary{Strategy: s}
		for _, r := range rep.Results {
			if r.Strategy != s {
				continue
			}
			sum.Result++
			switch r.Verdict() {
			case ExactlyOnce:
				sum.Exact++
			case Delayed:
				sum.Delayed++
			default:
				sum.Wrong++
			}
		}
		p.Summary = append(p.Summary, sum)
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
		title := fmt.Sprintf("%s, %d consumer(s): movements/s", b.Case, b.Consumers)
		if len(p.Bench) == 0 || p.Bench[len(p.Bench)-1].Title != title {
			p.Bench = append(p.Bench, chart{Title: title})
		}
		c := &p.Bench[len(p.Bench)-1]
		c.Bars = append(c.Bars, bar{Label: fmt.Sprintf("%.0f/s · %.2f calls · %.2f WCU", b.ThroughputPerS, b.CallsPerMovement, b.WCUPerMovement),
			Width: scale(b.ThroughputPerS, fastest) * benchBarMax / barMax, Class: strategyClass[b.Strategy]})
	}
	return p
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
	verdictClass  = map[Verdict]string{ExactlyOnce: "ok", Delayed: "slow", WrongMoney: "bad"}
	strategyClass = map[ledger.Strategy]string{ledger.Transaction: "tx", ledger.SeparateTable: "sep"}
)
