package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/audit"
	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/sim"
	"github.com/ledger-dev/ledger/internal/store"
	"github.com/ledger-dev/ledger/internal/testenv"
)

func clocked(t *testing.T, env *testenv.DynamoDB, policy cuenta.FundsPolicy, c *sim.Clock) *store.Ledger {
	t.Helper()
	return testenv.Ledger(t, env, policy, c.Now)
}

func retenido(t *testing.T, env *testenv.DynamoDB, cta string) (saldo, held string) {
	t.Helper()
	c, err := store.NewReader(env.Client, env.Table()).Cuenta(context.Background(), cta)
	if err != nil {
		t.Fatal(err)
	}
	return c.Saldo.String(), c.Retenido().String()
}

func TestAHoldReservesFundsUntilItIsCapturedOrReleased(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	c := newClock()
	svc := clocked(t, env, cuenta.Retry, c)
	week := c.Now().Add(7 * 24 * time.Hour)
	apply(t, svc, mov(t, "a", "H", movimiento.Abono, "100.00"))

	if r := apply(t, svc, hold(t, "aut-1", "H", "30.00", week)); r.Outcome != store.Applied || r.Estado != movimiento.Retenida || r.Seq != 0 {
		t.Fatalf("hold = %+v, want applied, retenida, no seq", r)
	}
	if s, h := retenido(t, env, "H"); s != "100" || h != "30" {
		t.Fatalf("after the hold: saldo %s, retenido %s; want 100 and 30", s, h)
	}
	if r := apply(t, svc, mov(t, "b", "H", movimiento.Cargo, "70.01")); !errors.Is(r.Err, cuenta.SaldoInsuficiente) {
		t.Fatalf("a cargo beyond disponible = %+v, want refused", r)
	}
	if r := apply(t, svc, settleHold(t, movimiento.Captura, "cap-1", "H", "aut-1", "25.00")); r.Outcome != store.Applied || r.Seq != 2 || r.SaldoTras.String() != "75" {
		t.Fatalf("partial capture = %+v, want applied as seq 2 at 75", r)
	}
	if s, h := retenido(t, env, "H"); s != "75" || h != "0" {
		t.Errorf("after the capture: saldo %s, retenido %s; want 75 and 0 (the rest released)", s, h)
	}
	h := get(t, env, "CUENTA#H", "MOV#aut-1")
	if h.str("estado") != "capturada" || h.str("capturada_por") != "cap-1" {
		t.Errorf("hold item = %v, want capturada by cap-1", h)
	}
	if cap := get(t, env, "CUENTA#H", "MOV#cap-1"); cap.str("tipo") != "cargo" || cap.str("retencion") != "aut-1" || cap.num("importe").String() != "25" {
		t.Errorf("capture item = %v", cap)
	}

	apply(t, svc, hold(t, "aut-2", "H", "40.00", week))
	if r := apply(t, svc, settleHold(t, movimiento.Liberacion, "lib-2", "H", "aut-2", "")); r.Outcome != store.Applied {
		t.Fatalf("release = %+v", r)
	}
	if s, h := retenido(t, env, "H"); s != "75" || h != "0" {
		t.Errorf("after the release: saldo %s, retenido %s; want 75 and 0", s, h)
	}
	if lib := get(t, env, "CUENTA#H", "MOV#lib-2"); lib.str("tipo") != "liberacion" || lib.num("importe").String() != "40" || lib["seq"] != nil {
		t.Errorf("release item = %v, want a liberacion of the 40 it freed, outside the statement", lib)
	}

	// Every message again, and late: duplicates, nothing moves.
	for _, m := range []movimiento.Movimiento{hold(t, "aut-1", "H", "30.00", week), settleHold(t, movimiento.Captura, "cap-1", "H", "aut-1", "25.00"),
		hold(t, "aut-2", "H", "40.00", week), settleHold(t, movimiento.Liberacion, "lib-2", "H", "aut-2", "")} {
		if r := apply(t, svc, m); r.Outcome != store.Duplicate {
			t.Errorf("%s again = %+v, want a duplicate", m.ID, r)
		}
	}
	for name, tc := range map[string]struct {
		m    movimiento.Movimiento
		rule cuenta.Rule
		by   string
	}{
		"a second capture under another id": {settleHold(t, movimiento.Captura, "cap-x", "H", "aut-1", ""), cuenta.YaCapturada, "cap-1"},
		"a capture of a released hold":      {settleHold(t, movimiento.Captura, "cap-y", "H", "aut-2", ""), cuenta.YaLiberada, "lib-2"},
		"a release of a captured hold":      {settleHold(t, movimiento.Liberacion, "lib-z", "H", "aut-1", ""), cuenta.YaCapturada, "cap-1"},
	} {
		if r := apply(t, svc, tc.m); !refusedFor(r, tc.rule) || !strings.HasSuffix(r.Err.Error(), " by "+tc.by) {
			t.Errorf("%s = %+v, want refused: %s by %s", name, r, tc.rule, tc.by)
		}
	}
	assertAccount(t, env, "H", "75", 5, 2)
}

