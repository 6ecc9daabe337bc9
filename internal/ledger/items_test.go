package ledger

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/versioned"
)

var t0 = time.Date(2026, 12, 2, 10, 15, 0, 123456789, time.UTC)

func testMov(t *testing.T, id string, tipo movimiento.Tipo, importe string) movimiento.Movimiento {
	t.Helper()
	m, err := movimiento.New(movimiento.Datos{ID: id, Cuenta: "ES76", Tipo: tipo, Importe: importe, Moneda: "EUR", Concepto: "Pedido 1234", Fecha: "2026-12-02T10:15:00Z"})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestMovementItemHasTheDesignedAttributes(t *testing.T) {
	m := testMov(t, "pago-8f2c", movimiento.Cargo, "50.00")
	applied := apunteItem(Apunte{Movimiento: m, Huella: m.Huella(), Estado: Aplicado, Seq: 7, SaldoTras: decimal.RequireFromString("-12.5"), Aplicado: t0, Origen: "msg-1"}, stamp(t0))
	want := []string{"aplicado", "concepto", "estado", "fecha", "huella", "importe", "moneda", "origen", "pk", "saldo_tras", "seq", "sk", "tipo"}
	if got := slices.Sorted(maps.Keys(applied)); !slices.Equal(got, want) {
		t.Errorf("applied movement attributes = %v, want %v", got, want)
	}
	if applied["pk"].(*types.AttributeValueMemberS).Value != "CUENTA#ES76" || applied["sk"].(*types.AttributeValueMemberS).Value != "MOV#pago-8f2c" {
		t.Errorf("key = %v/%v", applied["pk"], applied["sk"])
	}
	if _, ok := applied["seq"].(*types.AttributeValueMemberN); !ok {
		t.Error("seq must be a number: it is the por_seq index's sort key")
	}

	rejected := apunteItem(Apunte{Movimiento: m, Huella: m.Huella(), Estado: Rechazado, Motivo: "insufficient funds", Aplicado: t0}, stamp(t0))
	if _, ok := rejected["seq"]; ok {
		t.Error("a rejected movement carries a seq: it would appear in the statement")
	}
	if _, ok := rejected["saldo_tras"]; ok {
		t.Error("a rejected movement carries a saldo_tras")
	}
}

func TestItemsRoundTrip(t *testing.T) {
	m := testMov(t, "pago-8f2c", movimiento.Abono, "50.00")
	a := Apunte{Movimiento: m, Huella: m.Huella(), Estado: Aplicado, Seq: 3, SaldoTras: decimal.RequireFromString("150.25"), Aplicado: t0, Origen: "msg-1"}
	got, err := decodeApunte(apunteItem(a, stamp(t0)))
	if err != nil {
		t.Fatal(err)
	}
	if got.Movimiento.Huella() != m.Huella() || got.Huella != a.Huella || got.Seq != 3 || !got.SaldoTras.Equal(a.SaldoTras) ||
		!got.Aplicado.Equal(t0) || got.Origen != "msg-1" || got.Movimiento.Concepto != m.Concepto || got.Movimiento.Fecha != m.Fecha {
		t.Errorf("round trip = %+v, want %+v", got, a)
	}

	c := cuenta.Cuenta{ID: "ES76", Moneda: "EUR", Saldo: decimal.RequireFromString("-0.01"), Limite: decimal.RequireFromString("100"), Movimientos: 9}
	item := cuentaItem(c, nil, stamp(t0))
	item["version"] = &types.AttributeValueMemberN{Value: "12"}
	back, ok, err := decodeCuenta(item)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if back.ID != c.ID || !back.Saldo.Equal(c.Saldo) || !back.Limite.Equal(c.Limite) || back.Movimientos != 9 || back.Version != 12 ||
		!back.Creada.Equal(t0) || !back.Actualizada.Equal(t0) {
		t.Errorf("account round trip = %+v, want %+v created and updated at %v", back, c, t0)
	}

	// A later write keeps what it does not change, including attributes it does not know.
	item["titular"] = s("Ana")
	c.Saldo, c.Movimientos = decimal.RequireFromString("7"), 10
	later := cuentaItem(c, item, stamp(t0.Add(time.Hour)))
	back, _, err = decodeCuenta(later)
	if err != nil || !back.Creada.Equal(t0) || !back.Actualizada.Equal(t0.Add(time.Hour)) || !back.Saldo.Equal(c.Saldo) || back.Movimientos != 10 {
		t.Errorf("later image = %+v, %v", back, err)
	}
	if later["titular"] != item["titular"] {
		t.Error("an attribute another writer keeps on the account was dropped")
	}
}

func TestDecodeRefusesForeignItems(t *testing.T) {
	if _, _, err := decodeCuenta(versioned.Item{"pk": s("MIGRACION#0001"), "sk": s("MIGRACION")}); err == nil {
		t.Error("a migration record decoded as an account")
	}
	broken := cuentaItem(cuenta.Nueva("ES76", "EUR"), nil, stamp(t0))
	broken["saldo"] = s("diez")
	if _, _, err := decodeCuenta(broken); err == nil {
		t.Error("an account with a text balance decoded")
	}
	if _, err := decodeApunte(cuentaItem(cuenta.Nueva("ES76", "EUR"), nil, stamp(t0))); err == nil {
		t.Error("an account item decoded as a movement")
	}
}

// TestPlannedRequests table-tests the TransactWriteItems a delivery turns into, for a
// given account state, without any I/O.
func TestPlannedRequests(t *testing.T) {
	existing := cuentaItem(cuenta.Cuenta{ID: "ES76", Moneda: "EUR", Saldo: decimal.RequireFromString("30"), Movimientos: 4, Creada: t0, Actualizada: t0}, nil, stamp(t0))
	existing["version"] = &types.AttributeValueMemberN{Value: "6"}
	cases := []struct {
		name    string
		state   versioned.State
		policy  FundsPolicy
		movs    []movimiento.Movimiento
		actions string // P: put movement, A: absent check, U: account put, C: account check
		cond    string // the account action's condition
		saldo   string // the account's new saldo, if written
		seqs    []int64
	}{
		{name: "first movement opens the account", state: versioned.State{}, policy: Retry,
			movs: []movimiento.Movimiento{testMov(t, "a", movimiento.Abono, "10.00")}, actions: "PU", cond: "attribute_not_exists(#pk)", saldo: "10", seqs: []int64{1}},
		{name: "abono on an existing account", state: versioned.State{Item: existing, Version: 6}, policy: Retry,
			movs: []movimiento.Movimiento{testMov(t, "a", movimiento.Abono, "0.01")}, actions: "PU", cond: "#v = :v", saldo: "30.01", seqs: []int64{5}},
		{name: "three coalesced, summed change", state: versioned.State{Item: existing, Version: 6}, policy: Retry,
			movs:    []movimiento.Movimiento{testMov(t, "a", movimiento.Cargo, "30.00"), testMov(t, "b", movimiento.Abono, "5.00"), testMov(t, "c", movimiento.Cargo, "1.50")},
			actions: "PPPU", cond: "#v = :v", saldo: "3.5", seqs: []int64{5, 6, 7}},
		{name: "insufficient under retry: checked absent, account guarded", state: versioned.State{Item: existing, Version: 6}, policy: Retry,
			movs: []movimiento.Movimiento{testMov(t, "a", movimiento.Cargo, "30.01")}, actions: "AC", cond: "#v = :v"},
		{name: "insufficient under reject: recorded, account guarded", state: versioned.State{Item: existing, Version: 6}, policy: Reject,
			movs: []movimiento.Movimiento{testMov(t, "a", movimiento.Cargo, "30.01")}, actions: "PC", cond: "#v = :v"},
		{name: "a rule failure excludes only its own movement", state: versioned.State{Item: existing, Version: 6}, policy: Retry,
			movs:    []movimiento.Movimiento{testMov(t, "a", movimiento.Cargo, "31.00"), testMov(t, "b", movimiento.Abono, "1.00"), testMov(t, "c", movimiento.Cargo, "31.00")},
			actions: "PPAU", cond: "#v = :v", saldo: "0", seqs: []int64{5, 6}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var es []Entrega
			var pending []int
			for i, m := range tc.movs {
				es = append(es, Entrega{Mov: m, Origen: "msg"})
				pending = append(pending, i)
			}
			p := &planner{cuenta: "ES76", entregas: es, pending: pending, policy: tc.policy, now: t0}
			txn, err := p.plan(tc.state)
			if err != nil {
				t.Fatal(err)
			}
			in, err := versioned.BuildInput(Table("ledger"), cuentaKey("ES76"), tc.state.Version, txn)
			if err != nil {
				t.Fatal(err)
			}
			var shape string
			var seqs []int64
			var acct *types.Put
			var check *types.ConditionCheck
			for _, it := range in.TransactItems {
				switch {
				case it.Put != nil && it.Put.Item["sk"].(*types.AttributeValueMemberS).Value == "CUENTA":
					shape, acct = shape+"U", it.Put
				case it.Put != nil:
					shape += "P"
					if seq, ok := it.Put.Item["seq"].(*types.AttributeValueMemberN); ok {
						seqs = append(seqs, decimal.RequireFromString(seq.Value).IntPart())
					}
				case it.ConditionCheck != nil && it.ConditionCheck.Key["sk"].(*types.AttributeValueMemberS).Value == "CUENTA":
					shape, check = shape+"C", it.ConditionCheck
				case it.ConditionCheck != nil:
					shape += "A"
				}
			}
			if shape != tc.actions {
				t.Fatalf("actions = %s, want %s", shape, tc.actions)
			}
			if !slices.Equal(seqs, tc.seqs) {
				t.Errorf("seqs = %v, want %v", seqs, tc.seqs)
			}
			cond := ""
			if acct != nil {
				cond = aws.ToString(acct.ConditionExpression)
				if got := acct.Item["saldo"].(*types.AttributeValueMemberN).Value; !decimal.RequireFromString(got).Equal(decimal.RequireFromString(tc.saldo)) {
					t.Errorf("new saldo = %s, want %s", got, tc.saldo)
				}
				if got := acct.Item["version"].(*types.AttributeValueMemberN).Value; got != decimal.NewFromInt(tc.state.Version+1).String() {
					t.Errorf("new version = %s, want %d", got, tc.state.Version+1)
				}
			}
			if check != nil {
				cond = aws.ToString(check.ConditionExpression)
			}
			if cond != tc.cond {
				t.Errorf("account condition = %q, want %q", cond, tc.cond)
			}
		})
	}
}
