package store

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/items"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/versioned"
)

// request is a planned TransactWriteItems, read back: its actions' shape (P: put a
// movement, A: check a movement absent, U: put an account, C: check an account), the
// movements' seqs, and each account action by account. R is a record replaced under
// conditions (a reversed original). versions are the account versions the created
// records carry.
type request struct {
	shape    string
	seqs     []int64
	versions []int64
	accounts map[string]types.TransactWriteItem
	replaced []versioned.Item
}

func readRequest(in *dynamodb.TransactWriteItemsInput) request {
	r := request{accounts: map[string]types.TransactWriteItem{}}
	for _, it := range in.TransactItems {
		switch {
		case it.Put != nil && it.Put.Item["sk"].(*types.AttributeValueMemberS).Value == items.CuentaSK:
			r.shape += "U"
			r.accounts[it.Put.Item["pk"].(*types.AttributeValueMemberS).Value] = it
		case it.Put != nil && strings.Contains(aws.ToString(it.Put.ConditionExpression), "#c0"):
			r.shape += "R"
			r.replaced = append(r.replaced, it.Put.Item)
		case it.Put != nil:
			r.shape += "P"
			if v, ok := it.Put.Item["version"].(*types.AttributeValueMemberN); ok {
				r.versions = append(r.versions, decimal.RequireFromString(v.Value).IntPart())
			}
			if seq, ok := it.Put.Item["seq"].(*types.AttributeValueMemberN); ok {
				r.seqs = append(r.seqs, decimal.RequireFromString(seq.Value).IntPart())
			}
		case it.ConditionCheck != nil && it.ConditionCheck.Key["sk"].(*types.AttributeValueMemberS).Value == items.CuentaSK:
			r.shape += "C"
			r.accounts[it.ConditionCheck.Key["pk"].(*types.AttributeValueMemberS).Value] = it
		case it.ConditionCheck != nil:
			r.shape += "A"
		}
	}
	return r
}

// storedAt is account c as stored at version.
func storedAt(c cuenta.Cuenta, version int64) stored {
	item := must(items.EncodeCuenta(c, nil))
	item["version"] = &types.AttributeValueMemberN{Value: strconv.FormatInt(version, 10)}
	c.Version = version
	return stored{c: c, item: item}
}

// plannedRequest plans movs (all deliveries pending) against the accounts as stored
// (nil: none yet) and builds the request, without any I/O.
func plannedRequest(t *testing.T, st []stored, policy cuenta.FundsPolicy, movs ...movimiento.Movimiento) request {
	t.Helper()
	var es []Entrega
	var pending []int
	for i, m := range movs {
		es = append(es, Entrega{Mov: m, Origen: "msg"})
		pending = append(pending, i)
	}
	r, chunk := plannedChunk(t, st, policy, es, pending, nil)
	if len(chunk) != len(movs) {
		t.Fatalf("only %d of %d movements fit one transaction", len(chunk), len(movs))
	}
	return r
}

// plannedChunk plans the first chunk of pending, with records as read before it.
func plannedChunk(t *testing.T, st []stored, policy cuenta.FundsPolicy, es []Entrega, pending []int, records map[movKey]versioned.Item) (request, []int) {
	t.Helper()
	g := newGroup(es, t0)
	for k, item := range records {
		g.keepRecord(k, item)
	}
	c := g.nextChunk(pending, len(es))
	if st == nil {
		st = make([]stored, len(c.cuentas))
	}
	p, err := g.plan(c, st, policy)
	if err != nil {
		t.Fatal(err)
	}
	in, err := versioned.BuildInput(items.Table("ledger"), p.keys, p.versions, p.txn)
	if err != nil {
		t.Fatal(err)
	}
	return readRequest(in), c.entregas
}

