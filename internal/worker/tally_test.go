package worker_test

import (
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/ledger-dev/ledger/internal/consumer"
	"github.com/ledger-dev/ledger/internal/store"
	"github.com/ledger-dev/ledger/internal/worker"
)

// A stop summary counts each message once, by what became of it: a message that failed
// and then applied is applied; one that did not succeed is counted once, by its
// outcome, with its fate in brackets: parked, coming back, or dropped.
func TestTallyCountsEachMessageByWhatBecameOfIt(t *testing.T) {
	var tally worker.Tally
	for _, r := range []struct {
		id      string
		outcome store.Outcome
		action  consumer.Action
	}{
		{"later-applied", store.Failed, consumer.Retry},
		{"later-applied", store.Applied, consumer.Delete},
		{"waiting", store.Failed, consumer.Retry},
		{"waiting", store.Failed, consumer.Retry},
		{"poison", store.Failed, consumer.Parked},
		{"lapsed", store.Failed, consumer.Retry}, // a capture waiting, then its hold lapsed
		{"lapsed", store.Failed, consumer.Parked},
		{"unparked", store.Failed, consumer.RetryToDLQ},
		{"again", store.Applied, consumer.Delete},
		{"again", store.Duplicate, consumer.Delete},
		{"replay", store.ConflictingDuplicate, consumer.Parked},
	} {
		tally.Observe(consumer.Record{Msg: events.SQSMessage{MessageId: r.id}, Result: store.Result{Outcome: r.outcome}, Action: r.action})
	}
	got := tally.Outcomes()
	want := worker.Outcomes{Applied: 2, ConflictingDuplicate: 1, Failed: 4,
		ConflictingFates: worker.Fates{Parked: 1}, FailedFates: worker.Fates{Parked: 2, ComingBack: 2}}
	if got != want || tally.Handled() != 11 {
		t.Errorf("outcomes %+v after %d records, want %+v after 11", got, tally.Handled(), want)
	}
	if s := got.String(); s != "2 applied, 0 duplicate, 1 conflicting (1 parked), 0 rejected, 4 failed (2 parked, 2 coming back)" {
		t.Errorf("summary %q", s)
	}
	// ledger up gives up on a line after its last delivery: it is no longer coming back.
	tally.Drop("waiting")
	if got := tally.Outcomes(); got.FailedFates != (worker.Fates{Parked: 2, ComingBack: 1, Dropped: 1}) || got.Failed != 4 {
		t.Errorf("after dropping one: %+v", got)
	}
	if s := tally.Outcomes().String(); s != "2 applied, 0 duplicate, 1 conflicting (1 parked), 0 rejected, 4 failed (2 parked, 1 coming back, 1 dropped after its last delivery)" {
		t.Errorf("summary after a drop %q", s)
	}
}
