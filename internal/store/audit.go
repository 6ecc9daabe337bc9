package store

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/shopspring/decimal"
	"golang.org/x/sync/errgroup"

	"github.com/ledger-dev/ledger/internal/ledger"
	"github.com/ledger-dev/ledger/internal/versioned"
)

// ScanClient is the part of the DynamoDB API the audit needs.
type ScanClient interface {
	Scan(ctx context.Context, in *dynamodb.ScanInput, opts ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
}

// AuditReport is the verdict on a whole table. Movements counts applied movements.
// Broken lists every account that breaks an invariant, sorted by account, with what
// is wrong.
type AuditReport struct {
	OK        bool     `json:"ok"`
	Accounts  int      `json:"-"`
	Movements int      `json:"-"`
	Broken    []Broken `json:"broken"`
}

// Broken is one account that breaks the audit invariants.
type Broken struct {
	Cuenta string `json:"cuenta"`
	Reason string `json:"reason"`
}

// AuditOptions tune the scan. Segments is the number of parallel scan segments (1 to
// 64, default 4). PageSize caps the items per Scan page (0: DynamoDB's 1 MB pages).
type AuditOptions struct {
	Segments int
	PageSize int32
}

// maxSegments bounds the parallel scan: DynamoDB allows up to 1,000,000 segments, but
// beyond a few dozen a single process gains nothing.
const maxSegments = 64

// Audit scans the whole table (strongly consistent, in parallel segments, page by page)
// and checks DESIGN.md's invariants for every account: saldo equals the applied
// movements' abonos minus cargos, movimientos equals their number, their seq values are
// exactly 1..movimientos, and each one's saldo_tras is the running balance at its seq.
// It keeps one small record per applied movement in memory. Items that are not the
// ledger's (migration records) are skipped.
func Audit(ctx context.Context, db ScanClient, table string, opts AuditOptions) (AuditReport, error) {
	segments := opts.Segments
	if segments <= 0 {
		segments = 4
	}
	segments = min(segments, maxSegments)
	parts := make([]map[string]*ledgerAccount, segments)
	g, gctx := errgroup.WithContext(ctx)
	for seg := range segments {
		g.Go(func() (err error) {
			parts[seg], err = scanSegment(gctx, db, scanInput(table, seg, segments, opts.PageSize))
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return AuditReport{}, err
	}
	accounts := map[string]*ledgerAccount{}
	for _, part := range parts {
		for id, a := range part {
			accounts[id] = accounts[id].merge(a)
		}
	}
	report := AuditReport{OK: true, Accounts: len(accounts), Broken: []Broken{}}
	for id, a := range accounts {
		report.Movements += len(a.applied)
		if reasons := a.check(); len(reasons) > 0 {
			report.Broken = append(report.Broken, Broken{Cuenta: id, Reason: strings.Join(reasons, "; ")})
		}
	}
	slices.SortFunc(report.Broken, func(a, b Broken) int { return strings.Compare(a.Cuenta, b.Cuenta) })
	report.OK = len(report.Broken) == 0
	return report, nil
}

// scanSegment reads one segment, every page of it.
func scanSegment(ctx context.Context, db ScanClient, in *dynamodb.ScanInput) (map[string]*ledgerAccount, error) {
	accounts := map[string]*ledgerAccount{}
	for { // ends at the segment's last page
		out, err := db.Scan(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("store: audit scan of segment %d: %w", aws.ToInt32(in.Segment), err)
		}
		for _, item := range out.Items {
			collect(accounts, item)
		}
		if len(out.LastEvaluatedKey) == 0 {
			return accounts, nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// scanInput is the first Scan request for one segment of a parallel scan.
func scanInput(table string, seg, total int, pageSize int32) *dynamodb.ScanInput {
	in := &dynamodb.ScanInput{
		TableName:      aws.String(table),
		ConsistentRead: aws.Bool(true),
		Segment:        aws.Int32(int32(seg)),
		TotalSegments:  aws.Int32(int32(total)),
	}
	if pageSize > 0 {
		in.Limit = aws.Int32(pageSize)
	}
	return in
}

// ledgerAccount is what the audit knows of one account. Applied movements are keyed by
// their sort key, so an item seen by two segments counts once: DynamoDB's segments are
// disjoint, but the embedded store ignores Segment and gives every segment the table.
type ledgerAccount struct {
	hasItem     bool
	saldo       decimal.Decimal
	movimientos int64
	applied     map[string]appliedMov
	undecodable map[string]string
}

type appliedMov struct {
	seq       int64
	delta     decimal.Decimal
	saldoTras decimal.Decimal
}

func collect(accounts map[string]*ledgerAccount, item versioned.Item) {
	var k struct {
		PK string `dynamodbav:"pk"`
		SK string `dynamodbav:"sk"`
	}
	if attributevalue.UnmarshalMap(item, &k) != nil || !strings.HasPrefix(k.PK, cuentaPK) {
		return // not the ledger's (a migration record)
	}
	id := k.PK[len(cuentaPK):]
	a := accounts[id]
	if a == nil {
		a = &ledgerAccount{applied: map[string]appliedMov{}, undecodable: map[string]string{}}
		accounts[id] = a
	}
	if k.SK == cuentaSK {
		c, _, err := decodeCuenta(item)
		if err != nil {
			a.undecodable[k.SK] = fmt.Sprintf("account item: %v", err)
			return
		}
		a.hasItem, a.saldo, a.movimientos = true, c.Saldo, c.Movimientos
		return
	}
	ap, err := decodeApunte(item)
	if err != nil {
		a.undecodable[k.SK] = fmt.Sprintf("item %s: %v", k.SK, err)
		return
	}
	if ap.Estado == ledger.Aplicado {
		a.applied[k.SK] = appliedMov{seq: ap.Seq, delta: ap.Movimiento.Delta(), saldoTras: ap.SaldoTras}
	}
}

// merge combines what two scan segments saw of one account.
func (a *ledgerAccount) merge(b *ledgerAccount) *ledgerAccount {
	if a == nil {
		return b
	}
	if b.hasItem {
		a.hasItem, a.saldo, a.movimientos = true, b.saldo, b.movimientos
	}
	maps.Copy(a.applied, b.applied)
	maps.Copy(a.undecodable, b.undecodable)
	return a
}

// check lists the invariants the account breaks.
func (a *ledgerAccount) check() []string {
	reasons := slices.Sorted(maps.Values(a.undecodable))
	applied := slices.SortedFunc(maps.Values(a.applied), func(x, y appliedMov) int { return cmp.Compare(x.seq, y.seq) })
	sum := decimal.Zero
	for _, m := range applied {
		sum = sum.Add(m.delta)
	}
	n := int64(len(applied))
	if !a.hasItem {
		if n > 0 {
			reasons = append(reasons, fmt.Sprintf("no account item, but %d applied movements", n))
		}
		return reasons
	}
	if !a.saldo.Equal(sum) {
		reasons = append(reasons, fmt.Sprintf("saldo is %s, but its applied movements sum to %s", a.saldo, sum))
	}
	if a.movimientos != n {
		reasons = append(reasons, fmt.Sprintf("movimientos is %d, but %d movements are applied", a.movimientos, n))
	}
	running := decimal.Zero
	for i, m := range applied {
		if want := int64(i + 1); m.seq != want {
			reasons = append(reasons, fmt.Sprintf("seq values are not 1..%d: position %d holds seq %d", n, want, m.seq))
			break
		}
		running = running.Add(m.delta)
		if !m.saldoTras.Equal(running) {
			reasons = append(reasons, fmt.Sprintf("saldo_tras of seq %d is %s, but the running balance is %s", m.seq, m.saldoTras, running))
			break
		}
	}
	return reasons
}
