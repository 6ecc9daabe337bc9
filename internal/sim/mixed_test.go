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

	"github.com/shopspring/decimal"

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

// books applies movements by the account rules (cuenta.Decide) at a given time, as
// the ledger does, keeping every account and record, and each record as a reversal,
// refund or settlement marks it.
type books struct {
	cuentas map[string]cuenta.Cuenta
	apuntes map[string]movimiento.Apunte // by cuenta/id
}

func newBooks() *books {
	return &books{cuentas: map[string]cuenta.Cuenta{}, apuntes: map[string]movimiento.Apunte{}}
}

func (b *books) account(id string, now time.Time) cuenta.Cuenta {
	c, ok := b.cuentas[id]
	if !ok {
		c = cuenta.Nueva(id, "EUR")
	}
	return c.Vigente(now)
}

// apply decides m against the books at now and, unless a rule refuses it, writes what
// it decided: its records, its accounts, the record it marks.
func (b *books) apply(m movimiento.Movimiento, now time.Time) error {
	in := cuenta.Input{Mov: m, Cuentas: map[string]*cuenta.Cuenta{}, Now: now, Funds: cuenta.Retry}
	if ref, ok := b.apuntes[m.Cuenta+"/"+cmp.Or(m.Anula, m.Retencion)]; ok {
		in.Referido = &ref
	}
	touched := []string{m.Cuenta, m.Destino}
	for _, p := range m.Partes {
		touched = append(touched, p.Cuenta)
	}
	if in.Referido != nil { // a reversal also takes back what a transfer or reparto credited
		touched = append(touched, in.Referido.Contrapartida)
		for _, p := range in.Referido.Partes {
			touched = append(touched, p.Cuenta)
		}
	}
	for _, id := range touched {
		if c, ok := b.cuentas[id]; ok {
			in.Cuentas[id] = &c
		}
	}
	d := cuenta.Decide(in)
	if d.Err != nil {
		return d.Err
	}
	for i, a := range d.Apuntes {
		b.apuntes[a.Movimiento.Cuenta+"/"+a.Movimiento.ID] = a
		b.cuentas[d.Cuentas[i].ID] = d.Cuentas[i]
	}
	if d.Marca != nil {
		b.apuntes[d.Marca.Movimiento.Cuenta+"/"+d.Marca.Movimiento.ID] = *d.Marca
	}
	return nil
}

func TestAMixedWorkloadAppliesInGenerationOrder(t *testing.T) {
	spec := Spec{Accounts: 6, Movements: 2000, Seed: 3, Transfers: 0.15, Repartos: 0.1, Reversals: 0.1, Refunds: 0.1, Holds: 0.2}
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
	refusedFor := []error{cuenta.YaAnulado, cuenta.SaldoInsuficiente, cuenta.Vencida, cuenta.YaAnulado, cuenta.ImporteAnulacion}
	if len(w.Refused) != len(refusedFor) {
		t.Fatalf("%d refused by design, want a second reversal, an overdrawn transfer, a capture of a lapsed hold, a second reversal of a reversed transfer or reparto, a refund of more than is left", len(w.Refused))
	}
	for i, m := range w.Refused {
		if err := b.apply(m, w.Lapse.Add(1000*time.Hour)); !errors.Is(err, refusedFor[i]) {
			t.Errorf("refused by design, %s %s: %v, want %v", m.Tipo, m.ID, err, refusedFor[i])
		}
	}
	if o := w.Refused[3]; !isPayerLeg(b.apuntes[o.Cuenta+"/"+o.Anula]) {
		t.Errorf("the second reversal %s names %s, no transfer's or reparto's payer leg", o.ID, o.Anula)
	}
	k := w.Kinds()
	if k.Transfers < 200 || k.Repartos < 150 || k.Reversals+k.ReversedTransfers+k.ReversedRepartos < 50 || k.Refunds < 100 || k.Holds < 300 || k.PartlyCaptured == 0 || k.Released == 0 || k.Lapsed == 0 || k.Cargos == 0 {
		t.Errorf("kinds = %+v: want every kind drawn about as often as asked", k)
	}
	if k.RefundedInFull == 0 || k.ReversedTransfers == 0 || k.ReversedRepartos == 0 || k.ReversedPartes < 2*k.ReversedRepartos {
		t.Errorf("kinds = %+v: want movements refunded in full, transfers and repartos reversed", k)
	}
	if k.Abonos+k.Cargos+k.Transfers+k.Repartos+k.Reversals+k.Refunds+k.ReversedTransfers+k.ReversedRepartos+k.Holds+k.Captured+k.Released != len(w.Movements) {
		t.Errorf("kinds %+v do not count all %d movements", k, len(w.Movements))
	}
	posted := 0
	for _, a := range b.apuntes {
		if a.Posted() {
			posted++
		}
	}
	if posted != k.Posted() {
		t.Errorf("the books posted %d records, kinds say %d", posted, k.Posted())
	}
}

