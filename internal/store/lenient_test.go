package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ledger-dev/ledger/internal/audit"
	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/store"
	"github.com/ledger-dev/ledger/internal/testenv"
)

// putYesterday writes an account and one applied movement the way an older release
// did, under rules the parser no longer follows.
func putYesterday(t *testing.T, env *testenv.DynamoDB, cuenta, id, tipo, importe, moneda, huella string) {
	t.Helper()
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	n := func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	saldo := importe
	if tipo == "cargo" {
		saldo = "-" + importe
	}
	for _, it := range []item{
		{"pk": s("CUENTA#" + cuenta), "sk": s("CUENTA"), "saldo": n(saldo), "moneda": s(moneda), "version": n("1"), "movimientos": n("1"),
			"limite": n("1000"), "creada": s("2024-01-01T00:00:00Z"), "actualizada": s("2024-01-01T00:00:00Z")},
		{"pk": s("CUENTA#" + cuenta), "sk": s("MOV#" + id), "tipo": s(tipo), "importe": n(importe), "moneda": s(moneda), "huella": s(huella),
			"estado": s("aplicado"), "seq": n("1"), "saldo_tras": n(saldo), "aplicado": s("2024-01-01T00:00:00Z"), "origen": s("msg-0")},
	} {
		if _, err := env.Client.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(env.Table()), Item: it}); err != nil {
			t.Fatal(err)
		}
	}
}

// A movement in a currency since withdrawn, with an id today's rules refuse, still
// audits and answers reads.
func TestYesterdaysMovementAuditsAndAnswers(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	putYesterday(t, env, "HR01", "pago viejo", "cargo", "10.005", "HRK", "cualquiera")
	ctx := context.Background()
	report, err := audit.Run(ctx, env.Client, env.Table(), audit.Options{})
	if err != nil || !report.OK || report.Movements != 1 {
		t.Fatalf("audit = %+v, %v; want a clean table with 1 movement", report, err)
	}
	reader := store.NewReader(env.Client, env.Table())
	a, err := reader.Apunte(ctx, "HR01", "pago viejo")
	if err != nil || a.Movimiento.Moneda != "HRK" || a.Movimiento.Importe.String() != "10.005" {
		t.Fatalf("read = %+v, %v", a, err)
	}
	movs, _, err := reader.Extracto(ctx, "HR01", 10, 0)
	if err != nil || len(movs) != 1 {
		t.Fatalf("statement = %+v, %v", movs, err)
	}
}

// An account whose version no retry can read is a permanent failure for what touches
// it, parked with its reason at once, not retried until the queue gives up; the rest of
// its batch comes back, and applies in a batch without it.
func TestAnUnreadableVersionIsPermanent(t *testing.T) {
	for bad, shown := range map[types.AttributeValue]string{
		&types.AttributeValueMemberS{Value: "uno"}: `version "uno"`,
		&types.AttributeValueMemberN{Value: "0"}:   "version 0,", // versions start at 1
	} {
		env := testenv.NewDynamoDB(t)
		putYesterday(t, env, "V1", "a", "abono", "10", "EUR", "x")
		if _, err := env.Client.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{
			TableName: aws.String(env.Table()), Key: item{"pk": &types.AttributeValueMemberS{Value: "CUENTA#V1"}, "sk": &types.AttributeValueMemberS{Value: "CUENTA"}},
			UpdateExpression: aws.String("SET version = :v"), ExpressionAttributeValues: item{":v": bad},
		}); err != nil {
			t.Fatal(err)
		}
		svc, err := store.New(env.Client, store.Config{Table: env.Table()})
		if err != nil {
			t.Fatal(err)
		}
		healthy := mov(t, "w", "W1", movimiento.Abono, "5.00")
		rs := svc.Apply(context.Background(), []store.Entrega{
			{Mov: healthy}, {Mov: traspaso(t, "tr", "W1", "V1", "1.00")}, {Mov: mov(t, "b", "V1", movimiento.Abono, "1.00")},
		})
		if !rs[0].Retry() {
			t.Errorf("version %v: a movement of a healthy account in the batch = %+v, want it back", bad, rs[0])
		}
		for _, r := range rs[1:] {
			if !errors.Is(r.Err, store.ErrPermanent) || r.Outcome != store.Failed || !strings.Contains(r.Err.Error(), `account V1`) || !strings.Contains(r.Err.Error(), shown) {
				t.Errorf("version %v: a movement touching V1 = %+v, want a permanent failure naming V1 and its version", bad, r)
			}
		}
		if r, _ := testenv.One(svc.Apply(context.Background(), []store.Entrega{{Mov: healthy}})); r.Outcome != store.Applied {
			t.Errorf("version %v: the healthy movement alone = %+v, want applied", bad, r)
		}
	}
}

