package store

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/ledger"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/versioned"
)

// The table's item layout (docs/design.md, "The table"). Account ids and movement ids cannot
// contain '#' (movimiento validates both), so "CUENTA#<cuenta>" names exactly one
// account and "MOV#<id>" can never equal the account's sort key "CUENTA". The attribute
// names that conditions, keys and queries use are defined here once; the items' other
// attributes are named by their struct tags.
const (
	attrPK      = "pk"
	attrSK      = "sk"
	attrVersion = "version"
	attrSeq     = "seq"
	attrEstado  = "estado"
	// attrAnuladoPor marks a reversed movement with its reversal's id; a movement is
	// reversed at most once because it is set only where it is missing.
	attrAnuladoPor = "anulado_por"
	// attrCapturadaPor and attrLiberadaPor mark a settled hold with the message that
	// settled it; a hold is settled once, while its estado is still retenida.
	attrCapturadaPor = "capturada_por"
	attrLiberadaPor  = "liberada_por"
	cuentaPK         = "CUENTA#"
	cuentaSK         = "CUENTA"
	movSK            = "MOV#"
	// indexPorSeq is the sparse global secondary index (pk, seq) over applied
	// movements: an account's statement in ledger order (migrations/0001_ledger.json).
	indexPorSeq = "por_seq"
)

// Table is the versioned-store description of a ledger table named name: accounts are
// the versioned items, movements the create-once records.
func Table(name string) versioned.Table {
	return versioned.Table{Name: name, PartitionKey: attrPK, SortKey: attrSK, Version: attrVersion}
}

// cuentaItem is an account item. Version is the optimistic-locking counter: read here,
// written only by versioned (omitted when zero).
type cuentaItem struct {
	PK          string                   `dynamodbav:"pk"`
	SK          string                   `dynamodbav:"sk"`
	Moneda      string                   `dynamodbav:"moneda"`
	Saldo       versioned.Number         `dynamodbav:"saldo"`
	Limite      versioned.Number         `dynamodbav:"limite"`
	Bloqueada   bool                     `dynamodbav:"bloqueada,omitempty"`
	Retenciones map[string]retencionItem `dynamodbav:"retenciones,omitempty"`
	Movimientos int64                    `dynamodbav:"movimientos"`
	Version     int64                    `dynamodbav:"version,omitempty"`
	Creada      time.Time                `dynamodbav:"creada"`
	Actualizada time.Time                `dynamodbav:"actualizada"`
}

// retencionItem is an active hold in its account's item.
type retencionItem struct {
	Importe versioned.Number `dynamodbav:"importe"`
	Expira  time.Time        `dynamodbav:"expira"`
}

// movItem is a movement item. Seq and SaldoTras are written only for an applied
// movement, so the por_seq index holds exactly the statement. A reversal names the
// movement it reverses (Anula); a reversed movement its reversal (AnuladoPor); a
// transfer leg the other account (Contrapartida); a hold its expiry and who captured
// or released it; a capture or release the hold (Retencion).
type movItem struct {
	PK            string            `dynamodbav:"pk"`
	SK            string            `dynamodbav:"sk"`
	Tipo          string            `dynamodbav:"tipo"`
	Importe       versioned.Number  `dynamodbav:"importe"`
	Moneda        string            `dynamodbav:"moneda"`
	Concepto      string            `dynamodbav:"concepto,omitempty"`
	Fecha         string            `dynamodbav:"fecha,omitempty"`
	Huella        string            `dynamodbav:"huella"`
	Estado        string            `dynamodbav:"estado"`
	Seq           int64             `dynamodbav:"seq,omitempty"`
	SaldoTras     *versioned.Number `dynamodbav:"saldo_tras,omitempty"`
	Motivo        string            `dynamodbav:"motivo,omitempty"`
	Aplicado      time.Time         `dynamodbav:"aplicado"`
	Origen        string            `dynamodbav:"origen,omitempty"`
	Anula         string            `dynamodbav:"anula,omitempty"`
	AnuladoPor    string            `dynamodbav:"anulado_por,omitempty"`
	Contrapartida string            `dynamodbav:"contrapartida,omitempty"`
	Retencion     string            `dynamodbav:"retencion,omitempty"`
	Expira        *time.Time        `dynamodbav:"expira,omitempty"`
	CapturadaPor  string            `dynamodbav:"capturada_por,omitempty"`
	LiberadaPor   string            `dynamodbav:"liberada_por,omitempty"`
}

// accountAttrs are the attributes cuentaItem knows. An account item's other attributes
// (written by a newer release, or by an operator) are carried over by every write, so a
// rolling deploy never erases what it does not know yet.
var accountAttrs = tagNames(reflect.TypeFor[cuentaItem]())

func tagNames(t reflect.Type) map[string]bool {
	names := map[string]bool{}
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("dynamodbav"), ",")
		names[name] = true
	}
	return names
}

// keyTable builds the table's keys; its name does not matter to them.
var keyTable = Table("")

func cuentaKey(id string) versioned.Item { return keyTable.Key(cuentaPK+id, cuentaSK) }

func movKey(cuentaID, id string) versioned.Item { return keyTable.Key(cuentaPK+cuentaID, movSK+id) }

