package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/ledger-dev/ledger/internal/api"
	"github.com/ledger-dev/ledger/internal/awsconf"
	"github.com/ledger-dev/ledger/internal/store"
)

var serveCommand = command{
	name:    "serve",
	summary: "serve the balance API on net/http",
	run:     runServe,
}

// shutdownGrace is how long a stopping server waits for requests in flight.
const shutdownGrace = 10 * time.Second

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("serve", "[--addr A] [--endpoint URL] [--table T]", `
ledger serve --endpoint http://127.0.0.1:5000 --table ledger
curl -s http://127.0.0.1:8080/cuentas/ES7620770024003102575766`, stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "listen address; keep it on loopback unless something in front authenticates callers, as the API has no authentication of its own")
	endpoint := fs.String("endpoint", "", "DynamoDB endpoint URL, such as a moto server (default: AWS, or AWS_ENDPOINT_URL_DYNAMODB)")
	table := fs.String("table", "", "ledger table name (default: $LEDGER_TABLE, else ledger)")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	cfg, ok := envConfig("serve", *table, stderr)
	if !ok {
		return 2
	}
	awsCfg, err := awsconf.Load(ctx, *endpoint)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "ledger serve: %v\n", err)
		return 1
	}
	reader := store.NewReader(awsconf.DynamoDB(awsCfg, *endpoint), cfg.Table)
	fmt.Fprintf(stderr, "ledger serve: balance API on http://%s (table %s); Ctrl-C stops it\n", ln.Addr(), cfg.Table)
	if err := serveAPI(ctx, ln, reader, stderr); err != nil {
		fmt.Fprintf(stderr, "ledger serve: %v\n", err)
		return 1
	}
	fmt.Fprintln(stderr, "ledger serve: stopped")
	return 0
}

// serveAPI serves the balance API on ln until ctx is done, then stops, letting requests
// in flight finish within shutdownGrace.
func serveAPI(ctx context.Context, ln net.Listener, reader *store.Reader, stderr io.Writer) error {
	srv := &http.Server{
		Handler:           api.New(reader, slog.New(slog.NewTextHandler(stderr, nil))),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       time.Minute,
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	err := srv.Shutdown(shutdown)
	if serveErr := <-served; !errors.Is(serveErr, http.ErrServerClosed) {
		err = errors.Join(err, serveErr)
	}
	if err != nil {
		return fmt.Errorf("stopping: %w", err)
	}
	return nil
}
