package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ledger-dev/ledger/internal/api"
	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/events"
	"github.com/ledger-dev/ledger/internal/items"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/store"
	"github.com/ledger-dev/ledger/internal/testenv"
	"github.com/ledger-dev/ledger/internal/versioned"
)

// report is what a run's subscriber saw: the events received, those left once
// repeats are dropped by event_id, by estado, and the gaps (facts of the table not
// announced; always 0 when the run passes).
type report struct {
	Received, Unique, Repeats, Gaps int
	ByEstado                        map[string]int
}

func (r report) String() string {
	var parts []string
	for _, e := range slices.Sorted(maps.Keys(r.ByEstado)) {
		parts = append(parts, fmt.Sprintf("%s %d", e, r.ByEstado[e]))
	}
	return fmt.Sprintf("%d events received, %d unique (%s), %d repeats, gaps: %d", r.Received, r.Unique, strings.Join(parts, ", "), r.Repeats, r.Gaps)
}

// key names a fact an event announces: (cuenta, id, estado).
type key struct{ cuenta, id, estado string }

// verify holds what the subscriber of every event received to the table and the API:
// each event valid against the contract and from the ledger about this table; a
// repeat identical to its first publication; for every account, its aplicado events,
// repeats dropped, exactly seq 1..n with the ids, amounts and balances its statement
// shows and n and the last balance its account shows; every rejection, hold taken,
// captured, released or lapsed in the table announced, and nothing it does not hold;
// every administration announced; and the documented rule's queue exactly the aplicado
// events of its prefix.
func (e *e2e) verify(t *testing.T, wr written) report {
	t.Helper()
	unique, r := e.unique(t, e.received(t, e.all))
	api := api.New(store.NewReader(e.env.Client, e.env.Table()), nil)
	for _, c := range accounts(wr.Workload) {
		r.Gaps += checkStatement(t, api, c, unique)
	}
	r.Gaps += e.checkFacts(t, unique, wr.Admin)
	some, _ := e.unique(t, e.received(t, e.some))
	for k := range some {
		if k.estado != string(movimiento.Aplicado) || !strings.HasPrefix(k.cuenta, e.prefix) {
			t.Errorf("the documented rule routed %v, not an aplicado event of %s…", k, e.prefix)
		}
	}
	for k := range unique {
		if _, ok := some[k]; !ok && k.estado == string(movimiento.Aplicado) && strings.HasPrefix(k.cuenta, e.prefix) {
			t.Errorf("the documented rule did not route %v", k)
		}
	}
	return r
}

// unique reads the events received, checks each, and keeps one of each fact.
func (e *e2e) unique(t *testing.T, got []envelope) (map[key]events.Detail, report) {
	t.Helper()
	schema := testenv.LoadEventSchema(t)
	unique := map[key]events.Detail{}
	r := report{Received: len(got), ByEstado: map[string]int{}}
	for _, env := range got {
		schema.Check(t, env.DetailType, env.Detail)
		if env.Source != events.Source || len(env.Resources) != 1 || !strings.HasSuffix(env.Resources[0], ":table/"+e.env.Table()) {
			t.Errorf("event from %q about %v, want from ledger about the table %s", env.Source, env.Resources, e.env.Table())
		}
		var d events.Detail
		if err := json.Unmarshal(env.Detail, &d); err != nil {
			t.Fatal(err)
		}
		id := d.ID
		if d.Estado == events.Administrada {
			id = fmt.Sprint(d.Version)
		}
		k := key{d.Cuenta, id, d.Estado}
		if d.EventID != events.EventID(k.cuenta, k.id, k.estado) {
			t.Errorf("event %s: event_id %s is not its fact's", env.Detail, d.EventID)
		}
		if first, seen := unique[k]; seen {
			r.Repeats++
			if !reflect.DeepEqual(first, d) {
				t.Errorf("fact %v published with two contents:\n%+v\n%+v", k, first, d)
			}
			continue
		}
		unique[k] = d
		r.ByEstado[d.Estado]++
	}
	r.Unique = len(unique)
	return unique, r
}

// checkStatement holds account c's aplicado events to what the API shows: exactly
// seq 1..n, each its statement's line, n its movimientos and the last balance its
// saldo. It returns the gaps.
func checkStatement(t *testing.T, h http.Handler, c string, unique map[key]events.Detail) int {
	t.Helper()
	var posted []events.Detail
	for k, d := range unique {
		if k.cuenta == c && k.estado == string(movimiento.Aplicado) {
			posted = append(posted, d)
		}
	}
	slices.SortFunc(posted, func(a, b events.Detail) int { return int(a.Seq - b.Seq) })
	var acct api.CuentaBody
	if code := get(t, h, "/cuentas/"+c, &acct); code == http.StatusNotFound {
		if len(posted) > 0 {
			t.Errorf("%s: %d aplicado events for an account the API does not know", c, len(posted))
		}
		return 0
	}
	statement := statementOf(t, h, c)
	for i, d := range posted {
		if d.Seq != int64(i+1) {
			t.Errorf("%s: aplicado events, repeats dropped, have seq %d at %d: not exactly 1..n", c, d.Seq, i+1)
			break
		}
		line := statement[d.Seq]
		if line.ID != d.ID || line.SaldoTras != d.SaldoTras || line.Importe != d.Importe || line.Tipo != d.Tipo {
			t.Errorf("%s seq %d: event %s %s %s saldo_tras %s; the statement shows %+v", c, d.Seq, d.ID, d.Tipo, d.Importe, d.SaldoTras, line)
		}
	}
	gaps := int(acct.Movimientos) - len(posted)
	if gaps != 0 {
		t.Errorf("%s: %d aplicado events, the API counts %d movimientos", c, len(posted), acct.Movimientos)
	}
	if n := len(posted); n > 0 && posted[n-1].SaldoTras != acct.Saldo {
		t.Errorf("%s: the last event's saldo_tras %s, the API's saldo %s", c, posted[n-1].SaldoTras, acct.Saldo)
	}
	return max(gaps, 0)
}

