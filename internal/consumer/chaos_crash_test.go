package consumer_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync/atomic"
)

// crashKey marks a batch's context with its crash point.
type crashKey struct{}

// crashPoint kills an invocation at its left-th DynamoDB call: that call reaches the
// server (it may commit), then the invocation's context is cancelled, as if the
// process died before reading the answer; no later call of the batch is sent.
type crashPoint struct {
	left   atomic.Int32
	cancel context.CancelFunc
	fired  atomic.Bool
}

// errCrashed is the answer the dying process never read.
var errCrashed = errors.New("chaos: the invocation died after sending this call")

// crashing is the RoundTripper that carries out crash points; calls of batches without
// one pass through.
type crashing struct{ base http.RoundTripper }

func (c crashing) RoundTrip(req *http.Request) (*http.Response, error) {
	cp, _ := req.Context().Value(crashKey{}).(*crashPoint)
	if cp == nil || cp.left.Add(-1) != 0 {
		return c.base.RoundTrip(req)
	}
	resp, err := c.base.RoundTrip(req)
	if err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	}
	cp.fired.Store(true)
	cp.cancel()
	return nil, errCrashed
}
