package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/consumer"
	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/sim"
	"github.com/ledger-dev/ledger/internal/store"
	"github.com/ledger-dev/ledger/internal/testenv"
)

// A thousand movements of four accounts, with transfers, reversals and holds captured,
// released or left to lapse, go through the real consumer on an at-least-once queue,
// a simulated second between batches. For each account, and periods from its start,
// in its middle and to its end, the CSV statement opens with the balance before the
// period, closes with the balance after it, and opening plus the movements is the
// closing balance; the JSON statement says the same; the closing balance of a period
// running to now is the account's.
func TestExtractoAddsUpOverAThousandMovements(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	clock := sim.NewClock()
	w, err := sim.Generate(sim.Spec{Accounts: 4, Movements: 1000, Seed: 11, Transfers: 0.2, Reversals: 0.1, Holds: 0.2, Now: clock.Now()})
	if err != nil {
		t.Fatal(err)
	}
	applied := consumeWorkload(t, env, clock, w)
	third := applied / 3
	t1, t2 := sim.Epoch.Add(third), sim.Epoch.Add(2*third)
	seen := map[string]int{} // what the statements showed, by kind
	for cta := range w.Saldos {
		for _, p := range []struct{ desde, hasta time.Time }{{time.Time{}, t1}, {t1, t2}, {t2, time.Time{}}} {
			rows := extractoCSV(t, env, cta, p.desde, p.hasta)
			opening, closing, sum := checkCSV(t, cta, rows, seen)
			if len(rows) < 3+10 || !p.desde.IsZero() && opening.IsZero() {
				t.Errorf("%s %v–%v: %d movements from %s: want a period of some, after others", cta, p.desde, p.hasta, len(rows)-3, opening)
			}
			if !opening.Add(sum).Equal(closing) {
				t.Errorf("%s %v–%v: opening %s + movements %s = %s, closing %s", cta, p.desde, p.hasta, opening, sum, opening.Add(sum), closing)
			}
			doc := extractoJSON(t, env, cta, p.desde, p.hasta)
			if len(doc.Movimientos) != len(rows)-3 || doc.SaldoInicial.Saldo != rows[1][6] || doc.SaldoFinal.Saldo != rows[len(rows)-1][6] {
				t.Errorf("%s %v–%v: JSON %d movements %s → %s; CSV %d rows %s → %s", cta, p.desde, p.hasta,
					len(doc.Movimientos), doc.SaldoInicial.Saldo, doc.SaldoFinal.Saldo, len(rows)-3, rows[1][6], rows[len(rows)-1][6])
			}
			if p.hasta.IsZero() && !closing.Equal(w.Saldos[cta]) {
				t.Errorf("%s: closing balance %s, want the account's %s", cta, closing, w.Saldos[cta])
			}
		}
	}
	for _, kind := range []string{"contrapartida", "anula", "anulado_por", "retencion"} {
		if seen[kind] == 0 {
			t.Errorf("no statement showed a movement with %s: the workload no longer covers it", kind)
		}
	}
	t.Logf("movements shown, by what they refer to: %v", seen)
}

