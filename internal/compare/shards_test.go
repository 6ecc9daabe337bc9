package compare

import (
	"errors"
	"fmt"
	"net/url"
	"testing"
)

func TestShardRouterOwner(t *testing.T) {
	r := shardRouter{shards: make([]*url.URL, benchShards)}
	get := func(pk string) string {
		return fmt.Sprintf(`{"TableName":"ledger","Key":{"pk":{"S":%q},"sk":{"S":"CUENTA"}}}`, pk)
	}
	a, err := r.owner("GetItem", []byte(get("CUENTA#A")))
	if err != nil {
		t.Fatal(err)
	}
	txn := `{"TransactItems":[{"Put":{"TableName":"ledger","Item":{"pk":{"S":"CUENTA#A"},"sk":{"S":"MOV#1"}}}},` +
		`{"ConditionCheck":{"TableName":"ledger","Key":{"pk":{"S":"CUENTA#A"},"sk":{"S":"CUENTA"}}}}]}`
	if b, err := r.owner("TransactWriteItems", []byte(txn)); err != nil || b != a {
		t.Errorf("a transaction on A's items went to shard %d (%v); A's reads go to %d", b, err, a)
	}
	spread := map[int]bool{}
	var other string
	for i := range 100 {
		pk := fmt.Sprintf("CUENTA#C%d", i)
		s, _ := r.owner("GetItem", []byte(get(pk)))
		spread[s] = true
		if s != a && other == "" {
			other = pk
		}
	}
	if len(spread) < benchShards/2 {
		t.Errorf("100 accounts landed on %d of %d shards", len(spread), benchShards)
	}
	cross := `{"TransactItems":[{"Put":{"Item":{"pk":{"S":"CUENTA#A"}}}},{"Put":{"Item":{"pk":{"S":"` + other + `"}}}}]}`
	if _, err := r.owner("TransactWriteItems", []byte(cross)); !errors.Is(err, errUnrouted) {
		t.Errorf("a transaction across shards: %v, want errUnrouted", err)
	}
	for _, op := range []string{"Query", "Scan", "CreateTable", "BatchWriteItem"} {
		if _, err := r.owner(op, []byte(`{}`)); !errors.Is(err, errUnrouted) {
			t.Errorf("%s: %v, want errUnrouted", op, err)
		}
	}
}
