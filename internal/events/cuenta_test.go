package events_test

import (
	"maps"
	"reflect"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/events"
)

// A write of an account announces only what no record announces: each hold it dropped
// as lapsed, and an operator's change of limite or bloqueada. A write that moved the
// balance, took a hold or settled one announces nothing of its own (its records do),
// and neither does a new account nor a write that changed nothing an event names.
func TestAccountWritesAnnounceLapsedHoldsAndAdministration(t *testing.T) {
	held := func(c cuenta.Cuenta, holds map[string]cuenta.Retencion) cuenta.Cuenta {
		c.Retenciones = holds
		return c
	}
	lapsing, live := cuenta.Retencion{Importe: decimal.RequireFromString("80"), Expira: t0.Add(time.Hour)}, cuenta.Retencion{Importe: decimal.RequireFromString("5"), Expira: t0.Add(48 * time.Hour)}
	before := held(newAccount("ES76"), map[string]cuenta.Retencion{"aut-1": lapsing, "aut-2": live})
	next := func(change func(*cuenta.Cuenta)) cuenta.Cuenta {
		c := before
		c.Retenciones = maps.Clone(before.Retenciones)
		c.Version++
		c.Actualizada = t0.Add(30 * time.Minute)
		change(&c)
		return c
	}
	later := t0.Add(2 * time.Hour)
	cases := []struct {
		name string
		old  *cuenta.Cuenta
		now  cuenta.Cuenta
		want []map[string]any
	}{
		{"a movement posted", &before, next(func(c *cuenta.Cuenta) { c.Saldo, c.Movimientos = c.Saldo.Add(decimal.NewFromInt(5)), 4 }), nil},
		{"a live hold captured or released", &before, next(func(c *cuenta.Cuenta) { delete(c.Retenciones, "aut-2") }), nil},
		{"a lapsed hold dropped by a later write", &before, next(func(c *cuenta.Cuenta) { c.Actualizada = later; delete(c.Retenciones, "aut-1") }), []map[string]any{
			{"cuenta": "ES76", "estado": "expirada", "version": 5.0, "aplicado": later.Format(time.RFC3339Nano), "moneda": "EUR",
				"id": "aut-1", "tipo": "retencion", "importe": "80.00", "expira": lapsing.Expira.Format(time.RFC3339Nano)}}},
		{"a new limite", &before, next(func(c *cuenta.Cuenta) { c.Limite = decimal.RequireFromString("500") }), []map[string]any{
			{"cuenta": "ES76", "estado": "administrada", "version": 5.0, "aplicado": t0.Add(30 * time.Minute).Format(time.RFC3339Nano), "moneda": "EUR", "limite": "500.00", "bloqueada": false}}},
		{"a freeze, and a lapsed hold dropped by it", &before, next(func(c *cuenta.Cuenta) {
			c.Bloqueada, c.Actualizada = true, later
			delete(c.Retenciones, "aut-1")
		}), []map[string]any{
			{"cuenta": "ES76", "estado": "expirada", "version": 5.0, "aplicado": later.Format(time.RFC3339Nano), "moneda": "EUR",
				"id": "aut-1", "tipo": "retencion", "importe": "80.00", "expira": lapsing.Expira.Format(time.RFC3339Nano)},
			{"cuenta": "ES76", "estado": "administrada", "version": 5.0, "aplicado": later.Format(time.RFC3339Nano), "moneda": "EUR", "limite": "0.00", "bloqueada": true}}},
		{"a new account", nil, newAccount("ES91"), nil},
		{"a rewrite that changes nothing an event names", &before, next(func(*cuenta.Cuenta) {}), nil},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := record(t, i, nil, account(t, tc.now))
			if tc.old != nil {
				rec = record(t, i, account(t, *tc.old), account(t, tc.now))
			}
			evs, err := events.FromRecord(rec)
			if err != nil {
				t.Fatal(err)
			}
			got := details(t, evs)
			for _, d := range got {
				id, _ := d["id"].(string)
				if d["estado"] == events.Administrada {
					id = "5"
				}
				if d["event_id"] != events.EventID("ES76", id, d["estado"].(string)) {
					t.Errorf("event_id %v is not derived from (cuenta, id or version, estado)", d["event_id"])
				}
				delete(d, "event_id")
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("details =\n%v\nwant\n%v", got, tc.want)
			}
		})
	}
}
