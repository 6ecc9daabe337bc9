package sim

import (
	"bytes"
	"cmp"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"

	"github.com/shopspring/decimal"
)

// numericOrder pages a Query on a number sort key in numeric order: minidyn sorts keys
// as text, so 10 would come before 9 in an account's statement (index por_seq). It asks
// minidyn for every matching item, sorts them and pages them itself. Other operations
// pass through, and so does a Query it cannot re-page faithfully: one with a
// FilterExpression (Limit counts before the filter), a ProjectionExpression (it may
// drop the keys) or a Select.
type numericOrder struct {
	next http.Handler
}

// maxRequest bounds a request body read here; DynamoDB's own limit is far below it.
const maxRequest = 16 << 20

// query is what numericOrder reads of a Query.
type query struct {
	TableName            string
	IndexName            string
	Limit                int
	ExclusiveStartKey    map[string]attr
	ScanIndexForward     *bool
	FilterExpression     string
	ProjectionExpression string
	Select               string
}

// attr is an attribute value in DynamoDB JSON, such as {"N": "12"}.
type attr map[string]json.RawMessage

func (h numericOrder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, mine := request(w, r, "Query", h.next)
	if !mine {
		return
	}
	page, ok := h.page(r, body)
	if !ok {
		h.forward(w, r, body)
		return
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	_ = json.NewEncoder(w).Encode(page)
}

// page answers the Query in body in numeric order, or reports that it cannot.
func (h numericOrder) page(r *http.Request, body []byte) (map[string]any, bool) {
	var q query
	if json.Unmarshal(body, &q) != nil || q.FilterExpression != "" || q.ProjectionExpression != "" || q.Select != "" {
		return nil, false
	}
	keys, ok := h.describe(r, q.TableName, q.IndexName)
	if !ok {
		return nil, false
	}
	var unpaged map[string]json.RawMessage
	_ = json.Unmarshal(body, &unpaged) // it parsed as a query just above
	delete(unpaged, "Limit")
	delete(unpaged, "ExclusiveStartKey")
	var out struct{ Items []map[string]attr }
	if !h.call(r, "Query", unpaged, &out) {
		return nil, false
	}
	// minidyn's DescribeTable leaves out attribute types; the items carry them.
	for _, it := range out.Items {
		if _, ok := it[keys.rangeKey]["N"]; !ok {
			return nil, false
		}
	}
	order := keys.compare
	if q.ScanIndexForward != nil && !*q.ScanIndexForward {
		order = func(a, b map[string]attr) int { return keys.compare(b, a) }
	}
	slices.SortFunc(out.Items, order)
	page := out.Items
	if q.ExclusiveStartKey != nil { // the page starts after it
		i, found := slices.BinarySearchFunc(page, q.ExclusiveStartKey, order)
		if found {
			i++
		}
		page = page[i:]
	}
	resp := map[string]any{}
	if q.Limit > 0 && len(page) > q.Limit {
		page = page[:q.Limit]
		resp["LastEvaluatedKey"] = keys.of(page[len(page)-1])
	}
	resp["Items"], resp["Count"], resp["ScannedCount"] = page, len(page), len(page)
	return resp, true
}

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

// forward sends r to minidyn with body.
func (h numericOrder) forward(w http.ResponseWriter, r *http.Request, body []byte) {
	forward(h.next, w, r, body)
}

// call asks minidyn for op with input in, as r's client, and decodes a success into out.
func (h numericOrder) call(r *http.Request, op string, in, out any) bool {
	return call(h.next, r, op, in, out)
}

// forward sends r to next with body.
func forward(next http.Handler, w http.ResponseWriter, r *http.Request, body []byte) {
	r2 := r.Clone(r.Context())
	r2.Body, r2.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	next.ServeHTTP(w, r2)
}

// call asks next for op with input in, as r's client, and decodes a success into out.
func call(next http.Handler, r *http.Request, op string, in, out any) bool {
	body, err := json.Marshal(in)
	if err != nil {
		return false
	}
	req := r.Clone(r.Context())
	req.Header.Set("X-Amz-Target", "DynamoDB_20120810."+op)
	rec := httptest.NewRecorder()
	forward(next, rec, req, body)
	return rec.Code == http.StatusOK && json.Unmarshal(rec.Body.Bytes(), out) == nil
}

// keySchema is what ordering needs of a table or index.
type keySchema struct {
	rangeKey string
	names    []string // table and index key attributes, the sort key's tie-breakers
}

// describe reads the key schema of table, or of its index when index is not empty; ok
// is false when it has no sort key.
func (h numericOrder) describe(r *http.Request, table, index string) (ks keySchema, ok bool) {
	type key struct{ AttributeName, KeyType string }
	var out struct {
		Table struct {
			KeySchema []key
			GlobalSecondaryIndexes,
			LocalSecondaryIndexes []struct {
				IndexName string
				KeySchema []key
			}
		}
	}
	if !h.call(r, "DescribeTable", map[string]string{"TableName": table}, &out) {
		return ks, false
	}
	schema := out.Table.KeySchema
	for _, ix := range slices.Concat(out.Table.GlobalSecondaryIndexes, out.Table.LocalSecondaryIndexes) {
		if ix.IndexName == index && index != "" {
			schema = append(ix.KeySchema, schema...)
		}
	}
	for _, k := range schema {
		if k.KeyType == "RANGE" && ks.rangeKey == "" {
			ks.rangeKey = k.AttributeName
		}
		if !slices.Contains(ks.names, k.AttributeName) {
			ks.names = append(ks.names, k.AttributeName)
		}
	}
	return ks, ks.rangeKey != ""
}

// compare orders items by the sort key's value, then by their other key attributes, so
// that items with equal sort keys keep one order from page to page.
func (ks keySchema) compare(a, b map[string]attr) int {
	if c := decimalOf(a[ks.rangeKey]).Cmp(decimalOf(b[ks.rangeKey])); c != 0 {
		return c
	}
	for _, name := range ks.names {
		if c := cmp.Compare(string(a[name]["S"])+string(a[name]["N"]), string(b[name]["S"])+string(b[name]["N"])); c != 0 {
			return c
		}
	}
	return 0
}

// of is an item's key: the LastEvaluatedKey that continues after it.
func (ks keySchema) of(item map[string]attr) map[string]attr {
	key := map[string]attr{}
	for _, name := range ks.names {
		if v, ok := item[name]; ok {
			key[name] = v
		}
	}
	return key
}

// decimalOf is the value of a number attribute; a malformed one counts as zero.
func decimalOf(v attr) decimal.Decimal {
	var s string
	_ = json.Unmarshal(v["N"], &s)
	d, err := decimal.NewFromString(s)
	if err != nil {
		return decimal.Zero
	}
	return d
}
