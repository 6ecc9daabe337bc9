package events_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/events"
	"github.com/ledger-dev/ledger/internal/items"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/testenv"
	"github.com/ledger-dev/ledger/internal/versioned"
)

// Each kind of record announces itself once, when it is created, with what a
// subscriber needs: a posted movement with its seq and balance after, a capture's
// debit with its hold captured, a rejection with its motivo, a hold taken, a release as
// its hold released. The rewrite of a record another one marks (a hold settled, a
// movement reversed), a removal and an item of another kind announce nothing.
func TestEachRecordAnnouncesItselfOnce(t *testing.T) {
	expira := t0.Add(72 * time.Hour)
	abono := testenv.Movement(t, movimiento.Datos{ID: "nomina-12", Cuenta: "ES76", Tipo: movimiento.Abono, Importe: "1500", Moneda: "EUR", Concepto: "Nómina", Fecha: "2026-12-01T09:00:00+01:00"})
	leg := posted(testenv.Mov(t, "alquiler-12", "ES76", movimiento.Cargo, "700.00"), 3, "800.00", 7)
	leg.Contrapartida = "ES91"
	// A reversal and a capture are recorded as the abono or cargo they post (cuenta.Decide).
	reversal := posted(recordedAs(testenv.Anulacion(t, "dev-1", "ES76", "pago-1", "", ""), movimiento.Abono, "50.00"), 4, "850.00", 8)
	reversal.Movimiento.Concepto = ""
	capture := posted(recordedAs(testenv.SettleHold(t, movimiento.Captura, "cap-1", "ES76", "aut-1", "64.90"), movimiento.Cargo, "64.90"), 5, "785.10", 9)
	hold := testenv.Hold(t, "aut-1", "ES76", "80.00", expira)
	held := movimiento.Apunte{Movimiento: hold, Huella: hold.Huella(), Estado: movimiento.Retenida, Aplicado: t0, Version: 6}
	captured := held
	captured.Estado, captured.CapturadaPor, captured.Version = movimiento.Capturada, "cap-1", 9
	release := movimiento.Apunte{Movimiento: testenv.Movement(t, movimiento.Datos{ID: "lib-2", Cuenta: "ES76", Tipo: movimiento.Liberacion, Retencion: "aut-2"}), Estado: movimiento.Aplicado, Aplicado: t0, Version: 10}
	release.Movimiento.Importe, release.Movimiento.Moneda = decimal.RequireFromString("120"), "EUR"
	cargo := testenv.Mov(t, "coche", "ES91", movimiento.Cargo, "9000.00")
	rejected := movimiento.Apunte{Movimiento: cargo, Huella: cargo.Huella(), Estado: movimiento.Rechazado, Motivo: "cuenta ES91: insufficient funds", Aplicado: t0, Version: 2}
	reversed := posted(testenv.Mov(t, "pago-1", "ES76", movimiento.Cargo, "50.00"), 2, "1450.00", 5)
	marked := reversed
	marked.AnuladoPor = "dev-1"
	migration := versioned.Item{"pk": &types.AttributeValueMemberS{Value: "MIGRACION#0001"}, "sk": &types.AttributeValueMemberS{Value: "MIGRACION"}}
	when := t0.Format(time.RFC3339Nano)

	cases := []struct {
		name     string
		old, now versioned.Item
		want     []map[string]any // the details, without event_id
	}{
		{"an abono posted", nil, apunte(t, posted(abono, 1, "1500", 1)), []map[string]any{{"cuenta": "ES76", "estado": "aplicado", "version": 1.0, "aplicado": when, "moneda": "EUR",
			"id": "nomina-12", "tipo": "abono", "importe": "1500.00", "seq": 1.0, "saldo_tras": "1500.00", "concepto": "Nómina", "fecha": "2026-12-01T09:00:00+01:00"}}},
		{"a transfer's debit leg", nil, apunte(t, leg), []map[string]any{{"cuenta": "ES76", "estado": "aplicado", "version": 7.0, "aplicado": when, "moneda": "EUR",
			"id": "alquiler-12", "tipo": "cargo", "importe": "700.00", "seq": 3.0, "saldo_tras": "800.00", "concepto": "Pedido alquiler-12", "fecha": "2026-12-02T10:15:00Z", "contrapartida": "ES91"}}},
		{"a reversal", nil, apunte(t, reversal), []map[string]any{{"cuenta": "ES76", "estado": "aplicado", "version": 8.0, "aplicado": when, "moneda": "EUR",
			"id": "dev-1", "tipo": "abono", "importe": "50.00", "seq": 4.0, "saldo_tras": "850.00", "anula": "pago-1"}}},
		{"a capture's debit, and its hold captured", nil, apunte(t, capture), []map[string]any{
			{"cuenta": "ES76", "estado": "aplicado", "version": 9.0, "aplicado": when, "moneda": "EUR", "id": "cap-1", "tipo": "cargo", "importe": "64.90", "seq": 5.0, "saldo_tras": "785.10", "retencion": "aut-1"},
			{"cuenta": "ES76", "estado": "capturada", "version": 9.0, "aplicado": when, "moneda": "EUR", "id": "aut-1", "tipo": "retencion", "importe": "64.90", "capturada_por": "cap-1"}}},
		{"a hold taken", nil, apunte(t, held), []map[string]any{{"cuenta": "ES76", "estado": "retenida", "version": 6.0, "aplicado": when, "moneda": "EUR",
			"id": "aut-1", "tipo": "retencion", "importe": "80.00", "expira": expira.Format(time.RFC3339Nano)}}},
		{"a release, as its hold released", nil, apunte(t, release), []map[string]any{{"cuenta": "ES76", "estado": "liberada", "version": 10.0, "aplicado": when, "moneda": "EUR",
			"id": "aut-2", "tipo": "retencion", "importe": "120.00", "liberada_por": "lib-2"}}},
		{"a rejection", nil, apunte(t, rejected), []map[string]any{{"cuenta": "ES91", "estado": "rechazado", "version": 2.0, "aplicado": when, "moneda": "EUR",
			"id": "coche", "tipo": "cargo", "importe": "9000.00", "motivo": "cuenta ES91: insufficient funds", "concepto": "Pedido coche", "fecha": "2026-12-02T10:15:00Z"}}},
		{"a hold marked captured", apunte(t, held), apunte(t, captured), nil},
		{"a movement marked reversed", apunte(t, reversed), apunte(t, marked), nil},
		{"a record removed", apunte(t, reversed), nil, nil},
		{"a migration's record", nil, migration, nil},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			evs, err := events.FromRecord(record(t, i, tc.old, tc.now))
			if err != nil {
				t.Fatal(err)
			}
			got := details(t, evs)
			for _, d := range got {
				if d["event_id"] != events.EventID(d["cuenta"].(string), d["id"].(string), d["estado"].(string)) {
					t.Errorf("event_id %v is not derived from (cuenta, id, estado) of %v", d["event_id"], d)
				}
				delete(d, "event_id")
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("details =\n%v\nwant\n%v", got, tc.want)
			}
		})
	}
}

