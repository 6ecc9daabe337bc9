package testenv

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// RIEEnv names the environment variable holding the emulator's path.
const RIEEnv = "LEDGER_TEST_RIE"

// Function is a Lambda bootstrap binary running under the Lambda Runtime Interface
// Emulator on loopback ports of its own, invoked over HTTP as Lambda would.
type Function struct {
	URL string // the invocation endpoint
	out *Buffer
	rie *os.Process
}

// BuildLambda compiles the main package in directory pkg as a Lambda bootstrap, as
// `make build` does but for this machine, and returns its path.
func BuildLambda(t testing.TB, pkg string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "bootstrap")
	cmd := exec.Command("go", "build", "-tags", "lambda.norpc", "-trimpath", "-ldflags", "-s -w", "-o", bin, ".")
	cmd.Dir = pkg
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

// LambdaEnv points a function at a local DynamoDB endpoint and table, with placeholder
// credentials and region.
func LambdaEnv(endpoint, table string) []string {
	return []string{
		"LEDGER_TABLE=" + table,
		"AWS_ENDPOINT_URL_DYNAMODB=" + endpoint,
		"AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local", "AWS_REGION=us-east-1",
		"AWS_LAMBDA_FUNCTION_TIMEOUT=30",
	}
}

// StartLambda runs bootstrap under the emulator (RIEEnv, or aws-lambda-rie on PATH)
// with env added, until t ends; it skips t when the emulator is not installed.
func StartLambda(t testing.TB, bootstrap string, env ...string) *Function {
	t.Helper()
	rie := os.Getenv(RIEEnv)
	if rie == "" {
		var err error
		if rie, err = exec.LookPath("aws-lambda-rie"); err != nil {
			t.Skipf("the Lambda Runtime Interface Emulator is not installed (set %s or put aws-lambda-rie on PATH; make test does)", RIEEnv)
		}
	}
	apiAddr, emuAddr := FreeAddr(t), FreeAddr(t)
	cmd := exec.Command(rie, "--runtime-api-address", apiAddr,
		"--runtime-interface-emulator-address", emuAddr, "--log-level", "info", bootstrap)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // stop the bootstrap with it
	f := &Function{URL: "http://" + emuAddr + "/2015-03-31/functions/function/invocations", out: &Buffer{}}
	cmd.Stdout, cmd.Stderr = f.out, f.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	f.rie = cmd.Process
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("emulator output:\n%s", f.Output())
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", emuAddr, 200*time.Millisecond)
		if err == nil {
			_ = c.Close()
			return f
		}
		if time.Now().After(deadline) {
			t.Fatalf("the emulator did not listen on %s: %v\n%s", emuAddr, err, f.Output())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Invoke sends payload as the function's event and returns the function's response;
// a failed invocation fails t.
func (f *Function) Invoke(t testing.TB, payload []byte) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	body, err := f.Call(ctx, payload)
	if err != nil {
		t.Fatalf("invoke: %v", err)
	}
	return body
}

// Output is what the emulator and the function printed so far, REPORT lines included.
func (f *Function) Output() string { return f.out.String() }

// FreeAddr is a 127.0.0.1 address with a port free at the time of the call: test
// servers listen on loopback only.
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
