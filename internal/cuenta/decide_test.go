package cuenta

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/ledger-dev/ledger/internal/movimiento"
)

var now = time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)

// movD builds a valid movement from d, failing the test otherwise.
func movD(t *testing.T, d movimiento.Datos) movimiento.Movimiento {
	t.Helper()
	m, err := movimiento.New(d)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// account is an EUR account with saldo and, when held is not "", a hold "aut" of held
// until expira.
func account(t *testing.T, id, saldo, held string, expira time.Time) *Cuenta {
	t.Helper()
	c := Nueva(id, "EUR")
	c.Saldo, c.Movimientos = dec(saldo), 3
	if held != "" {
		c.Retenciones = map[string]Retencion{"aut": {Importe: dec(held), Expira: expira}}
	}
	return &c
}

// record is the record of movement m as Decide writes it when applied.
func record(t *testing.T, in Input) *movimiento.Apunte {
	t.Helper()
	d := Decide(in)
	if d.Err != nil || len(d.Apuntes) == 0 {
		t.Fatalf("recording %s: %+v", in.Mov.ID, d)
	}
	return &d.Apuntes[0]
}

func TestDecideAbonoAndCargoByTheFundsPolicy(t *testing.T) {
	abono := movD(t, movimiento.Datos{ID: "a", Cuenta: "A", Tipo: movimiento.Abono, Importe: "10.00", Moneda: "EUR"})
	cargo := movD(t, movimiento.Datos{ID: "c", Cuenta: "A", Tipo: movimiento.Cargo, Importe: "60.00", Moneda: "EUR"})
	usd := movD(t, movimiento.Datos{ID: "u", Cuenta: "A", Tipo: movimiento.Abono, Importe: "1.00", Moneda: "USD"})
	frozen := account(t, "A", "100", "", now)
	frozen.Bloqueada = true
	for _, tc := range []struct {
		name   string
		in     Input
		estado movimiento.Estado // "": failed
		rule   Rule
		saldo  string
	}{
		{"an abono opens the account in its currency", Input{Mov: abono}, movimiento.Aplicado, "", "10"},
		{"a cargo within funds", Input{Mov: cargo, Cuentas: on(account(t, "A", "60", "", now))}, movimiento.Aplicado, "", "0"},
		{"a cargo beyond funds, retry", Input{Mov: cargo, Cuentas: on(account(t, "A", "59.99", "", now))}, "", SaldoInsuficiente, ""},
		{"a cargo beyond funds, reject", Input{Mov: cargo, Funds: Reject, Cuentas: on(account(t, "A", "59.99", "", now))}, movimiento.Rechazado, "", ""},
		{"a cargo beyond funds left by a hold", Input{Mov: cargo, Cuentas: on(account(t, "A", "100", "40.01", now.Add(time.Hour)))}, "", SaldoInsuficiente, ""},
		{"a cargo once the hold lapsed", Input{Mov: cargo, Cuentas: on(account(t, "A", "100", "40.01", now))}, movimiento.Aplicado, "", "40"},
		{"a cargo of a frozen account, reject", Input{Mov: cargo, Funds: Reject, Cuentas: on(frozen)}, movimiento.Rechazado, "", ""},
		{"an abono of a frozen account", Input{Mov: abono, Cuentas: on(frozen)}, movimiento.Aplicado, "", "110"},
		{"another currency, even under reject", Input{Mov: usd, Funds: Reject, Cuentas: on(account(t, "A", "1", "", now))}, "", MonedaDistinta, ""},
	} {
		tc.in.Now = now
		d := Decide(tc.in)
		switch {
		case tc.estado == "" && (!errors.Is(d.Err, tc.rule) || len(d.Apuntes)+len(d.Cuentas) > 0):
			t.Errorf("%s: %+v, want it failed by %s, nothing written", tc.name, d, tc.rule)
		case tc.estado != "" && (d.Err != nil || len(d.Apuntes) != 1 || d.Apuntes[0].Estado != tc.estado):
			t.Errorf("%s: %+v, want a record %s", tc.name, d, tc.estado)
		case tc.estado == movimiento.Rechazado && (len(d.Cuentas) != 0 || d.Apuntes[0].Motivo == "" || d.Apuntes[0].Seq != 0):
			t.Errorf("%s: %+v, want a motivo, no seq, no account changed", tc.name, d)
		case tc.estado == movimiento.Aplicado && (!d.Cuentas[0].Saldo.Equal(dec(tc.saldo)) || d.Apuntes[0].Seq != d.Cuentas[0].Movimientos || !d.Apuntes[0].SaldoTras.Equal(dec(tc.saldo))):
			t.Errorf("%s: %+v, want saldo %s and the record at the account's seq", tc.name, d, tc.saldo)
		}
	}
}

func TestDecideTransferMovesBothLegsOrNeither(t *testing.T) {
	tr := movD(t, movimiento.Datos{ID: "t", Cuenta: "A", Tipo: movimiento.Traspaso, Destino: "B", Importe: "30.00", Moneda: "EUR"})
	d := Decide(Input{Mov: tr, Now: now, Cuentas: on(account(t, "A", "30", "", now))})
	if d.Err != nil || len(d.Apuntes) != 2 || len(d.Cuentas) != 2 {
		t.Fatalf("transfer: %+v", d)
	}
	debit, credit := d.Apuntes[0], d.Apuntes[1]
	if debit.Movimiento.Tipo != movimiento.Cargo || debit.Contrapartida != "B" || credit.Movimiento.Cuenta != "B" || credit.Movimiento.Tipo != movimiento.Abono ||
		credit.Contrapartida != "A" || !d.Cuentas[1].Saldo.Equal(dec("30")) || d.Cuentas[1].Moneda != "EUR" || credit.Seq != 1 {
		t.Errorf("legs %+v / %+v, accounts %+v", debit, credit, d.Cuentas)
	}
	usd := Nueva("B", "USD")
	if d := Decide(Input{Mov: tr, Now: now, Funds: Reject, Cuentas: on(account(t, "A", "30", "", now), &usd)}); !errors.Is(d.Err, MonedaDistinta) || len(d.Apuntes) > 0 {
		t.Errorf("to an account in another currency: %+v, want failed, not rejected", d)
	}
	d = Decide(Input{Mov: tr, Now: now, Funds: Reject, Cuentas: on(account(t, "A", "29.99", "", now))})
	if d.Err != nil || len(d.Apuntes) != 1 || d.Apuntes[0].Estado != movimiento.Rechazado || len(d.Cuentas) != 0 {
		t.Errorf("beyond funds under reject: %+v, want the debit leg recorded rejected, no credit", d)
	}
}

func TestDecideHoldsCapturesAndReleases(t *testing.T) {
	expira := now.Add(time.Hour)
	retencion := movD(t, movimiento.Datos{ID: "aut", Cuenta: "A", Tipo: movimiento.Retencion, Importe: "40.00", Moneda: "EUR", Expira: expira.Format(time.RFC3339)})
	hold := record(t, Input{Mov: retencion, Now: now, Cuentas: on(account(t, "A", "100", "", now))})
	if hold.Estado != movimiento.Retenida || hold.Seq != 0 {
		t.Fatalf("hold recorded %+v, want retenida, no seq", hold)
	}
	held := account(t, "A", "100", "40", expira)
	settle := func(tipo movimiento.Tipo, importe, moneda string) movimiento.Movimiento {
		return movD(t, movimiento.Datos{ID: "s", Cuenta: "A", Tipo: tipo, Retencion: "aut", Importe: importe, Moneda: moneda})
	}
	captured, released := *hold, *hold
	captured.Estado, captured.CapturadaPor = movimiento.Capturada, "x"
	released.Estado, released.LiberadaPor = movimiento.Liberada, "x"
	for _, tc := range []struct {
		name  string
		mov   movimiento.Movimiento
		hold  *movimiento.Apunte
		at    time.Time
		rule  Rule   // "": applied
		saldo string // after it
	}{
		{"a capture of part", settle(movimiento.Captura, "25.00", ""), hold, now, "", "75"},
		{"a capture of all", settle(movimiento.Captura, "", "EUR"), hold, now, "", "60"},
		{"a capture over the hold", settle(movimiento.Captura, "40.01", ""), hold, now, CapturaExcesiva, ""},
		{"a capture finer than the currency", settle(movimiento.Captura, "1.001", ""), hold, now, "", ""},
		{"a capture in another currency", settle(movimiento.Captura, "", "USD"), hold, now, MonedaRetencion, ""},
		{"a capture at the clock tolerance after expira", settle(movimiento.Captura, "", ""), hold, expira.Add(ToleranciaReloj), Vencida, ""},
		{"a release at expira frees nothing", settle(movimiento.Liberacion, "", ""), hold, expira, "", "100"},
		{"a release", settle(movimiento.Liberacion, "", ""), hold, now, "", "100"},
		{"a capture of a captured hold", settle(movimiento.Captura, "", ""), &captured, now, YaCapturada, ""},
		{"a release of a released hold", settle(movimiento.Liberacion, "", ""), &released, now, YaLiberada, ""},
		{"a capture of a cargo", settle(movimiento.Captura, "", ""), record(t, Input{Mov: movD(t, movimiento.Datos{ID: "aut", Cuenta: "A", Tipo: movimiento.Cargo, Importe: "1.00", Moneda: "EUR"}), Now: now, Cuentas: on(held)}), now, NoEsRetencion, ""},
		{"a capture of a hold not recorded (yet)", settle(movimiento.Captura, "", ""), nil, now, NoRegistrado, ""},
	} {
		if tc.hold == hold && tc.mov.Tipo == movimiento.Captura && tc.rule == "" && tc.saldo != "" {
			// The account no longer holds it (another writer's clock lapsed it): only a
			// refused debit is recorded rejected, and this one may pass on a fresh read.
			if d := Decide(Input{Mov: tc.mov, Referido: hold, Now: now, Funds: Reject, Cuentas: on(account(t, "A", "100", "", now))}); !errors.Is(d.Err, RetencionInactiva) || len(d.Apuntes) > 0 {
				t.Errorf("%s of a hold the account does not hold: %+v, want RetencionInactiva, nothing recorded", tc.name, d)
			}
		}
		d := Decide(Input{Mov: tc.mov, Referido: tc.hold, Now: tc.at, Funds: Reject, Cuentas: on(held)})
		switch {
		case tc.saldo == "" && tc.rule == "": // a FieldError: the importe is finer than the hold's currency
			var fe *movimiento.FieldError
			if !errors.As(d.Err, &fe) || fe.Field != "importe" {
				t.Errorf("%s: %+v, want importe refused", tc.name, d)
			}
		case tc.rule != "" && (!errors.Is(d.Err, tc.rule) || len(d.Apuntes) > 0 || tc.rule.Transient() != (tc.rule == NoRegistrado)):
			t.Errorf("%s: %v, want %s", tc.name, d.Err, tc.rule)
		case tc.rule == "" && tc.saldo != "" && (d.Err != nil || !d.Cuentas[0].Saldo.Equal(dec(tc.saldo)) || d.Cuentas[0].Retenido().Sign() != 0 || d.Marca == nil || d.Marca.Estado == movimiento.Retenida):
			t.Errorf("%s: %+v, want saldo %s, nothing held, the hold marked settled", tc.name, d, tc.saldo)
		}
	}
}

// A capture is judged at when the transport took it: one sent before expira is honoured
// however many redeliveries later, up to GraciaCaptura; the hold has lapsed by then, so
// its amount is a debit that meets the debit rules.
func TestACaptureIsJudgedAtWhenItWasSent(t *testing.T) {
	expira := now.Add(time.Hour)
	retencion := movD(t, movimiento.Datos{ID: "aut", Cuenta: "A", Tipo: movimiento.Retencion, Importe: "40.00", Moneda: "EUR", Expira: expira.Format(time.RFC3339)})
	hold := record(t, Input{Mov: retencion, Cuentas: on(account(t, "A", "100", "", now)), Now: now})
	capture := movD(t, movimiento.Datos{ID: "cap", Cuenta: "A", Tipo: movimiento.Captura, Retencion: "aut", Importe: "30.00"})
	before := expira.Add(-time.Minute)
	for _, tc := range []struct {
		name       string
		saldo      string // of the account, which held 40 of it until expira
		sent, at   time.Time
		funds      FundsPolicy
		rule       Rule   // "": posted
		saldoAfter string // when posted
	}{
		{"sent and applied before expira", "100", before, before, Retry, "", "70"},
		{"sent before expira, applied an hour after", "100", before, expira.Add(time.Hour), Retry, "", "70"},
		{"sent unknown, applied at expira (sent then)", "100", time.Time{}, expira, Retry, "", "70"},
		{"stamped within the clock tolerance of expira", "100", expira.Add(ToleranciaReloj - time.Millisecond), expira.Add(time.Minute), Retry, "", "70"},
		{"stamped at the clock tolerance after expira", "100", expira.Add(ToleranciaReloj), expira.Add(time.Minute), Retry, Vencida, ""},
		{"stamped later than it is applied: judged at when it is applied", "100", expira.Add(time.Hour), before, Retry, "", "70"},
		{"sent before expira, applied the grace after", "100", before, expira.Add(GraciaCaptura), Retry, Vencida, ""},
		{"late, beyond the funds the lapse freed, under retry", "29.99", before, expira.Add(time.Hour), Retry, SaldoInsuficiente, ""},
	} {
		d := Decide(Input{Mov: capture, Cuentas: on(account(t, "A", tc.saldo, "40", expira)), Referido: hold, Enviado: tc.sent, Now: tc.at, Funds: tc.funds})
		switch {
		case tc.rule != "" && (!errors.Is(d.Err, tc.rule) || len(d.Apuntes) > 0):
			t.Errorf("%s: %+v, want %s, nothing recorded", tc.name, d, tc.rule)
		case tc.rule == "" && (d.Err != nil || !d.Cuentas[0].Saldo.Equal(dec(tc.saldoAfter)) || d.Cuentas[0].Retenido().Sign() != 0 || d.Marca == nil || d.Marca.Estado != movimiento.Capturada):
			t.Errorf("%s: %+v, want saldo %s, nothing held, the hold captured", tc.name, d, tc.saldoAfter)
		}
	}
	d := Decide(Input{Mov: capture, Cuentas: on(account(t, "A", "29.99", "40", expira)), Referido: hold, Enviado: before, Now: expira.Add(time.Hour), Funds: Reject})
	if d.Err != nil || len(d.Apuntes) != 1 || d.Apuntes[0].Estado != movimiento.Rechazado || d.Marca != nil {
		t.Errorf("late, beyond the funds, under reject: %+v, want recorded rejected, the hold left as it was", d)
	}
}

func TestDecideReversalByTheOriginalsRecord(t *testing.T) {
	held := account(t, "A", "100", "", now)
	abono := movD(t, movimiento.Datos{ID: "o", Cuenta: "A", Tipo: movimiento.Abono, Importe: "50.00", Moneda: "EUR"})
	original := record(t, Input{Mov: abono, Now: now, Cuentas: on(held)})
	anula := func(importe, moneda string) movimiento.Movimiento {
		return movD(t, movimiento.Datos{ID: "r", Cuenta: "A", Tipo: movimiento.Anulacion, Anula: "o", Importe: importe, Moneda: moneda})
	}
	with := func(edit func(*movimiento.Apunte)) *movimiento.Apunte { a := *original; edit(&a); return &a }
	for _, tc := range []struct {
		name     string
		mov      movimiento.Movimiento
		original *movimiento.Apunte
		rule     Rule // "": applied
	}{
		{"a reversal", anula("", ""), original, ""},
		{"naming its importe and moneda", anula("50.00", "EUR"), original, ""},
		{"recorded already: its record answers", anula("", ""), with(func(a *movimiento.Apunte) { a.AnuladoPor = "r" }), ""},
		{"reversed by another", anula("", ""), with(func(a *movimiento.Apunte) { a.AnuladoPor = "x" }), YaAnulado},
		{"of a rejected movement", anula("", ""), with(func(a *movimiento.Apunte) { a.Estado = movimiento.Rechazado }), NoAplicado},
		{"of a reversal", anula("", ""), with(func(a *movimiento.Apunte) { a.Movimiento.Anula = "x" }), AnulaAnulacion},
		{"of a transfer's credit leg", anula("", ""), with(func(a *movimiento.Apunte) { a.Contrapartida = "B" }), AnulaTraspaso},
		{"of a liberacion", anula("", ""), with(func(a *movimiento.Apunte) { a.Movimiento.Tipo = movimiento.Liberacion }), TipoNoAnulable},
		{"naming more than the importe", anula("50.01", ""), original, ImporteAnulacion},
		{"naming more than is left", anula("20.01", ""), with(func(a *movimiento.Apunte) { a.Reembolsado, a.Anulaciones = dec("30"), []string{"x"} }), ImporteAnulacion},
		{"past the refunds one movement takes", anula("0.01", ""), with(func(a *movimiento.Apunte) {
			a.Reembolsado, a.Anulaciones = dec("0.50"), make([]string, movimiento.MaxReembolsos)
		}), DemasiadosReembolsos},
		{"naming another moneda", anula("", "USD"), original, MonedaAnulacion},
		{"of a movement not recorded (yet)", anula("", ""), nil, NoRegistrado},
	} {
		d := Decide(Input{Mov: tc.mov, Referido: tc.original, Now: now, Cuentas: on(held)})
		switch {
		case tc.rule != "" && !errors.Is(d.Err, tc.rule):
			t.Errorf("%s: %v, want %s", tc.name, d.Err, tc.rule)
		case tc.rule == "" && tc.original.AnuladoPor == "r" && (d.Err != nil || d.Marca != nil):
			t.Errorf("%s: %+v, want its record written as before (the table refuses it: a duplicate), the original not marked again", tc.name, d)
		case tc.rule == "" && tc.original.AnuladoPor != "r" && (d.Err != nil || d.Apuntes[0].Movimiento.Tipo != movimiento.Cargo || !d.Cuentas[0].Saldo.Equal(dec("50")) || d.Marca == nil || d.Marca.AnuladoPor != "r"):
			t.Errorf("%s: %+v, want a cargo of 50.00 and the original marked reversed by r", tc.name, d)
		}
	}
	// Refunds in parts: each gives back what it names, until nothing is left; the last
	// one completes the reversal.
	first := Decide(Input{Mov: anula("20.00", ""), Referido: original, Now: now, Cuentas: on(held)})
	if first.Err != nil || !first.Apuntes[0].Movimiento.Importe.Equal(dec("20")) || !first.Cuentas[0].Saldo.Equal(dec("80")) ||
		!first.Marca.Reembolsado.Equal(dec("20")) || first.Marca.AnuladoPor != "" || len(first.Marca.Anulaciones) != 1 {
		t.Fatalf("a refund of 20.00 of 50.00: %+v, want a cargo of 20.00, 30.00 left, not reversed yet", first)
	}
	rest := movD(t, movimiento.Datos{ID: "r2", Cuenta: "A", Tipo: movimiento.Anulacion, Anula: "o"})
	last := Decide(Input{Mov: rest, Referido: first.Marca, Now: now, Cuentas: on(&first.Cuentas[0])})
	if last.Err != nil || !last.Apuntes[0].Movimiento.Importe.Equal(dec("30")) || !last.Cuentas[0].Saldo.Equal(dec("50")) ||
		last.Marca.AnuladoPor != "r2" || !slices.Equal(last.Marca.Anulaciones, []string{"r", "r2"}) || last.Marca.Restante().Sign() != 0 {
		t.Fatalf("the rest: %+v, want a cargo of the 30.00 left, the original reversed by r2", last)
	}
	third := movD(t, movimiento.Datos{ID: "r3", Cuenta: "A", Tipo: movimiento.Anulacion, Anula: "o"})
	if d := Decide(Input{Mov: third, Referido: last.Marca, Now: now, Cuentas: on(&last.Cuentas[0])}); !errors.Is(d.Err, YaAnulado) {
		t.Errorf("a refund of a movement refunded whole: %v, want YaAnulado", d.Err)
	}
	// Taking an abono back is a debit: the funds and a freeze decide.
	if d := Decide(Input{Mov: anula("", ""), Referido: original, Now: now, Funds: Reject, Cuentas: on(account(t, "A", "49.99", "", now))}); d.Err != nil || d.Apuntes[0].Estado != movimiento.Rechazado || d.Marca != nil {
		t.Errorf("a reversal beyond funds under reject: %+v, want recorded rejected, the original not marked", d)
	}
}

// on is the accounts the tests give Decide, by id; nil ones are left out.
func on(cs ...*Cuenta) map[string]*Cuenta {
	m := map[string]*Cuenta{}
	for _, c := range cs {
		if c != nil {
			m[c.ID] = c
		}
	}
	return m
}

func TestDecideRepartoMovesEveryPartOrNone(t *testing.T) {
	reparto := movD(t, movimiento.Datos{ID: "p", Cuenta: "A", Tipo: movimiento.Reparto, Importe: "100.00", Moneda: "EUR",
		Partes: []movimiento.ParteDatos{{Cuenta: "B", Importe: "90.00"}, {Cuenta: "C", Importe: "8.50"}, {Cuenta: "D", Importe: "1.50"}}})
	usd := Nueva("D", "USD")
	for _, tc := range []struct {
		name   string
		in     Input
		estado movimiento.Estado // "": failed
		rule   Rule
	}{
		{"within funds", Input{Mov: reparto, Cuentas: on(account(t, "A", "100", "", now))}, movimiento.Aplicado, ""},
		{"beyond funds, retry", Input{Mov: reparto, Cuentas: on(account(t, "A", "99.99", "", now))}, "", SaldoInsuficiente},
		{"beyond funds, reject", Input{Mov: reparto, Funds: Reject, Cuentas: on(account(t, "A", "99.99", "", now))}, movimiento.Rechazado, ""},
		{"a part's account in another currency", Input{Mov: reparto, Funds: Reject, Cuentas: on(account(t, "A", "100", "", now), &usd)}, "", MonedaDistinta},
	} {
		tc.in.Now = now
		d := Decide(tc.in)
		switch {
		case tc.estado == "" && (!errors.Is(d.Err, tc.rule) || len(d.Apuntes) > 0):
			t.Errorf("%s: %+v, want failed by %s, nothing written", tc.name, d, tc.rule)
		case tc.estado == movimiento.Rechazado && (len(d.Apuntes) != 1 || d.Apuntes[0].Estado != tc.estado || len(d.Cuentas) != 0):
			t.Errorf("%s: %+v, want the payer's record rejected, no leg", tc.name, d)
		case tc.estado == movimiento.Aplicado && (len(d.Apuntes) != 4 || len(d.Cuentas) != 4):
			t.Errorf("%s: %+v, want the payer's cargo and three abono legs", tc.name, d)
		case tc.estado == movimiento.Aplicado:
			payer, legs := d.Apuntes[0], d.Apuntes[1:]
			if payer.Movimiento.Tipo != movimiento.Cargo || len(payer.Partes) != 3 || !d.Cuentas[0].Saldo.IsZero() {
				t.Errorf("payer %+v, account %+v; want a cargo of 100.00 listing its parts", payer, d.Cuentas[0])
			}
			for i, want := range []string{"90", "8.5", "1.5"} {
				if l := legs[i]; l.Movimiento.Tipo != movimiento.Abono || l.Contrapartida != "A" || !l.Movimiento.Importe.Equal(dec(want)) || !d.Cuentas[i+1].Saldo.Equal(dec(want)) || l.Seq != 1 {
					t.Errorf("leg %d = %+v, want an abono of %s naming A, at seq 1", i, l, want)
				}
			}
		}
	}
}

// A transfer or a reparto is reversed whole, named on its payer: the payer gets it all
// back, and each account it credited pays its part back by a debit's rules.
func TestDecideReversingATransferOrRepartoTakesEveryLegBack(t *testing.T) {
	reparto := movD(t, movimiento.Datos{ID: "p", Cuenta: "A", Tipo: movimiento.Reparto, Importe: "100.00", Moneda: "EUR",
		Partes: []movimiento.ParteDatos{{Cuenta: "B", Importe: "90.00"}, {Cuenta: "C", Importe: "10.00"}}})
	applied := Decide(Input{Mov: reparto, Now: now, Cuentas: on(account(t, "A", "100", "", now))})
	payer, legB := applied.Apuntes[0], applied.Apuntes[1]
	accts := on(&applied.Cuentas[0], &applied.Cuentas[1], &applied.Cuentas[2])
	anula := func(id, cta, importe string) movimiento.Movimiento {
		return movD(t, movimiento.Datos{ID: id, Cuenta: cta, Tipo: movimiento.Anulacion, Anula: "p", Importe: importe})
	}
	d := Decide(Input{Mov: anula("r", "A", ""), Referido: &payer, Now: now, Cuentas: accts})
	if d.Err != nil || len(d.Apuntes) != 3 || d.Apuntes[0].Movimiento.Tipo != movimiento.Abono || d.Apuntes[1].Movimiento.Tipo != movimiento.Cargo ||
		d.Apuntes[1].Movimiento.Cuenta != "B" || d.Apuntes[1].Contrapartida != "A" || !d.Cuentas[0].Saldo.Equal(dec("100")) ||
		!d.Cuentas[1].Saldo.IsZero() || !d.Cuentas[2].Saldo.IsZero() || d.Marca == nil || d.Marca.AnuladoPor != "r" {
		t.Fatalf("the reversal: %+v, want A's abono of 100.00, B and C debited back, the reparto marked reversed", d)
	}
	if d := Decide(Input{Mov: anula("r", "A", "50.00"), Referido: &payer, Now: now, Cuentas: accts}); !errors.Is(d.Err, ImporteAnulacion) {
		t.Errorf("part of a reparto: %v, want ImporteAnulacion: it is reversed whole", d.Err)
	}
	if d := Decide(Input{Mov: anula("r", "B", ""), Referido: &legB, Now: now, Cuentas: accts}); !errors.Is(d.Err, AnulaTraspaso) {
		t.Errorf("named on a credited account: %v, want AnulaTraspaso", d.Err)
	}
	spent := *accts["C"]
	spent.Saldo = dec("9.99")
	accts["C"] = &spent
	if d := Decide(Input{Mov: anula("r", "A", ""), Referido: &payer, Now: now, Funds: Reject, Cuentas: accts}); d.Err != nil || len(d.Apuntes) != 1 || d.Apuntes[0].Estado != movimiento.Rechazado || d.Marca != nil {
		t.Errorf("C cannot pay its part back, under reject: %+v, want the reversal recorded rejected, nothing moved", d)
	}
}
