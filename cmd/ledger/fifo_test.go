package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/sim"
	"github.com/ledger-dev/ledger/internal/store"
	"github.com/ledger-dev/ledger/internal/testenv"
)

// NewFIFOQueueWithDLQ creates a FIFO queue, as the stack's QueueType=fifo makes it
// (explicit deduplication ids, high throughput per message group), whose messages move
// to a new FIFO dead-letter queue after maxReceive receives.
func (e *testSQS) NewFIFOQueueWithDLQ(t testing.TB, name string, maxReceive int) (queue, dlq testQueue) {
	t.Helper()
	fifo := map[string]string{"FifoQueue": "true", "ContentBasedDeduplication": "false",
		"DeduplicationScope": "messageGroup", "FifoThroughputLimit": "perMessageGroupId"}
	return e.queueWithDLQ(t, name, maxReceive, fifo)
}

// sendFile runs `ledger send --from` with lines to queue.
func sendFile(t *testing.T, q *testSQS, queue testQueue, lines []string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "movimientos.jsonl")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"send", "--queue-url", queue.URL, "--endpoint", q.Endpoint, "--from", file}, &stdout, &stderr); code != 0 {
		t.Fatalf("ledger send: exit %d: %s", code, stderr.String())
	}
}

// byMessage groups consume's log lines by message id, in the order they were logged.
func byMessage(lines []map[string]any) map[string][]map[string]any {
	out := map[string][]map[string]any{}
	for _, l := range lines {
		id := l["message_id"].(string)
		out[id] = append(out[id], l)
	}
	return out
}

