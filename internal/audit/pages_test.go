package audit

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ledger-dev/ledger/internal/items"
)

func TestAuditReadsAreStronglyConsistentAndCoverEverySegment(t *testing.T) {
	for _, pageSize := range []int32{0, 25} {
		for seg := range 4 {
			in := scanInput("ledger", seg, 4, pageSize)
			if aws.ToString(in.TableName) != "ledger" || !aws.ToBool(in.ConsistentRead) || aws.ToInt32(in.Segment) != int32(seg) || aws.ToInt32(in.TotalSegments) != 4 {
				t.Errorf("segment %d of 4: %+v", seg, in)
			}
			if (in.Limit == nil) != (pageSize == 0) || (in.Limit != nil && *in.Limit != pageSize) {
				t.Errorf("page size %d: Limit %v", pageSize, in.Limit)
			}
		}
	}
	in := rereadInput("ledger", "ES76")
	pk, _ := in.ExpressionAttributeValues[":pk"].(*types.AttributeValueMemberS)
	if !aws.ToBool(in.ConsistentRead) || pk == nil || pk.Value != items.CuentaPK+"ES76" || aws.ToString(in.TableName) != "ledger" {
		t.Errorf("reread of ES76: %+v", in)
	}
}

// endless answers every Scan and Query with one page and the same LastEvaluatedKey, as
// a misbehaving backend might; past 100 calls it fails them, so a regression fails fast.
type endless struct{ calls int }

var errStillPaging = errors.New("still paging after 100 calls")

var sameKey = map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "CUENTA#X"}, "sk": &types.AttributeValueMemberS{Value: "MOV#1"}}

func (e *endless) Scan(context.Context, *dynamodb.ScanInput, ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	if e.calls++; e.calls > 100 {
		return nil, errStillPaging
	}
	return &dynamodb.ScanOutput{LastEvaluatedKey: sameKey}, nil
}

func (e *endless) Query(context.Context, *dynamodb.QueryInput, ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	if e.calls++; e.calls > 100 {
		return nil, errStillPaging
	}
	return &dynamodb.QueryOutput{LastEvaluatedKey: sameKey}, nil
}

func (e *endless) GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	return &dynamodb.GetItemOutput{}, nil
}

// A backend that answers the same page again would keep the audit paging forever: it
// stops with an error instead, after the repeat.
func TestAuditStopsOnAPageAnsweredTwice(t *testing.T) {
	db := &endless{}
	if _, err := Run(context.Background(), db, "ledger", Options{Segments: 1}); !errors.Is(err, ErrPageRepeated) || db.calls != 2 {
		t.Errorf("audit: %v after %d scans; want it stopped at the repeat", err, db.calls)
	}
	db = &endless{}
	if _, err := reread(context.Background(), db, "ledger", "X"); !errors.Is(err, ErrPageRepeated) || db.calls != 2 {
		t.Errorf("reread: %v after %d queries; want it stopped at the repeat", err, db.calls)
	}
}
