package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"os"
	"strings"
	"testing"

	lambdaevents "github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/ledger-dev/ledger/internal/testenv"
)

// e2e is one end-to-end run's parts, all on one moto server: the ledger table with its
// stream, the stream handed to the events function (the real bootstrap under the
// Runtime Interface Emulator) as Lambda's event source mapping would, EventBridge
// reached through a fault-injecting proxy, a bus with two rules each routing to an SQS
// queue: every event of the ledger to all, and the documented rule (aplicado events of
// one account prefix) to some.
type e2e struct {
	env    *testenv.DynamoDB
	src    *testenv.StreamSource
	sqs    *sqs.Client
	bus    string
	all    string // the queue's URL
	some   string
	prefix string // the documented rule's account prefix, as this run sets it
	proxy  *proxy
	fn     *testenv.Function
}

// newE2E sets up a run whose PutEvents calls meet f. It skips t on minidyn, which has
// no stream, and where the emulator is not installed.
func newE2E(t *testing.T, f faults, prefix string) *e2e {
	t.Helper()
	env := testenv.NewDynamoDB(t)
	e := &e2e{env: env, src: testenv.NewStreamSource(t, env), prefix: prefix,
		sqs: sqs.NewFromConfig(env.Config, func(o *sqs.Options) { o.BaseEndpoint = aws.String(env.Endpoint) })}
	eb := eventbridge.NewFromConfig(env.Config, func(o *eventbridge.Options) { o.BaseEndpoint = aws.String(env.Endpoint) })
	ctx := context.Background()
	e.bus = "ledger-" + strings.ToLower(rand.Text())
	if _, err := eb.CreateEventBus(ctx, &eventbridge.CreateEventBusInput{Name: aws.String(e.bus)}); err != nil {
		t.Fatal(err)
	}
	var allARN, someARN string
	e.all, allARN = e.queue(t, "all")
	e.some, someARN = e.queue(t, "some")
	e.route(t, eb, "all", `{"source": ["ledger"]}`, allARN)
	e.route(t, eb, "some", documentedRule(t, prefix), someARN)
	t.Cleanup(func() {
		_, _ = eb.DeleteEventBus(context.Background(), &eventbridge.DeleteEventBusInput{Name: aws.String(e.bus)})
	})

	e.proxy = newProxy(t, env.Endpoint, f)
	env2 := append(testenv.LambdaEnv(env.Endpoint, env.Table()), "LEDGER_EVENT_BUS="+e.bus, "AWS_ENDPOINT_URL_EVENTBRIDGE="+e.proxy.url)
	e.fn = testenv.StartLambda(t, testenv.BuildLambda(t, "."), env2...)
	e.proxy.mu.Lock()
	e.proxy.fn = e.fn
	e.proxy.mu.Unlock()
	return e
}

// queue makes an SQS queue for the run, deleted when t ends, and returns its URL and ARN.
func (e *e2e) queue(t *testing.T, name string) (string, string) {
	t.Helper()
	ctx := context.Background()
	q, err := e.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(e.bus + "-" + name)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = e.sqs.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: q.QueueUrl}) })
	attrs, err := e.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: q.QueueUrl, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(q.QueueUrl), attrs.Attributes[string(sqstypes.QueueAttributeNameQueueArn)]
}

// route puts a rule on the run's bus sending what pattern matches to the queue arn.
func (e *e2e) route(t *testing.T, eb *eventbridge.Client, name, pattern, arn string) {
	t.Helper()
	ctx := context.Background()
	if _, err := eb.PutRule(ctx, &eventbridge.PutRuleInput{Name: aws.String(name), EventBusName: aws.String(e.bus), EventPattern: aws.String(pattern)}); err != nil {
		t.Fatalf("rule %s %s: %v", name, pattern, err)
	}
	if _, err := eb.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: aws.String(name), EventBusName: aws.String(e.bus),
		Targets: []ebtypes.Target{{Id: aws.String(name), Arn: aws.String(arn)}}}); err != nil {
		t.Fatal(err)
	}
}

// documentedRule is the event pattern docs/deploy.md routes with
// (examples/regla-aplicados.json), its account prefix set to prefix.
func documentedRule(t *testing.T, prefix string) string {
	t.Helper()
	raw, err := os.ReadFile(testenv.ModuleFile(t, "examples", "regla-aplicados.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rule map[string]any
	if err := json.Unmarshal(raw, &rule); err != nil {
		t.Fatal(err)
	}
	cuenta, ok := rule["detail"].(map[string]any)["cuenta"].([]any)
	if !ok || len(cuenta) != 1 {
		t.Fatalf("examples/regla-aplicados.json: want one detail.cuenta prefix, got %s", raw)
	}
	cuenta[0].(map[string]any)["prefix"] = prefix
	out, _ := json.Marshal(rule)
	return string(out)
}

// invoke hands a batch to the function as Lambda would, and reads its answer.
func (e *e2e) invoke(ctx context.Context, batch lambdaevents.DynamoDBEvent) (lambdaevents.DynamoDBEventResponse, error) {
	payload, err := json.Marshal(batch)
	if err != nil {
		return lambdaevents.DynamoDBEventResponse{}, err
	}
	body, err := e.fn.Call(ctx, payload)
	if err != nil {
		return lambdaevents.DynamoDBEventResponse{}, err
	}
	var resp lambdaevents.DynamoDBEventResponse
	return resp, json.Unmarshal(body, &resp)
}

// envelope is an event as a rule's SQS target receives it.
type envelope struct {
	Source     string          `json:"source"`
	DetailType string          `json:"detail-type"`
	Resources  []string        `json:"resources"`
	Detail     json.RawMessage `json:"detail"`
}

// received takes every message off queue url, until it answers empty three times.
func (e *e2e) received(t *testing.T, url string) []envelope {
	t.Helper()
	ctx := context.Background()
	var out []envelope
	for empty := 0; empty < 3; {
		msgs, err := e.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs.Messages) == 0 {
			empty++
			continue
		}
		for _, m := range msgs.Messages {
			var env envelope
			if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &env); err != nil {
				t.Fatalf("message %s: %v", aws.ToString(m.Body), err)
			}
			out = append(out, env)
			if _, err := e.sqs.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle}); err != nil {
				t.Fatal(err)
			}
		}
	}
	return out
}
