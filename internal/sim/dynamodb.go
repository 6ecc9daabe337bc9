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
// when no endpoint is given: truora/minidyn's HTTP server, in memory until Close. Of
// its gaps (docs/design.md, "Test backends") four are mended here, and only here: number
// sort keys ordered as text (numericOrder), a data race of DescribeTable (describeLock),
// transactions that copy whole tables and report one failed condition without its
// item, and ClientRequestTokens ignored (transactions). URL is its endpoint,
// http://127.0.0.1:port. Stream is its stream, when it was started with one
// (StartStreamingDynamoDB), else nil.
type DynamoDB struct {
	URL    string
	Stream *Stream
	http   *http.Server
	done   chan error
}

// StartDynamoDB listens on a free 127.0.0.1 port (never on other interfaces) and serves the
// DynamoDB JSON API until Close.
func StartDynamoDB() (*DynamoDB, error) { return start(nil) }

// StartStreamingDynamoDB is StartDynamoDB with a stream of every table's writes
// (Stream), for `ledger up --events`. Its writes are one at a time, each read before
// and after, so it is slower than StartDynamoDB's.
func StartStreamingDynamoDB() (*DynamoDB, error) { return start(NewStream()) }

// start serves the embedded DynamoDB, recording its writes in stream when not nil.
func start(stream *Stream) (*DynamoDB, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("sim: listen: %w", err)
	}
	h := embedded(miniserver.NewServer())
	if stream != nil {
		h = streaming{next: h, stream: stream, mu: new(sync.Mutex)}
	}
	s := &DynamoDB{
		URL:    "http://" + ln.Addr().String(),
		Stream: stream,
		http:   &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second},
		done:   make(chan error, 1),
	}
	go func() { s.done <- s.http.Serve(ln) }()
	return s, nil
}

// embedded is minidyn behind its patches: every request but a transaction runs beside
// the others, a transaction and a DescribeTable alone.
func embedded(minidyn http.Handler) http.Handler {
	mu := new(sync.RWMutex)
	return numericOrder{next: transactions{mu: mu, store: minidyn, next: describeLock{mu: mu, next: minidyn}, tokens: newTokens()}}
}

// Close stops the server and drops its data.
func (s *DynamoDB) Close() error {
	err := s.http.Close()
	if serveErr := <-s.done; !errors.Is(serveErr, http.ErrServerClosed) {
		return serveErr
	}
	return err
}

// describeLock runs minidyn's DescribeTable alone: minidyn answers it from the table's
// item counts without the lock its other operations take, a data race with any write
// (and numericOrder describes the table of every Query it re-pages).
type describeLock struct {
	mu   *sync.RWMutex
	next http.Handler
}

func (h describeLock) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".DescribeTable") {
		h.mu.Lock()
		defer h.mu.Unlock()
	} else {
		h.mu.RLock()
		defer h.mu.RUnlock()
	}
	h.next.ServeHTTP(w, r)
}
