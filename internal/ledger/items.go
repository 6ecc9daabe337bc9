package ledger

import (
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/versioned"
)

// The table's item layout (DESIGN.md, "Table"). Account ids and movement ids cannot
// contain '#' (movimiento validates both), so "CUENTA#<cuenta>" names exactly one
// account and "MOV#<id>" can never equal the account's sort key "CUENTA".
const (
	attrPK      = "pk"
	attrSK      = "sk"
	attrVersion = "version"
	attrSeq     = "seq"
	cuentaPK    = "CUENTA#"
	cuentaSK    = "CUENTA"
	movSK       = "MOV#"
	timeLayout  = time.RFC3339Nano
	// indexPorSeq is the sparse global secondary index (pk, seq) over applied
	// movements: an account's statement in ledger order (migrations/0001_ledger.json).
	indexPorSeq = "por_seq"
)

// Estado is a recorded movement's state.
type Estado string

// The states a movement item can be in.
const (
	Aplicado  Estado = "aplicado"
	Rechazado Estado = "rechazado"
)

// Table is the versioned-store description of a ledger table named name: accounts are
// the versioned items, movements the create-once records.
func Table(name string) versioned.Table {
	return versioned.Table{Name: name, PartitionKey: attrPK, SortKey: attrSK, Version: attrVersion}
}

// Apunte is a movement as recorded in the ledger: the movement itself, and what the
// ledger made of it. Seq and SaldoTras are set only when Estado is Aplicado; Motivo
// only when it is Rechazado.
type Apunte struct {
	Movimiento movimiento.Movimiento
	Huella     string
	Estado     Estado
	Seq        int64
	SaldoTras  decimal.Decimal
	Motivo     string
	Aplicado   time.Time
	Origen     string
}

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

func cuentaKey(id string) versioned.Item { return key(cuentaPK+id, cuentaSK) }

func movKey(cuentaID, id string) versioned.Item { return key(cuentaPK+cuentaID, movSK+id) }

func key(pk, sk string) versioned.Item {
	v := &[2]types.AttributeValueMemberS{{Value: pk}, {Value: sk}} // one allocation for both
	return versioned.Item{attrPK: &v[0], attrSK: &v[1]}
}

// cuentaItem is the account's new image, version excluded (the store sets it). prev is
// the stored image (nil for a new account): its attributes are carried over, so fields
// other writers keep on the item survive, and unchanged values are not re-encoded.
// stamp is the write's time as text: actualizada, and creada for a new account.
func cuentaItem(c cuenta.Cuenta, prev versioned.Item, stamp string) versioned.Item {
	// One allocation for every changed value, instead of one each.
	v := &struct {
		saldo, movimientos, limite      types.AttributeValueMemberN
		pk, sk, moneda, creada, updated types.AttributeValueMemberS
	}{}
	item := make(versioned.Item, max(len(prev), 9))
	for k, val := range prev {
		item[k] = val
	}
	v.saldo.Value = c.Saldo.String()
	v.movimientos.Value = strconv.FormatInt(c.Movimientos, 10)
	v.updated.Value = stamp
	item["saldo"], item["movimientos"], item["actualizada"] = &v.saldo, &v.movimientos, &v.updated
	if prev == nil {
		v.pk.Value, v.sk.Value, v.moneda.Value = cuentaPK+c.ID, cuentaSK, c.Moneda
		v.limite.Value, v.creada.Value = c.Limite.String(), stamp
		item[attrPK], item[attrSK], item["moneda"], item["limite"], item["creada"] = &v.pk, &v.sk, &v.moneda, &v.limite, &v.creada
	}
	return item
}

// apunteItem is the movement's item; stamp is a.Aplicado as text.
func apunteItem(a Apunte, stamp string) versioned.Item {
	m := a.Movimiento
	// One allocation for every value, instead of one each.
	v := &struct {
		pk, sk, tipo, moneda, huella, estado, aplicado, origen, concepto, fecha, motivo types.AttributeValueMemberS
		importe, seq, saldoTras                                                         types.AttributeValueMemberN
	}{}
	v.pk.Value, v.sk.Value = cuentaPK+m.Cuenta, movSK+m.ID
	v.tipo.Value, v.importe.Value, v.moneda.Value = string(m.Tipo), m.ImporteTexto(), m.Moneda
	v.huella.Value, v.estado.Value, v.aplicado.Value, v.origen.Value = a.Huella, string(a.Estado), stamp, a.Origen
	item := make(versioned.Item, 14)
	item[attrPK], item[attrSK], item["tipo"], item["importe"], item["moneda"] = &v.pk, &v.sk, &v.tipo, &v.importe, &v.moneda
	item["huella"], item["estado"], item["aplicado"], item["origen"] = &v.huella, &v.estado, &v.aplicado, &v.origen
	if m.Concepto != "" {
		v.concepto.Value = m.Concepto
		item["concepto"] = &v.concepto
	}
	if m.Fecha != "" {
		v.fecha.Value = m.Fecha
		item["fecha"] = &v.fecha
	}
	if a.Estado == Aplicado {
		v.seq.Value, v.saldoTras.Value = strconv.FormatInt(a.Seq, 10), a.SaldoTras.String()
		item[attrSeq], item["saldo_tras"] = &v.seq, &v.saldoTras
	}
	if a.Motivo != "" {
		v.motivo.Value = a.Motivo
		item["motivo"] = &v.motivo
	}
	return item
}

