package app_test

import (
	"reflect"
	"strings"
	"testing"
)

const small = `
Parameters:
  Mode:
    Type: String
    Default: a
    AllowedValues: [a, b]
  Size:
    Type: Number
    Default: 5
    MaxValue: 9
  Bare:
    Type: String
  Cap:
    Type: String
    Default: none
    AllowedPattern: "none|[1-9][0-9]*"
Conditions:
  IsA: !Equals [!Ref Mode, a]
  NotA: !Not [!Condition IsA]
  Both: !And [!Condition IsA, !Equals ["5", !Ref Size]]
Resources:
  Q:
    Type: AWS::SQS::Queue
    Properties:
      VisibilityTimeout: !Ref Size
      Tags: !If [IsA, [{Key: k, Value: !Sub "${AWS::StackName}-x"}], !Ref AWS::NoValue]
      Maybe: !If [NotA, 1, !Ref AWS::NoValue]
  OnlyB:
    Type: AWS::SNS::Topic
    Condition: NotA
  R:
    Type: AWS::IAM::Role
    Properties:
      Policies:
        - PolicyName: p
          PolicyDocument:
            Statement:
              - Effect: Allow
                Action: [sqs:SendMessage, sqs:GetQueueAttributes]
                Resource: !GetAtt Q.Arn
  RP:
    Type: AWS::IAM::RolePolicy
    Condition: NotA
    Properties:
      RoleName: !Ref R
      PolicyDocument:
        Statement:
          - Effect: Allow
            Action: sns:Publish
            Resource: !Ref OnlyB
Outputs:
  TopicArn:
    Condition: NotA
    Value: !Ref OnlyB
  QueueUrl:
    Value: !Ref Q
`

func TestShortFormsBecomeLongForms(t *testing.T) {
	tpl, err := Parse([]byte(small))
	if err != nil {
		t.Fatal(err)
	}
	q := tpl.Resources["Q"].Properties
	if got, want := q["VisibilityTimeout"], map[string]any{"Ref": "Size"}; !reflect.DeepEqual(got, want) {
		t.Errorf("!Ref = %#v, want %#v", got, want)
	}
	tags := q["Tags"].(map[string]any)["Fn::If"].([]any)
	if tags[0] != "IsA" || !reflect.DeepEqual(tags[2], map[string]any{"Ref": "AWS::NoValue"}) {
		t.Errorf("!If = %#v", tags)
	}
	sub := tags[1].([]any)[0].(map[string]any)["Value"]
	if !reflect.DeepEqual(sub, map[string]any{"Fn::Sub": "${AWS::StackName}-x"}) {
		t.Errorf("!Sub = %#v", sub)
	}
	res := tpl.Resources["R"].Properties["Policies"].([]any)[0].(map[string]any)["PolicyDocument"].(map[string]any)["Statement"].([]any)[0].(map[string]any)["Resource"]
	if !reflect.DeepEqual(res, map[string]any{"Fn::GetAtt": []any{"Q", "Arn"}}) {
		t.Errorf("!GetAtt = %#v, want the resource and attribute split", res)
	}
	if got := tpl.Conditions["NotA"]; !reflect.DeepEqual(got, map[string]any{"Fn::Not": []any{map[string]any{"Condition": "IsA"}}}) {
		t.Errorf("!Not [!Condition] = %#v", got)
	}
	if p := tpl.Parameters["Size"]; p.Default != 5 || p.MaxValue == nil || *p.MaxValue != 9 {
		t.Errorf("Size = %+v, want default 5 and MaxValue 9", p)
	}
}

