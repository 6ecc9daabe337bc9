package main

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ledger-dev/ledger/internal/testenv"
)

// TestBootstrapUnderTheRuntimeEmulator runs the real bootstrap binary as Lambda would,
// invokes it with an SQS event over HTTP, and checks the partial-batch response and
// the table.
func TestBootstrapUnderTheRuntimeEmulator(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	fn := testenv.StartLambda(t, testenv.BuildLambda(t, "."), testenv.LambdaEnv(env.Endpoint, env.Table())...)
	raw, err := os.ReadFile("../../internal/consumer/testdata/sqs-raw.json")
	if err != nil {
		t.Fatal(err)
	}
	var ev events.SQSEvent
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatal(err)
	}
	ev.Records = append(ev.Records, events.SQSMessage{MessageId: "malformed-1", Body: `{"id":"x"`, EventSource: "aws:sqs"})
	payload, _ := json.Marshal(ev)

	var resp events.SQSEventResponse
	if err := json.Unmarshal(fn.Invoke(t, payload), &resp); err != nil {
		t.Fatal(err)
	}
	if len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != "malformed-1" {
		t.Fatalf("response = %+v, want only the malformed message back", resp)
	}
	out, err := env.Client.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: aws.String(env.Table()), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "CUENTA#ES9121000418450200051332"}, "sk": &types.AttributeValueMemberS{Value: "CUENTA"}},
	})
	if err != nil || out.Item == nil {
		t.Fatalf("account not written: %v", err)
	}
	if got := out.Item["saldo"].(*types.AttributeValueMemberN).Value; got != "1250" {
		t.Errorf("saldo = %s, want 1250 (2100.00 - 850.00)", got)
	}

	// The same batch again: the function is warm, everything is a duplicate.
	if err := json.Unmarshal(fn.Invoke(t, payload), &resp); err != nil || len(resp.BatchItemFailures) != 1 {
		t.Fatalf("second invocation: %+v, %v", resp, err)
	}
	// The function prints before it answers, but its output reaches us through the
	// emulator's pipe, which may still hold it when the answer arrives: wait for it.
	logs := fn.Output()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(logs, `"outcome":"duplicate"`) || !strings.Contains(logs, `"_aws"`); logs = fn.Output() {
		if time.Now().After(deadline) {
			t.Fatalf("function output lacks the per-record logs or EMF metrics:\n%s", logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if m := regexp.MustCompile(`Init Duration: ([0-9.]+) ms`).FindStringSubmatch(logs); m != nil {
		t.Logf("cold start: init %s ms under the emulator", m[1])
	}
}
