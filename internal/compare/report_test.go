package compare

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

// The HTML report fits a window 1280 pixels wide, whatever it holds, without a
// horizontal scrollbar. Without a browser that is checked as the rules that make it so:
// no box is wider than a swatch by itself, the scenario table is laid out as shares of
// the page, each bar is a share of its column, and no text refuses to wrap. Reports of
// every scenario count, with and without throughput, and with figures far larger than
// a run gives, are checked.
func TestHTMLReportFitsTheWindow(t *testing.T) {
	for n := 1; n <= len(Names()); n++ {
		for _, bench := range []bool{false, true} {
			var page strings.Builder
			if err := WriteHTML(&page, layoutReport(Names()[:n], bench)); err != nil {
				t.Fatal(err)
			}
			for _, broken := range layoutFaults(page.String(), n) {
				t.Errorf("%d scenario(s), bench %v: %s", n, bench, broken)
			}
		}
	}
}

// layoutReport is a report on scenarios with every metric set, the largest values far
// beyond a run's, so that the longest labels are drawn.
func layoutReport(scenarios []string, bench bool) Report {
	rep := Report{RTTms: 5, Seed: 1, Movements: 100, Accounts: 8, Backend: "test"}
	for i, s := range scenarios {
		big := decimal.New(int64(i+1)*123_456_789, -2)
		rep.Results = append(rep.Results,
			Result{Scenario: s, Strategy: Transaction, CallsPerMovement: 2.5, WCUPerMovement: 36.12 * float64(i+1)},
			Result{Scenario: s, Strategy: SeparateTable, DoubleApplied: 100_000 * i, Lost: i, Stuck: 83_000 * i, CallsPerMovement: 6.34,
				WCUPerMovement: 5.32, MoneyCreated: big.Neg()})
	}
	if bench {
		for _, c := range []int{1, 4, 16} {
			rep.Bench = append(rep.Bench,
				BenchResult{Case: "hot-account", Strategy: Transaction, Consumers: c, ThroughputPerS: 123_456.7, CallsPerMovement: 0.11, WCUPerMovement: 4.2},
				BenchResult{Case: "hot-account", Strategy: SeparateTable, Consumers: c, ThroughputPerS: 50, CallsPerMovement: 3, WCUPerMovement: 3})
		}
	}
	return rep
}

// maxFixedPx is the widest a box may be by a length of its own: a legend's swatch.
// emPx is the page's font size, for lengths in em.
const (
	maxFixedPx = 16
	emPx       = 14
)

var (
	cssRule     = regexp.MustCompile(`([^{}]+)\{([^{}]*)\}`)
	cssLength   = regexp.MustCompile(`(-?[0-9.]+)(px|em|rem|ch|ex|vw|pt|pc|cm|mm|in)\b`)
	styleAttr   = regexp.MustCompile(`style="([^"]*)"`)
	shareStyle  = regexp.MustCompile(`^width: ([0-9.]+)%$`)
	sizeAttr    = regexp.MustCompile(`<[a-z]+[^>]*\s(width|height)="`)
	chartColumn = regexp.MustCompile(`<col>`)
)

// widthProperties are the declarations that can make a box wider than its parent.
var widthProperties = map[string]bool{"width": true, "min-width": true, "flex": true, "flex-basis": true, "grid-template-columns": true}

