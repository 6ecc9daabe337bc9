package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/sim"
)

func TestSendGeneratedMovementsToAQueue(t *testing.T) {
	q := newSQS(t)
	queue := q.NewQueue(t, "send", nil)
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"send", "--queue-url", queue.URL, "--endpoint", q.Endpoint, "--generate", "40", "--accounts", "3", "--duplicates", "0.25",
		"--transfers", "0.2", "--repartos", "0.15", "--refunds", "0.15", "--holds", "0.1"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	msgs := q.Drain(t, queue, 100, 30*time.Second)
	if len(msgs) != 50 {
		t.Fatalf("%d messages on the queue, want 40 movements + 10 duplicates", len(msgs))
	}
	ids, tipos := map[string]bool{}, map[movimiento.Tipo]int{}
	for _, m := range msgs {
		mov, err := movimiento.Parse([]byte(aws.ToString(m.Body)))
		if err != nil {
			t.Fatalf("sent an invalid movement %q: %v", aws.ToString(m.Body), err)
		}
		ids[mov.ID] = true
		tipos[mov.Tipo]++
	}
	if len(ids) != 40 {
		t.Errorf("%d distinct movements, want 40", len(ids))
	}
	if tipos[movimiento.Traspaso] == 0 || tipos[movimiento.Reparto] == 0 || tipos[movimiento.Anulacion] == 0 || tipos[movimiento.Retencion] == 0 {
		t.Errorf("tipos sent %v: want the shares asked for, transfers, repartos, refunds and holds", tipos)
	}
	if !strings.Contains(stdout.String(), "sent 50 of 50") {
		t.Errorf("stdout = %q", stdout.String())
	}
}

// Lines near the size limit are sent too: ten of them would be over a batch call's
// bytes, so they go in smaller batches.
func TestSendLargeLinesToAQueue(t *testing.T) {
	q := newSQS(t)
	queue := q.NewQueue(t, "send-large", nil)
	var lines strings.Builder
	for i := range 12 {
		fmt.Fprintf(&lines, `{"id":"big-%d","concepto":"%s"}`+"\n", i, strings.Repeat("x", 110<<10))
	}
	file := filepath.Join(t.TempDir(), "large.jsonl")
	if err := os.WriteFile(file, []byte(lines.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"send", "--queue-url", queue.URL, "--endpoint", q.Endpoint, "--from", file}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "sent 12 of 12") {
		t.Fatalf("exit %d, stdout %q, stderr %s; want all 12 sent", code, stdout.String(), stderr.String())
	}
	if msgs := q.Drain(t, queue, 100, 30*time.Second); len(msgs) != 12 {
		t.Errorf("%d messages on the queue, want 12", len(msgs))
	}
}

func TestSendAFileThroughSNS(t *testing.T) {
	q := newSQS(t)
	ctx := context.Background()
	queue := q.NewQueue(t, "send-sns", nil)
	topic, err := q.SNS.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("send-" + strings.ReplaceAll(t.Name(), "/", "-"))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = q.SNS.DeleteTopic(context.Background(), &sns.DeleteTopicInput{TopicArn: topic.TopicArn})
	})
	if _, err := q.SNS.Subscribe(ctx, &sns.SubscribeInput{TopicArn: topic.TopicArn, Protocol: aws.String("sqs"), Endpoint: aws.String(queue.ARN)}); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "movimientos.jsonl")
	lines := `{"id":"a","cuenta":"C1","tipo":"abono","importe":"10.00","moneda":"EUR"}

{"id":"b","cuenta":"C1","tipo":"cargo","importe":"2.50","moneda":"EUR"}
not a movement
{"id":"c","cuenta":"C1","tipo":"abono","importe":"1.00","moneda":"EUR","destino":"C2"}
`
	if err := os.WriteFile(file, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run(ctx, []string{"send", "--topic-arn", aws.ToString(topic.TopicArn), "--endpoint", q.Endpoint, "--from", file}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if out := stdout.String(); !strings.Contains(out, "sent 4 of 4") || !strings.Contains(out, "2 of them are not valid") {
		t.Errorf("stdout = %q; want 4 sent, 2 of them invalid (not JSON; a destino on an abono)", out)
	}
	msgs := q.Drain(t, queue, 10, 30*time.Second)
	if len(msgs) != 4 {
		t.Fatalf("%d messages arrived through SNS, want 4", len(msgs))
	}
	for _, m := range msgs {
		if !strings.Contains(aws.ToString(m.Body), `"Type"`) {
			t.Errorf("body %q is not an SNS envelope", aws.ToString(m.Body))
		}
	}
}

func TestSendRefusesAmbiguousFlags(t *testing.T) {
	q := []string{"send", "--queue-url", "http://127.0.0.1:1/q"}
	for _, args := range [][]string{
		{"send", "--generate", "5"},
		{"send", "--queue-url", "http://127.0.0.1:1/q", "--topic-arn", "arn:aws:sns:us-east-1:1:t", "--generate", "5"},
		q,
		append(q, "--from", "x", "--generate", "5"),
		append(q, "--generate", "5", "--transfers", "1.5"),
		append(q, "--generate", "5", "--reversals", "-0.1"),
		append(q, "--generate", "5", "--holds", "NaN"),
		append(q, "--generate", "5", "--transfers", "0.5", "--reversals", "0.3", "--holds", "0.3"),
		append(q, "--from", "x", "--holds", "0.1"),
	} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), args, &stdout, &stderr); code != 2 || strings.Count(stderr.String(), "\n") != 2 || stdout.Len() > 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line with the way to help", args, code, stderr.String())
		}
	}
}

