package main

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/consumer"
	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/sim"
	"github.com/ledger-dev/ledger/internal/store"
)

// written is what a run wrote through the real consumer: the workload, how many
// deliveries carried it, and the operator's changes of accounts made after it.
type written struct {
	Workload   sim.Workload
	Deliveries int
	Admin      int
}

// spec is the run's workload: every kind of movement over a few accounts, a fifth of
// them delivered twice, with the movements built to be refused.
func spec(seed uint64) sim.Spec {
	return sim.Spec{Accounts: 6, Movements: 150, Seed: seed, Transfers: 0.15, Reversals: 0.1, Holds: 0.2}
}

// write applies the workload through the consumer, as the SQS Lambda would, two
// consumers at once, on an at-least-once queue with duplicates: then the clock passes
// the holds' lapse and the tail goes, then the late movements. Insufficient funds are
// recorded rejected, so rejections are announced too. Last, an operator sets one
// account's limite and freezes and unfreezes another.
func (e *e2e) write(ctx context.Context, seed uint64) (written, error) {
	clock := sim.NewClock()
	w, err := sim.Generate(spec(seed))
	if err != nil {
		return written{}, err
	}
	sched := sim.Deliveries(w, sim.Mix{Duplicates: 0.2}, seed)
	l, err := store.New(e.env.Client, store.Config{Table: e.env.Table(), InsufficientFunds: cuenta.Reject, Now: clock.Now})
	if err != nil {
		return written{}, err
	}
	h := consumer.New(l, consumer.Options{Logger: slog.New(slog.DiscardHandler)})
	q := sim.NewQueue(sim.QueueOptions{Clock: clock, MaxReceive: 5})
	handle := func(ctx context.Context, _ int, batch []events.SQSMessage) map[string]bool {
		ctx, cancel := context.WithTimeout(ctx, consumer.FunctionTimeout)
		defer cancel()
		return h.Settle(ctx, batch)
	}
	for i, phase := range [][]sim.Message{sched.Deliveries, sched.Tail, sched.Late} {
		if i == 1 {
			clock.AdvanceTo(w.Lapse)
		}
		q.Send(phase...)
		if err := q.Drain(ctx, 2, consumer.MaxBatch, handle); err != nil {
			return written{}, err
		}
	}
	out := written{Workload: w, Deliveries: len(sched.Deliveries) + len(sched.Tail) + len(sched.Late)}
	out.Admin, err = administer(ctx, l, accounts(w))
	return out, err
}

// administer sets a limite on the first account, freezes the second and unfreezes it,
// as `ledger cuenta` does, and returns how many changes it made.
func administer(ctx context.Context, l *store.Ledger, cuentas []string) (int, error) {
	changes := []struct {
		cuenta string
		change func(cuenta.Cuenta) (cuenta.Cuenta, error)
	}{
		{cuentas[0], func(c cuenta.Cuenta) (cuenta.Cuenta, error) { return c.ConLimite(decimal.RequireFromString("250.00")) }},
		{cuentas[1], func(c cuenta.Cuenta) (cuenta.Cuenta, error) { c.Bloqueada = true; return c, nil }},
		{cuentas[1], func(c cuenta.Cuenta) (cuenta.Cuenta, error) { c.Bloqueada = false; return c, nil }},
	}
	for _, ch := range changes {
		if _, _, err := l.Administrar(ctx, ch.cuenta, ch.change); err != nil {
			return 0, fmt.Errorf("administer %s: %w", ch.cuenta, err)
		}
	}
	return len(changes), nil
}

// accounts are the workload's accounts, in order.
func accounts(w sim.Workload) []string {
	return slices.Sorted(maps.Keys(w.Saldos))
}

// feed hands the stream to the function while write runs, and once more after it, so
// that batches meet the writes as they come and the last ones are announced too.
func (e *e2e) feed(ctx context.Context, write func() error) error {
	done := make(chan error, 1)
	go func() { done <- write() }()
	for {
		select {
		case err := <-done:
			if err != nil {
				return err
			}
			return e.src.Drain(ctx, 10_000, e.invoke)
		case <-time.After(20 * time.Millisecond):
			if err := e.src.Drain(ctx, 10_000, e.invoke); err != nil {
				return err
			}
		}
	}
}