// stamp is t as stored in the table.
func stamp(t time.Time) string { return t.UTC().Format(timeLayout) }

// decodeCuenta reads an account item; ok is false for a nil item (no account yet).
func decodeCuenta(item versioned.Item) (c cuenta.Cuenta, ok bool, err error) {
	if item == nil {
		return cuenta.Cuenta{}, false, nil
	}
	r := attrReader{item: item}
	pk := r.str(attrPK)
	if len(pk) <= len(cuentaPK) || pk[:len(cuentaPK)] != cuentaPK {
		return cuenta.Cuenta{}, false, fmt.Errorf("ledger: item %q is not an account", pk)
	}
	c = cuenta.Cuenta{
		ID:          pk[len(cuentaPK):],
		Moneda:      r.str("moneda"),
		Saldo:       r.dec("saldo"),
		Limite:      r.optDec("limite"),
		Movimientos: r.int("movimientos"),
		Version:     r.int(attrVersion),
		Creada:      r.time("creada"),
		Actualizada: r.time("actualizada"),
	}
	return c, true, r.err
}

// decodeApunte reads a movement item.
func decodeApunte(item versioned.Item) (Apunte, error) {
	r := attrReader{item: item}
	pk, sk := r.str(attrPK), r.str(attrSK)
	if r.err != nil || len(pk) <= len(cuentaPK) || len(sk) <= len(movSK) || sk[:len(movSK)] != movSK {
		return Apunte{}, fmt.Errorf("ledger: item %q/%q is not a movement", pk, sk)
	}
	a := Apunte{
		Huella:   r.str("huella"),
		Estado:   Estado(r.str("estado")),
		Motivo:   r.optStr("motivo"),
		Aplicado: r.time("aplicado"),
		Origen:   r.optStr("origen"),
	}
	if a.Estado == Aplicado {
		a.Seq = r.int(attrSeq)
		a.SaldoTras = r.dec("saldo_tras")
	}
	importe := r.num("importe")
	if r.err != nil {
		return Apunte{}, r.err
	}
	m, err := movimiento.New(movimiento.Datos{
		ID:       sk[len(movSK):],
		Cuenta:   pk[len(cuentaPK):],
		Tipo:     movimiento.Tipo(r.str("tipo")),
		Importe:  importe,
		Moneda:   r.str("moneda"),
		Concepto: r.optStr("concepto"),
		Fecha:    r.optStr("fecha"),
	})
	if err != nil {
		return Apunte{}, fmt.Errorf("ledger: stored movement %s/%s: %w", pk, sk, err)
	}
	a.Movimiento = m
	return a, r.err
}

// attrReader decodes attributes, keeping the first error so decoders read straight through.
type attrReader struct {
	item versioned.Item
	err  error
}

func (r *attrReader) fail(attr, want string) {
	if r.err == nil {
		r.err = fmt.Errorf("ledger: attribute %q: want %s, have %v", attr, want, r.item[attr])
	}
}

func (r *attrReader) str(attr string) string {
	v, ok := r.item[attr].(*types.AttributeValueMemberS)
	if !ok {
		r.fail(attr, "a string")
		return ""
	}
	return v.Value
}

func (r *attrReader) optStr(attr string) string {
	if _, ok := r.item[attr]; !ok {
		return ""
	}
	return r.str(attr)
}

func (r *attrReader) num(attr string) string {
	v, ok := r.item[attr].(*types.AttributeValueMemberN)
	if !ok {
		r.fail(attr, "a number")
		return "0"
	}
	return v.Value
}

func (r *attrReader) dec(attr string) decimal.Decimal {
	d, err := decimal.NewFromString(r.num(attr))
	if err != nil {
		r.fail(attr, "a decimal number")
	}
	return d
}

func (r *attrReader) optDec(attr string) decimal.Decimal {
	if _, ok := r.item[attr]; !ok {
		return decimal.Zero
	}
	return r.dec(attr)
}

func (r *attrReader) int(attr string) int64 {
	i, err := strconv.ParseInt(r.num(attr), 10, 64)
	if err != nil {
		r.fail(attr, "an integer")
	}
	return i
}

func (r *attrReader) time(attr string) time.Time {
	t, err := time.Parse(timeLayout, r.str(attr))
	if err != nil {
		r.fail(attr, "an RFC 3339 time")
	}
	return t
}