// An item without what every release wrote on it (an account's saldo, a posted
// movement's importe) is unreadable, not read as zero: nothing applies on top of a
// made-up balance, no reversal undoes a made-up amount, and reads say what is missing.
func TestAnItemMissingItsMoneyIsNotReadAsZero(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	ctx := context.Background()
	putYesterday(t, env, "S1", "a", "abono", "10", "EUR", "x")
	putYesterday(t, env, "S2", "a", "abono", "10", "EUR", "x")
	for _, drop := range []struct{ pk, sk, attr string }{{"CUENTA#S1", "CUENTA", "saldo"}, {"CUENTA#S2", "MOV#a", "importe"}} {
		it := get(t, env, drop.pk, drop.sk)
		delete(it, drop.attr)
		put(t, env, it)
	}
	svc := newService(t, env, cuenta.Retry)
	if r := apply(t, svc, mov(t, "b", "S1", movimiento.Abono, "1.00")); !errors.Is(r.Err, store.ErrPermanent) || !strings.Contains(r.Err.Error(), "account S1 has no saldo") {
		t.Errorf("a credit of an account without saldo = %+v, want a permanent failure naming saldo", r)
	}
	if _, err := store.NewReader(env.Client, env.Table()).Cuenta(ctx, "S1"); err == nil || !strings.Contains(err.Error(), "has no saldo") {
		t.Errorf("reading the account without saldo: %v, want an error naming saldo", err)
	}
	if r := apply(t, svc, anulacion(t, "rev", "S2", "a", "", "")); !errors.Is(r.Err, store.ErrPermanent) || !strings.Contains(r.Err.Error(), "has no importe") {
		t.Errorf("a reversal of a movement without importe = %+v, want a permanent failure naming importe", r)
	}
	assertAccount(t, env, "S2", "10", 1, 1)
	// Only what touches the unreadable account fails for good; a credit beside it in
	// the batch comes back, and applies without it.
	rs := svc.Apply(ctx, []store.Entrega{{Mov: mov(t, "w0", "W1", movimiento.Abono, "5.00")}, {Mov: traspaso(t, "tr", "W1", "S1", "1.00")}})
	if !rs[0].Retry() || !errors.Is(rs[1].Err, store.ErrPermanent) {
		t.Errorf("a credit of W1 beside a transfer to S1 = %+v, want the credit back and the transfer failed for good", rs)
	}
	report, err := audit.Run(ctx, env.Client, env.Table(), audit.Options{})
	if err != nil || report.Accounts != 2 || len(report.Broken) != 2 ||
		report.Broken[0].Reason != "account item unreadable: items: account S1 has no saldo" || !strings.Contains(report.Broken[1].Reason, "applied movement S2/a has no importe") {
		t.Errorf("audit = %+v, %v; want both accounts counted, S1's item unreadable and S2's movement without importe", report, err)
	}
}

