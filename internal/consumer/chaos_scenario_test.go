// The chaos test runs a workload through the real consumer.Handler the way an SQS
// standard queue can deliver it at its worst — duplicates, reordering, concurrent
// consumers, redelivery after success, invocations that time out or die mid-batch —
// over a DynamoDB client whose calls fail on purpose (sim.Transport), and then
// checks what the table holds against the workload (Verify). The reliability property
// tests and the soak share it; it is test machinery, never wired into a binary.

package consumer_test

import (
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/ledger-dev/ledger/internal/awsconf"
	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/sim"
)

// Scenario is one adversarial run. Every random choice of the run (the workload, its
// deliveries, the faults, each consumer's crashes and redeliveries) derives from Seed,
// so a failing scenario replays with the same choices; only goroutine interleaving
// differs between replays.
type Scenario struct {
	// Prefix starts every account id of the run, so that runs can share a table.
	Prefix string
	Seed   uint64
	// Accounts and Movements size the sim.
	Accounts  int
	Movements int
	// Transfers, Repartos, Reversals, Refunds and Holds are sim.Spec's: the shares of
	// the movements drawn as transfers, repartos, whole reversals (of abonos, cargos,
	// transfers and repartos), refunds in parts of abonos and cargos, and holds
	// (captured, released or left to lapse).
	Transfers float64
	Repartos  float64
	Reversals float64
	Refunds   float64
	Holds     float64
	// Refusals sends the workload's movements refused by design, late.
	Refusals bool
	// Duplicates, Malformed and Conflicting are sim.Mix: extra deliveries of a
	// movement, invalid bodies, and late replays of an id with another amount.
	Duplicates  float64
	Malformed   float64
	Conflicting float64
	// Policy is the insufficient-funds policy of every consumer.
	Policy cuenta.FundsPolicy
	// Consumers is the number of concurrent consumers [1]; each is a process with its
	// own handler and account cache, replaced by a fresh one when it crashes.
	Consumers int
	// BatchSize is the number of messages per receive, 1 to 10 [10].
	BatchSize int
	// MaxReceive is the queue's maxReceiveCount [100].
	MaxReceive int
	// Rates are how often things go wrong.
	Rates Rates
}

// Rates are percentages. The fault rates apply to each DynamoDB call (the SDK retries
// faulted calls itself, as in production; TransactionConflict only hits
// TransactWriteItems); the others to each batch, except Redeliver, which applies to
// each message the handler finished with.
type Rates struct {
	InternalError       int
	Throttling          int
	TransactionConflict int
	LostResponse        int
	// Redeliver: a finished message comes back anyway, same message id, as when the
	// visibility timeout expires before the delete.
	Redeliver int
	// CrashAfter: the invocation dies after the handler returned; its response is
	// lost and every message of the batch comes back, applied or not.
	CrashAfter int
	// CrashMid: the invocation dies mid-batch, right after one of its DynamoDB calls
	// (drawn among the first eight) reached the server; nothing after it is sent, and
	// every message comes back.
	CrashMid int
	// Deadline: the batch gets a deadline of 1 to 30 ms, which expires mid-way; when
	// the handler answers after it, the invocation timed out and every message comes
	// back.
	Deadline int
}

// Target is where a run writes: the SDK configuration of a DynamoDB (as app.Load
// returns it), its endpoint, and a migrated ledger table.
type Target struct {
	Config   aws.Config
	Endpoint string
	Table    string
}

// client is a DynamoDB client for the target whose calls go through rt. The SDK's
// standard retryer is kept (attempts, retry quota) with its back-off capped at 5 ms,
// so that hundreds of faults cost milliseconds, not the production seconds.
func (t Target) client(rt http.RoundTripper) *dynamodb.Client {
	cfg := t.Config.Copy()
	cfg.HTTPClient = &http.Client{Transport: rt}
	cfg.Retryer = func() aws.Retryer {
		return retry.NewStandard(func(o *retry.StandardOptions) { o.MaxBackoff = 5 * time.Millisecond })
	}
	return awsconf.DynamoDB(cfg, t.Endpoint)
}

// Stats counts what a run (or, summed with Add, many runs) did and injected.
type Stats struct {
	Runs       int
	Movements  int
	Deliveries int // messages sent, duplicates, malformed and late replays included
	Handled    int // records handed to the handler, every redelivery counted
	Batches    int
	Calls      int               // DynamoDB calls, injected faults included
	Faults     map[sim.Fault]int // injected into DynamoDB calls, by kind

	// Kinds counts the workload's kinds (MostPartes: the widest reparto of any run);
	// Refused the movements refused by design that were sent.
	Kinds   sim.Kinds
	Refused int

	// CrashesAfter, CrashesMid and Timeouts count invocations that died (their whole
	// batch came back); Deadlines counts batches given a deadline that expires mid-way.
	CrashesAfter int
	CrashesMid   int
	Deadlines    int
	Timeouts     int
	Redelivered  int // finished messages delivered again
	Parked       int // messages parked in the DLQ by the handler
	Dead         int // messages moved to the DLQ by maxReceiveCount
	Elapsed      time.Duration
}

// Add adds o's counts to s.
func (s *Stats) Add(o Stats) {
	if s.Faults == nil {
		s.Faults = map[sim.Fault]int{}
	}
	for f, n := range o.Faults {
		s.Faults[f] += n
	}
	s.Runs += o.Runs
	s.Movements += o.Movements
	s.Kinds = addKinds(s.Kinds, o.Kinds)
	s.Refused += o.Refused
	s.Deliveries += o.Deliveries
	s.Handled += o.Handled
	s.Batches += o.Batches
	s.Calls += o.Calls
	s.CrashesAfter += o.CrashesAfter
	s.CrashesMid += o.CrashesMid
	s.Deadlines += o.Deadlines
	s.Timeouts += o.Timeouts
	s.Redelivered += o.Redelivered
	s.Parked += o.Parked
	s.Dead += o.Dead
	s.Elapsed += o.Elapsed
}

// addKinds is the kinds of two runs together; the widest reparto is the wider one's.
func addKinds(k, o sim.Kinds) sim.Kinds {
	most := max(k.MostPartes, o.MostPartes)
	for _, f := range []struct{ to, from *int }{
		{&k.Abonos, &o.Abonos}, {&k.Cargos, &o.Cargos}, {&k.Transfers, &o.Transfers}, {&k.Reversals, &o.Reversals},
		{&k.Repartos, &o.Repartos}, {&k.Partes, &o.Partes}, {&k.Refunds, &o.Refunds}, {&k.RefundedInFull, &o.RefundedInFull},
		{&k.ReversedTransfers, &o.ReversedTransfers}, {&k.ReversedRepartos, &o.ReversedRepartos}, {&k.ReversedPartes, &o.ReversedPartes},
		{&k.Holds, &o.Holds}, {&k.Captured, &o.Captured}, {&k.PartlyCaptured, &o.PartlyCaptured}, {&k.Released, &o.Released}, {&k.Lapsed, &o.Lapsed},
	} {
		*f.to += *f.from
	}
	k.MostPartes = most
	return k
}