// consumeWorkload runs w through the real consumer: every delivery, then, once the
// clock has passed the holds that lapse, its tail; two consumers, a simulated second
// between batches, so that movements are applied over some minutes. It returns how
// long the deliveries took, from sim.Epoch.
func consumeWorkload(t *testing.T, env *testenv.DynamoDB, clock *sim.Clock, w sim.Workload) time.Duration {
	t.Helper()
	l, err := store.New(env.Client, store.Config{Table: env.Table(), InsufficientFunds: cuenta.Retry, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	h := consumer.New(l, consumer.Options{Logger: slog.New(slog.DiscardHandler), Now: clock.Now})
	// A message that comes back waits out a visibility timeout, as on SQS: a settlement
	// delivered long before its hold (the order is shuffled) is not spent on retries
	// before the hold arrives.
	q := sim.NewQueue(sim.QueueOptions{Clock: clock, Step: time.Second, Visibility: time.Minute})
	s := sim.Deliveries(w, sim.Mix{}, 11)
	handle := func(ctx context.Context, _ int, batch []events.SQSMessage) map[string]bool {
		return h.Settle(ctx, batch)
	}
	var took time.Duration
	for i, phase := range [][]sim.Message{s.Deliveries, s.Tail} {
		if i == 1 {
			took = clock.Now().Sub(sim.Epoch)
			if clock.Now().Before(w.Lapse) {
				clock.AdvanceTo(w.Lapse)
			}
		}
		q.Send(phase...)
		if err := q.Drain(context.Background(), 2, consumer.MaxBatch, handle); err != nil {
			t.Fatal(err)
		}
	}
	if dead := q.Dead(); len(dead) > 0 {
		t.Fatalf("%d messages dead, such as %s", len(dead), dead[0].Body)
	}
	return took
}

// extractoCSV runs ledger extracto --csv on the period and parses what it wrote.
func extractoCSV(t *testing.T, env *testenv.DynamoDB, cta string, desde, hasta time.Time) [][]string {
	t.Helper()
	out := runExtractoOK(t, env, cta, desde, hasta, "--csv")
	if !strings.HasSuffix(out, "\r\n") {
		t.Errorf("%s: CSV lines end %q, want RFC 4180's CRLF", cta, out[len(out)-min(len(out), 2):])
	}
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatalf("%s: the CSV does not parse: %v\n%s", cta, err, out)
	}
	if len(rows) < 3 || strings.Join(rows[0], ",") != "aplicado,seq,id,tipo,concepto,importe,saldo_tras,moneda,contrapartida,anula,anulado_por,retencion,fecha" ||
		rows[1][3] != "saldo_inicial" || rows[len(rows)-1][3] != "saldo_final" {
		t.Fatalf("%s: CSV %v, want a header, a saldo_inicial row, the movements, a saldo_final row", cta, rows[:min(len(rows), 3)])
	}
	return rows
}

// extractoDoc is what ledger extracto --json writes.
type extractoDoc struct {
	Cuenta, Moneda, Desde, Hasta string
	SaldoInicial                 struct{ Saldo string } `json:"saldo_inicial"`
	SaldoFinal                   struct{ Saldo string } `json:"saldo_final"`
	Movimientos                  []struct{ ID, Importe string }
}

func extractoJSON(t *testing.T, env *testenv.DynamoDB, cta string, desde, hasta time.Time) extractoDoc {
	t.Helper()
	var doc extractoDoc
	if err := json.Unmarshal([]byte(runExtractoOK(t, env, cta, desde, hasta, "--json")), &doc); err != nil || doc.Cuenta != cta {
		t.Fatalf("%s: JSON %+v: %v", cta, doc, err)
	}
	return doc
}

func runExtractoOK(t *testing.T, env *testenv.DynamoDB, cta string, desde, hasta time.Time, format string) string {
	t.Helper()
	args := []string{"extracto", cta, format, "--endpoint", env.Endpoint, "--table", env.Table()}
	if !desde.IsZero() {
		args = append(args, "--desde", desde.Format(time.RFC3339Nano))
	}
	if !hasta.IsZero() {
		args = append(args, "--hasta", hasta.Format(time.RFC3339Nano))
	}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), args, &stdout, &stderr); code != 0 || !strings.Contains(stderr.String(), " movements, credits ") {
		t.Fatalf("%v: exit %d, stderr %q", args, code, stderr.String())
	}
	return stdout.String()
}

