package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/store"
	"github.com/ledger-dev/ledger/internal/testenv"
)

// Two consumers whose clocks disagree by two seconds write the same accounts, each
// from its own cache: every posted movement is stamped no earlier than the one before
// it on its account, a transfer's two legs alike, so an account's statement in seq
// order is in time order too. Each posted record names the version its account was
// written at.
func TestAplicadoNeverGoesBackAcrossConsumersWithSkewedClocks(t *testing.T) {
	env := testenv.NewDynamoDB(t)
	ctx := context.Background()
	behind := testenv.Ledger(t, env, cuenta.Retry, func() time.Time { return fixedNow })
	ahead := testenv.Ledger(t, env, cuenta.Retry, func() time.Time { return fixedNow.Add(2 * time.Second) })
	steps := []struct {
		by *store.Ledger
		m  movimiento.Movimiento
	}{
		{behind, mov(t, "b-1", "ES91", movimiento.Abono, "100.00")},
		{ahead, mov(t, "a-1", "ES76", movimiento.Abono, "50.00")},
		{behind, mov(t, "a-2", "ES76", movimiento.Cargo, "10.00")},        // behind ES76's last
		{behind, traspaso(t, "t-1", "ES91", "ES76", "30.00")},             // ES91 is behind ES76
		{behind, hold(t, "h-1", "ES76", "5.00", fixedNow.Add(time.Hour))}, // a hold, no seq
		{ahead, mov(t, "a-3", "ES76", movimiento.Cargo, "1.00")},
		{behind, mov(t, "a-4", "ES76", movimiento.Abono, "2.00")},
	}
	versions := map[string]int64{} // movement → its account's version once it applied
	for _, st := range steps {
		if r := apply(t, st.by, st.m); r.Outcome != store.Applied {
			t.Fatalf("%s: %+v", st.m.ID, r)
		}
		versions[st.m.Cuenta+"/"+st.m.ID] = account(t, env, st.m.Cuenta).num("version").IntPart()
		if st.m.Destino != "" {
			versions[st.m.Destino+"/"+st.m.ID] = account(t, env, st.m.Destino).num("version").IntPart()
		}
	}
	r := store.NewReader(env.Client, env.Table())
	ahead2s := fixedNow.Add(2 * time.Second)
	for _, tc := range []struct {
		cuenta string
		want   []time.Time // aplicado by seq, from 1
	}{
		{"ES76", []time.Time{ahead2s, ahead2s, ahead2s, ahead2s, ahead2s}},
		{"ES91", []time.Time{fixedNow, ahead2s}},
	} {
		page, _, err := r.Extracto(ctx, tc.cuenta, 50, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) != len(tc.want) {
			t.Fatalf("%s: %d movements, want %d", tc.cuenta, len(page), len(tc.want))
		}
		for _, a := range page {
			if want := tc.want[a.Seq-1]; !a.Aplicado.Equal(want) {
				t.Errorf("%s seq %d (%s) stamped %v, want %v", tc.cuenta, a.Seq, a.Movimiento.ID, a.Aplicado, want)
			}
			if want := versions[tc.cuenta+"/"+a.Movimiento.ID]; a.Version != want {
				t.Errorf("%s seq %d (%s) names version %d, want %d: its account's once it applied", tc.cuenta, a.Seq, a.Movimiento.ID, a.Version, want)
			}
		}
		if got := account(t, env, tc.cuenta).str("aplicado"); got != tc.want[len(tc.want)-1].Format(time.RFC3339Nano) {
			t.Errorf("%s remembers %s as its last, want %v", tc.cuenta, got, tc.want[len(tc.want)-1])
		}
	}
}