func TestHoldRulesAndExpiry(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	c := newClock()
	svc := clocked(t, env, cuenta.Retry, c)
	apply(t, svc, mov(t, "a", "E", movimiento.Abono, "100.00"))
	hour := c.Now().Add(time.Hour)
	apply(t, svc, hold(t, "aut-1", "E", "60.00", hour))

	if r := apply(t, svc, settleHold(t, movimiento.Captura, "cap-big", "E", "aut-1", "60.01")); !refusedFor(r, cuenta.CapturaExcesiva) {
		t.Errorf("a capture over the hold = %+v, want permanent", r)
	}
	if r := apply(t, svc, settleHold(t, movimiento.Captura, "cap-fine", "E", "aut-1", "10.001")); !errors.Is(r.Err, store.ErrPermanent) || !strings.Contains(r.Err.Error(), "EUR allows at most 2 decimals") {
		t.Errorf("a capture finer than the hold's currency = %+v, want permanent", r)
	}
	for name, tc := range map[string]struct {
		m    movimiento.Movimiento
		want cuenta.Rule
	}{
		"expira in the past":            {hold(t, "aut-p", "E", "1.00", c.Now().Add(-time.Minute)), cuenta.ExpiraPasada},
		"expira a second past 30 days":  {hold(t, "aut-f", "E", "1.00", c.Now().Add(30*24*time.Hour+time.Second)), cuenta.ExpiraLejana},
		"a hold of another":             {settleHold(t, movimiento.Captura, "cap-a", "E", "a", ""), cuenta.NoEsRetencion},
		"another currency's hold":       {mustNew(t, movimiento.Datos{ID: "cap-u", Cuenta: "E", Tipo: movimiento.Captura, Retencion: "aut-1", Importe: "1", Moneda: "USD"}), cuenta.MonedaRetencion},
		"a release in another currency": {mustNew(t, movimiento.Datos{ID: "lib-u", Cuenta: "E", Tipo: movimiento.Liberacion, Retencion: "aut-1", Moneda: "USD"}), cuenta.MonedaRetencion},
	} {
		if r := apply(t, svc, tc.m); !refusedFor(r, tc.want) {
			t.Errorf("%s = %+v, want refused: %s", name, r, tc.want)
		}
	}
	if r := apply(t, svc, settleHold(t, movimiento.Captura, "cap-w", "E", "aut-soon", "")); r.Outcome != store.Failed || !r.Retry() || !errors.Is(r.Err, cuenta.NoRegistrado) {
		t.Errorf("a capture before its hold = %+v, want transient: it may be on its way", r)
	}

	c.Advance(2 * time.Hour) // aut-1 has expired: the next write drops it
	if r := apply(t, svc, settleHold(t, movimiento.Captura, "cap-late", "E", "aut-1", "")); !refusedFor(r, cuenta.Vencida) {
		t.Errorf("a capture after expira = %+v, want refused: expired", r)
	}
	if r := apply(t, svc, mov(t, "b", "E", movimiento.Cargo, "100.00")); r.Outcome != store.Applied {
		t.Fatalf("a cargo of all the funds once the hold lapsed = %+v, want applied", r)
	}
	if s, h := retenido(t, env, "E"); s != "0" || h != "0" {
		t.Errorf("after the write: saldo %s, retenido %s; want the lapsed hold dropped", s, h)
	}
	if r := apply(t, svc, settleHold(t, movimiento.Liberacion, "lib-late", "E", "aut-1", "")); r.Outcome != store.Applied {
		t.Errorf("a release of a lapsed hold = %+v, want applied (it frees nothing)", r)
	}
	report, err := audit.Run(context.Background(), env.Client, env.Table(), audit.Options{Now: c.Now})
	if err != nil || !report.OK {
		t.Errorf("audit = %+v, %v", report, err)
	}
}

