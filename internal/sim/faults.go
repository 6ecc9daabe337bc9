package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Fault is one kind of injected failure.
type Fault int

// The faults the transport can inject. All but LostResponse answer the call without
// sending it.
const (
	InternalError       Fault = iota + 1 // 500 InternalServerError
	Throttling                           // 400 ThrottlingException
	TransactionConflict                  // TransactionCanceledException, every reason TransactionConflict
	// LostResponse sends the call, lets the server commit it, then fails as if the
	// connection dropped before the answer arrived.
	LostResponse
	// Validation is 400 ValidationException: a request DynamoDB can never accept (a
	// number beyond 38 digits, an item over 400 KB).
	Validation
	ValidationCancelled // TransactionCanceledException whose first reason is ValidationError
	NotFound            // 400 ResourceNotFoundException, as DescribeTable may right after CreateTable
)

var faultNames = map[Fault]string{InternalError: "5xx", Throttling: "throttling", TransactionConflict: "transaction-conflict",
	LostResponse: "lost-response", Validation: "validation", ValidationCancelled: "validation-cancelled", NotFound: "not-found"}

// String is the fault's name in reports and flags ("throttling").
func (f Fault) String() string {
	if name, ok := faultNames[f]; ok {
		return name
	}
	return fmt.Sprintf("fault(%d)", int(f))
}

// errLostResponse is the error a LostResponse fault produces; the SDK retries it as a
// connection error, as it would in production.
var errLostResponse = errors.New("sim: connection lost after the request was sent")

// Transport is an http.RoundTripper that injects DynamoDB failures (the Faults) into the
// real SDK's traffic, for tests and `ledger compare`, and counts calls per operation,
// which is how the comparison measures calls per movement. Use NewTransport.
type Transport struct {
	base http.RoundTripper

	mu       sync.Mutex
	pending  map[string][]Fault // op → faults to inject on its next calls, in order
	chooser  func(op string) Fault
	calls    map[string]int
	injected map[Fault]int
	rtt      time.Duration
}

// NewTransport wraps base (when nil, a connection pool of its own, so that no other
// client reuses the connections a LostResponse abandoned).
func NewTransport(base http.RoundTripper) *Transport {
	if base == nil {
		base = http.DefaultTransport.(*http.Transport).Clone()
	}
	return &Transport{base: base, pending: map[string][]Fault{}, calls: map[string]int{}, injected: map[Fault]int{}}
}

// Inject queues faults for the next calls of op (a DynamoDB operation name such as
// "TransactWriteItems"), one fault per call, in order.
func (t *Transport) Inject(op string, faults ...Fault) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.pending[op] = append(t.pending[op], faults...)
}

// SetChooser installs choose, asked for every call that has no queued fault for the
// fault to inject (0 for none); it must be safe for concurrent use.
func (t *Transport) SetChooser(choose func(op string) Fault) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.chooser = choose
}

// SetRoundTrip makes every call take at least d, a network round trip that includes
// the server's own time, as on DynamoDB: only an emulator slower than d shows through.
func (t *Transport) SetRoundTrip(d time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.rtt = d
}

// Calls returns how many calls of op went through the transport (injected ones included).
func (t *Transport) Calls(op string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.calls[op]
}

// TotalCalls returns the calls of every operation.
func (t *Transport) TotalCalls() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, c := range t.calls {
		n += c
	}
	return n
}

// Injected returns how many times each fault was injected.
func (t *Transport) Injected() map[Fault]int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return maps.Clone(t.injected)
}

// ResetCounts zeroes the call and fault counters.
func (t *Transport) ResetCounts() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.calls = map[string]int{}
	t.injected = map[Fault]int{}
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	fault, rtt := t.next(operation(req))
	start := time.Now()
	resp, err := t.send(req, fault)
	if wait := rtt - time.Since(start); wait > 0 {
		timer := time.NewTimer(wait)
		defer timer.Stop()
		select {
		case <-req.Context().Done():
			if resp != nil {
				_ = resp.Body.Close()
			}
			return nil, req.Context().Err()
		case <-timer.C:
		}
	}
	return resp, err
}

