package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/ledger-dev/ledger/internal/app"
	"github.com/ledger-dev/ledger/internal/config"
	"github.com/ledger-dev/ledger/internal/consumer"
	"github.com/ledger-dev/ledger/internal/testenv"
	"github.com/ledger-dev/ledger/internal/worker"
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
	var stdout bytes.Buffer
	up := startUp(t, &stdout, "--from", file)
	up.waitFor(t, "balance 70.50", func() bool { return up.saldo("ES76") == "70.50" })
	resp, err := http.Get("http://" + up.addr + "/cuentas/ES76/movimientos/c1")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the cargo that came back is not in the ledger: %v %v", resp, err)
	}
	resp.Body.Close()
	up.waitFor(t, "the file's summary", func() bool { return strings.Contains(up.stderr.String(), "still serving") })
	up.stop(t)
	out := up.stderr.String()
	if !strings.Contains(out, "msg=parked message_id=line-4") || !strings.Contains(out, `body="not a movement"`) {
		t.Errorf("log = %.2000q, want the malformed line parked in it under its line number", out)
	}
	if !strings.Contains(out, "line 6 is over 262144 bytes") || !strings.Contains(out, "5 lines from "+file+" handled (") || !strings.Contains(out, "), 1 skipped (over 262144 bytes)") {
		t.Errorf("log = %.2000q, want the long line named, and counted apart from the 5 handled", out)
	}
	if summary := stdout.String(); !strings.Contains(summary, "stopped; messages: 3 applied, 1 duplicate, 0 conflicting, 0 rejected, 1 failed (1 parked)\n") {
		t.Errorf("stdout = %q, want the outcome summary", summary)
	}
}

// A script that starts up on a file and asks at once gets the file's balances, not a
// 404 or part of them: the API answers once each line has been handled once.
func TestUpAnswersOnceTheFileIsHandled(t *testing.T) {
	file := filepath.Join(t.TempDir(), "movimientos.jsonl")
	var lines strings.Builder
	for i := range 2000 { // batches of ten: many round trips before the last line's
		fmt.Fprintf(&lines, `{"id":"a%d","cuenta":"ES76","tipo":"abono","importe":"1.00","moneda":"EUR"}`+"\n", i)
	}
	if err := os.WriteFile(file, []byte(lines.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	up := startUp(t, io.Discard, "--from", file)
	up.waitFor(t, "listening", func() bool {
		conn, err := net.Dial("tcp", up.addr)
		if err == nil {
			conn.Close()
		}
		return err == nil
	})
	if got := up.saldo("ES76"); got != "2000.00" {
		t.Errorf("first answer: saldo %q; want the file's 2000.00", got)
	}
	up.stop(t)
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
	up := startUp(t, io.Discard, "--queue-url", queue.URL)
	up.waitFor(t, "balance 5.00", func() bool { return up.saldo("ES77") == "5.00" })
	up.stop(t)
}

// up's --dlq-url parks a message that can never succeed there at once, as consume's
// does, rather than after the queue's maxReceiveCount receives (each 30 s apart here).
func TestUpParksOnTheDLQItIsGiven(t *testing.T) {
	q := newSQS(t)
	queue, dlq := q.NewQueueWithDLQ(t, "up-park", 5)
	t.Setenv("AWS_ENDPOINT_URL_SQS", q.Endpoint)
	if _, err := q.SQS.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: aws.String(queue.URL), MessageBody: aws.String("not a movement")}); err != nil {
		t.Fatal(err)
	}
	up := startUp(t, io.Discard, "--queue-url", queue.URL, "--dlq-url", dlq.URL)
	up.waitFor(t, "a message parked on --dlq-url", func() bool { return q.Count(t, dlq) > 0 })
	up.stop(t)
}

// upRun is a ledger up running in the background, on a free port.
type upRun struct {
	addr   string
	stderr *testenv.Buffer
	done   chan int
	cancel context.CancelFunc
}

// startUp starts ledger up with args on a free port; it is stopped when t ends.
func startUp(t *testing.T, stdout io.Writer, args ...string) *upRun {
	ctx, cancel := context.WithCancel(context.Background())
	up := &upRun{addr: testenv.FreeAddr(t), stderr: &testenv.Buffer{}, done: make(chan int, 1), cancel: cancel}
	go func() { up.done <- run(ctx, append([]string{"up", "--addr", up.addr}, args...), stdout, up.stderr) }()
	t.Cleanup(cancel)
	return up
}

// waitFor polls cond for up to 30 s, failing t if up ends first or cond never holds.
func (up *upRun) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		select {
		case code := <-up.done:
			t.Fatalf("ledger up ended, exit %d, before %s:\n%s", code, what, up.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s after 30 s:\n%s", what, up.stderr.String())
		}
	}
}

// saldo is the API's balance of cuenta, "" when it does not answer one.
func (up *upRun) saldo(cuenta string) string {
	resp, err := http.Get("http://" + up.addr + "/cuentas/" + cuenta)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	var c struct{ Saldo string }
	_ = json.NewDecoder(resp.Body).Decode(&c)
	return c.Saldo
}

