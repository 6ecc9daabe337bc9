package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/consumer"
	"github.com/ledger-dev/ledger/internal/testenv"
)

// consume runs `ledger consume --drain` against the test's table and queue and
// returns the per-record log lines.
func consume(t *testing.T, env *testenv.DynamoDB, q *testSQS, queue testQueue, extra ...string) []map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var stdout bytes.Buffer
	stderr := &testenv.Buffer{} // the pollers log concurrently
	args := append([]string{"consume", "--queue-url", queue.URL, "--endpoint", env.Endpoint, "--sqs-endpoint", q.Endpoint,
		"--table", env.Table(), "--drain", "--wait", "1s"}, extra...)
	if code := run(ctx, args, &stdout, stderr); code != 0 {
		t.Fatalf("ledger consume: exit %d\n%s", code, stderr.String())
	}
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == "movement" {
			lines = append(lines, m)
		}
	}
	return lines
}

func saldo(t *testing.T, env *testenv.DynamoDB, cta string) (decimal.Decimal, int64) {
	t.Helper()
	out, err := env.Client.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: aws.String(env.Table()), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "CUENTA#" + cta}, "sk": &types.AttributeValueMemberS{Value: "CUENTA"}},
	})
	if err != nil || out.Item == nil {
		t.Fatalf("account %s: %v, %v", cta, out, err)
	}
	n, _ := decimal.NewFromString(out.Item["movimientos"].(*types.AttributeValueMemberN).Value)
	return decimal.RequireFromString(out.Item["saldo"].(*types.AttributeValueMemberN).Value), n.IntPart()
}

func TestConsumeSNSFanOutAppliesOnce(t *testing.T) {
	q := newSQS(t)
	env := testenv.NewDynamoDB(t)
	ctx := context.Background()
	queue, _ := q.NewQueueWithDLQ(t, "movimientos", 5)
	topic, err := q.SNS.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("movimientos-" + strings.ReplaceAll(t.Name(), "/", "-"))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = q.SNS.DeleteTopic(context.Background(), &sns.DeleteTopicInput{TopicArn: topic.TopicArn})
	})
	if _, err := q.SNS.Subscribe(ctx, &sns.SubscribeInput{TopicArn: topic.TopicArn, Protocol: aws.String("sqs"), Endpoint: aws.String(queue.ARN),
		Attributes: map[string]string{"RawMessageDelivery": "false"}}); err != nil {
		t.Fatal(err)
	}
	movement := `{"id":"pago-8f2c","cuenta":"ES7620770024003102575766","tipo":"abono","importe":"50.00","moneda":"EUR","concepto":"Pedido 1234"}`
	for range 2 { // a producer retry: the same fact published twice
		if _, err := q.SNS.Publish(ctx, &sns.PublishInput{TopicArn: topic.TopicArn, Message: aws.String(movement)}); err != nil {
			t.Fatal(err)
		}
	}
	lines := consume(t, env, q, queue)
	ids := map[string]bool{}
	applied := 0
	for _, l := range lines { // SQS may deliver a message twice: count ids, not lines
		ids[l["message_id"].(string)] = true
		if l["outcome"] == "applied" {
			applied++
		}
	}
	if len(ids) != 2 || applied != 1 {
		t.Fatalf("log lines = %v, want two messages with different ids and one application", lines)
	}
	if s, n := saldo(t, env, "ES7620770024003102575766"); !s.Equal(decimal.NewFromInt(50)) || n != 1 {
		t.Errorf("saldo %s after %d movements, want 50 after 1", s, n)
	}
	if left := q.Count(t, queue); left != 0 {
		t.Errorf("%d messages left on the queue", left)
	}
}

