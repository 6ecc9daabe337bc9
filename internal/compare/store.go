package compare

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
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
