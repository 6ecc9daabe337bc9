package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ledger-dev/ledger/internal/testenv"
)

// BenchmarkColdStart measures the bootstrap's init: from starting the process to its
// first request for work on the Lambda Runtime API (configuration read, AWS config
// loaded, clients built), as Lambda's "Init Duration" does. A stand-in Runtime API on
// loopback records that request; the process is then stopped. ns/op is the init time.
func BenchmarkColdStart(b *testing.B) {
	bin := testenv.BuildLambda(b, ".")
	asked := make(chan time.Time, 1)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/runtime/invocation/next") {
			select {
			case asked <- time.Now():
			default:
			}
			<-r.Context().Done() // hold the long poll until the process goes
		}
	}))
	defer api.Close()
	env := append(os.Environ(), "AWS_LAMBDA_RUNTIME_API="+strings.TrimPrefix(api.URL, "http://"),
		"LEDGER_TABLE=ledger", "AWS_REGION=eu-west-1", "AWS_ACCESS_KEY_ID=x", "AWS_SECRET_ACCESS_KEY=x")
	var total time.Duration
	for b.Loop() {
		cmd := exec.Command(bin)
		cmd.Env = env
		start := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		select {
		case t := <-asked:
			total += t.Sub(start)
		case <-time.After(10 * time.Second):
			b.Fatal("the bootstrap never asked for work")
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	b.ReportMetric(float64(total.Microseconds())/float64(b.N)/1000, "init-ms")
	if st, err := os.Stat(bin); err == nil {
		b.ReportMetric(float64(st.Size())/1e6, "bootstrap-MB")
	}
}
