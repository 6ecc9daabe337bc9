// Package items is the ledger table's item layout (docs/design.md, "The table"): the
// keys, the attribute names, and the account and movement items, encoded and decoded
// with attributevalue. A stored item is decoded without today's input rules: an item
// once written is never refused on read, except where money would be guessed.
package items

import (
	"fmt"
	"maps"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/versioned"
)

// The table's item layout (docs/design.md, "The table"). Ids cannot contain '#', so
// "CUENTA#<cuenta>" names one account and "MOV#<id>" never equals the sort key "CUENTA".
// The items' other attributes are named by their struct tags.
const (
	AttrPK        = "pk"
	AttrSK        = "sk"
	AttrVersion   = "version"
	AttrSeq       = "seq"
	AttrSaldoTras = "saldo_tras"
	attrSaldo     = "saldo"
	attrLimite    = "limite"
	attrMoneda    = "moneda"
	attrMovs      = "movimientos"
	attrImporte   = "importe"
	attrExpira    = "expira"
	AttrEstado    = "estado"
	// attrCreada, attrAplicado, attrOrigen, attrRemitente and attrVia are informational:
	// when an account was opened, when, from which message, from which sender and by
	// which envelope a movement was recorded.
	attrCreada    = "creada"
	attrAplicado  = "aplicado"
	attrOrigen    = "origen"
	attrRemitente = "remitente"
	attrVia       = "via"
	// attrRetenciones is the account's map of active holds, by hold id.
	attrRetenciones = "retenciones"
	// AttrAnuladoPor, AttrCapturadaPor and AttrLiberadaPor mark a record with the
	// message that reversed or settled it.
	AttrAnuladoPor   = "anulado_por"
	AttrCapturadaPor = "capturada_por"
	AttrLiberadaPor  = "liberada_por"
	// AttrReembolsado and AttrAnulaciones mark a refunded record: the total given back,
	// and the refunds' ids in order.
	AttrReembolsado = "reembolsado"
	AttrAnulaciones = "anulaciones"
	CuentaPK        = "CUENTA#"
	CuentaSK        = "CUENTA"
	MovSK           = "MOV#"
	// IndexPorSeq is the sparse index (pk, seq) over applied movements: the statement
	// (migrations/0001_ledger.json).
	IndexPorSeq = "por_seq"
)

// Table describes the ledger table name to versioned: accounts are the versioned items,
// movements the create-once records.
func Table(name string) versioned.Table {
	return versioned.Table{Name: name, PartitionKey: AttrPK, SortKey: AttrSK, Version: AttrVersion}
}

// cuentaItem is an account item. Version is read here, written only by versioned.
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
	Aplicado    time.Time                `dynamodbav:"aplicado"` // the last record's, which the next never precedes
}

// retencionItem is an active hold in its account's item.
type retencionItem struct {
	Importe versioned.Number `dynamodbav:"importe"`
	Expira  time.Time        `dynamodbav:"expira"`
}

// movItem is a movement item. Seq and SaldoTras are written only for an applied
// movement, so the por_seq index holds exactly the statement. Version is its account's
// version once the record's transaction committed, for the events announcing it; the
// ledger decides nothing by it.
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
	Remitente     string            `dynamodbav:"remitente,omitempty"`
	Via           string            `dynamodbav:"via,omitempty"`
	Anula         string            `dynamodbav:"anula,omitempty"`
	AnuladoPor    string            `dynamodbav:"anulado_por,omitempty"`
	Reembolsado   *versioned.Number `dynamodbav:"reembolsado,omitempty"`
	Anulaciones   []string          `dynamodbav:"anulaciones,omitempty"`
	Contrapartida string            `dynamodbav:"contrapartida,omitempty"`
	Partes        []parteItem       `dynamodbav:"partes,omitempty"`
	Retencion     string            `dynamodbav:"retencion,omitempty"`
	Expira        time.Time         `dynamodbav:"expira,omitempty"`
	CapturadaPor  string            `dynamodbav:"capturada_por,omitempty"`
	LiberadaPor   string            `dynamodbav:"liberada_por,omitempty"`
	Version       int64             `dynamodbav:"version,omitempty"`
}

