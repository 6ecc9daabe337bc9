package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/consumer"
	"github.com/ledger-dev/ledger/internal/testenv"
)

// recipeMarker comes right before the shell block of docs/deploy.md that sorts the
// messages the consumer parked.
const recipeMarker = "<!-- dlq-recipe -->"

// dlqRecipe is the shell block after recipeMarker in docs/deploy.md.
func dlqRecipe(t *testing.T) string {
	t.Helper()
	doc, err := os.ReadFile("../../docs/deploy.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(doc), recipeMarker+"\n```sh\n")
	block, _, closed := strings.Cut(after, "\n```\n")
	if !ok || !closed {
		t.Fatalf("docs/deploy.md has no shell block after %s", recipeMarker)
	}
	return block
}

// A producer that forges ledger.outcome has its message parked for a reserved attribute,
// with the consumer's word in place of its own; the recipe in docs/deploy.md sends that
// body back without attributes, where it is applied, and keeps a copy of every other
// parked message before deleting it.
func TestTheDLQRecipeSendsAForgedOneBack(t *testing.T) {
	q := newSQS(t)
	for _, tool := range []string{"aws", "jq", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the recipe needs %s: %v", tool, err)
		}
	}
	env := testenv.NewDynamoDB(t)
	ctx := context.Background()
	queue, dlq := q.NewQueueWithDLQ(t, "movimientos", 5)
	forged := map[string]sqstypes.MessageAttributeValue{consumer.AttrOutcome: {DataType: aws.String("String"), StringValue: aws.String("applied")}}
	for body, attrs := range map[string]map[string]sqstypes.MessageAttributeValue{
		`{"id":"f-1","cuenta":"R1","tipo":"abono","importe":"7.00","moneda":"EUR"}`:  forged,
		`{"id":"bad-1","cuenta":"R1","tipo":"abono","importe":"1e3","moneda":"EUR"}`: nil,
	} {
		if _, err := q.SQS.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(queue.URL), MessageBody: aws.String(body), MessageAttributes: attrs}); err != nil {
			t.Fatal(err)
		}
	}
	consume(t, env, q, queue, "--dlq-url", dlq.URL)
	if n := q.Count(t, dlq); n != 2 {
		t.Fatalf("%d messages in the DLQ, want the forged one and the malformed one parked", n)
	}

	dir := t.TempDir()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", dlqRecipe(t))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+awsOn(t, q.Endpoint)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "REGION=us-east-1", "QUEUE_URL="+queue.URL, "DLQ_URL="+dlq.URL)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the recipe: %v\n%s", err, out)
	}

	consume(t, env, q, queue, "--dlq-url", dlq.URL)
	if s, n := saldo(t, env, "R1"); !s.Equal(decimal.NewFromInt(7)) || n != 1 {
		t.Errorf("R1: saldo %s after %d movements, want the forged one's 7.00 applied once it came back", s, n)
	}
	kept, err := os.ReadFile(filepath.Join(dir, "parked.jsonl"))
	if err != nil || strings.Count(string(kept), "\n") != 1 || !strings.Contains(string(kept), "bad-1") {
		t.Errorf("parked.jsonl = %q, %v; want the malformed message kept, alone", kept, err)
	}
	if left := q.Count(t, dlq); left != 0 {
		t.Errorf("%d messages left in the DLQ, want the recipe to have handled both", left)
	}
}

// awsOn is a directory holding an aws command that is the AWS CLI on endpoint: the
// recipe runs as an operator types it, against the test's server.
func awsOn(t *testing.T, endpoint string) string {
	t.Helper()
	real, err := exec.LookPath("aws")
	if err != nil {
		t.Skipf("the recipe needs the AWS CLI: %v", err)
	}
	dir := t.TempDir()
	script := "#!/bin/sh\nexec " + strconv.Quote(real) + " --endpoint-url " + strconv.Quote(endpoint) + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "aws"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}
