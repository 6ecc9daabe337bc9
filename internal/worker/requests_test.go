package worker

import (
	"regexp"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/ledger-dev/ledger/internal/consumer"
)

// sqsEntryID is SQS's rule for a batch entry's Id: it refuses the whole call otherwise.
var sqsEntryID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,80}$`)

func received(n int) []types.Message {
	msgs := make([]types.Message, n)
	for i := range msgs {
		msgs[i] = types.Message{ReceiptHandle: aws.String(string(rune('a'+i)) + "-handle")}
	}
	return msgs
}

func TestReceiveInputLongPollsABatchWithEveryAttribute(t *testing.T) {
	for _, tc := range []struct {
		wait time.Duration
		secs int32
	}{{MaxWait, 20}, {time.Second, 1}, {1500 * time.Millisecond, 1}} {
		in := receiveInput("https://q", tc.wait)
		if in.WaitTimeSeconds != tc.secs || in.MaxNumberOfMessages != consumer.MaxBatch || aws.ToString(in.QueueUrl) != "https://q" {
			t.Errorf("wait %v: asked to wait %ds for %d messages of %q", tc.wait, in.WaitTimeSeconds, in.MaxNumberOfMessages, aws.ToString(in.QueueUrl))
		}
		// A parked message keeps its attributes, as Lambda would have handed them over.
		if len(in.MessageAttributeNames) != 1 || in.MessageAttributeNames[0] != "All" ||
			len(in.MessageSystemAttributeNames) != 1 || in.MessageSystemAttributeNames[0] != types.MessageSystemAttributeNameAll {
			t.Errorf("attributes asked for: %v and %v", in.MessageAttributeNames, in.MessageSystemAttributeNames)
		}
	}
}

func TestAttributesInputAsksWhatRunRefusesQueuesBy(t *testing.T) {
	in := attributesInput("https://q")
	want := map[types.QueueAttributeName]bool{types.QueueAttributeNameQueueArn: true, types.QueueAttributeNameVisibilityTimeout: true,
		types.QueueAttributeNameRedrivePolicy: true}
	for _, name := range in.AttributeNames {
		delete(want, name)
	}
	if len(want) != 0 || aws.ToString(in.QueueUrl) != "https://q" {
		t.Errorf("not asked for %v (queue %q)", want, aws.ToString(in.QueueUrl))
	}
}

// TestAcknowledgementsNameEveryMessageOnce: a batch call with a repeated or malformed
// entry Id is refused whole, and a receipt handle left out leaves its message to come
// back as a duplicate.
func TestAcknowledgementsNameEveryMessageOnce(t *testing.T) {
	for _, n := range []int{1, consumer.MaxBatch} {
		msgs := received(n)
		del := deleteInput("https://q", msgs)
		rel := releaseInput("https://q", msgs, 2500*time.Millisecond)
		if len(del.Entries) != n || len(rel.Entries) != n {
			t.Fatalf("%d messages: %d delete and %d release entries", n, len(del.Entries), len(rel.Entries))
		}
		ids := map[string]bool{}
		for i := range n {
			d, r := del.Entries[i], rel.Entries[i]
			for call, id := range map[string]string{"delete": aws.ToString(d.Id), "release": aws.ToString(r.Id)} {
				if !sqsEntryID.MatchString(id) || ids[call+id] {
					t.Errorf("%s entry id %q breaks SQS's rule or is repeated", call, id)
				}
				ids[call+id] = true
			}
			handle := aws.ToString(msgs[i].ReceiptHandle)
			if aws.ToString(d.ReceiptHandle) != handle || aws.ToString(r.ReceiptHandle) != handle {
				t.Errorf("message %d: delete names %q, release %q, want %q", i, aws.ToString(d.ReceiptHandle), aws.ToString(r.ReceiptHandle), handle)
			}
			if r.VisibilityTimeout != 2 { // whole seconds, never longer than asked
				t.Errorf("released for %ds, want 2", r.VisibilityTimeout)
			}
		}
		if aws.ToString(del.QueueUrl) != "https://q" || aws.ToString(rel.QueueUrl) != "https://q" {
			t.Errorf("acknowledged on %q and %q", aws.ToString(del.QueueUrl), aws.ToString(rel.QueueUrl))
		}
	}
}

// TestWorkerWaitsAtMostSQSsMaximum: SQS refuses a longer wait on every receive, so a
// worker given one would never receive at all.
func TestWorkerWaitsAtMostSQSsMaximum(t *testing.T) {
	w, err := New(nil, nil, Options{QueueURL: "https://q", WaitTime: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if got := receiveInput(w.opts.QueueURL, w.opts.WaitTime).WaitTimeSeconds; got != 20 {
		t.Errorf("a worker given a minute waits %ds per receive, want 20", got)
	}
}
