package main

import (
	"context"
	"crypto/rand"
	"maps"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/ledger-dev/ledger/internal/app"
	"github.com/ledger-dev/ledger/internal/awsconf"
	"github.com/ledger-dev/ledger/internal/testenv"
)

// testSQS is a test's view of SQS and SNS on the moto server named by
// testenv.MotoEndpointEnv (which `make test` starts), where it makes queues of its own.
// Tests that need it skip where no moto server is configured, such as a plain `go test`.
type testSQS struct {
	Endpoint string
	SQS      *sqs.Client
	SNS      *sns.Client
}

// newSQS returns clients on moto, or skips t when no moto server is configured.
func newSQS(t testing.TB) *testSQS {
	t.Helper()
	endpoint := os.Getenv(testenv.MotoEndpointEnv)
	if endpoint == "" {
		t.Skipf("%s is not set: SQS/SNS tests run on moto (make test)", testenv.MotoEndpointEnv)
	}
	cfg, err := awsconf.Load(context.Background(), endpoint)
	if err != nil {
		t.Fatal(err)
	}
	return &testSQS{
		Endpoint: endpoint,
		SQS:      app.SQS(cfg, endpoint),
		SNS:      app.SNS(cfg, endpoint),
	}
}

// testQueue is a queue made for one test.
type testQueue struct {
	URL string
	ARN string
}

// NewQueue creates a queue with a unique name (ending in .fifo for a FIFO queue) and
// the given attributes; it is deleted when t ends.
func (e *testSQS) NewQueue(t testing.TB, name string, attrs map[string]string) testQueue {
	t.Helper()
	ctx := context.Background()
	name += "-" + rand.Text()
	if attrs["FifoQueue"] == "true" {
		name += ".fifo"
	}
	out, err := e.SQS.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = e.SQS.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: out.QueueUrl}) })
	a, err := e.SQS.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: out.QueueUrl, AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn}})
	if err != nil {
		t.Fatal(err)
	}
	return testQueue{URL: aws.ToString(out.QueueUrl), ARN: a.Attributes["QueueArn"]}
}

// NewQueueWithDLQ creates a queue whose messages move to a new dead-letter queue after
// maxReceive receives.
func (e *testSQS) NewQueueWithDLQ(t testing.TB, name string, maxReceive int) (queue, dlq testQueue) {
	t.Helper()
	return e.queueWithDLQ(t, name, maxReceive, nil)
}

// queueWithDLQ creates a queue with attrs (and a 30 s visibility timeout) whose
// messages move to a new dead-letter queue, with attrs too, after maxReceive receives.
func (e *testSQS) queueWithDLQ(t testing.TB, name string, maxReceive int, attrs map[string]string) (queue, dlq testQueue) {
	t.Helper()
	dlq = e.NewQueue(t, name+"-dlq", attrs)
	all := map[string]string{"VisibilityTimeout": "30", "RedrivePolicy": redrivePolicy(dlq, maxReceive)}
	maps.Copy(all, attrs)
	return e.NewQueue(t, name, all), dlq
}

// redrivePolicy is a queue's RedrivePolicy attribute: its messages move to dlq after
// maxReceive receives.
func redrivePolicy(dlq testQueue, maxReceive int) string {
	return `{"deadLetterTargetArn":"` + dlq.ARN + `","maxReceiveCount":"` + strconv.Itoa(maxReceive) + `"}`
}

// Count returns the queue's visible plus in-flight messages, as SQS approximates them.
func (e *testSQS) Count(t testing.TB, q testQueue) int {
	t.Helper()
	out, err := e.SQS.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{QueueUrl: aws.String(q.URL), AttributeNames: []types.QueueAttributeName{
		types.QueueAttributeNameApproximateNumberOfMessages, types.QueueAttributeNameApproximateNumberOfMessagesNotVisible}})
	if err != nil {
		t.Fatal(err)
	}
	visible, _ := strconv.Atoi(out.Attributes["ApproximateNumberOfMessages"])
	hidden, _ := strconv.Atoi(out.Attributes["ApproximateNumberOfMessagesNotVisible"])
	return visible + hidden
}

// Drain receives every visible message of q (up to max), without deleting them; they
// stay invisible for the given visibility timeout.
func (e *testSQS) Drain(t testing.TB, q testQueue, max int, visibility time.Duration) []types.Message {
	t.Helper()
	var all []types.Message
	for len(all) < max {
		out, err := e.SQS.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(q.URL), MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
			VisibilityTimeout: int32(visibility / time.Second), MessageAttributeNames: []string{"All"},
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Messages) == 0 {
			break
		}
		all = append(all, out.Messages...)
	}
	return all
}
