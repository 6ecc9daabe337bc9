package sim

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
)

// transactions serves a TransactWriteItems of Put and ConditionCheck actions (all the
// ledger sends) itself, alone under the embedded server's lock, through minidyn's item
// API: minidyn's own copies every table the transaction touches, so its cost would grow
// with the table. It answers as DynamoDB does (docs/design.md, "Test backends"): every
// condition is evaluated against the items as they were before the transaction; if any
// fails, nothing is written and the cancellation names every action's reason in order
// (None or ConditionalCheckFailed), with the item as it stands where the action asked
// for ALL_OLD and the item exists; if all hold, every Put is written. Other requests,
// and transactions it cannot answer so (Update or Delete actions, a table or key it
// cannot read, an item named twice, an expression minidyn refuses), go to minidyn.
// Either way it keeps DynamoDB's memory of the ClientRequestTokens of transactions that
// succeeded (tokens), which minidyn has not.
type transactions struct {
	mu     *sync.RWMutex // shared with describeLock: a transaction here runs alone
	store  http.Handler  // minidyn, called under mu
	next   http.Handler  // describeLock, for everything else
	tokens *tokens       // used under mu
}

// transactAction is a Put or a ConditionCheck, its attribute values kept as sent.
type transactAction struct {
	TableName                           string
	Item                                map[string]json.RawMessage // Put
	Key                                 map[string]json.RawMessage // ConditionCheck
	ConditionExpression                 string                     `json:",omitempty"`
	ExpressionAttributeNames            map[string]string          `json:",omitempty"`
	ExpressionAttributeValues           map[string]json.RawMessage `json:",omitempty"`
	ReturnValuesOnConditionCheckFailure string                     `json:",omitempty"`
}

// transactRequest is what transactions reads of a TransactWriteItems.
type transactRequest struct {
	TransactItems []struct {
		Put, ConditionCheck *transactAction
		Update, Delete      json.RawMessage
	}
}

func (h transactions) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, mine := request(w, r, "TransactWriteItems", h.next)
	if !mine {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	req := tokenedOf(body)
	if h.tokens.answer(w, req) {
		return
	}
	sw := &statusWriter{ResponseWriter: w}
	t := &transaction{store: h.store, r: r}
	if actions, ok := servable(body); !ok || !t.run(actions, sw) {
		forward(h.store, sw, r, body) // minidyn's own way, still alone
	}
	if sw.code == http.StatusOK {
		h.tokens.remember(req)
	}
}

// servable reads the actions of a transaction transactions can answer itself.
func servable(body []byte) ([]transactAction, bool) {
	var req transactRequest
	if json.Unmarshal(body, &req) != nil || len(req.TransactItems) == 0 {
		return nil, false
	}
	actions := make([]transactAction, len(req.TransactItems))
	for i, it := range req.TransactItems {
		switch {
		case it.Update != nil || it.Delete != nil:
			return nil, false
		case it.Put != nil && it.ConditionCheck == nil && it.Put.Item != nil:
			actions[i] = *it.Put
		case it.ConditionCheck != nil && it.Put == nil && it.ConditionCheck.Key != nil && it.ConditionCheck.ConditionExpression != "":
			actions[i] = *it.ConditionCheck
		default:
			return nil, false
		}
	}
	return actions, true
}

// transaction is one TransactWriteItems served by transactions, under its lock.
type transaction struct {
	store http.Handler
	r     *http.Request
}

// run answers the transaction on w and reports true, or reports false, having changed
// nothing, when it must go to minidyn instead.
func (t *transaction) run(actions []transactAction, w http.ResponseWriter) bool {
	keys, ok := t.keys(actions)
	if !ok {
		return false
	}
	before := make([]map[string]json.RawMessage, len(actions))
	for i, a := range actions {
		if before[i], ok = t.get(a.TableName, keys[i]); !ok {
			return false
		}
	}
	reasons, failed := make([]cancellationReason, len(actions)), false
	for i, a := range actions {
		held, ok := t.holds(a, keys[i], before[i])
		if !ok {
			return false
		}
		reasons[i] = cancellationReason{Code: "None"}
		if !held {
			failed = true
			reasons[i] = cancellationReason{Code: "ConditionalCheckFailed", Message: "The conditional request failed"}
			if a.ReturnValuesOnConditionCheckFailure == "ALL_OLD" {
				reasons[i].Item = before[i]
			}
		}
	}
	if failed {
		writeCancelled(w, reasons)
		return true
	}
	return t.write(actions, keys, before, w)
}

