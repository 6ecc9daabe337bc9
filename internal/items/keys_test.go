package items

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"pgregory.net/rapid"

	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/versioned"
)

// Key safety: the table holds every account in one key space, so a (cuenta, id) that
// could spell another account's key, or an account item's, would let one movement
// overwrite or shadow another's record. These properties show the key builders are
// injective over what movimiento accepts, and that movimiento refuses the separator.

// keyParts are fragments that spell the layout's own prefixes, so that drawn strings
// try hard to collide.
var keyParts = []string{"CUENTA", "CUENTA#", "MOV", "MOV#", "#", "x", "/", ":", "-", "."}

// adversarial draws strings built from the layout's fragments, Unicode look-alikes
// and anything else rapid finds.
func adversarial() *rapid.Generator[string] {
	return rapid.OneOf(
		rapid.Custom(func(t *rapid.T) string {
			return strings.Join(rapid.SliceOfN(rapid.SampledFrom(keyParts), 1, 6).Draw(t, "parts"), "")
		}),
		rapid.SampledFrom([]string{"MOV#x", "CUENTA#x", "x#MOV#y", "p\u0430go", "ES\uff17\uff16", "a\u200db", "ES\u202e76", "CUENTA"}),
		rapid.String(),
	)
}

// valid draws ids or cuentas movimiento accepts, leaning towards the layout's words.
func valid(charset string, maxLen int) *rapid.Generator[string] {
	return rapid.OneOf(
		rapid.StringMatching(`[`+charset+`]{1,`+strconv.Itoa(maxLen)+`}`),
		rapid.SampledFrom([]string{"CUENTA", "MOV", "MOV-x", "CUENTA.MOV", "x"}),
	)
}

const (
	idCharset     = `A-Za-z0-9._:/@+=\-`
	cuentaCharset = `A-Za-z0-9._\-`
)

// build returns the movement movimiento makes of (cuenta, id), or its error.
func build(cuenta, id string) (movimiento.Movimiento, error) {
	return movimiento.New(movimiento.Datos{ID: id, Cuenta: cuenta, Tipo: movimiento.Abono, Importe: "1.00", Moneda: "EUR"})
}

func keyOf(item versioned.Item) [2]string {
	return [2]string{item[AttrPK].(*types.AttributeValueMemberS).Value, item[AttrSK].(*types.AttributeValueMemberS).Value}
}

func TestAcceptedIDsNeverCarryTheSeparator(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cuenta := rapid.OneOf(adversarial(), valid(cuentaCharset, 64)).Draw(t, "cuenta")
		id := rapid.OneOf(adversarial(), valid(idCharset, 128)).Draw(t, "id")
		m, err := build(cuenta, id)
		if err != nil {
			var fe *movimiento.FieldError
			if !errors.Is(err, movimiento.ErrInvalid) || !errors.As(err, &fe) || fe.Field != "id" && fe.Field != "cuenta" {
				t.Fatalf("(%q, %q) refused with %v, want an id or cuenta *FieldError", cuenta, id, err)
			}
			return
		}
		if strings.Contains(m.Cuenta, "#") || strings.Contains(m.ID, "#") {
			t.Fatalf("movimiento accepted the key separator: (%q, %q)", m.Cuenta, m.ID)
		}
		a := movimiento.Apunte{Movimiento: m, Huella: m.Huella(), Estado: movimiento.Aplicado, Seq: 1}
		item, err := EncodeApunte(a)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := keyOf(item), keyOf(MovKey(m.Cuenta, m.ID)); got != want {
			t.Fatalf("the movement item is keyed %v, MovKey says %v", got, want)
		}
	})
}

func TestKeysOfDifferentMovementsAndAccountsNeverCollide(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c1 := valid(cuentaCharset, 64).Draw(t, "cuenta1")
		id1 := valid(idCharset, 128).Draw(t, "id1")
		c2 := rapid.OneOf(rapid.Just(c1), valid(cuentaCharset, 64)).Draw(t, "cuenta2")
		id2 := rapid.OneOf(rapid.Just(id1), valid(idCharset, 128)).Draw(t, "id2")
		for _, p := range [][2]string{{c1, id1}, {c2, id2}} {
			if _, err := build(p[0], p[1]); err != nil {
				t.Fatalf("generator drew an invalid pair %q: %v", p, err)
			}
		}
		mov1, mov2 := keyOf(MovKey(c1, id1)), keyOf(MovKey(c2, id2))
		acct1, acct2 := keyOf(CuentaKey(c1)), keyOf(CuentaKey(c2))
		if (mov1 == mov2) != (c1 == c2 && id1 == id2) {
			t.Fatalf("MovKey(%q, %q) = %v and MovKey(%q, %q) = %v", c1, id1, mov1, c2, id2, mov2)
		}
		if (acct1 == acct2) != (c1 == c2) {
			t.Fatalf("CuentaKey(%q) = %v and CuentaKey(%q) = %v", c1, acct1, c2, acct2)
		}
		for _, acct := range [][2]string{acct1, acct2} {
			if mov1 == acct || mov2 == acct {
				t.Fatalf("a movement key equals an account key: %v", acct)
			}
		}
		if acct1[0] != mov1[0] {
			t.Fatalf("movement %v is not in its account's partition %v", mov1, acct1)
		}
	})
}
