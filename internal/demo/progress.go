package demo

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// progress shows how many messages are settled: a redrawn bar on a terminal, a plain
// line per tenth elsewhere (logs, CI), nothing without a writer.
type progress struct {
	mu       sync.Mutex
	w        io.Writer
	terminal bool
	total    int
	shown    int // tenths printed (plain)
	drawn    time.Time
	settled  int
}

func (p *progress) set(settled int) {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.settled = settled
	if p.terminal {
		if time.Since(p.drawn) >= 100*time.Millisecond {
			p.draw()
		}
		return
	}
	if tenth := settled * 10 / p.total; tenth > p.shown { // one line per tenth reached, however many at once
		p.shown = tenth
		fmt.Fprintf(p.w, "ledger demo: %3d%% of messages settled (%d/%d)\n", settled*100/p.total, settled, p.total)
	}
}

func (p *progress) draw() {
	const width = 30
	done := min(p.settled*width/p.total, width)
	fmt.Fprintf(p.w, "\r[%s%s] %3d%%  %d/%d messages", strings.Repeat("#", done), strings.Repeat(".", width-done), p.settled*100/p.total, p.settled, p.total)
	p.drawn = time.Now()
}

func (p *progress) finish() {
	if p.w == nil || !p.terminal {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.draw()
	fmt.Fprintln(p.w)
}
