package ledger

import (
	"fmt"
	"testing"

	"github.com/ledger-dev/ledger/internal/movimiento"
)

func TestGroupsKeepAccountsTogetherInArrivalOrder(t *testing.T) {
	on := func(cuentas ...string) []Entrega {
		es := make([]Entrega, len(cuentas))
		for i, c := range cuentas {
			es[i] = Entrega{Mov: movimiento.Movimiento{ID: fmt.Sprint(i), Cuenta: c}}
		}
		return es
	}
	cases := []struct {
		name     string
		entregas []Entrega
		want     string
	}{
		{"one account", on("A", "A", "A"), "[[0 1 2]]"},
		{"unrelated accounts apart", on("A", "B", "A", "C", "B"), "[[0 2] [1 4] [3]]"},
		{"none", nil, "[]"},
	}
	for _, tc := range cases {
		if got := fmt.Sprint(Groups(tc.entregas)); got != tc.want {
			t.Errorf("%s: Groups = %s, want %s", tc.name, got, tc.want)
		}
	}
}
