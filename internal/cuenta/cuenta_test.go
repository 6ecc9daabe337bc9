package cuenta

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/movimiento"
)

func mov(t *testing.T, cuenta string, tipo movimiento.Tipo, importe, moneda string) movimiento.Movimiento {
	t.Helper()
	m, err := movimiento.New(movimiento.Datos{ID: "m-" + importe, Cuenta: cuenta, Tipo: tipo, Importe: importe, Moneda: moneda})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func TestAplicarMovesTheBalanceExactly(t *testing.T) {
	c := Nueva("ES01", "EUR")
	steps := []struct {
		tipo    movimiento.Tipo
		importe string
		saldo   string
	}{
		{movimiento.Abono, "0.10", "0.10"},
		{movimiento.Abono, "0.20", "0.30"}, // 0.1 + 0.2 is exactly 0.3 here, unlike float64
		{movimiento.Cargo, "0.30", "0"},
		{movimiento.Abono, "99999999999999999.99", "99999999999999999.99"},
	}
	for i, s := range steps {
		next, err := c.Aplicar(mov(t, "ES01", s.tipo, s.importe, "EUR"))
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if !next.Saldo.Equal(dec(s.saldo)) || next.Movimientos != int64(i+1) {
			t.Fatalf("step %d: saldo %s movimientos %d, want %s and %d", i, next.Saldo, next.Movimientos, s.saldo, i+1)
		}
		c = next
	}
}

func TestAplicarLeavesTheReceiverAlone(t *testing.T) {
	c := Nueva("ES01", "EUR")
	if _, err := c.Aplicar(mov(t, "ES01", movimiento.Abono, "5", "EUR")); err != nil {
		t.Fatal(err)
	}
	if !c.Saldo.IsZero() || c.Movimientos != 0 {
		t.Errorf("receiver changed: %+v", c)
	}
}

func TestCargoRespectsTheOverdraftLimit(t *testing.T) {
	c := Nueva("ES01", "EUR")
	c.Saldo, c.Limite = dec("10"), dec("5")

	if next, err := c.Aplicar(mov(t, "ES01", movimiento.Cargo, "15.00", "EUR")); err != nil || !next.Saldo.Equal(dec("-5")) {
		t.Errorf("cargo down to -limite: %v, %v; want saldo -5", next.Saldo, err)
	}
	_, err := c.Aplicar(mov(t, "ES01", movimiento.Cargo, "15.01", "EUR"))
	var re *RuleError
	if !errors.As(err, &re) || re.Rule != SaldoInsuficiente || re.Cuenta != "ES01" || !errors.Is(err, SaldoInsuficiente) {
		t.Fatalf("err = %v, want SaldoInsuficiente on ES01", err)
	}
	if want := "cuenta ES01: insufficient funds: debit of 15.01 with balance 10.00 and overdraft limit 5.00"; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	// An abono never breaks the limit, even on an overdrawn account.
	c.Saldo = dec("-5")
	if _, err := c.Aplicar(mov(t, "ES01", movimiento.Abono, "0.01", "EUR")); err != nil {
		t.Errorf("abono on an overdrawn account: %v", err)
	}
}

func TestCurrencyMustMatch(t *testing.T) {
	_, err := Nueva("ES01", "EUR").Aplicar(mov(t, "ES01", movimiento.Abono, "5", "USD"))
	if !errors.Is(err, MonedaDistinta) || err.Error() != "cuenta ES01: movement in USD, but the account is in EUR" {
		t.Fatalf("err = %v, want MonedaDistinta EUR/USD", err)
	}
}

func TestAnotherAccountsMovementIsABug(t *testing.T) {
	var re *RuleError
	if _, err := Nueva("ES01", "EUR").Aplicar(mov(t, "ES02", movimiento.Abono, "5", "EUR")); err == nil || errors.As(err, &re) {
		t.Fatalf("err = %v, want a caller's bug, no rule", err)
	}
}

func TestBalanceStaysWithinDynamoDBPrecision(t *testing.T) {
	nines := strings.Repeat("9", 36)
	c := Nueva("ES01", "EUR")
	c.Saldo = dec(nines + ".98")
	if _, err := c.Aplicar(mov(t, "ES01", movimiento.Abono, "0.01", "EUR")); err != nil {
		t.Errorf("a 38-digit balance must fit: %v", err)
	}
	c.Saldo = dec(nines + ".99")
	_, err := c.Aplicar(mov(t, "ES01", movimiento.Abono, "0.02", "EUR")) // 1e36 + 0.01: 39 digits
	if !errors.Is(err, Precision) {
		t.Fatalf("err = %v, want Precision", err)
	}
}

func TestDigits(t *testing.T) {
	for s, want := range map[string]int{"0": 1, "0.05": 1, "100.00": 3, "-12.340": 4, "1234567890123456.78": 18} {
		if got := digits(dec(s)); got != want {
			t.Errorf("digits(%s) = %d, want %d", s, got, want)
		}
	}
}

func TestAFrozenAccountTakesCreditsButNoDebit(t *testing.T) {
	c := Nueva("ES01", "EUR")
	c.Saldo, c.Bloqueada = dec("100"), true
	_, err := c.Mover(dec("-1"), "EUR")
	if !errors.Is(err, CuentaBloqueada) || !CuentaBloqueada.Transient() {
		t.Fatalf("debit of a frozen account: %v, want CuentaBloqueada, which may lift", err)
	}
	if next, err := c.Mover(dec("5"), "EUR"); err != nil || !next.Saldo.Equal(dec("105")) || !next.Bloqueada {
		t.Fatalf("credit of a frozen account: %+v, %v; want it applied and the account still frozen", next, err)
	}
	c.Bloqueada = false
	if _, err := c.Mover(dec("-100.01"), "EUR"); !errors.Is(err, SaldoInsuficiente) || !SaldoInsuficiente.Transient() {
		t.Errorf("insufficient funds: %v, want SaldoInsuficiente, which may lift", err)
	}
}

func TestConLimiteChecksTheLimit(t *testing.T) {
	c := Nueva("ES01", "EUR")
	for _, ok := range []string{"0", "100", "100.50", "100.500"} {
		if next, err := c.ConLimite(dec(ok)); err != nil || !next.Limite.Equal(dec(ok)) {
			t.Errorf("limite %s: %+v, %v", ok, next.Limite, err)
		}
	}
	for bad, rule := range map[string]Rule{"-1": LimiteNegativo, "0.001": LimiteDecimales, "1" + strings.Repeat("0", MaxDigits): LimiteDigitos} {
		if _, err := c.ConLimite(dec(bad)); !errors.Is(err, rule) || rule.Transient() {
			t.Errorf("limite %s: err = %v, want refused: %s", bad, err, rule)
		}
	}
	if c.Limite.Sign() != 0 {
		t.Error("ConLimite changed the receiver")
	}
}

func TestHoldsReserveFundsAndLapse(t *testing.T) {
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	c := Nueva("ES01", "EUR")
	c.Saldo, c.Limite = dec("100"), dec("10")
	held, err := c.Retener("aut", dec("60"), "EUR", now.Add(time.Hour), now)
	if err != nil || !held.Retenido().Equal(dec("60")) || !held.Disponible().Equal(dec("50")) || !held.Saldo.Equal(dec("100")) || held.Movimientos != 0 {
		t.Fatalf("hold: %+v, %v; want 60 held, 50 available, saldo untouched", held, err)
	}
	if len(c.Retenciones) != 0 {
		t.Fatal("Retener changed the receiver's holds")
	}
	if _, err := held.Mover(dec("-50.01"), "EUR"); !errors.Is(err, SaldoInsuficiente) {
		t.Errorf("a debit beyond disponible: %v", err)
	}
	captured, err := held.Capturar("aut", dec("60"), dec("45"))
	if err != nil || !captured.Saldo.Equal(dec("55")) || captured.Retenido().Sign() != 0 || captured.Movimientos != 1 {
		t.Errorf("capture of 45: %+v, %v; want saldo 55, nothing held", captured, err)
	}
	if _, err := held.Capturar("aut", dec("60"), dec("60.01")); !errors.Is(err, CapturaExcesiva) || !strings.Contains(err.Error(), "hold aut") {
		t.Errorf("a capture over the hold: %v", err)
	}
	if _, err := held.Capturar("aut", dec("60"), dec("10.001")); !errors.Is(err, DecimalesRetencion) {
		t.Errorf("a capture finer than EUR's cents: %v", err)
	}
	lapsed := held.Vigente(now.Add(time.Hour))
	if lapsed.Retenido().Sign() != 0 || held.Retenido().Sign() == 0 {
		t.Errorf("at expira the hold lapses (and the receiver keeps it): %v / %v", lapsed.Retenido(), held.Retenido())
	}
	if after, err := lapsed.Capturar("aut", dec("60"), dec("60")); !errors.Is(err, RetencionInactiva) || !after.Saldo.Equal(dec("100")) {
		t.Errorf("a capture of a hold already dropped: %+v, %v; want refused, saldo untouched", after, err)
	}
	for name, tc := range map[string]struct {
		expira time.Time
		rule   Rule
	}{"now": {now, ExpiraPasada}, "31 days": {now.Add(31 * 24 * time.Hour), ExpiraLejana}} {
		if _, err := c.Retener("x", dec("1"), "EUR", tc.expira, now); !errors.Is(err, tc.rule) {
			t.Errorf("expira %s: %v, want refused: %s", name, err, tc.rule)
		}
	}
	c.Bloqueada = true
	if _, err := c.Retener("y", dec("1"), "EUR", now.Add(time.Hour), now); !errors.Is(err, CuentaBloqueada) {
		t.Errorf("a hold on a frozen account: %v", err)
	}
}

// The reason a refused debit is parked or rejected with is read by people: amounts in
// the currency's minor units, the hold named when there is one.
func TestInsufficientFundsSaysItInTheCurrencysUnits(t *testing.T) {
	for _, tc := range []struct {
		moneda, saldo, retenido, importe, want string
	}{
		{"EUR", "700", "0", "9000", "cuenta C: insufficient funds: debit of 9000.00 with balance 700.00 and overdraft limit 0.00"},
		{"JPY", "700", "200", "600", "cuenta C: insufficient funds: debit of 600 with balance 700 and overdraft limit 0, 200 held"},
		{"KWD", "1.5", "0", "2", "cuenta C: insufficient funds: debit of 2.000 with balance 1.500 and overdraft limit 0.000"},
	} {
		c := Nueva("C", tc.moneda)
		c.Saldo = dec(tc.saldo)
		if !dec(tc.retenido).IsZero() {
			var err error
			if c, err = c.Retener("aut", dec(tc.retenido), tc.moneda, time.Now().Add(time.Hour), time.Now()); err != nil {
				t.Fatal(err)
			}
		}
		_, err := c.Mover(dec(tc.importe).Neg(), tc.moneda)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: %v, want %q", tc.moneda, err, tc.want)
		}
	}
}
