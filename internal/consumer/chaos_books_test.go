package consumer_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/movimiento"
)

// QueryClient is the part of the DynamoDB API Verify needs.
type QueryClient interface {
	Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
}

// stored is one movement item as read back, decoded here from the item's attributes
// (not through the store's code, which it checks).
type stored struct {
	tipo          movimiento.Tipo
	importe       decimal.Decimal
	huella        string
	estado        movimiento.Estado
	seq           int64
	saldoTras     decimal.Decimal
	motivo        string
	contrapartida string
	partes        []movimiento.Parte // a reparto's, on its payer's records
	anula         string
	anuladoPor    string
	reembolsado   decimal.Decimal // what the refunds of it gave back
	anulaciones   []string        // its refunds, in the order they applied
	retencion     string
	expira        time.Time
	capturadaPor  string
	liberadaPor   string
}

// String is the item as a violation shows it: what it is, what it moved, its links.
func (s stored) String() string {
	return fmt.Sprintf("{%s %s %s seq %d saldo_tras %s contrapartida %q partes %v anula %q anulado_por %q reembolsado %s anulaciones %v huella %.12s}",
		s.tipo, s.importe, s.estado, s.seq, s.saldoTras, s.contrapartida, s.partes, s.anula, s.anuladoPor, s.reembolsado, s.anulaciones, s.huella)
}

// posted reports whether the item moved its account's balance: an applied abono or
// cargo (transfer legs, reversals and captures are recorded as one).
func (s stored) posted() bool {
	return s.estado == movimiento.Aplicado && (s.tipo == movimiento.Abono || s.tipo == movimiento.Cargo)
}

// delta is what a posted item did to its account's balance.
func (s stored) delta() decimal.Decimal {
	if s.tipo == movimiento.Cargo {
		return s.importe.Neg()
	}
	return s.importe
}

// legs is what the item moved with other accounts: its parts (a reparto's payer, or a
// reversal of one), or its contrapartida of its importe (a transfer's legs, a leg of a
// reparto or of a reversal); none for a movement of its account alone.
func (s stored) legs() []movimiento.Parte {
	switch {
	case len(s.partes) > 0:
		return s.partes
	case s.contrapartida != "":
		return []movimiento.Parte{{Cuenta: s.contrapartida, Importe: s.importe}}
	}
	return nil
}

// creditLeg reports whether the item is what a transfer or reparto credited to this
// account: a reversal names it on the payer, never here.
func (s stored) creditLeg() bool {
	return s.tipo == movimiento.Abono && s.contrapartida != "" && s.anula == ""
}

// payerLeg reports whether the item is a transfer's or reparto's debit of its payer.
func (s stored) payerLeg() bool {
	return s.tipo == movimiento.Cargo && s.anula == "" && (s.contrapartida != "" || len(s.partes) > 0)
}

// hold is an active hold as the account item keeps it.
type hold struct {
	importe decimal.Decimal
	expira  time.Time
}

// account is one account's items as read back.
type account struct {
	exists      bool
	saldo       decimal.Decimal
	limite      decimal.Decimal
	movimientos int64
	retenciones map[string]hold
	movs        map[string]stored // by movement id
}

// retenido is what the account's active holds not lapsed by now reserve.
func (a *account) retenido(now time.Time) decimal.Decimal {
	sum := decimal.Zero
	for _, h := range a.retenciones {
		if h.expira.After(now) {
			sum = sum.Add(h.importe)
		}
	}
	return sum
}

// maxPages bounds the reading of one account: a workload account holds at most a few
// thousand movements, a few pages.
const maxPages = 10_000

