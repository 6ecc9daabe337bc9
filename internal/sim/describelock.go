package sim

import (
	"net/http"
	"strings"
	"sync"
)

// describeLock keeps minidyn's DescribeTable apart from every other request: minidyn
// answers it from the table's item counts without taking the lock its other operations
// hold, a data race with any concurrent write (and numericOrder describes the table of
// every Query it re-pages). DescribeTable waits for the requests in progress and holds
// the others back; the rest run as concurrently as minidyn lets them.
type describeLock struct {
	mu   *sync.RWMutex
	next http.Handler
}

func (h describeLock) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".DescribeTable") {
		h.mu.Lock()
		defer h.mu.Unlock()
	} else {
		h.mu.RLock()
		defer h.mu.RUnlock()
	}
	h.next.ServeHTTP(w, r)
}
