package compare

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// benchShards is how many embedded servers the benchmark spreads its items over, by
// partition key as DynamoDB spreads partitions. One embedded store serves a request at a
// time and copies the table in every transaction: it would measure itself, not the
// designs' round trips.
const benchShards = 16

// shardRouter sends each item operation to the shard that owns its partition key; a
// request naming none or several is refused (the benchmark makes none).
type shardRouter struct {
	base   http.RoundTripper
	shards []*url.URL
}

var errUnrouted = errors.New("compare: the benchmark's sharded store routes single-partition item operations only")

// RoundTrip implements http.RoundTripper.
func (r shardRouter) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return nil, err
	}
	target := req.Header.Get("X-Amz-Target") // "DynamoDB_20120810.GetItem"
	shard, err := r.owner(target[strings.LastIndexByte(target, '.')+1:], body)
	if err != nil {
		return nil, err
	}
	out := req.Clone(req.Context())
	out.URL.Scheme, out.URL.Host, out.Host = r.shards[shard].Scheme, r.shards[shard].Host, r.shards[shard].Host
	out.Body = io.NopCloser(bytes.NewReader(body))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return r.base.RoundTrip(out)
}

// owner is the shard of the one partition key an op's body names.
func (r shardRouter) owner(op string, body []byte) (int, error) {
	type keyed struct{ Key, Item map[string]json.RawMessage }
	var in struct {
		keyed
		TransactItems []map[string]keyed
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return 0, err
	}
	pks := []json.RawMessage{in.Key["pk"], in.Item["pk"]}
	for _, action := range in.TransactItems {
		for _, a := range action {
			pks = append(pks, a.Key["pk"], a.Item["pk"])
		}
	}
	owner := -1
	for _, pk := range pks {
		if pk == nil {
			continue
		}
		h := fnv.New32a()
		_, _ = h.Write(pk)
		shard := int(h.Sum32() % uint32(len(r.shards)))
		if owner >= 0 && shard != owner {
			return 0, fmt.Errorf("%w: a transaction spans partitions", errUnrouted)
		}
		owner = shard
	}
	if owner < 0 {
		return 0, fmt.Errorf("%w: %s names no partition key", errUnrouted, op)
	}
	return owner, nil
}

// openShardedStore is the benchmark's embedded store: benchShards migrated embedded
// stores behind a shardRouter.
func openShardedStore(ctx context.Context) (*backend, error) {
	var shards []*backend
	closeAll := func() {
		for _, shard := range shards {
			shard.close()
		}
	}
	router := shardRouter{base: network()}
	for range benchShards {
		shard, err := openStore(ctx, "")
		if err != nil {
			closeAll()
			return nil, err
		}
		shards = append(shards, shard)
		u, _ := url.Parse(shard.endpoint) // sim.StartDynamoDB made it
		router.shards = append(router.shards, u)
	}
	s, err := newStore(ctx, shards[0].endpoint, "", router)
	if err != nil {
		closeAll()
		return nil, err
	}
	s.close = closeAll
	return s, nil
}