func TestConsumeDrainsAQueueWithDuplicatesAndMalformedMessages(t *testing.T) {
	q := newSQS(t)
	env := testenv.NewDynamoDB(t)
	ctx := context.Background()
	queue, dlq := q.NewQueueWithDLQ(t, "movimientos", 5)

	const unique, accounts = 400, 40
	rng := rand.New(rand.NewPCG(7, 7))
	var bodies []string
	want := map[string]decimal.Decimal{}
	for i := range unique {
		cta := fmt.Sprintf("C%02d", i%accounts)
		cents := 100 + rng.IntN(10000)
		bodies = append(bodies, fmt.Sprintf(`{"id":"m-%d","cuenta":%q,"tipo":"abono","importe":"%d.%02d","moneda":"EUR"}`, i, cta, cents/100, cents%100))
		want[cta] = want[cta].Add(decimal.New(int64(cents), -2))
	}
	for range 100 { // 20% of 500: redeliveries of earlier movements
		bodies = append(bodies, bodies[rng.IntN(unique)])
	}
	malformed := []string{`{"id":"bad-1"`, `{"id":"bad-2","cuenta":"C00","tipo":"abono","importe":"1e3","moneda":"EUR"}`,
		`{"id":"bad-3","cuenta":"C00","tipo":"regalo","importe":"1","moneda":"EUR"}`, `[]`, `not json`,
		`{"id":"bad#6","cuenta":"C00","tipo":"abono","importe":"1","moneda":"EUR"}`, `{"id":"bad-7","cuenta":"C00","tipo":"abono","importe":"0","moneda":"EUR"}`,
		`{"id":"bad-8","cuenta":"C00","tipo":"abono","importe":"1.001","moneda":"EUR"}`, `{"id":"bad-9","cuenta":"C00","tipo":"abono","importe":"1","moneda":"XXX"}`,
		`{"Type":"Notification","Message":"{}"}`}
	bodies = append(bodies, malformed...) // 2% of 500
	rng.Shuffle(len(bodies), func(i, j int) { bodies[i], bodies[j] = bodies[j], bodies[i] })
	for start := 0; start < len(bodies); start += 10 {
		var entries []sqstypes.SendMessageBatchRequestEntry
		for j, b := range bodies[start:min(start+10, len(bodies))] {
			entries = append(entries, sqstypes.SendMessageBatchRequestEntry{Id: aws.String(fmt.Sprint(j)), MessageBody: aws.String(b)})
		}
		if _, err := q.SQS.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(queue.URL), Entries: entries}); err != nil {
			t.Fatal(err)
		}
	}

	lines := consume(t, env, q, queue, "--dlq-url", dlq.URL, "--pollers", "4")
	// At least once: SQS may deliver a message again (a retry, a visibility timeout, a
	// receive racing another poller), and two pollers log in their own time, so a
	// message counts by its best outcome (applied, else duplicate, else failed), and a
	// movement by how often it was applied.
	rank := map[string]int{"failed": 0, "duplicate": 1, "applied": 2}
	first := map[string]string{}
	applied := 0
	for _, l := range lines {
		id, outcome := l["message_id"].(string), l["outcome"].(string)
		if prev, seen := first[id]; !seen || rank[outcome] > rank[prev] {
			first[id] = outcome
		}
		if outcome == "applied" {
			applied++
		}
	}
	count := map[string]int{}
	for _, outcome := range first {
		count[outcome]++
	}
	if len(first) != len(bodies) || count["applied"] != unique || count["failed"] != len(malformed) {
		t.Errorf("outcomes = %v over %d messages, want %d messages: %d applied, %d failed, the rest duplicates",
			count, len(first), len(bodies), unique, len(malformed))
	}
	if applied != unique {
		t.Errorf("%d applications logged, want each of the %d movements applied once", applied, unique)
	}
	for cta, w := range want {
		if s, _ := saldo(t, env, cta); !s.Equal(w) {
			t.Errorf("saldo %s = %s, want %s", cta, s, w)
		}
	}
	if left := q.Count(t, queue); left != 0 {
		t.Errorf("%d messages left on the queue, want it drained", left)
	}
	parked := q.Drain(t, dlq, 100, 30*time.Second)
	bodiesParked := map[string]bool{}
	for _, m := range parked {
		bodiesParked[aws.ToString(m.Body)] = true
	}
	for _, b := range malformed {
		if !bodiesParked[b] {
			t.Errorf("malformed %q is not in the DLQ", b)
		}
	}
	if len(bodiesParked) != len(malformed) {
		t.Errorf("the DLQ holds %d distinct bodies, want the %d malformed", len(bodiesParked), len(malformed))
	}
	for _, m := range parked {
		reason := m.MessageAttributes[consumer.AttrError]
		if reason.StringValue == nil || !strings.Contains(*reason.StringValue, "movimiento:") {
			t.Errorf("parked %q without its reason: %v", aws.ToString(m.Body), m.MessageAttributes)
		}
	}
}

// A drain that finds the queue empty while a message is in flight, such as one an
// interrupted run received, says so: the message is not lost, it comes back later.
func TestConsumeDrainNamesMessagesInFlight(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	q := newSQS(t)
	queue, _ := q.NewQueueWithDLQ(t, "inflight", 5)
	ctx := context.Background()
	if _, err := q.SQS.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(queue.URL), MessageBody: aws.String(`{"id":"m1","cuenta":"ES01","tipo":"abono","importe":"1.00","moneda":"EUR"}`)}); err != nil {
		t.Fatal(err)
	}
	if got := q.Drain(t, queue, 1, 30*time.Second); len(got) != 1 {
		t.Fatalf("received %d messages, want the one sent", len(got))
	}
	var stdout bytes.Buffer
	stderr := &testenv.Buffer{} // the pollers log concurrently
	args := []string{"consume", "--queue-url", queue.URL, "--endpoint", env.Endpoint, "--sqs-endpoint", q.Endpoint, "--table", env.Table(), "--drain", "--wait", "1s"}
	if code := run(ctx, args, &stdout, stderr); code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "0 applied") || !strings.Contains(stderr.String(), `holds messages no receive could see`) || !strings.Contains(stderr.String(), `"unseen":1`) {
		t.Errorf("stdout %q, stderr %q; want nothing applied and the message in flight named", stdout.String(), stderr.String())
	}
}

