package consumer_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/ledger-dev/ledger/internal/cuenta"
)

// A debit that keeps coming back for funds says, on each delivery's line, how many
// times SQS has delivered it (its receive count) and how many transactions that
// delivery took: a reader of the sixth line sees the sixth delivery, not a first
// attempt. A message SQS gives no count for logs none.
func TestALogLineCountsTheDeliveriesOfItsMessage(t *testing.T) {
	f := newFixture(t, cuenta.Retry, true)
	debit := msg("m1", body("c1", "A", "cargo", "5.00"))
	for receive := 1; receive <= 6; receive++ {
		debit.Attributes = map[string]string{"ApproximateReceiveCount": strconv.Itoa(receive)}
		if _, err := f.handler.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{debit}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.handler.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{msg("m2", body("a1", "A", "abono", "5.00"))}}); err != nil {
		t.Fatal(err)
	}
	var receives []float64
	for _, l := range lines(f.out) {
		if l["msg"] != "movement" {
			continue
		}
		if l["transactions"] != 1.0 {
			t.Errorf("line %v: want transactions 1, what one delivery took", l)
		}
		if n, ok := l["receives"].(float64); ok {
			receives = append(receives, n)
		} else if l["message_id"] != "m2" {
			t.Errorf("line %v has no receives", l)
		}
	}
	if len(receives) != 6 || receives[0] != 1 || receives[5] != 6 {
		t.Errorf("receives logged %v, want 1 to 6", receives)
	}
}
