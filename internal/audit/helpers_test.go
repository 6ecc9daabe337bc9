package audit_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/sim"
	"github.com/ledger-dev/ledger/internal/store"
	"github.com/ledger-dev/ledger/internal/testenv"
)

// item is a raw DynamoDB item, as a test writes one by hand.
type item = map[string]types.AttributeValue

func newService(t *testing.T, env *testenv.DynamoDB, policy cuenta.FundsPolicy) *store.Ledger {
	t.Helper()
	return testenv.Ledger(t, env, policy, nil)
}

func clocked(t *testing.T, env *testenv.DynamoDB, policy cuenta.FundsPolicy, c *sim.Clock) *store.Ledger {
	t.Helper()
	return testenv.Ledger(t, env, policy, c.Now)
}

func get(t *testing.T, env *testenv.DynamoDB, pk, sk string) item {
	t.Helper()
	return env.Get(t, pk, sk)
}

func put(t *testing.T, env *testenv.DynamoDB, it item) {
	t.Helper()
	env.Put(t, it)
}
