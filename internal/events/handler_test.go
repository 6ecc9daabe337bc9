package events_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"

	lambdaevents "github.com/aws/aws-lambda-go/events"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/events"
	"github.com/ledger-dev/ledger/internal/items"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/testenv"
)

// streamBatch is a stream batch of two accounts' first writes: ES76 opened by an abono
// (seq 1), then two movements in one transaction, whose records the stream delivers
// seq 3 first; ES91 opened by an abono between them.
func streamBatch(t *testing.T) lambdaevents.DynamoDBEvent {
	es76, es91 := cuenta.Nueva("ES76", "EUR"), cuenta.Nueva("ES91", "EUR")
	es76.Version, es91.Version = 1, 1
	es76v2 := es76
	es76v2.Version = 2
	recs := []lambdaevents.DynamoDBEventRecord{
		record(t, 0, nil, account(t, es76)),
		record(t, 1, nil, apunte(t, posted(testenv.Mov(t, "a1", "ES76", movimiento.Abono, "100.00"), 1, "100.00", 1))),
		record(t, 2, nil, account(t, es91)),
		record(t, 3, nil, apunte(t, posted(testenv.Mov(t, "b1", "ES91", movimiento.Abono, "5.00"), 1, "5.00", 1))),
		record(t, 4, nil, apunte(t, posted(testenv.Mov(t, "a3", "ES76", movimiento.Abono, "1.00"), 3, "71.00", 2))),
		record(t, 5, nil, apunte(t, posted(testenv.Mov(t, "a2", "ES76", movimiento.Cargo, "30.00"), 2, "70.00", 2))),
		record(t, 6, account(t, es76), account(t, es76v2)),
	}
	return lambdaevents.DynamoDBEvent{Records: recs}
}

// taken reads what the bus took: each event's account and id, in order.
func taken(t *testing.T, b *bus) []string {
	t.Helper()
	var out []string
	for _, d := range takenDetails(t, b) {
		out = append(out, d.Cuenta+"/"+d.ID)
	}
	return out
}

// A batch is announced whole, each account's events in seq order whatever order the
// stream delivered a transaction's records in, and nothing comes back.
func TestABatchIsAnnouncedInAccountOrder(t *testing.T) {
	b := &bus{}
	h := events.NewHandler(events.NewPublisher(b, fast), "ledger", slog.New(slog.DiscardHandler))
	resp, err := h.Handle(context.Background(), streamBatch(t))
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("response %+v, %v; want none back", resp, err)
	}
	if got, want := taken(t, b), []string{"ES76/a1", "ES76/a2", "ES76/a3", "ES91/b1"}; !slices.Equal(got, want) {
		t.Errorf("taken %v, want %v", got, want)
	}
	if len(b.calls) != 1 {
		t.Errorf("%d calls for 4 events, want 1", len(b.calls))
	}
}

// A record that cannot be read comes back by its sequence number, never skipped: the
// records before it are announced, those after it are left for the retry.
func TestAnUnreadableRecordComesBack(t *testing.T) {
	batch := streamBatch(t)
	broken := apunte(t, posted(testenv.Mov(t, "b1", "ES91", movimiento.Abono, "5.00"), 1, "5.00", 1))
	broken[items.AttrSaldoTras] = broken["concepto"] // a text where money must be
	batch.Records[3] = record(t, 3, nil, broken)
	b := &bus{}
	var logs bytes.Buffer
	h := events.NewHandler(events.NewPublisher(b, fast), "ledger", slog.New(slog.NewJSONHandler(&logs, nil)))
	resp, err := h.Handle(context.Background(), batch)
	if err != nil || len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != "1003" {
		t.Fatalf("response %+v, %v; want record 1003 back", resp, err)
	}
	if got := taken(t, b); !slices.Equal(got, []string{"ES76/a1"}) {
		t.Errorf("taken %v, want only what the records before it announce", got)
	}
	if !strings.Contains(logs.String(), `"sequence_number":"1003"`) || !strings.Contains(logs.String(), "saldo_tras") {
		t.Errorf("the log does not name the record and why:\n%s", logs.String())
	}
}

// When EventBridge does not take an event, the earliest record in the stream with an
// event not taken comes back, though events are published in account order: here
// ES91's abono, earlier in the stream than ES76's last ten but published after them,
// is never sent once ES76's tenth keeps failing. Records before it are done; those
// after it are announced again.
func TestTheEarliestRecordNotAnnouncedComesBack(t *testing.T) {
	recs := []lambdaevents.DynamoDBEventRecord{record(t, 0, nil, apunte(t, posted(testenv.Mov(t, "b1", "ES91", movimiento.Abono, "5.00"), 1, "5.00", 1)))}
	for i := 1; i <= 10; i++ {
		m := testenv.Mov(t, fmt.Sprintf("a%02d", i), "ES76", movimiento.Abono, "1.00")
		recs = append(recs, record(t, i, nil, apunte(t, posted(m, int64(i), fmt.Sprintf("%d.00", i), int64(i)))))
	}
	b := &bus{answer: func(_ int, details []string) ([]string, error) {
		codes := make([]string, len(details))
		for i, d := range details {
			if strings.Contains(d, `"id":"a10"`) {
				codes[i] = "InternalFailure"
			}
		}
		return codes, nil
	}}
	opts := fast
	opts.MaxAttempts = 2
	h := events.NewHandler(events.NewPublisher(b, opts), "ledger", slog.New(slog.DiscardHandler))
	resp, err := h.Handle(context.Background(), lambdaevents.DynamoDBEvent{Records: recs})
	if err != nil || len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != "1000" {
		t.Fatalf("response %+v, %v; want record 1000 (b1's) back", resp, err)
	}
	if got := taken(t, b); len(got) != 9 || slices.Contains(got, "ES91/b1") {
		t.Errorf("taken %v, want ES76's first nine", got)
	}
}

// A batch EventBridge took nothing of fails the invocation, which the errors alarm
// watches, and still names the first record with an event.
func TestNothingTakenFailsTheInvocation(t *testing.T) {
	b := &bus{answer: func(int, []string) ([]string, error) { return nil, errors.New("connection refused") }}
	opts := fast
	opts.MaxAttempts = 2
	h := events.NewHandler(events.NewPublisher(b, opts), "ledger", slog.New(slog.DiscardHandler))
	resp, err := h.Handle(context.Background(), streamBatch(t))
	if !errors.Is(err, events.ErrNothingPublished) || !errors.Is(err, events.ErrUnavailable) {
		t.Errorf("err = %v, want ErrNothingPublished and ErrUnavailable", err)
	}
	if len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != "1001" {
		t.Errorf("response %+v, want record 1001 back", resp)
	}
	if len(b.calls) != 2 {
		t.Errorf("%d calls, want 2 (MaxAttempts)", len(b.calls))
	}
}
