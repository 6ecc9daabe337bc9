package audit_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
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

// linkedLedger is a healthy account with one of each kind of record: an abono, a
// rejected cargo, a hold captured by cap, a hold released by lib, a hold still held;
// the audit passes it.
func linkedLedger(t *testing.T) *testenv.DynamoDB {
	t.Helper()
	env := testenv.NewDynamoDB(t)
	c := testenv.Clock()
	svc := testenv.Ledger(t, env, cuenta.Reject, c.Now)
	for _, m := range []movimiento.Movimiento{
		testenv.Mov(t, "a", "K", movimiento.Abono, "100.00"),
		testenv.Mov(t, "rj", "K", movimiento.Cargo, "1000.00"),
		testenv.Hold(t, "h1", "K", "30.00", c.Now().Add(time.Hour)),
		testenv.SettleHold(t, movimiento.Captura, "cap", "K", "h1", "20.00"),
		testenv.Hold(t, "h2", "K", "10.00", c.Now().Add(time.Hour)),
		testenv.SettleHold(t, movimiento.Liberacion, "lib", "K", "h2", ""),
		testenv.Hold(t, "h3", "K", "5.00", c.Now().Add(time.Hour)),
	} {
		if r := testenv.Apply(t, svc, m); r.Outcome != store.Applied && r.Outcome != store.Rejected {
			t.Fatalf("%s: %+v", m.ID, r)
		}
	}
	if report := audited(t, env); !report.OK {
		t.Fatalf("healthy: %+v", report)
	}
	return env
}

func audited(t *testing.T, env *testenv.DynamoDB) audit.Report {
	t.Helper()
	report, err := audit.Run(context.Background(), env.Client, env.Table(), audit.Options{Now: testenv.Clock().Now})
	if err != nil {
		t.Fatal(err)
	}
	return report
}

