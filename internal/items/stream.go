package items

import (
	"encoding/json"
	"fmt"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"github.com/ledger-dev/ledger/internal/versioned"
)

// FromStream is an item image of a DynamoDB stream record, as Lambda hands it to a
// function, in the SDK's representation, so that DecodeCuenta and DecodeApunte read it
// as they read a GetItem. A nil image (none in the record) is a nil item. The image
// goes through DynamoDB's JSON, the form Lambda delivered it in, so numbers keep their
// exact text. An image that does not make an item is an error.
func FromStream(image map[string]events.DynamoDBAttributeValue) (versioned.Item, error) {
	if image == nil {
		return nil, nil
	}
	raw, err := json.Marshal(image)
	if err != nil {
		return nil, fmt.Errorf("items: stream image: %w", err)
	}
	item, err := attributevalue.UnmarshalMapJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("items: stream image: %w", err)
	}
	return item, nil
}

// ToStream is item as a stream record carries it to Lambda, FromStream's inverse: for
// what hands the events handler a record where no Lambda does (the embedded store's
// writes, a stream read through its API). A nil item is a nil image.
func ToStream(item versioned.Item) (map[string]events.DynamoDBAttributeValue, error) {
	if item == nil {
		return nil, nil
	}
	raw, err := attributevalue.MarshalMapJSON(item)
	if err != nil {
		return nil, fmt.Errorf("items: stream image: %w", err)
	}
	var image map[string]events.DynamoDBAttributeValue
	if err := json.Unmarshal(raw, &image); err != nil {
		return nil, fmt.Errorf("items: stream image: %w", err)
	}
	return image, nil
}
