package store_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ledger-dev/ledger/internal/ledger"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/store"
	"github.com/ledger-dev/ledger/internal/testenv"
)

// v1 is a fingerprint as the ledger wrote them before it stopped padding amounts to the
// currency's minor units, computed here by hand: SHA-256 over "v1" and the fields.
func v1(cuenta, id, tipo, importe, moneda string) string {
	sum := sha256.Sum256([]byte("v1\n" + cuenta + "\n" + id + "\n" + tipo + "\n" + importe + "\n" + moneda))
	return hex.EncodeToString(sum[:])
}

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

// A movement stored with a v1 fingerprint whose amount was padded with the minor units
// the currency had then is recognised when the same fact is delivered again today.
func TestYesterdaysFingerprintStillRecognisesItsDuplicate(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	svc := newService(t, env, ledger.Retry)
	putYesterday(t, env, "JP01", "pago-1", "abono", "100.00", "JPY", v1("JP01", "pago-1", "abono", "100.00", "JPY"))
	m, err := movimiento.New(movimiento.Datos{ID: "pago-1", Cuenta: "JP01", Tipo: movimiento.Abono, Importe: "100", Moneda: "JPY"})
	if err != nil {
		t.Fatal(err)
	}
	r, _ := svc.Apply(context.Background(), ledger.Entrega{Mov: m, Origen: "msg-1"})
	if r.Outcome != ledger.Duplicate || r.Seq != 1 {
		t.Fatalf("redelivery of yesterday's movement = %+v, want a duplicate of seq 1", r)
	}
	other, _ := movimiento.New(movimiento.Datos{ID: "pago-1", Cuenta: "JP01", Tipo: movimiento.Abono, Importe: "101", Moneda: "JPY"})
	if r, _ := svc.Apply(context.Background(), ledger.Entrega{Mov: other, Origen: "msg-2"}); r.Outcome != ledger.ConflictingDuplicate {
		t.Fatalf("another amount under the same id = %+v, want a conflicting duplicate", r)
	}
	// The same two in one batch, the altered one first: the genuine copy is still
	// recognised by yesterday's fingerprint, not failed as a conflict with its neighbour.
	rs := svc.ApplyAll(context.Background(), []ledger.Entrega{{Mov: other, Origen: "msg-3"}, {Mov: m, Origen: "msg-4"}})
	if rs[0].Outcome != ledger.ConflictingDuplicate || rs[1].Outcome == ledger.ConflictingDuplicate || errors.Is(rs[1].Err, ledger.ErrPermanent) {
		t.Fatalf("batch [altered, genuine] = %+v, want a conflict, then no permanent verdict on the genuine copy", rs)
	}
}