// A batch mixing movements, a reversal of one of them and duplicates of both: the
// duplicates follow their first delivery (no action of their own), and the reversal
// waits for the next transaction, as DynamoDB allows one action per item in a
// transaction and its original is written in the first. Two transactions in all.
func TestCoalescingAroundAReversal(t *testing.T) {
	m1, m2, m3 := testMov(t, "m1", movimiento.Cargo, "10.00"), testMov(t, "m2", movimiento.Abono, "5.00"), testMov(t, "m3", movimiento.Abono, "1.00")
	rev, err := movimiento.New(movimiento.Datos{ID: "r1", Cuenta: "ES76", Tipo: movimiento.Anulacion, Anula: "m1"})
	if err != nil {
		t.Fatal(err)
	}
	es := []Entrega{{Mov: m1}, {Mov: m2}, {Mov: rev}, {Mov: m1}, {Mov: rev}, {Mov: m3}}
	leaders := []int{0, 1, 2, 5} // 3 and 4 repeat 0 and 2 and follow their results

	existing := storedAt(cuenta.Cuenta{ID: "ES76", Moneda: "EUR", Saldo: decimal.RequireFromString("30"), Movimientos: 4, Creada: t0, Actualizada: t0}, 6)
	first, chunk := plannedChunk(t, []stored{existing}, cuenta.Retry, es, leaders, nil)
	if first.shape != "PPU" || !slices.Equal(chunk, []int{0, 1}) || !slices.Equal(first.seqs, []int64{5, 6}) {
		t.Fatalf("first transaction: %s for %v, seqs %v; want PPU for m1 and m2 at 5, 6", first.shape, chunk, first.seqs)
	}

	original := must(items.EncodeApunte(movimiento.Apunte{Movimiento: m1, Huella: m1.Huella(), Estado: movimiento.Aplicado, Seq: 5, SaldoTras: decimal.RequireFromString("20"), Aplicado: t0}))
	after := storedAt(cuenta.Cuenta{ID: "ES76", Moneda: "EUR", Saldo: decimal.RequireFromString("25"), Movimientos: 6, Creada: t0, Actualizada: t0}, 7)
	second, chunk := plannedChunk(t, []stored{after}, cuenta.Retry, es, leaders[2:], map[movKey]versioned.Item{{"ES76", "m1"}: original})
	if second.shape != "PPRU" || !slices.Equal(chunk, []int{2, 5}) || !slices.Equal(second.seqs, []int64{7, 8}) {
		t.Fatalf("second transaction: %s for %v, seqs %v; want the reversal and m3 (PP), m1 marked (R), the account (U) at 7, 8", second.shape, chunk, second.seqs)
	}
	if saldo := second.accounts["CUENTA#ES76"].Put.Item["saldo"].(*types.AttributeValueMemberN).Value; saldo != "36" {
		t.Errorf("saldo after reversing m1 and m3 = %s, want 36", saldo)
	}
	if r := second.replaced[0]; r["sk"].(*types.AttributeValueMemberS).Value != "MOV#m1" || r["anulado_por"].(*types.AttributeValueMemberS).Value != "r1" {
		t.Errorf("replaced %v, want m1 marked anulado_por r1", r)
	}
}

// TestPlannedRequests table-tests the TransactWriteItems deliveries turn into, for a
// given account state.
func TestPlannedRequests(t *testing.T) {
	at6 := []stored{storedAt(cuenta.Cuenta{ID: "ES76", Moneda: "EUR", Saldo: decimal.RequireFromString("30"), Movimientos: 4, Creada: t0, Actualizada: t0}, 6)}
	cases := []struct {
		name    string
		state   []stored
		policy  cuenta.FundsPolicy
		movs    []movimiento.Movimiento
		actions string
		cond    string // the account action's condition
		saldo   string // the account's new saldo, if written
		seqs    []int64
	}{
		{name: "first movement opens the account", policy: cuenta.Retry,
			movs: []movimiento.Movimiento{testMov(t, "a", movimiento.Abono, "10.00")}, actions: "PU", cond: "attribute_not_exists(#pk)", saldo: "10", seqs: []int64{1}},
		{name: "abono on an existing account", state: at6, policy: cuenta.Retry,
			movs: []movimiento.Movimiento{testMov(t, "a", movimiento.Abono, "0.01")}, actions: "PU", cond: "#v = :v", saldo: "30.01", seqs: []int64{5}},
		{name: "three coalesced, summed change", state: at6, policy: cuenta.Retry,
			movs:    []movimiento.Movimiento{testMov(t, "a", movimiento.Cargo, "30.00"), testMov(t, "b", movimiento.Abono, "5.00"), testMov(t, "c", movimiento.Cargo, "1.50")},
			actions: "PPPU", cond: "#v = :v", saldo: "3.5", seqs: []int64{5, 6, 7}},
		{name: "insufficient under retry: checked absent, account guarded", state: at6, policy: cuenta.Retry,
			movs: []movimiento.Movimiento{testMov(t, "a", movimiento.Cargo, "30.01")}, actions: "AC", cond: "#v = :v"},
		{name: "insufficient under reject: recorded, account guarded", state: at6, policy: cuenta.Reject,
			movs: []movimiento.Movimiento{testMov(t, "a", movimiento.Cargo, "30.01")}, actions: "PC", cond: "#v = :v"},
		{name: "a rule failure excludes only its own movement", state: at6, policy: cuenta.Retry,
			movs:    []movimiento.Movimiento{testMov(t, "a", movimiento.Cargo, "31.00"), testMov(t, "b", movimiento.Abono, "1.00"), testMov(t, "c", movimiento.Cargo, "31.00")},
			actions: "PPAU", cond: "#v = :v", saldo: "0", seqs: []int64{5, 6}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := plannedRequest(t, tc.state, tc.policy, tc.movs...)
			if r.shape != tc.actions {
				t.Fatalf("actions = %s, want %s", r.shape, tc.actions)
			}
			if !slices.Equal(r.seqs, tc.seqs) {
				t.Errorf("seqs = %v, want %v", r.seqs, tc.seqs)
			}
			acct := r.accounts["CUENTA#ES76"]
			cond := ""
			switch {
			case acct.Put != nil:
				cond = aws.ToString(acct.Put.ConditionExpression)
				if got := acct.Put.Item["saldo"].(*types.AttributeValueMemberN).Value; !decimal.RequireFromString(got).Equal(decimal.RequireFromString(tc.saldo)) {
					t.Errorf("new saldo = %s, want %s", got, tc.saldo)
				}
				want := int64(1)
				if tc.state != nil {
					want = tc.state[0].c.Version + 1
				}
				if got := acct.Put.Item["version"].(*types.AttributeValueMemberN).Value; got != decimal.NewFromInt(want).String() {
					t.Errorf("new version = %s, want %d", got, want)
				}
			case acct.ConditionCheck != nil:
				cond = aws.ToString(acct.ConditionCheck.ConditionExpression)
			}
			if cond != tc.cond {
				t.Errorf("account condition = %q, want %q", cond, tc.cond)
			}
		})
	}
}

