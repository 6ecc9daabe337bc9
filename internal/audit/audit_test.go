package audit_test

import (
	"context"
	"fmt"
	"slices"
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

func TestAuditPassesAHealthyLedgerAndNamesBrokenAccounts(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	svc := testenv.Ledger(t, env, cuenta.Reject, nil)
	ctx := context.Background()
	var batch []store.Entrega
	for _, cta := range []string{"A", "B", "C"} {
		for i := range 4 {
			batch = append(batch, store.Entrega{Mov: testenv.Mov(t, fmt.Sprintf("%s-%d", cta, i), cta, movimiento.Abono, "10.00")})
		}
		batch = append(batch, store.Entrega{Mov: testenv.Mov(t, cta+"-rechazado", cta, movimiento.Cargo, "1000.00")}) // recorded, not applied
	}
	svc.Apply(ctx, batch)
	opts := audit.Options{Segments: 3, PageSize: 2} // many small pages in parallel
	report, err := audit.Run(ctx, env.Client, env.Table(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if !report.OK || report.Accounts != 3 || report.Movements != 12 || len(report.Broken) != 0 {
		t.Fatalf("healthy ledger: %+v", report)
	}

	// Corrupt B's balance and lose one of C's movements.
	_, err = env.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:        aws.String(env.Table()),
		Key:              item{"pk": &types.AttributeValueMemberS{Value: "CUENTA#B"}, "sk": &types.AttributeValueMemberS{Value: "CUENTA"}},
		UpdateExpression: aws.String("SET saldo = :s"), ExpressionAttributeValues: item{":s": &types.AttributeValueMemberN{Value: "41"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = env.Client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: aws.String(env.Table()),
		Key:       item{"pk": &types.AttributeValueMemberS{Value: "CUENTA#C"}, "sk": &types.AttributeValueMemberS{Value: "MOV#C-1"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	report, err = audit.Run(ctx, env.Client, env.Table(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if report.OK || len(report.Broken) != 2 || report.Broken[0].Cuenta != "B" || report.Broken[1].Cuenta != "C" {
		t.Fatalf("broken = %+v, want B and C", report.Broken)
	}
	if r := report.Broken[0].Reason; !strings.Contains(r, "saldo is 41") || !strings.Contains(r, "sum to 40") {
		t.Errorf("B's reason = %q", r)
	}
	if r := report.Broken[1].Reason; !strings.Contains(r, "saldo is 40, but its applied movements sum to 30") || !strings.Contains(r, "movimientos is 4, but 3") || !strings.Contains(r, "seq values are not 1..3: position 2 holds seq 3") {
		t.Errorf("C's reason = %q", r)
	}
}

// An audit of a table being written reads each account's pages at different times; it
// must read a suspect account again from one point of view instead of raising a false
// alarm — and still catch what is really broken.
func TestAuditOfALiveTableRaisesNoFalseAlarm(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	svc := testenv.Ledger(t, env, cuenta.Retry, nil)
	ctx := context.Background()
	cuentas := []string{"L1", "L2", "L3"}
	const writes = 120
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range writes {
			cta := cuentas[i%len(cuentas)]
			m := testenv.Mov(t, fmt.Sprintf("live-%d", i), cta, movimiento.Abono, "1.00")
			if i%4 == 3 { // a transfer now and then: its legs land in two partitions at once
				m = testenv.Traspaso(t, fmt.Sprintf("live-%d", i), cta, cuentas[(i+1)%len(cuentas)], "0.50")
			}
			if _, err := testenv.One(svc.Apply(ctx, []store.Entrega{{Mov: m}})); err != nil {
				t.Errorf("write %d: %v", i, err)
				return
			}
		}
	}()
	audits := 0
	for live := true; live; audits++ {
		select {
		case <-done:
			live = false
		default:
		}
		report, err := audit.Run(ctx, env.Client, env.Table(), audit.Options{Segments: 2, PageSize: 2})
		if err != nil {
			t.Fatal(err)
		}
		if !report.OK {
			t.Fatalf("audit %d of a healthy table being written: %+v", audits, report.Broken)
		}
	}
	t.Logf("%d audits while %d movements were applied", audits, writes)

	_, err := env.Client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: aws.String(env.Table()),
		Key:       item{"pk": &types.AttributeValueMemberS{Value: "CUENTA#L2"}, "sk": &types.AttributeValueMemberS{Value: "MOV#live-4"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	report, err := audit.Run(ctx, env.Client, env.Table(), audit.Options{Segments: 2, PageSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	if report.OK || len(report.Broken) != 1 || report.Broken[0].Cuenta != "L2" {
		t.Fatalf("after deleting a movement of L2: %+v", report)
	}
}

func TestAuditReportsAnUnknownEstado(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	svc := testenv.Ledger(t, env, cuenta.Retry, nil)
	ctx := context.Background()
	if _, err := testenv.One(svc.Apply(ctx, []store.Entrega{{Mov: testenv.Mov(t, "a", "U", movimiento.Abono, "5.00")}})); err != nil {
		t.Fatal(err)
	}
	_, err := env.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:        aws.String(env.Table()),
		Key:              item{"pk": &types.AttributeValueMemberS{Value: "CUENTA#U"}, "sk": &types.AttributeValueMemberS{Value: "MOV#a"}},
		UpdateExpression: aws.String("SET estado = :e"), ExpressionAttributeValues: item{":e": &types.AttributeValueMemberS{Value: "pendiente"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	report, err := audit.Run(ctx, env.Client, env.Table(), audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if report.OK || len(report.Broken) != 1 || !strings.Contains(report.Broken[0].Reason, `estado "pendiente"`) {
		t.Fatalf("audit = %+v, want U broken for its unknown estado", report)
	}
}

// midWrite is the table as an audit meets it while a writer works: its Scan misses
// one movement (a view caught mid-write), and before the audit reads the account
// again the writer moves on (then).
type midWrite struct {
	*dynamodb.Client
	miss string
	then func()
}

func (m *midWrite) Scan(ctx context.Context, in *dynamodb.ScanInput, opts ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	out, err := m.Client.Scan(ctx, in, opts...)
	if err == nil {
		out.Items = slices.DeleteFunc(out.Items, func(it map[string]types.AttributeValue) bool {
			return it["sk"].(*types.AttributeValueMemberS).Value == m.miss
		})
	}
	return out, err
}

func (m *midWrite) Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	if m.then != nil {
		m.then()
		m.then = nil
	}
	return m.Client.Query(ctx, in, opts...)
}

// A hold that lapses while the audit runs, dropped by a write before the audit reads
// its account again, is judged by the clock of that read: no false alarm.
func TestAuditJudgesAHoldByTheClockOfItsLastRead(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	c := testenv.Clock()
	svc := testenv.Ledger(t, env, cuenta.Retry, c.Now)
	expira := c.Now().Add(time.Hour)
	testenv.Apply(t, svc, testenv.Mov(t, "a", "X", movimiento.Abono, "100.00"))
	testenv.Apply(t, svc, testenv.Hold(t, "aut", "X", "10.00", expira))
	db := &midWrite{Client: env.Client, miss: "MOV#a", then: func() {
		c.AdvanceTo(expira.Add(time.Minute))
		testenv.Apply(t, svc, testenv.Mov(t, "b", "X", movimiento.Abono, "1.00")) // drops the lapsed hold
	}}
	report, err := audit.Run(context.Background(), db, env.Table(), audit.Options{Now: c.Now})
	if err != nil || !report.OK {
		t.Fatalf("audit = %+v, %v; want OK", report, err)
	}
}

// Writers drop lapsed holds by their own clocks. An audit whose clock is behind the
// last writer's does not call a hold that writer dropped missing.
func TestAnAuditWithASlowClockRaisesNoFalseAlarm(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	behind, ahead := testenv.Clock(), testenv.Clock()
	expira := behind.Now().Add(time.Second)
	testenv.Apply(t, testenv.Ledger(t, env, cuenta.Retry, behind.Now), testenv.Mov(t, "a", "S", movimiento.Abono, "100.00"))
	testenv.Apply(t, testenv.Ledger(t, env, cuenta.Retry, behind.Now), testenv.Hold(t, "h", "S", "30.00", expira))
	ahead.AdvanceTo(expira.Add(time.Second))
	testenv.Apply(t, testenv.Ledger(t, env, cuenta.Retry, ahead.Now), testenv.Mov(t, "b", "S", movimiento.Abono, "1.00")) // drops h
	slow := func() time.Time { return expira.Add(-500 * time.Millisecond) }
	if report, err := audit.Run(context.Background(), env.Client, env.Table(), audit.Options{Now: slow}); err != nil || !report.OK {
		t.Fatalf("audit by a clock behind the writer's = %+v, %v; want OK", report, err)
	}
}

// A writer whose clock runs far ahead (beyond the audit's tolerance) drops a hold that is
// still held by every other clock: the audit names it.
func TestAnAuditNamesAHoldDroppedByAClockFarAhead(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	c, ahead := testenv.Clock(), testenv.Clock()
	testenv.Apply(t, testenv.Ledger(t, env, cuenta.Retry, c.Now), testenv.Mov(t, "a", "F", movimiento.Abono, "100.00"))
	testenv.Apply(t, testenv.Ledger(t, env, cuenta.Retry, c.Now), testenv.Hold(t, "h", "F", "30.00", c.Now().Add(2*time.Hour)))
	ahead.AdvanceTo(c.Now().Add(24 * time.Hour))
	if _, _, err := testenv.Ledger(t, env, cuenta.Retry, ahead.Now).Administrar(context.Background(), "F", testenv.Bloqueada(true)); err != nil {
		t.Fatal(err)
	}
	report, err := audit.Run(context.Background(), env.Client, env.Table(), audit.Options{Now: c.Now})
	if err != nil || report.OK || !strings.Contains(report.Broken[0].Reason, "hold h is held until") {
		t.Fatalf("audit = %+v, %v; want the early-dropped hold named", report, err)
	}
}

func TestAuditChecksTheHolds(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	c := testenv.Clock()
	svc := testenv.Ledger(t, env, cuenta.Retry, c.Now)
	ctx := context.Background()
	testenv.Apply(t, svc, testenv.Mov(t, "a", "AH", movimiento.Abono, "100.00"))
	testenv.Apply(t, svc, testenv.Hold(t, "aut-1", "AH", "10.00", c.Now().Add(time.Hour)))
	testenv.Apply(t, svc, testenv.Hold(t, "aut-2", "AH", "5.00", c.Now().Add(time.Hour)))
	testenv.Apply(t, svc, testenv.SettleHold(t, movimiento.Captura, "cap-2", "AH", "aut-2", "5.00"))
	if report, err := audit.Run(ctx, env.Client, env.Table(), audit.Options{Now: c.Now}); err != nil || !report.OK {
		t.Fatalf("healthy holds: %+v, %v", report, err)
	}
	_, err := env.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:        aws.String(env.Table()),
		Key:              item{"pk": &types.AttributeValueMemberS{Value: "CUENTA#AH"}, "sk": &types.AttributeValueMemberS{Value: "CUENTA"}},
		UpdateExpression: aws.String("SET retenciones = :other"), ExpressionAttributeValues: item{":other": &types.AttributeValueMemberM{Value: item{
			"aut-9": &types.AttributeValueMemberM{Value: item{"importe": &types.AttributeValueMemberN{Value: "10"}, "expira": &types.AttributeValueMemberS{Value: c.Now().Add(time.Hour).Format(time.RFC3339)}}},
		}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	report, err := audit.Run(ctx, env.Client, env.Table(), audit.Options{Now: c.Now})
	if err != nil || report.OK || !strings.Contains(report.Broken[0].Reason, "hold aut-1 is held until") ||
		!strings.Contains(report.Broken[0].Reason, "active hold aut-9") {
		t.Fatalf("the account's holds swapped for one that was never taken: %+v, %v", report, err)
	}
}
