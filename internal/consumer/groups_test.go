package consumer

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/store"
)

func TestGroupsKeepAccountsTogetherInArrivalOrder(t *testing.T) {
	// on makes one delivery per word: "A" a movement on A, "A>B" a transfer from A to B.
	on := func(words ...string) []store.Entrega {
		es := make([]store.Entrega, len(words))
		for i, w := range words {
			c, d, _ := strings.Cut(w, ">")
			es[i] = store.Entrega{Mov: movimiento.Movimiento{ID: fmt.Sprint(i), Cuenta: c, Destino: d}}
		}
		return es
	}
	cases := []struct {
		name     string
		entregas []store.Entrega
		want     string
	}{
		{"one account", on("A", "A", "A"), "[[0 1 2]]"},
		{"unrelated accounts apart", on("A", "B", "A", "C", "B"), "[[0 2] [1 4] [3]]"},
		{"none", nil, "[]"},
		{"a transfer joins its accounts", on("A", "B", "A>B", "C"), "[[0 1 2] [3]]"},
		{"a cycle of transfers is one group", on("A>B", "B>C", "C>A", "D", "B"), "[[0 1 2 4] [3]]"},
		{"joined by later transfers, each in arrival order", on("B", "A", "C", "C>A", "D>B"), "[[0 4] [1 2 3]]"},
	}
	inGroup := func(grupo string, es []store.Entrega) []store.Entrega {
		for i := range es {
			es[i].Grupo = grupo
		}
		return es
	}
	cases = append(cases, []struct {
		name     string
		entregas []store.Entrega
		want     string
	}{
		{"one FIFO message group joins its accounts", inGroup("g", on("A", "B", "C")), "[[0 1 2]]"},
		{"FIFO message groups of one account each", append(inGroup("A", on("A", "A")), inGroup("B", on("B"))...), "[[0 1] [2]]"},
		{"a group and a transfer", slices.Concat(inGroup("g", on("A", "B")), inGroup("h", on("C>A")), inGroup("i", on("D"))), "[[0 1 2] [3]]"},
	}...)
	for _, tc := range cases {
		if got := fmt.Sprint(Groups(tc.entregas)); got != tc.want {
			t.Errorf("%s: Groups = %s, want %s", tc.name, got, tc.want)
		}
	}
}