// write puts every Put's item. Should minidyn refuse one (an item it cannot hold), the
// items written before it are put back as they were, and its refusal is the answer.
func (t *transaction) write(actions []transactAction, keys []map[string]json.RawMessage, before []map[string]json.RawMessage, w http.ResponseWriter) bool {
	for i, a := range actions {
		if a.Item == nil {
			continue
		}
		rec := exchange(t.store, t.r, "PutItem", map[string]any{"TableName": a.TableName, "Item": a.Item})
		if rec.Code == http.StatusOK {
			continue
		}
		for j := i - 1; j >= 0; j-- {
			if actions[j].Item != nil {
				t.restore(actions[j].TableName, keys[j], before[j])
			}
		}
		copyResponse(w, rec)
		return true
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	_, _ = io.WriteString(w, "{}")
	return true
}

// restore puts an item back as it was before the transaction: the old item, or none.
func (t *transaction) restore(table string, key, item map[string]json.RawMessage) {
	if item == nil {
		exchange(t.store, t.r, "DeleteItem", map[string]any{"TableName": table, "Key": key})
		return
	}
	exchange(t.store, t.r, "PutItem", map[string]any{"TableName": table, "Item": item})
}

// keys is each action's primary key, read from the tables' key schemas; ok is false
// when a schema cannot be read, an action lacks a key attribute, or names an item
// another action names (DynamoDB refuses that: minidyn's answer says so).
func (t *transaction) keys(actions []transactAction) (keys []map[string]json.RawMessage, ok bool) {
	schemas := newTableKeys(t.store, t.r)
	var seen []string
	for _, a := range actions {
		names, ok := schemas.of(a.TableName)
		if !ok {
			return nil, false
		}
		from := a.Key
		if a.Item != nil {
			from = a.Item
		}
		key, id := map[string]json.RawMessage{}, a.TableName
		for _, name := range names {
			v, has := from[name]
			if !has {
				return nil, false
			}
			var compact bytes.Buffer
			if json.Compact(&compact, v) != nil {
				return nil, false
			}
			key[name], id = v, id+"\x00"+compact.String()
		}
		if slices.Contains(seen, id) {
			return nil, false
		}
		seen, keys = append(seen, id), append(keys, key)
	}
	return keys, true
}

// get is the item under key, nil when there is none.
func (t *transaction) get(table string, key map[string]json.RawMessage) (map[string]json.RawMessage, bool) {
	var out struct{ Item map[string]json.RawMessage }
	if !call(t.store, t.r, "GetItem", map[string]any{"TableName": table, "Key": key, "ConsistentRead": true}, &out) {
		return nil, false
	}
	if len(out.Item) == 0 {
		return nil, true
	}
	return out.Item, true
}

// holds evaluates a's condition against item, the one under key before the
// transaction, by minidyn's own evaluation and without changing it: a conditional put
// of the item as it is, or where there is none a conditional delete of nothing. ok is
// false when minidyn refuses the expression itself.
func (t *transaction) holds(a transactAction, key, item map[string]json.RawMessage) (held, ok bool) {
	if a.ConditionExpression == "" {
		return true, true
	}
	in := map[string]any{"TableName": a.TableName, "ConditionExpression": a.ConditionExpression}
	if len(a.ExpressionAttributeNames) > 0 {
		in["ExpressionAttributeNames"] = a.ExpressionAttributeNames
	}
	if len(a.ExpressionAttributeValues) > 0 {
		in["ExpressionAttributeValues"] = a.ExpressionAttributeValues
	}
	op := "DeleteItem"
	if in["Key"] = key; item != nil {
		op, in["Item"] = "PutItem", item
		delete(in, "Key")
	}
	rec := exchange(t.store, t.r, op, in)
	switch {
	case rec.Code == http.StatusOK:
		return true, true
	case strings.Contains(rec.Body.String(), "ConditionalCheckFailed"):
		return false, true
	}
	return false, false
}

// cancellationReason is one action's part of a TransactionCanceledException.
type cancellationReason struct {
	Code    string
	Message string                     `json:",omitempty"`
	Item    map[string]json.RawMessage `json:",omitempty"`
}

// writeCancelled answers a TransactionCanceledException with reasons, as DynamoDB words it.
func writeCancelled(w http.ResponseWriter, reasons []cancellationReason) {
	codes := make([]string, len(reasons))
	for i, r := range reasons {
		codes[i] = r.Code
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"__type":              "com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
		"message":             "Transaction cancelled, please refer cancellation reasons for specific reasons [" + strings.Join(codes, ", ") + "]",
		"CancellationReasons": reasons,
	})
}
