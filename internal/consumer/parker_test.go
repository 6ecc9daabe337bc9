package consumer_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/ledger-dev/ledger/internal/consumer"
	"github.com/ledger-dev/ledger/internal/store"
)

// sent is an SQS that keeps what it is sent.
type sent struct{ in []*sqs.SendMessageInput }

func (s *sent) SendMessage(_ context.Context, in *sqs.SendMessageInput, _ ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	s.in = append(s.in, in)
	return &sqs.SendMessageOutput{}, nil
}

// A parked message is its body unchanged with the reason beside it: the outcome, the
// error (cut on a character boundary) and the source message id always, whatever its own
// attributes are called, then as many of them as SQS's ten allow, the same ones every time.
func TestAParkedMessageCarriesItsReasonAndWhatFitsOfItsAttributes(t *testing.T) {
	own := map[string]events.SQSMessageAttribute{
		consumer.AttrOutcome: {DataType: "String", StringValue: aws.String("applied")}, // a sender's, not ours
	}
	for i := range 12 { // named after ledger.*, so that the sender's ledger.outcome is met
		own[fmt.Sprintf("z-%02d", i)] = events.SQSMessageAttribute{DataType: "String", StringValue: aws.String("v")}
	}
	msg := events.SQSMessage{MessageId: "m-1", Body: `{"id":"x"}`, MessageAttributes: own}
	q := &sent{}
	p := &consumer.SQSParker{Client: q, QueueURL: "https://sqs.eu-west-1.amazonaws.com/123456789012/movimientos-dlq"}
	reason := consumer.Reason{Outcome: store.ConflictingDuplicate, Error: "x" + strings.Repeat("ñ", 1000)} // byte 1024 is inside a "ñ"
	for range 2 {
		if err := p.Park(context.Background(), msg, reason); err != nil {
			t.Fatal(err)
		}
	}
	in := q.in[0]
	attrs := in.MessageAttributes
	if aws.ToString(in.MessageBody) != msg.Body || len(attrs) != 10 {
		t.Fatalf("parked body %q with %d attributes, want the body unchanged and 10", aws.ToString(in.MessageBody), len(attrs))
	}
	if aws.ToString(attrs[consumer.AttrOutcome].StringValue) != "conflicting_duplicate" || aws.ToString(attrs[consumer.AttrSourceMessageID].StringValue) != "m-1" {
		t.Errorf("attributes %v lack the outcome or the source message id", attrs)
	}
	if e := aws.ToString(attrs[consumer.AttrError].StringValue); len(e) > 1024+len("…") || !utf8.ValidString(e) || !strings.HasSuffix(e, "…") {
		t.Errorf("error attribute of %d bytes, valid UTF-8 %v: want it cut to 1 KiB on a character boundary", len(e), utf8.ValidString(e))
	}
	for name := range attrs {
		if _, again := q.in[1].MessageAttributes[name]; !again {
			t.Errorf("attribute %s kept once, not the second time", name)
		}
	}
}

// A DLQ that is the message's own queue, under any spelling of its URL, would take the
// message back as a new one, forever: the park is refused and nothing is sent.
func TestAParkOnTheSourceQueueIsRefused(t *testing.T) {
	const arn = "arn:aws:sqs:eu-west-1:123456789012:movimientos"
	for _, tc := range []struct {
		url  string
		sent bool
	}{
		{"https://sqs.eu-west-1.amazonaws.com/123456789012/movimientos", false},
		{"https://eu-west-1.queue.amazonaws.com/123456789012/movimientos/", false},
		{"http://127.0.0.1:4566/123456789012/movimientos", false},
		{"https://sqs.eu-west-1.amazonaws.com/123456789012/movimientos-dlq", true},
		{"https://sqs.eu-west-1.amazonaws.com/123456789012/dlq-movimientos", true},
		{"https://sqs.eu-west-1.amazonaws.com/999999999999/movimientos", true},
	} {
		q := &sent{}
		p := &consumer.SQSParker{Client: q, QueueURL: tc.url}
		err := p.Park(context.Background(), events.SQSMessage{MessageId: "m-1", Body: "{}", EventSourceARN: arn}, consumer.Reason{Outcome: store.Failed, Error: "x"})
		if (len(q.in) == 1) != tc.sent || (err == nil) != tc.sent || (!tc.sent && !errors.Is(err, consumer.ErrDLQIsSource)) {
			t.Errorf("%s: sent %d, error %v; want sent %v", tc.url, len(q.in), err, tc.sent)
		}
	}
}

