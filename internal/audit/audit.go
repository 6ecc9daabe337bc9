// Package audit checks the ledger table's invariants (ledger audit): every account's
// books against its movements, and the links between records.
package audit

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
	"github.com/ledger-dev/ledger/internal/items"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/versioned"
)

// Client is the part of the DynamoDB API the audit needs: Scan for the whole table,
// Query and GetItem to read one account again. It writes nothing.
type Client interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	Scan(ctx context.Context, in *dynamodb.ScanInput, opts ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
}

// Report is the verdict on a whole table. Accounts counts account items read and
// Movements applied movements; Broken lists every account that breaks an invariant,
// sorted by account. Unverified lists the accounts that kept changing while they were
// read again, whose links between records (reversals, holds) could not be read from one
// point of view: audit them again. Their books (balance, count, seq, saldo_tras) are
// judged all the same, so one may be listed as broken too.
type Report struct {
	OK         bool     `json:"ok"`
	Accounts   int      `json:"accounts"`
	Movements  int      `json:"movements"`
	Broken     []Broken `json:"broken"`
	Unverified []Broken `json:"unverified"`
	// Remitentes counts the records by who sent them, most first.
	Remitentes []Remitente `json:"remitentes"`
}

// Broken is one account that breaks the audit invariants, or could not be verified.
type Broken struct {
	Cuenta string `json:"cuenta"`
	Reason string `json:"reason"`
}

