package movimiento_test

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ledger-dev/ledger/internal/movimiento"
)

// sqsID is what SQS accepts in a message group or deduplication id.
var sqsID = regexp.MustCompile("^[A-Za-z0-9!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~]{1,128}$")

// Every movement goes in the group of the account it debits or holds, and carries a
// deduplication id SQS accepts, whatever the lengths of its cuenta and id.
func TestFIFOGroupIsTheDebitedAccount(t *testing.T) {
	long := strings.Repeat("c", 64)
	expira := time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)
	for _, tc := range []struct {
		d    movimiento.Datos
		want string
	}{
		{movimiento.Datos{ID: "a", Cuenta: "ES76", Tipo: movimiento.Abono, Importe: "1.00", Moneda: "EUR"}, "ES76"},
		{movimiento.Datos{ID: "c", Cuenta: "ES76", Tipo: movimiento.Cargo, Importe: "1.00", Moneda: "EUR"}, "ES76"},
		{movimiento.Datos{ID: "t", Cuenta: "ES76", Destino: "ES91", Tipo: movimiento.Traspaso, Importe: "1.00", Moneda: "EUR"}, "ES76"},
		{movimiento.Datos{ID: "r", Cuenta: "ES76", Tipo: movimiento.Anulacion, Anula: "c"}, "ES76"},
		{movimiento.Datos{ID: "h", Cuenta: "ES76", Tipo: movimiento.Retencion, Importe: "1.00", Moneda: "EUR", Expira: expira}, "ES76"},
		{movimiento.Datos{ID: "k", Cuenta: "ES76", Tipo: movimiento.Captura, Retencion: "h"}, "ES76"},
		{movimiento.Datos{ID: "l", Cuenta: "ES76", Tipo: movimiento.Liberacion, Retencion: "h"}, "ES76"},
		{movimiento.Datos{ID: strings.Repeat("i", 128), Cuenta: long, Tipo: movimiento.Abono, Importe: "1.00", Moneda: "EUR"}, long},
	} {
		m, err := movimiento.New(tc.d)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.MessageGroup(); got != tc.want {
			t.Errorf("%s %s: group %q, want %q", m.Tipo, m.ID, got, tc.want)
		}
		for what, id := range map[string]string{"group": m.MessageGroup(), "deduplication id": m.DeduplicationID()} {
			if !sqsID.MatchString(id) {
				t.Errorf("%s %s: %s %q is not one SQS accepts", m.Tipo, m.ID, what, id)
			}
		}
	}
}

// The deduplication id is the documented hash of (cuenta, id): a producer computes the
// same, and it tells apart every key, however the two are split.
func TestDeduplicationIDIsTheKeysHash(t *testing.T) {
	mk := func(id, cta, importe string) movimiento.Movimiento {
		m, err := movimiento.New(movimiento.Datos{ID: id, Cuenta: cta, Tipo: movimiento.Abono, Importe: importe, Moneda: "EUR"})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	m := mk("pago-8f2c", "ES7620770024003102575766", "50.00")
	sum := sha256.Sum256([]byte("ES7620770024003102575766\npago-8f2c"))
	if got, want := m.DeduplicationID(), hex.EncodeToString(sum[:]); got != want {
		t.Errorf("DeduplicationID = %s, want sha256(cuenta + \"\\n\" + id) = %s", got, want)
	}
	if mk("pago-8f2c", "ES7620770024003102575766", "50").DeduplicationID() != m.DeduplicationID() {
		t.Error("a resend spelt otherwise has another deduplication id: the queue would not drop it")
	}
	seen := map[string]string{}
	for _, k := range [][2]string{{"ab", "c"}, {"a", "bc"}, {"a.b", "c"}, {"a", "b.c"}, {"ab", "d"}} {
		id := mk(k[1], k[0], "1.00").DeduplicationID()
		if other, dup := seen[id]; dup {
			t.Errorf("(%s, %s) and %s share a deduplication id", k[0], k[1], other)
		}
		seen[id] = k[0] + "/" + k[1]
	}
}
