package audit

import (
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ledger-dev/ledger/internal/versioned"
)

func TestCheckPageStopsOnlyAKeyAnsweredTwiceInARow(t *testing.T) {
	key := func(sk string) versioned.Item {
		return versioned.Item{"pk": &types.AttributeValueMemberS{Value: "CUENTA#X"}, "sk": &types.AttributeValueMemberS{Value: sk}}
	}
	for _, tc := range []struct {
		name       string
		prev, next versioned.Item
		repeated   bool
	}{
		{"first page, more to come", nil, key("MOV#1"), false},
		{"first page, the last", nil, nil, false},
		{"next page", key("MOV#1"), key("MOV#2"), false},
		{"last page", key("MOV#1"), nil, false},
		{"same key again", key("MOV#1"), key("MOV#1"), true},
	} {
		if err := CheckPage(tc.prev, tc.next); errors.Is(err, ErrPageRepeated) != tc.repeated {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}
