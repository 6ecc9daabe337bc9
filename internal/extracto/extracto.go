// Package extracto writes an account's statement of a period as an accountant reads it
// (`ledger extracto`): the opening balance, every movement posted in the period with
// its signed amount and the balance after it, and the closing balance, as CSV (RFC
// 4180), JSON or text. It streams what it reads, and checks as it writes that each
// movement follows the one before by seq and moves the balance by its amount, so that
// the opening balance plus the movements is the closing one; a statement that does not
// add up fails before its first wrong line.
package extracto

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/store"
)

// Reader is what a statement is read from (*store.Reader).
type Reader interface {
	Cuenta(ctx context.Context, id string) (cuenta.Cuenta, error)
	SaldoEn(ctx context.Context, cuenta string, en time.Time) (store.SaldoEn, error)
	ExtractoRango(ctx context.Context, cuenta string, limit int, rango store.SeqRange, order store.Order) ([]movimiento.Apunte, bool, error)
}

// Periodo is the period of a statement: the movements of Cuenta applied in
// [Desde, Hasta). A zero Desde starts with the account.
type Periodo struct {
	Cuenta       string
	Desde, Hasta time.Time
}

// Formato is how a statement is written.
type Formato int

// The formats: a text table for people, CSV with a header row for spreadsheets, one
// JSON document for programs.
const (
	Texto Formato = iota
	CSV
	JSON
)

// Saldo is a balance at one end of the period: after the movement Seq (0: none).
type Saldo struct {
	Saldo decimal.Decimal
	Seq   int64
}

// Resumen is what a written statement held.
type Resumen struct {
	Moneda         string
	Inicial, Final Saldo
	Movimientos    int
	Abonos, Cargos decimal.Decimal // the sums of the credits and of the debits, both positive
}

// ErrNoCuadra is matched by the error of a statement whose movements do not lead from
// its opening balance to its closing one: one missing (an index still catching up on a
// period that ends in the last moments) or a ledger to audit.
var ErrNoCuadra = errors.New("the statement does not add up")

// Escribir writes the statement of p to w in formato and returns what it held. An
// unknown account is store.ErrNotFound; a period before the account was opened is an
// empty statement at zero.
func Escribir(ctx context.Context, w io.Writer, r Reader, p Periodo, formato Formato) (Resumen, error) {
	c, err := r.Cuenta(ctx, p.Cuenta)
	if err != nil {
		return Resumen{}, err
	}
	res := Resumen{Moneda: c.Moneda}
	if !p.Desde.IsZero() {
		if res.Inicial, err = saldoAntes(ctx, r, p.Cuenta, p.Desde); err != nil {
			return res, err
		}
	}
	if res.Final, err = saldoAntes(ctx, r, p.Cuenta, p.Hasta); err != nil {
		return res, err
	}
	out := newWriter(w, formato, p, res.Moneda)
	if err := out.apertura(res.Inicial); err != nil {
		return res, err
	}
	if err := res.lineas(ctx, r, p.Cuenta, out); err != nil {
		return res, err
	}
	return res, out.cierre(res.Final)
}

// saldoAntes is the balance of cuenta just before t, zero before it was opened.
func saldoAntes(ctx context.Context, r Reader, cuenta string, t time.Time) (Saldo, error) {
	s, err := r.SaldoEn(ctx, cuenta, t.Add(-time.Nanosecond))
	if errors.Is(err, store.ErrNotYetOpen) {
		return Saldo{Saldo: decimal.Zero}, nil
	}
	return Saldo{Saldo: s.Saldo, Seq: s.Seq}, err
}

// lineas writes the movements after res.Inicial up to res.Final, oldest first, a page
// at a time, each checked against the balance before it.
func (res *Resumen) lineas(ctx context.Context, r Reader, cuenta string, out writer) error {
	prev := res.Inicial
	rango := store.SeqRange{After: prev.Seq, Before: res.Final.Seq + 1}
	// Each page moves rango.After past what it read, so at most one page per movement
	// of the period is read (rather MaxExtracto a page); the bound stops a backend that
	// would answer "more" without anything.
	for pages := int64(0); !rango.Empty(); pages++ {
		if pages > res.Final.Seq-res.Inicial.Seq {
			return fmt.Errorf("extracto: account %s: no progress reading seq %d on", cuenta, rango.After+1)
		}
		page, more, err := r.ExtractoRango(ctx, cuenta, store.MaxExtracto, rango, store.OldestFirst)
		if err != nil {
			return err
		}
		for _, a := range page {
			if err := res.sigue(cuenta, prev, a); err != nil {
				return err
			}
			if err := out.linea(a); err != nil {
				return err
			}
			prev = Saldo{Saldo: a.SaldoTras, Seq: a.Seq}
		}
		if !more || len(page) == 0 {
			break
		}
		rango.After = prev.Seq
	}
	if prev.Seq != res.Final.Seq || !prev.Saldo.Equal(res.Final.Saldo) {
		return fmt.Errorf("extracto: account %s: %w: the movements end at seq %d with %s, the closing balance is %s after seq %d",
			cuenta, ErrNoCuadra, prev.Seq, prev.Saldo, res.Final.Saldo, res.Final.Seq)
	}
	return nil
}

// sigue checks that a follows prev: the next seq, the balance moved by its amount; and
// counts it.
func (res *Resumen) sigue(cuenta string, prev Saldo, a movimiento.Apunte) error {
	delta := a.Movimiento.Delta()
	if a.Seq != prev.Seq+1 || !prev.Saldo.Add(delta).Equal(a.SaldoTras) {
		return fmt.Errorf("extracto: account %s: %w: movement %s (seq %d, %s) does not follow seq %d at %s",
			cuenta, ErrNoCuadra, a.Movimiento.ID, a.Seq, delta, prev.Seq, prev.Saldo)
	}
	res.Movimientos++
	if delta.Sign() < 0 {
		res.Cargos = res.Cargos.Sub(delta)
	} else {
		res.Abonos = res.Abonos.Add(delta)
	}
	return nil
}
