package sim

import (
	"cmp"
	"encoding/json"
	"net/http"
	"slices"

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
		forward(h.next, w, r, body)
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
	if !call(h.next, r, "Query", unpaged, &out) {
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
	if !call(h.next, r, "DescribeTable", map[string]string{"TableName": table}, &out) {
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
