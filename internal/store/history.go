package store

import (
	"context"
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/items"
	"github.com/ledger-dev/ledger/internal/versioned"
)

// SaldoEn is an account's balance at an instant: after the last movement posted at or
// before it. Seq is that movement's, 0 when none was posted by then (Saldo is zero);
// Aplicado is when it was posted, and Version the account's version it was written with
// (0 when not recorded: posted by a release before records kept it, or Seq 0).
type SaldoEn struct {
	Cuenta, Moneda string
	Saldo          decimal.Decimal
	Seq, Version   int64
	Aplicado       time.Time
}

// SaldoEn returns account cuentaID's balance at instant en in at most two reads,
// whatever the account's size: the last movement posted by en, from por_aplicado (one
// key; eventually consistent, so a movement posted in the last moments before en may
// not be counted yet), then that movement, or the account when there is none, strongly
// consistent. An unknown account is ErrNotFound; an instant before it was opened (its
// creada) is ErrNotYetOpen. An account stored without creada is judged by its first
// posted movement.
func (r *Reader) SaldoEn(ctx context.Context, cuentaID string, en time.Time) (SaldoEn, error) {
	if !items.Storable(cuentaID, "") {
		return SaldoEn{}, fmt.Errorf("account %s %w", cuentaID, ErrNotFound)
	}
	seq, key, err := r.ultimo(ctx, cuentaID, en)
	if err != nil {
		return SaldoEn{}, err
	}
	if seq == 0 {
		return r.antesDelPrimero(ctx, cuentaID, en)
	}
	out, err := r.db.GetItem(ctx, versioned.GetInput(r.table, key))
	if err != nil {
		return SaldoEn{}, fmt.Errorf("store: read movement %d of account %s: %w", seq, cuentaID, err)
	}
	if len(out.Item) == 0 { // movements are never deleted: the index names what is stored
		return SaldoEn{}, fmt.Errorf("store: account %s: por_aplicado names movement %d, which is not stored", cuentaID, seq)
	}
	a, err := items.DecodeApunte(out.Item)
	if err != nil {
		return SaldoEn{}, err
	}
	return SaldoEn{Cuenta: cuentaID, Moneda: a.Movimiento.Moneda, Saldo: a.SaldoTras, Seq: a.Seq, Version: a.Version, Aplicado: a.Aplicado}, nil
}

// antesDelPrimero is account cuentaID's balance at en, when no movement was posted by
// then: zero if it was open, read strongly consistently.
func (r *Reader) antesDelPrimero(ctx context.Context, cuentaID string, en time.Time) (SaldoEn, error) {
	c, err := r.Cuenta(ctx, cuentaID)
	if err != nil {
		return SaldoEn{}, err
	}
	if c.Creada.IsZero() || en.Before(c.Creada) {
		return SaldoEn{}, fmt.Errorf("account %s %w at %s", cuentaID, ErrNotYetOpen, en.UTC().Format(time.RFC3339Nano))
	}
	return SaldoEn{Cuenta: cuentaID, Moneda: c.Moneda, Saldo: decimal.Zero}, nil
}

// ultimo is the seq and key of the last movement of account cuentaID posted at or
// before t, from por_aplicado; 0 and nil when there is none.
func (r *Reader) ultimo(ctx context.Context, cuentaID string, t time.Time) (int64, versioned.Item, error) {
	out, err := r.db.Query(ctx, items.UltimoHastaInput(r.table, cuentaID, t))
	if err != nil {
		return 0, nil, fmt.Errorf("store: read the history of account %s: %w", cuentaID, err)
	}
	if len(out.Items) == 0 {
		return 0, nil, nil
	}
	item := out.Items[0]
	seq, ok := items.SeqOfAplicado(item)
	if !ok {
		return 0, nil, fmt.Errorf("store: account %s: an item of por_aplicado holds no aplicado_seq", cuentaID)
	}
	return seq, items.Table(r.table).KeyOf(item), nil
}

// SeqRange is a stretch of an account's statement: its movements with After < seq <
// Before. A zero bound leaves its side open.
type SeqRange struct {
	After, Before int64
}

// Empty reports whether no seq is in r.
func (r SeqRange) Empty() bool { return r.Before > 0 && r.After+1 >= r.Before }

// Below is r without the seqs from seq on: the rest of a statement after a page that
// ended at seq (0 or less: r).
func (r SeqRange) Below(seq int64) SeqRange {
	if seq > 0 && (r.Before <= 0 || seq < r.Before) {
		r.Before = seq
	}
	return r
}

// Rango is the stretch of account cuentaID's statement posted in [desde, hasta): after
// the last movement posted before desde, up to the last posted before hasta. A zero
// time leaves its side open. Each bound given costs one key read from por_aplicado, as
// eventually consistent as the statement itself. Stamps never go back on an account, so
// the stretch is whole: its movements follow each other by seq.
func (r *Reader) Rango(ctx context.Context, cuentaID string, desde, hasta time.Time) (SeqRange, error) {
	var rango SeqRange
	if !items.Storable(cuentaID, "") {
		return rango, nil
	}
	if !desde.IsZero() {
		seq, _, err := r.ultimo(ctx, cuentaID, desde.Add(-time.Nanosecond))
		if err != nil {
			return rango, err
		}
		rango.After = seq
	}
	if !hasta.IsZero() {
		seq, _, err := r.ultimo(ctx, cuentaID, hasta.Add(-time.Nanosecond))
		if err != nil {
			return rango, err
		}
		rango.Before = seq + 1
	}
	return rango, nil
}
