package sim

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	miniserver "github.com/truora/minidyn/server"
)

// DynamoDB is the in-process DynamoDB that `ledger demo`, `ledger up` and the tests use
// when no endpoint is given: truora/minidyn's HTTP server, spoken to through the real
// AWS SDK, holding everything in memory until Close. Its known gaps are listed in
// README.md ("Test backends"); one, number sort keys ordered as text, is corrected
// here (numericOrder), or an account's statement would page out of order; and one data
// race of its DescribeTable is kept out (describeLock). URL is its endpoint
// (http://127.0.0.1:port).
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
		URL: "http://" + ln.Addr().String(),
		http: &http.Server{
			Handler:           numericOrder{next: describeLock{mu: new(sync.RWMutex), next: miniserver.NewServer()}},
			ReadHeaderTimeout: 10 * time.Second,
		},
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
