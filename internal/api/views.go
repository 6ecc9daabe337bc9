package api

import (
	"time"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/movimiento"
)

// The JSON bodies, as api/openapi.yaml describes them. Amounts are decimal strings, never
// JSON numbers, so no client reads money through a float; times are RFC 3339 in UTC.

// CuentaBody is an account as the API answers it (api/openapi.yaml, Cuenta); `ledger
// cuenta --json` prints the same.
type CuentaBody struct {
	Cuenta      string `json:"cuenta"`
	Saldo       string `json:"saldo"`
	Moneda      string `json:"moneda"`
	Limite      string `json:"limite"`
	Bloqueada   bool   `json:"bloqueada"`
	Retenido    string `json:"retenido"`
	Disponible  string `json:"disponible"`
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
	Remitente string `json:"remitente,omitempty"`
	Via       string `json:"via,omitempty"`

	Contrapartida string      `json:"contrapartida,omitempty"`
	Partes        []parteBody `json:"partes,omitempty"`
	Anula         string      `json:"anula,omitempty"`
	AnuladoPor    string      `json:"anulado_por,omitempty"`
	Reembolsado   string      `json:"reembolsado,omitempty"`
	Anulaciones   []string    `json:"anulaciones,omitempty"`
	Retencion     string      `json:"retencion,omitempty"`
	Expira        string      `json:"expira,omitempty"`
	CapturadaPor  string      `json:"capturada_por,omitempty"`
	LiberadaPor   string      `json:"liberada_por,omitempty"`
}

// parteBody is one part of a reparto: the credited account and what it received.
type parteBody struct {
	Cuenta  string `json:"cuenta"`
	Importe string `json:"importe"`
}

// NewCuentaBody is c as the API answers it at now: its holds that lapsed by then no
// longer count, as the next write of the account drops them.
func NewCuentaBody(c cuenta.Cuenta, now time.Time) CuentaBody {
	c = c.Vigente(now)
	return CuentaBody{
		Cuenta:      c.ID,
		Saldo:       movimiento.Texto(c.Saldo, c.Moneda),
		Moneda:      c.Moneda,
		Limite:      movimiento.Texto(c.Limite, c.Moneda),
		Bloqueada:   c.Bloqueada,
		Retenido:    movimiento.Texto(c.Retenido(), c.Moneda),
		Disponible:  movimiento.Texto(c.Disponible(), c.Moneda),
		Version:     c.Version,
		Movimientos: c.Movimientos,
		Actualizada: movimiento.Timestamp(c.Actualizada),
	}
}

// newMovimientoBody is a as the API answers it at now: a hold still held past its
// expira reads expirada.
func newMovimientoBody(a movimiento.Apunte, now time.Time) movimientoBody {
	m := a.Movimiento
	b := movimientoBody{
		ID:        m.ID,
		Cuenta:    m.Cuenta,
		Tipo:      string(m.Tipo),
		Importe:   movimiento.Texto(m.Importe, m.Moneda),
		Moneda:    m.Moneda,
		Concepto:  m.Concepto,
		Fecha:     movimiento.ServedFecha(m.Fecha),
		Estado:    string(a.EstadoAt(now)),
		Aplicado:  movimiento.Timestamp(a.Aplicado),
		Remitente: a.Remitente,
		Via:       a.Via,

		Contrapartida: a.Contrapartida,
		Anula:         m.Anula,
		AnuladoPor:    a.AnuladoPor,
		Retencion:     m.Retencion,
		CapturadaPor:  a.CapturadaPor,
		LiberadaPor:   a.LiberadaPor,
		Anulaciones:   a.Anulaciones,
	}
	for _, p := range a.Partes {
		b.Partes = append(b.Partes, parteBody{Cuenta: p.Cuenta, Importe: movimiento.Texto(p.Importe, m.Moneda)})
	}
	if a.Reembolsado.Sign() != 0 {
		b.Reembolsado = movimiento.Texto(a.Reembolsado, m.Moneda)
	}
	switch {
	case a.Posted():
		b.Seq, b.SaldoTras = a.Seq, movimiento.Texto(a.SaldoTras, m.Moneda)
	case a.Estado == movimiento.Rechazado:
		b.Motivo = a.Motivo
	}
	if !m.Expira.IsZero() {
		b.Expira = movimiento.Timestamp(m.Expira)
	}
	return b
}