// stop stops up as Ctrl-C does and fails t unless it exits 0 within 20 s.
func (up *upRun) stop(t *testing.T) {
	t.Helper()
	up.cancel()
	select {
	case code := <-up.done:
		if code != 0 {
			t.Fatalf("exit %d:\n%s", code, up.stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("ledger up did not stop after Ctrl-C")
	}
}

// Ctrl-C stops up while --from names a pipe no writer has opened yet.
func TestOpenInputGivesUpOnAPipeWhenStopped(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "lines")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	opened := make(chan error, 1)
	go func() {
		_, err := openInput(ctx, fifo)
		opened <- err
	}()
	cancel()
	select {
	case err := <-opened:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("openInput = %v, want it to give up", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("openInput waited for a writer after Ctrl-C")
	}
	if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil { // lets the pending open end
		f.Close()
	}
}

// A line that keeps failing is delivered lineAttempts times, then dropped: the summary
// says so, rather than that it is coming back, and each delivery's log line counts the
// deliveries so far. Lines beyond a batch still all apply.
func TestALineThatKeepsFailingIsDroppedAfterItsLastAttempt(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	cfg, err := config.FromEnv(func(name string) string { return map[string]string{config.EnvTable: env.Table()}[name] })
	if err != nil {
		t.Fatal(err)
	}
	tally, logged := &worker.Tally{}, &testenv.Buffer{}
	h, err := app.Consumer(cfg, env.Config, app.Endpoints{DynamoDB: env.Endpoint},
		consumer.Options{Logger: slog.New(slog.NewJSONHandler(logged, nil)), Parker: consumer.LogParker{Logger: slog.New(slog.DiscardHandler)}, Observer: tally.Observe})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for i := range 2*consumer.MaxBatch + 3 {
		lines = append(lines, fmt.Sprintf(`{"id":"a-%d","cuenta":"ES01","tipo":"abono","importe":"1.00","moneda":"EUR"}`, i))
	}
	lines = append(lines, `{"id":"too-much","cuenta":"ES02","tipo":"cargo","importe":"5.00","moneda":"EUR"}`) // waits for funds that never come
	var once, dropped []string
	feed := lineFeed{h: h, log: slog.New(slog.DiscardHandler), retry: time.Millisecond,
		handledOnce: func() { once = append(once, "") }, drop: func(id string) { dropped = append(dropped, id); tally.Drop(id) }}
	n, skipped, err := feed.run(context.Background(), strings.NewReader(strings.Join(lines, "\n")+"\n"))
	if err != nil || n != len(lines) || skipped != 0 {
		t.Fatalf("fed %d lines, skipped %d, err %v; want %d, 0, nil", n, skipped, err, len(lines))
	}
	got := tally.Outcomes()
	if got.Applied != len(lines)-1 || got.Failed != 1 || got.FailedFates != (worker.Fates{Dropped: 1}) || tally.Handled() != len(lines)-1+lineAttempts {
		t.Errorf("outcomes %+v after %d deliveries; want %d applied, the last line dropped after %d deliveries", got, tally.Handled(), len(lines)-1, lineAttempts)
	}
	if len(dropped) != 1 || dropped[0] != fmt.Sprintf("line-%d", len(lines)) || len(once) == 0 {
		t.Errorf("dropped %v (want the last line), told the input was handled %d times", dropped, len(once))
	}
	var receives []int
	for l := range strings.Lines(logged.String()) {
		var line struct {
			ID       string `json:"message_id"`
			Receives int
		}
		if err := json.Unmarshal([]byte(l), &line); err == nil && line.ID == dropped[0] {
			receives = append(receives, line.Receives)
		}
	}
	for i, n := range receives {
		if n != i+1 || len(receives) != lineAttempts {
			t.Errorf("the last line's deliveries logged receives %v, want 1 to %d", receives, lineAttempts)
			break
		}
	}
	if len(receives) == 0 {
		t.Error("the last line's deliveries logged no receives")
	}
}

// validate names the first thing wrong: --from, --addr, the queues and what they need,
// then where the table is; nothing listens or starts yet.
func TestUpValidate(t *testing.T) {
	q := "http://127.0.0.1:1/123456789012/movimientos"
	testValidate(t, newUpCmd, []validateCase{
		{nil, ""},
		{[]string{"--from", "-", "--addr", ":0", "--queue-url", q, "--dlq-url", q + "-dlq", "--sqs-endpoint", "http://127.0.0.1:2", "--endpoint", "http://127.0.0.1:3", "--table", "ledger"}, ""},
		{[]string{"--from", t.TempDir(), "--addr", "x"}, "--from: "},
		{[]string{"--addr", "x", "--sqs-endpoint", "x"}, "--addr: address x: missing port in address"},
		{[]string{"--sqs-endpoint", "x", "--queue-url", "x"}, `--sqs-endpoint: awsconf: endpoint "x"`},
		{[]string{"--queue-url", "x", "--dlq-url", "x"}, `--queue-url: "x" is not a queue URL`},
		{[]string{"--dlq-url", "x"}, `--dlq-url: "x" is not a queue URL`},
		{[]string{"--dlq-url", q, "--sqs-endpoint", "http://127.0.0.1:2"}, "--dlq-url needs --queue-url"},
		{[]string{"--sqs-endpoint", "http://127.0.0.1:2", "--endpoint", "x"}, "--sqs-endpoint needs --queue-url"},
		{[]string{"--endpoint", "x", "--table", "ab"}, `--endpoint: awsconf: endpoint "x"`},
		{[]string{"--table", "ab"}, `--table: table name "ab"`},
		{[]string{"--events", "events.jsonl"}, ""},
		{[]string{"--events", "events.jsonl", "--endpoint", "http://127.0.0.1:3"}, "--events needs the embedded DynamoDB"},
	})
}
