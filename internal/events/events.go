// Package events announces what the ledger table recorded, as EventBridge events: the
// table's own stream is the outbox. FromRecord turns one stream record (an item's images
// before and after a write) into the events it announces, by pure functions; Calls
// builds the PutEvents requests that carry them; Publisher sends them, retrying the
// entries EventBridge failed and only those; Handler is the Lambda's handler, which
// reports the first record it could not announce so that Lambda retries from there.
//
// "Event" is EventBridge's word and stays English; what an event says is in the
// ledger's own words (docs/design.md, "Events").
package events

import (
	"strconv"
	"time"

	"github.com/ledger-dev/ledger/internal/movimiento"
)

// Source is the source of every event the ledger publishes. Rules match on it.
const Source = "ledger"

// The detail-types: few, so that a rule names what it wants by detail-type and estado.
const (
	// DetailMovimiento announces a posted movement (estado aplicado: an abono, a cargo,
	// a transfer leg, a reversal or a capture's debit) or a recorded rejection
	// (rechazado).
	DetailMovimiento = "movimiento"
	// DetailRetencion announces a hold taken (retenida), captured (capturada), released
	// (liberada), or dropped as lapsed by a write of its account (expirada).
	DetailRetencion = "retencion"
	// DetailCuenta announces an operator's change of an account's limite or bloqueada
	// (estado administrada).
	DetailCuenta = "cuenta"
)

// Administrada is the estado of an account's administration event. Every other estado
// is a movimiento.Estado.
const Administrada = "administrada"

// Event is one announcement: its detail-type, its detail (the JSON that
// api/events.schema.json describes) and when the change was recorded, EventBridge's
// time of the event.
type Event struct {
	DetailType string
	Detail     Detail
	Time       time.Time
}

// Detail is an event's detail. EventID is the same for every publication of one fact:
// a subscriber drops repeats by it. Seq and SaldoTras are set for aplicado only, Motivo
// for rechazado only, Limite and Bloqueada for administrada only; the other fields
// where the record has them. Amounts are decimal strings in the currency's minor
// units, as the API serves them; times are RFC 3339 in UTC.
type Detail struct {
	EventID   string `json:"event_id"`
	Cuenta    string `json:"cuenta"`
	Estado    string `json:"estado"`
	Version   int64  `json:"version"`
	Aplicado  string `json:"aplicado"`
	Moneda    string `json:"moneda"`
	ID        string `json:"id,omitempty"`
	Tipo      string `json:"tipo,omitempty"`
	Importe   string `json:"importe,omitempty"`
	Seq       int64  `json:"seq,omitempty"`
	SaldoTras string `json:"saldo_tras,omitempty"`
	Motivo    string `json:"motivo,omitempty"`
	Concepto  string `json:"concepto,omitempty"`
	Fecha     string `json:"fecha,omitempty"`

	Contrapartida string `json:"contrapartida,omitempty"`
	Anula         string `json:"anula,omitempty"`
	Retencion     string `json:"retencion,omitempty"`
	Expira        string `json:"expira,omitempty"`
	CapturadaPor  string `json:"capturada_por,omitempty"`
	LiberadaPor   string `json:"liberada_por,omitempty"`

	Limite    string `json:"limite,omitempty"`
	Bloqueada *bool  `json:"bloqueada,omitempty"`
}

// detailTypes maps each event's estado to its detail-type.
var detailTypes = map[string]string{
	string(movimiento.Aplicado):  DetailMovimiento,
	string(movimiento.Rechazado): DetailMovimiento,
	string(movimiento.Retenida):  DetailRetencion,
	string(movimiento.Capturada): DetailRetencion,
	string(movimiento.Liberada):  DetailRetencion,
	string(movimiento.Expirada):  DetailRetencion,
	Administrada:                 DetailCuenta,
}

// newEvent is the event of detail d, recorded at t: its id derived from (cuenta, id,
// estado), where an administration, which has no movement id, takes its version as
// one; its detail-type from its estado; its aplicado t.
func newEvent(d Detail, t time.Time) Event {
	id := d.ID
	if d.Estado == Administrada {
		id = strconv.FormatInt(d.Version, 10)
	}
	d.EventID = EventID(d.Cuenta, id, d.Estado)
	d.Aplicado = movimiento.Timestamp(t)
	return Event{DetailType: detailTypes[d.Estado], Detail: d, Time: t.UTC()}
}
