package app_test

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

// policyOf is the policy document of the one resource of type typ (an
// AWS::SQS::QueuePolicy or AWS::SNS::TopicPolicy) whose list under key names target.
func policyOf(t *testing.T, res map[string]Resource, typ, key, target string) any {
	t.Helper()
	var docs []any
	for _, id := range ofType(res, typ) {
		if slices.Contains(Strings(res[id].Properties[key]), target) {
			docs = append(docs, res[id].Properties["PolicyDocument"])
		}
	}
	if len(docs) != 1 {
		t.Fatalf("%d %s name %s, want one", len(docs), typ, target)
	}
	return docs[0]
}

// stackAccount is the account the test stacks are deployed in: its principals are let
// in by their own IAM policies unless a resource policy denies them.
const stackAccount = "111122223333"

// allowed is IAM's decision on c under a resource policy's verdict v, for a caller whose
// own IAM policy allows the action: a Deny wins; a principal of the stack's account
// (the stack's own roles included) needs nothing more; any other needs the resource
// policy's Allow.
func allowed(v Verdict, c Call) bool {
	switch {
	case v.Denied:
		return false
	case v.Allowed:
		return true
	}
	return !c.Service && (strings.Contains(c.Principal, ":"+stackAccount+":") || strings.HasPrefix(c.Principal, "!GetAtt ")) // the stack's own roles too
}

// producerCase is a call and whether IAM lets it through.
type producerCase struct {
	name    string
	c       Call
	allowed bool
}

// withoutTLS is c made over plain HTTP.
func withoutTLS(c Call) Call {
	c.Context = maps.Clone(c.Context)
	c.Context["aws:SecureTransport"] = "false"
	return c
}

// judge fails t for each case the policy doc decides otherwise; a call is made over
// TLS unless its case says otherwise (withoutTLS).
func judge(t *testing.T, what string, doc any, cases []producerCase) {
	t.Helper()
	for _, tc := range cases {
		if _, set := tc.c.Context["aws:SecureTransport"]; !set {
			tc.c.Context["aws:SecureTransport"] = "true"
		}
		v, err := Judge(doc, tc.c)
		if err != nil {
			t.Fatalf("%s: %s: %v", what, tc.name, err)
		}
		if got := allowed(v, tc.c); got != tc.allowed {
			t.Errorf("%s: %s: allowed %v (%+v), want %v", what, tc.name, got, v, tc.allowed)
		}
	}
}

