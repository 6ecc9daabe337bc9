package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ledger-dev/ledger/internal/awsconf"
)

// answering is a DynamoDB endpoint that answers every call with the error code and
// message, for test credentials in eu-west-1; it is closed when the test ends.
func answering(t *testing.T, code, message string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = fmt.Fprintf(w, `{"__type":"com.amazonaws.dynamodb.v20120810#%s","message":%q}`, code, message)
	}))
	t.Cleanup(srv.Close)
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_REGION", "eu-west-1")
	return srv
}

// A command says in one line why it cannot start on a table: DynamoDB does not answer
// at all, or it answers with a refusal (missing permissions), which is not "cannot
// reach".
func TestATableCheckSaysWhyInOneLine(t *testing.T) {
	refusing := answering(t, "AccessDeniedException", "User is not authorized to perform: dynamodb:DescribeTable")
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"audit", "--endpoint", refusing.URL}, "refused DescribeTable on ledger: AccessDeniedException: User is not authorized"},
		{[]string{"migrate", "--endpoint", refusing.URL}, "refused DescribeTable on ledger: AccessDeniedException"},
		{[]string{"migrate", "--endpoint", "http://127.0.0.1:1"}, "cannot reach DynamoDB at http://127.0.0.1:1"},
	} {
		var out, errOut bytes.Buffer
		code := run(context.Background(), tc.args, &out, &errOut)
		lines := strings.Split(strings.TrimSpace(errOut.String()), "\n")
		if code != 1 || len(lines) != 1 || !strings.Contains(lines[0], tc.says) {
			t.Errorf("ledger %v: exit %d, stderr %q; want 1 and one line saying %q", tc.args, code, errOut.String(), tc.says)
		}
	}
}

// A missing table is 'ledger migrate's to create only on a local endpoint. In AWS a
// stack's template makes the tables, and the likely cause is the name or the region.
func TestAMissingTableNamesTheRightRemedy(t *testing.T) {
	missing := answering(t, "ResourceNotFoundException", "Requested resource not found")
	ctx := context.Background()
	awsCfg, err := awsconf.Load(ctx, missing.URL)
	if err != nil {
		t.Fatal(err)
	}
	db := awsconf.DynamoDB(awsCfg, missing.URL)
	for endpoint, says := range map[string]string{
		missing.URL: "create it with 'ledger migrate'",
		"":          "does not exist at AWS (region eu-west-1); check --table and the region",
	} {
		err := checkTable(ctx, db, "ledger-typo", endpoint)
		if !errors.Is(err, errNoTable) || !strings.Contains(err.Error(), says) || (endpoint == "" && strings.Contains(err.Error(), "ledger migrate")) {
			t.Errorf("endpoint %q: %v; want it to say %q", endpoint, err, says)
		}
	}
}
