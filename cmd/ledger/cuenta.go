package main

import (
	"context"
	"encoding/json"
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

func runCuenta(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("cuenta", helpText{synopsis: "CUENTA [--limite IMPORTE] [--bloquear | --desbloquear] [--endpoint URL] [--table T] [--json]", example: `
ledger cuenta ES7620770024003102575766
ledger cuenta ES7620770024003102575766 --limite 500.00 --endpoint http://127.0.0.1:5000
ledger cuenta ES7620770024003102575766 --bloquear --json`}, stdout, stderr)
	limite := fs.String("limite", "", "set the allowed overdraft: a decimal ≥ 0 with at most the currency's decimals (any in a currency since withdrawn)")
	bloquear := fs.Bool("bloquear", false, "freeze the account: no new debit or hold is applied until it is unfrozen (credits, captures of earlier holds and releases are)")
	desbloquear := fs.Bool("desbloquear", false, "unfreeze the account")
	endpoint := fs.String("endpoint", "", "DynamoDB endpoint URL (default: AWS, or AWS_ENDPOINT_URL_DYNAMODB)")
	table := fs.String("table", "", "ledger table name (default: $LEDGER_TABLE, else ledger)")
	asJSON := fs.Bool("json", false, "print the account (before and after a change) as JSON on stdout")
	// The account may come before, among or after the flags; flags after it are read
	// too, and an argument after it is the stray one named.
	id := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		id, args = args[0], args[1:]
	}
	code, ok := fs.parse(args, len(args))
	switch {
	case ok && id == "" && fs.NArg() > 0:
		id = fs.Arg(0)
		code, ok = fs.parse(fs.Args()[1:], 0)
	case ok && fs.NArg() > 0:
		code, ok = fs.usageError("unexpected argument %q", fs.Arg(0)), false
	}
	if !ok {
		return code
	}
	if id == "" {
		return fs.usageError("give the account: ledger cuenta CUENTA")
	}
	var newLimite *decimal.Decimal
	if fs.given("limite") {
		d, err := decimal.NewFromString(*limite)
		if err != nil || !movimiento.IsPlainDecimal(*limite) {
			return fs.usageError("--limite must be a decimal ≥ 0 in plain notation such as 500.00, not %q", *limite)
		}
		newLimite = &d
	}
	if *bloquear && *desbloquear {
		return fs.usageError("give --bloquear or --desbloquear, not both")
	}
	cfg, _, db, code := fs.openTable(ctx, *table, *endpoint, checkTable)
	if code != 0 {
		return code
	}
	ctx, cancel := context.WithTimeout(ctx, cuentaTimeout)
	defer cancel()
	if newLimite == nil && !*bloquear && !*desbloquear {
		c, err := store.NewReader(db, cfg.Table).Cuenta(ctx, id)
		if err != nil {
			return fs.fail(err)
		}
		return printCuenta(fs, stdout, *asJSON, api.NewCuentaBody(c, time.Now()), nil)
	}
	l, err := store.New(db, store.Config{Table: cfg.Table})
	if err != nil {
		return fs.fail(err)
	}
	antes, despues, err := l.Administrar(ctx, id, func(c cuenta.Cuenta) (cuenta.Cuenta, error) {
		if newLimite != nil {
			var err error
			if c, err = c.ConLimite(*newLimite); err != nil {
				return c, err
			}
		}
		c.Bloqueada = (c.Bloqueada || *bloquear) && !*desbloquear
		return c, nil
	})
	if err != nil {
		return fs.fail(err)
	}
	after := api.NewCuentaBody(despues, time.Now())
	return printCuenta(fs, stdout, *asJSON, api.NewCuentaBody(antes, time.Now()), &after)
}

// printCuenta prints an account, or an account before and after a change.
func printCuenta(fs *flags, w io.Writer, asJSON bool, c api.CuentaBody, after *api.CuentaBody) int {
	if asJSON {
		var doc any = c
		if after != nil {
			doc = cuentaChange{Antes: c, Despues: *after}
		}
		if err := json.NewEncoder(w).Encode(doc); err != nil {
			return fs.fail(err)
		}
		return 0
	}
	if after == nil {
		fmt.Fprintf(w, "cuenta       %s\nsaldo        %s %s\nretenido     %s\ndisponible   %s\nlimite       %s\nbloqueada    %v\nmovimientos  %d\nversion      %d\nactualizada  %s\n",
			c.Cuenta, c.Saldo, c.Moneda, c.Retenido, c.Disponible, c.Limite, c.Bloqueada, c.Movimientos, c.Version, c.Actualizada)
		return 0
	}
	if after.Version == c.Version {
		fmt.Fprintf(w, "cuenta %s unchanged: limite %s, bloqueada %v (version %d)\n", c.Cuenta, c.Limite, c.Bloqueada, c.Version)
		return 0
	}
	fmt.Fprintf(w, "cuenta %s (%s)\n  limite     %s → %s\n  bloqueada  %v → %v\n  version    %d → %d\n",
		c.Cuenta, c.Moneda, c.Limite, after.Limite, c.Bloqueada, after.Bloqueada, c.Version, after.Version)
	return 0
}