// ledger send gives each movement its account as message group and its key's hash as
// deduplication id, in the workload's order: the queue drops a resend within its
// window, and hands each account's movements over in the order they were generated.
func TestSendToAFIFOQueueGroupsByAccountInOrder(t *testing.T) {
	q := newSQS(t)
	queue, _ := q.NewFIFOQueueWithDLQ(t, "send", 5)
	var stdout, stderr bytes.Buffer
	args := []string{"send", "--queue-url", queue.URL, "--endpoint", q.Endpoint, "--generate", "60", "--accounts", "3", "--seed", "4",
		"--duplicates", "0.25", "--transfers", "0.2", "--reversals", "0.1"}
	if code := run(context.Background(), args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	spec := sim.Spec{Accounts: 3, Movements: 60, Seed: 4, Transfers: 0.2, Reversals: 0.1, Now: time.Now().UTC().Truncate(day).Add(day)}
	w, err := sim.Generate(spec)
	if err != nil {
		t.Fatal(err)
	}
	place := map[string]int{}
	for i, m := range w.Movements {
		place[m.Cuenta+"/"+m.ID] = i
	}
	var msgs []types.Message
	for range 100 { // a FIFO queue hands a group over once its messages are gone: take them all
		out, err := q.SQS.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(queue.URL), MaxNumberOfMessages: 10,
			WaitTimeSeconds: 1, MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll}})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Messages) == 0 {
			break
		}
		msgs = append(msgs, out.Messages...)
		for _, m := range out.Messages {
			if _, err := q.SQS.DeleteMessage(context.Background(), &sqs.DeleteMessageInput{QueueUrl: aws.String(queue.URL), ReceiptHandle: m.ReceiptHandle}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(msgs) != 60 {
		t.Fatalf("%d messages on the queue, want the 60 movements: their 15 resends dropped by their deduplication ids", len(msgs))
	}
	last := map[string]int{} // group → place of its last movement received
	for _, m := range msgs {
		mov, err := movimiento.Parse([]byte(aws.ToString(m.Body)))
		if err != nil {
			t.Fatal(err)
		}
		group, dedup := m.Attributes["MessageGroupId"], m.Attributes["MessageDeduplicationId"]
		if group != mov.MessageGroup() || dedup != mov.DeduplicationID() {
			t.Errorf("%s/%s sent in group %q with deduplication id %q, want %q and %q", mov.Cuenta, mov.ID, group, dedup, mov.MessageGroup(), mov.DeduplicationID())
		}
		if p, seen := last[group]; seen && place[mov.Cuenta+"/"+mov.ID] < p {
			t.Errorf("%s/%s came after a later movement of its account", mov.Cuenta, mov.ID)
		}
		last[group] = place[mov.Cuenta+"/"+mov.ID]
	}
}

// On a FIFO queue a credit sent before a debit of the same account is applied first,
// every time: the debit, which needs the credit, applies on its first delivery, even
// with four pollers taking batches at once and the two in different batches.
func TestConsumeAFIFOQueueAppliesACreditBeforeTheDebitItFunds(t *testing.T) {
	q := newSQS(t)
	env := testenv.NewDynamoDB(t)
	queue, dlq := q.NewFIFOQueueWithDLQ(t, "orden", 5)
	const accounts = 40
	var lines []string
	for start := 0; start < accounts; start += 10 { // ten credits, then their ten debits: a batch each
		for k := start; k < start+10; k++ {
			lines = append(lines, fmt.Sprintf(`{"id":"nomina-%d","cuenta":"C%02d","tipo":"abono","importe":"100.00","moneda":"EUR"}`, k, k))
		}
		for k := start; k < start+10; k++ {
			lines = append(lines, fmt.Sprintf(`{"id":"alquiler-%d","cuenta":"C%02d","tipo":"cargo","importe":"100.00","moneda":"EUR"}`, k, k))
		}
	}
	sendFile(t, q, queue, lines)
	logged := byMessage(consume(t, env, q, queue, "--dlq-url", dlq.URL, "--pollers", "4"))
	if len(logged) != 2*accounts {
		t.Fatalf("%d messages logged, want %d", len(logged), 2*accounts)
	}
	for id, ls := range logged {
		if len(ls) != 1 || ls[0]["outcome"] != "applied" {
			t.Errorf("message %s: %v, want applied on its first delivery", id, ls)
		}
	}
	for k := range accounts {
		if s, n := saldo(t, env, fmt.Sprintf("C%02d", k)); !s.IsZero() || n != 2 {
			t.Errorf("C%02d: saldo %s after %d movements, want 0 after 2", k, s, n)
		}
	}
}

// A failure stops its message group and no other: the group's later messages come
// back untried, the other groups apply; once the failure can pass, the group goes on
// in the order it was sent.
func TestConsumeAFIFOQueueHoldsAFailedGroupInOrder(t *testing.T) {
	q := newSQS(t)
	env := testenv.NewDynamoDB(t)
	queue, dlq := q.NewFIFOQueueWithDLQ(t, "retenido", 5)
	sendFile(t, q, queue, []string{
		`{"id":"a1","cuenta":"A","tipo":"abono","importe":"10.00","moneda":"EUR"}`,
		`{"id":"b1","cuenta":"B","tipo":"abono","importe":"5.00","moneda":"EUR"}`,
		`{"id":"a2","cuenta":"A","tipo":"cargo","importe":"50.00","moneda":"EUR"}`,
		`{"id":"b2","cuenta":"B","tipo":"cargo","importe":"5.00","moneda":"EUR"}`,
		`{"id":"a3","cuenta":"A","tipo":"abono","importe":"100.00","moneda":"EUR"}`,
		`{"id":"a4","cuenta":"A","tipo":"cargo","importe":"1.00","moneda":"EUR"}`,
	})
	outcomes := func(lines []map[string]any) map[string]string {
		out := map[string]string{}
		for _, l := range lines {
			out[l["id"].(string)] = l["outcome"].(string)
			if e, _ := l["error"].(string); strings.Contains(e, store.ErrNotAttempted.Error()) {
				out[l["id"].(string)] = "untried"
			}
		}
		return out
	}
	first := outcomes(consume(t, env, q, queue, "--dlq-url", dlq.URL, "--retry-delay", "1s"))
	want := map[string]string{"a1": "applied", "b1": "applied", "a2": "failed", "b2": "applied", "a3": "untried", "a4": "untried"}
	if fmt.Sprint(first) != fmt.Sprint(want) {
		t.Errorf("first drain: %v, want %v", first, want)
	}
	if s, n := saldo(t, env, "A"); !s.Equal(decimal.NewFromInt(10)) || n != 1 {
		t.Errorf("A: saldo %s after %d movements, want 10 after a1 alone", s, n)
	}
	if s, n := saldo(t, env, "B"); !s.IsZero() || n != 2 {
		t.Errorf("B: saldo %s after %d movements, want 0 after 2", s, n)
	}

	var stdout, stderr bytes.Buffer // an overdraft lets a2 pass; A's group goes on, in order
	if code := run(context.Background(), []string{"cuenta", "A", "--limite", "40.00", "--endpoint", env.Endpoint, "--table", env.Table()}, &stdout, &stderr); code != 0 {
		t.Fatalf("ledger cuenta: exit %d: %s", code, stderr.String())
	}
	time.Sleep(1500 * time.Millisecond) // the retry delay
	second := consume(t, env, q, queue, "--dlq-url", dlq.URL, "--retry-delay", "1s")
	var seqs []string
	for _, l := range second {
		seqs = append(seqs, fmt.Sprintf("%s:%v", l["id"], l["seq"]))
	}
	if !slices.Equal(seqs, []string{"a2:2", "a3:3", "a4:4"}) {
		t.Errorf("second drain applied %v, want a2, a3, a4 as A's 2nd, 3rd and 4th", seqs)
	}
	if s, _ := saldo(t, env, "A"); !s.Equal(decimal.NewFromInt(59)) {
		t.Errorf("A: saldo %s, want 59", s)
	}
	if left := q.Count(t, queue); left != 0 {
		t.Errorf("%d messages left on the queue", left)
	}
}
