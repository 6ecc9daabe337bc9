// Package api is the read-only balance API as one http.Handler (contract:
// api/openapi.yaml), the same behind API Gateway (cmd/ledger-api) and on net/http
// (`ledger serve`).
package api

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"path"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/items"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/store"
)

// Reader is what the API reads (*store.Reader). Cuenta and Apunte return an error
// matching store.ErrNotFound for what is not recorded.
type Reader interface {
	// Cuenta is the account id, strongly consistent.
	Cuenta(ctx context.Context, id string) (cuenta.Cuenta, error)
	// Apunte is the movement id of cuenta, applied or not, strongly consistent.
	Apunte(ctx context.Context, cuenta, id string) (movimiento.Apunte, error)
	// SaldoEn is the balance of cuenta at instant en; an instant before it was opened
	// matches store.ErrNotYetOpen.
	SaldoEn(ctx context.Context, cuenta string, en time.Time) (store.SaldoEn, error)
	// Rango is the stretch of cuenta's statement posted in [desde, hasta); a zero time
	// leaves its side open.
	Rango(ctx context.Context, cuenta string, desde, hasta time.Time) (store.SeqRange, error)
	// ExtractoRango is at most limit (1–MaxLimit) applied movements of cuenta within
	// rango, in order; the bool says others remain in rango past them.
	ExtractoRango(ctx context.Context, cuenta string, limit int, rango store.SeqRange, order store.Order) ([]movimiento.Apunte, bool, error)
}

// The `limit` query parameter's default and maximum; the maximum keeps one response
// well inside API Gateway's and Lambda's payload limits.
const (
	DefaultLimit = 50
	MaxLimit     = 200
)

// requestTimeout bounds the reads behind one request, well inside API Gateway's 30 s.
// answerReserve is kept back from a shorter deadline the request brings (a Lambda
// invocation's): time to answer a failure with the API's own 500, and log it, before
// the function is stopped.
const (
	requestTimeout = 10 * time.Second
	answerReserve  = time.Second
)

// allowed is every route's Allow header: GET, and HEAD, which net/http serves with it.
const allowed = "GET, HEAD"

// maxCuentaLen and maxIDLen bound the account and the movement id on the API's paths,
// in characters as api/openapi.yaml's maxLength counts them: as many characters as the
// longest ids the table's keys can hold have bytes (items.MaxCuentaBytes, 2,041;
// items.MaxIDBytes, 1,020). Ids are not held to the message rules: any id up to
// these is looked up as stored data is read, so every stored id is found; a longer one
// can never have been stored and is a 400.
const (
	maxCuentaLen = items.MaxCuentaBytes
	maxIDLen     = items.MaxIDBytes
)

// New returns the API's handler, reading through r and logging every unexpected
// failure to logger (nil: discarded).
func New(r Reader, logger *slog.Logger) http.Handler {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &server{reader: r, log: logger}
	mux := http.NewServeMux()
	for path, get := range map[string]func(http.ResponseWriter, *http.Request, string){
		"/cuentas/{cuenta}":                  s.cuenta,
		"/cuentas/{cuenta}/movimientos":      s.extracto,
		"/cuentas/{cuenta}/movimientos/{id}": s.movimiento,
	} {
		mux.HandleFunc("GET "+path, func(w http.ResponseWriter, r *http.Request) {
			cuenta := r.PathValue("cuenta")
			if tooLong(w, "cuenta", cuenta, maxCuentaLen) {
				return
			}
			get(w, r, cuenta)
		})
		mux.HandleFunc(path, s.methodNotAllowed) // every other method: a JSON 405
	}
	mux.HandleFunc("/", s.notFound)
	return s.wrap(mux)
}

type server struct {
	reader Reader
	log    *slog.Logger
}

// wrap sets the headers every response carries, bounds the request's reads in time,
// answers a path that is not in canonical form with a 404 (ServeMux would redirect
// with an HTML body, or answer `*` with an empty 400), drops the body of an answer to
// HEAD (API Gateway passes on what the handler writes), and turns a panic into a
// logged 500.
func (s *server) wrap(mux http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Cache-Control", "no-store")
		h.Set("X-Content-Type-Options", "nosniff")
		tw := &trackingWriter{ResponseWriter: w, head: r.Method == http.MethodHead}
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				err := fmt.Errorf("api: panic: %v", v)
				if tw.wrote {
					s.log.ErrorContext(r.Context(), "request failed after the response started", "method", r.Method, "path", r.URL.Path, "err", err)
					return
				}
				s.fail(tw, r, err)
			}
		}()
		if r.RequestURI == "*" || !canonical(r.URL.EscapedPath()) {
			writeError(tw, http.StatusNotFound, codeNotFound, "path is not in canonical form")
			return
		}
		deadline := time.Now().Add(requestTimeout)
		if d, ok := r.Context().Deadline(); ok && d.Add(-answerReserve).Before(deadline) {
			deadline = d.Add(-answerReserve)
		}
		ctx, cancel := context.WithDeadline(r.Context(), deadline)
		defer cancel()
		mux.ServeHTTP(tw, r.WithContext(ctx))
	})
}

// canonical reports whether p has no empty, "." or ".." segments (a trailing slash
// aside), the way ServeMux cleans paths. A movement id "." or ".." is still reachable
// percent-encoded (%2E), as ServeMux matches the escaped path.
func canonical(p string) bool {
	c := path.Clean(p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c == p
}

// trackingWriter records whether the response has started, and writes no body when
// the request is a HEAD.
type trackingWriter struct {
	http.ResponseWriter
	head  bool
	wrote bool
}

func (w *trackingWriter) WriteHeader(code int) {
	w.wrote = true
	w.ResponseWriter.WriteHeader(code)
}

func (w *trackingWriter) Write(b []byte) (int, error) {
	w.wrote = true
	if w.head {
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

// tooLong answers a 400 and reports true when the path's value v of name has more
// than limit characters.
func tooLong(w http.ResponseWriter, name, v string, limit int) bool {
	n := utf8.RuneCountInString(v)
	if n <= limit {
		return false
	}
	writeError(w, http.StatusBadRequest, codeBadRequest, fmt.Sprintf("%s is %d characters long; at most %d are allowed", name, n, limit))
	return true
}

func (s *server) methodNotAllowed(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Allow", allowed)
	writeError(w, http.StatusMethodNotAllowed, codeMethodNotAllowed, fmt.Sprintf("method %s is not allowed here; allowed: %s", r.Method, allowed))
}

func (s *server) notFound(w http.ResponseWriter, _ *http.Request) {
	writeError(w, http.StatusNotFound, codeNotFound, "no such path; see api/openapi.yaml for the routes")
}