// An image the ledger cannot read is an error naming the item, never skipped; so is a
// record without the images the stream must carry.
func TestRecordsThatCannotBeAnnounced(t *testing.T) {
	m := testenv.Mov(t, "pago-1", "ES76", movimiento.Cargo, "50.00")
	broken := apunte(t, posted(m, 2, "10", 3))
	delete(broken, items.AttrSaldoTras)
	_, err := events.FromRecord(record(t, 0, nil, broken))
	if err == nil || !strings.Contains(err.Error(), "CUENTA#ES76/MOV#pago-1") || !strings.Contains(err.Error(), "saldo_tras") {
		t.Errorf("unreadable record: err = %v, want one naming the item and saldo_tras", err)
	}
	c := newAccount("ES76")
	later := c
	later.Version++
	keysOnly := record(t, 1, account(t, c), account(t, later))
	keysOnly.Change.OldImage, keysOnly.Change.NewImage = nil, nil
	if _, err := events.FromRecord(keysOnly); !errors.Is(err, events.ErrNoImage) {
		t.Errorf("a record without images: err = %v, want ErrNoImage", err)
	}
}

// Event ids are the same for the same fact and differ between facts, even when the
// parts' boundaries move.
func TestEventIDs(t *testing.T) {
	ids := map[string]bool{}
	for _, parts := range [][3]string{{"ES76", "pago-1", "aplicado"}, {"ES76", "pago-1", "rechazado"}, {"ES91", "pago-1", "aplicado"},
		{"ES7", "6pago-1", "aplicado"}, {"ES76", "pago-1a", "plicado"}, {"ES76", "7", "administrada"}} {
		id := events.EventID(parts[0], parts[1], parts[2])
		if id != events.EventID(parts[0], parts[1], parts[2]) || len(id) != 32 {
			t.Errorf("EventID%v = %q: not stable, or not 32 hex digits", parts, id)
		}
		ids[id] = true
	}
	if len(ids) != 6 {
		t.Errorf("%d ids for 6 facts", len(ids))
	}
}

// recordedAs is m as the ledger records it: as the tipo and importe in EUR it posts.
func recordedAs(m movimiento.Movimiento, tipo movimiento.Tipo, importe string) movimiento.Movimiento {
	m.Tipo, m.Importe, m.Moneda = tipo, decimal.RequireFromString(importe), "EUR"
	return m
}

// newAccount is an account of EUR at version 4 with 1000.00, written at t0.
func newAccount(id string) cuenta.Cuenta {
	return cuenta.Cuenta{ID: id, Moneda: "EUR", Saldo: decimal.RequireFromString("1000"), Movimientos: 3, Version: 4, Creada: t0, Actualizada: t0}
}
