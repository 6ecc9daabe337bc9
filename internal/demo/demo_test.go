package demo

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/sim"
	"github.com/ledger-dev/ledger/internal/store"
	"github.com/ledger-dev/ledger/internal/testenv"
	"github.com/ledger-dev/ledger/internal/worker"
)

func TestDemoAppliesEveryMovementExactlyOnce(t *testing.T) {
	var progress bytes.Buffer
	s, err := Run(context.Background(), Options{Accounts: 6, Movements: 300, Seed: 7, Consumers: 3, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	if !s.ExactlyOnce || !s.Audit.OK {
		t.Fatalf("summary = %+v", s)
	}
	o := s.Outcomes
	if o.Applied != 300 || o.Duplicate < 75 || o.Failed == 0 || o.ConflictingDuplicate == 0 {
		t.Errorf("outcomes = %+v: want 300 applied, the duplicates recognised, the malformed and conflicting refused", o)
	}
	if got := o.Applied + o.Duplicate + o.ConflictingDuplicate + o.Rejected + o.Failed; got != s.Deliveries {
		t.Errorf("outcomes cover %d deliveries of %d", got, s.Deliveries)
	}
	if s.Handled <= s.Deliveries {
		t.Errorf("%d deliveries handled for %d messages: the demo did not exercise retries or redeliveries", s.Handled, s.Deliveries)
	}
	if k := s.Kinds; k.Transfers == 0 || k.Reversals == 0 || k.Captured == 0 || k.PartlyCaptured == 0 || k.Released == 0 || k.Lapsed == 0 {
		t.Errorf("kinds = %+v: want transfers, reversals and holds captured (some in part), released and lapsed", k)
	}
	if k := s.Kinds; k.Repartos == 0 || k.Refunds == 0 || k.RefundedInFull == 0 || k.ReversedTransfers == 0 {
		t.Errorf("kinds = %+v: want repartos, refunds in parts (some until nothing was left) and a reversed transfer", k)
	}
	if len(s.Refused) != 5 || o.Failed < len(s.Refused) {
		t.Errorf("refused by design: %v, %d failed; want a second reversal, an overdrawn transfer, a capture of a lapsed hold, a second reversal of a reversed transfer or reparto and a refund of more than is left, all failed", s.Refused, o.Failed)
	}
	if s.Freeze.Cuenta == "" || s.Freeze.Waited == 0 {
		t.Errorf("freeze = %+v: want an account frozen with debits waiting", s.Freeze)
	}
	for _, b := range s.Balances {
		if !b.Saldo.Equal(b.Expected) {
			t.Errorf("%s: %s, want %s", b.Cuenta, b.Saldo, b.Expected)
		}
	}
	if !strings.Contains(progress.String(), "100% of messages settled") {
		t.Errorf("progress = %q", progress.String())
	}
}

// Every size a newcomer might try succeeds, accounts no movement reached included
// (balance 0), and the progress lines count up truthfully.
func TestDemoSucceedsAtEverySize(t *testing.T) {
	for _, tc := range []struct{ accounts, movements int }{{1, 1}, {3, 3}, {20, 10}, {20, 100}} {
		var progress bytes.Buffer
		s, err := Run(context.Background(), Options{Accounts: tc.accounts, Movements: tc.movements, Seed: 1, Progress: &progress})
		if err != nil || !s.ExactlyOnce {
			t.Fatalf("%d movements on %d accounts: %v, %+v", tc.movements, tc.accounts, err, s)
		}
		if len(s.Balances) != tc.accounts {
			t.Errorf("%d movements on %d accounts: %d balances", tc.movements, tc.accounts, len(s.Balances))
		}
		lines := strings.Split(strings.TrimSpace(progress.String()), "\n")
		last := lines[len(lines)-1]
		if want := fmt.Sprintf("100%% of messages settled (%d/%d)", s.Deliveries, s.Deliveries); !strings.Contains(last, want) {
			t.Errorf("%d movements: last progress line %q, want %q", tc.movements, last, want)
		}
		for i := 1; i < len(lines); i++ {
			if lines[i] == lines[i-1] {
				t.Errorf("%d movements: progress repeats %q", tc.movements, lines[i])
			}
		}
	}
}

// The verdict means something: a ledger that applied one movement twice, recorded a
// refused one, lost one, left a hold in the wrong state, a transfer without its credit
// leg or a reversed movement unmarked, is caught.
func TestCheckCatchesWhatTheLedgerGotWrong(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	ctx := context.Background()
	clock := sim.NewClock()
	w, err := sim.Generate(sim.Spec{Accounts: 2, Movements: 40, Seed: 4, Transfers: transfers, Reversals: 0.1, Holds: holds, Now: clock.Now()})
	if err != nil {
		t.Fatal(err)
	}
	first := func(ms []movimiento.Movimiento, tipo movimiento.Tipo) movimiento.Movimiento {
		t.Helper()
		i := slices.IndexFunc(ms, func(m movimiento.Movimiento) bool { return m.Tipo == tipo })
		if i < 0 {
			t.Fatalf("the workload has no %s", tipo)
		}
		return ms[i]
	}
	captura, traspaso, anulacion := first(w.Movements, movimiento.Captura), first(w.Movements, movimiento.Traspaso), first(w.Movements, movimiento.Anulacion)
	refused := first(w.Refused, movimiento.Traspaso) // beyond any balance
	svc, err := store.New(env.Client, store.Config{Table: env.Table(), InsufficientFunds: cuenta.Retry, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	apply := func(svc *store.Ledger, m movimiento.Movimiento, id string) {
		t.Helper()
		m.ID = id
		if r, err := testenv.One(svc.Apply(ctx, []store.Entrega{{Mov: m}})); err != nil {
			t.Fatalf("%s %s: %+v, %v", m.Tipo, id, r, err)
		}
	}
	last := w.Movements[len(w.Movements)-1]
	for _, m := range w.Movements[:len(w.Movements)-1] { // the last one lost
		if m.ID != captura.ID { // and the capture: its hold is left held
			apply(svc, m, m.ID)
		}
	}
	apply(svc, w.Movements[0], w.Movements[0].ID+"-again") // the first, an abono, applied twice
	rejecting, err := store.New(env.Client, store.Config{Table: env.Table(), InsufficientFunds: cuenta.Reject, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	apply(rejecting, refused, refused.ID) // recorded, as rejected
	key := func(cuenta, id string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "CUENTA#" + cuenta}, "sk": &types.AttributeValueMemberS{Value: "MOV#" + id}}
	}
	if _, err := env.Client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(env.Table()), Key: key(traspaso.Destino, traspaso.ID)}); err != nil {
		t.Fatal(err)
	}
	reversed, err := env.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(env.Table()), Key: key(anulacion.Cuenta, anulacion.Anula)})
	if err != nil || reversed.Item["anulado_por"] == nil {
		t.Fatalf("the reversed movement: %v, %v", reversed, err)
	}
	delete(reversed.Item, "anulado_por") // its reversal's mark lost
	if _, err := env.Client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(env.Table()), Item: reversed.Item}); err != nil {
		t.Fatal(err)
	}
	r := store.NewReader(env.Client, env.Table())
	_, wrong, err := check(ctx, r, w, clock.Now(), nil)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(wrong, "\n")
	for _, want := range []string{
		last.ID + " of " + last.Cuenta + " is not recorded",
		w.Movements[0].Cuenta + " has ",
		refused.ID + " of " + refused.Cuenta + " is recorded, but built to be refused",
		"retencion " + captura.Retencion + " of " + captura.Cuenta + " is retenida, not capturada",
		"traspaso " + traspaso.ID + " of " + traspaso.Cuenta + ": ",
		" " + anulacion.Anula + " of " + anulacion.Cuenta + " is refunded ", `yet anulado_por is ""`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("check found:\n%s\nwant %q", text, want)
		}
	}
}

