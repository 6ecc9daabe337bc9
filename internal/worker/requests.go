package worker

import (
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/ledger-dev/ledger/internal/consumer"
)

// attributesInput asks SQS for what Run checks before it consumes: the queue's ARN (the
// event source the parker compares), its visibility timeout and its redrive policy.
func attributesInput(queueURL string) *sqs.GetQueueAttributesInput {
	return &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(queueURL),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn, types.QueueAttributeNameVisibilityTimeout,
			types.QueueAttributeNameRedrivePolicy},
	}
}

// receiveInput is one long-polling ReceiveMessage of at most consumer.MaxBatch messages, with
// all their attributes, as Lambda hands them over: the parker carries them to the DLQ.
// SQS waits whole seconds, at most MaxWait.
func receiveInput(queueURL string, wait time.Duration) *sqs.ReceiveMessageInput {
	return &sqs.ReceiveMessageInput{
		QueueUrl:                    aws.String(queueURL),
		MaxNumberOfMessages:         consumer.MaxBatch,
		WaitTimeSeconds:             int32(wait / time.Second),
		MessageAttributeNames:       []string{"All"},
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
	}
}

// deleteInput is one DeleteMessageBatch for msgs (at most consumer.MaxBatch, SQS's limit per
// call); each entry's Id is its index, unique within the call as SQS requires.
func deleteInput(queueURL string, msgs []types.Message) *sqs.DeleteMessageBatchInput {
	entries := make([]types.DeleteMessageBatchRequestEntry, len(msgs))
	for i, m := range msgs {
		entries[i] = types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: m.ReceiptHandle}
	}
	return &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(queueURL), Entries: entries}
}

// releaseInput is one ChangeMessageVisibilityBatch that makes msgs (at most consumer.MaxBatch)
// visible again after delay, in whole seconds, instead of the queue's visibility
// timeout; entry Ids are indexes, as in deleteInput.
func releaseInput(queueURL string, msgs []types.Message, delay time.Duration) *sqs.ChangeMessageVisibilityBatchInput {
	entries := make([]types.ChangeMessageVisibilityBatchRequestEntry, len(msgs))
	for i, m := range msgs {
		entries[i] = types.ChangeMessageVisibilityBatchRequestEntry{
			Id: aws.String(strconv.Itoa(i)), ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: int32(delay / time.Second),
		}
	}
	return &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: aws.String(queueURL), Entries: entries}
}
