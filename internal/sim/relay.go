package sim

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
)

// request is the body of r when it calls DynamoDB's op, read whole (at most
// maxRequest bytes); any other request it hands to next, and one it cannot read it
// answers 400. mine is false when it answered.
func request(w http.ResponseWriter, r *http.Request, op string, next http.Handler) (body []byte, mine bool) {
	if !strings.HasSuffix(r.Header.Get("X-Amz-Target"), "."+op) {
		next.ServeHTTP(w, r)
		return nil, false
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequest))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return nil, false
	}
	return body, true
}

// forward sends r to next with body.
func forward(next http.Handler, w http.ResponseWriter, r *http.Request, body []byte) {
	r2 := r.Clone(r.Context())
	r2.Body, r2.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	next.ServeHTTP(w, r2)
}

// exchange asks next for op with input in, as r's client, and returns its answer; an
// input that cannot be encoded is answered 500 without asking.
func exchange(next http.Handler, r *http.Request, op string, in any) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	body, err := json.Marshal(in)
	if err != nil {
		rec.Code = http.StatusInternalServerError
		return rec
	}
	req := r.Clone(r.Context())
	req.Header.Set("X-Amz-Target", "DynamoDB_20120810."+op)
	forward(next, rec, req, body)
	return rec
}

// call asks next for op with input in, as r's client, and decodes a success into out.
func call(next http.Handler, r *http.Request, op string, in, out any) bool {
	rec := exchange(next, r, op, in)
	return rec.Code == http.StatusOK && json.Unmarshal(rec.Body.Bytes(), out) == nil
}

// copyResponse writes rec's answer to w.
func copyResponse(w http.ResponseWriter, rec *httptest.ResponseRecorder) {
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

// tableKeys asks next, as r's client, for the names of tables' key attributes, once
// per table: a write naming many items of one table costs one DescribeTable.
type tableKeys struct {
	next  http.Handler
	r     *http.Request
	names map[string][]string // by table; nil where they cannot be read
}

// newTableKeys asks next as r's client.
func newTableKeys(next http.Handler, r *http.Request) *tableKeys {
	return &tableKeys{next: next, r: r, names: map[string][]string{}}
}

// of is the names of table's key attributes; ok is false when they cannot be read.
func (k *tableKeys) of(table string) (names []string, ok bool) {
	names, asked := k.names[table]
	if !asked {
		var out struct {
			Table struct {
				KeySchema []struct{ AttributeName string }
			}
		}
		if call(k.next, k.r, "DescribeTable", map[string]string{"TableName": table}, &out) {
			for _, key := range out.Table.KeySchema {
				names = append(names, key.AttributeName)
			}
		}
		k.names[table] = names
	}
	return names, len(names) > 0
}
