package sim

import (
	"encoding/json"
	"time"

	"github.com/ledger-dev/ledger/internal/movimiento"
)

// Body is m as a queue message body, in the wire format movimiento.Parse reads.
func Body(m movimiento.Movimiento) string {
	return mustJSON(wire(m, m.ImporteTexto()))
}

// SNSEnvelope is body as SNS delivers it to a queue without raw message delivery: a
// Notification, under SNS's message id snsID, whose Message is body.
func SNSEnvelope(snsID, body string) string {
	return mustJSON(map[string]string{
		"Type":      "Notification",
		"MessageId": snsID,
		"TopicArn":  "arn:aws:sns:us-east-1:123456789012:movimientos",
		"Message":   body,
	})
}

// wire is m's message members, with importe as given; members m does not carry are
// left out. A reparto's parts are a list of objects, each with its cuenta and importe.
func wire(m movimiento.Movimiento, importe string) map[string]any {
	out := map[string]any{"id": m.ID, "cuenta": m.Cuenta, "tipo": string(m.Tipo)}
	for name, v := range map[string]string{"importe": importe, "moneda": m.Moneda, "concepto": m.Concepto, "fecha": m.Fecha,
		"destino": m.Destino, "anula": m.Anula, "retencion": m.Retencion} {
		if v != "" {
			out[name] = v
		}
	}
	if !m.Expira.IsZero() {
		out["expira"] = m.Expira.UTC().Format(time.RFC3339)
	}
	if len(m.Partes) > 0 {
		partes := make([]map[string]string, len(m.Partes))
		for i, p := range m.Partes {
			partes[i] = map[string]string{"cuenta": p.Cuenta, "importe": movimiento.Texto(p.Importe, m.Moneda)}
		}
		out["partes"] = partes
	}
	return out
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // maps of strings and lists of them always marshal
	}
	return string(b)
}
