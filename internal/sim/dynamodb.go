// This file runs the in-process DynamoDB that `ledger demo`, `ledger up` and the
// tests use when no endpoint is given: truora/minidyn's HTTP server on a loopback port,
// spoken to through the real AWS SDK. It keeps everything in memory and forgets it on
// Close. Known gaps against DynamoDB are listed in DESIGN.md ("Test backends"); one,
// minidyn ordering number sort keys as text, is corrected here (numorder.go), because
// the statement (index por_seq) would otherwise page out of order.

package sim

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	miniserver "github.com/truora/minidyn/server"
)

// DynamoDB is a running embedded DynamoDB. URL is its endpoint (http://127.0.0.1:port).
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
		http: &http.Server{Handler: numericOrder{next: miniserver.NewServer()}, ReadHeaderTimeout: 10 * time.Second},
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