// send answers req with fault, or passes it on.
func (t *Transport) send(req *http.Request, fault Fault) (*http.Response, error) {
	switch fault {
	case InternalError:
		return errorResponse(req, http.StatusInternalServerError, "InternalServerError", "injected: internal server error", ""), nil
	case Throttling:
		return errorResponse(req, http.StatusBadRequest, "ThrottlingException", "injected: rate exceeded", ""), nil
	case TransactionConflict:
		return errorResponse(req, http.StatusBadRequest, "TransactionCanceledException",
			"injected: transaction cancelled [TransactionConflict]", cancellationReasons(req, "TransactionConflict", "Transaction is ongoing for the item")), nil
	case ValidationCancelled:
		return errorResponse(req, http.StatusBadRequest, "TransactionCanceledException",
			"injected: transaction cancelled [ValidationError]", cancellationReasons(req, "ValidationError", "injected: item size has exceeded the maximum allowed size")), nil
	case Validation:
		return errorResponse(req, http.StatusBadRequest, "ValidationException", "injected: one or more parameter values were invalid", ""), nil
	case NotFound:
		return errorResponse(req, http.StatusBadRequest, "ResourceNotFoundException", "injected: requested resource not found", ""), nil
	case LostResponse:
		resp, err := t.base.RoundTrip(req)
		if err != nil {
			return nil, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		return nil, errLostResponse
	}
	return t.base.RoundTrip(req)
}

func (t *Transport) next(op string) (Fault, time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.calls[op]++
	var f Fault
	if q := t.pending[op]; len(q) > 0 {
		f, t.pending[op] = q[0], q[1:]
	} else if t.chooser != nil {
		f = t.chooser(op)
	}
	if f != 0 {
		t.injected[f]++
	}
	return f, t.rtt
}

// operation reads the DynamoDB operation from the X-Amz-Target header
// ("DynamoDB_20120810.TransactWriteItems"); other services' calls count by path.
func operation(req *http.Request) string {
	if target := req.Header.Get("X-Amz-Target"); target != "" {
		if i := strings.LastIndexByte(target, '.'); i >= 0 {
			return target[i+1:]
		}
		return target
	}
	return req.URL.Path
}

func errorResponse(req *http.Request, status int, code, msg, extra string) *http.Response {
	body := fmt.Sprintf(`{"__type":"com.amazonaws.dynamodb.v20120810#%s","message":%q%s}`, code, msg, extra)
	if req.Body != nil {
		_, _ = io.Copy(io.Discard, req.Body)
		_ = req.Body.Close()
	}
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", status, http.StatusText(status)),
		StatusCode:    status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        http.Header{"Content-Type": {"application/x-amz-json-1.0"}, "X-Amzn-Requestid": {"injected"}},
		Body:          io.NopCloser(bytes.NewReader([]byte(body))),
		ContentLength: int64(len(body)),
		Request:       req,
	}
}

// cancellationReasons lists one reason per action of the request, as DynamoDB does:
// code for every action of a transaction conflict, otherwise for the first and None for
// the rest. It consumes the request's body.
func cancellationReasons(req *http.Request, code, msg string) string {
	var in struct{ TransactItems []json.RawMessage }
	if req.Body != nil {
		_ = json.NewDecoder(req.Body).Decode(&in)
	}
	reasons := make([]string, max(len(in.TransactItems), 1))
	for i := range reasons {
		reasons[i] = fmt.Sprintf(`{"Code":%q,"Message":%q}`, code, msg)
		if i > 0 && code != "TransactionConflict" {
			reasons[i] = `{"Code":"None"}`
		}
	}
	return `,"CancellationReasons":[` + strings.Join(reasons, ",") + `]`
}
