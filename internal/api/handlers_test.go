package api

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/store"
)

// nobody is a table without accounts.
type nobody struct{}

func (nobody) Cuenta(_ context.Context, id string) (cuenta.Cuenta, error) {
	return cuenta.Cuenta{}, fmt.Errorf("account %s: %w", id, store.ErrNotFound)
}

func (nobody) Apunte(_ context.Context, c, id string) (movimiento.Apunte, error) {
	return movimiento.Apunte{}, fmt.Errorf("movement %s of %s: %w", id, c, store.ErrNotFound)
}

func (nobody) SaldoEn(_ context.Context, id string, _ time.Time) (store.SaldoEn, error) {
	return store.SaldoEn{}, fmt.Errorf("account %s: %w", id, store.ErrNotFound)
}

func (nobody) Rango(context.Context, string, time.Time, time.Time) (store.SeqRange, error) {
	return store.SeqRange{}, nil
}

func (nobody) ExtractoRango(context.Context, string, int, store.SeqRange, store.Order) ([]movimiento.Apunte, bool, error) {
	return nil, false, nil
}

// A cursor carries a checksum, not a signature: one made up for an unknown account
// still gets the account's 404, not an empty statement.
func TestAnUnknownAccountIsNotFoundOnEveryPage(t *testing.T) {
	h := New(nobody{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/cuentas/NOPE/movimientos?cursor="+encodeCursor("NOPE", 5), nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("status %d %s, want 404", rec.Code, rec.Body)
	}
}
