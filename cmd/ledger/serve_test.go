package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/store"
	"github.com/ledger-dev/ledger/internal/testenv"
)

func TestServeAnswersABalanceAndStopsWhenCancelled(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	svc, err := store.New(env.Client, store.Config{Table: env.Table()})
	if err != nil {
		t.Fatal(err)
	}
	m, err := movimiento.New(movimiento.Datos{ID: "pago-8f2c", Cuenta: "ES76", Tipo: movimiento.Abono, Importe: "50", Moneda: "EUR"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := testenv.One(svc.Apply(context.Background(), []store.Entrega{{Mov: m}})); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout bytes.Buffer
	stderr := &testenv.Buffer{}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--endpoint", env.Endpoint, "--table", env.Table()}, &stdout, stderr)
	}()

	listening := regexp.MustCompile(`on (http://127\.0\.0\.1:\d+) `)
	var base string
	for deadline := time.Now().Add(30 * time.Second); base == "" && time.Now().Before(deadline); {
		select {
		case code := <-done:
			t.Fatalf("ledger serve exited %d before listening:\n%s", code, stderr)
		case <-time.After(20 * time.Millisecond):
		}
		if m := listening.FindStringSubmatch(stderr.String()); m != nil {
			base = m[1]
		}
	}
	if base == "" {
		t.Fatalf("ledger serve never said where it listens:\n%s", stderr)
	}

	resp, err := testenv.LoadOpenAPI(t).Client(t).Get(base + "/cuentas/ES76")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"saldo":"50.00"`) {
		t.Errorf("GET /cuentas/ES76 = %d %s", resp.StatusCode, body)
	}

	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d after cancel, want 0:\n%s", code, stderr)
		}
	case <-time.After(shutdownGrace + 5*time.Second):
		t.Fatal("ledger serve did not stop after its context was cancelled")
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout = %q, want the server's log on stderr only", stdout.String())
	}
	if _, err := http.Get(base + "/cuentas/ES76"); err == nil {
		t.Error("still answering after it stopped")
	}
}

func TestServeUsage(t *testing.T) {
	cases := []struct {
		args []string
		code int
		says string
	}{
		{[]string{"serve", "--port", "80"}, 2, "flag provided but not defined"},
		{[]string{"serve", "extra"}, 2, `unexpected argument "extra"`},
		// serve takes its port before it checks the table: any free port, not the default.
		{[]string{"serve", "--addr", "127.0.0.1:0", "--table", "x"}, 2, "--table"},
		{[]string{"serve", "--addr", "127.0.0.1:0", "--endpoint", "not a url"}, 2, "endpoint"},
		{[]string{"serve", "--addr", "127.0.0.1:0", "--endpoint", "http://127.0.0.1:1"}, 1, "cannot reach DynamoDB at http://127.0.0.1:1"},
	}
	for _, tc := range cases {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), tc.args, &stdout, &stderr)
		if code != tc.code || !strings.Contains(stderr.String(), tc.says) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, stderr.String(), tc.code, tc.says)
		}
	}
	// A port in use is most likely another ledger up or serve: the error says so.
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, cmd := range []string{"serve", "up"} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), []string{cmd, "--addr", busy.Addr().String()}, &stdout, &stderr)
		if code != 1 || strings.Count(stderr.String(), "\n") != 1 || !strings.Contains(stderr.String(), "is another ledger up or serve running?") {
			t.Errorf("ledger %s on a busy port: exit %d, stderr %q; want 1 and one line naming the likely cause", cmd, code, stderr.String())
		}
	}
	var help bytes.Buffer
	run(context.Background(), []string{"help"}, &help, &help)
	if !strings.Contains(help.String(), "serve") {
		t.Errorf("ledger help does not list serve:\n%s", help.String())
	}
}

func TestExposedIsAnyAddressButLoopback(t *testing.T) {
	cases := []struct {
		addr net.Addr
		want bool
	}{
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}, false},
		{&net.TCPAddr{IP: net.IPv6loopback, Port: 8080}, false},
		{&net.TCPAddr{IP: net.IPv4zero, Port: 8080}, true}, // 0.0.0.0: every interface
		{&net.TCPAddr{IP: net.IPv6unspecified, Port: 8080}, true},
		{&net.TCPAddr{IP: net.IPv4(10, 0, 0, 7), Port: 8080}, true},
	}
	for _, tc := range cases {
		if got := exposed(tc.addr); got != tc.want {
			t.Errorf("exposed(%v) = %v, want %v", tc.addr, got, tc.want)
		}
	}
}

// validate names the first thing wrong: --addr, then --endpoint, then --table; nothing
// listens yet.
func TestServeValidate(t *testing.T) {
	testValidate(t, newServeCmd, []validateCase{
		{nil, ""},
		{[]string{"--addr", "0.0.0.0:0", "--endpoint", "http://127.0.0.1:1", "--table", "ledger"}, ""},
		{[]string{"--addr", "8080", "--table", "x"}, "--addr: address 8080: missing port in address"},
		{[]string{"--addr", ":65536"}, `--addr: port "65536": want a number within 0–65535`},
		{[]string{"--endpoint", "not a url", "--table", "x"}, `--endpoint: awsconf: endpoint "not a url"`},
		{[]string{"--table", "x"}, `--table: table name "x"`},
	})
}