// The verdict checks every leg and every refund: a reparto or a reversed transfer with
// a leg missing, a refund its original does not name, an original showing another
// total refunded than its refunds gave back, is caught.
func TestCheckCatchesMissingLegsAndRefunds(t *testing.T) {
	env, clock, svc := clockedLedger(t)
	ctx := context.Background()
	w, err := sim.Generate(sim.Spec{Accounts: 3, Movements: 60, Seed: 7, Transfers: transfers, Repartos: 0.1, Reversals: 0.15, Refunds: 0.15, Now: clock.Now()})
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]movimiento.Movimiento{}
	// a reparto, a reversal of a transfer and of a reparto, a refund in parts
	var reparto, reversal, undone, refund movimiento.Movimiento
	for _, m := range w.Movements {
		byKey[key(m.Cuenta, m.ID)] = m
		switch o := byKey[key(m.Cuenta, m.Anula)]; {
		case m.Tipo == movimiento.Reparto && reparto.ID == "":
			reparto = m
		case o.Tipo == movimiento.Traspaso && reversal.ID == "":
			reversal = m
		case o.Tipo == movimiento.Reparto && undone.ID == "":
			undone = m
		case m.Tipo == movimiento.Anulacion && !m.Importe.IsZero() && m.Importe.LessThan(o.Importe) && refund.ID == "":
			refund = m
		}
		if r, err := testenv.One(svc.Apply(ctx, []store.Entrega{{Mov: m}})); err != nil || r.Outcome != store.Applied {
			t.Fatalf("%s %s: %+v, %v", m.Tipo, m.ID, r, err)
		}
	}
	if reparto.ID == "" || reversal.ID == "" || undone.ID == "" || refund.ID == "" {
		t.Fatalf("the workload lacks a reparto (%q), a reversal of a transfer (%q) or of a reparto (%q), or a refund in parts (%q)", reparto.ID, reversal.ID, undone.ID, refund.ID)
	}
	r := store.NewReader(env.Client, env.Table())
	if _, wrong, err := check(ctx, r, w, clock.Now(), nil); err != nil || len(wrong) != 0 {
		t.Fatalf("as applied: %v, %v; want nothing wrong", wrong, err)
	}
	destino := byKey[key(reversal.Cuenta, reversal.Anula)].Destino
	editItem(t, env, reparto.Partes[0].Cuenta, reparto.ID, nil)
	editItem(t, env, destino, reversal.ID, nil)
	part := byKey[key(undone.Cuenta, undone.Anula)].Partes[1].Cuenta
	editItem(t, env, part, undone.ID, nil)
	editItem(t, env, refund.Cuenta, refund.Anula, func(item map[string]types.AttributeValue) {
		delete(item, "anulaciones")
		item["reembolsado"] = &types.AttributeValueMemberN{Value: "0.01"}
	})
	_, wrong, err := check(ctx, r, w, clock.Now(), nil)
	text := strings.Join(wrong, "\n")
	for _, want := range []string{
		"reparto " + reparto.ID + " of " + reparto.Cuenta + ": its leg on " + reparto.Partes[0].Cuenta + " is not recorded",
		"anulacion " + reversal.ID + " of " + reversal.Cuenta + ": its leg on " + destino + " is not recorded",
		"anulacion " + undone.ID + " of " + undone.Cuenta + ": its leg on " + part + " is not recorded",
		"anulacion " + refund.ID + " of " + refund.Cuenta + ": " + refund.Anula + " does not name it among its refunds",
		" " + refund.Anula + " of " + refund.Cuenta + " shows 0.01 refunded; its refunds gave back ",
	} {
		if err != nil || !strings.Contains(text, want) {
			t.Errorf("check found:\n%s\n%v; want %q", text, err, want)
		}
	}
}

