package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledger-dev/ledger/internal/api"
	"github.com/ledger-dev/ledger/internal/cuenta"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/store"
)

var cuentaCommand = command{
	name:    "cuenta",
	summary: "show an account; set its overdraft limit, freeze or unfreeze it (version + 1)",
	run:     runCuenta,
}

// cuentaChange is `ledger cuenta --json`'s document for a change: the account before
// and after it.
type cuentaChange struct {
	Antes   api.CuentaBody `json:"antes"`
	Despues api.CuentaBody `json:"despues"`
}

// cuentaTimeout bounds reading or changing the account, the SDK's retries and those of a
// write that lost a race included: an endpoint that stalls after the table check fails
// the command.
const cuentaTimeout = 30 * time.Second

// cuentaHelp is ledger cuenta's --help.
var cuentaHelp = helpText{synopsis: "CUENTA [--limite IMPORTE] [--bloquear | --desbloquear] [--endpoint URL] [--table T] [--json]", about: `
Shows the account CUENTA, from the ledger table in DynamoDB at --endpoint, or changes
it: --limite sets its overdraft limit, --bloquear freezes it, --desbloquear unfreezes
it, and a change adds one to its version. With --json the result is the account, or the
account before and after a change: {"antes": …, "despues": …}.`, example: `
ledger cuenta ES7620770024003102575766
ledger cuenta ES7620770024003102575766 --limite 500.00 --endpoint http://127.0.0.1:5000
ledger cuenta ES7620770024003102575766 --bloquear --json`}

// cuentaCmd is ledger cuenta's command line.
type cuentaCmd struct {
	*flags
	table       tableFlags
	id          string // the account
	limite      string
	newLimite   *decimal.Decimal // --limite, once validated; nil when not given
	bloquear    bool
	desbloquear bool
	asJSON      bool
}

// newCuentaCmd declares ledger cuenta's flags.
func newCuentaCmd(stdout, stderr io.Writer) *cuentaCmd {
	c := &cuentaCmd{flags: newFlags("cuenta", cuentaHelp, stdout, stderr)}
	c.StringVar(&c.limite, "limite", "", "set the allowed overdraft: a decimal ≥ 0 with at most the currency's decimals (any in a currency since withdrawn)")
	c.BoolVar(&c.bloquear, "bloquear", false, "freeze the account: no new debit or hold is applied until it is unfrozen (credits, captures of earlier holds and releases are)")
	c.BoolVar(&c.desbloquear, "desbloquear", false, "unfreeze the account")
	c.table.declare(c.flags)
	c.jsonVar(&c.asJSON)
	return c
}

// runCuenta is ledger cuenta: it parses the command line, then validates it and runs.
func runCuenta(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCuentaCmd(stdout, stderr)
	if code, ok := c.parse(args, 1); !ok {
		return code
	}
	return c.step(ctx, c)
}

// parse parses the account and the flags (flags.parseAccount), in place of flags.parse.
func (c *cuentaCmd) parse(args []string, _ int) (code int, ok bool) {
	return c.parseAccount(args, &c.id)
}

// parseAccount parses a command line of one account and flags into id and the flags.
// The account may come before, among or after the flags; flags after it are read too,
// and an argument after it is the stray one named.
func (f *flags) parseAccount(args []string, id *string) (code int, ok bool) {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		*id, args = args[0], args[1:]
	}
	code, ok = f.parse(args, len(args))
	switch {
	case ok && *id == "" && f.NArg() > 0:
		*id = f.Arg(0)
		return f.parse(f.Args()[1:], 0)
	case ok && f.NArg() > 0:
		return f.usageError("unexpected argument %q", f.Arg(0)), false
	}
	return code, ok
}

// validate checks the account is given, --limite, that --bloquear and --desbloquear
// are not both given, then where the table is.
func (c *cuentaCmd) validate() error {
	if c.id == "" {
		return errors.New("give the account: ledger cuenta CUENTA")
	}
	if c.given("limite") {
		d, err := decimal.NewFromString(c.limite)
		if err != nil || !movimiento.IsPlainDecimal(c.limite) {
			return fmt.Errorf("--limite must be a decimal ≥ 0 in plain notation such as 500.00, not %q", c.limite)
		}
		c.newLimite = &d
	}
	if c.bloquear && c.desbloquear {
		return errors.New("give --bloquear or --desbloquear, not both")
	}
	return c.table.validate()
}

// run shows the account, or changes it and shows it before and after.
func (c *cuentaCmd) run(ctx context.Context) error {
	cfg, _, db, err := c.table.open(ctx, checkTable)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, cuentaTimeout)
	defer cancel()
	if c.newLimite == nil && !c.bloquear && !c.desbloquear {
		cu, err := store.NewReader(db, cfg.Table).Cuenta(ctx, c.id)
		if err != nil {
			return err
		}
		return printCuenta(c.stdout, c.asJSON, api.NewCuentaBody(cu, time.Now()), nil)
	}
	l, err := store.New(db, store.Config{Table: cfg.Table})
	if err != nil {
		return err
	}
	antes, despues, err := l.Administrar(ctx, c.id, c.change)
	if err != nil {
		return err
	}
	after := api.NewCuentaBody(despues, time.Now())
	return printCuenta(c.stdout, c.asJSON, api.NewCuentaBody(antes, time.Now()), &after)
}

// change is what the flags do to the account: its overdraft limit, then its freeze.
func (c *cuentaCmd) change(cu cuenta.Cuenta) (cuenta.Cuenta, error) {
	if c.newLimite != nil {
		var err error
		if cu, err = cu.ConLimite(*c.newLimite); err != nil {
			return cu, err
		}
	}
	cu.Bloqueada = (cu.Bloqueada || c.bloquear) && !c.desbloquear
	return cu, nil
}

// printCuenta prints an account, or an account before and after a change.
func printCuenta(w io.Writer, asJSON bool, c api.CuentaBody, after *api.CuentaBody) error {
	if asJSON {
		var doc any = c
		if after != nil {
			doc = cuentaChange{Antes: c, Despues: *after}
		}
		return json.NewEncoder(w).Encode(doc)
	}
	if after == nil {
		fmt.Fprintf(w, "cuenta       %s\nsaldo        %s %s\nretenido     %s\ndisponible   %s\nlimite       %s\nbloqueada    %v\nmovimientos  %d\nversion      %d\nactualizada  %s\n",
			c.Cuenta, c.Saldo, c.Moneda, c.Retenido, c.Disponible, c.Limite, c.Bloqueada, c.Movimientos, c.Version, c.Actualizada)
		return nil
	}
	if after.Version == c.Version {
		fmt.Fprintf(w, "cuenta %s unchanged: limite %s, bloqueada %v (version %d)\n", c.Cuenta, c.Limite, c.Bloqueada, c.Version)
		return nil
	}
	fmt.Fprintf(w, "cuenta %s (%s)\n  limite     %s → %s\n  bloqueada  %v → %v\n  version    %d → %d\n",
		c.Cuenta, c.Moneda, c.Limite, after.Limite, c.Bloqueada, after.Bloqueada, c.Version, after.Version)
	return nil
}