// line is a statement line as the API shows it.
type line struct {
	ID, Tipo, Importe string
	Seq               int64
	SaldoTras         string `json:"saldo_tras"`
}

// statementOf is account c's whole statement from the API, by seq, page by page.
func statementOf(t *testing.T, h http.Handler, c string) map[int64]line {
	t.Helper()
	out := map[int64]line{}
	for cursor, pages := "", 0; pages == 0 || cursor != ""; pages++ {
		var page struct {
			Movimientos []line
			Cursor      string
		}
		get(t, h, "/cuentas/"+c+"/movimientos?limit=50"+cursor, &page)
		for _, l := range page.Movimientos {
			out[l.Seq] = l
		}
		cursor = ""
		if page.Cursor != "" {
			cursor = "&cursor=" + url.QueryEscape(page.Cursor)
		}
	}
	return out
}

// get asks the API for path and reads a 200's body into out; it returns the status.
func get(t *testing.T, h http.Handler, path string, out any) int {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
	if w.Code == http.StatusOK {
		if err := json.Unmarshal(w.Body.Bytes(), out); err != nil {
			t.Fatal(err)
		}
	} else if w.Code != http.StatusNotFound {
		t.Fatalf("GET %s: %d %s", path, w.Code, w.Body)
	}
	return w.Code
}

// checkFacts holds the events other than aplicado to the table: every rejection, hold
// taken, captured and released its records hold, and every hold its account dropped as
// lapsed (still retenida, no longer held), is announced; no event announces what the
// table does not hold, but a hold released after it lapsed, which may be announced
// expirada too; the administrations number admin. It returns the gaps.
func (e *e2e) checkFacts(t *testing.T, unique map[key]events.Detail, admin int) int {
	t.Helper()
	want, released := e.facts(t)
	gaps := 0
	for k := range want {
		if _, ok := unique[k]; !ok {
			t.Errorf("not announced: %v", k)
			gaps++
		}
	}
	administered := 0
	for k := range unique {
		switch {
		case k.estado == events.Administrada:
			administered++
		case want[k], k.estado == string(movimiento.Aplicado):
		case k.estado == string(movimiento.Expirada) && released[key{k.cuenta, k.id, ""}]:
		default:
			t.Errorf("announced what the table does not hold: %v", k)
		}
	}
	if administered != admin {
		t.Errorf("%d administrations announced, %d made", administered, admin)
	}
	return gaps
}

// facts are the non-aplicado facts the table holds, and the holds released (keyed
// without estado).
func (e *e2e) facts(t *testing.T) (want, released map[key]bool) {
	t.Helper()
	want, released = map[key]bool{}, map[key]bool{}
	holding := map[string]cuenta.Cuenta{}
	var holds []movimiento.Apunte
	for _, item := range e.scan(t) {
		if text(item[items.AttrSK]) == items.CuentaSK {
			c, _, err := items.DecodeCuenta(item)
			if err != nil {
				t.Fatal(err)
			}
			holding[c.ID] = c
			continue
		}
		a, err := items.DecodeApunte(item)
		if err != nil {
			t.Fatal(err)
		}
		m := a.Movimiento
		switch {
		case a.Estado == movimiento.Rechazado:
			want[key{m.Cuenta, m.ID, string(movimiento.Rechazado)}] = true
		case m.Tipo == movimiento.Retencion:
			want[key{m.Cuenta, m.ID, string(movimiento.Retenida)}] = true
			holds = append(holds, a)
			if a.Estado != movimiento.Retenida {
				want[key{m.Cuenta, m.ID, string(a.Estado)}] = true
			}
			if a.Estado == movimiento.Liberada {
				released[key{m.Cuenta, m.ID, ""}] = true
			}
		}
	}
	for _, h := range holds {
		if _, held := holding[h.Movimiento.Cuenta].Retenciones[h.Movimiento.ID]; h.Estado == movimiento.Retenida && !held {
			want[key{h.Movimiento.Cuenta, h.Movimiento.ID, string(movimiento.Expirada)}] = true
		}
	}
	return want, released
}

// scan is every item of the run's table with a key of the ledger's accounts.
func (e *e2e) scan(t *testing.T) []versioned.Item {
	t.Helper()
	var out []versioned.Item
	in := &dynamodb.ScanInput{TableName: aws.String(e.env.Table()), ConsistentRead: aws.Bool(true)}
	for {
		page, err := e.env.Client.Scan(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		for _, item := range page.Items {
			if strings.HasPrefix(text(item[items.AttrPK]), items.CuentaPK) {
				out = append(out, item)
			}
		}
		if page.LastEvaluatedKey == nil {
			return out
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}

// text is the string av holds, or "".
func text(av types.AttributeValue) string {
	if s, ok := av.(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}
