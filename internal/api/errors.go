package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/ledger-dev/ledger/internal/store"
	"github.com/ledger-dev/ledger/internal/versioned"
)

// The error codes of the body {"error": code, "message": text}. Clients branch on the
// code; the message is for people and may change.
const (
	codeBadRequest       = "bad_request"
	codeNotFound         = "not_found"
	codeNotYetOpen       = "not_yet_open" // an account at an instant before it was opened
	codeMethodNotAllowed = "method_not_allowed"
	codeInternal         = "internal"
	codeUnavailable      = "unavailable"
)

func writeError(w http.ResponseWriter, status int, code, message string) {
	writeJSON(w, status, map[string]string{"error": code, "message": message})
}

// writeJSON answers v with status. The types written here always marshal.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, _ := json.Marshal(v)
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

// fail logs a failure and answers it without revealing the cause: a 503 when the
// table was throttled or unavailable or did not answer in time, which a retry may
// cure, else a 500.
func (s *server) fail(w http.ResponseWriter, r *http.Request, err error) {
	if unavailable(err) {
		s.log.ErrorContext(r.Context(), "request failed: the table is unavailable", "method", r.Method, "path", r.URL.Path, "err", err)
		writeError(w, http.StatusServiceUnavailable, codeUnavailable, "the ledger is unavailable for the moment; retry with backoff")
		return
	}
	s.log.ErrorContext(r.Context(), "request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	writeError(w, http.StatusInternalServerError, codeInternal, "internal error; it has been logged")
}

// unavailable reports a failed read a retry may cure: DynamoDB throttled it, failed on
// its side or was unreachable, or the request's deadline passed first.
func unavailable(err error) bool {
	return versioned.Unavailable(err) || errors.Is(err, context.DeadlineExceeded)
}

// readFailed answers a failed read: notFound with a 404 when nothing is recorded,
// else a 500.
func (s *server) readFailed(w http.ResponseWriter, r *http.Request, err error, notFound string) {
	if errors.Is(err, store.ErrNotFound) {
		writeError(w, http.StatusNotFound, codeNotFound, notFound)
		return
	}
	s.fail(w, r, err)
}
