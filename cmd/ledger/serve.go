package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"syscall"
	"time"

	"github.com/ledger-dev/ledger/internal/api"
	"github.com/ledger-dev/ledger/internal/store"
)

var serveCommand = command{
	name:    "serve",
	summary: "serve the balance API on net/http",
	run:     runServe,
}

// The local API server's timeouts; a stopping server waits shutdownGrace for requests
// in flight.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 10 * time.Second
	writeTimeout      = 30 * time.Second
	idleTimeout       = time.Minute
	shutdownGrace     = 10 * time.Second
)

// serveHelp is ledger serve's --help.
var serveHelp = helpText{synopsis: "[--addr A] [--endpoint URL] [--table T]", about: `
Serves the balance API on net/http until Ctrl-C, from the ledger table in DynamoDB at
--endpoint, which must exist.`, example: `
ledger serve --endpoint http://127.0.0.1:5000 --table ledger
curl -s http://127.0.0.1:8080/cuentas/ES7620770024003102575766`}

// serveCmd is ledger serve's command line.
type serveCmd struct {
	*flags
	table tableFlags
	addr  string
}

// newServeCmd declares ledger serve's flags.
func newServeCmd(stdout, stderr io.Writer) *serveCmd {
	c := &serveCmd{flags: newFlags("serve", serveHelp, stdout, stderr)}
	c.addrVar(&c.addr)
	c.table.declare(c.flags)
	return c
}

// runServe is ledger serve: it parses the command line, then validates it and runs.
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newServeCmd(stdout, stderr)
	return c.execute(ctx, args, 0, c)
}

// validate checks --addr, then where the table is.
func (c *serveCmd) validate() error {
	if err := checkAddr(c.addr); err != nil {
		return fmt.Errorf("--addr: %w", err)
	}
	return c.table.validate()
}

// run serves the API until ctx is done.
func (c *serveCmd) run(ctx context.Context) error {
	// The address is taken before the table check, so a port in use is said at once.
	ln, err := c.listen(c.addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	cfg, _, db, err := c.table.open(ctx, checkTable)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.stderr, "ledger serve: balance API on http://%s (table %s); Ctrl-C stops it\n", ln.Addr(), cfg.Table)
	if err := serveAPI(ctx, ln, store.NewReader(db, cfg.Table), c.stderr); err != nil {
		return err
	}
	fmt.Fprintln(c.stderr, "ledger serve: stopped")
	return nil
}

// checkAddr checks a listen address: a host (which may be empty) and a port 0–65535.
func checkAddr(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("port %q: want a number within 0–65535", port)
	}
	return nil
}

// listen takes the API's address and, when other machines can reach it, warns at once
// that the API has no authentication of its own.
func (f *flags) listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("--addr: %w: is another ledger up or serve running? stop it, or give another --addr", err)
	}
	if err != nil {
		return nil, fmt.Errorf("--addr: %w", err)
	}
	if exposed(ln.Addr()) {
		fmt.Fprintf(f.stderr, "ledger %s: warning: the balance API listens on %s, beyond this machine, and has no authentication of its own\n", f.name, ln.Addr())
	}
	return ln, nil
}

// exposed reports whether a listener at addr takes connections from other machines.
func exposed(addr net.Addr) bool {
	a, ok := addr.(*net.TCPAddr)
	return ok && !a.IP.IsLoopback()
}

// serveAPI serves the balance API on ln until ctx is done, then stops, letting requests
// in flight finish within shutdownGrace.
func serveAPI(ctx context.Context, ln net.Listener, reader *store.Reader, stderr io.Writer) error {
	srv := &http.Server{
		Handler:           api.New(reader, slog.New(slog.NewTextHandler(stderr, nil))),
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
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
