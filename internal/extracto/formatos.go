package extracto

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ledger-dev/ledger/internal/movimiento"
)

// writer writes one statement: its opening balance, its movements oldest first, its
// closing balance, in that order, once each.
type writer interface {
	apertura(Saldo) error
	linea(movimiento.Apunte) error
	cierre(Saldo) error
}

func newWriter(w io.Writer, f Formato, p Periodo, moneda string) writer {
	switch f {
	case CSV:
		c := csv.NewWriter(w)
		c.UseCRLF = true // RFC 4180's line break
		return &csvWriter{w: c, p: p, moneda: moneda}
	case JSON:
		return &jsonWriter{w: w, p: p, moneda: moneda}
	}
	return &textWriter{w: w, tw: tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight), p: p, moneda: moneda}
}

// lineaBody is one movement as a statement shows it: its importe signed, negative for
// a debit, and what it refers to.
type lineaBody struct {
	Aplicado      string `json:"aplicado"`
	Seq           int64  `json:"seq"`
	ID            string `json:"id"`
	Tipo          string `json:"tipo"`
	Concepto      string `json:"concepto,omitempty"`
	Importe       string `json:"importe"`
	SaldoTras     string `json:"saldo_tras"`
	Contrapartida string `json:"contrapartida,omitempty"`
	Anula         string `json:"anula,omitempty"`
	AnuladoPor    string `json:"anulado_por,omitempty"`
	Retencion     string `json:"retencion,omitempty"`
	Fecha         string `json:"fecha,omitempty"`
}

func newLinea(a movimiento.Apunte, moneda string) lineaBody {
	m := a.Movimiento
	return lineaBody{
		Aplicado: timestamp(a.Aplicado), Seq: a.Seq, ID: m.ID, Tipo: string(m.Tipo), Concepto: m.Concepto,
		Importe: movimiento.Texto(m.Delta(), moneda), SaldoTras: movimiento.Texto(a.SaldoTras, moneda),
		Contrapartida: a.Contrapartida, Anula: m.Anula, AnuladoPor: a.AnuladoPor, Retencion: m.Retencion, Fecha: m.Fecha,
	}
}

// timestamp is t as the API writes times, RFC 3339 in UTC; "" for none.
func timestamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// The rows that open and close a CSV or text statement carry these in the tipo column.
const (
	tipoInicial = "saldo_inicial"
	tipoFinal   = "saldo_final"
)

// csvHeader names the CSV columns.
var csvHeader = []string{"aplicado", "seq", "id", "tipo", "concepto", "importe", "saldo_tras", "moneda", "contrapartida", "anula", "anulado_por", "retencion", "fecha"}

// csvWriter writes RFC 4180 CSV: a header row, a saldo_inicial row, a row per movement,
// a saldo_final row.
type csvWriter struct {
	w      *csv.Writer
	p      Periodo
	moneda string
}

func (c *csvWriter) apertura(s Saldo) error {
	if err := c.w.Write(csvHeader); err != nil {
		return err
	}
	return c.saldo(c.p.Desde, tipoInicial, s)
}

func (c *csvWriter) linea(a movimiento.Apunte) error {
	l := newLinea(a, c.moneda)
	return c.w.Write([]string{l.Aplicado, strconv.FormatInt(l.Seq, 10), text(l.ID), l.Tipo, text(l.Concepto), l.Importe, l.SaldoTras,
		c.moneda, text(l.Contrapartida), text(l.Anula), text(l.AnuladoPor), text(l.Retencion), l.Fecha})
}

func (c *csvWriter) cierre(s Saldo) error {
	if err := c.saldo(c.p.Hasta, tipoFinal, s); err != nil {
		return err
	}
	c.w.Flush()
	return c.w.Error()
}

// saldo writes the row of a balance at one end of the period, at t.
func (c *csvWriter) saldo(t time.Time, tipo string, s Saldo) error {
	return c.w.Write([]string{timestamp(t), strconv.FormatInt(s.Seq, 10), "", tipo, "", "", movimiento.Texto(s.Saldo, c.moneda), c.moneda, "", "", "", "", ""})
}

