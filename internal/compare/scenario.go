package compare

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/compare/idempotencia"
	"github.com/ledger-dev/ledger/internal/consumer"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/sim"
)

// The simulated deployment every scenario runs in.
const (
	invocationTimeout = consumer.FunctionTimeout     // the Lambda timeout, and so the baseline's in-progress window
	visibilityTimeout = consumer.SimulatedVisibility // AWS's recommendation
	batchStep         = time.Second                  // batches of 10 a second apart
	maxReceive        = sim.DefaultMaxReceive        // the redrive policy
	lateBy            = 2 * time.Hour                // past the baseline's record expiry (idempotencia.DefaultExpiry)
)

// scenario is one situation both strategies are put through; shares are drawn from rngFor.
type scenario struct {
	name, what string
	hot        bool                                 // every movement on one account
	workload   func(sim.Spec) (sim.Workload, error) // [sim.Generate]
	// consumers and concurrency default to 1: a run's calls in a fixed order, so that a
	// seed reproduces it.
	consumers, concurrency int
	schedule               func(w sim.Workload, rng *rand.Rand) []sim.Message
	again                  float64 // share of messages SQS delivers once more after their delete
	// crash is where the invocation dies for a crashShare of the movements, the first
	// time each is processed.
	crash            idempotencia.Point
	crashShare       float64
	lostResponses    float64 // share of write calls whose answer is lost after they committed
	late             float64 // share of movements delivered again lateBy after the run
	keyFromMessageID bool    // the baseline keys its records on the SQS message id
	// simulated runs every call and back-off on the scheduler's simulated time (the
	// benchmark) rather than at the round trip on the wall clock.
	simulated bool
}

var scenarios = []scenario{
	{name: "duplicates", schedule: withCopies(0.5, 1, 30), again: 0.1,
		what: "every other movement also arrives as an SNS envelope under a new message id, and 1 in 10 messages is delivered again after it was deleted: everyday at-least-once delivery"},
	{name: "concurrent-duplicates", consumers: 2, concurrency: 8, schedule: paired,
		what: "every movement arrives twice at the same moment, to two consumers: exactly one may win; the baseline's loser finds the key in progress and comes back a visibility timeout later"},
	{name: "crash-after-effect", schedule: once, crash: idempotencia.AfterEffect, crashShare: 0.2,
		what: "for 1 in 5 movements the invocation dies after the balance moved and before the record is marked done (transaction: right after its one transaction); the batch comes back after the visibility timeout, past the in-progress expiry"},
	{name: "crash-after-reserve", schedule: withCopies(1, 10, 20), crash: idempotencia.AfterReserve, crashShare: 0.2,
		what: "for 1 in 5 movements the invocation dies after the reservation and before the effect (transaction: before its transaction), and a copy of every movement arrives a batch or two later, inside the in-progress window"},
	{name: "lost-response", schedule: once, lostResponses: 0.1,
		what: "1 in 10 write calls commits but its answer is lost; the SDK retries it, as in production"},
	{name: "late-duplicate", schedule: once, late: 0.3,
		what: "after everything is applied, 3 in 10 movements are delivered again 2 h later (a producer replaying after an outage), past the baseline's 1 h record expiry; TTL has deleted half of those records and not yet the other half"},
	{name: "hot-account", hot: true, schedule: once,
		what: "one account takes every movement, in batches of 10: the cost of a busy account"},
	{name: "messageid-key", schedule: withCopies(1, 3, 30), keyFromMessageID: true,
		what: "every movement arrives twice, the copy under a new message id (SNS fan-out, a producer retry); the baseline keys on the SQS message id, the transaction strategy always on (cuenta, id)"},
	{name: TransferScenario, workload: transfers, schedule: once, crash: idempotencia.BetweenLegs, crashShare: 0.2,
		what: "transfers between funded accounts; for 1 in 5 transfers the invocation dies after the baseline's debit ADD and before its credit ADD (transaction: before its one transaction for every other such transfer, right after it for the rest); the batch comes back after the visibility timeout, past the in-progress expiry. A transfer counts as lost when one of its legs never landed, double applied when one landed twice; money created is the sum of all balances less the credits and debits from outside (transfers move money, never make it), negative when money was destroyed"},
}

func scenarioNamed(name string) (scenario, bool) {
	i := slices.IndexFunc(scenarios, func(s scenario) bool { return s.name == name })
	if i < 0 {
		return scenario{}, false
	}
	return scenarios[i], true
}

// rngFor is the scenario's random source, the same for both strategies.
func rngFor(seed uint64, name string, stream uint64) *rand.Rand {
	h := fnv.New64a()
	_, _ = h.Write([]byte(name))
	return rand.New(rand.NewPCG(seed^h.Sum64(), stream))
}

