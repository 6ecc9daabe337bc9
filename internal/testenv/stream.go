package testenv

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/ledger-dev/ledger/internal/items"
)

// StreamSource hands a table's DynamoDB stream, read through the streams API, to a
// function, as Lambda's event source mapping for a stream does: batches of up to
// BatchSize records in stream order from a checkpoint. A batch answered with a batch
// item failure comes back from that record, those before it done. A function error (a
// crash included) brings the whole batch back, split in two when Bisect. After
// MaxRetries retries a batch's records are discarded to Discarded, as to an on-failure
// destination. It reads each batch with a shard iterator taken at its checkpoint, as
// Lambda resumes after a failure. The stream has one shard, as moto's has; moto's
// server (scripts/moto_server.py) keeps it whole across cancelled transactions.
type StreamSource struct {
	BatchSize  int
	MaxRetries int
	Bisect     bool

	client *dynamodbstreams.Client
	arn    string
	shard  string
	after  string // the last sequence number done; "" from the trim horizon

	// What happened: invocations, those that failed whole, those answered with a batch
	// item failure, and the records discarded after MaxRetries.
	Invocations, FunctionErrors, PartialFailures int
	Discarded                                    []events.DynamoDBEventRecord
}

// Invoker hands one batch to the function: its response, or a *FunctionError.
type Invoker func(ctx context.Context, batch events.DynamoDBEvent) (events.DynamoDBEventResponse, error)

// NewStreamSource turns on env's ledger table's stream (new and old images) and reads
// it from its trim horizon, 100 records a batch, 10 retries, bisecting, as the stack's
// mapping does. env must be moto: minidyn has no stream, and t is skipped there.
func NewStreamSource(t testing.TB, env *DynamoDB) *StreamSource {
	t.Helper()
	if env.Backend != External {
		t.Skip("minidyn has no DynamoDB stream: this test runs on moto (make test-moto)")
	}
	ctx := context.Background()
	out, err := env.Client.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String(env.Table()),
		StreamSpecification: &ddbtypes.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: ddbtypes.StreamViewTypeNewAndOldImages}})
	if err != nil {
		t.Fatalf("turn on the table's stream: %v", err)
	}
	s := &StreamSource{BatchSize: 100, MaxRetries: 10, Bisect: true, arn: aws.ToString(out.TableDescription.LatestStreamArn),
		client: dynamodbstreams.NewFromConfig(env.Config, func(o *dynamodbstreams.Options) { o.BaseEndpoint = aws.String(env.Endpoint) })}
	desc, err := s.client.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(s.arn)})
	if err != nil || len(desc.StreamDescription.Shards) != 1 {
		t.Fatalf("describe the stream %s: %v (want one shard)", s.arn, err)
	}
	s.shard = aws.ToString(desc.StreamDescription.Shards[0].ShardId)
	return s
}

// Drain hands the stream to invoke until a read from the checkpoint finds no record.
// It bounds itself: rounds reads at most (each delivers at least one record or
// discards it).
func (s *StreamSource) Drain(ctx context.Context, rounds int, invoke Invoker) error {
	for range rounds {
		batch, err := s.read(ctx)
		if err != nil || len(batch) == 0 {
			return err
		}
		if err := s.deliver(ctx, batch, 0, invoke); err != nil {
			return err
		}
	}
	return fmt.Errorf("testenv: the stream did not drain in %d reads", rounds)
}