// An informational attribute of another type or spelling (another writer, a hand edit)
// reads as zero: the account still takes movements, its movements still answer their
// redeliveries, reads and the audit still work. An optional number stored as NULL is no
// value. Anything else unreadable fails its item, naming the attribute.
func TestOddInformationalAttributesDoNotBlockAnAccount(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	ctx := context.Background()
	putYesterday(t, env, "IN01", "pago-1", "abono", "10", "EUR", testenv.Movement(t, movimiento.Datos{ID: "pago-1", Cuenta: "IN01", Tipo: movimiento.Abono, Importe: "10", Moneda: "EUR"}).Huella())
	set := func(sk, expr string, values item) {
		t.Helper()
		in := &dynamodb.UpdateItemInput{
			TableName: aws.String(env.Table()), Key: item{"pk": &types.AttributeValueMemberS{Value: "CUENTA#IN01"}, "sk": &types.AttributeValueMemberS{Value: sk}},
			UpdateExpression: aws.String(expr), ExpressionAttributeValues: values,
		}
		if strings.Contains(expr, "#h") {
			in.ExpressionAttributeNames = map[string]string{"#h": "aut-1"}
		}
		if _, err := env.Client.UpdateItem(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	set("CUENTA", "SET creada = :c, limite = :l", item{":c": &types.AttributeValueMemberS{Value: "2024-01-01 00:00:00"}, ":l": &types.AttributeValueMemberNULL{Value: true}})
	set("MOV#pago-1", "SET aplicado = :a, origen = :o", item{":a": &types.AttributeValueMemberBOOL{Value: true}, ":o": &types.AttributeValueMemberN{Value: "7"}})

	svc := newService(t, env, cuenta.Retry)
	if r, _ := testenv.One(svc.Apply(ctx, []store.Entrega{{Mov: mov(t, "pago-2", "IN01", movimiento.Abono, "5.00")}})); r.Outcome != store.Applied {
		t.Fatalf("a new movement = %+v, want applied", r)
	}
	if creada := get(t, env, "CUENTA#IN01", "CUENTA").str("creada"); creada != "2024-01-01 00:00:00" {
		t.Errorf("creada written back as %q: what was read as zero must be kept as stored", creada)
	}
	again, _ := movimiento.New(movimiento.Datos{ID: "pago-1", Cuenta: "IN01", Tipo: movimiento.Abono, Importe: "10", Moneda: "EUR"})
	if r, _ := testenv.One(svc.Apply(ctx, []store.Entrega{{Mov: again}})); r.Outcome != store.Duplicate {
		t.Fatalf("a redelivery of the odd movement = %+v, want a duplicate", r)
	}
	reader := store.NewReader(env.Client, env.Table())
	if c, err := reader.Cuenta(ctx, "IN01"); err != nil || c.Saldo.String() != "15" || !c.Limite.IsZero() {
		t.Fatalf("account = %+v, %v; want saldo 15, no overdraft", c, err)
	}
	if report, err := audit.Run(ctx, env.Client, env.Table(), audit.Options{}); err != nil || !report.OK {
		t.Fatalf("audit = %+v, %v; want clean", report, err)
	}
	// A hold's amount is money: without it, or NULL, the account is unreadable, not an
	// account with 10.00 more available.
	held := clocked(t, env, cuenta.Retry, newClock())
	if r, _ := testenv.One(held.Apply(ctx, []store.Entrega{{Mov: hold(t, "aut-1", "IN01", "10.00", fixedNow.Add(time.Hour))}})); r.Outcome != store.Applied {
		t.Fatalf("a hold = %+v, want applied", r)
	}
	set("CUENTA", "SET retenciones.#h.importe = :n", item{":n": &types.AttributeValueMemberNULL{Value: true}})
	if _, err := reader.Cuenta(ctx, "IN01"); err == nil || !strings.Contains(err.Error(), "attribute retenciones") {
		t.Fatalf("an account whose hold's importe is NULL read: %v; want an error naming the holds", err)
	}
	set("CUENTA", "REMOVE retenciones.#h.importe", nil)
	if _, err := reader.Cuenta(ctx, "IN01"); err == nil || !strings.Contains(err.Error(), "hold aut-1 has no importe") {
		t.Fatalf("an account whose hold has no importe read: %v; want an error naming the hold's importe", err)
	}
	// What decides a movement is never read leniently, and the failure names it.
	set("CUENTA", "SET bloqueada = :b", item{":b": &types.AttributeValueMemberS{Value: "si"}})
	if _, err := reader.Cuenta(ctx, "IN01"); err == nil || !strings.Contains(err.Error(), "attribute bloqueada") {
		t.Fatalf("an account frozen in words read: %v; want an error naming bloqueada", err)
	}
}

// A hold's record is what a capture without an amount takes: one without its importe,
// or with a NULL one, is unreadable, never a hold of nothing captured for free.
func TestAHoldRecordWithoutItsAmountIsNotCapturedForNothing(t *testing.T) {
	for _, null := range []bool{true, false} {
		env := testenv.NewDynamoDB(t)
		ctx := context.Background()
		svc := clocked(t, env, cuenta.Retry, newClock())
		for _, m := range []movimiento.Movimiento{mov(t, "a", "H1", movimiento.Abono, "100.00"), hold(t, "aut-1", "H1", "30.00", fixedNow.Add(time.Hour))} {
			if r, _ := testenv.One(svc.Apply(ctx, []store.Entrega{{Mov: m}})); r.Outcome != store.Applied {
				t.Fatalf("%s = %+v, want applied", m.ID, r)
			}
		}
		record := get(t, env, "CUENTA#H1", "MOV#aut-1")
		delete(record, "importe")
		if null {
			record["importe"] = &types.AttributeValueMemberNULL{Value: true}
		}
		put(t, env, record)
		r, _ := testenv.One(svc.Apply(ctx, []store.Entrega{{Mov: settleHold(t, movimiento.Captura, "cap-1", "H1", "aut-1", "")}}))
		if !errors.Is(r.Err, store.ErrPermanent) || !strings.Contains(r.Err.Error(), "importe") {
			t.Errorf("NULL %v: a capture of the hold = %+v, want a permanent failure naming importe", null, r)
		}
		if saldo, held := retenido(t, env, "H1"); saldo != "100" || held != "30" {
			t.Errorf("NULL %v: saldo %s, retenido %s; want 100 and 30 still held", null, saldo, held)
		}
	}
}
