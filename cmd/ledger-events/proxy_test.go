package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	"github.com/ledger-dev/ledger/internal/testenv"
)

// fault is what the proxy does to one PutEvents call.
type fault int

const (
	pass    fault = iota // forwarded as it is
	partial              // some entries failed (ThrottlingException, InternalFailure), the rest forwarded
	total                // answered 500 InternalException, nothing forwarded
	crash                // forwarded, then the function killed before it hears the answer
	outage               // the first of OutageCalls calls answered as total
)

// faults are the shares of PutEvents calls given each fault, the most crashes, and an
// outage: once, the OutageCalls calls from the OutageAt-th fail whole, more than the
// SDK's and the publisher's retries together, so a batch comes back unannounced.
// Crashes come after the outage, so that it meets events not yet published.
type faults struct {
	Partial, Total, Crash float64
	MaxCrashes            int
	OutageAt, OutageCalls int
	Seed                  uint64
}

// proxy is EventBridge on moto seen through a fault injector: the events function's
// AWS_ENDPOINT_URL_EVENTBRIDGE. moto cannot fail entries on request, so the proxy does:
// a failed entry is never forwarded, a crashed call's entries are (they reached the
// bus; the function never learns it). It counts the calls and what it did to them.
type proxy struct {
	url    string
	moto   string
	fn     *testenv.Function // set once the function runs, for crashes
	mu     sync.Mutex
	rng    *rand.Rand
	faults faults
	calls  int
	done   map[fault]int
	// noCrash counts crashes drawn that found no runtime process to kill.
	noCrash int
}

// newProxy starts a proxy in front of moto at motoURL, injecting f, until t ends.
func newProxy(t *testing.T, motoURL string, f faults) *proxy {
	p := &proxy{moto: motoURL, faults: f, rng: rand.New(rand.NewPCG(f.Seed, 0x70726f7879)), done: map[fault]int{}}
	srv := httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(srv.Close)
	p.url = srv.URL
	return p
}

// choose draws the fault of the next call.
func (p *proxy) choose() fault {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls++
	f, x := pass, p.rng.Float64()
	switch {
	case p.faults.OutageAt > 0 && p.calls >= p.faults.OutageAt && p.calls < p.faults.OutageAt+p.faults.OutageCalls:
		f = outage
	case x < p.faults.Crash && p.done[crash] < p.faults.MaxCrashes && p.fn != nil && p.calls > p.faults.OutageAt+p.faults.OutageCalls:
		f = crash
	case x < p.faults.Crash+p.faults.Total:
		f = total
	case x < p.faults.Crash+p.faults.Total+p.faults.Partial:
		f = partial
	}
	p.done[f]++
	return f
}

// putEvents is PutEvents' JSON body, as far as the proxy reads it.
type putEvents struct {
	Entries []json.RawMessage
}

func (p *proxy) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	if r.Header.Get("X-Amz-Target") != "AWSEvents.PutEvents" {
		p.forward(w, r, body)
		return
	}
	switch p.choose() {
	case total, outage:
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`{"__type":"InternalException","message":"injected"}`))
	case partial:
		p.partial(w, r, body)
	case crash: // the events reach the bus; the function dies before it hears so
		p.forward(httptest.NewRecorder(), r, body)
		if killed, err := p.fn.Crash(); err != nil || killed == 0 {
			p.mu.Lock()
			p.noCrash++
			p.mu.Unlock()
		}
		http.Error(w, "the function was killed", http.StatusBadGateway)
	default:
		p.forward(w, r, body)
	}
}

// partial fails about a third of the call's entries, chosen at random, forwards the
// rest to moto, and answers for all of them in their order, as EventBridge does.
func (p *proxy) partial(w http.ResponseWriter, r *http.Request, body []byte) {
	var in putEvents
	if err := json.Unmarshal(body, &in); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	failed := make([]string, len(in.Entries))
	var kept []json.RawMessage
	p.mu.Lock()
	for i, e := range in.Entries {
		switch p.rng.IntN(6) {
		case 0:
			failed[i] = "ThrottlingException"
		case 1:
			failed[i] = "InternalFailure"
		default:
			kept = append(kept, e)
		}
	}
	p.mu.Unlock()
	var answer struct{ Entries []map[string]any }
	if len(kept) > 0 {
		fwd, _ := json.Marshal(putEvents{Entries: kept})
		rec := httptest.NewRecorder()
		p.forward(rec, r, fwd)
		if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &answer) != nil || len(answer.Entries) != len(kept) {
			http.Error(w, "moto: "+rec.Body.String(), http.StatusBadGateway)
			return
		}
	}
	entries := make([]map[string]any, len(failed))
	n := 0
	for i, code := range failed {
		if code == "" { // moto answered for the kept entries in their order
			entries[i], answer.Entries = answer.Entries[0], answer.Entries[1:]
			continue
		}
		entries[i] = map[string]any{"ErrorCode": code, "ErrorMessage": "injected"}
		n++
	}
	raw, _ := json.Marshal(map[string]any{"FailedEntryCount": n, "Entries": entries})
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	_, _ = w.Write(raw)
}

// forward sends the request, with body, to moto and copies the answer to w.
func (p *proxy) forward(w http.ResponseWriter, r *http.Request, body []byte) {
	req, err := http.NewRequestWithContext(r.Context(), r.Method, p.moto+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	req.Header = r.Header.Clone()
	req.Header.Set("Content-Length", strconv.Itoa(len(body)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

// String reports what the proxy did.
func (p *proxy) String() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return fmt.Sprintf("%d PutEvents calls: %d passed, %d partly failed, %d failed whole, %d in an outage, %d crashed the function",
		p.calls, p.done[pass], p.done[partial], p.done[total], p.done[outage], p.done[crash])
}
