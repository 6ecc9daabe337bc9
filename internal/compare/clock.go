package compare

import (
	"sync"
	"time"
)

// clock is the simulated time both strategies read (ledger.Config.Now,
// idempotencia.Config.Now) and the queue schedules by, so visibility timeouts,
// in-progress expiries and record expiries pass without waiting. It starts at a fixed
// instant, which keeps runs reproducible.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

var epoch = time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)

func newClock() *clock { return &clock{t: epoch} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// advanceTo moves the clock forward to t; it never goes back.
func (c *clock) advanceTo(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.t) {
		c.t = t
	}
}