func TestEnvDecidesConditionsAndDropsWhatIsNotThere(t *testing.T) {
	tpl, err := Parse([]byte(small))
	if err != nil {
		t.Fatal(err)
	}
	a, err := tpl.Env(map[string]any{"Bare": "x"})
	if err != nil {
		t.Fatal(err)
	}
	if !a.Conditions["IsA"] || a.Conditions["NotA"] || !a.Conditions["Both"] {
		t.Errorf("conditions under defaults = %v, want IsA and Both only", a.Conditions)
	}
	res, err := a.Resources()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := res["OnlyB"]; ok {
		t.Error("OnlyB exists although its condition is false")
	}
	q := res["Q"].Properties
	if q["VisibilityTimeout"] != 5 {
		t.Errorf("VisibilityTimeout = %#v, want the parameter's default 5", q["VisibilityTimeout"])
	}
	if _, ok := q["Maybe"]; ok {
		t.Error("a property resolving to AWS::NoValue is still there")
	}
	if got := Symbol(q["Tags"].([]any)[0].(map[string]any)["Value"]); got != "!Sub ${AWS::StackName}-x" {
		t.Errorf("Fn::Sub stays symbolic, got %s", got)
	}
	out, err := a.Outputs()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := out["TopicArn"]; ok || Symbol(out["QueueUrl"]) != "!Ref Q" {
		t.Errorf("outputs = %v, want QueueUrl only", out)
	}

	b, err := tpl.Env(map[string]any{"Mode": "b", "Bare": "x"})
	if err != nil {
		t.Fatal(err)
	}
	res, err = b.Resources()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := res["OnlyB"]; !ok || res["Q"].Properties["Maybe"] != 1 {
		t.Errorf("under Mode=b: OnlyB present %v, Maybe %v", ok, res["Q"].Properties["Maybe"])
	}
	if _, ok := res["Q"].Properties["Tags"]; ok {
		t.Error("Tags under a false !If with AWS::NoValue is still there")
	}
}

func TestEnvRefusesWhatCloudFormationWould(t *testing.T) {
	tpl, err := Parse([]byte(small))
	if err != nil {
		t.Fatal(err)
	}
	for name, values := range map[string]map[string]any{
		"no value":      {},
		"unknown":       {"Bare": "x", "Nope": 1},
		"not allowed":   {"Bare": "x", "Mode": "c"},
		"allowed wrong": {"Bare": "x", "Mode": "A"},
		"pattern":       {"Bare": "x", "Cap": "0"},
		"pattern part":  {"Bare": "x", "Cap": "none1"},
	} {
		if _, err := tpl.Env(values); err == nil {
			t.Errorf("%s: Env(%v) succeeded", name, values)
		}
	}
}

func TestGrantsCollectInlineAndAttachedPolicies(t *testing.T) {
	tpl, err := Parse([]byte(small))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		mode string
		want []string
	}{
		{"a", []string{"sqs:GetQueueAttributes on !GetAtt Q.Arn", "sqs:SendMessage on !GetAtt Q.Arn"}},
		{"b", []string{"sns:Publish on !Ref OnlyB", "sqs:GetQueueAttributes on !GetAtt Q.Arn", "sqs:SendMessage on !GetAtt Q.Arn"}},
	} {
		e, err := tpl.Env(map[string]any{"Mode": tc.mode, "Bare": "x"})
		if err != nil {
			t.Fatal(err)
		}
		gs, err := e.Grants("R")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, g := range gs {
			got = append(got, g.String())
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Mode=%s: grants = %q, want %q", tc.mode, got, tc.want)
		}
	}
}

