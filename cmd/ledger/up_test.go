package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/ledger-dev/ledger/internal/testenv"
)

// A file's lines are consumed as a queue's messages would be. Lines have no queue: a
// line that can never succeed is parked in the log even with a DLQ in the environment,
// and one over a message's size limit is logged and skipped, the rest still read.
func TestUpServesTheAPIAndConsumesAFile(t *testing.T) {
	t.Setenv("LEDGER_DLQ_URL", "http://127.0.0.1:1/123456789012/nobodys-dlq")
	file := filepath.Join(t.TempDir(), "movimientos.jsonl")
	lines := strings.Join([]string{
		`{"id":"c1","cuenta":"ES76","tipo":"cargo","importe":"30.00","moneda":"EUR"}`, // before the credit that covers it
		`{"id":"a1","cuenta":"ES76","tipo":"abono","importe":"100.00","moneda":"EUR"}`,
		`{"id":"a1","cuenta":"ES76","tipo":"abono","importe":"100","moneda":"EUR"}`, // a duplicate
		`not a movement`,
		" \t\r",
		`{"id":"big","concepto":"` + strings.Repeat("x", maxLine) + `"}`,
		`{"id":"a2","cuenta":"ES76","tipo":"abono","importe":"0.50","moneda":"EUR"}`,
	}, "\n") + "\n"
	if err := os.WriteFile(file, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := testenv.FreeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout bytes.Buffer
	stderr := &testenv.Buffer{}
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"up", "--addr", addr, "--from", file}, &stdout, stderr) }()

	var balance struct{ Saldo string }
	deadline := time.Now().Add(30 * time.Second)
	for balance.Saldo != "70.50" {
		if time.Now().After(deadline) {
			t.Fatalf("balance %q after 30 s, want 70.50; output:\n%s", balance.Saldo, stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
		resp, err := http.Get("http://" + addr + "/cuentas/ES76")
		if err != nil {
			continue
		}
		_ = json.NewDecoder(resp.Body).Decode(&balance)
		resp.Body.Close()
	}
	resp, err := http.Get("http://" + addr + "/cuentas/ES76/movimientos/c1")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the cargo that came back is not in the ledger: %v %v", resp, err)
	}
	resp.Body.Close()

	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("ledger up did not stop after Ctrl-C")
	}
	out := stderr.String()
	if !strings.Contains(out, "msg=parked message_id=line-4") || !strings.Contains(out, `body="not a movement"`) {
		t.Errorf("log = %.2000q, want the malformed line parked in it under its line number", out)
	}
	if !strings.Contains(out, "line 6 is over 262144 bytes") {
		t.Errorf("log = %.2000q, want the long line named", out)
	}
	if summary := stdout.String(); !strings.Contains(summary, "stopped; messages: 3 applied, 1 duplicate, 0 conflicting, 0 rejected, 1 failed, 1 parked") {
		t.Errorf("stdout = %q, want the outcome summary", summary)
	}
}

// up on its embedded store consumes a queue that lives elsewhere: its SQS calls go to
// AWS's endpoint (here AWS_ENDPOINT_URL_SQS, naming moto), never to the embedded store,
// which has no SQS.
func TestUpConsumesAQueueBesideTheEmbeddedStore(t *testing.T) {
	q := newSQS(t)
	queue, _ := q.NewQueueWithDLQ(t, "up", 5)
	t.Setenv("AWS_ENDPOINT_URL_SQS", q.Endpoint)
	body := `{"id":"q1","cuenta":"ES77","tipo":"abono","importe":"5.00","moneda":"EUR"}`
	if _, err := q.SQS.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: aws.String(queue.URL), MessageBody: aws.String(body)}); err != nil {
		t.Fatal(err)
	}
	addr := testenv.FreeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stderr := &testenv.Buffer{}
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"up", "--addr", addr, "--queue-url", queue.URL}, io.Discard, stderr) }()
	var balance struct{ Saldo string }
	for deadline := time.Now().Add(30 * time.Second); balance.Saldo != "5.00"; time.Sleep(100 * time.Millisecond) {
		select {
		case code := <-done:
			t.Fatalf("ledger up ended, exit %d:\n%s", code, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("balance %q after 30 s, want 5.00:\n%s", balance.Saldo, stderr.String())
		}
		if resp, err := http.Get("http://" + addr + "/cuentas/ES77"); err == nil {
			_ = json.NewDecoder(resp.Body).Decode(&balance)
			resp.Body.Close()
		}
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr.String())
	}
}