// Only the listed producers move money: the queue takes sqs:SendMessage from
// ProducerPrincipals (any account, patterns allowed), the stack's topic and its rule,
// and denies it to every other principal, its own account's included, while its
// administrators keep managing it; the topic takes sns:Publish from the same list only;
// nothing is taken without TLS. Without producers, topic or rule, no one sends.
func TestOnlyProducersMoveMoney(t *testing.T) {
	tpl := load(t)
	const (
		orders  = "arn:aws:iam::" + stackAccount + ":role/orders"
		partner = "arn:aws:iam::444455556666:role/partner-eu"
		reports = "arn:aws:iam::" + stackAccount + ":role/reports"
		admin   = "arn:aws:iam::" + stackAccount + ":role/admin"
	)
	_, res := deployed(t, tpl, map[string]any{"CreateTopic": "true", "EventSources": "shop.orders",
		"ProducerPrincipals": orders + ",arn:aws:iam::444455556666:role/partner-*"})
	const queue, dlq, topic, rule = "!GetAtt MovementsQueue.Arn", "!GetAtt DeadLetterQueue.Arn", "!Ref MovementsTopic", "!GetAtt MovementsRule.Arn"
	send := func(principal string) Call {
		return Call{Principal: principal, Action: "sqs:SendMessage", Resource: queue, Context: map[string]string{}}
	}
	from := func(service, source, resource string) Call {
		return Call{Principal: service, Service: true, Action: "sqs:SendMessage", Resource: resource, Context: map[string]string{"aws:SourceArn": source}}
	}
	manage := send(admin)
	manage.Action = "sqs:SetQueueAttributes"
	judge(t, "the queue", policyOf(t, res, "AWS::SQS::QueuePolicy", "Queues", "!Ref MovementsQueue"), []producerCase{
		{"a listed role", send(orders), true},
		{"a listed pattern's role of another account", send(partner), true},
		{"another role of the account", send(reports), false},
		{"an administrator", send(admin), false},
		{"the stack's topic", from("sns.amazonaws.com", topic, queue), true},
		{"the stack's rule", from("events.amazonaws.com", rule, queue), true},
		{"another topic", from("sns.amazonaws.com", "arn:aws:sns:eu-west-1:"+stackAccount+":other", queue), false},
		{"another account's rule", from("events.amazonaws.com", "arn:aws:events:eu-west-1:444455556666:rule/r", queue), false},
		{"a listed role, without TLS", withoutTLS(send(orders)), false},
		{"an administrator managing it", manage, true},
	})
	park := func(principal string) Call {
		return Call{Principal: principal, Action: "sqs:SendMessage", Resource: dlq, Context: map[string]string{}}
	}
	judge(t, "the DLQ", policyOf(t, res, "AWS::SQS::QueuePolicy", "Queues", "!Ref DeadLetterQueue"), []producerCase{
		{"the stack's topic parking", from("sns.amazonaws.com", topic, dlq), true},
		{"the stack's rule parking", from("events.amazonaws.com", rule, dlq), true},
		{"the consumer parking", park("!GetAtt ConsumerRole.Arn"), true},
		{"a listed role", park(orders), true},
		{"another role of the account", park(reports), false},
		{"another topic", from("sns.amazonaws.com", "arn:aws:sns:eu-west-1:"+stackAccount+":other", dlq), false},
	})
	publish := func(principal string) Call {
		return Call{Principal: principal, Action: "sns:Publish", Resource: topic, Context: map[string]string{}}
	}
	judge(t, "the topic", policyOf(t, res, "AWS::SNS::TopicPolicy", "Topics", topic), []producerCase{
		{"a listed role", publish(orders), true},
		{"a listed pattern's role of another account", publish(partner), true},
		{"another role of the account", publish(reports), false},
		{"a listed role, without TLS", withoutTLS(publish(orders)), false},
	})

	_, res = deployed(t, tpl, map[string]any{})
	judge(t, "the queue without producers, topic or rule", policyOf(t, res, "AWS::SQS::QueuePolicy", "Queues", "!Ref MovementsQueue"), []producerCase{
		{"a role of the account", send(orders), false},
		{"another topic", from("sns.amazonaws.com", "arn:aws:sns:eu-west-1:"+stackAccount+":other", queue), false},
		{"an administrator managing it", manage, true},
	})
}

// The EventSources rule sends the events of those sources only, whole, to the queue,
// and what the queue refuses to the DLQ; without sources there is no rule.
func TestTheRuleTakesOnlyTheAllowedSources(t *testing.T) {
	tpl := load(t)
	_, res := deployed(t, tpl, map[string]any{"EventSources": "shop.orders,billing", "MovementsEventBus": "payments"})
	rules := ofType(res, "AWS::Events::Rule")
	if len(rules) != 1 {
		t.Fatalf("rules %v, want one", rules)
	}
	r := res[rules[0]].Properties
	if got := Strings(get(r, "EventPattern", "source")); !slices.Equal(got, []string{"shop.orders", "billing"}) || len(mapping(r["EventPattern"])) != 2 ||
		!slices.Equal(Strings(get(r, "EventPattern", "account")), []string{"!Ref AWS::AccountId"}) {
		t.Errorf("event pattern %v, want the sources allowed, of the stack's account, nothing else", r["EventPattern"])
	}
	alarms := watched(t, res, "")
	if _, ok := alarms[watch{"AWS/Events", "FailedInvocations", "EventBusName=payments RuleName=" + Symbol(r["Name"])}]; !ok {
		t.Errorf("no alarm on the rule's FailedInvocations by its bus and name (%v)", r["Name"])
	}
	if r["EventBusName"] != "payments" {
		t.Errorf("bus %v, want MovementsEventBus", r["EventBusName"])
	}
	targets := asList(r["Targets"])
	if len(targets) != 1 || Symbol(get(targets[0], "Arn")) != "!GetAtt MovementsQueue.Arn" ||
		Symbol(get(targets[0], "DeadLetterConfig", "Arn")) != "!GetAtt DeadLetterQueue.Arn" ||
		get(targets[0], "InputPath") != nil || get(targets[0], "InputTransformer") != nil {
		t.Errorf("targets %v, want the whole event to the queue, the DLQ for what it refuses", targets)
	}
	if _, res := deployed(t, tpl, map[string]any{}); len(ofType(res, "AWS::Events::Rule")) != 0 {
		t.Error("a rule without EventSources")
	}
}
