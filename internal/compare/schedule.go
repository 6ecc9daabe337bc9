package compare

import (
	"cmp"
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// scheduler runs the benchmark's consumers on simulated time, one process at a time:
// each DynamoDB call, receive and back-off takes its turn in the order of simulated
// time, so a run's figures follow from the seed and the modelled costs, never from how
// fast the machine or the embedded store answers. A process is a consumer, or one
// group of accounts its handler applies (consumer.Groups), which the handler runs
// concurrently: each group starts when the handler has a free slot for it
// (Options.Concurrency), at the simulated time the slot freed.
//
// Ties are broken deterministically: a consumer that ran more recently first (Lambda
// reuses the execution environment that finished last), then by consumer, then by the
// group's first message in its batch.
type scheduler struct {
	cost  time.Duration // one DynamoDB call: the round trip and the service time
	queue *benchQueue
	rng   *rand.Rand // the back-offs' jitter, drawn under mu

	mu       sync.Mutex
	waiting  []*proc // processes ready to run at their time
	idle     []*proc // consumers waiting for the queue to change
	running  bool    // a process runs now
	arrivals int     // groups a handler is about to start
	steps    int     // turns given so far: a consumer's recency
	abort    chan struct{}
	aborted  error
}

// proc is a process of the scheduler: its simulated time and its turn.
type proc struct {
	s        *scheduler
	now      time.Duration // since the run started
	consumer int
	first    int  // a group's first message in its batch; -1 for the consumer itself
	last     int  // the step at which a consumer last yielded (higher: more recent)
	fresh    bool // a consumer that has not asked for a turn yet
	wake     chan struct{}
	batch    *batchRun // a consumer's batch while its groups run

	turnAt time.Duration // p.now when p last had the turn
	readMu sync.Mutex
	read   bool // reads made since p's last write, to be paid for before the next
}

// batchRun is one batch's groups: how many are left to finish and to start, when each
// waiting one starts, and each message's place in the batch (by id), which orders
// groups that start together.
type batchRun struct {
	left, toStart int
	starts        []time.Duration
	end           time.Duration
	order         map[string]int
}

// errStalled ends a run whose processes stopped taking turns: a bug, reported rather
// than waited on forever.
var errStalled = errors.New("compare: the benchmark's simulation stalled")

func newScheduler(q *benchQueue, cost time.Duration, seed uint64) *scheduler {
	return &scheduler{cost: cost, queue: q, rng: rand.New(rand.NewPCG(seed, 0x6a6974746572)), abort: make(chan struct{})} // "jitter"
}

// consumers makes n consumer processes: none runs until each has asked for its first
// turn, at time zero.
func (s *scheduler) consumers(n int) []*proc {
	s.mu.Lock()
	defer s.mu.Unlock()
	ps := make([]*proc, n)
	for c := range ps {
		ps[c] = &proc{s: s, consumer: c, first: -1, fresh: true, wake: make(chan struct{}, 1)}
	}
	s.arrivals += n
	return ps
}

// stop aborts the run: every process waiting returns err.
func (s *scheduler) stop(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.aborted == nil {
		s.aborted = err
		close(s.abort)
	}
}

// before orders two ready processes: earlier first, then as scheduler says.
func before(a, b *proc) int {
	switch {
	case a.now != b.now:
		return cmp.Compare(a.now, b.now)
	case a.first < 0 && b.first < 0 && a.last != b.last:
		return cmp.Compare(b.last, a.last)
	case a.consumer != b.consumer:
		return cmp.Compare(a.consumer, b.consumer)
	}
	return cmp.Compare(a.first, b.first)
}

// dispatch gives the turn to the first ready process, when none runs and no group is
// about to start. Call it with mu held.
func (s *scheduler) dispatch() {
	if s.running || s.arrivals > 0 || len(s.waiting) == 0 {
		return
	}
	i := 0
	for j, p := range s.waiting {
		if before(p, s.waiting[i]) < 0 {
			i = j
		}
	}
	p := s.waiting[i]
	s.waiting = slices.Delete(s.waiting, i, i+1)
	s.running = true
	p.wake <- struct{}{}
}

// await blocks p until it has the turn.
func (p *proc) await() error {
	select {
	case <-p.wake:
		return nil
	case <-p.s.abort:
		return p.s.aborted
	}
}

// turn makes running process p wait until it is the first ready one; a fresh
// consumer's first turn is its arrival.
func (p *proc) turn() error {
	s := p.s
	s.mu.Lock()
	if p.fresh { // consumers arrive in no set order: they keep recency 0
		p.fresh = false
		s.arrivals--
	} else {
		s.running = false
		s.steps++
		p.last = s.steps
	}
	s.waiting = append(s.waiting, p)
	s.dispatch()
	s.mu.Unlock()
	err := p.await()
	p.turnAt = p.now
	return err
}

// fork hands consumer p's turn to the groups of its batch, which its handler starts
// concurrently, at most lanes at once; order is each message's place in the batch.
func (p *proc) fork(groups, lanes int, order map[string]int) {
	s := p.s
	s.mu.Lock()
	defer s.mu.Unlock()
	first := min(groups, lanes)
	p.batch = &batchRun{left: groups, toStart: groups - first, starts: slices.Repeat([]time.Duration{p.now}, first), end: p.now, order: order}
	s.arrivals += first
	s.running = false
	s.dispatch()
}

// arrive is a group of consumer parent's batch starting, whose first message has the
// id first: it waits for its turn at the time its slot freed.
func (parent *proc) arrive(first string) (*proc, error) {
	s := parent.s
	s.mu.Lock()
	b := parent.batch
	g := &proc{s: s, consumer: parent.consumer, first: b.order[first], now: b.starts[0], wake: make(chan struct{}, 1)}
	b.starts = b.starts[1:]
	s.arrivals--
	s.waiting = append(s.waiting, g)
	s.dispatch()
	s.mu.Unlock()
	return g, g.await()
}

// exit ends group g of consumer parent's batch: its slot goes to the next group, or,
// once every group is done, the consumer runs on from when the last one ended.
func (parent *proc) exit(g *proc) {
	s := parent.s
	s.mu.Lock()
	defer s.mu.Unlock()
	b := parent.batch
	b.end, b.left = max(b.end, g.now), b.left-1
	s.running = false
	if b.toStart > 0 {
		b.toStart--
		b.starts = append(b.starts, g.now)
		s.arrivals++
	}
	if b.left == 0 {
		parent.now, parent.batch, s.running = b.end, nil, true
	}
	s.dispatch()
}

// call is one DynamoDB write by running process p: it pays for the reads before it,
// waits its turn, is made, and takes p's time on by the modelled cost.
func (p *proc) call(do func() (*http.Response, error)) (*http.Response, error) {
	p.readMu.Lock()
	if p.read {
		p.now, p.read = p.now+p.s.cost, false
	}
	p.readMu.Unlock()
	if err := p.turn(); err != nil {
		return nil, err
	}
	resp, err := do()
	p.now += p.s.cost
	return resp, err
}

// get is one DynamoDB read by running process p. The reads between two writes (the
// ledger reads a transaction's cold accounts at once) are made at one time, p's, once
// p has the turn for it, and paid for together, one call's cost, before the write.
func (p *proc) get(do func() (*http.Response, error)) (*http.Response, error) {
	p.readMu.Lock()
	if p.now != p.turnAt {
		if err := p.turn(); err != nil {
			p.readMu.Unlock()
			return nil, err
		}
	}
	p.read = true
	p.readMu.Unlock()
	return do()
}

// receive is consumer p's next batch from the queue at p's time, once p has the turn;
// when nothing can be received p waits for a batch to settle. ok is false once the
// queue holds nothing more and nothing is in flight.
func (p *proc) receive() (batch []*benchMsg, ok bool, err error) {
	if err := p.turn(); err != nil {
		return nil, false, err
	}
	s := p.s
	for {
		s.mu.Lock()
		if batch = s.queue.take(); len(batch) > 0 {
			s.mu.Unlock()
			return batch, true, nil
		}
		s.running = false
		if s.queue.drained() {
			s.wakeIdle(p.now)
			s.dispatch()
			s.mu.Unlock()
			return nil, false, nil
		}
		s.steps++
		p.last = s.steps
		s.idle = append(s.idle, p)
		s.dispatch()
		if !s.running && s.arrivals == 0 && len(s.waiting) == 0 {
			s.mu.Unlock()
			s.stop(errStalled) // messages left that no consumer can take, and none in flight
			return nil, false, errStalled
		}
		s.mu.Unlock()
		if err := p.await(); err != nil {
			return nil, false, err
		}
	}
}

// settle ends running consumer p's batch, once p has the turn at the time it ended:
// the queue deletes or takes back its messages, and the consumers waiting for it are
// ready again at p's time.
func (p *proc) settle(batch []*benchMsg, back map[string]bool) error {
	if err := p.turn(); err != nil {
		return err
	}
	s := p.s
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue.settle(batch, back)
	s.wakeIdle(p.now)
	return nil
}

// wakeIdle makes the consumers waiting for the queue ready at time at, or at their own
// if later. Call it with mu held.
func (s *scheduler) wakeIdle(at time.Duration) {
	for _, q := range s.idle {
		q.now = max(q.now, at)
	}
	s.waiting, s.idle = append(s.waiting, s.idle...), nil
}

// procKey carries the process whose work a context is, down to its DynamoDB calls.
type procKey struct{}

func withProc(ctx context.Context, p *proc) context.Context {
	return context.WithValue(ctx, procKey{}, p)
}

func procOf(ctx context.Context) *proc {
	p, _ := ctx.Value(procKey{}).(*proc)
	return p
}

// turns is the transport that makes each DynamoDB write of a process wait its turn
// (proc.call), and charges its reads (proc.get); calls from no process pass straight
// through.
type turns struct{ base http.RoundTripper }

// RoundTrip implements http.RoundTripper.
func (t turns) RoundTrip(req *http.Request) (*http.Response, error) {
	p := procOf(req.Context())
	do := func() (*http.Response, error) { return t.base.RoundTrip(req) }
	switch {
	case p == nil:
		return do()
	case strings.HasSuffix(req.Header.Get("X-Amz-Target"), ".GetItem"):
		return p.get(do)
	}
	return p.call(do)
}

// backoff is the store's back-off on simulated time (store.Config.Wait): the process
// waits out a draw of the scheduler's seeded jitter in its own time, which its next
// call's turn orders. Draws come in the order of the turns, so a seed repeats them.
func backoff(ctx context.Context, ceiling time.Duration) error {
	p := procOf(ctx)
	if p == nil {
		return nil
	}
	p.s.mu.Lock()
	d := time.Duration(p.s.rng.Int64N(int64(ceiling) + 1))
	p.s.mu.Unlock()
	p.now += d
	return nil
}