// text is s as a CSV text cell: one that begins with =, +, - or @ gets a leading ' so
// that a spreadsheet shows it rather than running it as a formula (an id or a concepto
// comes from producers). Amounts are numbers and are written as they are.
func text(s string) string {
	if s != "" && strings.ContainsRune("=+-@", rune(s[0])) {
		return "'" + s
	}
	return s
}

// jsonWriter writes one JSON document, movement by movement: {"cuenta", "moneda",
// "desde", "hasta", "saldo_inicial", "movimientos": […], "saldo_final"}.
type jsonWriter struct {
	w      io.Writer
	p      Periodo
	moneda string
	n      int
}

// saldoBody is a balance at one end of the period.
type saldoBody struct {
	Saldo string `json:"saldo"`
	Seq   int64  `json:"seq"`
}

func (j *jsonWriter) apertura(s Saldo) error {
	head, err := json.Marshal(struct {
		Cuenta       string    `json:"cuenta"`
		Moneda       string    `json:"moneda"`
		Desde        string    `json:"desde,omitempty"`
		Hasta        string    `json:"hasta"`
		SaldoInicial saldoBody `json:"saldo_inicial"`
	}{j.p.Cuenta, j.moneda, timestamp(j.p.Desde), timestamp(j.p.Hasta), saldoBody{movimiento.Texto(s.Saldo, j.moneda), s.Seq}})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(j.w, "%s,\"movimientos\":[", head[:len(head)-1])
	return err
}

func (j *jsonWriter) linea(a movimiento.Apunte) error {
	body, err := json.Marshal(newLinea(a, j.moneda))
	if err != nil {
		return err
	}
	if j.n++; j.n > 1 {
		body = append([]byte{','}, body...)
	}
	_, err = j.w.Write(body)
	return err
}

func (j *jsonWriter) cierre(s Saldo) error {
	tail, err := json.Marshal(saldoBody{movimiento.Texto(s.Saldo, j.moneda), s.Seq})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(j.w, "],\"saldo_final\":%s}\n", tail)
	return err
}

// textWriter writes a table for people, aligned a block of textBlock lines at a time.
type textWriter struct {
	w      io.Writer
	tw     *tabwriter.Writer
	p      Periodo
	moneda string
	n      int
}

// textBlock bounds what the table holds in memory before it writes it out.
const textBlock = 1000

func (x *textWriter) apertura(s Saldo) error {
	desde := "its opening"
	if !x.p.Desde.IsZero() {
		desde = timestamp(x.p.Desde)
	}
	fmt.Fprintf(x.w, "cuenta %s (%s), applied from %s until before %s\n", x.p.Cuenta, x.moneda, desde, timestamp(x.p.Hasta))
	fmt.Fprint(x.tw, "aplicado\tseq\tid\ttipo\timporte\tsaldo_tras\t\n")
	return x.saldo("saldo inicial", s)
}

func (x *textWriter) linea(a movimiento.Apunte) error {
	l := newLinea(a, x.moneda)
	var refs []string
	for _, r := range [][2]string{{"contrapartida", l.Contrapartida}, {"anula", l.Anula}, {"anulado_por", l.AnuladoPor}, {"retencion", l.Retencion}} {
		if r[1] != "" {
			refs = append(refs, r[0]+" "+r[1])
		}
	}
	fmt.Fprintf(x.tw, "%s\t%d\t%s\t%s\t%s\t%s\t  %s\n", l.Aplicado, l.Seq, l.ID, l.Tipo, l.Importe, l.SaldoTras, strings.Join(append([]string{l.Concepto}, refs...), "  "))
	if x.n++; x.n%textBlock == 0 {
		return x.tw.Flush()
	}
	return nil
}

func (x *textWriter) cierre(s Saldo) error {
	if err := x.saldo("saldo final", s); err != nil {
		return err
	}
	return x.tw.Flush()
}

// saldo writes the line of a balance at one end of the period.
func (x *textWriter) saldo(what string, s Saldo) error {
	_, err := fmt.Fprintf(x.tw, "%s\t%d\t\t\t\t%s\t\n", what, s.Seq, movimiento.Texto(s.Saldo, x.moneda))
	return err
}