// parteItem is one part of a reparto in its payer's record.
type parteItem struct {
	Cuenta  string           `dynamodbav:"cuenta"`
	Importe versioned.Number `dynamodbav:"importe"`
}

// requiredCuenta, requiredHold and requiredPosted are the attributes every release wrote
// on an account, on each of its active holds (and each hold's own record) and on a
// posted movement. Read as zero, a missing one would be made-up money, a made-up count
// or a hold lapsed at once, so an item without one is unreadable rather than read
// leniently.
var (
	requiredCuenta = []string{attrMoneda, attrSaldo, attrMovs}
	requiredHold   = []string{attrImporte, attrExpira}
	requiredPosted = []string{attrImporte, AttrSeq, AttrSaldoTras}
)

// holdLacks is the first attribute a hold (an account's active hold, or the hold's own
// record) holds no usable value for, or "". An expira that reads as no time would lapse
// the hold at once, so it counts as lacking.
func holdLacks(hold versioned.Item, expira time.Time) string {
	if name := lacking(hold, requiredHold); name != "" || !expira.IsZero() {
		return name
	}
	return attrExpira
}

// lacking is the first of names item holds no value for (absent or NULL), or "".
func lacking(item versioned.Item, names []string) string {
	for _, name := range names {
		if item[name] == nil || isNull(item[name]) {
			return name
		}
	}
	return ""
}

// isNull reports a NULL attribute value: no value.
func isNull(av types.AttributeValue) bool {
	_, null := av.(*types.AttributeValueMemberNULL)
	return null
}

// informational are the attributes read leniently: when an account was opened, when
// and from which message, from which sender and by which envelope a movement was
// recorded, and a movement's account version (an account's own is checked first, by
// checkVersion). A value of another type or spelling (another writer, a hand edit)
// reads as zero, rather than making its whole account or movement unreadable. Money,
// counts and the clocks holds run by are never read so.
var informational = map[string]bool{attrCreada: true, attrAplicado: true, attrOrigen: true, attrRemitente: true, attrVia: true, AttrVersion: true}

// nullable are the optional numbers a NULL may stand for: absent, they read as a known
// default (limite: no overdraft). Every other number is money or a count, which NULL
// never stands for.
var nullable = []string{attrLimite}

// decodeItem is attributevalue.UnmarshalMap into out, a pointer to an item struct. A
// nullable attribute that is NULL reads as absent, and an informational one it cannot
// read as zero; any other that cannot be read fails the item, named in the error.
func decodeItem(item versioned.Item, out any) error {
	for _, name := range nullable {
		if isNull(item[name]) {
			item = maps.Clone(item)
			delete(item, name)
		}
	}
	err := attributevalue.UnmarshalMap(item, out)
	if err == nil {
		return nil
	}
	var readable versioned.Item // item without the informational attributes it cannot read
	for f := range reflect.TypeOf(out).Elem().Fields() {
		name := attrName(f)
		av, ok := item[name]
		if !ok {
			continue
		}
		if err := attributevalue.Unmarshal(av, reflect.New(f.Type).Interface()); err == nil {
			continue
		} else if !informational[name] {
			return fmt.Errorf("attribute %s: %w", name, err)
		}
		if readable == nil {
			readable = maps.Clone(item)
		}
		delete(readable, name)
	}
	if readable == nil {
		return err
	}
	reflect.ValueOf(out).Elem().SetZero()
	return attributevalue.UnmarshalMap(readable, out)
}

// accountAttrs and holdAttrs are the attributes cuentaItem and retencionItem know. Every
// write carries the others over (carryOver), so a rolling deploy never erases what a
// newer release wrote.
var (
	accountAttrs = tagNames(reflect.TypeFor[cuentaItem]())
	holdAttrs    = tagNames(reflect.TypeFor[retencionItem]())
)

func tagNames(t reflect.Type) map[string]bool {
	names := map[string]bool{}
	for f := range t.Fields() {
		names[attrName(f)] = true
	}
	return names
}

// attrName is the attribute a struct field is stored under: its dynamodbav tag's name.
func attrName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("dynamodbav"), ",")
	return name
}

// DynamoDB's key limits: a partition key of at most 2,048 bytes, a sort key of at most
// 1,024, string keys in UTF-8.
const (
	maxPartitionKeyBytes = 2048
	maxSortKeyBytes      = 1024
)

