package items

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/versioned"
)

var t0 = time.Date(2026, 12, 2, 10, 15, 0, 123456789, time.UTC)

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

func testMov(t testing.TB, id string, tipo movimiento.Tipo, importe string) movimiento.Movimiento {
	t.Helper()
	m, err := movimiento.New(movimiento.Datos{ID: id, Cuenta: "ES76", Tipo: tipo, Importe: importe, Moneda: "EUR", Concepto: "Pedido 1234", Fecha: "2026-12-02T10:15:00Z"})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// mustItem is the item an encoder returned; encoding the values these tests build
// cannot fail.
func mustItem(item versioned.Item, err error) versioned.Item {
	if err != nil {
		panic(err)
	}
	return item
}

func TestMovementItemHasTheDesignedAttributes(t *testing.T) {
	m := testMov(t, "pago-8f2c", movimiento.Cargo, "50.00")
	applied := mustItem(EncodeApunte(movimiento.Apunte{Movimiento: m, Huella: m.Huella(), Estado: movimiento.Aplicado, Seq: 7, SaldoTras: decimal.RequireFromString("-12.5"), Aplicado: t0, Origen: "msg-1", Version: 4}))
	want := []string{"aplicado", "aplicado_seq", "concepto", "estado", "fecha", "huella", "importe", "moneda", "origen", "pk", "saldo_tras", "seq", "sk", "tipo", "version"}
	if got := slices.Sorted(maps.Keys(applied)); !slices.Equal(got, want) {
		t.Errorf("applied movement attributes = %v, want %v", got, want)
	}
	if applied["pk"].(*types.AttributeValueMemberS).Value != "CUENTA#ES76" || applied["sk"].(*types.AttributeValueMemberS).Value != "MOV#pago-8f2c" {
		t.Errorf("key = %v/%v", applied["pk"], applied["sk"])
	}
	if n, ok := applied["seq"].(*types.AttributeValueMemberN); !ok || n.Value != "7" {
		t.Errorf("seq = %#v, want the number 7: it is the por_seq index's sort key", applied["seq"])
	}
	if n, ok := applied["importe"].(*types.AttributeValueMemberN); !ok || !decimal.RequireFromString(n.Value).Equal(decimal.RequireFromString("50")) {
		t.Errorf("importe = %#v, want the number 50", applied["importe"])
	}
	if v := applied["aplicado"].(*types.AttributeValueMemberS).Value; v != "2026-12-02T10:15:00.123456789Z" {
		t.Errorf("aplicado = %q, want RFC 3339 in UTC", v)
	}
	if v, ok := applied["aplicado_seq"].(*types.AttributeValueMemberS); !ok || v.Value != "2026-12-02T10:15:00.123456789Z#0000000000000000007" {
		t.Errorf("aplicado_seq = %#v, want aplicado and seq as text: the por_aplicado index's sort key", applied["aplicado_seq"])
	}
	if n, ok := applied["version"].(*types.AttributeValueMemberN); !ok || n.Value != "4" {
		t.Errorf("version = %#v, want the number 4, the account's version the movement was posted with", applied["version"])
	}

	rejected := mustItem(EncodeApunte(movimiento.Apunte{Movimiento: m, Huella: m.Huella(), Estado: movimiento.Rechazado, Motivo: "insufficient funds", Aplicado: t0}))
	if _, ok := rejected["seq"]; ok {
		t.Error("a rejected movement carries a seq: it would appear in the statement")
	}
	if _, ok := rejected["saldo_tras"]; ok {
		t.Error("a rejected movement carries a saldo_tras")
	}
	if _, ok := rejected["aplicado_seq"]; ok {
		t.Error("a rejected movement carries an aplicado_seq: it would count in the balance at an instant")
	}
}

func TestItemsRoundTrip(t *testing.T) {
	m := testMov(t, "pago-8f2c", movimiento.Abono, "50.00")
	a := movimiento.Apunte{Movimiento: m, Huella: m.Huella(), Estado: movimiento.Aplicado, Seq: 3, SaldoTras: decimal.RequireFromString("150.25"), Aplicado: t0, Origen: "msg-1", Version: 5}
	got, err := DecodeApunte(mustItem(EncodeApunte(a)))
	if err != nil {
		t.Fatal(err)
	}
	if got.Movimiento.Huella() != m.Huella() || got.Huella != a.Huella || got.Seq != 3 || !got.SaldoTras.Equal(a.SaldoTras) ||
		!got.Aplicado.Equal(t0) || got.Origen != "msg-1" || got.Version != 5 || got.Movimiento.Concepto != m.Concepto || got.Movimiento.Fecha != m.Fecha {
		t.Errorf("round trip = %+v, want %+v", got, a)
	}

	c := cuenta.Cuenta{ID: "ES76", Moneda: "EUR", Saldo: decimal.RequireFromString("-0.01"), Limite: decimal.RequireFromString("100"), Movimientos: 9, Creada: t0, Actualizada: t0, Aplicado: t0.Add(time.Second)}
	item := mustItem(EncodeCuenta(c, nil))
	if _, ok := item["version"]; ok {
		t.Error("the account image carries a version: only versioned may set it")
	}
	item["version"] = &types.AttributeValueMemberN{Value: "12"}
	back, ok, err := DecodeCuenta(written(item))
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if back.ID != c.ID || !back.Saldo.Equal(c.Saldo) || !back.Limite.Equal(c.Limite) || back.Movimientos != 9 || back.Version != 12 ||
		!back.Creada.Equal(t0) || !back.Actualizada.Equal(t0) || !back.Aplicado.Equal(t0.Add(time.Second)) {
		t.Errorf("account round trip = %+v, want %+v at version 12", back, c)
	}

	// A later write keeps the attributes it does not know (a newer release's, an
	// operator's).
	item["titular"] = s("Ana")
	back.Saldo, back.Movimientos, back.Actualizada = decimal.RequireFromString("7"), 10, t0.Add(time.Hour)
	later := mustItem(EncodeCuenta(back, item))
	again, _, err := DecodeCuenta(written(later))
	if err != nil || !again.Creada.Equal(t0) || !again.Actualizada.Equal(t0.Add(time.Hour)) || !again.Saldo.Equal(back.Saldo) || again.Movimientos != 10 {
		t.Errorf("later image = %+v, %v", again, err)
	}
	if later["titular"] != item["titular"] {
		t.Error("an attribute another writer keeps on the account was dropped")
	}
}

// A write keeps what a newer release wrote inside a hold it still holds.
func TestAWriteKeepsAHoldsUnknownAttributes(t *testing.T) {
	c := cuenta.Cuenta{ID: "ES76", Moneda: "EUR", Saldo: decimal.RequireFromString("100"), Creada: t0, Actualizada: t0,
		Retenciones: map[string]cuenta.Retencion{
			"aut-1": {Importe: decimal.RequireFromString("10"), Expira: t0.Add(time.Hour)},
			"aut-2": {Importe: decimal.RequireFromString("5"), Expira: t0.Add(time.Hour)},
		}}
	stored := mustItem(EncodeCuenta(c, nil))
	for _, id := range []string{"aut-1", "aut-2"} {
		stored["retenciones"].(*types.AttributeValueMemberM).Value[id].(*types.AttributeValueMemberM).Value["comercio"] = s("ACME")
	}
	delete(c.Retenciones, "aut-2") // released since
	c.Saldo = decimal.RequireFromString("101")
	next := mustItem(EncodeCuenta(c, stored))
	holds := next["retenciones"].(*types.AttributeValueMemberM).Value
	if len(holds) != 1 {
		t.Fatalf("holds after the write = %v, want aut-1 alone", holds)
	}
	hold := holds["aut-1"].(*types.AttributeValueMemberM).Value
	if !reflect.DeepEqual(hold["comercio"], s("ACME")) {
		t.Errorf("aut-1 after the write = %v, want its comercio kept", hold)
	}
	back, _, err := DecodeCuenta(written(next))
	if err != nil || !back.Retenciones["aut-1"].Importe.Equal(decimal.RequireFromString("10")) || !back.Saldo.Equal(c.Saldo) {
		t.Errorf("decoded %+v, %v", back, err)
	}
}

// A hold's expira is the clock it runs by: one that reads as no time, on the account's
// hold or on the hold's record, makes the item unreadable, never a hold lapsed at once.
func TestAHoldWithoutItsAmountOrExpiryIsUnreadable(t *testing.T) {
	c := cuenta.Cuenta{ID: "ES76", Moneda: "EUR", Saldo: decimal.RequireFromString("100"), Creada: t0, Actualizada: t0,
		Retenciones: map[string]cuenta.Retencion{"aut-1": {Importe: decimal.RequireFromString("10"), Expira: t0.Add(time.Hour)}}}
	m, err := movimiento.New(movimiento.Datos{ID: "aut-1", Cuenta: "ES76", Tipo: movimiento.Retencion, Importe: "10", Moneda: "EUR", Expira: t0.Add(time.Hour).Format(time.RFC3339)})
	if err != nil {
		t.Fatal(err)
	}
	zero := s(time.Time{}.Format(time.RFC3339))
	for _, tc := range []struct {
		attr string
		v    types.AttributeValue // nil: removed
	}{{"importe", nil}, {"expira", nil}, {"expira", zero}} {
		account := mustItem(EncodeCuenta(c, nil))
		hold := account["retenciones"].(*types.AttributeValueMemberM).Value["aut-1"].(*types.AttributeValueMemberM).Value
		record := mustItem(EncodeApunte(movimiento.Apunte{Movimiento: m, Estado: movimiento.Retenida, Aplicado: t0}))
		for _, it := range []versioned.Item{hold, record} {
			delete(it, tc.attr)
			if tc.v != nil {
				it[tc.attr] = tc.v
			}
		}
		if _, _, err := DecodeCuenta(written(account)); err == nil || !strings.Contains(err.Error(), "hold aut-1 has no "+tc.attr) {
			t.Errorf("an account's hold with %s %v: %v, want it unreadable naming %s", tc.attr, tc.v, err, tc.attr)
		}
		if _, err := DecodeApunte(record); err == nil || !strings.Contains(err.Error(), "hold ES76/aut-1 has no "+tc.attr) {
			t.Errorf("a hold record with %s %v: %v, want it unreadable naming %s", tc.attr, tc.v, err, tc.attr)
		}
	}
}

// A write keeps an account's creada as stored, and makes none up for an account stored
// without one; a new account's item has one.
func TestAWriteMakesUpNoCreada(t *testing.T) {
	c := cuenta.Cuenta{ID: "ES76", Moneda: "EUR", Saldo: decimal.RequireFromString("1"), Creada: t0, Actualizada: t0}
	stored := mustItem(EncodeCuenta(c, nil))
	if stored["creada"] == nil {
		t.Fatal("a new account's item has no creada")
	}
	delete(stored, "creada")
	back, _, err := DecodeCuenta(written(stored))
	if err != nil {
		t.Fatal(err)
	}
	back.Saldo, back.Actualizada = decimal.RequireFromString("2"), t0.Add(time.Hour)
	if next := mustItem(EncodeCuenta(back, stored)); next["creada"] != nil {
		t.Errorf("a write of an account stored without creada wrote creada %v", next["creada"])
	}
}

// A write keeps an account's aplicado as stored when it has none to write (an
// operator's change of an account read without one), and makes none up.
func TestAWriteMakesUpNoAplicado(t *testing.T) {
	c := cuenta.Cuenta{ID: "ES76", Moneda: "EUR", Saldo: decimal.RequireFromString("1"), Creada: t0, Actualizada: t0}
	if item := mustItem(EncodeCuenta(c, nil)); item["aplicado"] != nil {
		t.Errorf("an account with no known aplicado was written with %v", item["aplicado"])
	}
	stored := mustItem(EncodeCuenta(c, nil))
	stored["aplicado"] = s("not a time") // a hand edit: read as unknown, kept as it is
	back, _, err := DecodeCuenta(written(stored))
	if err != nil || !back.Aplicado.IsZero() {
		t.Fatalf("decoded %+v, %v; want aplicado read as unknown", back, err)
	}
	back.Limite = decimal.RequireFromString("5")
	if next := mustItem(EncodeCuenta(back, stored)); !reflect.DeepEqual(next["aplicado"], s("not a time")) {
		t.Errorf("aplicado after the write = %v, want it kept as stored", next["aplicado"])
	}
	back.Aplicado = t0
	if next := mustItem(EncodeCuenta(back, stored)); !reflect.DeepEqual(next["aplicado"], s("2026-12-02T10:15:00.123456789Z")) {
		t.Errorf("aplicado after a movement = %v, want the movement's", next["aplicado"])
	}
}

// Stored data is read leniently: a movement recorded under older rules still decodes,
// and an account version it carries in another type (a hand edit) reads as none.
func TestStoredMovementsDecodeWithoutTodaysRules(t *testing.T) {
	old := versioned.Item{
		"pk": s("CUENTA#ES76"), "sk": s("MOV#legacy id"), "tipo": s("cargo"), "moneda": s("HRK"), "huella": s("v0"),
		"importe": &types.AttributeValueMemberN{Value: "10.005"}, "estado": s("aplicado"), "aplicado": s("2020-01-01T00:00:00Z"),
		"seq": &types.AttributeValueMemberN{Value: "1"}, "saldo_tras": &types.AttributeValueMemberN{Value: "-10.005"},
		"version": s("siete"),
	}
	a, err := DecodeApunte(old)
	if err != nil {
		t.Fatal(err)
	}
	if a.Movimiento.ID != "legacy id" || a.Movimiento.Moneda != "HRK" || !a.Movimiento.Importe.Equal(decimal.RequireFromString("10.005")) || a.Seq != 1 || a.Version != 0 {
		t.Errorf("decoded %+v", a)
	}
}

func TestDecodeRefusesForeignItems(t *testing.T) {
	if _, _, err := DecodeCuenta(versioned.Item{"pk": s("MIGRACION#0001"), "sk": s("MIGRACION")}); err == nil {
		t.Error("a migration record decoded as an account")
	}
	broken := mustItem(EncodeCuenta(cuenta.Nueva("ES76", "EUR"), nil))
	broken["saldo"] = s("diez")
	if _, _, err := DecodeCuenta(broken); err == nil {
		t.Error("an account with a text balance decoded")
	}
	if _, err := DecodeApunte(mustItem(EncodeCuenta(cuenta.Nueva("ES76", "EUR"), nil))); err == nil {
		t.Error("an account item decoded as a movement")
	}
}

// written is an account image as a transaction writes it: with its version, which
// versioned.BuildInput sets.
func written(item versioned.Item) versioned.Item {
	item = maps.Clone(item)
	if item[AttrVersion] == nil {
		item[AttrVersion] = &types.AttributeValueMemberN{Value: "1"}
	}
	return item
}
