package movimiento

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"
)

// Huella is the movement's fingerprint, which tells a redelivery of a fact from a
// conflicting reuse of its key: lowercase hex SHA-256 of "v2" (the format's version), cuenta, id, tipo,
// importe (canonical: "50" for "50.00"), moneda, destino, anula, retencion and expira
// (UTC RFC 3339), absent ones "", then a reparto's parts (sorted "cuenta=importe"),
// joined by "\n", which none can contain. Concepto and Fecha are informational and
// left out.
func (m Movimiento) Huella() string {
	importe, expira := "", ""
	if !m.Importe.IsZero() {
		importe = m.Importe.String()
	}
	if !m.Expira.IsZero() {
		expira = m.Expira.UTC().Format(time.RFC3339Nano)
	}
	parts := []string{"v2", m.Cuenta, m.ID, string(m.Tipo), importe, m.Moneda, m.Destino, m.Anula, m.Retencion, expira}
	if len(m.Partes) > 0 { // a reparto's parts: none of the other tipos carries them
		parts = append(parts, huellaPartes(m.Partes))
	}
	return hash(parts...)
}

// hash is the lowercase hex SHA-256 of parts joined by "\n".
func hash(parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\n")))
	return hex.EncodeToString(sum[:])
}