// A writer whose clock is past a hold's expira drops the hold and spends the funds it
// freed; a capture planned by a writer whose clock is not there yet waits (transient),
// never taking the account past its limit: after expira it is a debit, until too late.
func TestACaptureOfAHoldAnotherWriterDroppedIsRefused(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	early, late := newClock(), newClock()
	expira := early.Now().Add(time.Hour)
	behind := clocked(t, env, cuenta.Retry, early)
	apply(t, behind, mov(t, "a", "Y", movimiento.Abono, "100.01"))
	apply(t, behind, hold(t, "aut", "Y", "80.00", expira))
	early.AdvanceTo(expira.Add(-time.Millisecond))
	late.AdvanceTo(expira.Add(time.Millisecond))
	if r := apply(t, clocked(t, env, cuenta.Retry, late), mov(t, "b", "Y", movimiento.Cargo, "90.00")); r.Outcome != store.Applied {
		t.Fatalf("a cargo of funds the lapsed hold freed = %+v, want applied", r)
	}
	capture := settleHold(t, movimiento.Captura, "cap", "Y", "aut", "")
	r := apply(t, behind, capture)
	if !r.Retry() || !errors.Is(r.Err, cuenta.RetencionInactiva) {
		t.Errorf("the capture = %+v, want transient: the account no longer holds it", r)
	}
	if r.Attempts < 2 {
		t.Errorf("the capture tried %d transactions, want its hold's record read again and the capture decided again", r.Attempts)
	}
	// Sent before expira, redelivered after it: in time, but the hold has lapsed and its
	// funds are spent, so it is a debit that waits for funds, until too late.
	sent := store.Entrega{Mov: capture, Enviado: expira.Add(-time.Millisecond)}
	early.AdvanceTo(expira.Add(time.Minute))
	if r := behind.Apply(context.Background(), []store.Entrega{sent})[0]; !r.Retry() || !errors.Is(r.Err, cuenta.SaldoInsuficiente) {
		t.Errorf("the capture redelivered after expira = %+v, want transient: a debit beyond the funds", r)
	}
	early.AdvanceTo(expira.Add(cuenta.GraciaCaptura))
	if r := behind.Apply(context.Background(), []store.Entrega{sent})[0]; !refusedFor(r, cuenta.Vencida) {
		t.Errorf("the capture redelivered %v after expira = %+v, want refused: expired", cuenta.GraciaCaptura, r)
	}
	if s, h := retenido(t, env, "Y"); s != "10.01" || h != "0" {
		t.Errorf("saldo %s retenido %s, want 10.01 and 0: the capture moved nothing", s, h)
	}
}

// afterGet is the table as a writer meets it while another works: right after the
// writer reads the item whose sort key is sk, the other moves on (then, once).
type afterGet struct {
	*dynamodb.Client
	sk   string
	then func()
}

func (a *afterGet) GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	out, err := a.Client.GetItem(ctx, in, opts...)
	if sk, _ := in.Key["sk"].(*types.AttributeValueMemberS); sk != nil && sk.Value == a.sk && a.then != nil {
		a.then()
		a.then = nil
	}
	return out, err
}

