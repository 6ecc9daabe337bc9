package store

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/shopspring/decimal"
	"golang.org/x/sync/errgroup"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/ledger"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/versioned"
)

// AuditClient is the part of the DynamoDB API the audit needs: Scan for the whole table,
// Query and GetItem to read one account again.
type AuditClient interface {
	ReadClient
	Scan(ctx context.Context, in *dynamodb.ScanInput, opts ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
}

// AuditReport is the verdict on a whole table. Movements counts applied movements;
// Broken lists every account that breaks an invariant, sorted by account.
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
// 64, default 4). PageSize caps the items per Scan page (0: DynamoDB's 1 MB pages). Now
// is the clock holds expire by (nil: time.Now).
type AuditOptions struct {
	Segments int
	PageSize int32
	Now      func() time.Time
}

const (
	// maxSegments bounds the parallel scan: beyond a few dozen one process gains nothing.
	maxSegments     = 64
	defaultSegments = 4
	// maxRereads bounds the attempts to read a busy account from one point of view;
	// the wait between them starts at rereadPause and doubles.
	maxRereads  = 8
	rereadPause = 20 * time.Millisecond
	// maxClockSkew is how far ahead of the audit a writer's clock may run before a hold
	// it dropped counts as dropped early.
	maxClockSkew = 5 * time.Minute
)

// Audit checks the ledger's invariants for every account of the table: saldo equals the
// applied movements' abonos minus cargos, movimientos their number, their seq values
// are exactly 1..movimientos, each saldo_tras is the running balance, every estado is
// known, reversals and reversed movements name each other, every transfer leg has its
// counterpart, and the holds agree with the account's active holds. It is safe on a
// live table: a parallel, strongly consistent Scan reads everything once, and an
// account that looks broken is read again from one point of view (reread) before it is
// reported. Items that are not the ledger's (migration records) are skipped.
func Audit(ctx context.Context, db AuditClient, table string, opts AuditOptions) (AuditReport, error) {
	accounts, err := scan(ctx, db, table, opts)
	if err != nil {
		return AuditReport{}, err
	}
	// Holds lapse as the audit runs, and a writer drops them: each check reads the clock
	// after the reads it judges.
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	report := AuditReport{OK: true, Accounts: len(accounts), Broken: []Broken{}}
	for id, b := range accounts {
		report.Movements += len(b.applied)
		reasons, err := b.audit(ctx, db, table, accounts, now())
		if err == nil && len(reasons) > 0 {
			if b, err = reread(ctx, db, table, id); err == nil {
				reasons, err = b.audit(ctx, db, table, nil, now())
			}
		}
		if err != nil {
			return AuditReport{}, err
		}
		if len(reasons) > 0 {
			report.Broken = append(report.Broken, Broken{Cuenta: id, Reason: strings.Join(reasons, "; ")})
		}
	}
	slices.SortFunc(report.Broken, func(a, b Broken) int { return strings.Compare(a.Cuenta, b.Cuenta) })
	report.OK = len(report.Broken) == 0
	return report, nil
}

// books is what the audit read of one account.
type books struct {
	account  cuenta.Cuenta
	hasItem  bool
	version  int64                    // the account item's, read even when the rest cannot be
	applied  map[string]ledger.Apunte // posted movements by sort key, so an item seen twice counts once
	holds    map[string]ledger.Apunte // holds by hold id
	problems map[string]string        // by sort key: items that cannot be read, or in no known state
	unstable bool                     // it kept moving while it was read again
}

func newBooks() *books {
	return &books{applied: map[string]ledger.Apunte{}, holds: map[string]ledger.Apunte{}, problems: map[string]string{}}
}

// add files one item of the account's partition.
func (b *books) add(sk string, item versioned.Item) {
	if sk == cuentaSK {
		b.version = versionOf(item)
		c, _, err := decodeCuenta(item)
		if err != nil {
			b.problems[sk] = fmt.Sprintf("account item: %v", err)
			return
		}
		b.account, b.hasItem = c, true
		return
	}
	a, err := decodeApunte(item)
	switch {
	case err != nil:
		b.problems[sk] = fmt.Sprintf("item %s: %v", sk, err)
	case !slices.Contains(ledger.Estados, a.Estado):
		b.problems[sk] = fmt.Sprintf("movement %s has estado %q, which is none of %v", a.Movimiento.ID, a.Estado, ledger.Estados)
	case a.Posted():
		b.applied[sk] = a
	case a.Movimiento.Tipo == movimiento.Retencion:
		b.holds[a.Movimiento.ID] = a
	}
}

// merge files what another scan segment read of the same account.
func (b *books) merge(o *books) {
	maps.Copy(b.applied, o.applied)
	maps.Copy(b.holds, o.holds)
	maps.Copy(b.problems, o.problems)
	if o.hasItem {
		b.account, b.hasItem = o.account, true
	}
	b.version = max(b.version, o.version)
}

// check lists the invariants the account breaks, holds expiring by now.
func (b *books) check(now time.Time) []string {
	reasons := slices.Sorted(maps.Values(b.problems))
	if b.unstable {
		reasons = append(reasons, fmt.Sprintf("it changed during each of %d attempts to read it from one point of view; audit it again", maxRereads))
	}
	applied := slices.SortedFunc(maps.Values(b.applied), func(x, y ledger.Apunte) int { return cmp.Compare(x.Seq, y.Seq) })
	n := int64(len(applied))
	if !b.hasItem {
		if n > 0 {
			reasons = append(reasons, fmt.Sprintf("no account item, but %d applied movements", n))
		}
		return reasons
	}
	sum := decimal.Zero
	for _, a := range applied {
		sum = sum.Add(a.Movimiento.Delta())
	}
	if !b.account.Saldo.Equal(sum) {
		reasons = append(reasons, fmt.Sprintf("saldo is %s, but its applied movements sum to %s", b.account.Saldo, sum))
	}
	if b.account.Movimientos != n {
		reasons = append(reasons, fmt.Sprintf("movimientos is %d, but %d movements are applied", b.account.Movimientos, n))
	}
	reasons = append(reasons, b.checkReversals(applied)...)
	reasons = append(reasons, b.checkHolds(now)...)
	running := decimal.Zero
	for i, a := range applied {
		if want := int64(i + 1); a.Seq != want {
			reasons = append(reasons, fmt.Sprintf("seq values are not 1..%d: position %d holds seq %d", n, want, a.Seq))
			break
		}
		running = running.Add(a.Movimiento.Delta())
		if !a.SaldoTras.Equal(running) {
			reasons = append(reasons, fmt.Sprintf("saldo_tras of seq %d is %s, but the running balance is %s", a.Seq, a.SaldoTras, running))
			break
		}
	}
	return reasons
}

// checkHolds checks that every active hold in the account item is a hold held for that
// importe until that expira, every hold held at now is among them, and every captured
// hold has its capture: a posted cargo of at most its importe naming it. A writer drops
// the holds lapsed by its own clock, which it stamps as actualizada, so a hold is judged
// at the later of now and actualizada, up to maxClockSkew ahead: an audit clock behind
// the writers' raises no alarm, and a writer far ahead that freed a hold early does.
func (b *books) checkHolds(now time.Time) []string {
	switch written := b.account.Actualizada; {
	case written.After(now.Add(maxClockSkew)):
		now = now.Add(maxClockSkew)
	case written.After(now):
		now = written
	}
	var reasons []string
	for _, id := range slices.Sorted(maps.Keys(b.account.Retenciones)) {
		r := b.account.Retenciones[id]
		h, ok := b.holds[id]
		if !ok || h.Estado != ledger.Retenida || !h.Movimiento.Importe.Equal(r.Importe) || !h.Movimiento.Expira.Equal(r.Expira) {
			reasons = append(reasons, fmt.Sprintf("active hold %s (%s until %s) has no hold held for it", id, r.Importe, r.Expira.UTC().Format(time.RFC3339)))
		}
	}
	for _, id := range slices.Sorted(maps.Keys(b.holds)) {
		h := b.holds[id]
		switch {
		case h.EstadoAt(now) == ledger.Retenida:
			if _, ok := b.account.Retenciones[id]; !ok {
				reasons = append(reasons, fmt.Sprintf("hold %s is held until %s, but not among the account's active holds", id, h.Movimiento.Expira.UTC().Format(time.RFC3339)))
			}
		case h.Estado == ledger.Capturada:
			c, ok := b.applied[movSK+h.CapturadaPor]
			if !ok || c.Movimiento.Retencion != id || c.Movimiento.Tipo != movimiento.Cargo || c.Movimiento.Importe.GreaterThan(h.Movimiento.Importe) {
				reasons = append(reasons, fmt.Sprintf("hold %s is captured by %s, which is no posted capture of it", id, h.CapturadaPor))
			}
		}
	}
	return reasons
}

// audit lists the invariants the account breaks: check's, and every applied transfer
// leg without its counterpart. The counterpart is looked up in what the scan read (seen,
// nil for none) and, if not found there or not matching (the scan may have read the
// other account before the transfer), read once more, strongly consistent.
func (b *books) audit(ctx context.Context, db AuditClient, table string, seen map[string]*books, now time.Time) ([]string, error) {
	reasons := b.check(now)
	for _, leg := range slices.Sorted(maps.Keys(b.applied)) {
		a := b.applied[leg]
		other := a.Contrapartida
		if other == "" {
			continue
		}
		counterpart, ok := ledger.Apunte{}, false
		if s := seen[other]; s != nil {
			counterpart, ok = s.applied[leg]
		}
		if !ok || !counterparts(a, counterpart) {
			out, err := db.GetItem(ctx, getInput(table, movKey(other, a.Movimiento.ID)))
			if err != nil {
				return nil, fmt.Errorf("store: audit read of transfer %s on %s: %w", a.Movimiento.ID, other, err)
			}
			counterpart, err = decodeApunte(out.Item)
			ok = err == nil && len(out.Item) > 0
		}
		if !ok || !counterparts(a, counterpart) {
			reasons = append(reasons, fmt.Sprintf("transfer leg %s has no counterpart on %s (same id and importe, opposite tipo, naming %s)", a.Movimiento.ID, other, a.Movimiento.Cuenta))
		}
	}
	return reasons, nil
}

// counterparts reports whether x and y are the two legs of one transfer.
func counterparts(x, y ledger.Apunte) bool {
	return y.Estado == ledger.Aplicado && y.Contrapartida == x.Movimiento.Cuenta && x.Contrapartida == y.Movimiento.Cuenta &&
		y.Movimiento.ID == x.Movimiento.ID && y.Movimiento.Importe.Equal(x.Movimiento.Importe) && y.Movimiento.Delta().Equal(x.Movimiento.Delta().Neg())
}

// checkReversals checks the reversal links both ways: a reversed movement names a
// reversal that names it back, and a reversal names a movement it reversed.
func (b *books) checkReversals(applied []ledger.Apunte) []string {
	var reasons []string
	for _, a := range applied {
		if by := a.AnuladoPor; by != "" {
			if r, ok := b.applied[movSK+by]; !ok || r.Movimiento.Anula != a.Movimiento.ID {
				reasons = append(reasons, fmt.Sprintf("movement %s is marked reversed by %s, which is no applied reversal of it", a.Movimiento.ID, by))
			}
		}
		if of := a.Movimiento.Anula; of != "" {
			if o, ok := b.applied[movSK+of]; !ok || o.AnuladoPor != a.Movimiento.ID {
				reasons = append(reasons, fmt.Sprintf("reversal %s undoes %s, which does not name it as its reversal", a.Movimiento.ID, of))
			}
		}
	}
	return reasons
}

// itemKey is an item's key, read leniently: ok is false for an item that is not the
// ledger's.
func itemKey(item versioned.Item) (cuentaID, sk string, ok bool) {
	var k struct {
		PK string `dynamodbav:"pk"`
		SK string `dynamodbav:"sk"`
	}
	if attributevalue.UnmarshalMap(item, &k) != nil {
		return "", "", false
	}
	cuentaID, ok = strings.CutPrefix(k.PK, cuentaPK)
	return cuentaID, k.SK, ok && cuentaID != ""
}

// scan reads the whole table (strongly consistent, in parallel segments, page by page)
// into books by account. Each segment decodes into books of its own, merged at the end:
// the embedded store gives every segment the whole table, and the books count each
// item once either way.
func scan(ctx context.Context, db AuditClient, table string, opts AuditOptions) (map[string]*books, error) {
	segments := min(cmp.Or(max(opts.Segments, 0), defaultSegments), maxSegments)
	parts := make([]map[string]*books, segments)
	g, gctx := errgroup.WithContext(ctx)
	for seg := range segments {
		g.Go(func() error {
			part := map[string]*books{}
			parts[seg] = part
			in := &dynamodb.ScanInput{
				TableName: aws.String(table), ConsistentRead: aws.Bool(true),
				Segment: aws.Int32(int32(seg)), TotalSegments: aws.Int32(int32(segments)),
			}
			if opts.PageSize > 0 {
				in.Limit = aws.Int32(opts.PageSize)
			}
			p := dynamodb.NewScanPaginator(db, in)
			for p.HasMorePages() { // ends at the segment's last page
				out, err := p.NextPage(gctx)
				if err != nil {
					return fmt.Errorf("store: audit scan of segment %d: %w", seg, err)
				}
				for _, item := range out.Items {
					if id, sk, ok := itemKey(item); ok {
						if part[id] == nil {
							part[id] = newBooks()
						}
						part[id].add(sk, item)
					}
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	accounts := parts[0]
	for _, part := range parts[1:] {
		for id, b := range part {
			if accounts[id] == nil {
				accounts[id] = newBooks()
			}
			accounts[id].merge(b)
		}
	}
	return accounts, nil
}

// reread reads one account from one point of view: its partition in one strongly
// consistent Query, then the account's version once more. Every change of the account
// moves its version, so an unchanged one means nothing was applied meanwhile; else it
// reads again, up to maxRereads times.
func reread(ctx context.Context, db AuditClient, table, id string) (*books, error) {
	in := partitionQuery(table, id)
	in.ConsistentRead = aws.Bool(true)
	var b *books
	for attempt := range maxRereads {
		if attempt > 0 {
			if err := versioned.Sleep(ctx, rereadPause<<(attempt-1)); err != nil {
				return nil, err
			}
		}
		b = newBooks()
		p := dynamodb.NewQueryPaginator(db, in)
		for p.HasMorePages() { // ends at the partition's last page
			out, err := p.NextPage(ctx)
			if err != nil {
				return nil, fmt.Errorf("store: audit read of account %s: %w", id, err)
			}
			for _, item := range out.Items {
				if _, sk, ok := itemKey(item); ok {
					b.add(sk, item)
				}
			}
		}
		out, err := db.GetItem(ctx, getInput(table, cuentaKey(id)))
		if err != nil {
			return nil, fmt.Errorf("store: audit read of account %s: %w", id, err)
		}
		if versionOf(out.Item) == b.version {
			return b, nil
		}
	}
	b.unstable = true
	return b, nil
}

// versionOf is an account item's version, 0 for none (or one that cannot be read).
func versionOf(item versioned.Item) int64 {
	var v struct {
		Version int64 `dynamodbav:"version"`
	}
	_ = attributevalue.UnmarshalMap(item, &v) // an unreadable version reads as 0
	return v.Version
}
