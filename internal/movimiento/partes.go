package movimiento

import (
	"fmt"
	"slices"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/shopspring/decimal"
)

// Parte is one credited account of a reparto and the importe it receives.
type Parte struct {
	Cuenta  string
	Importe decimal.Decimal
}

// ParteDatos is a Parte as unvalidated text, for New.
type ParteDatos struct {
	Cuenta  string
	Importe string
}

// checkPartes checks d's partes: present exactly for a reparto, 2 to MaxPartes of
// them, each a credited account by cuenta's rules, other than the payer and named once,
// with an importe in the movement's currency; together they sum to total exactly.
func (d *Datos) checkPartes(total decimal.Decimal) ([]Parte, error) {
	switch needed := own[d.Tipo] == "partes"; {
	case needed && len(d.Partes) == 0:
		return nil, &FieldError{Field: "partes", Rule: "is required for tipo " + string(d.Tipo)}
	case !needed && len(d.Partes) > 0:
		return nil, &FieldError{Field: "partes", Rule: "is not allowed for tipo " + string(d.Tipo)}
	case !needed:
		return nil, nil
	case len(d.Partes) < 2 || len(d.Partes) > MaxPartes:
		return nil, &FieldError{Field: "partes", Rule: fmt.Sprintf("has %d parts; a reparto takes 2 to %d", len(d.Partes), MaxPartes)}
	}
	partes := make([]Parte, len(d.Partes))
	sum := decimal.Zero
	for i := range d.Partes {
		var err error
		if partes[i], err = d.checkParte(i, partes[:i]); err != nil {
			return nil, err
		}
		sum = sum.Add(partes[i].Importe)
	}
	if !sum.Equal(total) {
		return nil, &FieldError{Field: "partes", Rule: fmt.Sprintf("sum to %s, not the importe %s", sum, total)}
	}
	return partes, nil
}

// checkParte checks part i of d, given the parts before it.
func (d *Datos) checkParte(i int, before []Parte) (Parte, error) {
	p, path := d.Partes[i], fmt.Sprintf("partes[%d]", i)
	if err := checkKey(path+".cuenta", p.Cuenta, maxCuenta, cuentaPunct); err != nil {
		return Parte{}, err
	}
	if p.Cuenta == d.Cuenta {
		return Parte{}, &FieldError{path + ".cuenta", p.Cuenta, "must differ from cuenta: the payer pays no part to itself"}
	}
	if slices.ContainsFunc(before, func(q Parte) bool { return q.Cuenta == p.Cuenta }) {
		return Parte{}, &FieldError{path + ".cuenta", p.Cuenta, "is named twice: one part per account"}
	}
	importe, err := checkImporte(path+".importe", p.Importe)
	if err == nil {
		err = checkDecimals(path+".importe", importe, d.Moneda)
	}
	return Parte{Cuenta: p.Cuenta, Importe: importe}, err
}

// parte is one element of partes as Parse reads it: raw members, as the message's.
type parte struct {
	Cuenta  jsontext.Value `json:"cuenta"`
	Importe jsontext.Value `json:"importe"`
}

// parsePartes reads the partes member: absent or null (none), or an array of objects
// with a cuenta string and an importe string or number literal. A wrong JSON type is
// a *FieldError naming the member's path.
func parsePartes(raw jsontext.Value) ([]ParteDatos, *FieldError) {
	switch k := raw.Kind(); k {
	case 0, 'n':
		return nil, nil
	case '[':
	default:
		return nil, &FieldError{Field: "partes", Rule: "must be a JSON array of objects with cuenta and importe, got " + kindNames[k]}
	}
	var elems []jsontext.Value
	if err := json.Unmarshal(raw, &elems, strict); err != nil { // the body decoded: cannot fail
		return nil, &FieldError{Field: "partes", Rule: "is not a JSON array: " + err.Error()}
	}
	out := make([]ParteDatos, len(elems))
	for i, e := range elems {
		path := fmt.Sprintf("partes[%d]", i)
		var p parte
		if e.Kind() != '{' || json.Unmarshal(e, &p, strict) != nil {
			return nil, &FieldError{Field: path, Rule: "must be a JSON object with cuenta and importe, got " + kindNames[e.Kind()]}
		}
		if k := p.Cuenta.Kind(); k != 0 && k != 'n' && k != '"' {
			return nil, &FieldError{Field: path + ".cuenta", Rule: "must be a JSON string, got " + kindNames[k]}
		}
		out[i].Cuenta = text(p.Cuenta)
		switch k := p.Importe.Kind(); k {
		case '0':
			out[i].Importe = string(p.Importe)
		case 0, 'n', '"':
			out[i].Importe = text(p.Importe)
		default:
			return nil, &FieldError{Field: path + ".importe", Rule: "must be a JSON string or number, got " + kindNames[k]}
		}
	}
	return out, nil
}

// huellaPartes is the parts as the fingerprint takes them: "cuenta=importe" (importe
// canonical), sorted by account, so that the order a producer lists them in is not
// part of the fact.
func huellaPartes(partes []Parte) string {
	terms := make([]string, len(partes))
	for i, p := range partes {
		terms[i] = p.Cuenta + "=" + p.Importe.String()
	}
	slices.Sort(terms)
	return strings.Join(terms, ",")
}