// consume refuses, in one line and before it receives anything, a queue it would lose
// or loop on a message with, and queues that are not there.
func TestConsumeRefusesQueuesItCannotConsumeSafely(t *testing.T) {
	q := newSQS(t)
	env := testenv.NewDynamoDB(t)
	withDLQ, dlq := q.NewQueueWithDLQ(t, "movimientos", 5)
	bare := q.NewQueue(t, "bare", nil)
	hasty := q.NewQueue(t, "hasty", map[string]string{"VisibilityTimeout": "1",
		"RedrivePolicy": redrivePolicy(dlq, 3)})
	missing := withDLQ.URL + "-no-such-queue"
	loop := q.NewQueue(t, "loop", nil)
	cases := []struct {
		name  string
		args  []string
		says  string
		clean bool // nothing may be left behind: the queue holds its message still
	}{
		{"no redrive policy and no DLQ", []string{"--queue-url", bare.URL}, "no redrive policy", true},
		{"no redrive policy, a DLQ for what can never succeed", []string{"--queue-url", bare.URL, "--dlq-url", dlq.URL}, "no redrive policy", false},
		{"a visibility timeout too short to apply", []string{"--queue-url", hasty.URL}, "its visibility timeout is 1s", true},
		{"a DLQ that does not exist", []string{"--queue-url", withDLQ.URL, "--dlq-url", missing}, "--dlq-url: SQS refused GetQueueAttributes", true},
		{"a queue that does not exist", []string{"--queue-url", missing}, "--queue-url: SQS refused GetQueueAttributes", false},
		{"the queue itself as its DLQ", []string{"--queue-url", loop.URL, "--dlq-url", loop.URL}, "--dlq-url: " + loop.ARN + " is the queue --queue-url consumes", true},
	}
	for _, tc := range cases {
		queue := tc.args[1]
		if tc.clean {
			if _, err := q.SQS.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: aws.String(queue), MessageBody: aws.String("not json")}); err != nil {
				t.Fatal(err)
			}
		}
		var stdout bytes.Buffer
		stderr := &testenv.Buffer{}
		args := append([]string{"consume", "--endpoint", env.Endpoint, "--sqs-endpoint", q.Endpoint, "--table", env.Table(), "--drain", "--wait", "1s"}, tc.args...)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a refused queue ends at once; one consumed may loop
		code := run(ctx, args, &stdout, stderr)
		cancel()
		lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		if code != 1 || len(lines) != 1 || !strings.Contains(lines[0], tc.says) || stdout.Len() != 0 {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 1 and one line saying %q", tc.name, code, stdout.String(), stderr.String(), tc.says)
		}
		if tc.clean {
			if left := q.Count(t, testQueue{URL: queue}); left != 1 {
				t.Errorf("%s: %d messages on the queue, want its one message untouched", tc.name, left)
			}
		}
	}
}

// validate names the first thing wrong: the queue, the worker's pace, the DLQ, then the
// endpoints and the table.
func TestConsumeValidate(t *testing.T) {
	q := "http://127.0.0.1:1/123456789012/movimientos"
	testValidate(t, newConsumeCmd, []validateCase{
		{[]string{"--queue-url", q}, ""},
		{[]string{"--queue-url", q, "--pollers", "64", "--wait", "1s", "--retry-delay", "11h", "--dlq-url", q + "-dlq", "--sqs-endpoint", "http://127.0.0.1:2"}, ""},
		{[]string{"--pollers", "0"}, "--queue-url is required"},
		{[]string{"--queue-url", "movimientos", "--pollers", "0"}, `--queue-url: "movimientos" is not a queue URL`},
		{[]string{"--queue-url", q, "--pollers", "0", "--wait", "0s"}, "--pollers must be within 1–64, not 0"},
		{[]string{"--queue-url", q, "--wait", "21s", "--retry-delay", "0s"}, "--wait must be within 1s–20s, not 21s"},
		{[]string{"--queue-url", q, "--retry-delay", "12h", "--dlq-url", "x"}, "--retry-delay must be within 1s–11h0m0s, not 12h0m0s"},
		{[]string{"--queue-url", q, "--dlq-url", "x", "--sqs-endpoint", "x"}, `--dlq-url: "x" is not a queue URL`},
		{[]string{"--queue-url", q, "--sqs-endpoint", "x", "--endpoint", "x"}, `--sqs-endpoint: awsconf: endpoint "x"`},
		{[]string{"--queue-url", q, "--endpoint", "x", "--table", "ab"}, `--endpoint: awsconf: endpoint "x"`},
		{[]string{"--queue-url", q, "--table", "ab"}, `--table: table name "ab"`},
	})
}