// MaxCuentaBytes and MaxIDBytes are the longest account id and movement id, in UTF-8
// bytes, that the table's keys can hold: DynamoDB's partition key less CuentaPK, its
// sort key less MovSK.
const (
	MaxCuentaBytes = maxPartitionKeyBytes - len(CuentaPK)
	MaxIDBytes     = maxSortKeyBytes - len(MovSK)
)

// Storable reports whether an account id, and a movement id when not "", make a key
// DynamoDB can hold. Lookups check only this, as stored data is read: an id any writer
// stored is found, whatever today's message rules say, and one no key can hold names
// nothing stored.
func Storable(cuentaID, id string) bool {
	return cuentaID != "" && utf8.ValidString(cuentaID) && utf8.ValidString(id) &&
		len(cuentaID) <= MaxCuentaBytes && len(id) <= MaxIDBytes
}

// keyTable builds the table's keys; its name does not matter to them.
var keyTable = Table("")

func CuentaKey(id string) versioned.Item { return keyTable.Key(CuentaPK+id, CuentaSK) }

func MovKey(cuentaID, id string) versioned.Item { return keyTable.Key(CuentaPK+cuentaID, MovSK+id) }

// EncodeCuenta is the account's new image, version excluded (versioned sets it). prev is
// the stored image (nil for a new account), whose unknown attributes are carried over.
func EncodeCuenta(c cuenta.Cuenta, prev versioned.Item) (versioned.Item, error) {
	item, err := attributevalue.MarshalMap(cuentaItem{
		PK:        CuentaPK + c.ID,
		SK:        CuentaSK,
		Moneda:    c.Moneda,
		Saldo:     versioned.NumberOf(c.Saldo),
		Limite:    versioned.NumberOf(c.Limite),
		Bloqueada: c.Bloqueada,
		Retenciones: mapValues(c.Retenciones, func(r cuenta.Retencion) retencionItem {
			return retencionItem{Importe: versioned.NumberOf(r.Importe), Expira: r.Expira.UTC()}
		}),
		Movimientos: c.Movimientos,
		Creada:      c.Creada.UTC(),
		Actualizada: c.Actualizada.UTC(),
		Aplicado:    c.Aplicado.UTC(),
	})
	if err != nil {
		return nil, fmt.Errorf("items: encode account %s: %w", c.ID, err)
	}
	carryOver(item, prev)
	if c.Aplicado.IsZero() { // not known: kept as stored, or left absent, never made up
		delete(item, attrAplicado)
		if v := prev[attrAplicado]; v != nil {
			item[attrAplicado] = v
		}
	}
	return item, nil
}

// carryOver copies into the account image item what its stored image prev holds that
// this release does not know: attributes of the account, and of each hold item still
// holds. creada is kept as stored, or left absent: it never changes, and one read
// leniently as zero must not be written back so, nor a missing one made up.
func carryOver(item, prev versioned.Item) {
	if prev != nil && prev[attrCreada] == nil {
		delete(item, attrCreada)
	}
	for name, v := range prev {
		if !accountAttrs[name] || name == attrCreada {
			item[name] = v
		}
	}
	before := fields(prev[attrRetenciones])
	for id, hold := range fields(item[attrRetenciones]) {
		now := fields(hold) // the image just marshalled: a map
		for name, v := range fields(before[id]) {
			if !holdAttrs[name] {
				now[name] = v
			}
		}
	}
}

// fields is v's attributes when v is a map, else nil.
func fields(v types.AttributeValue) versioned.Item {
	if m, ok := v.(*types.AttributeValueMemberM); ok {
		return m.Value
	}
	return nil
}