// A capture that read its hold's record just before a release settled it loses the race
// in the same call: it is refused, naming the release, and its batch does not fail.
func TestACaptureThatLostARaceNamesTheWinner(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	c := newClock()
	setup := clocked(t, env, cuenta.Retry, c)
	apply(t, setup, mov(t, "a", "W", movimiento.Abono, "100.00"))
	apply(t, setup, hold(t, "aut", "W", "40.00", c.Now().Add(time.Hour)))
	db := &afterGet{Client: env.Client, sk: "MOV#aut", then: func() {
		if r := apply(t, clocked(t, env, cuenta.Retry, c), settleHold(t, movimiento.Liberacion, "lib", "W", "aut", "")); r.Outcome != store.Applied {
			t.Fatalf("the release = %+v, want applied", r)
		}
	}}
	loser, err := store.New(db, store.Config{Table: env.Table(), InsufficientFunds: cuenta.Retry, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	r := apply(t, loser, settleHold(t, movimiento.Captura, "cap", "W", "aut", ""))
	if !refusedFor(r, cuenta.YaLiberada) || !strings.Contains(r.Err.Error(), "already released by lib") {
		t.Errorf("the capture = %+v, want refused: already released by lib", r)
	}
	if s, h := retenido(t, env, "W"); s != "100" || h != "0" {
		t.Errorf("saldo %s retenido %s, want 100 and 0: the capture moved nothing", s, h)
	}
}

func mustNew(t *testing.T, d movimiento.Datos) movimiento.Movimiento {
	t.Helper()
	m, err := movimiento.New(d)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// A settlement that arrives before its hold waits; one that arrives after it, in the
// same batch, settles it: the hold written by an earlier round is read again.
func TestASettlementAfterItsHoldInOneBatchSettlesIt(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	c := newClock()
	svc := clocked(t, env, cuenta.Retry, c)
	apply(t, svc, mov(t, "a", "B", movimiento.Abono, "100.00"))
	batch := []store.Entrega{
		{Mov: settleHold(t, movimiento.Captura, "cap", "B", "aut", ""), Origen: "m1"},
		{Mov: hold(t, "aut", "B", "30.00", c.Now().Add(time.Hour)), Origen: "m2"},
		{Mov: settleHold(t, movimiento.Liberacion, "lib", "B", "aut", ""), Origen: "m3"},
	}
	rs := svc.Apply(context.Background(), batch)
	if !errors.Is(rs[0].Err, cuenta.NoRegistrado) || rs[1].Outcome != store.Applied || rs[2].Outcome != store.Applied {
		t.Fatalf("results = %+v, want the capture waiting, the hold and its release applied", rs)
	}
	if s, h := retenido(t, env, "B"); s != "100" || h != "0" {
		t.Errorf("saldo %s retenido %s, want 100 and 0", s, h)
	}
}

func TestAFrozenAccountTakesNoNewHoldButCapturesItsOwn(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	c := newClock()
	svc := clocked(t, env, cuenta.Reject, c)
	apply(t, svc, mov(t, "a", "Z", movimiento.Abono, "50.00"))
	apply(t, svc, hold(t, "aut-1", "Z", "20.00", c.Now().Add(time.Hour)))
	if _, _, err := svc.Administrar(context.Background(), "Z", bloqueada(true)); err != nil {
		t.Fatal(err)
	}
	if r := apply(t, svc, hold(t, "aut-2", "Z", "1.00", c.Now().Add(time.Hour))); r.Outcome != store.Rejected || r.Motivo != "cuenta Z: bloqueada: it takes no debit while frozen" {
		t.Errorf("a new hold of a frozen account under reject = %+v, want rejected: cuenta bloqueada", r)
	}
	if r := apply(t, svc, settleHold(t, movimiento.Captura, "cap-1", "Z", "aut-1", "")); r.Outcome != store.Applied {
		t.Errorf("capturing a hold taken before the freeze = %+v, want applied", r)
	}
	if s, h := retenido(t, env, "Z"); s != "30" || h != "0" {
		t.Errorf("saldo %s retenido %s, want 30 and 0", s, h)
	}
}

// A capture and a release of one hold race on two consumers: one wins, the other is
// refused naming the winner, and money moves at most once.
func TestCaptureAndReleaseRace(t *testing.T) {
	for round := range 4 {
		env := testenv.NewDynamoDB(t)
		c := newClock()
		setup := clocked(t, env, cuenta.Retry, c)
		apply(t, setup, mov(t, "a", "R", movimiento.Abono, "100.00"))
		apply(t, setup, hold(t, "aut", "R", "40.00", c.Now().Add(time.Hour)))
		msgs := []movimiento.Movimiento{settleHold(t, movimiento.Captura, "cap", "R", "aut", ""), settleHold(t, movimiento.Liberacion, "lib", "R", "aut", "")}
		results := make([]store.Result, 2)
		var wg sync.WaitGroup
		for i := range msgs {
			svc := clocked(t, env, cuenta.Retry, c)
			wg.Add(1)
			go func() { defer wg.Done(); results[i] = apply(t, svc, msgs[i]) }()
		}
		wg.Wait()
		winner := -1
		for i, r := range results {
			if r.Outcome == store.Applied {
				winner = i
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: %+v, want one applied", round, results)
		}
		loser := results[1-winner]
		want := map[int]cuenta.Rule{0: cuenta.YaCapturada, 1: cuenta.YaLiberada}[winner]
		if !refusedFor(loser, want) || !strings.HasSuffix(loser.Err.Error(), " by "+msgs[winner].ID) {
			t.Fatalf("round %d: loser = %+v, want refused: %s by %s", round, loser, want, msgs[winner].ID)
		}
		s, h := retenido(t, env, "R")
		if want := map[int]string{0: "60", 1: "100"}[winner]; s != want || h != "0" {
			t.Fatalf("round %d: saldo %s retenido %s after %s won; want %s and 0", round, s, h, msgs[winner].ID, want)
		}
	}
}

func TestAnAccountHoldsAtMost200(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	c := newClock()
	svc := clocked(t, env, cuenta.Retry, c)
	apply(t, svc, mov(t, "a", "M", movimiento.Abono, "1000.00"))
	var batch []store.Entrega
	for i := range cuenta.MaxRetenciones + 1 {
		batch = append(batch, store.Entrega{Mov: hold(t, fmt.Sprintf("aut-%03d", i), "M", "1.00", c.Now().Add(time.Hour))})
	}
	results := svc.Apply(context.Background(), batch)
	for i, r := range results[:cuenta.MaxRetenciones] {
		if r.Outcome != store.Applied {
			t.Fatalf("hold %d = %+v", i, r)
		}
	}
	if r := results[cuenta.MaxRetenciones]; !refusedFor(r, cuenta.DemasiadasRetenciones) {
		t.Fatalf("hold 201 = %+v, want permanent: too many active holds", r)
	}
	if _, h := retenido(t, env, "M"); !decimal.RequireFromString(h).Equal(decimal.NewFromInt(int64(cuenta.MaxRetenciones))) {
		t.Errorf("retenido %s, want %d", h, cuenta.MaxRetenciones)
	}
}

// An importe that omits its moneda is in the currency of the record it refers to, and is
// held to its decimals as a message naming it would be: "15.000" is refused for a EUR
// hold or original, with moneda or without.
func TestAnImporteWithoutMonedaKeepsItsRecordsDecimals(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	c := newClock()
	svc := clocked(t, env, cuenta.Retry, c)
	apply(t, svc, mov(t, "a", "D", movimiento.Abono, "100.00"))
	apply(t, svc, mov(t, "pago", "D", movimiento.Cargo, "30.00"))
	apply(t, svc, hold(t, "aut", "D", "20.00", c.Now().Add(time.Hour)))
	for _, m := range []movimiento.Movimiento{
		settleHold(t, movimiento.Captura, "cap", "D", "aut", "15.000"),
		anulacion(t, "an", "D", "pago", "30.000", ""),
	} {
		if r := apply(t, svc, m); !errors.Is(r.Err, movimiento.ErrInvalid) || !strings.Contains(r.Err.Error(), "EUR allows at most 2 decimals") {
			t.Errorf("%s = %+v, want refused: EUR allows at most 2 decimals", m.ID, r)
		}
	}
	if s, h := retenido(t, env, "D"); s != "70" || h != "20" {
		t.Errorf("saldo %s retenido %s, want 70 and 20: nothing moved", s, h)
	}
}