// A message a producer gave a ledger.* attribute is parked for it, at once, whatever its
// body: the attribute is reserved, so every ledger.outcome in the DLQ is the consumer's
// word, and the producer's forged value is not carried over.
func TestAMessageWithAReservedAttributeIsParkedWithTheConsumersWord(t *testing.T) {
	q := &sent{}
	h := consumer.New(nil, consumer.Options{Parker: &consumer.SQSParker{Client: q, QueueURL: "https://sqs.eu-west-1.amazonaws.com/123456789012/dlq"}})
	forged := events.SQSMessage{MessageId: "m-1", Body: `{"id":"a1","cuenta":"A","tipo":"abono","importe":"1.00","moneda":"EUR"}`,
		MessageAttributes: map[string]events.SQSMessageAttribute{
			consumer.AttrOutcome: {DataType: "String", StringValue: aws.String("applied")},
			"tenant":             {DataType: "String", StringValue: aws.String("t-9")},
		}}
	resp, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{forged}})
	if err != nil || len(resp.BatchItemFailures) != 0 || len(q.in) != 1 {
		t.Fatalf("resp %+v, %v, %d parked; want the message parked, not back", resp, err, len(q.in))
	}
	attrs := q.in[0].MessageAttributes
	if got := aws.ToString(attrs[consumer.AttrOutcome].StringValue); got != string(store.Failed) {
		t.Errorf("ledger.outcome in the DLQ = %q, want the consumer's %q", got, store.Failed)
	}
	if e := aws.ToString(attrs[consumer.AttrError].StringValue); !strings.Contains(e, "reserved attribute ledger.outcome") || !strings.Contains(e, "permanent") {
		t.Errorf("ledger.error = %q, want a permanent failure naming the reserved attribute", e)
	}
	if aws.ToString(attrs["tenant"].StringValue) != "t-9" {
		t.Errorf("attributes %v: the producer's own are carried over", attrs)
	}
}

// A FIFO DLQ takes a message only with a group and a deduplication id: a park keeps the
// message's own group, and its message id makes a second park of it a duplicate.
func TestAParkOnAFIFODLQKeepsTheMessageGroup(t *testing.T) {
	for _, tc := range []struct {
		dlq, group, wantGroup, wantDedup string
	}{
		{"https://sqs.eu-west-1.amazonaws.com/123456789012/movimientos-dlq.fifo", "ES76", "ES76", "m-1"},
		{"https://sqs.eu-west-1.amazonaws.com/123456789012/movimientos-dlq.fifo", "", "parked", "m-1"},
		{"https://sqs.eu-west-1.amazonaws.com/123456789012/movimientos-dlq", "ES76", "", ""},
	} {
		q := &sent{}
		p := &consumer.SQSParker{Client: q, QueueURL: tc.dlq}
		msg := events.SQSMessage{MessageId: "m-1", Body: `{"id":"x"}`, Attributes: map[string]string{}}
		if tc.group != "" {
			msg.Attributes["MessageGroupId"] = tc.group
		}
		if err := p.Park(context.Background(), msg, consumer.Reason{Outcome: store.Failed, Error: "x"}); err != nil {
			t.Fatal(err)
		}
		if g, d := aws.ToString(q.in[0].MessageGroupId), aws.ToString(q.in[0].MessageDeduplicationId); g != tc.wantGroup || d != tc.wantDedup {
			t.Errorf("park on %s of a message in group %q: group %q, deduplication id %q; want %q, %q", tc.dlq, tc.group, g, d, tc.wantGroup, tc.wantDedup)
		}
	}
}
