package cuenta

import (
	"testing"
	"time"

	"github.com/ledger-dev/ledger/internal/movimiento"
)

func TestAplicadoEnIsNeverEarlierThanAnAccountsLast(t *testing.T) {
	at := func(d time.Duration) Cuenta { return Cuenta{Aplicado: now.Add(d)} }
	for _, tc := range []struct {
		name    string
		cuentas []Cuenta
		want    time.Time
	}{
		{"no account yet", nil, now},
		{"an account that never kept one", []Cuenta{{}}, now},
		{"the account's last is earlier", []Cuenta{at(-time.Second)}, now},
		{"the account's last is the same instant", []Cuenta{at(0)}, now},
		{"the account's last is later: a clock ran ahead", []Cuenta{at(time.Second)}, now.Add(time.Second)},
		{"the latest of two accounts", []Cuenta{at(time.Millisecond), at(2 * time.Millisecond)}, now.Add(2 * time.Millisecond)},
	} {
		if got := AplicadoEn(now, tc.cuentas...); !got.Equal(tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// Decide stamps every record it creates, and every account it writes, at AplicadoEn:
// a consumer whose clock is behind never stamps a movement before its account's last.
func TestDecideStampsNeverEarlierThanTheAccountsLast(t *testing.T) {
	ahead := now.Add(3 * time.Second)
	a := account(t, "A", "100", "", now)
	a.Aplicado = ahead
	b := account(t, "B", "0", "", now)
	b.Aplicado = now.Add(5 * time.Second)
	cargo := movD(t, movimiento.Datos{ID: "c", Cuenta: "A", Tipo: movimiento.Cargo, Importe: "10.00", Moneda: "EUR"})
	big := movD(t, movimiento.Datos{ID: "x", Cuenta: "A", Tipo: movimiento.Cargo, Importe: "900.00", Moneda: "EUR"})
	tr := movD(t, movimiento.Datos{ID: "t", Cuenta: "A", Tipo: movimiento.Traspaso, Destino: "B", Importe: "30.00", Moneda: "EUR"})
	nuevo := movD(t, movimiento.Datos{ID: "n", Cuenta: "N", Tipo: movimiento.Abono, Importe: "1.00", Moneda: "EUR"})
	for _, tc := range []struct {
		name string
		in   Input
		want time.Time
	}{
		{"behind the account's last", Input{Mov: cargo, Cuentas: map[string]*Cuenta{"A": a}}, ahead},
		{"a rejected debit too", Input{Mov: big, Cuentas: map[string]*Cuenta{"A": a}, Funds: Reject}, ahead},
		{"a transfer: both legs at the later account's", Input{Mov: tr, Cuentas: map[string]*Cuenta{"A": a, "B": b}}, b.Aplicado},
		{"a new account: the clock", Input{Mov: nuevo}, now},
	} {
		tc.in.Now = now
		d := Decide(tc.in)
		if d.Err != nil || len(d.Apuntes) == 0 {
			t.Fatalf("%s: %+v", tc.name, d)
		}
		for _, rec := range d.Apuntes {
			if !rec.Aplicado.Equal(tc.want) {
				t.Errorf("%s: %s on %s stamped %v, want %v", tc.name, rec.Movimiento.ID, rec.Movimiento.Cuenta, rec.Aplicado, tc.want)
			}
		}
		for _, c := range d.Cuentas {
			if !c.Aplicado.Equal(tc.want) {
				t.Errorf("%s: account %s keeps %v as its last, want %v", tc.name, c.ID, c.Aplicado, tc.want)
			}
		}
	}
}