// layoutFaults lists what in page could make it wider than the window.
func layoutFaults(page string, scenarios int) []string {
	css, _, _ := strings.Cut(page[strings.Index(page, "<style>")+len("<style>"):], "</style>")
	css = regexp.MustCompile(`(?s)/\*.*?\*/`).ReplaceAllString(css, "")
	decls := map[string]map[string]string{} // selector → property → value
	var faults []string
	for _, m := range cssRule.FindAllStringSubmatch(css, -1) {
		for _, sel := range strings.Split(m[1], ",") {
			sel = strings.TrimSpace(sel)
			decls[sel] = map[string]string{}
			for _, d := range strings.Split(m[2], ";") {
				prop, value, ok := strings.Cut(d, ":")
				if !ok {
					continue
				}
				prop, value = strings.TrimSpace(prop), strings.TrimSpace(value)
				decls[sel][prop] = value
				faults = append(faults, declarationFaults(sel, prop, value)...)
			}
		}
	}
	if t := decls["table"]; t["table-layout"] != "fixed" || t["width"] != "100%" {
		faults = append(faults, "the scenario table is not laid out as shares of the page (table-layout: fixed; width: 100%)")
	}
	if decls["col.name"]["width"] == "" || !strings.HasSuffix(decls["col.name"]["width"], "%") {
		faults = append(faults, "the scenario column's width is not a share of the table")
	}
	if decls[".bar span"]["overflow-wrap"] != "anywhere" || decls[".bar span"]["min-width"] != "0" {
		faults = append(faults, "a bar's label cannot wrap inside its column (overflow-wrap: anywhere; min-width: 0)")
	}
	if decls[".track"]["min-width"] != "0" {
		faults = append(faults, "a bar's track can grow past its column (min-width: 0)")
	}
	return append(faults, markupFaults(page, scenarios)...)
}

// declarationFaults checks one declaration: no text kept from wrapping, no box wider
// than a swatch by a length of its own, and horizontal space around the page that
// leaves it most of the window.
func declarationFaults(sel, prop, value string) []string {
	var faults []string
	if prop == "white-space" && value != "normal" {
		faults = append(faults, sel+" keeps its text from wrapping ("+prop+": "+value+")")
	}
	if widthProperties[prop] {
		for _, l := range cssLength.FindAllStringSubmatch(value, -1) {
			if px := lengthPx(l); px > maxFixedPx {
				faults = append(faults, sel+" has a fixed width ("+prop+": "+value+")")
			}
		}
	}
	if sel == "body" && (prop == "margin" || prop == "padding") {
		total := 0.0
		for _, l := range cssLength.FindAllStringSubmatch(value, -1) {
			total += lengthPx(l)
		}
		if total > 128 {
			faults = append(faults, "the page's "+prop+" takes too much of the window: "+value)
		}
	}
	return faults
}

// lengthPx is a CSS length in pixels; a unit relative to the window counts as all of it.
func lengthPx(l []string) float64 {
	v, _ := strconv.ParseFloat(l[1], 64)
	switch l[2] {
	case "em", "rem":
		return v * emPx
	case "ch", "ex":
		return v * emPx / 2
	case "vw":
		return v * 1280 / 100
	}
	return v // px, and the print units, which no screen page should use anyway
}

// markupFaults checks the page's elements: every inline style a share of at most all
// of its track, no element sized in pixels by attribute, and a column for each chart.
func markupFaults(page string, scenarios int) []string {
	var faults []string
	for _, m := range styleAttr.FindAllStringSubmatch(page, -1) {
		share := shareStyle.FindStringSubmatch(m[1])
		if share == nil {
			faults = append(faults, "an element is styled other than as a share of its parent: "+m[0])
			continue
		}
		if v, err := strconv.ParseFloat(share[1], 64); err != nil || v < 0 || v > 100 {
			faults = append(faults, "a bar is wider than its track: "+m[0])
		}
	}
	if m := sizeAttr.FindString(page); m != "" {
		faults = append(faults, "an element is sized in pixels: "+m)
	}
	if cols, charts := len(chartColumn.FindAllString(page, -1)), len(metrics); cols != charts {
		faults = append(faults, "the scenario table has "+strconv.Itoa(cols)+" chart columns for "+strconv.Itoa(charts)+" charts")
	}
	if rows := strings.Count(page, `<td class="name">`); rows != scenarios {
		faults = append(faults, "the scenario table has "+strconv.Itoa(rows)+" rows for "+strconv.Itoa(scenarios)+" scenarios")
	}
	return faults
}