// The audit checks every record, not only the posted ones: a hold settled twice, a mark
// or a statement position on a record that is not applied, a posted movement without
// its running balance. Each corruption alone breaks K, and says how.
func TestAuditChecksEveryRecordsLinks(t *testing.T) {
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	n := func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	for _, tc := range []struct {
		name    string
		corrupt func(t *testing.T, env *testenv.DynamoDB)
		says    string
	}{
		{"a captured hold released too", func(t *testing.T, env *testenv.DynamoDB) {
			rec := env.Get(t, "CUENTA#K", "MOV#lib")
			rec["sk"], rec["retencion"] = s("MOV#lib-2"), s("h1")
			env.Put(t, rec)
		}, "release lib-2 frees hold h1, which does not name it as its release"},
		{"a hold captured twice", func(t *testing.T, env *testenv.DynamoDB) {
			// a second capture of h1, posted with the balance, count and running balance kept true
			k := env.Get(t, "CUENTA#K", "CUENTA")
			capture := env.Get(t, "CUENTA#K", "MOV#cap")
			capture["sk"], capture["seq"], capture["saldo_tras"] = s("MOV#cap-2"), n("3"), n("60")
			env.Put(t, capture)
			k["saldo"], k["movimientos"] = n("60"), n("3")
			env.Put(t, k)
		}, "capture cap-2 posts against hold h1, which does not name it as its capture"},
		{"a released hold whose release is gone", func(t *testing.T, env *testenv.DynamoDB) {
			_, err := env.Client.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{TableName: aws.String(env.Table()), Key: item{"pk": s("CUENTA#K"), "sk": s("MOV#lib")}})
			if err != nil {
				t.Fatal(err)
			}
		}, "hold h2 is released by lib, which is no recorded release of it"},
		{"a rejected movement marked reversed", func(t *testing.T, env *testenv.DynamoDB) {
			rec := env.Get(t, "CUENTA#K", "MOV#rj")
			rec["anulado_por"] = s("ghost")
			env.Put(t, rec)
		}, "movement rj (tipo cargo, estado rechazado) is not applied, yet marked reversed by ghost"},
		{"a rejected movement in the statement", func(t *testing.T, env *testenv.DynamoDB) {
			rec := env.Get(t, "CUENTA#K", "MOV#rj")
			rec["seq"], rec["saldo_tras"] = n("2"), n("-900")
			env.Put(t, rec)
		}, "movement rj (tipo cargo, estado rechazado) is not applied but has a seq or saldo_tras"},
		{"a hold in an estado not a hold's", func(t *testing.T, env *testenv.DynamoDB) {
			rec := env.Get(t, "CUENTA#K", "MOV#h2")
			rec["estado"] = s("aplicado")
			env.Put(t, rec)
		}, "movement h2 of tipo retencion has estado aplicado, which is not one of its tipo's"},
		{"a lapsed hold a write kept", func(t *testing.T, env *testenv.DynamoDB) {
			k := env.Get(t, "CUENTA#K", "CUENTA")
			k["retenciones"] = &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"h9": &types.AttributeValueMemberM{
				Value: map[string]types.AttributeValue{"importe": n("1"), "expira": s("2020-01-01T00:00:00Z")}}}}
			env.Put(t, k)
		}, "active hold h9 lapsed at 2020-01-01T00:00:00Z, yet the write at"},
		{"a record of a tipo the ledger never stores", func(t *testing.T, env *testenv.DynamoDB) {
			rec := env.Get(t, "CUENTA#K", "MOV#rj")
			rec["tipo"] = s("traspaso") // a transfer is stored as its legs, an abono and a cargo
			env.Put(t, rec)
		}, `movement rj has tipo "traspaso", which is none the ledger stores`},
		{"a record in another currency", func(t *testing.T, env *testenv.DynamoDB) {
			rec := env.Get(t, "CUENTA#K", "MOV#rj")
			rec["moneda"] = s("USD")
			env.Put(t, rec)
		}, "movement rj is in USD, but the account is in EUR"},
		{"a gap in the statement", func(t *testing.T, env *testenv.DynamoDB) {
			rec := env.Get(t, "CUENTA#K", "MOV#cap")
			rec["seq"] = n("3")
			env.Put(t, rec)
		}, "seq values are not 1..2: position 2 holds seq 3"},
		{"a wrong running balance", func(t *testing.T, env *testenv.DynamoDB) {
			rec := env.Get(t, "CUENTA#K", "MOV#a")
			rec["saldo_tras"] = n("90")
			env.Put(t, rec)
		}, "saldo_tras of seq 1 is 90, but the running balance is 100"},
		{"an active hold for another amount than its record", func(t *testing.T, env *testenv.DynamoDB) {
			k := env.Get(t, "CUENTA#K", "CUENTA")
			fields(t, fields(t, k["retenciones"])["h3"])["importe"] = n("6")
			env.Put(t, k)
		}, "active hold h3 (6 until"},
		{"a capture over its hold", func(t *testing.T, env *testenv.DynamoDB) {
			rec := env.Get(t, "CUENTA#K", "MOV#cap")
			rec["importe"] = n("31")
			env.Put(t, rec)
		}, "hold h1 is captured by cap, which is no posted capture of it"},
		{"a movement marked reversed by one that does not reverse it", func(t *testing.T, env *testenv.DynamoDB) {
			rec := env.Get(t, "CUENTA#K", "MOV#a")
			rec["anulado_por"] = s("cap")
			env.Put(t, rec)
		}, "movement a is marked reversed by cap, which is no applied reversal of it"},
		{"a posted movement without its running balance", func(t *testing.T, env *testenv.DynamoDB) {
			rec := env.Get(t, "CUENTA#K", "MOV#a")
			delete(rec, "saldo_tras")
			env.Put(t, rec)
		}, "applied movement K/a has no saldo_tras"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := linkedLedger(t)
			tc.corrupt(t, env)
			report := audited(t, env)
			if report.OK || len(report.Broken) != 1 || report.Broken[0].Cuenta != "K" || !strings.Contains(report.Broken[0].Reason, tc.says) {
				t.Errorf("audit = %+v, want K broken: %s", report, tc.says)
			}
		})
	}
}

// busyWrite is the table while a writer keeps one account moving: the scan misses a
// movement (midWrite), and every read of the account's partition is followed by another
// movement on it, so no two reads agree.
type busyWrite struct {
	*midWrite
	next func()
}

func (b *busyWrite) Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	out, err := b.midWrite.Query(ctx, in, opts...)
	if err == nil && out.LastEvaluatedKey == nil {
		b.next()
	}
	return out, err
}

