package sim

import (
	"sync"
	"time"
)

// Clock is simulated time, so that visibility timeouts and expiries pass without
// waiting; it starts at Epoch, for reproducible runs. It is safe for concurrent use.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// Epoch is the instant every Clock starts at.
var Epoch = time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)

// NewClock returns a clock at Epoch.
func NewClock() *Clock { return &Clock{t: Epoch} }

// Now is the simulated time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// AdvanceTo moves the clock forward to t; it never goes back.
func (c *Clock) AdvanceTo(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.t) {
		c.t = t
	}
}