// readAccount reads every item of account c, strongly consistent, page by page.
func readAccount(ctx context.Context, db QueryClient, table, c string) (*account, error) {
	a := &account{movs: map[string]stored{}, retenciones: map[string]hold{}}
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(table),
		ConsistentRead:            aws.Bool(true),
		KeyConditionExpression:    aws.String("pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: "CUENTA#" + c}},
	}
	for range maxPages {
		out, err := db.Query(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("chaos: read account %s: %w", c, err)
		}
		for _, item := range out.Items {
			if err := a.add(item); err != nil {
				return nil, fmt.Errorf("chaos: account %s: %w", c, err)
			}
		}
		if len(out.LastEvaluatedKey) == 0 {
			return a, nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
	return nil, fmt.Errorf("chaos: account %s: over %d pages", c, maxPages)
}

// attrs reads the attributes of one item, collecting what cannot be read.
type attrs struct {
	item map[string]types.AttributeValue
	errs []error
}

func (r *attrs) str(k string) string {
	v, ok := r.item[k].(*types.AttributeValueMemberS)
	if !ok {
		return ""
	}
	return v.Value
}

func (r *attrs) num(k string) decimal.Decimal {
	v, ok := r.item[k].(*types.AttributeValueMemberN)
	if !ok {
		return decimal.Zero
	}
	d, err := decimal.NewFromString(v.Value)
	r.errs = append(r.errs, err)
	return d
}

// strs reads a list (or set) of strings.
func (r *attrs) strs(k string) []string {
	if ss, ok := r.item[k].(*types.AttributeValueMemberSS); ok {
		return ss.Value
	}
	l, _ := r.item[k].(*types.AttributeValueMemberL)
	if l == nil {
		return nil
	}
	out := make([]string, len(l.Value))
	for i, v := range l.Value {
		e := &attrs{item: map[string]types.AttributeValue{"v": v}}
		out[i] = e.str("v")
	}
	return out
}

// partes reads a reparto's parts: a list of maps of cuenta and importe.
func (r *attrs) partes(k string) []movimiento.Parte {
	l, _ := r.item[k].(*types.AttributeValueMemberL)
	if l == nil {
		return nil
	}
	out := make([]movimiento.Parte, len(l.Value))
	for i, v := range l.Value {
		m, _ := v.(*types.AttributeValueMemberM)
		if m == nil {
			r.errs = append(r.errs, fmt.Errorf("part %d of %s is not a map", i, k))
			continue
		}
		e := &attrs{item: m.Value}
		out[i] = movimiento.Parte{Cuenta: e.str("cuenta"), Importe: e.num("importe")}
		r.errs = append(r.errs, e.errs...)
	}
	return out
}

func (r *attrs) time(k string) time.Time {
	s := r.str(k)
	if s == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	r.errs = append(r.errs, err)
	return t
}

// add decodes one item of the account.
func (a *account) add(item map[string]types.AttributeValue) error {
	r := &attrs{item: item}
	sk := r.str("sk")
	if sk == "CUENTA" {
		a.exists, a.saldo, a.limite = true, r.num("saldo"), r.num("limite")
		n, err := strconv.ParseInt(r.num("movimientos").String(), 10, 64)
		a.movimientos = n
		if m, ok := item["retenciones"].(*types.AttributeValueMemberM); ok {
			for id, v := range m.Value {
				entry, _ := v.(*types.AttributeValueMemberM)
				if entry == nil {
					return fmt.Errorf("active hold %s is not a map", id)
				}
				e := &attrs{item: entry.Value}
				a.retenciones[id] = hold{importe: e.num("importe"), expira: e.time("expira")}
				r.errs = append(r.errs, e.errs...)
			}
		}
		return errors.Join(append(r.errs, err)...)
	}
	id, ok := strings.CutPrefix(sk, "MOV#")
	if !ok {
		return fmt.Errorf("item with sort key %q is neither the account nor a movement", sk)
	}
	s := stored{
		tipo: movimiento.Tipo(r.str("tipo")), importe: r.num("importe"), huella: r.str("huella"), estado: movimiento.Estado(r.str("estado")),
		motivo: r.str("motivo"), contrapartida: r.str("contrapartida"), partes: r.partes("partes"), anula: r.str("anula"),
		anuladoPor: r.str("anulado_por"), reembolsado: r.num("reembolsado"), anulaciones: r.strs("anulaciones"),
		retencion: r.str("retencion"), expira: r.time("expira"), capturadaPor: r.str("capturada_por"), liberadaPor: r.str("liberada_por"),
	}
	if s.estado == movimiento.Aplicado {
		s.seq = r.num("seq").IntPart()
		s.saldoTras = r.num("saldo_tras")
	}
	a.movs[id] = s
	return errors.Join(r.errs...)
}
