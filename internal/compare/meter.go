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

	"github.com/ledger-dev/ledger/internal/ledger"
	"github.com/ledger-dev/ledger/migrations"
)

// meter is the HTTP transport right above the network, below the fault injector: it
// sees exactly the calls that reached DynamoDB and their real answers, including those
// a LostResponse fault hides from the caller. It adds up the capacity each consumed and
// the movements' effects each committed. Capacity is the answer's ConsumedCapacity from
// a trusted backend (every call asks for it: requestCapacity), else computed (units).
type meter struct {
	base    http.RoundTripper
	indexes map[string][]migrations.Key // table → key of each global secondary index
	// trust says whether ConsumedCapacity answers are DynamoDB's. moto answers with
	// figures of its own (0 units for a transaction of eleven writes), so on a loopback
	// endpoint (the embedded store, moto) units are always computed.
	trust bool

	mu     sync.Mutex
	used   usage
	tokens map[string]bool // idempotency tokens of the requests committed
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

// inputKey carries a call's SDK input down to the meter, which so reads the request
// without parsing DynamoDB's JSON.
type inputKey struct{}

// requestCapacity is an SDK option: every DynamoDB call asks for its consumed capacity
// (ReturnConsumedCapacity TOTAL) and carries its input to the meter.
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

// refusal reports an answer that still consumed capacity: a failed condition, or a
// transaction DynamoDB cancelled.
func refusal(body []byte) bool {
	var e struct {
		Type string `json:"__type"`
	}
	_ = json.Unmarshal(body, &e)
	code := e.Type[strings.LastIndexByte(e.Type, '#')+1:]
	return code == "ConditionalCheckFailedException" || code == "TransactionCanceledException"
}

// reportedUnits reads ConsumedCapacity from an answer: one object, or a list (one per
// table) for transactions.
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

// The item layouts effects reads (internal/store and internal/idempotencia write them).
// The scenario test fails if they drift: every movement would count as lost.
const (
	ledgerAccountPrefix   = "CUENTA#"
	ledgerMovementPrefix  = "MOV#"
	baselineAccountPrefix = "SALDO#"
)

// effects names the movements whose effect a committed request carries (movementKey),
// and the request's idempotency token if it has one: a repeated token is DynamoDB
// answering an SDK retry from memory, not a second write. The transaction strategy's
// effects are the movement items a TransactWriteItems puts with estado "aplicado", in
// the transaction that moves their balance (a transfer's two legs, one per account,
// under its one id). The baseline's is an UpdateItem on one of its accounts, the ADD of
// one movement's delta naming the movement (:mov): a transfer's debit on cuenta and
// credit on destino are two calls. UpdateItem has no idempotency token, so an SDK retry
// of it is a second write. (The baseline undoes a debit whose credit the destination
// refused with a third ADD on cuenta, which would count as the debit landing twice; no
// scenario has a destination refuse a credit.)
func effects(in any) (movements []string, token string) {
	switch p := in.(type) {
	case *dynamodb.TransactWriteItemsInput:
		for _, it := range p.TransactItems {
			if it.Put == nil {
				continue
			}
			cuenta, isAccount := strings.CutPrefix(text(it.Put.Item["pk"]), ledgerAccountPrefix)
			id, isMovement := strings.CutPrefix(text(it.Put.Item["sk"]), ledgerMovementPrefix)
			if isAccount && isMovement && text(it.Put.Item["estado"]) == string(ledger.Aplicado) {
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