func TestGrantsRefuseWhatTheyCannotAccountFor(t *testing.T) {
	cases := map[string]struct{ role, want string }{
		"managed policy": {`ManagedPolicyArns: [arn:aws:iam::aws:policy/service-role/AWSLambdaSQSQueueExecutionRole]
      Policies: []`, "managed policies"},
		"not action": {`Policies:
        - PolicyDocument:
            Statement:
              - {Effect: Allow, NotAction: "s3:*", Resource: "*"}`, "NotAction"},
		"deny": {`Policies:
        - PolicyDocument:
            Statement:
              - {Effect: Deny, Action: "s3:*", Resource: "*"}`, "only Allow"},
		"condition": {`Policies:
        - PolicyDocument:
            Statement:
              - {Effect: Allow, Action: "s3:GetObject", Resource: "*", Condition: {Bool: {aws:SecureTransport: "true"}}}`, "Condition"},
		"item action without leading keys": {`Policies:
        - PolicyDocument:
            Statement:
              - {Effect: Allow, Action: [dynamodb:GetItem], Resource: !GetAtt T.Arn}`, "without a dynamodb:LeadingKeys condition"},
		"leading keys beside another condition": {`Policies:
        - PolicyDocument:
            Statement:
              - Effect: Allow
                Action: dynamodb:GetItem
                Resource: !GetAtt T.Arn
                Condition:
                  ForAllValues:StringLike: {dynamodb:LeadingKeys: ["A#*"]}
                  Bool: {aws:SecureTransport: "true"}`, "not supported"},
		"leading keys under ForAnyValue": {`Policies:
        - PolicyDocument:
            Statement:
              - Effect: Allow
                Action: dynamodb:GetItem
                Resource: !GetAtt T.Arn
                Condition: {ForAnyValue:StringLike: {dynamodb:LeadingKeys: ["A#*"]}}`, "not supported"},
		"leading keys matching anything": {`Policies:
        - PolicyDocument:
            Statement:
              - Effect: Allow
                Action: dynamodb:GetItem
                Resource: !GetAtt T.Arn
                Condition: {ForAllValues:StringLike: {dynamodb:LeadingKeys: "*"}}`, "restricts nothing"},
		"leading keys on a scan": {`Policies:
        - PolicyDocument:
            Statement:
              - Effect: Allow
                Action: [dynamodb:GetItem, dynamodb:Scan]
                Resource: !GetAtt T.Arn
                Condition: {ForAllValues:StringLike: {dynamodb:LeadingKeys: ["A#*"]}}`, "dynamodb:Scan with a dynamodb:LeadingKeys condition"},
		"wildcard table action": {`Policies:
        - PolicyDocument:
            Statement:
              - Effect: Allow
                Action: dynamodb:*Item
                Resource: !GetAtt T.Arn
                Condition: {ForAllValues:StringLike: {dynamodb:LeadingKeys: ["A#*"]}}`, "wildcard"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tpl, err := Parse([]byte("Resources:\n  R:\n    Type: AWS::IAM::Role\n    Properties:\n      " + tc.role + "\n"))
			if err != nil {
				t.Fatal(err)
			}
			e, err := tpl.Env(nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.Grants("R"); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}

// A statement conditioned on dynamodb:LeadingKeys gives its grants the patterns, sorted;
// a table action that names no key (Scan) may be granted without them.
func TestGrantsReadLeadingKeys(t *testing.T) {
	tpl, err := Parse([]byte(`
Resources:
  T:
    Type: AWS::DynamoDB::Table
  R:
    Type: AWS::IAM::Role
    Properties:
      Policies:
        - PolicyDocument:
            Statement:
              - Effect: Allow
                Action: [dynamodb:PutItem, dynamodb:GetItem]
                Resource: !GetAtt T.Arn
                Condition:
                  ForAllValues:StringLike:
                    dynamodb:LeadingKeys: ["MSG#*", "MOV#*"]
              - Effect: Allow
                Action: dynamodb:Query
                Resource: !Sub ${T.Arn}/index/i
                Condition: {ForAllValues:StringLike: {dynamodb:LeadingKeys: "A#*"}}
              - {Effect: Allow, Action: dynamodb:Scan, Resource: !GetAtt T.Arn}
`))
	if err != nil {
		t.Fatal(err)
	}
	e, err := tpl.Env(nil)
	if err != nil {
		t.Fatal(err)
	}
	gs, err := e.Grants("R")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, g := range gs {
		got = append(got, g.String())
	}
	want := []string{
		"dynamodb:GetItem on !GetAtt T.Arn for keys MOV#*,MSG#*",
		"dynamodb:PutItem on !GetAtt T.Arn for keys MOV#*,MSG#*",
		"dynamodb:Query on !Sub ${T.Arn}/index/i for keys A#*",
		"dynamodb:Scan on !GetAtt T.Arn",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("grants = %q, want %q", got, want)
	}
}

func TestParseRejectsRepeatedKeys(t *testing.T) {
	_, err := Parse([]byte("Resources:\n  Q:\n    Type: AWS::SQS::Queue\n  Q:\n    Type: AWS::SNS::Topic\n"))
	if err == nil || !strings.Contains(err.Error(), `"Q" repeated`) {
		t.Fatalf("err = %v, want the repeated key named", err)
	}
}