// deliver hands batch to invoke until each record is done or discarded, retry being
// the retries it has had.
func (s *StreamSource) deliver(ctx context.Context, batch []events.DynamoDBEventRecord, retry int, invoke Invoker) error {
	for len(batch) > 0 {
		if retry > s.MaxRetries {
			s.Discarded = append(s.Discarded, batch...)
			s.after = batch[len(batch)-1].Change.SequenceNumber
			return nil
		}
		s.Invocations++
		resp, err := invoke(ctx, events.DynamoDBEvent{Records: batch})
		var fe *FunctionError
		switch {
		case errors.As(err, &fe) && s.Bisect && len(batch) > 1:
			s.FunctionErrors++
			half := len(batch) / 2
			if err := s.deliver(ctx, batch[:half], retry+1, invoke); err != nil {
				return err
			}
			batch, retry = batch[half:], retry+1
			continue
		case errors.As(err, &fe):
			s.FunctionErrors++
			retry++
			continue
		case err != nil:
			return err
		}
		from := failedFrom(batch, resp)
		if from > 0 {
			s.after = batch[from-1].Change.SequenceNumber
		}
		if from == len(batch) {
			return nil
		}
		s.PartialFailures++
		batch, retry = batch[from:], retry+1
	}
	return nil
}

// failedFrom is the index of the record a response names as failed (the lowest, if it
// names several), or len(batch) when it names none. A response naming a record not in
// the batch fails it whole, as Lambda does.
func failedFrom(batch []events.DynamoDBEventRecord, resp events.DynamoDBEventResponse) int {
	from := len(batch)
	for _, f := range resp.BatchItemFailures {
		found := false
		for i, r := range batch {
			if r.Change.SequenceNumber == f.ItemIdentifier {
				from, found = min(from, i), true
			}
		}
		if !found {
			return 0
		}
	}
	return from
}

// read is the next batch after the checkpoint, as Lambda hands records over.
func (s *StreamSource) read(ctx context.Context) ([]events.DynamoDBEventRecord, error) {
	in := &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(s.arn), ShardId: aws.String(s.shard), ShardIteratorType: types.ShardIteratorTypeTrimHorizon}
	if s.after != "" {
		in.ShardIteratorType, in.SequenceNumber = types.ShardIteratorTypeAfterSequenceNumber, aws.String(s.after)
	}
	it, err := s.client.GetShardIterator(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("testenv: stream iterator: %w", err)
	}
	out, err := s.client.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: it.ShardIterator, Limit: aws.Int32(int32(s.BatchSize))})
	if err != nil {
		return nil, fmt.Errorf("testenv: stream records: %w", err)
	}
	batch := make([]events.DynamoDBEventRecord, len(out.Records))
	for i, r := range out.Records {
		if batch[i], err = s.lambdaRecord(r); err != nil {
			return nil, err
		}
	}
	return batch, nil
}

// lambdaRecord is r as Lambda hands it to a function, its eventSourceARN the stream's.
func (s *StreamSource) lambdaRecord(r types.Record) (events.DynamoDBEventRecord, error) {
	d := r.Dynamodb
	var images [3]map[string]events.DynamoDBAttributeValue
	for i, img := range []map[string]types.AttributeValue{d.Keys, d.OldImage, d.NewImage} {
		if img == nil {
			continue
		}
		item, err := attributevalue.FromDynamoDBStreamsMap(img)
		if err == nil {
			images[i], err = items.ToStream(item)
		}
		if err != nil {
			return events.DynamoDBEventRecord{}, fmt.Errorf("testenv: stream record %s: %w", aws.ToString(d.SequenceNumber), err)
		}
	}
	return events.DynamoDBEventRecord{
		AWSRegion: aws.ToString(r.AwsRegion), EventID: aws.ToString(r.EventID), EventName: string(r.EventName),
		EventSource: aws.ToString(r.EventSource), EventVersion: aws.ToString(r.EventVersion), EventSourceArn: s.arn,
		Change: events.DynamoDBStreamRecord{
			ApproximateCreationDateTime: events.SecondsEpochTime{Time: aws.ToTime(d.ApproximateCreationDateTime)},
			Keys:                        images[0], OldImage: images[1], NewImage: images[2],
			SequenceNumber: aws.ToString(d.SequenceNumber), SizeBytes: aws.ToInt64(d.SizeBytes), StreamViewType: string(d.StreamViewType),
		},
	}, nil
}
