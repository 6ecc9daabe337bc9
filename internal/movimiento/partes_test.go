package movimiento

import (
	"fmt"
	"strings"
	"testing"
)

// reparto is a reparto body of total EUR from A to parts, each "cuenta:importe".
func reparto(total string, parts ...string) string {
	var ps []string
	for _, p := range parts {
		c, i, _ := strings.Cut(p, ":")
		ps = append(ps, fmt.Sprintf(`{"cuenta":%q,"importe":%s}`, c, i))
	}
	return `{"id":"p1","cuenta":"A","tipo":"reparto","importe":"` + total + `","moneda":"EUR","partes":[` + strings.Join(ps, ",") + `]}`
}

func TestAReparto(t *testing.T) {
	m, err := Parse([]byte(reparto("100.00", `B:"90.00"`, `C:8.50`, `D:"1.50"`)))
	if err != nil || m.Tipo != Reparto || len(m.Partes) != 3 || m.Partes[1].Cuenta != "C" || m.Partes[1].Importe.String() != "8.5" {
		t.Fatalf("%+v, %v; want three parts, C's 8.50 read from a JSON number", m, err)
	}
	same, _ := Parse([]byte(reparto("100.00", `D:"1.5"`, `B:"90"`, `C:"8.50"`)))
	other, _ := Parse([]byte(reparto("100.00", `B:"90.00"`, `C:"8.49"`, `D:"1.51"`)))
	if m.Huella() != same.Huella() || m.Huella() == other.Huella() {
		t.Error("the fingerprint follows the parts' order or misses their amounts: the same fact reads alike, another does not")
	}
	many := make([]string, MaxPartes)
	for i := range many {
		many[i] = fmt.Sprintf(`P%02d:"1.00"`, i)
	}
	if _, err := Parse([]byte(reparto(fmt.Sprintf("%d.00", MaxPartes), many...))); err != nil {
		t.Errorf("%d parts, the most: %v", MaxPartes, err)
	}
	for _, tc := range []struct{ name, body, field, says string }{
		{"one part beyond the most", reparto(fmt.Sprintf("%d.00", MaxPartes+1), append(many, `Z:"1.00"`)...), "partes", "a reparto takes 2 to 48"},
		{"one part", reparto("1.00", `B:"1.00"`), "partes", "has 1 parts"},
		{"parts that do not sum", reparto("100.00", `B:"90.00"`, `C:"9.99"`), "partes", "sum to 99.99, not the importe 100"},
		{"the payer as a part", reparto("2.00", `A:"1.00"`, `C:"1.00"`), "partes[0].cuenta", "must differ from cuenta"},
		{"an account twice", reparto("2.00", `B:"1.00"`, `B:"1.00"`), "partes[1].cuenta", "named twice"},
		{"a part finer than EUR", reparto("2.00", `B:"1.005"`, `C:"0.995"`), "partes[0].importe", "EUR allows at most 2 decimals"},
		{"a part of nothing", reparto("2.00", `B:"0"`, `C:"2.00"`), "partes[0].importe", "greater than zero"},
		{"a part that is no object", strings.Replace(reparto("2.00", `B:"1"`, `C:"1"`), `{"cuenta":"B","importe":"1"}`, `"B"`, 1), "partes[0]", "JSON object"},
		{"partes that are no list", `{"id":"p1","cuenta":"A","tipo":"reparto","importe":"1","moneda":"EUR","partes":{"cuenta":"B"}}`, "partes", "JSON array"},
		{"no partes", `{"id":"p1","cuenta":"A","tipo":"reparto","importe":"1","moneda":"EUR"}`, "partes", "is required"},
		{"partes on a cargo", strings.Replace(reparto("2.00", `B:"1"`, `C:"1"`), `"reparto"`, `"cargo"`, 1), "partes", "not allowed for tipo cargo"},
	} {
		_, err := Parse([]byte(tc.body))
		if err == nil || fieldOf(err) != tc.field || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %v; want %s refused: %s", tc.name, err, tc.field, tc.says)
		}
	}
}
