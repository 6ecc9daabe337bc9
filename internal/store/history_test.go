package store_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/store"
	"github.com/ledger-dev/ledger/internal/testenv"
)

// history is a table where ES76 was opened at fixedNow and took these movements (two
// at 2m, in one transaction, and a hold at 3m, which posts nothing):
//
//	seq 1   0   abono 100.00      100.00
//	seq 2  +2m  cargo  30.00       70.00
//	seq 3  +2m  abono   5.00       75.00
//	seq 4  +3m  traspaso 20.00 to ES91  55.00
//	seq 5  +4m  the cargo reversed 85.00
func history(t *testing.T) (*testenv.DynamoDB, *store.Reader) {
	t.Helper()
	env := testenv.NewDynamoDB(t)
	at := fixedNow
	l := testenv.Ledger(t, env, cuenta.Retry, func() time.Time { return at })
	step := func(d time.Duration, ms ...movimiento.Movimiento) {
		t.Helper()
		at = fixedNow.Add(d)
		var es []store.Entrega
		for _, m := range ms {
			es = append(es, store.Entrega{Mov: m, Origen: "msg-" + m.ID})
		}
		for i, r := range l.Apply(context.Background(), es) {
			if r.Outcome != store.Applied {
				t.Fatalf("%s: %+v", ms[i].ID, r)
			}
		}
	}
	step(0, mov(t, "m-1", "ES76", movimiento.Abono, "100.00"))
	step(2*time.Minute, mov(t, "m-2", "ES76", movimiento.Cargo, "30.00"), mov(t, "m-3", "ES76", movimiento.Abono, "5.00"))
	step(3*time.Minute, hold(t, "h-1", "ES76", "10.00", fixedNow.Add(24*time.Hour)), traspaso(t, "m-4", "ES76", "ES91", "20.00"))
	step(4*time.Minute, anulacion(t, "m-5", "ES76", "m-2", "", ""))
	return env, store.NewReader(env.Client, env.Table())
}

func TestSaldoEnIsTheBalanceAfterTheLastMovementPostedByThen(t *testing.T) {
	env, r := history(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		en    time.Duration // after fixedNow
		seq   int64
		saldo string
		err   error
	}{
		{"before the account was opened", -time.Nanosecond, 0, "", store.ErrNotYetOpen},
		{"the instant of the first", 0, 1, "100", nil},
		{"just before the second", 2*time.Minute - time.Nanosecond, 1, "100", nil},
		{"two posted at one instant: both count", 2 * time.Minute, 3, "75", nil},
		{"a transfer's debit leg, after a hold", 3*time.Minute + time.Second, 4, "55", nil},
		{"long after the last", 24 * time.Hour, 5, "85", nil},
	} {
		got, err := r.SaldoEn(ctx, "ES76", fixedNow.Add(tc.en))
		if tc.err != nil {
			if !errors.Is(err, tc.err) || !strings.Contains(err.Error(), "account ES76") {
				t.Errorf("%s: %+v, %v; want %v naming the account", tc.name, got, err, tc.err)
			}
			continue
		}
		if err != nil || got.Seq != tc.seq || !got.Saldo.Equal(decimal.RequireFromString(tc.saldo)) || got.Moneda != "EUR" || got.Cuenta != "ES76" {
			t.Errorf("%s: %+v, %v; want seq %d, saldo %s EUR", tc.name, got, err, tc.seq, tc.saldo)
			continue
		}
		if tc.seq == 0 {
			continue
		}
		a, err := r.Apunte(ctx, "ES76", []string{"m-1", "m-2", "m-3", "m-4", "m-5"}[tc.seq-1])
		if err != nil || got.Version != a.Version || got.Version == 0 || !got.Aplicado.Equal(a.Aplicado) {
			t.Errorf("%s: version %d at %v, want the movement's %d at %v (%v)", tc.name, got.Version, got.Aplicado, a.Version, a.Aplicado, err)
		}
	}
	if credit, err := r.SaldoEn(ctx, "ES91", fixedNow.Add(3*time.Minute)); err != nil || credit.Seq != 1 || !credit.Saldo.Equal(decimal.NewFromInt(20)) {
		t.Errorf("the transfer's credit leg: %+v, %v; want seq 1, saldo 20", credit, err)
	}
	if _, err := r.SaldoEn(ctx, "ES99", fixedNow.Add(time.Hour)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an unknown account: %v, want ErrNotFound", err)
	}

	// A transfer by a consumer whose clock is behind the debited account's last stamp
	// opens its credited account at its own time, and stamps the leg at the other's:
	// between the two the account was open, with nothing posted.
	behind := testenv.Ledger(t, env, cuenta.Retry, func() time.Time { return fixedNow.Add(time.Minute) })
	if r := apply(t, behind, traspaso(t, "m-6", "ES76", "ES55", "1.00")); r.Outcome != store.Applied {
		t.Fatalf("transfer to a new account: %+v", r)
	}
	if got, err := r.SaldoEn(ctx, "ES55", fixedNow.Add(2*time.Minute)); err != nil || got.Seq != 0 || !got.Saldo.IsZero() || got.Moneda != "EUR" || got.Version != 0 {
		t.Errorf("open, nothing posted yet: %+v, %v; want seq 0, saldo 0 EUR", got, err)
	}
	if _, err := r.SaldoEn(ctx, "ES55", fixedNow.Add(time.Minute-time.Nanosecond)); !errors.Is(err, store.ErrNotYetOpen) {
		t.Errorf("before it was opened: %v, want ErrNotYetOpen", err)
	}
	if got, err := r.SaldoEn(ctx, "ES55", fixedNow.Add(4*time.Minute)); err != nil || got.Seq != 1 || !got.Saldo.Equal(decimal.NewFromInt(1)) {
		t.Errorf("once its leg was posted: %+v, %v; want seq 1, saldo 1", got, err)
	}
}

