package extracto_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/extracto"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/store"
	"github.com/ledger-dev/ledger/internal/testenv"
)

var t0 = testenv.FixedNow

// ledger is a table where ES76 took a movement a minute from t0:
//
//	seq 1  t0     abono "=1+1"  100.00                           100.00
//	seq 2  t0+1m  cargo "c"      30.00  `Pago "urgente", 2/2`     70.00
//	seq 3  t0+2m  traspaso "t"   20.00 to ES91  "@casa"            50.00
//	seq 4  t0+3m  the cargo reversed                               80.00
func ledger(t *testing.T) (*testenv.DynamoDB, *store.Reader) {
	t.Helper()
	env := testenv.NewDynamoDB(t)
	at := t0
	l := testenv.Ledger(t, env, cuenta.Retry, func() time.Time { return at })
	for i, d := range []movimiento.Datos{
		{ID: "=1+1", Cuenta: "ES76", Tipo: movimiento.Abono, Importe: "100.00", Moneda: "EUR"},
		{ID: "c", Cuenta: "ES76", Tipo: movimiento.Cargo, Importe: "30.00", Moneda: "EUR", Concepto: `Pago "urgente", 2/2`, Fecha: "2026-12-01T09:00:00+01:00"},
		{ID: "t", Cuenta: "ES76", Destino: "ES91", Tipo: movimiento.Traspaso, Importe: "20.00", Moneda: "EUR", Concepto: "@casa"},
		{ID: "a", Cuenta: "ES76", Tipo: movimiento.Anulacion, Anula: "c"},
	} {
		at = t0.Add(time.Duration(i) * time.Minute)
		if r := testenv.Apply(t, l, testenv.Movement(t, d)); r.Outcome != store.Applied {
			t.Fatalf("%s: %+v", d.ID, r)
		}
	}
	return env, store.NewReader(env.Client, env.Table())
}

func write(t *testing.T, r extracto.Reader, p extracto.Periodo, f extracto.Formato) (string, extracto.Resumen) {
	t.Helper()
	var out bytes.Buffer
	res, err := extracto.Escribir(context.Background(), &out, r, p, f)
	if err != nil {
		t.Fatalf("%+v: %v\n%s", p, err, out.String())
	}
	return out.String(), res
}

func TestCSVIsRFC4180WithTheBalancesAroundTheMovements(t *testing.T) {
	_, r := ledger(t)
	p := extracto.Periodo{Cuenta: "ES76", Desde: t0.Add(time.Minute), Hasta: t0.Add(3 * time.Minute)}
	out, res := write(t, r, p, extracto.CSV)
	want := "aplicado,seq,id,tipo,concepto,importe,saldo_tras,moneda,contrapartida,anula,anulado_por,retencion,fecha\r\n" +
		"2026-12-02T10:16:00Z,1,,saldo_inicial,,,100.00,EUR,,,,,\r\n" +
		`2026-12-02T10:16:00Z,2,c,cargo,"Pago ""urgente"", 2/2",-30.00,70.00,EUR,,,a,,2026-12-01T09:00:00+01:00` + "\r\n" +
		"2026-12-02T10:17:00Z,3,t,cargo,'@casa,-20.00,50.00,EUR,ES91,,,,\r\n" +
		"2026-12-02T10:18:00Z,3,,saldo_final,,,50.00,EUR,,,,,\r\n"
	if out != want {
		t.Errorf("CSV:\n%s\nwant:\n%s", out, want)
	}
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || rows[2][4] != `Pago "urgente", 2/2` {
		t.Errorf("read back: %q, %v; want the concepto as it was sent", rows, err)
	}
	if res.Movimientos != 2 || res.Inicial.Seq != 1 || res.Final.Seq != 3 || res.Cargos.String() != "50" || !res.Abonos.IsZero() {
		t.Errorf("summary %+v, want 2 movements, seq 1 → 3, 50 of debits", res)
	}
	whole, _ := write(t, r, extracto.Periodo{Cuenta: "ES76", Hasta: t0.Add(time.Hour)}, extracto.CSV)
	if !strings.Contains(whole, "\r\n,0,,saldo_inicial,,,0.00,EUR,") || !strings.Contains(whole, ",1,'=1+1,abono,,100.00,100.00,") ||
		!strings.Contains(whole, ",4,a,abono,,30.00,80.00,EUR,,c,,,") {
		t.Errorf("the whole statement:\n%s\nwant it from zero, an id that looks like a formula quoted, the reversal naming c", whole)
	}
}

