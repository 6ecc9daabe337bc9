package api

import (
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/ledger"
	"github.com/ledger-dev/ledger/internal/movimiento"
)

// The JSON bodies, as api/openapi.yaml describes them. Amounts are decimal strings,
// never JSON numbers, so no client reads money through a float; times are RFC 3339 in
// UTC.

// CuentaBody is an account as the API answers it (api/openapi.yaml, Cuenta); `ledger
// cuenta --json` prints the same.
type CuentaBody struct {
	Cuenta      string `json:"cuenta"`
	Saldo       string `json:"saldo"`
	Moneda      string `json:"moneda"`
	Limite      string `json:"limite"`
	Bloqueada   bool   `json:"bloqueada"`
	Version     int64  `json:"version"`
	Movimientos int64  `json:"movimientos"`
	Actualizada string `json:"actualizada"`
}

type extractoBody struct {
	Cuenta      string           `json:"cuenta"`
	Movimientos []movimientoBody `json:"movimientos"`
	Cursor      string           `json:"cursor,omitempty"`
}

// movimientoBody is a recorded movement. Seq and SaldoTras are set only for an applied
// one, Motivo only for a rejected one; Fecha is the producer's, as it was sent.
// Contrapartida is a transfer leg's other account, Anula the movement a reversal undoes,
// AnuladoPor the reversal that undid this one.
type movimientoBody struct {
	ID        string `json:"id"`
	Cuenta    string `json:"cuenta"`
	Tipo      string `json:"tipo"`
	Importe   string `json:"importe"`
	Moneda    string `json:"moneda"`
	Concepto  string `json:"concepto,omitempty"`
	Fecha     string `json:"fecha,omitempty"`
	Estado    string `json:"estado"`
	Seq       int64  `json:"seq,omitempty"`
	SaldoTras string `json:"saldo_tras,omitempty"`
	Motivo    string `json:"motivo,omitempty"`
	Aplicado  string `json:"aplicado"`

	Contrapartida string `json:"contrapartida,omitempty"`
	Anula         string `json:"anula,omitempty"`
	AnuladoPor    string `json:"anulado_por,omitempty"`
}

// NewCuentaBody is c as the API answers it.
func NewCuentaBody(c cuenta.Cuenta) CuentaBody {
	return CuentaBody{
		Cuenta:      c.ID,
		Saldo:       amount(c.Saldo, c.Moneda),
		Moneda:      c.Moneda,
		Limite:      amount(c.Limite, c.Moneda),
		Bloqueada:   c.Bloqueada,
		Version:     c.Version,
		Movimientos: c.Movimientos,
		Actualizada: timestamp(c.Actualizada),
	}
}

func newMovimientoBody(a ledger.Apunte) movimientoBody {
	m := a.Movimiento
	b := movimientoBody{
		ID:       m.ID,
		Cuenta:   m.Cuenta,
		Tipo:     string(m.Tipo),
		Importe:  amount(m.Importe, m.Moneda),
		Moneda:   m.Moneda,
		Concepto: m.Concepto,
		Fecha:    m.Fecha,
		Estado:   string(a.Estado),
		Aplicado: timestamp(a.Aplicado),

		Contrapartida: a.Contrapartida,
		Anula:         m.Anula,
		AnuladoPor:    a.AnuladoPor,
	}
	switch a.Estado {
	case ledger.Aplicado:
		b.Seq, b.SaldoTras = a.Seq, amount(a.SaldoTras, m.Moneda)
	case ledger.Rechazado:
		b.Motivo = a.Motivo
	}
	return b
}

// amount writes d with the currency's minor units: "50.00" (EUR), "5000" (JPY),
// "1.500" (KWD). A value with more decimals than that, which the ledger never stores,
// is written exactly rather than rounded: money is never rounded away silently.
func amount(d decimal.Decimal, moneda string) string {
	units, ok := movimiento.MinorUnits(moneda)
	if !ok || !d.Equal(d.Round(units)) {
		return d.String()
	}
	return d.StringFixed(units)
}

func timestamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