func TestRangoBoundsTheStatementByAppliedTime(t *testing.T) {
	_, r := history(t)
	ctx := context.Background()
	at := func(m time.Duration) time.Time { return fixedNow.Add(m * time.Minute) }
	for _, tc := range []struct {
		name         string
		desde, hasta time.Time
		newest       []int64 // the stretch, newest first
	}{
		{"the whole statement", time.Time{}, time.Time{}, []int64{5, 4, 3, 2, 1}},
		{"half-open: from desde, up to just before hasta", at(2), at(3), []int64{3, 2}},
		{"until hasta", time.Time{}, at(2), []int64{1}},
		{"until hasta, the first's instant", time.Time{}, at(0), nil},
		{"from desde on", at(3), time.Time{}, []int64{5, 4}},
		{"hasta a nanosecond after the instant", at(2), at(2).Add(time.Nanosecond), []int64{3, 2}},
		{"nothing posted then", at(5), at(6), nil},
		{"before the first", at(-1), at(0), nil},
		{"from before the first", at(-1), at(1), []int64{1}},
	} {
		rango, err := r.Rango(ctx, "ES76", tc.desde, tc.hasta)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var got []int64
		for before := int64(0); ; {
			page, more, err := r.ExtractoRango(ctx, "ES76", 2, rango.Below(before), store.NewestFirst)
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range page {
				got = append(got, a.Seq)
			}
			if !more {
				break
			}
			before = page[len(page)-1].Seq
		}
		if !slices.Equal(got, tc.newest) {
			t.Errorf("%s: %v pages to seqs %v, want %v", tc.name, rango, got, tc.newest)
		}
		oldest, _, err := r.ExtractoRango(ctx, "ES76", 50, rango, store.OldestFirst)
		if err != nil || len(oldest) != len(tc.newest) || len(oldest) > 0 && oldest[0].Seq != tc.newest[len(tc.newest)-1] {
			t.Errorf("%s: oldest first %d movements, %v; want %v reversed", tc.name, len(oldest), err, tc.newest)
		}
	}
}

func TestSeqRangeBelowNarrowsItsTop(t *testing.T) {
	for _, tc := range []struct {
		r     store.SeqRange
		below int64
		want  store.SeqRange
		empty bool
	}{
		{store.SeqRange{}, 0, store.SeqRange{}, false},
		{store.SeqRange{}, 9, store.SeqRange{Before: 9}, false},
		{store.SeqRange{After: 2, Before: 9}, 5, store.SeqRange{After: 2, Before: 5}, false},
		{store.SeqRange{After: 2, Before: 5}, 9, store.SeqRange{After: 2, Before: 5}, false},
		{store.SeqRange{After: 2, Before: 9}, 3, store.SeqRange{After: 2, Before: 3}, true},
		{store.SeqRange{After: 0, Before: 1}, 0, store.SeqRange{Before: 1}, true},
	} {
		got := tc.r.Below(tc.below)
		if got != tc.want || got.Empty() != tc.empty {
			t.Errorf("%+v below %d = %+v (empty %v), want %+v (empty %v)", tc.r, tc.below, got, got.Empty(), tc.want, tc.empty)
		}
	}
}