// A generated workload can hold every kind of movement: each body is a valid movement,
// holds expire from now on, and those built to be refused stay home.
func TestSendGeneratesEveryKind(t *testing.T) {
	spec := sim.Spec{Accounts: 4, Movements: 200, Seed: 3, Transfers: 0.2, Repartos: 0.1, Reversals: 0.1, Refunds: 0.1, Holds: 0.2, Now: time.Now()}
	msgs, err := sendBodies("", spec, 0.25, false)
	if err != nil {
		t.Fatal(err)
	}
	bodies := bodiesOf(msgs)
	if len(bodies) != 250 {
		t.Fatalf("%d bodies, want 200 movements and 50 duplicates", len(bodies))
	}
	tipos := map[movimiento.Tipo]int{}
	importes := map[string]movimiento.Movimiento{} // by cuenta/id
	refunds := 0
	for _, b := range bodies {
		m, err := movimiento.Parse([]byte(b))
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		tipos[m.Tipo]++
		importes[m.Cuenta+"/"+m.ID] = m
		if o := importes[m.Cuenta+"/"+m.Anula]; m.Tipo == movimiento.Anulacion && !m.Importe.IsZero() && m.Importe.LessThan(o.Importe) {
			refunds++
		}
		if m.Tipo == movimiento.Retencion && !m.Expira.After(time.Now()) {
			t.Errorf("hold %s expires at %s, already past", m.ID, m.Expira)
		}
	}
	for _, tipo := range []movimiento.Tipo{movimiento.Abono, movimiento.Cargo, movimiento.Traspaso, movimiento.Reparto, movimiento.Anulacion, movimiento.Retencion, movimiento.Captura, movimiento.Liberacion} {
		if tipos[tipo] == 0 {
			t.Errorf("no %s among %v", tipo, tipos)
		}
	}
	if refunds == 0 {
		t.Error("no refund of part of a movement")
	}
}

// Run again the same UTC day, a seed sends the very same bodies, holds' expira
// included: the ledger sees duplicates, not conflicting ones to park as producer bugs.
// A run just before midnight still leaves each hold a day to be taken.
func TestSendGeneratesTheSameMovementsAllDay(t *testing.T) {
	midnight := time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)
	spec := sim.Spec{Accounts: 4, Movements: 100, Seed: 5, Holds: 0.3}
	late := midnight.Add(day - 30*time.Second)
	var runs [2][]string
	for i, at := range []time.Time{midnight.Add(5 * time.Minute), late} {
		spec.Now = at
		msgs, err := sendBodies("", spec, 0, false)
		if err != nil {
			t.Fatal(err)
		}
		runs[i] = bodiesOf(msgs)
	}
	if !slices.Equal(runs[0], runs[1]) {
		t.Errorf("a morning's and a night's run differ: %d and %d bodies", len(runs[0]), len(runs[1]))
	}
	holds := 0
	for _, b := range runs[1] {
		if m, err := movimiento.Parse([]byte(b)); err == nil && m.Tipo == movimiento.Retencion {
			holds++
			if m.Expira.Sub(late) < day {
				t.Errorf("hold %s sent at %s expires at %s: less than a day to be taken", m.ID, late, m.Expira)
			}
		}
	}
	if holds == 0 {
		t.Error("the workload holds nothing")
	}
}

