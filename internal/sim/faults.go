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

// The faults the transport can inject.
const (
	// InternalError answers 500 InternalServerError without sending the call.
	InternalError Fault = iota + 1
	// Throttling answers 400 ThrottlingException without sending the call.
	Throttling
	// TransactionConflict answers a TransactWriteItems with TransactionCanceledException
	// whose reasons are all TransactionConflict, without sending it.
	TransactionConflict
	// LostResponse sends the call, lets the server commit it, then fails as if the
	// connection dropped before the answer arrived.
	LostResponse
	// Validation answers 400 ValidationException without sending the call: a request
	// DynamoDB can never accept (a number beyond 38 digits, an item over 400 KB).
	Validation
	// ValidationCancelled answers a TransactWriteItems with TransactionCanceledException
	// whose first reason is ValidationError, without sending it.
	ValidationCancelled
	// NotFound answers 400 ResourceNotFoundException without sending the call, as
	// DescribeTable may right after CreateTable on DynamoDB.
	NotFound
)

func (f Fault) String() string {
	switch f {
	case InternalError:
		return "5xx"
	case Throttling:
		return "throttling"
	case TransactionConflict:
		return "transaction-conflict"
	case LostResponse:
		return "lost-response"
	case Validation:
		return "validation"
	case ValidationCancelled:
		return "validation-cancelled"
	case NotFound:
		return "not-found"
	}
	return fmt.Sprintf("fault(%d)", int(f))
}

// ErrLostResponse is the transport error a LostResponse fault produces. The SDK treats
// it as a connection error and retries the call, as it would in production.
var ErrLostResponse = errors.New("sim: connection lost after the request was sent")

// Transport injects DynamoDB failures into the real SDK's HTTP traffic, for tests and
// for `ledger compare`: an http.RoundTripper that can answer a call with an error before
// it reaches the server (5xx, throttling, a cancelled transaction, a validation error, a
// table not found) or forward it and
// then lose the response (the write committed, the caller never hears so). It also
// counts calls per operation, which is how the comparison measures calls per movement.
// The zero value is not usable; use NewTransport.
type Transport struct {
	base http.RoundTripper

	mu       sync.Mutex
	pending  map[string][]Fault // op → faults to inject on its next calls, in order
	chooser  func(op string) Fault
	calls    map[string]int
	injected map[Fault]int
	rtt      time.Duration
}

// NewTransport wraps base (when nil, a connection pool of its own, so that connections a
// LostResponse fault abandoned are never reused by another client).
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

// SetChooser installs a function asked for every call that has no queued fault: it
// returns the fault to inject, or 0 for none. Randomised tests use it with a seeded
// source; it must be safe for concurrent use.
func (t *Transport) SetChooser(choose func(op string) Fault) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.chooser = choose
}

// SetRoundTrip makes every call take at least d, simulating a network round trip. On
// DynamoDB a round trip includes the service's own time, so a local emulator's
// processing counts toward d instead of being added to it: only an emulator slower
// than d shows through.
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
		return nil, ErrLostResponse
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
// code for every action of a transaction conflict, code for the first and None for the
// rest otherwise. It reads the request's body, which is not sent anywhere else.
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