// editItem rewrites the movement item id of cuenta through change, or deletes it
// when change is nil.
func editItem(t *testing.T, env *testenv.DynamoDB, cuenta, id string, change func(map[string]types.AttributeValue)) {
	t.Helper()
	pk, sk := "CUENTA#"+cuenta, "MOV#"+id
	if change == nil {
		k := map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: sk}}
		if _, err := env.Client.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{TableName: aws.String(env.Table()), Key: k}); err != nil {
			t.Fatal(err)
		}
		return
	}
	item := env.Get(t, pk, sk)
	if item == nil {
		t.Fatalf("movement %s of %s is not recorded", id, cuenta)
	}
	change(item)
	env.Put(t, item)
}

// The outcomes must match what was sent: a conflicting replay taken for a duplicate,
// or a genuine duplicate taken for a conflicting one, is wrong even when every balance
// is right.
func TestCheckOutcomesCatchesMisjudgedMessages(t *testing.T) {
	w, err := sim.Generate(sim.Spec{Accounts: 2, Movements: 40, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	s := sim.Deliveries(w, sim.Mix{Duplicates: 0.25, Conflicting: 0.05, Malformed: 0.05}, 4)
	right := worker.Outcomes{Applied: len(w.Movements), Duplicate: s.Duplicates, ConflictingDuplicate: s.Conflicting, Failed: s.Malformed + len(w.Refused)}
	if wrong := checkOutcomes(right, w, s); len(wrong) != 0 {
		t.Fatalf("the outcomes sent: %v", wrong)
	}
	misjudged := right
	misjudged.Duplicate, misjudged.ConflictingDuplicate = right.Duplicate+1, right.ConflictingDuplicate-1
	if wrong := strings.Join(checkOutcomes(misjudged, w, s), "\n"); !strings.Contains(wrong, "ended conflicting_duplicate, not the 2 sent to") {
		t.Errorf("a conflicting replay taken for a duplicate: %q", wrong)
	}
	// A movement whose first answer was lost after its commit is a duplicate when it
	// comes back: not wrong. One applied more than the movements is.
	lostAnswer := right
	lostAnswer.Applied, lostAnswer.Duplicate = right.Applied-1, right.Duplicate+1
	if wrong := checkOutcomes(lostAnswer, w, s); len(wrong) != 0 {
		t.Errorf("a lost answer: %v, want nothing wrong", wrong)
	}
	twice := right
	twice.Applied, twice.Duplicate = right.Applied+1, right.Duplicate-1
	if wrong := strings.Join(checkOutcomes(twice, w, s), "\n"); !strings.Contains(wrong, "more than the") {
		t.Errorf("a movement applied twice: %q", wrong)
	}
}

// A freeze that let a debit through, or held none back, is wrong.
func TestCheckFreezeCatchesADebitAppliedWhileFrozen(t *testing.T) {
	env, clock, svc := clockedLedger(t)
	ctx := context.Background()
	reversal := func(id, of string) movimiento.Movimiento {
		m, err := movimiento.New(movimiento.Datos{ID: id, Cuenta: "F", Tipo: movimiento.Anulacion, Anula: of})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	before := []movimiento.Movimiento{mustMov(t, "a", movimiento.Abono), mustMov(t, "a2", movimiento.Abono)}
	// The freeze let them through: a cargo, and the reversal of an abono, which is a
	// debit too; the reversal of a cargo is a credit, which a freeze lets through.
	during := []movimiento.Movimiento{mustMov(t, "c", movimiento.Cargo), reversal("ra", "a2"), reversal("rc", "c")}
	w := sim.Workload{Movements: slices.Concat(before, during)}
	for _, m := range before {
		if _, err := testenv.One(svc.Apply(ctx, []store.Entrega{{Mov: m}})); err != nil {
			t.Fatal(err)
		}
	}
	desde := clock.Now()
	clock.Advance(time.Minute)
	for _, m := range during {
		if r, err := testenv.One(svc.Apply(ctx, []store.Entrega{{Mov: m}})); err != nil || r.Outcome != store.Applied {
			t.Fatalf("%s: %+v, %v", m.ID, r, err)
		}
	}
	r := store.NewReader(env.Client, env.Table())
	wrong, err := checkFreeze(ctx, r, w, Freeze{Cuenta: "F", Desde: desde, Frozen: frozenFor, Waited: 0})
	text := strings.Join(wrong, "\n")
	if err != nil || !strings.Contains(text, "held back none of its debits") || !strings.Contains(text, "cargo c of F was applied at") || !strings.Contains(text, "anulacion ra of F was applied at") {
		t.Errorf("check found %q, %v; want the debits let through and none held back", text, err)
	}
	if strings.Contains(text, "rc of F") {
		t.Errorf("check found %q: the reversal of a cargo is a credit, which a freeze lets through", text)
	}
	if wrong, err := checkFreeze(ctx, r, w, Freeze{Cuenta: "F", Desde: clock.Now().Add(time.Second), Frozen: frozenFor, Waited: 1}); err != nil || len(wrong) != 0 {
		t.Errorf("a freeze after the debit: %v, %v", wrong, err)
	}
	// Applied once another consumer unfroze the account, in a batch stamped just before.
	unfrozen := clock.Now().Add(10 * time.Second)
	if wrong, err := checkFreeze(ctx, r, w, Freeze{Cuenta: "F", Desde: unfrozen.Add(-frozenFor), Frozen: frozenFor, Waited: 1}); err != nil || len(wrong) != 0 {
		t.Errorf("a debit of a batch that began just before the unfreeze: %v, %v", wrong, err)
	}
}

func mustMov(t *testing.T, id string, tipo movimiento.Tipo) movimiento.Movimiento {
	t.Helper()
	m, err := movimiento.New(movimiento.Datos{ID: id, Cuenta: "F", Tipo: tipo, Importe: "10.00", Moneda: "EUR"})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// A hold that reserves nothing in its account leaves every balance right, and once it
// lapses the audit cannot see it: checkHeld, run while it is held, catches it.
func TestCheckHeldCatchesAHoldThatReservesNothing(t *testing.T) {
	env, clock, svc := clockedLedger(t)
	ctx := context.Background()
	hold, err := movimiento.New(movimiento.Datos{ID: "h1", Cuenta: "F", Tipo: movimiento.Retencion, Importe: "10.00", Moneda: "EUR",
		Expira: clock.Now().Add(time.Hour).Format(time.RFC3339)})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []movimiento.Movimiento{mustMov(t, "a", movimiento.Abono), hold} {
		if r, err := testenv.One(svc.Apply(ctx, []store.Entrega{{Mov: m}})); err != nil || r.Outcome != store.Applied {
			t.Fatalf("%s: %+v, %v", m.ID, r, err)
		}
	}
	if wrong, err := checkHeld(ctx, env.Client, env.Table(), clock.Now()); err != nil || len(wrong) != 0 {
		t.Fatalf("a hold reserved: %v, %v; want nothing wrong", wrong, err)
	}
	account := map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "CUENTA#F"}, "sk": &types.AttributeValueMemberS{Value: "CUENTA"}}
	got, err := env.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(env.Table()), Key: account, ConsistentRead: aws.Bool(true)})
	if err != nil || got.Item["retenciones"] == nil {
		t.Fatalf("the account: %v, %v; want its hold", got, err)
	}
	delete(got.Item, "retenciones") // the reservation never made
	if _, err := env.Client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(env.Table()), Item: got.Item}); err != nil {
		t.Fatal(err)
	}
	wrong, err := checkHeld(ctx, env.Client, env.Table(), clock.Now())
	if text := strings.Join(wrong, "\n"); err != nil || !strings.Contains(text, "before the holds lapsed, account F: ") || !strings.Contains(text, "hold h1 is held until") {
		t.Errorf("a hold that reserves nothing: %q, %v; want it named", text, err)
	}
}

// clockedLedger is a ledger on a fresh table whose clock the test moves.
func clockedLedger(t *testing.T) (*testenv.DynamoDB, *sim.Clock, *store.Ledger) {
	t.Helper()
	env, clock := testenv.NewDynamoDB(t), sim.NewClock()
	svc, err := store.New(env.Client, store.Config{Table: env.Table(), Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	return env, clock, svc
}