// A file written on Windows, or with stray blank lines, sends its movements and nothing
// else; a line over SQS's limit is an error naming it, before anything is sent.
func TestJSONLinesSkipsBlankLines(t *testing.T) {
	in := "{\"id\":\"a\"}\r\n\r\n\r\r\n   \n{\"id\":\"b\"}\n"
	lines, err := jsonLines(strings.NewReader(in))
	if err != nil || !slices.Equal(lines, []string{`{"id":"a"}`, `{"id":"b"}`}) {
		t.Fatalf("jsonLines = %q, %v; want the two movements", lines, err)
	}
	if _, err := jsonLines(strings.NewReader("{}\n" + strings.Repeat("x", maxLine+1) + "\n")); err == nil || !strings.Contains(err.Error(), strconv.Itoa(maxLine)) {
		t.Fatalf("a line over %d bytes: %v, want an error naming the limit", maxLine, err)
	}
}

// A batch API may accept some entries and refuse others: the refused go again, a
// little later, and a refusal that persists is reported with the API's reason. An entry
// the API refuses for the sender's fault is not tried again; the others still are.
func TestBatchSendRetriesRefusedEntriesThenNamesTheReason(t *testing.T) {
	bodies := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"}
	msgs := parseBodies(bodies)
	throttled := batchRefusal{"ThrottlingException", "slow down", false}
	tooBig := batchRefusal{"InvalidParameterValue", "body too big", true}
	// refusing refuses body on a try when why says so.
	refusing := func(why func(body string, try int) (batchRefusal, bool)) (func([]entry) ([]string, map[string]batchRefusal, error), map[string]int) {
		tries := map[string]int{}
		return func(pending []entry) ([]string, map[string]batchRefusal, error) {
			var ok []string
			refused := map[string]batchRefusal{}
			for _, e := range pending {
				tries[e.msg.body]++
				if r, no := why(e.msg.body, tries[e.msg.body]); no {
					refused[e.id] = r
				} else {
					ok = append(ok, e.id)
				}
			}
			return ok, refused, nil
		}, tries
	}
	flaky, tries := refusing(func(body string, try int) (batchRefusal, bool) { return throttled, body == "c" && try == 1 })
	if sent, err := batchSend(context.Background(), msgs, sqsBatchBytes, flaky); err != nil || sent != len(bodies) || tries["c"] != 2 || tries["a"] != 1 {
		t.Fatalf("sent %d, %v, tries %v; want all sent, c twice, the rest once", sent, err, tries)
	}
	stubborn, tries := refusing(func(body string, _ int) (batchRefusal, bool) { return throttled, body == "k" })
	sent, err := batchSend(context.Background(), msgs, sqsBatchBytes, stubborn)
	if sent != len(bodies)-1 || tries["k"] != sendAttempts || err == nil || !strings.Contains(err.Error(), "1 message(s) refused, the first: ThrottlingException: slow down") {
		t.Fatalf("sent %d, %v, k tried %d times; want all but k sent and k's reason named", sent, err, tries["k"])
	}
	mixed, tries := refusing(func(body string, try int) (batchRefusal, bool) {
		switch {
		case body == "k":
			return tooBig, true
		case body == "l":
			return throttled, try == 1
		}
		return batchRefusal{}, false
	})
	sent, err = batchSend(context.Background(), msgs, sqsBatchBytes, mixed)
	if sent != len(bodies)-1 || tries["k"] != 1 || tries["l"] != 2 || err == nil || !strings.Contains(err.Error(), "1 message(s) refused, the first: InvalidParameterValue: body too big") {
		t.Fatalf("sent %d, %v, tries k %d l %d; want k given up at once, l sent on its second try", sent, err, tries["k"], tries["l"])
	}
}

// A named pipe passes the check without being opened: opening it would wait for a
// writer, and take that writer's lines from the command that reads it next.
func TestCheckFileLeavesAPipeUnopened(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "lines")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	checked := make(chan error, 1)
	go func() { checked <- checkFile(fifo) }()
	select {
	case err := <-checked:
		if err != nil {
			t.Errorf("checkFile(pipe) = %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		// Unblock the open so the goroutine ends with the test.
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			f.Close()
		}
		t.Fatal("checkFile opened the pipe and waited for a writer")
	}
}