// once delivers every movement once, in generation order.
func once(w sim.Workload, _ *rand.Rand) []sim.Message {
	out := make([]sim.Message, len(w.Movements))
	for i, m := range w.Movements {
		out[i] = direct(i, m)
	}
	return out
}

// withCopies delivers every movement, and a share again via SNS minGap–maxGap messages later.
func withCopies(share float64, minGap, maxGap int) func(sim.Workload, *rand.Rand) []sim.Message {
	return func(w sim.Workload, rng *rand.Rand) []sim.Message {
		after := make([][]sim.Message, len(w.Movements)+maxGap) // copies sent right after the i-th message
		for i, m := range w.Movements {
			if rng.Float64() < share {
				gap := minGap + rng.IntN(maxGap-minGap+1)
				after[i+gap] = append(after[i+gap], viaSNS("sns", i, m))
			}
		}
		var out []sim.Message
		for i, copies := range after {
			if i < len(w.Movements) {
				out = append(out, direct(i, w.Movements[i]))
			}
			out = append(out, copies...)
		}
		return out
	}
}

// paired follows each batch with its copy via SNS, for two consumers at the same moment.
func paired(w sim.Workload, _ *rand.Rand) []sim.Message {
	var out []sim.Message
	for start := 0; start < len(w.Movements); start += consumer.MaxBatch {
		batch := w.Movements[start:min(start+consumer.MaxBatch, len(w.Movements))]
		for i, m := range batch {
			out = append(out, direct(start+i, m))
		}
		for i, m := range batch {
			out = append(out, viaSNS("sns", start+i, m))
		}
	}
	return out
}

// direct is the i-th movement as its producer sends it.
func direct(i int, m movimiento.Movimiento) sim.Message {
	return sim.Message{ID: fmt.Sprintf("msg-%06d", i), Body: sim.Body(m)}
}

// viaSNS is the i-th movement as SNS delivers it without raw message delivery.
func viaSNS(prefix string, i int, m movimiento.Movimiento) sim.Message {
	return sim.Message{ID: fmt.Sprintf("%s-%06d", prefix, i), Body: sim.SNSEnvelope(fmt.Sprintf("sns-%06d", i), sim.Body(m))}
}

// maxTransferCents bounds a generated transfer: 1.00 … 99.99.
const maxTransferCents = 9_999

// TransferScenario is the scenario whose workload is transfers; it needs at least
// MinTransferMovements movements: two accounts funded and one transfer.
const (
	TransferScenario     = "crash-between-legs"
	MinTransferMovements = 3
)

// transfers is the workload of crash-between-legs: 2 to spec.Movements/2 accounts, each
// funded by an abono, then traspasos between them. Each gets twice what all transfers
// could take, so no debit bounces even when the baseline applies every one twice.
func transfers(spec sim.Spec) (sim.Workload, error) {
	if spec.Movements < MinTransferMovements {
		return sim.Workload{}, fmt.Errorf("transfers need at least %d movements (two accounts funded, one transfer), got %d", MinTransferMovements, spec.Movements)
	}
	rng := rand.New(rand.NewPCG(spec.Seed, 0x74726173706173)) // "traspas"
	w := sim.Workload{Saldos: map[string]decimal.Decimal{}}
	cuentas := make([]string, max(2, min(spec.Accounts, spec.Movements/2)))
	n := spec.Movements - len(cuentas)
	fondo := decimal.New(int64(2*n*maxTransferCents), -2)
	add := func(d movimiento.Datos) error {
		d.ID, d.Moneda = fmt.Sprintf("mov-%d-%06d", spec.Seed, len(w.Movements)), "EUR"
		m, err := movimiento.New(d)
		if err != nil {
			return fmt.Errorf("generated an invalid movement: %w", err)
		}
		w.Movements = append(w.Movements, m)
		return nil
	}
	for i := range cuentas {
		cuentas[i] = fmt.Sprintf("TR%02d-%04d", spec.Seed%100, i)
		w.Saldos[cuentas[i]] = fondo
		if err := add(movimiento.Datos{Cuenta: cuentas[i], Tipo: movimiento.Abono, Importe: fondo.StringFixed(2), Concepto: "Fondos"}); err != nil {
			return sim.Workload{}, err
		}
	}
	for range n {
		from := rng.IntN(len(cuentas))
		to := (from + 1 + rng.IntN(len(cuentas)-1)) % len(cuentas)
		importe := decimal.New(100+rng.Int64N(maxTransferCents-99), -2)
		c, d := cuentas[from], cuentas[to]
		w.Saldos[c], w.Saldos[d] = w.Saldos[c].Sub(importe), w.Saldos[d].Add(importe)
		if err := add(movimiento.Datos{Cuenta: c, Destino: d, Tipo: movimiento.Traspaso, Importe: importe.StringFixed(2), Concepto: "Traspaso"}); err != nil {
			return sim.Workload{}, err
		}
	}
	return w, nil
}
