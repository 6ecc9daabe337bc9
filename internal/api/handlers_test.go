package api

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/ledger"
)

// nobody is a table without accounts.
type nobody struct{}

func (nobody) Cuenta(_ context.Context, id string) (cuenta.Cuenta, error) {
	return cuenta.Cuenta{}, &ledger.NotFoundError{Cuenta: id}
}

func (nobody) Apunte(_ context.Context, c, id string) (ledger.Apunte, error) {
	return ledger.Apunte{}, &ledger.NotFoundError{Cuenta: c, ID: id}
}

func (nobody) Extracto(context.Context, string, int, int64) ([]ledger.Apunte, bool, error) {
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
