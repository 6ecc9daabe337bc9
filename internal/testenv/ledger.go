package testenv

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/sim"
	"github.com/ledger-dev/ledger/internal/store"
)

// FixedNow is the instant the ledger's tests apply movements at, unless a clock moves.
var FixedNow = time.Date(2026, 12, 2, 10, 15, 0, 0, time.UTC)

// Clock is a simulated clock at FixedNow, so holds expire without waiting.
func Clock() *sim.Clock {
	c := sim.NewClock()
	c.AdvanceTo(FixedNow)
	return c
}

// Ledger is a store.Ledger on env's table under policy, on the clock now (nil: at
// FixedNow, always).
func Ledger(t *testing.T, env *DynamoDB, policy cuenta.FundsPolicy, now func() time.Time) *store.Ledger {
	t.Helper()
	if now == nil {
		now = func() time.Time { return FixedNow }
	}
	l, err := store.New(env.Client, store.Config{Table: env.Table(), InsufficientFunds: policy, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// Movement is the movement d describes, which must be valid.
func Movement(t testing.TB, d movimiento.Datos) movimiento.Movimiento {
	t.Helper()
	m, err := movimiento.New(d)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Mov is an abono or cargo of importe EUR on cta, with a concepto and a fecha.
func Mov(t *testing.T, id, cta string, tipo movimiento.Tipo, importe string) movimiento.Movimiento {
	t.Helper()
	return Movement(t, movimiento.Datos{ID: id, Cuenta: cta, Tipo: tipo, Importe: importe, Moneda: "EUR", Concepto: "Pedido " + id, Fecha: "2026-12-02T10:15:00Z"})
}

// Traspaso is a transfer of importe from cta to destino, in EUR or moneda[0].
func Traspaso(t *testing.T, id, cta, destino, importe string, moneda ...string) movimiento.Movimiento {
	t.Helper()
	cur := "EUR"
	if len(moneda) > 0 {
		cur = moneda[0]
	}
	return Movement(t, movimiento.Datos{ID: id, Cuenta: cta, Destino: destino, Tipo: movimiento.Traspaso, Importe: importe, Moneda: cur, Concepto: "Alquiler"})
}

// Reparto is a reparto of total EUR from cta to partes, each "cuenta:importe".
func Reparto(t *testing.T, id, cta, total string, partes ...string) movimiento.Movimiento {
	t.Helper()
	d := movimiento.Datos{ID: id, Cuenta: cta, Tipo: movimiento.Reparto, Importe: total, Moneda: "EUR", Concepto: "Pedido " + id}
	for _, p := range partes {
		c, importe, _ := strings.Cut(p, ":")
		d.Partes = append(d.Partes, movimiento.ParteDatos{Cuenta: c, Importe: importe})
	}
	return Movement(t, d)
}

// Hold is a retencion of importe EUR on cta until expira.
func Hold(t *testing.T, id, cta, importe string, expira time.Time) movimiento.Movimiento {
	t.Helper()
	return Movement(t, movimiento.Datos{ID: id, Cuenta: cta, Tipo: movimiento.Retencion, Importe: importe, Moneda: "EUR", Expira: expira.Format(time.RFC3339)})
}

// SettleHold is a captura (importe optional) or a liberacion of the hold retencion.
func SettleHold(t *testing.T, tipo movimiento.Tipo, id, cta, retencion, importe string) movimiento.Movimiento {
	t.Helper()
	return Movement(t, movimiento.Datos{ID: id, Cuenta: cta, Tipo: tipo, Retencion: retencion, Importe: importe})
}

// Anulacion reverses the movement anula of cta, naming importe and moneda if not "".
func Anulacion(t *testing.T, id, cta, anula, importe, moneda string) movimiento.Movimiento {
	t.Helper()
	return Movement(t, movimiento.Datos{ID: id, Cuenta: cta, Tipo: movimiento.Anulacion, Anula: anula, Importe: importe, Moneda: moneda, Concepto: "Devolución"})
}

// Apply applies m alone, delivered by message "msg-<id>", and returns its result.
func Apply(t *testing.T, l *store.Ledger, m movimiento.Movimiento) store.Result {
	t.Helper()
	return l.Apply(context.Background(), []store.Entrega{{Mov: m, Origen: "msg-" + m.ID}})[0]
}

// One is the result of a group of one delivery and its error, as a caller of a single
// movement wants them: one(l.Apply(ctx, []store.Entrega{e})).
func One(rs []store.Result) (store.Result, error) { return rs[0], rs[0].Err }

// Bloqueada is the operator's change that freezes (true) or unfreezes an account.
func Bloqueada(b bool) func(cuenta.Cuenta) (cuenta.Cuenta, error) {
	return func(c cuenta.Cuenta) (cuenta.Cuenta, error) { c.Bloqueada = b; return c, nil }
}
