package compare

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/ledger-dev/ledger/internal/awsconf"
	"github.com/ledger-dev/ledger/internal/compare/idempotencia"
	"github.com/ledger-dev/ledger/internal/migrate"
	"github.com/ledger-dev/ledger/internal/sim"
	"github.com/ledger-dev/ledger/migrations"
)

// backend is one run's DynamoDB: a fresh embedded store, or tables of the run's own on an
// endpoint. admin is unmetered; strategies get their clients from client.
type backend struct {
	endpoint  string
	cfg       aws.Config
	admin     *dynamodb.Client
	transport http.RoundTripper
	all       []migrations.Migration        // the ledger's, then the baseline's
	tables    map[string]string             // logical → physical
	indexes   map[string][]migrations.Index // physical → its global secondary indexes
	loopback  bool                          // an emulator on this machine, not DynamoDB
	close     func()
}

// sdkBackoff caps the SDK's retry back-off (seconds of real time by default): runs stay quick.
const sdkBackoff = 20 * time.Millisecond

// openStore opens and migrates a fresh embedded store, or tables of its own on endpoint.
func openStore(ctx context.Context, endpoint string) (*backend, error) {
	suffix, stop := "", func() {}
	if endpoint == "" {
		srv, err := sim.StartDynamoDB()
		if err != nil {
			return nil, err
		}
		endpoint, stop = srv.URL, func() { _ = srv.Close() }
	} else {
		suffix = "-cmp-" + rand.Text()
	}
	s, err := newStore(ctx, endpoint, suffix, network())
	if err != nil {
		stop()
		return nil, err
	}
	s.close = stop
	if suffix != "" {
		s.close = func() { migrate.Drop(s.admin, s.tables) }
	}
	if _, err := migrate.Run(ctx, s.admin, migrate.Options{Tables: s.tables, Poll: 50 * time.Millisecond, Extra: s.all[len(s.all)-1:]}); err != nil {
		s.close()
		return nil, fmt.Errorf("compare: migrate the run's tables: %w", err)
	}
	return s, nil
}

// newStore describes the run's tables (their names plus suffix); it creates nothing.
func newStore(ctx context.Context, endpoint, suffix string, transport http.RoundTripper) (*backend, error) {
	cfg, err := awsconf.Load(ctx, endpoint)
	if err != nil {
		return nil, err
	}
	s := &backend{endpoint: endpoint, cfg: cfg, transport: transport, close: func() {}}
	s.loopback, _ = awsconf.IsLoopback(endpoint) // Load has validated the endpoint
	admin := cfg.Copy()
	admin.HTTPClient = &http.Client{Transport: transport}
	s.admin = awsconf.DynamoDB(admin, endpoint)
	if s.all, err = migrations.All(); err != nil {
		return nil, err
	}
	baseline, err := idempotencia.Migration()
	if err != nil {
		return nil, err
	}
	s.all = append(s.all, baseline) // last: migrate.Options.Extra
	s.tables, s.indexes = map[string]string{}, map[string][]migrations.Index{}
	for _, m := range s.all {
		name := m.Table + suffix
		s.tables[m.Table] = name
		s.indexes[name] = m.Indexes // each migration states the whole table: the last one's
	}
	return s, nil
}

// client is a DynamoDB client whose calls go through rt and ask for their capacity.
func (s *backend) client(rt http.RoundTripper) *dynamodb.Client {
	cfg := s.cfg.Copy()
	cfg.HTTPClient = &http.Client{Transport: rt}
	cfg.APIOptions = append(cfg.APIOptions, requestCapacity)
	cfg.Retryer = func() aws.Retryer {
		return retry.NewStandard(func(o *retry.StandardOptions) { o.Backoff = retry.NewExponentialJitterBackoff(sdkBackoff) })
	}
	return awsconf.DynamoDB(cfg, s.endpoint)
}

// network has enough idle connections for ten consumers of eight accounts each.
func network() http.RoundTripper {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 256
	return t
}

// benchShards is how many embedded servers the benchmark spreads its items over, by
// partition key as DynamoDB spreads partitions. One embedded store serves a request at a
// time and copies the table in every transaction: it would measure itself, not the
// designs' round trips.
const benchShards = 16

// shardRouter sends each item operation to the shard of its one partition key.
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

// openShardedStore is benchShards migrated embedded stores behind a shardRouter.
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
