package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/ledger-dev/ledger/internal/extracto"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/store"
)

// ledger extracto is a command of its own, not a flag of ledger cuenta: it only reads,
// writes a document to keep rather than an account to look at, and its flags mean
// nothing beside --limite or --bloquear.
var extractoCommand = command{
	name:    "extracto",
	summary: "an account's statement of a period: opening balance, movements, closing balance; text, CSV or JSON",
	run:     runExtracto,
}

// extractoTimeout bounds reading and writing one statement, the SDK's retries included:
// enough for millions of movements, a thousand a request.
const extractoTimeout = 30 * time.Minute

// extractoHelp is ledger extracto's --help.
var extractoHelp = helpText{synopsis: "CUENTA [--desde D] [--hasta D] [--csv | --json] [--endpoint URL] [--table T]", about: `
Writes the statement of the account CUENTA, from the ledger table in DynamoDB at
--endpoint: the movements applied from --desde until before --hasta, oldest first,
between the balance before the first and the balance after the last. Each movement
shows when it was applied (aplicado), its seq, id, tipo, concepto, its importe signed
(negative for a debit), saldo_tras, and what it refers to (contrapartida, anula,
anulado_por, retencion) and its producer's fecha. D is an RFC 3339 date-time in any
offset, or a date, which stands for its first instant in UTC. Without --desde the
statement starts with the account, without --hasta it ends now. Each movement is
checked to follow the one before it and to move the balance by its importe, so the
opening balance plus the movements is the closing balance; a statement that does not
add up fails before its first wrong line (a period ending in the last moments may
wait for an index: run it again). --csv writes RFC 4180 CSV with a header row, a first
row of tipo saldo_inicial and a last of tipo saldo_final, amounts as plain decimals;
a text cell that begins with =, +, - or @ gets a leading ' so that a spreadsheet does
not run it as a formula. The counts go to stderr.`, example: `
ledger extracto ES7620770024003102575766 --desde 2026-11-01 --hasta 2026-12-01 --csv > noviembre.csv
ledger extracto ES7620770024003102575766 --desde 2026-11-30T23:00:00Z --json --endpoint http://127.0.0.1:5000`}

// extractoCmd is ledger extracto's command line.
type extractoCmd struct {
	*flags
	table        tableFlags
	id           string // the account
	desde, hasta string
	periodo      extracto.Periodo // once validated; Hasta zero until run when --hasta is absent
	asCSV        bool
	asJSON       bool
}

// newExtractoCmd declares ledger extracto's flags.
func newExtractoCmd(stdout, stderr io.Writer) *extractoCmd {
	c := &extractoCmd{flags: newFlags("extracto", extractoHelp, stdout, stderr)}
	c.StringVar(&c.desde, "desde", "", "the first instant of the period: an RFC 3339 date-time, or a date (its first instant in UTC) (default: the account's opening)")
	c.StringVar(&c.hasta, "hasta", "", "the end of the period, written as --desde: movements applied before it (default: now)")
	c.BoolVar(&c.asCSV, "csv", false, "write RFC 4180 CSV with a header row instead of text")
	c.table.declare(c.flags)
	c.jsonVar(&c.asJSON)
	return c
}

// runExtracto is ledger extracto: it parses the command line, then validates it and runs.
func runExtracto(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newExtractoCmd(stdout, stderr)
	if code, ok := c.parse(args, 1); !ok {
		return code
	}
	return c.step(ctx, c)
}

// parse parses the account and the flags (flags.parseAccount), in place of flags.parse.
func (c *extractoCmd) parse(args []string, _ int) (code int, ok bool) {
	return c.parseAccount(args, &c.id)
}

// validate checks the account is given, --desde, --hasta and their order, that --csv
// and --json are not both given, then where the table is.
func (c *extractoCmd) validate() error {
	if c.id == "" {
		return errors.New("give the account: ledger extracto CUENTA")
	}
	c.periodo.Cuenta = c.id
	for _, b := range []struct {
		flag, value string
		to          *time.Time
	}{{"--desde", c.desde, &c.periodo.Desde}, {"--hasta", c.hasta, &c.periodo.Hasta}} {
		if !c.given(b.flag[2:]) {
			continue
		}
		t, ok := movimiento.ParseInstante(b.value)
		if !ok {
			t, ok = movimiento.ParseDia(b.value)
		}
		if !ok {
			return fmt.Errorf("%s must be an RFC 3339 date-time such as 2026-11-30T23:59:59Z or a date such as 2026-12-01, not %q", b.flag, b.value)
		}
		*b.to = t
	}
	if p := c.periodo; !p.Desde.IsZero() && !p.Hasta.IsZero() && !p.Hasta.After(p.Desde) {
		return fmt.Errorf("--hasta %s must be later than --desde %s: the period is [desde, hasta)", c.hasta, c.desde)
	}
	if c.asCSV && c.asJSON {
		return errors.New("give --csv or --json, not both")
	}
	return c.table.validate()
}

// run writes the statement of the period, ending now when --hasta is absent, and its
// counts on stderr.
func (c *extractoCmd) run(ctx context.Context) error {
	now := time.Now()
	p := c.periodo
	switch {
	case p.Hasta.IsZero():
		p.Hasta = now
	case p.Hasta.After(now):
		fmt.Fprintf(c.stderr, "ledger extracto: --hasta %s is in the future: movements may still be applied in the period\n", c.hasta)
	}
	if !p.Desde.IsZero() && !p.Hasta.After(p.Desde) {
		return badUsage("--desde %s is not before now, where the period ends without --hasta", c.desde)
	}
	cfg, _, db, err := c.table.open(ctx, checkTable)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, extractoTimeout)
	defer cancel()
	formato := extracto.Texto
	switch {
	case c.asCSV:
		formato = extracto.CSV
	case c.asJSON:
		formato = extracto.JSON
	}
	res, err := extracto.Escribir(ctx, c.stdout, store.NewReader(db, cfg.Table), p, formato)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.stderr, "ledger extracto: %s: %d movements, credits %s, debits %s; balance %s → %s %s\n", c.id, res.Movimientos,
		movimiento.Texto(res.Abonos, res.Moneda), movimiento.Texto(res.Cargos, res.Moneda),
		movimiento.Texto(res.Inicial.Saldo, res.Moneda), movimiento.Texto(res.Final.Saldo, res.Moneda), res.Moneda)
	return nil
}