// DecodeCuenta reads an account item; ok is false for a nil item (no account yet).
func DecodeCuenta(item versioned.Item) (c cuenta.Cuenta, ok bool, err error) {
	if item == nil {
		return cuenta.Cuenta{}, false, nil
	}
	if err := checkVersion(item[AttrVersion]); err != nil {
		return cuenta.Cuenta{}, false, fmt.Errorf("items: account item: %w", err)
	}
	var it cuentaItem
	if err := decodeItem(item, &it); err != nil {
		return cuenta.Cuenta{}, false, fmt.Errorf("items: account item: %w", err)
	}
	id, isAccount := strings.CutPrefix(it.PK, CuentaPK)
	if !isAccount || id == "" || it.SK != CuentaSK {
		return cuenta.Cuenta{}, false, fmt.Errorf("items: item %q/%q is not an account", it.PK, it.SK)
	}
	if name := lacking(item, requiredCuenta); name != "" {
		return cuenta.Cuenta{}, false, fmt.Errorf("items: account %s has no %s", id, name)
	}
	for holdID, hold := range fields(item[attrRetenciones]) {
		if name := holdLacks(fields(hold), it.Retenciones[holdID].Expira); name != "" {
			return cuenta.Cuenta{}, false, fmt.Errorf("items: account %s: hold %s has no %s", id, holdID, name)
		}
	}
	return cuenta.Cuenta{
		ID:        id,
		Moneda:    it.Moneda,
		Saldo:     it.Saldo.Decimal,
		Limite:    it.Limite.Decimal,
		Bloqueada: it.Bloqueada,
		Retenciones: mapValues(it.Retenciones, func(r retencionItem) cuenta.Retencion {
			return cuenta.Retencion{Importe: r.Importe.Decimal, Expira: r.Expira}
		}),
		Movimientos: it.Movimientos,
		Version:     it.Version,
		Creada:      it.Creada,
		Actualizada: it.Actualizada,
		Aplicado:    it.Aplicado,
	}, true, nil
}

// checkVersion refuses a stored account's version that is not a positive integer: no
// write could be checked against it, so no retry can apply on top of it.
func checkVersion(av types.AttributeValue) error {
	var shown string
	switch v := av.(type) {
	case *types.AttributeValueMemberN:
		if n, err := strconv.ParseInt(v.Value, 10, 64); err == nil && n >= 1 {
			return nil
		}
		shown = v.Value
	case *types.AttributeValueMemberS:
		shown = strconv.Quote(v.Value)
	default:
		shown = fmt.Sprintf("%T", av)
	}
	return fmt.Errorf("version %s, want a positive integer", shown)
}

// mapValues is m with f applied to each value; nil when m is empty.
func mapValues[V, W any](m map[string]V, f func(V) W) map[string]W {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]W, len(m))
	for k, v := range m {
		out[k] = f(v)
	}
	return out
}

// EncodeApunte is the movement's item.
func EncodeApunte(a movimiento.Apunte) (versioned.Item, error) {
	m := a.Movimiento
	it := movItem{
		PK:            CuentaPK + m.Cuenta,
		SK:            MovSK + m.ID,
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
		Remitente:     a.Remitente,
		Via:           a.Via,
		Anula:         m.Anula,
		AnuladoPor:    a.AnuladoPor,
		Contrapartida: a.Contrapartida,
		Retencion:     m.Retencion,
		Expira:        m.Expira.UTC(),
		CapturadaPor:  a.CapturadaPor,
		LiberadaPor:   a.LiberadaPor,
		Anulaciones:   a.Anulaciones,
		Version:       a.Version,
	}
	if a.Posted() {
		saldo := versioned.NumberOf(a.SaldoTras)
		it.Seq, it.SaldoTras = a.Seq, &saldo
	}
	if a.Reembolsado.Sign() != 0 {
		reembolsado := versioned.NumberOf(a.Reembolsado)
		it.Reembolsado = &reembolsado
	}
	for _, p := range a.Partes {
		it.Partes = append(it.Partes, parteItem{Cuenta: p.Cuenta, Importe: versioned.NumberOf(p.Importe)})
	}
	item, err := attributevalue.MarshalMapWithOptions(it, func(o *attributevalue.EncoderOptions) { o.OmitEmptyTime = true }) // no expira but a hold's
	if err != nil {
		return nil, fmt.Errorf("items: encode movement %s/%s: %w", m.Cuenta, m.ID, err)
	}
	if a.Posted() {
		item[AttrAplicadoSeq] = &types.AttributeValueMemberS{Value: AplicadoSeq(a.Aplicado, a.Seq)}
	}
	return item, nil
}

