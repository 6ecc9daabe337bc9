package compare

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
)

// meter is the HTTP transport right above the network, below the fault injector: it
// sees exactly the calls that reached DynamoDB and DynamoDB's real answers, including
// the ones a LostResponse fault hides from the caller. For each it adds up the
// capacity consumed and notes which movements' effects the call committed.
//
// Capacity comes from the answer's ConsumedCapacity when a trusted backend returns one
// (every call asks for it, see requestCapacity); otherwise it is computed by
// capacity.go from the request: a conditional write that fails and a cancelled
// transaction are counted as consuming their writes (DynamoDB charges a failed
// condition; counting a cancelled transaction in full errs against this design); an
// update or delete is sized by its key and new values, since the stored image is not
// in the request (the run's largest stored item, checked afterwards, says whether that
// could matter); a read is one unit per started 4 KB, which every stored item is
// below when that check passes.
type meter struct {
	base    http.RoundTripper
	effects effectsFunc
	indexes map[string][][]string // table → key attributes of each global secondary index
	// trust says whether ConsumedCapacity answers are DynamoDB's. moto answers with
	// figures of its own (0 units for a transaction of eleven writes), so on a loopback
	// endpoint (the embedded store, moto) units are always computed.
	trust bool

	mu     sync.Mutex
	used   usage
	tokens map[string]bool // idempotency tokens of the transactions committed
}

// usage is what the meter counted.
type usage struct {
	rcu, wcu float64
	busy     time.Duration  // time the store took to answer, network round trip excluded
	applied  map[string]int // movement key → effects committed
}

func (m *meter) usage() usage {
	m.mu.Lock()
	defer m.mu.Unlock()
	u := m.used
	u.applied = maps.Clone(u.applied)
	return u
}

// effectsFunc names the movements whose effect a committed request carries, and the
// request's idempotency token if it has one (a repeated token is DynamoDB answering an
// SDK retry from memory, not a second write).
type effectsFunc func(in any) (movements []string, token string)

func newMeter(base http.RoundTripper, effects effectsFunc, indexes map[string][][]string, trust bool) *meter {
	return &meter{base: base, effects: effects, indexes: indexes, trust: trust,
		used: usage{applied: map[string]int{}}, tokens: map[string]bool{}}
}

// inputKey carries the SDK input of a call down to the transport (requestCapacity puts
// it there), so the meter can read the request without parsing DynamoDB's JSON.
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
	refused := !ok && refusal(body)

	m.mu.Lock()
	defer m.mu.Unlock()
	m.used.busy += took
	if units, found := reportedUnits(body); ok && found && m.trust {
		if _, isRead := in.(*dynamodb.GetItemInput); isRead {
			m.used.rcu += units
		} else {
			m.used.wcu += units
		}
	} else if ok || refused {
		r, w := m.computed(in, ok)
		m.used.rcu, m.used.wcu = m.used.rcu+r, m.used.wcu+w
	}
	if ok {
		movs, token := m.effects(in)
		if token == "" || !m.tokens[token] {
			for _, k := range movs {
				m.used.applied[k]++
			}
		}
		if token != "" {
			m.tokens[token] = true
		}
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
	var out struct {
		ConsumedCapacity json.RawMessage
	}
	if json.Unmarshal(body, &out) != nil || len(out.ConsumedCapacity) == 0 || string(out.ConsumedCapacity) == "null" {
		return 0, false
	}
	type cc struct{ CapacityUnits float64 }
	var list []cc
	if json.Unmarshal(out.ConsumedCapacity, &list) != nil {
		var one cc
		if json.Unmarshal(out.ConsumedCapacity, &one) != nil {
			return 0, false
		}
		list = []cc{one}
	}
	total := 0.0
	for _, c := range list {
		total += c.CapacityUnits
	}
	return total, true
}

// computed is the capacity a call consumes by DynamoDB's item-size rules; committed
// says whether its writes reached the global secondary indexes.
func (m *meter) computed(in any, committed bool) (rcu, wcu float64) {
	switch p := in.(type) {
	case *dynamodb.GetItemInput:
		return readUnits(0, p.ConsistentRead != nil && *p.ConsistentRead), 0
	case *dynamodb.PutItemInput:
		return 0, m.put(*p.TableName, p.Item, writeUnits, committed)
	case *dynamodb.UpdateItemInput:
		return 0, writeUnits(itemSize(p.Key) + valuesSize(p.ExpressionAttributeValues))
	case *dynamodb.DeleteItemInput:
		return 0, writeUnits(itemSize(p.Key))
	case *dynamodb.TransactWriteItemsInput:
		for _, it := range p.TransactItems {
			switch {
			case it.Put != nil:
				wcu += m.put(*it.Put.TableName, it.Put.Item, transactWriteUnits, committed)
			case it.Update != nil:
				wcu += transactWriteUnits(itemSize(it.Update.Key) + valuesSize(it.Update.ExpressionAttributeValues))
			case it.Delete != nil:
				wcu += transactWriteUnits(itemSize(it.Delete.Key))
			case it.ConditionCheck != nil:
				wcu += transactWriteUnits(itemSize(it.ConditionCheck.Key))
			}
		}
	}
	return rcu, wcu
}

// put is a put's writes: the item, plus, once committed, one standard write per global
// secondary index whose key attributes the item carries (DynamoDB propagates it there).
func (m *meter) put(table string, item map[string]types.AttributeValue, units func(int) float64, committed bool) float64 {
	size := itemSize(item)
	w := units(size)
	if !committed {
		return w
	}
	for _, keys := range m.indexes[table] {
		if hasAll(item, keys) {
			w += writeUnits(size)
		}
	}
	return w
}

func hasAll(item map[string]types.AttributeValue, attrs []string) bool {
	for _, a := range attrs {
		if _, ok := item[a]; !ok {
			return false
		}
	}
	return true
}

func valuesSize(values map[string]types.AttributeValue) int {
	n := 0
	for _, v := range values {
		n += valueSize(v)
	}
	return n
}
