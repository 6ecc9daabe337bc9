package sim

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// Stream is the embedded DynamoDB's stream, which minidyn lacks: a record of each item
// a write changed, with its images before and after, in the order the writes
// committed, as DynamoDB Streams hands them to Lambda (NEW_AND_OLD_IMAGES). A write
// that changes nothing makes no record, as in DynamoDB. Records wait until Next takes
// them. It is safe for concurrent use.
type Stream struct {
	mu      sync.Mutex
	records []events.DynamoDBEventRecord
	seq     int64
	added   chan struct{} // closed and replaced when records are added
}

// NewStream returns an empty stream.
func NewStream() *Stream { return &Stream{added: make(chan struct{})} }

// Next takes up to n records, oldest first, waiting until there is one or ctx ends
// (its error).
func (s *Stream) Next(ctx context.Context, n int) ([]events.DynamoDBEventRecord, error) {
	for {
		s.mu.Lock()
		if len(s.records) > 0 {
			k := min(n, len(s.records))
			out := s.records[:k:k]
			s.records = s.records[k:]
			s.mu.Unlock()
			return out, nil
		}
		added := s.added
		s.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-added:
		}
	}
}

// add appends one record per change, numbering them in order.
func (s *Stream) add(changes []change) {
	if len(changes) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range changes {
		s.seq++
		s.records = append(s.records, c.record(s.seq))
	}
	close(s.added)
	s.added = make(chan struct{})
}

// change is one item a write changed: its key, and its images before and after (nil:
// none).
type change struct {
	key, old, now map[string]events.DynamoDBAttributeValue
}

// record is c as a stream record with sequence number seq.
func (c change) record(seq int64) events.DynamoDBEventRecord {
	name := "MODIFY"
	switch {
	case c.old == nil:
		name = "INSERT"
	case c.now == nil:
		name = "REMOVE"
	}
	return events.DynamoDBEventRecord{
		EventID: strconv.FormatInt(seq, 10), EventName: name, EventSource: "aws:dynamodb", EventVersion: "1.1", AWSRegion: "local",
		Change: events.DynamoDBStreamRecord{
			ApproximateCreationDateTime: events.SecondsEpochTime{Time: time.Now()},
			Keys:                        c.key, OldImage: c.old, NewImage: c.now,
			SequenceNumber: strconv.FormatInt(seq, 10), StreamViewType: "NEW_AND_OLD_IMAGES",
		},
	}
}

// streaming feeds stream from the writes it passes to next, one write at a time: it
// reads each item a write names before and after it, and adds what changed once the
// write succeeded. Reads pass through. A write it cannot read (an unknown table) goes
// on unrecorded: it fails in the store too.
type streaming struct {
	next   http.Handler
	stream *Stream
	mu     *sync.Mutex // one write at a time, with its reads
}

// written are the operations that write items.
var written = map[string]bool{"PutItem": true, "UpdateItem": true, "DeleteItem": true, "TransactWriteItems": true, "BatchWriteItem": true}

func (h streaming) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	op := operation(r)
	if !written[op] {
		h.next.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequest))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	items := h.items(r, op, body)
	before := h.images(r, items)
	rec := httptest.NewRecorder()
	forward(h.next, rec, r, body)
	copyResponse(w, rec)
	if rec.Code == http.StatusOK {
		h.stream.add(changes(items, before, h.images(r, items)))
	}
}

// itemRef is an item a write names: its table and key, in DynamoDB JSON.
type itemRef struct {
	table string
	key   map[string]json.RawMessage
}

// writeAction is one item a write puts, updates or deletes: its item or its key.
type writeAction struct {
	TableName string
	Item, Key map[string]json.RawMessage
}

// writeInput is what streaming reads of a write's input.
type writeInput struct {
	writeAction
	TransactItems []struct{ Put, Update, Delete *writeAction }
	RequestItems  map[string][]struct {
		PutRequest    *struct{ Item map[string]json.RawMessage }
		DeleteRequest *struct{ Key map[string]json.RawMessage }
	}
}

// actions are the items op, with input body, writes; none when body is not one.
func actions(op string, body []byte) []writeAction {
	var in writeInput
	if json.Unmarshal(body, &in) != nil {
		return nil
	}
	switch op {
	case "TransactWriteItems":
		var acts []writeAction
		for _, t := range in.TransactItems {
			for _, a := range []*writeAction{t.Put, t.Update, t.Delete} {
				if a != nil {
					acts = append(acts, *a)
				}
			}
		}
		return acts
	case "BatchWriteItem":
		var acts []writeAction
		for table, reqs := range in.RequestItems {
			for _, req := range reqs {
				if req.PutRequest != nil {
					acts = append(acts, writeAction{TableName: table, Item: req.PutRequest.Item})
				} else if req.DeleteRequest != nil {
					acts = append(acts, writeAction{TableName: table, Key: req.DeleteRequest.Key})
				}
			}
		}
		return acts
	}
	return []writeAction{in.writeAction}
}

// items are the items op, with input body, writes, by key: an action that names its
// item rather than its key (a Put) is keyed by its table's key schema.
func (h streaming) items(r *http.Request, op string, body []byte) []itemRef {
	schemas := newTableKeys(h.next, r)
	var refs []itemRef
	for _, a := range actions(op, body) {
		key := a.Key
		if key == nil {
			names, ok := schemas.of(a.TableName)
			if !ok {
				continue
			}
			key = map[string]json.RawMessage{}
			for _, n := range names {
				key[n] = a.Item[n]
			}
		}
		refs = append(refs, itemRef{table: a.TableName, key: key})
	}
	return refs
}

// images reads each item as it is now, strongly consistently: nil for none.
func (h streaming) images(r *http.Request, items []itemRef) []map[string]events.DynamoDBAttributeValue {
	out := make([]map[string]events.DynamoDBAttributeValue, len(items))
	for i, it := range items {
		var got struct {
			Item map[string]events.DynamoDBAttributeValue
		}
		if call(h.next, r, "GetItem", map[string]any{"TableName": it.table, "Key": it.key, "ConsistentRead": true}, &got) {
			out[i] = got.Item
		}
	}
	return out
}

// changes are the items whose image differs after the write from before it.
func changes(items []itemRef, before, after []map[string]events.DynamoDBAttributeValue) []change {
	var out []change
	for i, it := range items {
		if reflect.DeepEqual(before[i], after[i]) {
			continue
		}
		key := map[string]events.DynamoDBAttributeValue{}
		raw, _ := json.Marshal(it.key)
		_ = json.Unmarshal(raw, &key) // the key was read from the request as DynamoDB JSON
		out = append(out, change{key: key, old: before[i], now: after[i]})
	}
	return out
}
