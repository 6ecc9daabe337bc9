package consumer_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/ledger"
	"github.com/ledger-dev/ledger/internal/movimiento"
)

// QueryClient is the part of the DynamoDB API Verify needs.
type QueryClient interface {
	Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
}

// Report is Verify's verdict on one run.
type Report struct {
	// Violations lists every broken guarantee; a correct ledger has none.
	Violations []Violation
	// Applied and Rejected count the workload's movements recorded with each estado.
	// Unapplied are those never recorded because every delivery of theirs ended in the
	// DLQ, each with its reason: allowed by the contract, and a sign of a stuck
	// message when the scenario's maxReceiveCount is far above what its faults can use.
	Applied   int
	Rejected  int
	Unapplied []Violation
}

// Violation is one broken guarantee, or one unapplied movement: where, and what.
type Violation struct {
	Where   string // cuenta/id, cuenta, or message id
	Problem string
}

// String is the violation as one line: where, then what.
func (v Violation) String() string { return v.Where + ": " + v.Problem }

// stored is one movement item as read back.
type stored struct {
	tipo      string
	importe   decimal.Decimal
	huella    string
	estado    ledger.Estado
	seq       int64
	saldoTras decimal.Decimal
	motivo    string
}

// account is one account's items as read back.
type account struct {
	exists      bool
	saldo       decimal.Decimal
	movimientos int64
	movs        map[string]stored // by movement id
}

// Verify reads every account of the run back (strongly consistent) and checks what a
// user is promised: each movement of the workload is applied exactly once with its
// own fingerprint, or recorded rejected (reject policy, cargos only), or else every
// delivery of it ended in the DLQ with a reason; nothing else is recorded; each
// account's saldo, movimientos, seq and saldo_tras agree with what is recorded, and
// no applied cargo took a balance below zero; under the retry policy with nothing
// unapplied, every saldo is the workload's. Every malformed message and every late
// conflicting replay ended in the DLQ with its reason, the replays as conflicting
// duplicates, and no genuine delivery was parked.
func Verify(ctx context.Context, db QueryClient, table string, res Result) (Report, error) {
	var rep Report
	bad := func(where, format string, args ...any) {
		rep.Violations = append(rep.Violations, Violation{Where: where, Problem: fmt.Sprintf(format, args...)})
	}
	accounts := map[string]*account{}
	for c := range res.Workload.Saldos {
		a, err := readAccount(ctx, db, table, c)
		if err != nil {
			return Report{}, err
		}
		accounts[c] = a
	}

	deliveries := map[string][]string{} // cuenta/id → message ids carrying it
	for _, d := range res.Schedule.Deliveries {
		m, err := movimiento.Parse([]byte(d.Body))
		if err != nil {
			if f := res.Fates[d.MessageID]; !(f.Parked || f.Dead) || f.Reason == "" {
				bad(d.MessageID, "malformed message not sent to the DLQ with a reason (fate %+v)", f)
			}
			continue
		}
		deliveries[m.Cuenta+"/"+m.ID] = append(deliveries[m.Cuenta+"/"+m.ID], d.MessageID)
		if f := res.Fates[d.MessageID]; f.Parked {
			bad(d.MessageID, "a genuine delivery of %s/%s was parked: %s", m.Cuenta, m.ID, f.Reason)
		}
	}
	for _, d := range res.Schedule.Late {
		if f := res.Fates[d.MessageID]; !(f.Parked || f.Dead) || f.Outcome != ledger.ConflictingDuplicate || f.Reason == "" {
			bad(d.MessageID, "late conflicting replay not refused as a conflicting duplicate with a reason (fate %+v)", f)
		}
	}

	genuine := map[string]map[string]bool{} // cuenta → ids of the workload
	for _, m := range res.Workload.Movements {
		key := m.Cuenta + "/" + m.ID
		if genuine[m.Cuenta] == nil {
			genuine[m.Cuenta] = map[string]bool{}
		}
		genuine[m.Cuenta][m.ID] = true
		s, ok := accounts[m.Cuenta].movs[m.ID]
		if !ok {
			var reasons []string
			for _, id := range deliveries[key] {
				f := res.Fates[id]
				if !(f.Parked || f.Dead) || f.Reason == "" {
					reasons = nil
					break
				}
				reasons = append(reasons, id+": "+f.Reason)
			}
			if len(reasons) == 0 {
				bad(key, "lost: not recorded, and not every delivery of it is in the DLQ with a reason")
			} else {
				rep.Unapplied = append(rep.Unapplied, Violation{Where: key, Problem: strings.Join(reasons, "; ")})
			}
			continue
		}
		if !m.MatchesHuella(s.huella) {
			bad(key, "recorded with fingerprint %s, the movement's is %s: a conflicting duplicate was recorded", s.huella, m.Huella())
		}
		switch {
		case s.estado == ledger.Aplicado:
			rep.Applied++
		case s.estado == ledger.Rechazado && res.Scenario.Policy == ledger.Reject && m.Tipo == movimiento.Cargo && s.motivo != "":
			rep.Rejected++
		default:
			bad(key, "recorded with estado %q (motivo %q) under policy %q for a %s", s.estado, s.motivo, res.Scenario.Policy, m.Tipo)
		}
	}

	for c, a := range accounts {
		checkAccount(c, a, genuine[c], bad)
		if res.Scenario.Policy != ledger.Reject && len(rep.Unapplied) == 0 && !a.saldo.Equal(res.Workload.Saldos[c]) {
			bad(c, "saldo %s, the workload's movements sum to %s", a.saldo, res.Workload.Saldos[c])
		}
	}
	slices.SortFunc(rep.Violations, func(x, y Violation) int { return cmp.Compare(x.String(), y.String()) })
	return rep, nil
}

