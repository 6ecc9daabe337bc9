package ledger

// TEMPORARY shim until the API branch lands with the real Reader.

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/ledger-dev/ledger/internal/cuenta"
)

var ErrNotFound = errors.New("ledger: not found")

type Reader struct {
	db    *dynamodb.Client
	table string
}

func NewReader(db *dynamodb.Client, table string) *Reader { return &Reader{db: db, table: table} }

func (r *Reader) Cuenta(ctx context.Context, id string) (cuenta.Cuenta, error) {
	out, err := r.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(r.table), Key: cuentaKey(id), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return cuenta.Cuenta{}, err
	}
	c, ok, err := decodeCuenta(out.Item)
	if !ok && err == nil {
		return c, ErrNotFound
	}
	return c, err
}
