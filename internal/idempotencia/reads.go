package idempotencia

import (
	"context"

	"github.com/shopspring/decimal"
)

// Saldo reads an account's balance and applied-movement count (strongly consistent);
// ok is false when the account does not exist. It is how the comparison and the tests
// check the baseline's balances.
func (s *Service) Saldo(ctx context.Context, cuenta string) (saldo decimal.Decimal, movimientos int64, ok bool, err error) {
	out, err := s.db.GetItem(ctx, getInput(s.cfg.Accounts, accountKey(cuenta)))
	if v := classify(err); v.kind != done {
		return decimal.Zero, 0, false, v.err
	}
	a, err := decodeAccount(out.Item)
	if err != nil || out.Item == nil {
		return decimal.Zero, 0, false, err
	}
	return a.Saldo.Decimal, a.Movimientos, true, nil
}