// checkCSV reads a statement's rows: its opening and closing balances and the sum of
// its signed amounts. Each row's saldo_tras is the one before plus its importe, its seq
// the next, and a debit's importe is negative; seen counts the references shown.
func checkCSV(t *testing.T, cta string, rows [][]string, seen map[string]int) (opening, closing, sum decimal.Decimal) {
	t.Helper()
	opening, closing = decimal.RequireFromString(rows[1][6]), decimal.RequireFromString(rows[len(rows)-1][6])
	balance, seq := opening, rows[1][1]
	for _, r := range rows[2 : len(rows)-1] {
		importe, saldo := decimal.RequireFromString(r[5]), decimal.RequireFromString(r[6])
		if want := decimal.RequireFromString(seq).Add(decimal.NewFromInt(1)); !decimal.RequireFromString(r[1]).Equal(want) || !balance.Add(importe).Equal(saldo) {
			t.Fatalf("%s: row %v does not follow seq %s at %s", cta, r, seq, balance)
		}
		if (r[3] == string(movimiento.Cargo)) != (importe.Sign() < 0) || r[7] != "EUR" {
			t.Errorf("%s: row %v: a cargo's importe is negative, an abono's positive, in EUR", cta, r)
		}
		for i, kind := range []string{"contrapartida", "anula", "anulado_por", "retencion"} {
			if r[8+i] != "" {
				seen[kind]++
			}
		}
		balance, seq, sum = saldo, r[1], sum.Add(importe)
	}
	if !balance.Equal(closing) || rows[len(rows)-1][1] != seq {
		t.Errorf("%s: the last movement leaves %s at seq %s, the closing row says %s at seq %s", cta, balance, seq, closing, rows[len(rows)-1][1])
	}
	return opening, closing, sum
}

// validate names the first thing wrong: the account, --desde, --hasta, their order,
// --csv with --json, then where the table is.
func TestExtractoValidate(t *testing.T) {
	testValidate(t, newExtractoCmd, []validateCase{
		{[]string{"ES76"}, ""},
		{[]string{"--desde", "2026-11-01", "ES76", "--hasta", "2026-12-01T00:00:00+01:00", "--csv"}, ""},
		{[]string{"--json", "--hasta", "2026-12-01t00:00:00z", "ES76"}, ""},
		{[]string{"--desde", "ayer"}, "give the account: ledger extracto CUENTA"},
		{[]string{"ES76", "--desde", "ayer", "--csv", "--json"}, `--desde must be an RFC 3339 date-time such as 2026-11-30T23:59:59Z or a date such as 2026-12-01, not "ayer"`},
		{[]string{"ES76", "--hasta", "2026-13-01"}, `--hasta must be an RFC 3339 date-time`},
		{[]string{"ES76", "--desde", "2026-12-01", "--hasta", "2026-12-01"}, "--hasta 2026-12-01 must be later than --desde 2026-12-01"},
		{[]string{"ES76", "--desde", "2026-12-01T01:00:00+01:00", "--hasta", "2026-12-01"}, "--hasta 2026-12-01 must be later than --desde"},
		{[]string{"ES76", "--csv", "--json", "--table", "ab"}, "give --csv or --json, not both"},
		{[]string{"ES76", "--endpoint", "x"}, `--endpoint: awsconf: endpoint "x"`},
	})
}

// What goes wrong once the command runs is one line on stderr, exit 1; a stray argument
// is a usage error, exit 2.
func TestExtractoFailsInOneLine(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"NADIE"}, 1, "ledger extracto: account NADIE not found\n"},
		{[]string{"ES76", "--desde", time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}, 2, "ledger extracto: --desde "},
		{[]string{"ES76", "ES77"}, 2, `ledger extracto: unexpected argument "ES77"`},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), append(append([]string{"extracto"}, tc.args...), "--endpoint", env.Endpoint, "--table", env.Table()), &stdout, &stderr)
		if code != tc.code || !strings.HasPrefix(stderr.String(), tc.says) || stdout.Len() != 0 {
			t.Errorf("%q: exit %d, stderr %q, stdout %q; want %d and %q", tc.args, code, stderr.String(), stdout.String(), tc.code, tc.says)
		}
	}
}
