package compare

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/migrations"
)

// meter is the transport below the fault injector: it sees the calls that reached
// DynamoDB and their real answers, even those a LostResponse hides, and adds up the
// capacity each consumed and the effects each committed.
type meter struct {
	base    http.RoundTripper
	indexes map[string][]migrations.Index // table → its global secondary indexes
	// trust says ConsumedCapacity answers are DynamoDB's; on a loopback endpoint they are
	// not (moto reports 0 units for a transaction of eleven writes) and units computes them.
	trust bool

	mu     sync.Mutex
	used   usage
	tokens map[string]bool // idempotency tokens of the requests committed
}

// newMeter meters the calls s's transport carries, trusting DynamoDB's
// ConsumedCapacity answers when trust says so.
func newMeter(s *backend, trust bool) *meter {
	return &meter{base: s.transport, indexes: s.indexes, trust: trust, used: usage{applied: map[string]int{}}, tokens: map[string]bool{}}
}

type usage struct {
	rcu, wcu float64
	busy     time.Duration  // the store's time to answer, the simulated round trip excluded
	applied  map[string]int // movementKey → effects committed
}

func (m *meter) usage() usage {
	m.mu.Lock()
	defer m.mu.Unlock()
	u := m.used
	u.applied = maps.Clone(u.applied)
	return u
}

// inputKey carries a call's SDK input down to the meter.
type inputKey struct{}

// requestCapacity is an SDK option: calls ask for their capacity and carry their input.
func requestCapacity(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("ledger-compare-capacity",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			total := types.ReturnConsumedCapacityTotal
			switch p := in.Parameters.(type) {
			case *dynamodb.GetItemInput:
				p.ReturnConsumedCapacity = total
			case *dynamodb.PutItemInput:
				p.ReturnConsumedCapacity = total
			case *dynamodb.UpdateItemInput:
				p.ReturnConsumedCapacity = total
			case *dynamodb.DeleteItemInput:
				p.ReturnConsumedCapacity = total
			case *dynamodb.TransactWriteItemsInput:
				p.ReturnConsumedCapacity = total
			}
			return next.HandleInitialize(middleware.WithStackValue(ctx, inputKey{}, in.Parameters), in)
		}), middleware.After)
}

// RoundTrip implements http.RoundTripper.
func (m *meter) RoundTrip(req *http.Request) (*http.Response, error) {
	in := middleware.GetStackValue(req.Context(), inputKey{})
	t0 := time.Now()
	resp, err := m.base.RoundTrip(req)
	if err != nil || in == nil {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return nil, err
	}
	took := time.Since(t0)
	resp.Body = io.NopCloser(bytes.NewReader(body))
	ok := resp.StatusCode/100 == 2

	m.mu.Lock()
	defer m.mu.Unlock()
	m.used.busy += took
	if units, found := reportedUnits(body); ok && found && m.trust {
		if _, isRead := in.(*dynamodb.GetItemInput); isRead {
			m.used.rcu += units
		} else {
			m.used.wcu += units
		}
	} else if ok || refusal(body) {
		r, w := m.units(in, ok)
		m.used.rcu, m.used.wcu = m.used.rcu+r, m.used.wcu+w
	}
	if !ok {
		return resp, nil
	}
	movs, token := effects(in)
	if !m.tokens[token] { // "" is never marked
		for _, k := range movs {
			m.used.applied[k]++
		}
	}
	if token != "" {
		m.tokens[token] = true
	}
	return resp, nil
}

// refusal reports a refused answer that still consumed capacity.
func refusal(body []byte) bool {
	var e struct {
		Type string `json:"__type"`
	}
	_ = json.Unmarshal(body, &e)
	code := e.Type[strings.LastIndexByte(e.Type, '#')+1:]
	return code == "ConditionalCheckFailedException" || code == "TransactionCanceledException"
}

// reportedUnits reads ConsumedCapacity: an object, or a list for transactions.
func reportedUnits(body []byte) (float64, bool) {
	var out struct{ ConsumedCapacity json.RawMessage }
	if json.Unmarshal(body, &out) != nil {
		return 0, false
	}
	raw := out.ConsumedCapacity
	if len(raw) > 0 && raw[0] == '{' {
		raw = slices.Concat([]byte("["), raw, []byte("]"))
	}
	var list []struct{ CapacityUnits float64 }
	if json.Unmarshal(raw, &list) != nil || list == nil { // absent or null
		return 0, false
	}
	total := 0.0
	for _, c := range list {
		total += c.CapacityUnits
	}
	return total, true
}

// The item layouts effects reads; TestScenarios fails if they drift.
const (
	ledgerAccountPrefix   = "CUENTA#"
	ledgerMovementPrefix  = "MOV#"
	baselineAccountPrefix = "SALDO#"
)

// effects names the movements whose effect a committed request carries, and its
// idempotency token: a repeated token is DynamoDB answering an SDK retry from memory.
// The transaction strategy's effects are the movement items a TransactWriteItems puts
// aplicado (a transfer's two legs); the baseline's, an UpdateItem ADD on one of its
// accounts naming the movement (:mov), which has no token, so an SDK retry is a second
// write. (The baseline's undo of a debit would count as it landing twice; no scenario
// has a credit refused.)
func effects(in any) (movements []string, token string) {
	switch p := in.(type) {
	case *dynamodb.TransactWriteItemsInput:
		for _, it := range p.TransactItems {
			if it.Put == nil {
				continue
			}
			cuenta, isAccount := strings.CutPrefix(text(it.Put.Item["pk"]), ledgerAccountPrefix)
			id, isMovement := strings.CutPrefix(text(it.Put.Item["sk"]), ledgerMovementPrefix)
			if isAccount && isMovement && text(it.Put.Item["estado"]) == string(movimiento.Aplicado) {
				movements = append(movements, movementKey(cuenta, id))
			}
		}
		return movements, aws.ToString(p.ClientRequestToken)
	case *dynamodb.UpdateItemInput:
		if cuenta, ok := strings.CutPrefix(text(p.Key["pk"]), baselineAccountPrefix); ok {
			return []string{movementKey(cuenta, text(p.ExpressionAttributeValues[":mov"]))}, ""
		}
	}
	return nil, ""
}

func movementKey(cuenta, id string) string { return cuenta + "/" + id }

// text is v as text: a string or number attribute's value, "" for anything else.
func text(v types.AttributeValue) string {
	var s string
	_ = attributevalue.Unmarshal(v, &s) // anything else leaves ""
	return s
}
