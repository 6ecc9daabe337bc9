package events_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	lambdaevents "github.com/aws/aws-lambda-go/events"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/events"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/sim"
	"github.com/ledger-dev/ledger/internal/store"
	"github.com/ledger-dev/ledger/internal/testenv"
)

// The ledger's own writes, through the store on the embedded DynamoDB's stream, are
// announced as a subscriber needs them, in each account's order: every kind of
// movement, rejections (a debit, the reversal of a credit already spent, and the
// reversal of a transfer whose credited account has spent it), a hold
// captured, one released, one that lapses and is dropped by the account's next write,
// and an operator's change; each event carrying its account's version once its write
// committed.
func TestTheLedgersWritesAreAnnounced(t *testing.T) {
	env, stream := testenv.NewStreamingDynamoDB(t)
	ctx := context.Background()
	clock := testenv.Clock()
	l, err := store.New(env.Client, store.Config{Table: env.Table(), InsufficientFunds: cuenta.Reject, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	apply := func(ms ...movimiento.Movimiento) {
		t.Helper()
		var es []store.Entrega
		for _, m := range ms {
			es = append(es, store.Entrega{Mov: m, Origen: "msg-" + m.ID})
		}
		for i, r := range l.Apply(ctx, es) {
			if r.Err != nil {
				t.Fatalf("%s: %v", ms[i].ID, r.Err)
			}
		}
	}
	soon := clock.Now().Add(time.Hour)
	apply(testenv.Mov(t, "nomina", "ES76", movimiento.Abono, "1000.00"))
	apply(testenv.Mov(t, "coche", "ES76", movimiento.Cargo, "9000.00"))
	apply(testenv.Traspaso(t, "alquiler", "ES76", "ES91", "700.00"), testenv.Hold(t, "aut-1", "ES76", "80.00", soon))
	apply(testenv.SettleHold(t, movimiento.Captura, "cap-1", "ES76", "aut-1", "64.90"), testenv.Hold(t, "aut-2", "ES76", "20.00", soon))
	apply(testenv.SettleHold(t, movimiento.Liberacion, "lib-2", "ES76", "aut-2", ""))
	apply(testenv.Hold(t, "aut-3", "ES76", "30.00", soon))
	clock.AdvanceTo(soon.Add(time.Minute))
	apply(testenv.Mov(t, "bizum", "ES76", movimiento.Abono, "5.00"), testenv.Anulacion(t, "dev-nomina", "ES76", "nomina", "", ""))
	apply(testenv.Mov(t, "gasto", "ES91", movimiento.Cargo, "700.00"))
	apply(testenv.Anulacion(t, "dev-alquiler", "ES76", "alquiler", "", ""))
	if _, _, err := l.Administrar(ctx, "ES76", func(c cuenta.Cuenta) (cuenta.Cuenta, error) { return c.ConLimite(decimal.RequireFromString("50")) }); err != nil {
		t.Fatal(err)
	}

	got := announce(t, stream)
	want := []string{
		"ES76 v1 aplicado nomina seq 1 1000.00", "ES76 v1 rechazado coche",
		"ES76 v2 aplicado alquiler seq 2 300.00", "ES76 v2 retenida aut-1",
		"ES76 v3 aplicado cap-1 seq 3 235.10", "ES76 v3 capturada aut-1", "ES76 v3 retenida aut-2",
		"ES76 v4 liberada aut-2", "ES76 v5 retenida aut-3",
		"ES76 v6 expirada aut-3", "ES76 v6 aplicado bizum seq 4 240.10", "ES76 v6 rechazado dev-alquiler", "ES76 v6 rechazado dev-nomina",
		"ES76 v7 administrada ",
		"ES91 v1 aplicado alquiler seq 1 700.00", "ES91 v2 aplicado gasto seq 2 0.00",
	}
	if !slices.Equal(got, want) {
		t.Errorf("announced, in order:\n%q\nwant\n%q", got, want)
	}
}

// announce hands the stream's records to the events handler, as the Lambda gets
// them, publishing to a bus that takes everything, and returns what the bus took, in
// order, each event checked against the contract.
func announce(t *testing.T, stream *sim.Stream) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	recs, err := stream.Next(ctx, 1000)
	if err != nil {
		t.Fatal(err)
	}
	b := &bus{}
	h := events.NewHandler(events.NewPublisher(b, fast), "ledger", slog.New(slog.DiscardHandler))
	if resp, err := h.Handle(context.Background(), lambdaevents.DynamoDBEvent{Records: recs}); err != nil || len(resp.BatchItemFailures) > 0 {
		t.Fatalf("%+v, %v", resp, err)
	}
	var out []string
	for _, d := range takenDetails(t, b) {
		line := fmt.Sprintf("%s v%d %s %s", d.Cuenta, d.Version, d.Estado, d.ID)
		if d.Seq > 0 {
			line += fmt.Sprintf(" seq %d %s", d.Seq, d.SaldoTras)
		}
		out = append(out, line)
	}
	return out
}
