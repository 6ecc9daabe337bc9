package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ledger-dev/ledger/internal/audit"
	"github.com/ledger-dev/ledger/internal/sim"
	"github.com/ledger-dev/ledger/internal/store"
	"github.com/ledger-dev/ledger/internal/testenv"
)

func TestAuditCommandNamesCorruptedAccounts(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	ctx := context.Background()
	w, err := sim.Generate(sim.Spec{Accounts: 5, Movements: 60, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := store.New(env.Client, store.Config{Table: env.Table()})
	if err != nil {
		t.Fatal(err)
	}
	var entregas []store.Entrega
	for _, m := range w.Movements {
		entregas = append(entregas, store.Entrega{Mov: m})
	}
	svc.Apply(ctx, entregas)
	// audit runs the command with --json and without: the verdict, and what a person reads.
	audit := func() (int, audit.Report, string) {
		var stdout, human, stderr bytes.Buffer
		code := run(ctx, []string{"audit", "--endpoint", env.Endpoint, "--table", env.Table(), "--json"}, &stdout, &stderr)
		var r audit.Report
		if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
			t.Fatalf("audit --json printed %q: %v", stdout.String(), err)
		}
		if again := run(ctx, []string{"audit", "--endpoint", env.Endpoint, "--table", env.Table()}, &human, &stderr); again != code {
			t.Fatalf("audit exits %d with --json, %d without", code, again)
		}
		return code, r, human.String()
	}
	cuentas := map[string]bool{}
	for _, m := range w.Movements {
		cuentas[m.Cuenta] = true
	}
	if code, r, human := audit(); code != 0 || !r.OK || r.Accounts != len(cuentas) || r.Movements == 0 ||
		!strings.Contains(human, fmt.Sprintf("%d accounts, %d applied movements", r.Accounts, r.Movements)) {
		t.Fatalf("healthy table: exit %d, %+v, %q; want 0 and the %d accounts counted alike in JSON and text", code, r, human, len(cuentas))
	}

	// Corrupt one balance; delete one movement of another account.
	corrupt, lose := w.Movements[0].Cuenta, ""
	var lost string
	for _, m := range w.Movements {
		if m.Cuenta != corrupt {
			lose, lost = m.Cuenta, m.ID
			break
		}
	}
	if _, err := env.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:        aws.String(env.Table()),
		Key:              map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "CUENTA#" + corrupt}, "sk": &types.AttributeValueMemberS{Value: "CUENTA"}},
		UpdateExpression: aws.String("SET saldo = :s"), ExpressionAttributeValues: map[string]types.AttributeValue{":s": &types.AttributeValueMemberN{Value: "1000000"}},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: aws.String(env.Table()),
		Key:       map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "CUENTA#" + lose}, "sk": &types.AttributeValueMemberS{Value: "MOV#" + lost}},
	}); err != nil {
		t.Fatal(err)
	}
	code, r, human := audit()
	if code != 1 || r.OK || len(r.Broken) != 2 {
		t.Fatalf("corrupted table: exit %d, %+v; want exit 1 and two broken accounts", code, r)
	}
	names := map[string]string{r.Broken[0].Cuenta: r.Broken[0].Reason, r.Broken[1].Cuenta: r.Broken[1].Reason}
	if !strings.Contains(names[corrupt], "saldo is 1000000") {
		t.Errorf("%s: reason %q, want the wrong saldo named", corrupt, names[corrupt])
	}
	if !strings.Contains(names[lose], "movements are applied") {
		t.Errorf("%s: reason %q, want the missing movement noticed", lose, names[lose])
	}
	if !strings.Contains(human, "BROKEN "+corrupt) || !strings.Contains(human, "BROKEN "+lose) {
		t.Errorf("stdout = %q, want both accounts named", human)
	}
}

// An audit that finds nothing of the ledger's is clean, and says so on stderr: a wrong
// --table must not read as a healthy ledger.
func TestAuditOfATableWithoutTheLedgerSaysSo(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"audit", "--endpoint", env.Endpoint, "--table", env.Table()}, &stdout, &stderr)
	if code != 0 || !strings.Contains(stdout.String(), "0 accounts") || !strings.Contains(stderr.String(), "holds no ledger account or movement") {
		t.Errorf("exit %d, stdout %q, stderr %q; want 0, the count, and the warning", code, stdout.String(), stderr.String())
	}
}

// An account that kept moving while the audit read it is named, with a word to audit
// again: it does not fail the audit, so the text is how an operator learns of it.
func TestAuditTextNamesUnverifiedAccounts(t *testing.T) {
	var out bytes.Buffer
	printAudit(&out, "ledger", audit.Report{OK: true, Accounts: 3, Movements: 9, Broken: []audit.Broken{},
		Unverified: []audit.Broken{{Cuenta: "ES76", Reason: "its records changed while read"}}})
	want := "UNVERIFIED ES76: its records changed while read\naudit of ledger: 3 accounts, 9 applied movements, 0 broken, 1 unverified (busy while read; audit again)\n"
	if out.String() != want {
		t.Errorf("printed %q, want %q", out.String(), want)
	}
}

// validate names the first thing wrong: --segments, then --endpoint, then --table.
func TestAuditValidate(t *testing.T) {
	testValidate(t, newAuditCmd, []validateCase{
		{nil, ""},
		{[]string{"--segments", "64", "--endpoint", "http://127.0.0.1:1", "--table", "ledger"}, ""},
		{[]string{"--segments", "0"}, "--segments must be within 1–64, not 0"},
		{[]string{"--segments", "65", "--endpoint", "ftp://x"}, "--segments must be within 1–64, not 65"},
		{[]string{"--endpoint", "ftp://x", "--table", "ab"}, `--endpoint: awsconf: endpoint "ftp://x"`},
		{[]string{"--table", "ab"}, `--table: table name "ab"`},
	})
}
