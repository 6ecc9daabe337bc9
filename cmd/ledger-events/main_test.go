package main

import (
	"context"
	"testing"
	"time"
)

// TestEveryFactIsAnnouncedOnce runs movements of every kind through the real consumer
// onto moto's table, hands the table's stream to the real bootstrap under the Runtime
// Interface Emulator as Lambda's event source mapping would, and reads what
// EventBridge's rules route to SQS: for every account, the events deduplicated by
// event_id are exactly seq 1..n with the balances the API shows, every other fact of
// the table is announced, and nothing else. With no fault, nothing is published twice.
func TestEveryFactIsAnnouncedOnce(t *testing.T) {
	e := newE2E(t, faults{}, "ES07-0002")
	r := e.run(t, 7)
	if r.Repeats != 0 || e.src.FunctionErrors != 0 || e.src.PartialFailures != 0 {
		t.Errorf("without faults: %d repeats, %d function errors, %d partial failures; want none", r.Repeats, e.src.FunctionErrors, e.src.PartialFailures)
	}
}

// TestNothingIsLostThroughPublishingFailures is the same run with EventBridge failing:
// PutEvents calls with some entries failed, calls failed whole, an outage longer than
// every retry of an invocation, and the function killed after EventBridge took a
// call's events but before it heard so. Nothing is lost and nothing reaches the
// failure destination; the repeats are counted.
func TestNothingIsLostThroughPublishingFailures(t *testing.T) {
	f := faults{Partial: 0.3, Total: 0.15, Crash: 0.08, MaxCrashes: 4, OutageAt: 3, OutageCalls: 15, Seed: 11}
	e := newE2E(t, f, "ES11-0001")
	e.run(t, 11)
	if len(e.src.Discarded) != 0 {
		t.Errorf("%d records went to the failure destination", len(e.src.Discarded))
	}
	if e.proxy.done[partial] == 0 || e.proxy.done[total] == 0 || e.proxy.done[outage] != f.OutageCalls || e.proxy.done[crash] == 0 || e.proxy.noCrash != 0 {
		t.Errorf("the faults did not all happen: %s (%d crashes found no process)", e.proxy, e.proxy.noCrash)
	}
	if e.src.PartialFailures+e.src.FunctionErrors <= e.proxy.done[crash] {
		t.Errorf("no batch came back for the outage: %d partial failures, %d function errors, %d crashes", e.src.PartialFailures, e.src.FunctionErrors, e.proxy.done[crash])
	}
}

// run writes the seed's workload while the stream is handed to the function, checks
// what the subscriber received, and logs the figures.
func (e *e2e) run(t *testing.T, seed uint64) report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var wr written
	err := e.feed(ctx, func() error {
		var err error
		wr, err = e.write(ctx, seed)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	r := e.verify(t, wr)
	t.Logf("e2e: %d movements in %d deliveries and %d administrations; %d stream batches (%d failed whole, %d partly); %s; %s",
		len(wr.Workload.Movements)+len(wr.Workload.Refused), wr.Deliveries, wr.Admin, e.src.Invocations, e.src.FunctionErrors, e.src.PartialFailures, e.proxy, r)
	return r
}