// A batch call is refused whole beyond ten messages or its API's bytes in all, so
// bodies are cut into batches under both, in order: a file of legal lines is sendable.
func TestBatchesKeepUnderBothLimits(t *testing.T) {
	big := strings.Repeat("x", maxLine) // the largest line there may be
	third := strings.Repeat("y", snsBatchBytes/3)
	cases := []struct {
		name     string
		bodies   []string
		maxBytes int
		sizes    []int // messages per batch
	}{
		{"small bodies: ten a batch", slices.Repeat([]string{"a"}, 23), sqsBatchBytes, []int{10, 10, 3}},
		{"four largest lines fill SQS's MiB", slices.Repeat([]string{big}, 9), sqsBatchBytes, []int{4, 4, 1}},
		{"one largest line fills SNS's 256 KiB", []string{big, "a", big}, snsBatchBytes, []int{1, 1, 1}},
		{"three thirds fit SNS's, a fourth does not", slices.Repeat([]string{third}, 4), snsBatchBytes, []int{3, 1}},
		{"nothing", nil, sqsBatchBytes, nil},
	}
	for _, tc := range cases {
		got := batches(parseBodies(tc.bodies), tc.maxBytes)
		var sizes []int
		var again []string
		for _, batch := range got {
			b := bodiesOf(batch)
			sizes = append(sizes, len(b))
			again = append(again, b...)
			if n := len(strings.Join(b, "")); n > tc.maxBytes {
				t.Errorf("%s: a batch of %d bytes, over %d", tc.name, n, tc.maxBytes)
			}
		}
		if !slices.Equal(sizes, tc.sizes) || !slices.Equal(again, tc.bodies) {
			t.Errorf("%s: batches of %v, want %v, every body once and in order", tc.name, sizes, tc.sizes)
		}
	}
}

// bodiesOf is msgs' bodies, in order.
func bodiesOf(msgs []message) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, m.body)
	}
	return out
}

// validate names the first thing wrong: the destination and the source, the workload,
// the file, then the destination's address and the endpoint.
func TestSendValidate(t *testing.T) {
	q := "http://127.0.0.1:1/123456789012/movimientos"
	testValidate(t, newSendCmd, []validateCase{
		{[]string{"--queue-url", q, "--generate", "5"}, ""},
		{[]string{"--topic-arn", "arn:aws:sns:us-east-1:1:t", "--from", "-"}, ""},
		{[]string{"--queue-url", q, "--generate", "1000000", "--accounts", "100000", "--seed", "0", "--duplicates", "10", "--transfers", "0.4", "--repartos", "0.1", "--reversals", "0.2", "--refunds", "0.05", "--holds", "0.25"}, ""},
		{[]string{"--generate", "0"}, "give exactly one of --queue-url and --topic-arn"},
		{[]string{"--queue-url", q, "--generate", "0", "--from", "x"}, "give exactly one of --from and --generate"},
		{[]string{"--queue-url", q, "--generate", "0", "--accounts", "0"}, "--generate must be within 1–1000000, not 0"},
		{[]string{"--queue-url", q, "--generate", "5", "--accounts", "0", "--duplicates", "-1"}, "--accounts must be within 1–100000, not 0"},
		{[]string{"--queue-url", q, "--generate", "5", "--duplicates", "-1", "--holds", "2"}, "--duplicates must be within 0–10, not -1"},
		{[]string{"--queue-url", q, "--generate", "5", "--holds", "2", "--transfers", "0.9"}, "--holds must be within 0–1, not 2"},
		{[]string{"--queue-url", q, "--generate", "5", "--repartos", "1.2", "--holds", "2"}, "--repartos must be within 0–1, not 1.2"},
		{[]string{"--queue-url", q, "--generate", "5", "--refunds", "-0.5", "--holds", "2"}, "--refunds must be within 0–1, not -0.5"},
		{[]string{"--queue-url", q, "--generate", "5", "--holds", "0.5", "--transfers", "0.75"}, "--transfers, --repartos, --reversals, --refunds and --holds add up to 1.25"},
		{[]string{"--queue-url", q, "--generate", "5", "--repartos", "0.5", "--refunds", "0.75"}, "--transfers, --repartos, --reversals, --refunds and --holds add up to 1.25"},
		{[]string{"--queue-url", q, "--from", "-", "--reversals", "0.1", "--duplicates", "1"}, "--transfers, --repartos, --reversals, --refunds and --holds shape a generated workload"},
		{[]string{"--queue-url", q, "--from", "-", "--repartos", "0.1"}, "--transfers, --repartos, --reversals, --refunds and --holds shape a generated workload"},
		{[]string{"--queue-url", q, "--from", "-", "--duplicates", "1", "--seed", "2"}, "--duplicates repeats generated movements"},
		{[]string{"--queue-url", q, "--from", "-", "--accounts", "2"}, "--accounts and --seed shape a generated workload"},
		{[]string{"--queue-url", "q", "--from", t.TempDir()}, "--from: "},
		{[]string{"--queue-url", "q", "--from", "-", "--endpoint", "x"}, `--queue-url: "q" is not a queue URL`},
		{[]string{"--topic-arn", "arn:aws:sqs:us-east-1:1:q", "--from", "-", "--endpoint", "x"}, `--topic-arn: "arn:aws:sqs:us-east-1:1:q" is not an SNS topic ARN`},
		{[]string{"--queue-url", q, "--from", "-", "--endpoint", "x"}, `--endpoint: awsconf: endpoint "x"`},
	})
}
