package worker_test

import (
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/ledger-dev/ledger/internal/consumer"
	"github.com/ledger-dev/ledger/internal/store"
	"github.com/ledger-dev/ledger/internal/worker"
)

// A stop summary counts each message once, by what became of it: a message that failed
// and then applied is applied; one whose last delivery was left to come back is failed
// but said to be coming back, unlike one parked.
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
	} {
		tally.Observe(consumer.Record{Msg: events.SQSMessage{MessageId: r.id}, Result: store.Result{Outcome: r.outcome}, Action: r.action})
	}
	got := tally.Outcomes()
	want := worker.Outcomes{Applied: 2, Failed: 4, Parked: 2, ComingBack: 2}
	if got != want || tally.Handled() != 10 {
		t.Errorf("outcomes %+v after %d records, want %+v after 10", got, tally.Handled(), want)
	}
	if s := got.String(); s != "2 applied, 0 duplicate, 0 conflicting, 0 rejected, 4 failed (2 of them coming back), 2 parked" {
		t.Errorf("summary %q", s)
	}
	// ledger up gives up on a line after its last attempt: it is no longer coming back.
	tally.Drop("waiting")
	if got := tally.Outcomes(); got.ComingBack != 1 || got.Dropped != 1 || got.Failed != 4 {
		t.Errorf("after dropping one: %+v", got)
	}
	if s := tally.Outcomes().String(); s != "2 applied, 0 duplicate, 0 conflicting, 0 rejected, 4 failed (1 of them coming back, 1 dropped after their last attempt), 2 parked" {
		t.Errorf("summary after a drop %q", s)
	}
}