// A batch whose transfers link three accounts in a cycle (A→B, B→C, C→A) with a plain
// movement among them is one group and, fitting in 100 actions, one transaction: each
// leg takes its own account's next seq, in arrival order, and each account is written
// once with its summed change.
func TestATransferCycleIsOneTransaction(t *testing.T) {
	tr := func(id, from, to, importe string) movimiento.Movimiento {
		m, err := movimiento.New(movimiento.Datos{ID: id, Cuenta: from, Destino: to, Tipo: movimiento.Traspaso, Importe: importe, Moneda: "EUR"})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	abono, err := movimiento.New(movimiento.Datos{ID: "b", Cuenta: "B", Tipo: movimiento.Abono, Importe: "5", Moneda: "EUR"})
	if err != nil {
		t.Fatal(err)
	}
	es := []Entrega{{Mov: tr("ab", "A", "B", "10")}, {Mov: abono}, {Mov: tr("bc", "B", "C", "20")}, {Mov: tr("ca", "C", "A", "30")}}
	var st []stored
	for _, id := range []string{"A", "B", "C"} {
		st = append(st, storedAt(cuenta.Cuenta{ID: id, Moneda: "EUR", Saldo: decimal.NewFromInt(100), Movimientos: 1, Creada: t0, Actualizada: t0}, 1))
	}
	r, chunk := plannedChunk(t, st, cuenta.Retry, es, []int{0, 1, 2, 3}, nil)
	if r.shape != "PPPPPPPUUU" || len(chunk) != 4 || !slices.Equal(r.seqs, []int64{2, 2, 3, 4, 2, 3, 3}) {
		t.Fatalf("request %s with seqs %v for %v; want 7 records (A2 B2, B3, B4 C2, C3 A3) and 3 accounts", r.shape, r.seqs, chunk)
	}
	for acct, want := range map[string]string{"CUENTA#A": "120", "CUENTA#B": "95", "CUENTA#C": "90"} {
		if got := r.accounts[acct].Put.Item["saldo"].(*types.AttributeValueMemberN).Value; got != want {
			t.Errorf("%s saldo = %s, want %s", acct, got, want)
		}
	}
}

var t0 = time.Date(2026, 12, 2, 10, 15, 0, 123456789, time.UTC)

// must is v; the values these tests build never give an error.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// testMov is an abono or cargo of importe EUR on ES76.
func testMov(_ testing.TB, id string, tipo movimiento.Tipo, importe string) movimiento.Movimiento {
	return must(movimiento.New(movimiento.Datos{ID: id, Cuenta: "ES76", Tipo: tipo, Importe: importe, Moneda: "EUR"}))
}
