package sim

import (
	"cmp"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/movimiento"
)

// The comparison replays abono/cargo workloads by seed: with no other kinds drawn, a
// seed must keep meaning the same movements and deliveries.
func TestAbonoCargoWorkloadsStayTheSame(t *testing.T) {
	w, err := Generate(Spec{Accounts: 20, Movements: 1000, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	for _, m := range w.Movements {
		fmt.Fprintln(h, Body(m))
	}
	s := Deliveries(w, Mix{Duplicates: 0.25, Conflicting: 0.005, Malformed: 0.005}, 1)
	for _, d := range append(s.Deliveries, s.Late...) {
		fmt.Fprintln(h, d.ID, d.Body)
	}
	if got, want := fmt.Sprintf("%x", h.Sum(nil)), "de3071152bf8e6074ca81cb7edcbf7f0afa4ab8869f536ba18adf7d89be4222b"; got != want {
		t.Errorf("seed 1 generated another workload: hash %s, want %s", got, want)
	}
	if len(w.Refused) != 0 || w.Tail != 0 || !w.Lapse.IsZero() || len(s.Tail) != 0 {
		t.Errorf("an abono/cargo workload has refused %d, tail %d, lapse %v", len(w.Refused), w.Tail, w.Lapse)
	}
}

// books applies movements by the account rules (internal/cuenta) at a given time, as
// the ledger does, keeping what each reversal and settlement needs.
type books struct {
	cuentas map[string]cuenta.Cuenta
	movs    map[string]movimiento.Movimiento // by cuenta/id
	done    map[string]bool                  // reversed movements and settled holds, by cuenta/id
}

func (b *books) account(id string, now time.Time) cuenta.Cuenta {
	c, ok := b.cuentas[id]
	if !ok {
		c = cuenta.Nueva(id, "EUR")
	}
	return c.Vigente(now)
}

func (b *books) apply(m movimiento.Movimiento, now time.Time) error {
	c := b.account(m.Cuenta, now)
	var err error
	referent := m.Cuenta + "/" + cmp.Or(m.Anula, m.Retencion) // reversed or settled, once applied
	switch m.Tipo {
	case movimiento.Abono, movimiento.Cargo:
		c, err = c.Aplicar(m)
	case movimiento.Traspaso:
		if c, err = c.Mover(m.Importe.Neg(), m.Moneda); err == nil {
			d, _ := b.account(m.Destino, now).Mover(m.Importe, m.Moneda)
			b.cuentas[m.Destino] = d
		}
	case movimiento.Anulacion:
		o, ok := b.movs[m.Cuenta+"/"+m.Anula]
		switch {
		case !ok || (o.Tipo != movimiento.Abono && o.Tipo != movimiento.Cargo):
			return fmt.Errorf("%s reverses %s, no abono or cargo", m.ID, m.Anula)
		case b.done[m.Cuenta+"/"+m.Anula]:
			return fmt.Errorf("%s reverses %s, reversed already", m.ID, m.Anula)
		}
		c, err = c.Mover(o.Delta().Neg(), o.Moneda)
	case movimiento.Retencion:
		c, err = c.Retener(m.ID, m.Importe, m.Moneda, m.Expira, now)
	case movimiento.Captura, movimiento.Liberacion:
		h, ok := b.movs[m.Cuenta+"/"+m.Retencion]
		switch {
		case !ok || b.done[m.Cuenta+"/"+m.Retencion]:
			return fmt.Errorf("%s settles %s, no hold held", m.ID, m.Retencion)
		case m.Tipo == movimiento.Captura && !h.Expira.After(now):
			return fmt.Errorf("%s captures %s, expired", m.ID, m.Retencion)
		}
		importe := m.Importe
		if importe.IsZero() {
			importe = h.Importe
		}
		if m.Tipo == movimiento.Liberacion {
			c = c.Liberar(h.ID)
		} else {
			c, err = c.Capturar(h.ID, h.Importe, importe)
		}
	}
	if err != nil {
		return err
	}
	b.cuentas[m.Cuenta] = c
	b.movs[m.Cuenta+"/"+m.ID] = m
	b.done[referent] = true
	return nil
}

func TestAMixedWorkloadAppliesInGenerationOrder(t *testing.T) {
	spec := Spec{Accounts: 6, Movements: 2000, Seed: 3, Transfers: 0.2, Reversals: 0.1, Holds: 0.2}
	w, err := Generate(spec)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := Generate(spec); !reflect.DeepEqual(w, again) {
		t.Fatal("the same spec generated two workloads")
	}
	if len(w.Movements) != spec.Movements || w.Tail != 200 || !w.Lapse.Equal(Epoch.Add(24*time.Hour+cuenta.ToleranciaReloj)) {
		t.Fatalf("%d movements, tail %d, lapse %v", len(w.Movements), w.Tail, w.Lapse)
	}
	b := appliesInOrder(t, w)
	if len(w.Refused) != 3 {
		t.Fatalf("%d refused by design, want a second reversal, an overdrawn transfer, a capture of a lapsed hold", len(w.Refused))
	}
	for _, m := range w.Refused {
		if err := b.apply(m, w.Lapse); err == nil {
			t.Errorf("refused by design, but %s %s applies", m.Tipo, m.ID)
		}
	}
	if err := b.apply(w.Refused[1], w.Lapse.Add(1000*time.Hour)); !errors.Is(err, cuenta.SaldoInsuficiente) {
		t.Errorf("the overdrawn transfer: %v, want insufficient funds", err)
	}
	k := w.Kinds()
	if k.Transfers < 300 || k.Reversals < 100 || k.Holds < 300 || k.PartlyCaptured == 0 || k.Released == 0 || k.Lapsed == 0 || k.Cargos == 0 {
		t.Errorf("kinds = %+v: want every kind drawn about as often as asked", k)
	}
	if k.Abonos+k.Cargos+k.Transfers+k.Reversals+k.Holds+k.Captured+k.Released != len(w.Movements) {
		t.Errorf("kinds %+v do not count all %d movements", k, len(w.Movements))
	}
}

// appliesInOrder applies w's movements in generation order by the account rules, those
// of the tail once the lapse has passed, and checks that each applies, that the
// tail's first writes an account with a lapsed hold, and that the balances end as
// w.Saldos says with nothing held. It returns the books, for more.
func appliesInOrder(t *testing.T, w Workload) *books {
	t.Helper()
	b := &books{cuentas: map[string]cuenta.Cuenta{}, movs: map[string]movimiento.Movimiento{}, done: map[string]bool{}}
	tail, end := len(w.Movements)-w.Tail, w.Lapse
	if end.IsZero() { // nothing lapses
		end = Epoch
	}
	for i, m := range w.Movements {
		now := Epoch
		if i >= tail {
			now = end
		}
		if i == tail && !w.Lapse.IsZero() && len(b.account(m.Cuenta, Epoch).Retenciones) == len(b.account(m.Cuenta, now).Retenciones) {
			t.Errorf("the tail's first movement %s writes %s, which has no lapsed hold", m.ID, m.Cuenta)
		}
		if err := b.apply(m, now); err != nil {
			t.Fatalf("movement %d (%s %s) of %d: %v", i, m.Tipo, m.ID, len(w.Movements), err)
		}
	}
	for id, want := range w.Saldos {
		c := b.account(id, end)
		if !c.Saldo.Equal(want) || c.Retenido().Sign() != 0 {
			t.Errorf("%s: saldo %s, %s held; want %s, nothing held once the lapse passed", id, c.Saldo, c.Retenido(), want)
		}
	}
	return b
}

// Small workloads have edge cases of their own: a tail of one, no room left for a
// hold's capture, a single account.
func TestSmallMixedWorkloadsApplyInGenerationOrder(t *testing.T) {
	for seed := range uint64(200) {
		for _, n := range []int{5, 10, 11, 19, 28} {
			for accounts := 1; accounts <= 3; accounts++ {
				w, err := Generate(Spec{Accounts: accounts, Movements: n, Seed: seed, Transfers: 0.1, Reversals: 0.1, Holds: 0.4})
				if err != nil {
					t.Fatal(err)
				}
				appliesInOrder(t, w)
			}
		}
	}
}

// Whatever order the movements of a phase arrive in, retrying those that cannot apply
// yet (as a queue brings them back) applies them all.
func TestAMixedWorkloadAppliesInAnyOrder(t *testing.T) {
	for seed := range uint64(100) {
		w, err := Generate(Spec{Accounts: 1 + int(seed%4), Movements: 60, Seed: seed, Transfers: 0.3, Reversals: 0.15, Holds: 0.3})
		if err != nil {
			t.Fatal(err)
		}
		b := &books{cuentas: map[string]cuenta.Cuenta{}, movs: map[string]movimiento.Movimiento{}, done: map[string]bool{}}
		rng := rand.New(rand.NewPCG(seed, 1))
		tail, end := len(w.Movements)-w.Tail, w.Lapse
		if end.IsZero() { // nothing lapses
			end = Epoch
		}
		for _, phase := range []struct {
			movs []movimiento.Movimiento
			now  time.Time
		}{{w.Movements[:tail], Epoch}, {w.Movements[tail:], end}} {
			pending := slices.Clone(phase.movs)
			rng.Shuffle(len(pending), func(i, j int) { pending[i], pending[j] = pending[j], pending[i] })
			for round := 0; len(pending) > 0; round++ {
				if round > len(phase.movs) {
					t.Fatalf("seed %d: %d movements never apply, such as %s %s: %v", seed, len(pending), pending[0].Tipo, pending[0].ID, b.apply(pending[0], phase.now))
				}
				pending = slices.DeleteFunc(pending, func(m movimiento.Movimiento) bool { return b.apply(m, phase.now) == nil })
			}
		}
		for id, want := range w.Saldos {
			if got := b.account(id, end).Saldo; !got.Equal(want) {
				t.Errorf("seed %d: %s ends at %s, want %s", seed, id, got, want)
			}
		}
	}
}

func TestDeliveriesOfAMixedWorkloadKeepItsPhases(t *testing.T) {
	w, err := Generate(Spec{Accounts: 4, Movements: 300, Seed: 8, Transfers: 0.2, Reversals: 0.1, Holds: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	s := Deliveries(w, Mix{Duplicates: 0.5, Conflicting: 0.02}, 8)
	huella := map[string]string{}
	tail := map[string]bool{}
	for i, m := range w.Movements {
		huella[m.Cuenta+"/"+m.ID] = m.Huella()
		tail[m.Cuenta+"/"+m.ID] = i >= len(w.Movements)-w.Tail
	}
	for phase, ds := range map[string][]Message{"deliveries": s.Deliveries, "tail": s.Tail} {
		for _, d := range ds {
			m, err := movimiento.Parse([]byte(d.Body))
			if err != nil {
				t.Fatalf("%s: %s does not parse: %v", phase, d.Body, err)
			}
			if key := m.Cuenta + "/" + m.ID; m.Huella() != huella[key] || tail[key] != (phase == "tail") {
				t.Errorf("%s: %s is not its movement, or in the wrong phase", phase, d.Body)
			}
		}
	}
	if len(s.Late) != 6+len(w.Refused) {
		t.Fatalf("%d late deliveries, want 6 conflicting and %d refused", len(s.Late), len(w.Refused))
	}
	first, err := movimiento.Parse([]byte(s.Late[0].Body))
	if err != nil || first.Tipo != movimiento.Traspaso || first.Huella() == huella[first.Cuenta+"/"+first.ID] {
		t.Errorf("the first conflicting delivery %s is no conflicting transfer: %v", s.Late[0].Body, err)
	}
	for i, m := range w.Refused {
		if got := s.Late[6+i].Body; got != Body(m) {
			t.Errorf("late delivery %d = %s, want the refused %s", 6+i, got, Body(m))
		}
	}
}

func TestGenerateRefusesOddShares(t *testing.T) {
	for _, spec := range []Spec{{Transfers: -0.1}, {Holds: 1.5}, {Transfers: 0.5, Reversals: 0.3, Holds: 0.3}} {
		spec.Accounts, spec.Movements = 2, 10
		if _, err := Generate(spec); err == nil {
			t.Errorf("Generate(%+v) succeeded", spec)
		}
	}
}