// DecodeApunte reads a movement item without today's input rules, so a movement a
// writer stored (a currency since withdrawn, an id rule since tightened) still reads,
// audits and answers its duplicates.
func DecodeApunte(item versioned.Item) (movimiento.Apunte, error) {
	var it movItem
	if err := decodeItem(item, &it); err != nil {
		return movimiento.Apunte{}, fmt.Errorf("items: movement item: %w", err)
	}
	cuentaID, okPK := strings.CutPrefix(it.PK, CuentaPK)
	id, okSK := strings.CutPrefix(it.SK, MovSK)
	if !okPK || !okSK || cuentaID == "" || id == "" {
		return movimiento.Apunte{}, fmt.Errorf("items: item %q/%q is not a movement", it.PK, it.SK)
	}
	a := movimiento.Apunte{
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
			Expira:    it.Expira,
		},
		Huella:        it.Huella,
		Estado:        movimiento.Estado(it.Estado),
		Seq:           it.Seq,
		Motivo:        it.Motivo,
		Aplicado:      it.Aplicado,
		Origen:        it.Origen,
		Remitente:     it.Remitente,
		Via:           it.Via,
		AnuladoPor:    it.AnuladoPor,
		Contrapartida: it.Contrapartida,
		CapturadaPor:  it.CapturadaPor,
		LiberadaPor:   it.LiberadaPor,
		Anulaciones:   it.Anulaciones,
		Version:       it.Version,
	}
	if it.SaldoTras != nil {
		a.SaldoTras = it.SaldoTras.Decimal
	}
	if it.Reembolsado != nil {
		a.Reembolsado = it.Reembolsado.Decimal
	}
	for _, p := range it.Partes {
		a.Partes = append(a.Partes, movimiento.Parte{Cuenta: p.Cuenta, Importe: p.Importe.Decimal})
	}
	if name := lacking(item, requiredPosted); a.Posted() && name != "" {
		return movimiento.Apunte{}, fmt.Errorf("items: applied movement %s/%s has no %s", cuentaID, id, name)
	}
	if name := holdLacks(item, it.Expira); a.Movimiento.Tipo == movimiento.Retencion && name != "" {
		return movimiento.Apunte{}, fmt.Errorf("items: hold %s/%s has no %s", cuentaID, id, name)
	}
	return a, nil
}

// marks are the attributes a movement changes on the record it refers to: a refund
// marks what the original has given back (and, once whole, who reversed it), a capture
// or release marks the hold settled.
var marks = []string{AttrEstado, AttrAnuladoPor, AttrCapturadaPor, AttrLiberadaPor, AttrReembolsado, AttrAnulaciones}

// Mark is the Replace that rewrites stored, a record as read, so it reads as marked
// says (its estado, what it gave back, who reversed or settled it), if each scalar
// attribute it changes still holds its stored value: no other movement marked it
// since. A list (the refunds' ids) grows only with what is refunded, which its total
// guards. Every other attribute is kept as stored. It is nil when marked changes
// nothing.
func Mark(stored versioned.Item, marked movimiento.Apunte) *versioned.Replace {
	after, err := EncodeApunte(marked)
	if err != nil { // a record that was decoded always encodes
		return nil
	}
	var r *versioned.Replace
	for _, name := range marks {
		was, now := stored[name], after[name]
		if reflect.DeepEqual(was, now) {
			continue
		}
		if r == nil {
			r = &versioned.Replace{Item: maps.Clone(stored)}
		}
		if now == nil {
			delete(r.Item, name)
		} else {
			r.Item[name] = now
		}
		switch was.(type) {
		case nil:
			r.If = append(r.If, versioned.Missing(name))
		case *types.AttributeValueMemberS, *types.AttributeValueMemberN:
			r.If = append(r.If, versioned.Holds(name, was))
		}
	}
	return r
}

// PartitionQuery queries the partition of account cuentaID: its item, then its
// movements, by sort key.
func PartitionQuery(table, cuentaID string) *dynamodb.QueryInput {
	return &dynamodb.QueryInput{
		TableName:                 aws.String(table),
		KeyConditionExpression:    aws.String("#pk = :pk"),
		ExpressionAttributeNames:  map[string]string{"#pk": AttrPK},
		ExpressionAttributeValues: versioned.Item{":pk": &types.AttributeValueMemberS{Value: CuentaPK + cuentaID}},
	}
}