// isPayerLeg reports whether a is the record of a transfer or reparto on its payer.
func isPayerLeg(a movimiento.Apunte) bool {
	return a.Movimiento.Tipo == movimiento.Cargo && (a.Contrapartida != "" || len(a.Partes) > 0)
}

// A workload with enough accounts draws repartos of more than a few parts, up to
// movimiento.MaxPartes; one with fewer draws as many parts as there are other accounts.
func TestRepartosTakeUpToTheMostParts(t *testing.T) {
	for _, tc := range []struct{ accounts, least, most int }{{60, fewPartes + 1, movimiento.MaxPartes}, {4, 2, 3}} {
		w, err := Generate(Spec{Accounts: tc.accounts, Movements: 3000, Seed: 5, Repartos: 0.3, Reversals: 0.05})
		if err != nil {
			t.Fatal(err)
		}
		appliesInOrder(t, w)
		if k := w.Kinds(); k.MostPartes < tc.least || k.MostPartes > tc.most {
			t.Errorf("%d accounts: the widest reparto has %d parts, want %d to %d", tc.accounts, k.MostPartes, tc.least, tc.most)
		}
	}
}

// Every account's debits draw only on what its abonos brought in, never on what a
// transfer or reparto credited it: cargos, the debit of a transfer or reparto, holds,
// refunds of its abonos, and what it pays back when a transfer or reparto that credited
// it is reversed. So each debit has its funds in any arrival order.
func TestDebitsOnlyDrawOnAbonos(t *testing.T) {
	w, err := Generate(Spec{Accounts: 5, Movements: 3000, Seed: 11, Transfers: 0.2, Repartos: 0.15, Reversals: 0.15, Refunds: 0.1, Holds: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]movimiento.Movimiento{}
	brought, drawn := map[string]decimal.Decimal{}, map[string]decimal.Decimal{}
	draw := func(c string, d decimal.Decimal) { drawn[c] = drawn[c].Add(d) }
	for _, m := range w.Movements {
		byKey[m.Cuenta+"/"+m.ID] = m
		switch o := byKey[m.Cuenta+"/"+m.Anula]; m.Tipo {
		case movimiento.Abono:
			brought[m.Cuenta] = brought[m.Cuenta].Add(m.Importe)
		case movimiento.Cargo, movimiento.Traspaso, movimiento.Reparto, movimiento.Retencion:
			draw(m.Cuenta, m.Importe)
		case movimiento.Anulacion:
			switch {
			case o.Tipo == movimiento.Abono && m.Importe.IsZero(): // all of it
				draw(m.Cuenta, o.Importe)
			case o.Tipo == movimiento.Abono:
				draw(m.Cuenta, m.Importe)
			}
			for _, p := range Credited(o) {
				draw(p.Cuenta, p.Importe)
			}
		}
	}
	for c, d := range drawn {
		if d.GreaterThan(brought[c]) {
			t.Errorf("%s: debits of %s drawn on abonos of %s", c, d, brought[c])
		}
	}
	if k := w.Kinds(); k.ReversedTransfers == 0 || k.ReversedRepartos == 0 {
		t.Fatalf("kinds = %+v: no transfer or reparto reversed", k)
	}
}

// The refunds of one movement never give back more than it moved, whatever order they
// arrive in: each carries its importe, and together they fit.
func TestRefundsNeverExceedTheirOriginal(t *testing.T) {
	w, err := Generate(Spec{Accounts: 3, Movements: 1000, Seed: 9, Refunds: 0.4})
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]movimiento.Movimiento{}
	given := map[string]decimal.Decimal{}
	for _, m := range w.Movements {
		byKey[m.Cuenta+"/"+m.ID] = m
		if m.Tipo == movimiento.Anulacion {
			if m.Importe.IsZero() {
				t.Errorf("refund %s carries no importe: it would take all that is left, whatever arrived first", m.ID)
			}
			given[m.Cuenta+"/"+m.Anula] = given[m.Cuenta+"/"+m.Anula].Add(m.Importe)
		}
	}
	for key, sum := range given {
		if o := byKey[key]; sum.GreaterThan(o.Importe) {
			t.Errorf("%s of %s refunded %s in all", key, o.Importe, sum)
		}
	}
	if k := w.Kinds(); k.Refunds < 300 || k.RefundedInFull == 0 || k.Reversals != 0 {
		t.Errorf("kinds = %+v: want refunds in parts, some until nothing was left, and no whole reversal", k)
	}
}

