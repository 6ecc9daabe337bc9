package testenv

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// FunctionError is an invocation that failed as Lambda reports it: the handler
// returned an error (errorType the error's), or the runtime died (Runtime.ExitError,
// a crash).
type FunctionError struct {
	Type, Message string
}

func (e *FunctionError) Error() string { return "function error: " + e.Type + ": " + e.Message }

// Call sends payload as the function's event and returns its response, or a
// *FunctionError when the invocation failed as a whole (Lambda's function error: the
// event source retries it), or another error when the emulator could not be reached.
func (f *Function) Call(ctx context.Context, payload []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.URL, bytes.NewReader(payload))
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	var fe struct{ ErrorType, ErrorMessage string }
	if json.Unmarshal(body, &fe) == nil && fe.ErrorType != "" {
		return nil, &FunctionError{Type: fe.ErrorType, Message: fe.ErrorMessage}
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("invoke: %d %s", resp.StatusCode, body)
	}
	return body, nil
}

// Crash kills the function's runtime process (the bootstrap), as an out-of-memory kill
// or a host failure would, mid-invocation if one is running: the emulator answers that
// invocation with Runtime.ExitError and starts the bootstrap afresh for the next. It
// returns how many processes it killed.
func (f *Function) Crash() (int, error) {
	procs, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		return 0, err
	}
	killed := 0
	for _, stat := range procs {
		raw, err := os.ReadFile(stat)
		if err != nil {
			continue // gone since the listing
		}
		// /proc/PID/stat: "pid (comm) state ppid …", where comm may hold spaces.
		fields := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+1:]))
		if len(fields) < 2 || fields[1] != strconv.Itoa(f.rie.Pid) {
			continue
		}
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(stat)))
		if err == nil && syscall.Kill(pid, syscall.SIGKILL) == nil {
			killed++
		}
	}
	return killed, nil
}
