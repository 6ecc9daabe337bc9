package movimiento

import (
	"slices"
	"testing"

	"github.com/shopspring/decimal"
)

func TestContrapartidasAreTheOtherAccountsARecordMoves(t *testing.T) {
	diez, cinco := decimal.RequireFromString("10"), decimal.RequireFromString("5")
	partes := []Parte{{Cuenta: "B", Importe: cinco}, {Cuenta: "C", Importe: cinco}}
	tests := []struct {
		name string
		a    Apunte
		want []Parte
	}{
		{"transfer leg", Apunte{Movimiento: Movimiento{Cuenta: "A", Tipo: Cargo, Importe: diez}, Contrapartida: "B"}, []Parte{{Cuenta: "B", Importe: diez}}},
		{"reparto", Apunte{Movimiento: Movimiento{Cuenta: "A", Tipo: Cargo, Importe: diez}, Partes: partes}, partes},
		{"plain", Apunte{Movimiento: Movimiento{Cuenta: "A", Tipo: Abono, Importe: diez}}, nil},
	}
	for _, tt := range tests {
		got := tt.a.Contrapartidas()
		if !slices.EqualFunc(got, tt.want, func(x, y Parte) bool { return x.Cuenta == y.Cuenta && x.Importe.Equal(y.Importe) }) {
			t.Errorf("%s: Contrapartidas = %v, want %v", tt.name, got, tt.want)
		}
	}
}
