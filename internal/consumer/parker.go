package consumer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// The message attributes a parked message carries besides its own.
const (
	AttrOutcome         = "ledger.outcome"
	AttrError           = "ledger.error"
	AttrSourceMessageID = "ledger.source-message-id"
)

// ReservedPrefix starts the names of the attributes only the consumer sets: a message
// that arrives with one is parked (ErrReservedAttribute), so that every ledger.*
// attribute in the DLQ is the consumer's word.
const ReservedPrefix = "ledger."

// maxAttributes is SQS's limit of message attributes per message.
const maxAttributes = 10

// SQSSender is the part of the SQS API parking needs.
type SQSSender interface {
	SendMessage(ctx context.Context, in *sqs.SendMessageInput, opts ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
}

// maxErrorAttrBytes bounds the ledger.error attribute of a parked message, and
// maxLoggedBodyBytes the body a parker logs: enough to read, never a log line of
// 256 KiB.
const (
	maxErrorAttrBytes  = 1 << 10
	maxLoggedBodyBytes = 4 << 10
)

// SQSParker parks messages on a queue, normally the source queue's DLQ: the body
// unchanged, with the outcome, the error and the source message id as attributes, and
// as many of the message's own as fit (SQS allows 10), never one of ReservedPrefix.
type SQSParker struct {
	Client   SQSSender
	QueueURL string
}

// ErrDLQIsSource is a park refused because the DLQ is the queue the message came from:
// sent there, it would come back as a new message, forever. The message comes back
// instead, until the queue's redrive policy moves it.
var ErrDLQIsSource = errors.New("consumer: the DLQ is the queue the message came from")

// Park implements Parker.
func (p *SQSParker) Park(ctx context.Context, msg events.SQSMessage, reason Reason) error {
	if sameQueue(p.QueueURL, msg.EventSourceARN) {
		return fmt.Errorf("%w: %s", ErrDLQIsSource, msg.EventSourceARN)
	}
	attrs := map[string]types.MessageAttributeValue{
		AttrOutcome:         {DataType: aws.String("String"), StringValue: aws.String(string(reason.Outcome))},
		AttrError:           {DataType: aws.String("String"), StringValue: aws.String(truncate(reason.Error, maxErrorAttrBytes))},
		AttrSourceMessageID: {DataType: aws.String("String"), StringValue: aws.String(msg.MessageId)},
	}
	// In name order, so that the same ones are kept every time when not all fit.
	for _, name := range slices.Sorted(maps.Keys(msg.MessageAttributes)) {
		if len(attrs) == maxAttributes {
			break
		}
		if !strings.HasPrefix(name, ReservedPrefix) { // a producer's forged ones are never carried over
			a := msg.MessageAttributes[name]
			attrs[name] = types.MessageAttributeValue{DataType: aws.String(a.DataType), StringValue: a.StringValue, BinaryValue: a.BinaryValue}
		}
	}
	in := &sqs.SendMessageInput{QueueUrl: aws.String(p.QueueURL), MessageBody: aws.String(msg.Body), MessageAttributes: attrs}
	fifoParked(in, msg)
	if _, err := p.Client.SendMessage(ctx, in); err != nil {
		return fmt.Errorf("consumer: park message %s: %w", msg.MessageId, err)
	}
	return nil
}

// parkedGroup is the message group, on a FIFO DLQ, of a message parked without one of
// its own (from a standard queue).
const parkedGroup = "parked"

// fifoParked gives a park on a FIFO DLQ (its URL ends in .fifo) what such a queue
// requires: the message group msg came in, and its message id as the deduplication id,
// so that a message parked twice within five minutes (its delete failed, say) is kept
// once.
func fifoParked(in *sqs.SendMessageInput, msg events.SQSMessage) {
	if !strings.HasSuffix(aws.ToString(in.QueueUrl), ".fifo") {
		return
	}
	in.MessageGroupId = aws.String(cmp.Or(msg.Attributes[attrMessageGroupID], parkedGroup))
	in.MessageDeduplicationId = aws.String(msg.MessageId)
}

// sameQueue reports whether the queue at url (…/ACCOUNT/NAME) is the one arn names
// (arn:PARTITION:sqs:REGION:ACCOUNT:NAME).
func sameQueue(url, arn string) bool {
	parts := strings.Split(arn, ":")
	if len(parts) != 6 || parts[4] == "" || parts[5] == "" {
		return false
	}
	return strings.HasSuffix(strings.TrimSuffix(url, "/"), "/"+parts[4]+"/"+parts[5])
}

// LogParker parks messages in a log: one error line with the message id, its body and
// the reason. It is for local runs without a dead-letter queue (`ledger up`).
type LogParker struct {
	Logger *slog.Logger
}

// Park implements Parker.
func (p LogParker) Park(ctx context.Context, msg events.SQSMessage, reason Reason) error {
	p.Logger.ErrorContext(ctx, "parked", "message_id", msg.MessageId, "outcome", string(reason.Outcome), "error", reason.Error, "body", truncate(msg.Body, maxLoggedBodyBytes))
	return nil
}

// truncate cuts s to at most n bytes on a character boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