// encodeCuenta is the account's new image, version excluded (versioned sets it). prev is
// the stored image (nil for a new account), whose unknown attributes are carried over.
func encodeCuenta(c cuenta.Cuenta, prev versioned.Item) (versioned.Item, error) {
	item, err := attributevalue.MarshalMap(cuentaItem{
		PK:          cuentaPK + c.ID,
		SK:          cuentaSK,
		Moneda:      c.Moneda,
		Saldo:       versioned.NumberOf(c.Saldo),
		Limite:      versioned.NumberOf(c.Limite),
		Bloqueada:   c.Bloqueada,
		Retenciones: retencionItems(c.Retenciones),
		Movimientos: c.Movimientos,
		Creada:      c.Creada.UTC(),
		Actualizada: c.Actualizada.UTC(),
	})
	if err != nil {
		return nil, fmt.Errorf("store: encode account %s: %w", c.ID, err)
	}
	for name, v := range prev {
		if !accountAttrs[name] {
			item[name] = v
		}
	}
	return item, nil
}

// decodeCuenta reads an account item; ok is false for a nil item (no account yet).
func decodeCuenta(item versioned.Item) (c cuenta.Cuenta, ok bool, err error) {
	if item == nil {
		return cuenta.Cuenta{}, false, nil
	}
	var it cuentaItem
	if err := attributevalue.UnmarshalMap(item, &it); err != nil {
		return cuenta.Cuenta{}, false, fmt.Errorf("store: account item: %w", err)
	}
	id, isAccount := strings.CutPrefix(it.PK, cuentaPK)
	if !isAccount || id == "" || it.SK != cuentaSK {
		return cuenta.Cuenta{}, false, fmt.Errorf("store: item %q/%q is not an account", it.PK, it.SK)
	}
	return cuenta.Cuenta{
		ID:          id,
		Moneda:      it.Moneda,
		Saldo:       it.Saldo.Decimal,
		Limite:      it.Limite.Decimal,
		Bloqueada:   it.Bloqueada,
		Retenciones: retenciones(it.Retenciones),
		Movimientos: it.Movimientos,
		Version:     it.Version,
		Creada:      it.Creada,
		Actualizada: it.Actualizada,
	}, true, nil
}

func retencionItems(rs map[string]cuenta.Retencion) map[string]retencionItem {
	if len(rs) == 0 {
		return nil
	}
	out := make(map[string]retencionItem, len(rs))
	for id, r := range rs {
		out[id] = retencionItem{Importe: versioned.NumberOf(r.Importe), Expira: r.Expira.UTC()}
	}
	return out
}

func retenciones(items map[string]retencionItem) map[string]cuenta.Retencion {
	if len(items) == 0 {
		return nil
	}
	out := make(map[string]cuenta.Retencion, len(items))
	for id, r := range items {
		out[id] = cuenta.Retencion{Importe: r.Importe.Decimal, Expira: r.Expira}
	}
	return out
}

// encodeApunte is the movement's item.
func encodeApunte(a ledger.Apunte) (versioned.Item, error) {
	m := a.Movimiento
	it := movItem{
		PK:            cuentaPK + m.Cuenta,
		SK:            movSK + m.ID,
		Tipo:          string(m.Tipo),
		Importe:       versioned.NumberOf(m.Importe),
		Moneda:        m.Moneda,
		Concepto:      m.Concepto,
		Fecha:         m.Fecha,
		Huella:        a.Huella,
		Estado:        string(a.Estado),
		Motivo:        a.Motivo,
		Aplicado:      a.Aplicado.UTC(),
		Origen:        a.Origen,
		Anula:         m.Anula,
		Contrapartida: a.Contrapartida,
		Retencion:     m.Retencion,
		CapturadaPor:  a.CapturadaPor,
		LiberadaPor:   a.LiberadaPor,
	}
	if !m.Expira.IsZero() {
		expira := m.Expira.UTC()
		it.Expira = &expira
	}
	if a.Posted() {
		saldo := versioned.NumberOf(a.SaldoTras)
		it.Seq, it.SaldoTras = a.Seq, &saldo
	}
	item, err := attributevalue.MarshalMap(it)
	if err != nil {
		return nil, fmt.Errorf("store: encode movement %s/%s: %w", m.Cuenta, m.ID, err)
	}
	return item, nil
}

// decodeApunte reads a movement item as it was stored, without today's input rules: a
// movement recorded under yesterday's rules (a currency since withdrawn, an id rule
// since tightened) still reads, audits and answers its duplicates.
func decodeApunte(item versioned.Item) (ledger.Apunte, error) {
	var it movItem
	if err := attributevalue.UnmarshalMap(item, &it); err != nil {
		return ledger.Apunte{}, fmt.Errorf("store: movement item: %w", err)
	}
	cuentaID, okPK := strings.CutPrefix(it.PK, cuentaPK)
	id, okSK := strings.CutPrefix(it.SK, movSK)
	if !okPK || !okSK || cuentaID == "" || id == "" {
		return ledger.Apunte{}, fmt.Errorf("store: item %q/%q is not a movement", it.PK, it.SK)
	}
	a := ledger.Apunte{
		Movimiento: movimiento.Movimiento{
			ID:        id,
			Cuenta:    cuentaID,
			Tipo:      movimiento.Tipo(it.Tipo),
			Importe:   it.Importe.Decimal,
			Moneda:    it.Moneda,
			Concepto:  it.Concepto,
			Fecha:     it.Fecha,
			Anula:     it.Anula,
			Retencion: it.Retencion,
		},
		Huella:        it.Huella,
		Estado:        ledger.Estado(it.Estado),
		Seq:           it.Seq,
		Motivo:        it.Motivo,
		Aplicado:      it.Aplicado,
		Origen:        it.Origen,
		AnuladoPor:    it.AnuladoPor,
		Contrapartida: it.Contrapartida,
		CapturadaPor:  it.CapturadaPor,
		LiberadaPor:   it.LiberadaPor,
	}
	if it.Expira != nil {
		a.Movimiento.Expira = *it.Expira
	}
	if it.SaldoTras != nil {
		a.SaldoTras = it.SaldoTras.Decimal
	}
	return a, nil
}