func TestJSONAndTextSayTheSame(t *testing.T) {
	_, r := ledger(t)
	p := extracto.Periodo{Cuenta: "ES76", Desde: t0.Add(time.Minute), Hasta: t0.Add(3 * time.Minute)}
	out, _ := write(t, r, p, extracto.JSON)
	var doc struct {
		Cuenta, Moneda, Desde, Hasta string
		SaldoInicial                 struct {
			Saldo string
			Seq   int64
		} `json:"saldo_inicial"`
		SaldoFinal struct {
			Saldo string
			Seq   int64
		} `json:"saldo_final"`
		Movimientos []map[string]any
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if doc.Cuenta != "ES76" || doc.Moneda != "EUR" || doc.Desde != "2026-12-02T10:16:00Z" || doc.Hasta != "2026-12-02T10:18:00Z" ||
		doc.SaldoInicial.Saldo != "100.00" || doc.SaldoFinal.Saldo != "50.00" || len(doc.Movimientos) != 2 {
		t.Fatalf("JSON %s", out)
	}
	if m := doc.Movimientos[0]; m["importe"] != "-30.00" || m["concepto"] != `Pago "urgente", 2/2` || m["anulado_por"] != "a" || m["seq"] != 2.0 {
		t.Errorf("first movement %v", m)
	}
	if m := doc.Movimientos[1]; m["contrapartida"] != "ES91" || m["concepto"] != "@casa" {
		t.Errorf("second movement %v: JSON carries text as it is", m)
	}
	text, _ := write(t, r, p, extracto.Texto)
	for _, want := range []string{"cuenta ES76 (EUR), applied from 2026-12-02T10:16:00Z until before 2026-12-02T10:18:00Z", "saldo inicial", "saldo final", "-30.00", "contrapartida ES91"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
}

// A statement whose movements do not lead from its opening balance to its closing one
// fails before the first line that would not follow: here a movement is missing, as
// from an index still catching up.
func TestAStatementThatDoesNotAddUpFails(t *testing.T) {
	env, r := ledger(t)
	if _, err := env.Client.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{TableName: aws.String(env.Table()),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "CUENTA#ES76"}, "sk": &types.AttributeValueMemberS{Value: "MOV#c"}}}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	_, err := extracto.Escribir(context.Background(), &out, r, extracto.Periodo{Cuenta: "ES76", Hasta: t0.Add(time.Hour)}, extracto.CSV)
	if !errors.Is(err, extracto.ErrNoCuadra) || !strings.Contains(err.Error(), "movement t (seq 3") {
		t.Errorf("err = %v, want ErrNoCuadra naming movement t", err)
	}
	if strings.Contains(out.String(), ",t,") || strings.Contains(out.String(), "saldo_final") {
		t.Errorf("written before the failure:\n%s\nwant nothing from the movement that does not follow on", out.String())
	}
}

func TestPeriodsOutsideTheAccountsLife(t *testing.T) {
	_, r := ledger(t)
	out, res := write(t, r, extracto.Periodo{Cuenta: "ES76", Desde: t0.Add(-time.Hour), Hasta: t0}, extracto.CSV)
	if res.Movimientos != 0 || !res.Final.Saldo.IsZero() || strings.Count(out, "\r\n") != 3 {
		t.Errorf("before it was opened: %+v\n%s\nwant an empty statement at zero", res, out)
	}
	if _, res := write(t, r, extracto.Periodo{Cuenta: "ES76", Desde: t0.Add(time.Hour), Hasta: t0.Add(2 * time.Hour)}, extracto.CSV); res.Movimientos != 0 || res.Inicial.Saldo.String() != "80" || res.Final.Saldo.String() != "80" {
		t.Errorf("after its last movement: %+v, want none, at 80", res)
	}
	var out2 bytes.Buffer
	if _, err := extracto.Escribir(context.Background(), &out2, r, extracto.Periodo{Cuenta: "ES99", Hasta: t0}, extracto.CSV); !errors.Is(err, store.ErrNotFound) || out2.Len() != 0 {
		t.Errorf("an unknown account: %v, %q; want ErrNotFound and nothing written", err, out2.String())
	}
}