// appliesInOrder applies w's movements in generation order by the account rules, those
// of the tail once the lapse has passed, and checks that each applies, that the
// tail's first writes an account with a lapsed hold, and that the balances end as
// w.Saldos says with nothing held. It returns the books, for more.
func appliesInOrder(t *testing.T, w Workload) *books {
	t.Helper()
	b := newBooks()
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
				w, err := Generate(Spec{Accounts: accounts, Movements: n, Seed: seed, Transfers: 0.1, Repartos: 0.1, Reversals: 0.1, Refunds: 0.1, Holds: 0.3})
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
		w, err := Generate(Spec{Accounts: 1 + int(seed%5), Movements: 60, Seed: seed, Transfers: 0.2, Repartos: 0.15, Reversals: 0.15, Refunds: 0.15, Holds: 0.3})
		if err != nil {
			t.Fatal(err)
		}
		b := newBooks()
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
	w, err := Generate(Spec{Accounts: 4, Movements: 300, Seed: 8, Transfers: 0.2, Repartos: 0.1, Reversals: 0.1, Refunds: 0.1, Holds: 0.2})
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
	for _, d := range s.Late[:6] {
		m, err := movimiento.Parse([]byte(d.Body))
		if h, ok := huella[m.Cuenta+"/"+m.ID]; err != nil || !ok || h == m.Huella() {
			t.Errorf("late delivery %s is no conflicting replay of a movement: %v", d.Body, err)
		}
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

// A conflicting replay of a reparto is a valid reparto with the same key and other
// parts: the ledger must take it for a producer's bug, not for a malformed body.
func TestAConflictingRepartoIsAValidReparto(t *testing.T) {
	m, err := movimiento.New(movimiento.Datos{ID: "r1", Cuenta: "A", Tipo: movimiento.Reparto, Importe: "10.00", Moneda: "EUR",
		Partes: []movimiento.ParteDatos{{Cuenta: "B", Importe: "6.00"}, {Cuenta: "C", Importe: "4.00"}}})
	if err != nil {
		t.Fatal(err)
	}
	replay, err := movimiento.Parse([]byte(conflicting(m)))
	if err != nil || replay.Cuenta != "A" || replay.ID != "r1" || replay.Huella() == m.Huella() || replay.Partes[1].Importe.String() != "4.01" {
		t.Errorf("the replay %+v, %v: want r1 on A with C's part a cent more", replay, err)
	}
	if again, err := movimiento.Parse([]byte(Body(m))); err != nil || again.Huella() != m.Huella() {
		t.Errorf("the reparto's body reads back as %+v, %v", again, err)
	}
}

func TestGenerateRefusesOddShares(t *testing.T) {
	for _, spec := range []Spec{{Transfers: -0.1}, {Holds: 1.5}, {Repartos: 2}, {Refunds: -1}, {Transfers: 0.5, Reversals: 0.3, Holds: 0.3}, {Repartos: 0.5, Refunds: 0.6}} {
		spec.Accounts, spec.Movements = 2, 10
		if _, err := Generate(spec); err == nil {
			t.Errorf("Generate(%+v) succeeded", spec)
		}
	}
}
