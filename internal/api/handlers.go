package api

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/ledger-dev/ledger/internal/store"
)

// cuenta answers GET /cuentas/{cuenta}: the balance, read strongly consistently; with
// en, the balance at that instant.
func (s *server) cuenta(w http.ResponseWriter, r *http.Request, id string) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		writeError(w, http.StatusBadRequest, codeBadRequest, "the query string is malformed")
		return
	}
	if q.Has("en") {
		s.saldoEn(w, r, id, q)
		return
	}
	c, err := s.reader.Cuenta(r.Context(), id)
	if err != nil {
		s.readFailed(w, r, err, fmt.Sprintf("account %s not found", id))
		return
	}
	writeJSON(w, http.StatusOK, NewCuentaBody(c, time.Now()))
}

// movimiento answers GET /cuentas/{cuenta}/movimientos/{id}: one recorded movement,
// applied or rejected, read strongly consistently.
func (s *server) movimiento(w http.ResponseWriter, r *http.Request, cuenta string) {
	id := r.PathValue("id")
	if tooLong(w, "id", id, maxIDLen) {
		return
	}
	a, err := s.reader.Apunte(r.Context(), cuenta, id)
	if err != nil {
		s.readFailed(w, r, err, fmt.Sprintf("account %s has no movement %s", cuenta, id))
		return
	}
	writeJSON(w, http.StatusOK, newMovimientoBody(a, time.Now()))
}

// extracto answers GET /cuentas/{cuenta}/movimientos: a page of the statement, newest
// first, within [desde, hasta) when they are given, with a cursor for the next page
// when there is one.
func (s *server) extracto(w http.ResponseWriter, r *http.Request, cuenta string) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		writeError(w, http.StatusBadRequest, codeBadRequest, "the query string is malformed")
		return
	}
	limit, before, msg := pageParams(q, cuenta)
	if msg != "" {
		writeError(w, http.StatusBadRequest, codeBadRequest, msg)
		return
	}
	desde, hasta, msg := rangeParams(q)
	if msg != "" {
		writeError(w, http.StatusBadRequest, codeBadRequest, msg)
		return
	}
	var rango store.SeqRange
	if !desde.IsZero() || !hasta.IsZero() {
		if rango, err = s.reader.Rango(r.Context(), cuenta, desde, hasta); err != nil {
			s.fail(w, r, err)
			return
		}
	}
	movs, more, err := s.reader.ExtractoRango(r.Context(), cuenta, limit, rango.Below(before), store.NewestFirst)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if len(movs) == 0 {
		// An empty page: an unknown account is a 404, not an empty statement.
		if _, err := s.reader.Cuenta(r.Context(), cuenta); err != nil {
			s.readFailed(w, r, err, fmt.Sprintf("account %s not found", cuenta))
			return
		}
	}
	body := extractoBody{Cuenta: cuenta, Movimientos: make([]movimientoBody, 0, len(movs))}
	for _, a := range movs {
		body.Movimientos = append(body.Movimientos, newMovimientoBody(a, time.Now()))
	}
	if more {
		body.Cursor = encodeCursor(cuenta, movs[len(movs)-1].Seq)
	}
	writeJSON(w, http.StatusOK, body)
}

// pageParams reads limit (DefaultLimit when absent) and cursor (before is 0 when
// absent) from the query; msg says what is wrong, if anything.
func pageParams(q url.Values, cuenta string) (limit int, before int64, msg string) {
	limit = DefaultLimit
	if vs, ok := q["limit"]; ok {
		n, err := strconv.Atoi(vs[0])
		if len(vs) > 1 || err != nil || n < 1 || n > MaxLimit {
			return 0, 0, fmt.Sprintf("limit must be one integer from 1 to %d", MaxLimit)
		}
		limit = n
	}
	if vs, ok := q["cursor"]; ok {
		if len(vs) > 1 {
			return 0, 0, "cursor must be given once"
		}
		seq, err := decodeCursor(vs[0], cuenta)
		if err != nil {
			return 0, 0, err.Error() + "; start the statement again without one"
		}
		before = seq
	}
	return limit, before, ""
}