// Options tune the scan. Segments is the number of parallel scan segments (1 to
// 64, default 4). PageSize caps the items per Scan page (0: DynamoDB's 1 MB pages). Now
// is the clock holds expire by (nil: time.Now).
type Options struct {
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

// Run checks the ledger's invariants for every account of the table: saldo equals the
// applied movements' abonos minus cargos, movimientos their number, their seq values
// are exactly 1..movimientos, each saldo_tras is the running balance, every estado is
// known, reversals and reversed movements name each other, every transfer leg has its
// counterpart, and the holds agree with the account's active holds. It is safe on a
// live table: a parallel, strongly consistent Scan reads everything once, and an
// account that looks broken is read again from one point of view (reread) before it is
// reported. Items that are not the ledger's (migration records) are skipped.
func Run(ctx context.Context, db Client, table string, opts Options) (Report, error) {
	accounts, err := scan(ctx, db, table, opts)
	if err != nil {
		return Report{}, err
	}
	// Holds lapse as the audit runs, and a writer drops them: each check reads the clock
	// after the reads it judges.
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	report := Report{OK: true, Broken: []Broken{}, Unverified: []Broken{}}
	for id, b := range accounts {
		if b.hasItem || b.itemUnreadable() {
			report.Accounts++
		}
		report.Movements += len(b.applied)
		v, err := b.audit(ctx, db, table, accounts, now())
		if err == nil && v.any() {
			// The other legs the scan read still prove a link when they match: a leg never
			// changes. One that does not match is read again.
			if b, err = reread(ctx, db, table, id); err == nil {
				v, err = b.audit(ctx, db, table, accounts, now())
			}
		}
		if err != nil {
			return Report{}, err
		}
		if b.unstable { // the links may have been read torn: they prove nothing
			if len(v.links) > 0 {
				report.Unverified = append(report.Unverified, Broken{Cuenta: id, Reason: fmt.Sprintf(
					"it changed during each of %d attempts to read it from one point of view: %s; audit it again", maxRereads, strings.Join(v.links, "; "))})
			}
			v.links = nil
		}
		if v.any() {
			report.Broken = append(report.Broken, Broken{Cuenta: id, Reason: strings.Join(append(v.books, v.links...), "; ")})
		}
	}
	byCuenta := func(a, b Broken) int { return strings.Compare(a.Cuenta, b.Cuenta) }
	slices.SortFunc(report.Broken, byCuenta)
	slices.SortFunc(report.Unverified, byCuenta)
	report.OK = len(report.Broken) == 0
	report.Remitentes = remitentes(accounts)
	return report, nil
}

// verdict is what one account breaks: its books (problems reading its items, the
// balance, the count, seq, saldo_tras), which hold from any read of it, and the links
// between its records (reversals, holds, transfer legs), which a read torn by a
// concurrent write may break.
type verdict struct{ books, links []string }

func (v verdict) any() bool { return len(v.books)+len(v.links) > 0 }

// books is what the audit read of one account.
type books struct {
	account  cuenta.Cuenta
	hasItem  bool
	version  int64                        // the account item's, read even when the rest cannot be
	applied  map[string]movimiento.Apunte // posted movements by sort key, so an item seen twice counts once
	holds    map[string]movimiento.Apunte // holds by hold id
	others   map[string]movimiento.Apunte // the other records (rejections, releases) by sort key
	problems map[string]string            // by sort key: items that cannot be read, or in no known state
	unstable bool                         // it kept moving while it was read again
}

func newBooks() *books {
	return &books{applied: map[string]movimiento.Apunte{}, holds: map[string]movimiento.Apunte{}, others: map[string]movimiento.Apunte{}, problems: map[string]string{}}
}

// storedTipos are the tipos a record is stored as: a transfer's legs, a reversal and a
// capture are abonos and cargos.
var storedTipos = []movimiento.Tipo{movimiento.Abono, movimiento.Cargo, movimiento.Retencion, movimiento.Liberacion}

// estadosOf are the states a record of tipo t may be in: a hold's are its own, every
// other record is applied or rejected.
func estadosOf(t movimiento.Tipo) []movimiento.Estado {
	if t == movimiento.Retencion {
		return []movimiento.Estado{movimiento.Retenida, movimiento.Capturada, movimiento.Liberada, movimiento.Rechazado}
	}
	return []movimiento.Estado{movimiento.Aplicado, movimiento.Rechazado}
}

// add files one item of the account's partition.
func (b *books) add(sk string, item versioned.Item) {
	if sk == items.CuentaSK {
		b.version = versionOf(item)
		c, _, err := items.DecodeCuenta(item)
		if err != nil {
			b.problems[sk] = fmt.Sprintf("account item unreadable: %v", err)
			return
		}
		b.account, b.hasItem = c, true
		return
	}
	a, err := items.DecodeApunte(item)
	_, hasSeq := item[items.AttrSeq]
	_, hasSaldo := item[items.AttrSaldoTras]
	switch {
	case err != nil:
		b.problems[sk] = fmt.Sprintf("item %s: %v", sk, err)
	case !slices.Contains(storedTipos, a.Movimiento.Tipo):
		b.problems[sk] = fmt.Sprintf("movement %s has tipo %q, which is none the ledger stores %v", a.Movimiento.ID, a.Movimiento.Tipo, storedTipos)
	case !slices.Contains(movimiento.Estados, a.Estado):
		b.problems[sk] = fmt.Sprintf("movement %s has estado %q, which is none of %v", a.Movimiento.ID, a.Estado, movimiento.Estados)
	case !slices.Contains(estadosOf(a.Movimiento.Tipo), a.Estado):
		b.problems[sk] = fmt.Sprintf("movement %s of tipo %s has estado %s, which is not one of its tipo's", a.Movimiento.ID, a.Movimiento.Tipo, a.Estado)
	case !a.Posted() && (hasSeq || hasSaldo):
		b.problems[sk] = fmt.Sprintf("movement %s (tipo %s, estado %s) is not applied but has a %s or %s: the statement would list it", a.Movimiento.ID, a.Movimiento.Tipo, a.Estado, items.AttrSeq, items.AttrSaldoTras)
	case !a.Posted() && a.AnuladoPor != "": // only an applied movement is reversed
		b.problems[sk] = fmt.Sprintf("movement %s (tipo %s, estado %s) is not applied, yet marked reversed by %s", a.Movimiento.ID, a.Movimiento.Tipo, a.Estado, a.AnuladoPor)
	case a.Posted():
		b.applied[sk] = a
	case a.Movimiento.Tipo == movimiento.Retencion:
		b.holds[a.Movimiento.ID] = a
	default:
		b.others[sk] = a
	}
}

// itemUnreadable reports an account item that is there but could not be read.
func (b *books) itemUnreadable() bool {
	_, ok := b.problems[items.CuentaSK]
	return ok
}

// merge files what another scan segment read of the same account.
func (b *books) merge(o *books) {
	maps.Copy(b.applied, o.applied)
	maps.Copy(b.holds, o.holds)
	maps.Copy(b.others, o.others)
	maps.Copy(b.problems, o.problems)
	if o.hasItem {
		b.account, b.hasItem = o.account, true
	}
	b.version = max(b.version, o.version)
}

// check lists the invariants the account breaks, holds expiring by now. The books are
// judged against the account item: when the account kept changing as it was read, only
// against the movements it counts (seq up to its movimientos), all written before it was
// read, and never changed since.
func (b *books) check(now time.Time) verdict {
	reasons := slices.Sorted(maps.Values(b.problems))
	applied := slices.SortedFunc(maps.Values(b.applied), func(x, y movimiento.Apunte) int { return cmp.Compare(x.Seq, y.Seq) })
	if b.unstable && b.hasItem {
		applied = slices.DeleteFunc(applied, func(a movimiento.Apunte) bool { return a.Seq > b.account.Movimientos })
	}
	n := int64(len(applied))
	if !b.hasItem {
		if n > 0 && !b.itemUnreadable() {
			reasons = append(reasons, fmt.Sprintf("no account item, but %d applied movements", n))
		}
		return verdict{books: reasons}
	}
	sum := decimal.Zero
	for _, a := range applied {
		sum = sum.Add(a.Movimiento.Delta())
	}
	for _, records := range []map[string]movimiento.Apunte{b.applied, b.holds, b.others} {
		for _, k := range slices.Sorted(maps.Keys(records)) {
			if m := records[k].Movimiento; m.Moneda != "" && m.Moneda != b.account.Moneda {
				reasons = append(reasons, fmt.Sprintf("movement %s is in %s, but the account is in %s", m.ID, m.Moneda, b.account.Moneda))
			}
		}
	}
	if !b.account.Saldo.Equal(sum) {
		reasons = append(reasons, fmt.Sprintf("saldo is %s, but its applied movements sum to %s", b.account.Saldo, sum))
	}
	if b.account.Movimientos != n {
		reasons = append(reasons, fmt.Sprintf("movimientos is %d, but %d movements are applied", b.account.Movimientos, n))
	}
	for _, id := range slices.Sorted(maps.Keys(b.account.Retenciones)) { // every write drops the lapsed ones
		if r := b.account.Retenciones[id]; !r.Expira.After(b.account.Actualizada) {
			reasons = append(reasons, fmt.Sprintf("active hold %s lapsed at %s, yet the write at %s kept it", id,
				r.Expira.UTC().Format(time.RFC3339), b.account.Actualizada.UTC().Format(time.RFC3339)))
		}
	}
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
	return verdict{books: reasons, links: append(b.checkReversals(), b.checkHolds(now)...)}
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
		if !ok || h.Estado != movimiento.Retenida || !h.Movimiento.Importe.Equal(r.Importe) || !h.Movimiento.Expira.Equal(r.Expira) {
			reasons = append(reasons, fmt.Sprintf("active hold %s (%s until %s) has no hold held for it", id, r.Importe, r.Expira.UTC().Format(time.RFC3339)))
		}
	}
	for _, id := range slices.Sorted(maps.Keys(b.holds)) {
		h := b.holds[id]
		switch {
		case h.EstadoAt(now) == movimiento.Retenida:
			if _, ok := b.account.Retenciones[id]; !ok {
				reasons = append(reasons, fmt.Sprintf("hold %s is held until %s, but not among the account's active holds", id, h.Movimiento.Expira.UTC().Format(time.RFC3339)))
			}
		case h.Estado == movimiento.Capturada:
			c, ok := b.applied[items.MovSK+h.CapturadaPor]
			if !ok || c.Movimiento.Retencion != id || c.Movimiento.Tipo != movimiento.Cargo || c.Movimiento.Importe.GreaterThan(h.Movimiento.Importe) {
				reasons = append(reasons, fmt.Sprintf("hold %s is captured by %s, which is no posted capture of it", id, h.CapturadaPor))
			}
		case h.Estado == movimiento.Liberada:
			r, ok := b.others[items.MovSK+h.LiberadaPor]
			if !ok || r.Movimiento.Retencion != id || r.Movimiento.Tipo != movimiento.Liberacion {
				reasons = append(reasons, fmt.Sprintf("hold %s is released by %s, which is no recorded release of it", id, h.LiberadaPor))
			}
		}
	}
	// A hold is settled once: every capture and release is the one its hold names.
	for _, k := range slices.Sorted(maps.Keys(b.applied)) {
		c := b.applied[k]
		if id := c.Movimiento.Retencion; id != "" && b.holds[id].CapturadaPor != c.Movimiento.ID {
			reasons = append(reasons, fmt.Sprintf("capture %s posts against hold %s, which does not name it as its capture", c.Movimiento.ID, id))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(b.others)) {
		r := b.others[k]
		if id := r.Movimiento.Retencion; r.Movimiento.Tipo == movimiento.Liberacion && b.holds[id].LiberadaPor != r.Movimiento.ID {
			reasons = append(reasons, fmt.Sprintf("release %s frees hold %s, which does not name it as its release", r.Movimiento.ID, id))
		}
	}
	return reasons
}

// audit lists the invariants the account breaks: check's, and every applied leg of a
// transfer or reparto without its counterpart on the other account. The counterpart is
// looked up in what the scan read (seen, nil for none) and, if not found there or not
// matching (the scan may have read the other account before the movement), read once
// more, strongly consistent.
func (b *books) audit(ctx context.Context, db Client, table string, seen map[string]*books, now time.Time) (verdict, error) {
	v := b.check(now)
	for _, k := range slices.Sorted(maps.Keys(b.applied)) {
		a := b.applied[k]
		if len(a.Partes) > 0 && !sumOf(a.Partes).Equal(a.Movimiento.Importe) {
			v.links = append(v.links, fmt.Sprintf("reparto %s moves %s, but its parts sum to %s", a.Movimiento.ID, a.Movimiento.Importe, sumOf(a.Partes)))
		}
		for _, leg := range a.Contrapartidas() {
			ok, err := b.counterpart(ctx, db, table, seen, a, leg)
			if err != nil {
				return verdict{}, err
			}
			if !ok {
				v.links = append(v.links, fmt.Sprintf("transfer leg %s has no counterpart on %s (same id, %s the other way, naming %s)", a.Movimiento.ID, leg.Cuenta, leg.Importe, a.Movimiento.Cuenta))
			}
		}
	}
	return v, nil
}

// counterpart reports whether x's leg has its counterpart: the record with x's id on
// the leg's account, from what the scan read or, failing that, read again.
func (b *books) counterpart(ctx context.Context, db Client, table string, seen map[string]*books, x movimiento.Apunte, leg movimiento.Parte) (bool, error) {
	if s := seen[leg.Cuenta]; s != nil {
		if y, ok := s.applied[items.MovSK+x.Movimiento.ID]; ok && counterparts(x, y, leg.Importe) {
			return true, nil
		}
	}
	out, err := db.GetItem(ctx, versioned.GetInput(table, items.MovKey(leg.Cuenta, x.Movimiento.ID)))
	if err != nil {
		return false, fmt.Errorf("audit: read of leg %s on %s: %w", x.Movimiento.ID, leg.Cuenta, err)
	}
	y, err := items.DecodeApunte(out.Item)
	return err == nil && len(out.Item) > 0 && counterparts(x, y, leg.Importe), nil
}

// counterparts reports whether y, with x's id on the account of x's leg of amount,
// is its other side: applied, moving amount the other way, naming x's account (a leg)
// or listing it as a part of amount (a reparto's payer).
func counterparts(x, y movimiento.Apunte, amount decimal.Decimal) bool {
	if y.Estado != movimiento.Aplicado || y.Movimiento.ID != x.Movimiento.ID || y.Movimiento.Delta().Sign() != -x.Movimiento.Delta().Sign() {
		return false
	}
	if len(y.Partes) > 0 {
		return slices.ContainsFunc(y.Partes, func(p movimiento.Parte) bool { return p.Cuenta == x.Movimiento.Cuenta && p.Importe.Equal(amount) })
	}
	return y.Contrapartida == x.Movimiento.Cuenta && y.Movimiento.Importe.Equal(amount)
}

// sumOf is what parts move together.
func sumOf(partes []movimiento.Parte) decimal.Decimal {
	sum := decimal.Zero
	for _, p := range partes {
		sum = sum.Add(p.Importe)
	}
	return sum
}

// checkReversals checks the refund links both ways: a refunded movement names refunds
// that name it back, on its account, undoing it, summing to what it says it gave back,
// never more than its importe, and AnuladoPor once it gave back all; every refund names
// a movement that lists it. A reversal's leg on an account a transfer or reparto
// credited (naming its payer in contrapartida) is linked through the payer: audit's
// counterpart check.
func (b *books) checkReversals() []string {
	var reasons []string
	for _, k := range slices.Sorted(maps.Keys(b.applied)) {
		a := b.applied[k]
		if len(a.Anulaciones) > 0 || a.AnuladoPor != "" {
			reasons = append(reasons, b.checkRefunded(a)...)
		}
		of := a.Movimiento.Anula
		if of == "" || (a.Contrapartida != "" && a.Movimiento.Tipo == movimiento.Cargo && len(a.Partes) == 0 && b.applied[items.MovSK+of].Contrapartida == a.Contrapartida) {
			continue // not a refund, or a reversal's debit leg on a credited account
		}
		o, ok := b.applied[items.MovSK+of]
		switch {
		case !ok || !slices.Contains(refundsOf(o), a.Movimiento.ID):
			reasons = append(reasons, fmt.Sprintf("reversal %s undoes %s, which does not name it as its reversal", a.Movimiento.ID, of))
		case a.Movimiento.Delta().Sign() != -o.Movimiento.Delta().Sign() || a.Movimiento.Moneda != o.Movimiento.Moneda:
			reasons = append(reasons, fmt.Sprintf("reversal %s moves %s %s, which does not undo %s's %s %s", a.Movimiento.ID,
				a.Movimiento.Delta(), a.Movimiento.Moneda, of, o.Movimiento.Delta(), o.Movimiento.Moneda))
		}
	}
	return reasons
}

// refundsOf is the refunds o names: its Anulaciones, or its AnuladoPor alone.
func refundsOf(o movimiento.Apunte) []string {
	if len(o.Anulaciones) == 0 && o.AnuladoPor != "" {
		return []string{o.AnuladoPor}
	}
	return o.Anulaciones
}

// checkRefunded checks what refunded movement a says it gave back against the refunds
// it names.
func (b *books) checkRefunded(a movimiento.Apunte) []string {
	var reasons []string
	sum := decimal.Zero
	for _, by := range refundsOf(a) {
		r, ok := b.applied[items.MovSK+by]
		if !ok || r.Movimiento.Anula != a.Movimiento.ID {
			reasons = append(reasons, fmt.Sprintf("movement %s is marked reversed by %s, which is no applied reversal of it", a.Movimiento.ID, by))
			continue
		}
		sum = sum.Add(r.Movimiento.Importe)
	}
	given := a.Reembolsado
	if len(a.Anulaciones) == 0 { // reversed whole by one refund, before totals were kept
		given = a.Movimiento.Importe
	}
	if by := a.AnuladoPor; by != "" && len(a.Anulaciones) > 0 && !slices.Contains(a.Anulaciones, by) {
		reasons = append(reasons, fmt.Sprintf("movement %s is marked reversed by %s, which is no applied reversal of it", a.Movimiento.ID, by))
	}
	switch {
	case !sum.Equal(given) && len(reasons) == 0:
		reasons = append(reasons, fmt.Sprintf("movement %s says %s was refunded, but its refunds sum to %s", a.Movimiento.ID, given, sum))
	case given.GreaterThan(a.Movimiento.Importe):
		reasons = append(reasons, fmt.Sprintf("movement %s of %s is refunded %s: more than its importe", a.Movimiento.ID, a.Movimiento.Importe, given))
	case (a.AnuladoPor != "") != given.Equal(a.Movimiento.Importe):
		reasons = append(reasons, fmt.Sprintf("movement %s is refunded %s of %s, yet anulado_por is %q", a.Movimiento.ID, given, a.Movimiento.Importe, a.AnuladoPor))
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
	cuentaID, ok = strings.CutPrefix(k.PK, items.CuentaPK)
	return cuentaID, k.SK, ok && cuentaID != ""
}

// scan reads the whole table (strongly consistent, in parallel segments, page by page)
// into books by account. Each segment decodes into books of its own, merged at the end:
// the embedded store gives every segment the whole table, and the books count each
// item once either way.
func scan(ctx context.Context, db Client, table string, opts Options) (map[string]*books, error) {
	segments := min(cmp.Or(max(opts.Segments, 0), defaultSegments), maxSegments)
	parts := make([]map[string]*books, segments)
	g, gctx := errgroup.WithContext(ctx)
	for seg := range segments {
		g.Go(func() error {
			part := map[string]*books{}
			parts[seg] = part
			p := dynamodb.NewScanPaginator(db, scanInput(table, seg, segments, opts.PageSize))
			var last versioned.Item
			for p.HasMorePages() { // ends at the segment's last page
				out, err := p.NextPage(gctx)
				if err == nil {
					err = CheckPage(last, out.LastEvaluatedKey)
				}
				if err != nil {
					return fmt.Errorf("store: audit scan of segment %d: %w", seg, err)
				}
				last = out.LastEvaluatedKey
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

// scanInput is one segment's strongly consistent Scan of the whole table, pageSize items
// a page (0: DynamoDB's 1 MB pages).
func scanInput(table string, segment, segments int, pageSize int32) *dynamodb.ScanInput {
	in := &dynamodb.ScanInput{
		TableName: aws.String(table), ConsistentRead: aws.Bool(true),
		Segment: aws.Int32(int32(segment)), TotalSegments: aws.Int32(int32(segments)),
	}
	if pageSize > 0 {
		in.Limit = aws.Int32(pageSize)
	}
	return in
}

// rereadInput is the strongly consistent Query of one account's partition.
func rereadInput(table, cuentaID string) *dynamodb.QueryInput {
	in := items.PartitionQuery(table, cuentaID)
	in.ConsistentRead = aws.Bool(true)
	return in
}

// reread reads one account from one point of view: its partition in one strongly
// consistent Query, then the account's version once more. Every change of the account
// moves its version, so an unchanged one means nothing was applied meanwhile; else it
// reads again, up to maxRereads times.
func reread(ctx context.Context, db Client, table, id string) (*books, error) {
	in := rereadInput(table, id)
	var b *books
	for attempt := range maxRereads {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(rereadPause << (attempt - 1)):
			}
		}
		b = newBooks()
		p := dynamodb.NewQueryPaginator(db, in)
		var last versioned.Item
		for p.HasMorePages() { // ends at the partition's last page
			out, err := p.NextPage(ctx)
			if err == nil {
				err = CheckPage(last, out.LastEvaluatedKey)
			}
			if err != nil {
				return nil, fmt.Errorf("store: audit read of account %s: %w", id, err)
			}
			last = out.LastEvaluatedKey
			for _, item := range out.Items {
				if _, sk, ok := itemKey(item); ok {
					b.add(sk, item)
				}
			}
		}
		out, err := db.GetItem(ctx, versioned.GetInput(table, items.CuentaKey(id)))
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
	var v int64
	_ = attributevalue.Unmarshal(item[items.AttrVersion], &v) // an unreadable version reads as 0
	return v
}
