package sim

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	miniserver "github.com/truora/minidyn/server"
)

// DynamoDB is the in-process DynamoDB that `ledger demo`, `ledger up` and the tests use
// when no endpoint is given: truora/minidyn's HTTP server, spoken to through the real
// AWS SDK, holding everything in memory until Close. Its known gaps are listed in
// README.md ("Test backends"); one, number sort keys ordered as text, is corrected
// here (numericOrder), or an account's statement would page out of order. URL is its
// endpoint (http://127.0.0.1:port).
type DynamoDB struct {
	URL  string
	http *http.Server
	done chan error
}

// StartDynamoDB listens on a free 127.0.0.1 port (never on other interfaces) and serves the
// DynamoDB JSON API until Close.
func StartDynamoDB() (*DynamoDB, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("sim: listen: %w", err)
	}
	s := &DynamoDB{
		URL:  "http://" + ln.Addr().String(),
		http: &http.Server{Handler: numericOrder{next: &describeAlone{next: miniserver.NewServer()}}, ReadHeaderTimeout: 10 * time.Second},
		done: make(chan error, 1),
	}
	go func() { s.done <- s.http.Serve(ln) }()
	return s, nil
}

// Close stops the server and drops its data.
func (s *DynamoDB) Close() error {
	err := s.http.Close()
	if serveErr := <-s.done; !errors.Is(serveErr, http.ErrServerClosed) {
		return serveErr
	}
	return err
}

// describeAlone runs minidyn's DescribeTable with no other request in progress, and other
// requests as they come. minidyn takes its lock for every operation but DescribeTable,
// which reads the table's items and indexes (to count them) while a write may be changing
// them: a data race, which `go test -race` reports in any test that pages a statement
// (numericOrder describes the table) while movements are applied.
type describeAlone struct {
	mu   sync.RWMutex
	next http.Handler
}

func (h *describeAlone) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".DescribeTable") {
		h.mu.Lock()
		defer h.mu.Unlock()
	} else {
		h.mu.RLock()
		defer h.mu.RUnlock()
	}
	h.next.ServeHTTP(w, r)
}