// An account that keeps moving while the audit reads it again is judged on the
// movements its account item counts: a healthy one is not broken, and a wrong balance
// is still caught. A broken link between two of its records may be a read torn by a
// write: the account is unverified, and a quiet audit names it.
func TestAuditOfABusyAccountJudgesWhatItsItemCounts(t *testing.T) {
	for _, wrong := range []string{"", "saldo", "link"} {
		env := testenv.NewDynamoDB(t)
		svc := testenv.Ledger(t, env, cuenta.Retry, nil)
		testenv.Apply(t, svc, testenv.Mov(t, "a", "B", movimiento.Abono, "100.00"))
		testenv.Apply(t, svc, testenv.Mov(t, "r", "B", movimiento.Cargo, "10.00"))
		testenv.Apply(t, svc, testenv.Anulacion(t, "an", "B", "r", "", ""))
		switch wrong {
		case "link":
			r := env.Get(t, "CUENTA#B", "MOV#r")
			delete(r, "anulado_por")
			delete(r, "anulaciones")
			delete(r, "reembolsado")
			env.Put(t, r)
		case "saldo":
			_, err := env.Client.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{
				TableName: aws.String(env.Table()), Key: item{"pk": &types.AttributeValueMemberS{Value: "CUENTA#B"}, "sk": &types.AttributeValueMemberS{Value: "CUENTA"}},
				// A write moves the version, so the writer reads this balance and keeps it wrong.
				UpdateExpression:          aws.String("SET saldo = :s ADD version :one"),
				ExpressionAttributeValues: item{":s": &types.AttributeValueMemberN{Value: "1000"}, ":one": &types.AttributeValueMemberN{Value: "1"}},
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		writes := 0
		db := &busyWrite{midWrite: &midWrite{Client: env.Client, miss: "MOV#a"}, next: func() {
			writes++
			testenv.Apply(t, svc, testenv.Mov(t, fmt.Sprintf("busy-%d", writes), "B", movimiento.Abono, "1.00"))
		}}
		report, err := audit.Run(context.Background(), db, env.Table(), audit.Options{})
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case writes < 8:
			t.Errorf("wrong %q: %d writes during the audit: the account was not kept busy", wrong, writes)
		case wrong == "saldo" && (report.OK || len(report.Broken) != 1 || !strings.Contains(report.Broken[0].Reason, "saldo is 10")):
			t.Errorf("a busy account with a wrong saldo: %+v, want B broken for its saldo", report)
		case wrong == "link" && (!report.OK || len(report.Unverified) != 1 || !strings.Contains(report.Unverified[0].Reason, "reversal an undoes r")):
			t.Errorf("a busy account with a broken link: %+v, want B unverified, naming the link", report)
		case wrong == "" && (!report.OK || len(report.Unverified) != 0):
			t.Errorf("a healthy busy account: %+v, want it neither broken nor unverified", report)
		}
		if wrong == "link" {
			if quiet := audited(t, env); quiet.OK || len(quiet.Broken) != 1 {
				t.Errorf("a quiet audit of the broken link: %+v, want B broken", quiet)
			}
		}
	}
}

// fields is the map v holds.
func fields(t *testing.T, v types.AttributeValue) map[string]types.AttributeValue {
	t.Helper()
	m, ok := v.(*types.AttributeValueMemberM)
	if !ok {
		t.Fatalf("%v is not a map", v)
	}
	return m.Value
}

func TestAuditFindsALoneTransferLeg(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	svc := testenv.Ledger(t, env, cuenta.Retry, nil)
	ctx := context.Background()
	testenv.Apply(t, svc, testenv.Mov(t, "a", "L1", movimiento.Abono, "10.00"))
	testenv.Apply(t, svc, testenv.Traspaso(t, "tr", "L1", "L2", "4.00"))
	if report, err := audit.Run(ctx, env.Client, env.Table(), audit.Options{}); err != nil || !report.OK {
		t.Fatalf("healthy transfer: %+v, %v", report, err)
	}
	_, err := env.Client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: aws.String(env.Table()),
		Key:       item{"pk": &types.AttributeValueMemberS{Value: "CUENTA#L2"}, "sk": &types.AttributeValueMemberS{Value: "MOV#tr"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	report, err := audit.Run(ctx, env.Client, env.Table(), audit.Options{})
	if err != nil || report.OK {
		t.Fatalf("after losing the credit leg: %+v, %v", report, err)
	}
	var l1 string
	for _, b := range report.Broken {
		if b.Cuenta == "L1" {
			l1 = b.Reason
		}
	}
	if !strings.Contains(l1, "transfer leg tr has no counterpart on L2") {
		t.Errorf("L1's reason = %q, want its lone leg named", l1)
	}
}

// gets counts the table's GetItem calls.
type gets struct {
	*dynamodb.Client
	n atomic.Int64
}

func (g *gets) GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	g.n.Add(1)
	return g.Client.GetItem(ctx, in, opts...)
}

// An account read again (it looked broken) still finds its transfer legs' counterparts
// in what the scan read: a busy account's thousands of legs are not read one by one.
func TestAuditReadsNoTransferLegTwice(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	svc := testenv.Ledger(t, env, cuenta.Retry, nil)
	testenv.Apply(t, svc, testenv.Mov(t, "a", "H", movimiento.Abono, "100.00"))
	for i := range 20 {
		testenv.Apply(t, svc, testenv.Traspaso(t, fmt.Sprintf("tr-%d", i), "H", fmt.Sprintf("X%d", i%3), "1.00"))
	}
	k := env.Get(t, "CUENTA#H", "CUENTA")
	k["saldo"] = &types.AttributeValueMemberN{Value: "1000"}
	env.Put(t, k)
	db := &gets{Client: env.Client}
	report, err := audit.Run(context.Background(), db, env.Table(), audit.Options{})
	if err != nil || report.OK || len(report.Broken) != 1 || report.Broken[0].Cuenta != "H" {
		t.Fatalf("audit = %+v, %v; want H broken for its saldo", report, err)
	}
	if n := db.n.Load(); n != 1 { // the account's version, once its partition is read again
		t.Errorf("%d GetItem calls, want 1: the legs were read by the scan", n)
	}
}
