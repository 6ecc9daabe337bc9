package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/store"
	"github.com/ledger-dev/ledger/internal/testenv"
	"github.com/shopspring/decimal"
)

// seeded is a table holding 120 applied movements on ES76 (abonos of 1.00 … 120.00)
// and one rejected cargo, applied the way the consumer does: in batches.
func seeded(t *testing.T) (*testenv.DynamoDB, *store.Reader) {
	t.Helper()
	env := testenv.NewDynamoDB(t)
	svc, err := store.New(env.Client, store.Config{Table: env.Table(), InsufficientFunds: cuenta.Reject, Now: func() time.Time { return fixedNow }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var batch []store.Entrega
	for i := 1; i <= 120; i++ {
		batch = append(batch, store.Entrega{Mov: mov(t, fmt.Sprintf("m-%03d", i), "ES76", movimiento.Abono, fmt.Sprintf("%d.00", i)), Origen: "msg"})
		if len(batch) == 40 {
			for _, r := range svc.Apply(ctx, batch) {
				if r.Outcome != store.Applied {
					t.Fatalf("seeding: %+v", r)
				}
			}
			batch = nil
		}
	}
	if r, err := testenv.One(svc.Apply(ctx, []store.Entrega{{Mov: mov(t, "too-much", "ES76", movimiento.Cargo, "1000000.00")}})); r.Outcome != store.Rejected {
		t.Fatalf("seeding the rejected cargo: %+v, %v", r, err)
	}
	return env, store.NewReader(env.Client, env.Table())
}

func TestReaderOnEveryBackend(t *testing.T) {
	env, r := seeded(t)
	ctx := context.Background()
	t.Logf("backend %s", env.Backend)

	t.Run("account", func(t *testing.T) {
		c, err := r.Cuenta(ctx, "ES76")
		if err != nil {
			t.Fatal(err)
		}
		// Σ 1..120 = 7260; the rejected cargo changed nothing.
		if !c.Saldo.Equal(decimal.NewFromInt(7260)) || c.Movimientos != 120 || c.Version != 3 || c.Moneda != "EUR" || !c.Actualizada.Equal(fixedNow) {
			t.Errorf("account = %+v, want saldo 7260 after 120 movements in 3 writes", c)
		}
	})
	t.Run("unknown account", func(t *testing.T) {
		_, err := r.Cuenta(ctx, "ES99")
		if !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), "account ES99") {
			t.Fatalf("err = %v, want ErrNotFound naming account ES99", err)
		}
	})
	t.Run("applied movement", func(t *testing.T) {
		a, err := r.Apunte(ctx, "ES76", "m-007")
		if err != nil {
			t.Fatal(err)
		}
		if a.Estado != movimiento.Aplicado || a.Seq != 7 || !a.SaldoTras.Equal(decimal.NewFromInt(28)) || !a.Movimiento.Importe.Equal(decimal.NewFromInt(7)) || a.Motivo != "" {
			t.Errorf("movement = %+v, want applied as seq 7 with saldo_tras 28", a)
		}
	})
	t.Run("rejected movement", func(t *testing.T) {
		a, err := r.Apunte(ctx, "ES76", "too-much")
		if err != nil {
			t.Fatal(err)
		}
		if a.Estado != movimiento.Rechazado || a.Seq != 0 || a.Motivo == "" {
			t.Errorf("movement = %+v, want rejected with a reason and no seq", a)
		}
	})
	t.Run("unknown movement", func(t *testing.T) {
		_, err := r.Apunte(ctx, "ES76", "m-999")
		if !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), "movement m-999") {
			t.Fatalf("err = %v, want ErrNotFound naming movement m-999", err)
		}
	})
	t.Run("statement pages", func(t *testing.T) {
		var seqs []int64
		before := int64(0)
		var sizes []int
		for range 10 {
			page, more, err := r.Extracto(ctx, "ES76", 50, before)
			if err != nil {
				t.Fatal(err)
			}
			sizes = append(sizes, len(page))
			for _, a := range page {
				seqs = append(seqs, a.Seq)
			}
			if !more {
				break
			}
			before = page[len(page)-1].Seq
		}
		if !slices.Equal(sizes, []int{50, 50, 20}) {
			t.Fatalf("page sizes = %v, want [50 50 20]", sizes)
		}
		for i, seq := range seqs {
			if seq != int64(120-i) {
				t.Fatalf("position %d has seq %d, want %d (seqs %v)", i, seq, 120-i, seqs)
			}
		}
	})
	t.Run("more is exact", func(t *testing.T) {
		for _, tc := range []struct {
			limit  int
			before int64
			n      int
			more   bool
		}{{120, 0, 120, false}, {119, 0, 119, true}, {3, 4, 3, false}, {3, 5, 3, true}, {5, 1, 0, false}} {
			page, more, err := r.Extracto(ctx, "ES76", tc.limit, tc.before)
			if err != nil || len(page) != tc.n || more != tc.more {
				t.Errorf("limit %d before %d: %d movements, more %v, %v; want %d, %v", tc.limit, tc.before, len(page), more, err, tc.n, tc.more)
			}
		}
	})
	t.Run("unknown account has an empty statement", func(t *testing.T) {
		page, more, err := r.Extracto(ctx, "ES99", 50, 0)
		if err != nil || len(page) != 0 || more {
			t.Errorf("statement = %v, %v, %v; want empty", page, more, err)
		}
	})
}