// checkAccount checks one account against its own recorded movements: every item is
// one of the workload's; saldo and movimientos are the applied movements' sum and
// count; their seq are 1..n and each saldo_tras is the running balance, never below
// zero (no account in a workload has an overdraft limit).
func checkAccount(c string, a *account, genuine map[string]bool, bad func(string, string, ...any)) {
	var applied []stored
	for id, s := range a.movs {
		if !genuine[id] {
			bad(c+"/"+id, "recorded, but no such movement was sent")
		}
		if s.estado == ledger.Aplicado {
			applied = append(applied, s)
		}
	}
	if !a.exists {
		if len(applied) > 0 {
			bad(c, "no account item, but %d applied movements", len(applied))
		}
		return
	}
	slices.SortFunc(applied, func(x, y stored) int { return cmp.Compare(x.seq, y.seq) })
	running := decimal.Zero
	for i, s := range applied {
		delta := s.importe
		if s.tipo == string(movimiento.Cargo) {
			delta = delta.Neg()
		}
		running = running.Add(delta)
		if s.seq != int64(i+1) {
			bad(c, "applied seq values are not 1..%d: position %d holds %d", len(applied), i+1, s.seq)
			return
		}
		if !s.saldoTras.Equal(running) {
			bad(c, "saldo_tras of seq %d is %s, the running balance %s", s.seq, s.saldoTras, running)
		}
		if running.IsNegative() {
			bad(c, "seq %d took the balance to %s, below the limit of 0", s.seq, running)
		}
	}
	if !a.saldo.Equal(running) {
		bad(c, "saldo %s, its applied movements sum to %s", a.saldo, running)
	}
	if a.movimientos != int64(len(applied)) {
		bad(c, "movimientos %d, %d movements applied", a.movimientos, len(applied))
	}
}

// maxPages bounds the reading of one account: a workload account holds at most a few
// thousand movements, a few pages.
const maxPages = 10_000

// readAccount reads every item of account c, strongly consistent, page by page.
func readAccount(ctx context.Context, db QueryClient, table, c string) (*account, error) {
	a := &account{movs: map[string]stored{}}
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

// add decodes one item of the account.
func (a *account) add(item map[string]types.AttributeValue) error {
	var errs []error
	str := func(k string) string {
		v, ok := item[k].(*types.AttributeValueMemberS)
		if !ok {
			return ""
		}
		return v.Value
	}
	num := func(k string) decimal.Decimal {
		v, ok := item[k].(*types.AttributeValueMemberN)
		if !ok {
			return decimal.Zero
		}
		d, err := decimal.NewFromString(v.Value)
		errs = append(errs, err)
		return d
	}
	sk := str("sk")
	if sk == "CUENTA" {
		a.exists, a.saldo = true, num("saldo")
		n, err := strconv.ParseInt(num("movimientos").String(), 10, 64)
		a.movimientos = n
		return errors.Join(append(errs, err)...)
	}
	id, ok := strings.CutPrefix(sk, "MOV#")
	if !ok {
		return fmt.Errorf("item with sort key %q is neither the account nor a movement", sk)
	}
	s := stored{tipo: str("tipo"), importe: num("importe"), huella: str("huella"), estado: ledger.Estado(str("estado")), motivo: str("motivo")}
	if s.estado == ledger.Aplicado {
		s.seq = num("seq").IntPart()
		s.saldoTras = num("saldo_tras")
	}
	a.movs[id] = s
	return errors.Join(errs...)
}