// A movement in a currency since withdrawn, with an id today's rules refuse, still
// audits and answers reads.
func TestYesterdaysMovementAuditsAndAnswers(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	putYesterday(t, env, "HR01", "pago viejo", "cargo", "10.005", "HRK", "cualquiera")
	ctx := context.Background()
	report, err := store.Audit(ctx, env.Client, env.Table(), store.AuditOptions{})
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
		rs := svc.ApplyAll(context.Background(), []ledger.Entrega{
			{Mov: healthy}, {Mov: traspaso(t, "tr", "W1", "V1", "1.00")}, {Mov: mov(t, "b", "V1", movimiento.Abono, "1.00")},
		})
		if !rs[0].Retry() {
			t.Errorf("version %v: a movement of a healthy account in the batch = %+v, want it back", bad, rs[0])
		}
		for _, r := range rs[1:] {
			if !errors.Is(r.Err, ledger.ErrPermanent) || r.Outcome != ledger.Failed || !strings.Contains(r.Err.Error(), `account V1`) || !strings.Contains(r.Err.Error(), shown) {
				t.Errorf("version %v: a movement touching V1 = %+v, want a permanent failure naming V1 and its version", bad, r)
			}
		}
		if r, _ := svc.Apply(context.Background(), ledger.Entrega{Mov: healthy}); r.Outcome != ledger.Applied {
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
	svc := newService(t, env, ledger.Retry)
	if r := apply(t, svc, mov(t, "b", "S1", movimiento.Abono, "1.00")); !errors.Is(r.Err, ledger.ErrPermanent) || !strings.Contains(r.Err.Error(), "account S1 has no saldo") {
		t.Errorf("a credit of an account without saldo = %+v, want a permanent failure naming saldo", r)
	}
	if _, err := store.NewReader(env.Client, env.Table()).Cuenta(ctx, "S1"); err == nil || !strings.Contains(err.Error(), "has no saldo") {
		t.Errorf("reading the account without saldo: %v, want an error naming saldo", err)
	}
	if r := apply(t, svc, anulacion(t, "rev", "S2", "a", "", "")); !errors.Is(r.Err, ledger.ErrPermanent) || !strings.Contains(r.Err.Error(), "has no importe") {
		t.Errorf("a reversal of a movement without importe = %+v, want a permanent failure naming importe", r)
	}
	assertAccount(t, env, "S2", "10", 1, 1)
	// Only what touches the unreadable account fails for good; a credit beside it in
	// the batch comes back, and applies without it.
	rs := svc.ApplyAll(ctx, []ledger.Entrega{{Mov: mov(t, "w0", "W1", movimiento.Abono, "5.00")}, {Mov: traspaso(t, "tr", "W1", "S1", "1.00")}})
	if !rs[0].Retry() || !errors.Is(rs[1].Err, ledger.ErrPermanent) {
		t.Errorf("a credit of W1 beside a transfer to S1 = %+v, want the credit back and the transfer failed for good", rs)
	}
	report, err := store.Audit(ctx, env.Client, env.Table(), store.AuditOptions{})
	if err != nil || report.Accounts != 2 || len(report.Broken) != 2 ||
		report.Broken[0].Reason != "account item unreadable: store: account S1 has no saldo" || !strings.Contains(report.Broken[1].Reason, "applied movement S2/a has no importe") {
		t.Errorf("audit = %+v, %v; want both accounts counted, S1's item unreadable and S2's movement without importe", report, err)
	}
}

// Releases before today's rules applied an abono that also carried a destino (they
// ignored it). Its redelivery, which today's parser refuses, is answered by its record
// as a duplicate; the same body with nothing recorded fails with today's refusal, its
// own, and writes nothing.
func TestABodyTodaysRulesRefuseIsAnsweredByItsRecord(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	svc := newService(t, env, ledger.Retry)
	putYesterday(t, env, "V1", "o2", "abono", "1.00", "EUR", v1("V1", "o2", "abono", "1.00", "EUR"))
	entrega := func(id, extra string) ledger.Entrega {
		body := []byte(`{"id":"` + id + `","cuenta":"V1","tipo":"abono","importe":"1","moneda":"EUR",` + extra + `}`)
		_, refused := movimiento.Parse(body)
		m, err := movimiento.ParseRecorded(body)
		if refused == nil || err != nil {
			t.Fatalf("today's parser: %v; older rules: %v; want a refusal, then a movement", refused, err)
		}
		return ledger.Entrega{Mov: m, Origen: "msg-" + id, Refused: refused}
	}
	destino, fecha := `"destino":"zz"`, `"fecha":"9999-12-31T23:00:00-24:00"`
	rs := svc.ApplyAll(context.Background(), []ledger.Entrega{entrega("o2", destino), entrega("o9", destino), entrega("o9", fecha)})
	if rs[0].Outcome != ledger.Duplicate || rs[0].Seq != 1 {
		t.Errorf("redelivery of the recorded abono = %+v, want a duplicate of seq 1", rs[0])
	}
	if !errors.Is(rs[1].Err, ledger.ErrPermanent) || !errors.Is(rs[1].Err, movimiento.ErrInvalid) || !strings.Contains(rs[1].Err.Error(), "destino") {
		t.Errorf("the same body, not recorded = %+v, want today's refusal of destino, permanent", rs[1])
	}
	if !errors.Is(rs[2].Err, ledger.ErrPermanent) || !strings.Contains(rs[2].Err.Error(), "fecha") {
		t.Errorf("another refused copy of o9 = %+v, want its own refusal, of fecha", rs[2])
	}
	assertAccount(t, env, "V1", "1.00", 1, 1)
	if it := get(t, env, "CUENTA#V1", "MOV#o9"); it != nil {
		t.Errorf("the refused body was recorded: %v", it)
	}
}

// An informational attribute of another type or spelling (another writer, a hand edit)
// reads as zero: the account still takes movements, its movements still answer their
// redeliveries, reads and the audit still work. An optional number stored as NULL is no
// value. Anything else unreadable fails its item, naming the attribute.
func TestOddInformationalAttributesDoNotBlockAnAccount(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	ctx := context.Background()
	putYesterday(t, env, "IN01", "pago-1", "abono", "10", "EUR", v1("IN01", "pago-1", "abono", "10", "EUR"))
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

	svc := newService(t, env, ledger.Retry)
	if r, _ := svc.Apply(ctx, ledger.Entrega{Mov: mov(t, "pago-2", "IN01", movimiento.Abono, "5.00")}); r.Outcome != ledger.Applied {
		t.Fatalf("a new movement = %+v, want applied", r)
	}
	if creada := get(t, env, "CUENTA#IN01", "CUENTA").str("creada"); creada != "2024-01-01 00:00:00" {
		t.Errorf("creada written back as %q: what was read as zero must be kept as stored", creada)
	}
	again, _ := movimiento.New(movimiento.Datos{ID: "pago-1", Cuenta: "IN01", Tipo: movimiento.Abono, Importe: "10", Moneda: "EUR"})
	if r, _ := svc.Apply(ctx, ledger.Entrega{Mov: again}); r.Outcome != ledger.Duplicate {
		t.Fatalf("a redelivery of the odd movement = %+v, want a duplicate", r)
	}
	reader := store.NewReader(env.Client, env.Table())
	if c, err := reader.Cuenta(ctx, "IN01"); err != nil || c.Saldo.String() != "15" || !c.Limite.IsZero() {
		t.Fatalf("account = %+v, %v; want saldo 15, no overdraft", c, err)
	}
	if report, err := store.Audit(ctx, env.Client, env.Table(), store.AuditOptions{}); err != nil || !report.OK {
		t.Fatalf("audit = %+v, %v; want clean", report, err)
	}
	// A hold's amount is money: without it, or NULL, the account is unreadable, not an
	// account with 10.00 more available.
	held := clocked(t, env, ledger.Retry, newClock())
	if r, _ := held.Apply(ctx, ledger.Entrega{Mov: hold(t, "aut-1", "IN01", "10.00", fixedNow.Add(time.Hour))}); r.Outcome != ledger.Applied {
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
		svc := clocked(t, env, ledger.Retry, newClock())
		for _, m := range []movimiento.Movimiento{mov(t, "a", "H1", movimiento.Abono, "100.00"), hold(t, "aut-1", "H1", "30.00", fixedNow.Add(time.Hour))} {
			if r, _ := svc.Apply(ctx, ledger.Entrega{Mov: m}); r.Outcome != ledger.Applied {
				t.Fatalf("%s = %+v, want applied", m.ID, r)
			}
		}
		record := get(t, env, "CUENTA#H1", "MOV#aut-1")
		delete(record, "importe")
		if null {
			record["importe"] = &types.AttributeValueMemberNULL{Value: true}
		}
		put(t, env, record)
		r, _ := svc.Apply(ctx, ledger.Entrega{Mov: settleHold(t, movimiento.Captura, "cap-1", "H1", "aut-1", "")})
		if !errors.Is(r.Err, ledger.ErrPermanent) || !strings.Contains(r.Err.Error(), "importe") {
			t.Errorf("NULL %v: a capture of the hold = %+v, want a permanent failure naming importe", null, r)
		}
		if saldo, held := retenido(t, env, "H1"); saldo != "100" || held != "30" {
			t.Errorf("NULL %v: saldo %s, retenido %s; want 100 and 30 still held", null, saldo, held)
		}
	}
}
