package app_test

import (
	"strings"
	"testing"
)

// sqsQueueNameMax is SQS's limit on a queue's name, ".fifo" included.
const sqsQueueNameMax = 80

// fifoProperties are what makes a queue or a topic FIFO, as the stack sets them:
// explicit deduplication ids, and the high-throughput mode (deduplication and quota per
// message group).
var fifoProperties = map[string]map[string]any{
	"AWS::SQS::Queue": {"FifoQueue": true, "ContentBasedDeduplication": false, "DeduplicationScope": "messageGroup", "FifoThroughputLimit": "perMessageGroupId"},
	"AWS::SNS::Topic": {"FifoTopic": true, "ContentBasedDeduplication": false, "FifoThroughputScope": "MessageGroup"},
}

// stackIDLen is the length of the UUID that ends a stack's id, which names the queues.
const stackIDLen = 36

// subName is the text a !Sub name makes, its ${Suffix} variable filled in and ${Id} (the
// stack id's UUID) left as it is; "" for no name.
func subName(name any) string {
	if s, ok := get(name, "Fn::Sub").(string); ok {
		return s
	}
	args, _ := get(name, "Fn::Sub").([]any)
	if len(args) != 2 {
		return ""
	}
	text, _ := args[0].(string)
	suffix, _ := get(args[1], "Suffix").(string)
	return strings.ReplaceAll(text, "${Suffix}", suffix)
}

// nameProperty is the property that names a queue or a topic.
var nameProperty = map[string]string{"AWS::SQS::Queue": "QueueName", "AWS::SNS::Topic": "TopicName"}

// QueueType=fifo makes the movements queue, its DLQ and the topic (where it is created)
// FIFO, with names CloudFormation cannot generate for them (they must end in .fifo);
// standard leaves all three standard, their names generated but the queue's (the DLQ's
// RedriveAllowPolicy names it). Either way the DLQ is the
// queue's redrive target and the consumer's parking place, of the queue's own kind.
func TestQueueTypeMakesTheQueuesAndTopicFIFO(t *testing.T) {
	tpl := load(t)
	if p := tpl.Parameters["QueueType"]; p.Default != "standard" || len(p.AllowedValues) != 2 {
		t.Errorf("QueueType = %+v, want standard by default, standard or fifo", p)
	}
	for _, kind := range []string{"standard", "fifo"} {
		_, res := deployed(t, tpl, map[string]any{"QueueType": kind, "CreateTopic": "true"})
		_, fn := function(t, res, consumerCode)
		queue := target(sqsEvent(t, fn)["Queue"])
		dlq := target(get(res[queue].Properties, "RedrivePolicy", "deadLetterTargetArn"))
		topics := ofType(res, "AWS::SNS::Topic")
		if len(topics) != 1 || dlq == "" || Symbol(get(fn.Properties, "Environment", "Variables", "LEDGER_DLQ_URL")) != "!Ref "+dlq {
			t.Fatalf("QueueType=%s: topics %v, DLQ %q; want one topic, and the queue's DLQ the consumer's parking place", kind, topics, dlq)
		}
		names := map[string]bool{}
		for _, id := range []string{queue, dlq, topics[0]} {
			r := res[id]
			for prop, want := range fifoProperties[r.Type] {
				got, set := r.Properties[prop]
				if kind == "fifo" && got != want || kind == "standard" && set {
					t.Errorf("QueueType=%s: %s.%s = %v (set %v), want %v only for fifo", kind, id, prop, got, set, want)
				}
			}
			name, named := r.Properties[nameProperty[r.Type]]
			sub := subName(name)
			switch {
			case kind == "standard" && named && id != queue:
				t.Errorf("QueueType=standard: %s is named %s, want a generated name", id, Symbol(name))
			case kind == "fifo" && (!strings.HasSuffix(sub, ".fifo") || names[r.Type+sub]):
				t.Errorf("QueueType=fifo: %s is named %s, want ….fifo, unique among its kind", id, Symbol(name))
			case named && len(strings.ReplaceAll(sub, "${Id}", strings.Repeat("x", stackIDLen))) > sqsQueueNameMax:
				t.Errorf("%s's name %s is longer than SQS's %d", id, sub, sqsQueueNameMax)
			}
			names[r.Type+sub] = true
		}
	}
}
