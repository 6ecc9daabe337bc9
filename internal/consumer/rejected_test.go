package consumer_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/ledger-dev/ledger/internal/consumer"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/sim"
	"github.com/ledger-dev/ledger/internal/store"
	"github.com/ledger-dev/ledger/internal/testenv"
)

// A request DynamoDB can never accept is permanent: retrying it would only cycle the
// message until maxReceiveCount. It is parked at once, with DynamoDB's message.
func TestRequestsDynamoDBNeverAcceptsAreParkedWithItsMessage(t *testing.T) {
	for _, tc := range []struct {
		fault sim.Fault
		says  string
	}{
		{sim.Validation, "ValidationException: injected: one or more parameter values were invalid"},
		{sim.ValidationCancelled, "ValidationError"},
	} {
		t.Run(tc.fault.String(), func(t *testing.T) {
			env := testenv.NewDynamoDB(t)
			ft := sim.NewTransport(nil)
			ft.Inject("TransactWriteItems", tc.fault)
			svc, err := store.New(env.ClientVia(ft), store.Config{Table: env.Table()})
			if err != nil {
				t.Fatal(err)
			}
			parker := &memParker{parked: map[string]consumer.Reason{}}
			h := consumer.New(svc, consumer.Options{Logger: slog.New(slog.DiscardHandler), Parker: parker})
			resp, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{msg("m1", body("a1", "A", "abono", "1"))}})
			if err != nil || len(resp.BatchItemFailures) != 0 {
				t.Fatalf("resp %+v, err %v; want the message settled (parked), not back", resp, err)
			}
			r, ok := parker.parked["m1"]
			if !ok || r.Outcome != store.Failed || !strings.Contains(r.Error, tc.says) || !strings.Contains(r.Error, "permanent") {
				t.Fatalf("parked %+v, want a permanent failure saying %q", parker.parked, tc.says)
			}
			if calls := ft.Calls("TransactWriteItems"); calls != 1 {
				t.Errorf("%d TransactWriteItems calls, want 1: a request that can never succeed is not retried", calls)
			}
		})
	}
}

// A transaction the store refuses to build (over 100 actions, an item named twice) is
// permanent too: no retry can build it otherwise.
func TestAnInvalidTransactionIsPermanent(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	svc, err := store.New(env.Client, store.Config{Table: env.Table()})
	if err != nil {
		t.Fatal(err)
	}
	// The same account as destino and cuenta names one item twice; the parser refuses
	// it, so this is built by hand, as a bug in a producer of Entregas would be.
	m := mustParse(t, body("tr", "A", "abono", "5"))
	m.Tipo, m.Destino = "traspaso", "A"
	r := svc.Apply(context.Background(), []store.Entrega{{Mov: m}})[0]
	if r.Outcome != store.Failed || !errors.Is(r.Err, store.ErrPermanent) || !strings.Contains(r.Err.Error(), "invalid transaction") {
		t.Fatalf("result %+v, want a permanent invalid transaction", r)
	}
}

func mustParse(t *testing.T, b string) movimiento.Movimiento {
	t.Helper()
	m, err := movimiento.Parse([]byte(b))
	if err != nil {
		t.Fatal(err)
	}
	return m
}
