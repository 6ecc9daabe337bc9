"""The deploy rehearsal: template.yaml made into a stack on a moto server, then used.

It does what a deploy does, on moto instead of AWS, and prints each step on stdout:

1. transforms the SAM template into CloudFormation with the SAM translator (the one
   cfn-lint uses), after putting each function's code in moto's S3 as `sam package`
   would (a placeholder: moto creates functions but runs none here);
2. leaves out what moto cannot create, naming each resource: a type moto's
   CloudFormation has no model for, an event source mapping (moto would run its
   function in Docker on every message and every table write), and whatever refers to
   one of them; it also names the properties moto's source never mentions, which it
   ignores;
3. creates the stack and reads back what moto made: the tables' keys, indexes and
   stream, the queues' redrive;
4. sends movements to the stack's queue (`ledger send`), applies them with the
   consumer's handler (`ledger consume --drain` stands in for the consumer function),
   and reads them back through the stack's table (`ledger audit`, `ledger cuenta`) and
   its dead-letter queue.

Any failure ends it with one line on stderr naming the step, and exit status 1; a
usage error exits 2. It needs a python with moto and cfn-lint (scripts/python-tools)
and a moto server (scripts/with-moto starts one); `make rehearse` does both.

Usage: rehearse.py --endpoint URL --ledger PATH [--template FILE] [--stack NAME] [--movements N] [KEY=VALUE ...]
(KEY=VALUE: a template parameter, such as CreateTopic=true.)
"""

import argparse
import io
import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# moto answers in this region and account when a request names no other.
REGION = "us-east-1"
ACCOUNT = "123456789012"

# The example movements the README's tour uses, and its first account (Ana), whose
# balance after them is 665.00.
EXAMPLES = ROOT / "examples" / "movimientos.jsonl"
EXAMPLE_ACCOUNT = "ES7620770024003102575766"

# Resource types moto's CloudFormation creates, but the rehearsal leaves out, and why.
CANNOT_RUN_HERE = {
    "AWS::Lambda::EventSourceMapping": "moto would run the function in Docker on every message and every table write",
}

# Seconds a stack may stay in a *_IN_PROGRESS state before the rehearsal gives up: moto
# creates a stack within the CreateStack call, so this is ample.
STACK_WAIT_SECONDS = 60

# Seconds one ledger command may run: a drain of a few hundred movements takes seconds.
COMMAND_TIMEOUT_SECONDS = 120

# A Fn::Sub variable: ${Name} or ${Name.Attribute}; ${!Literal} is not one.
SUB_VARIABLE = re.compile(r"\$\{([^!}][^}]*)\}")


class RehearsalError(Exception):
    """A step that failed; its message is the one line the rehearsal ends with."""


def say(text=""):
    """Prints a result line on stdout at once, so it interleaves with the commands' own."""
    print(text, flush=True)


def step(title):
    """Prints the heading of a step."""
    say()
    say(f"== {title}")


def parse_args(argv):
    """The command line; argparse exits 2 on a usage error."""
    p = argparse.ArgumentParser(prog="rehearse.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--endpoint", required=True, help="the moto server's URL")
    p.add_argument("--ledger", required=True, help="the ledger command to run (a built binary)")
    p.add_argument("--template", default=str(ROOT / "template.yaml"), help="the SAM template (default: template.yaml)")
    p.add_argument("--stack", default="ledger-rehearsal", help="the stack's name (default: ledger-rehearsal)")
    p.add_argument("--movements", type=int, default=0,
                   help="generated movements to send after the examples (default: none); a debit delivered before "
                        "the credit it needs comes back, and after MaxReceiveCount receives SQS moves it to the DLQ")
    p.add_argument("parameters", nargs="*", metavar="KEY=VALUE", help="template parameters")
    args = p.parse_args(argv)
    if not 0 <= args.movements <= 10000:
        p.error("--movements must be 0–10000")
    args.parameters = dict(kv.split("=", 1) if "=" in kv else p.error(f"{kv}: a parameter is KEY=VALUE") for kv in args.parameters)
    return args


def main(argv):
    """Runs the steps; a RehearsalError ends it with its one line and exit status 1."""
    args = parse_args(argv)
    os.environ["AWS_DEFAULT_REGION"] = REGION  # the SAM translator's region (it asks boto3)
    try:
        rehearse(args)
    except RehearsalError as e:
        print(f"rehearse: {e}", file=sys.stderr)
        return 1
    return 0


def rehearse(args):
    """The steps, in the order a deploy takes them."""
    check_ledger(args.ledger)
    aws = Clients(args.endpoint)
    check_moto(aws, args.stack)
    template = load_template(Path(args.template))
    check_parameters(template, args.parameters)
    bucket = f"{args.stack}-artifacts".lower()
    step(f"package and transform {Path(args.template).name}")
    packages = package(template, bucket)
    cfn = transform(template, args.parameters)
    say(f"{len(template['Resources'])} resources in the template, {len(cfn['Resources'])} in CloudFormation")
    step("leave out what moto cannot create")
    conditions = evaluate_conditions(cfn, args.parameters, args.stack)
    report_plan(plan(cfn, conditions, moto_models()))
    step(f"create stack {args.stack} on moto at {args.endpoint}")
    upload(aws, bucket, packages)
    outputs = create_stack(aws, args.stack, cfn, args.parameters)
    step("what moto made")
    read_back(aws, args.stack)
    use_stack(args, outputs, aws)


class Clients:
    """boto3 clients on the moto server, with placeholder credentials: moto checks none."""

    def __init__(self, endpoint):
        """One client per service the rehearsal calls; a malformed endpoint is refused."""
        import boto3

        session = boto3.session.Session(aws_access_key_id="rehearsal", aws_secret_access_key="rehearsal", region_name=REGION)
        self.endpoint = endpoint
        try:
            self.cloudformation, self.dynamodb, self.s3, self.sqs = (
                session.client(name, endpoint_url=endpoint) for name in ("cloudformation", "dynamodb", "s3", "sqs")
            )
        except ValueError as e:  # botocore's refusal of an endpoint that is no URL
            raise RehearsalError(f"--endpoint {endpoint}: {e}") from e


def check_ledger(command):
    """Refuses a --ledger that is not an executable file, before any long work."""
    if not (os.path.isfile(command) and os.access(command, os.X_OK)):
        raise RehearsalError(f"--ledger {command}: not an executable file (go build -o bin/ledger ./cmd/ledger makes one)")


def check_moto(aws, stack):
    """Checks that the endpoint answers as CloudFormation and has no stack of this name
    yet, before any long work."""
    try:
        summaries = aws.cloudformation.list_stacks()["StackSummaries"]
    except aws_errors() as e:
        raise RehearsalError(f"--endpoint {aws.endpoint} does not answer as CloudFormation: {one_line(e)}") from e
    if all(s["StackName"] != stack or s["StackStatus"] == "DELETE_COMPLETE" for s in summaries):
        return
    raise RehearsalError(f"stack {stack} exists already on {aws.endpoint}: give another --stack")


def load_template(path):
    """The SAM template as a dict, its short intrinsics (!Ref …) in their long form."""
    from samtranslator.yaml_helper import yaml_parse

    try:
        template = yaml_parse(path.read_text())
    except (OSError, ValueError) as e:  # yaml's errors are ValueErrors
        raise RehearsalError(f"read {path}: {e}") from e
    if not isinstance(template, dict) or not isinstance(template.get("Resources"), dict):
        raise RehearsalError(f"{path} has no Resources")
    return template


def check_parameters(template, values):
    """Refuses a KEY=VALUE whose KEY the template does not declare."""
    for key in values:
        if key not in template.get("Parameters", {}):
            raise RehearsalError(f"{key}: the template has no such parameter")


def package(template, bucket):
    """Points each function's local CodeUri at an S3 object, as `sam package` does, and
    returns the objects to upload: a zip holding a placeholder bootstrap, since moto
    creates functions but runs none here (the CLI runs their handlers instead)."""
    packages = {}
    for logical_id, resource in template["Resources"].items():
        props = resource.get("Properties") or {}
        code = props.get("CodeUri")
        if resource.get("Type") == "AWS::Serverless::Function" and isinstance(code, str) and not code.startswith("s3://"):
            key = f"{logical_id}.zip"
            props["CodeUri"] = f"s3://{bucket}/{key}"
            packages[key] = placeholder_zip(code)
    if packages:
        say(f"functions' code: a placeholder bootstrap for each in s3://{bucket}/ ({', '.join(sorted(packages))})")
    return packages


def placeholder_zip(code_uri):
    """A zip with a bootstrap that only says what it stands for."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("bootstrap", f"#!/bin/sh\necho 'rehearsal placeholder for {code_uri}: build it with sam build' >&2\nexit 1\n")
    return buf.getvalue()


def transform(template, parameters):
    """The template in plain CloudFormation, by the SAM translator, with the managed
    policies' ARNs cfn-lint ships (there is no AWS account to ask)."""
    import samtranslator
    from cfnlint.data import Serverless
    from cfnlint.helpers import load_resource
    from samtranslator.model.exceptions import InvalidDocumentException
    from samtranslator.translator.transform import transform as sam_transform

    class ManagedPolicies:
        """The translator's managed-policy loader, offline."""

        def load(self):
            """The policies' ARNs by name."""
            return load_resource(Serverless, "ManagedPolicies.json")

    say(f"SAM translator {samtranslator.__version__}")
    try:
        return sam_transform(template, dict(parameters), ManagedPolicies())
    except InvalidDocumentException as e:
        raise RehearsalError("the SAM translator refused the template: " + "; ".join(c.message for c in e.causes)) from e


def evaluate_conditions(cfn, parameters, stack):
    """Each condition's truth for these parameter values (the template's defaults for the
    rest): only what would be created is named, and only the branch of an Fn::If that
    would be taken is followed."""
    values = {name: p.get("Default") for name, p in cfn.get("Parameters", {}).items()}
    values.update(parameters)
    values = {k: cfn_string(v) for k, v in values.items()}
    values.update({"AWS::StackName": stack, "AWS::Region": REGION, "AWS::AccountId": ACCOUNT,
                   "AWS::Partition": "aws", "AWS::URLSuffix": "amazonaws.com"})
    conditions = cfn.get("Conditions", {})
    truth = {}

    def condition(name, seen):
        """name's truth, evaluated once; seen holds the conditions that led here."""
        if name not in conditions:
            raise RehearsalError(f"condition {name} is not in the template")
        if name in seen:
            raise RehearsalError(f"condition {name} refers to itself")
        if name not in truth:
            truth[name] = bool(evaluate(conditions[name], values, lambda n: condition(n, seen | {name}), name))
        return truth[name]

    for name in conditions:
        condition(name, frozenset())
    return truth


def cfn_string(value):
    """A parameter value as CloudFormation passes it: a string (true, not True)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def evaluate(node, values, condition, name):
    """The value of a condition's expression: the functions conditions may use, on
    parameter values. Anything else is an error naming it."""
    if isinstance(node, list):
        return [evaluate(n, values, condition, name) for n in node]
    if not isinstance(node, dict):
        return cfn_string(node)
    if len(node) != 1:
        raise RehearsalError(f"condition {name}: cannot evaluate {json.dumps(node)}")
    (fn, arg), = node.items()
    if fn == "Condition":
        return condition(arg)
    if fn == "Ref":
        if arg not in values:
            raise RehearsalError(f"condition {name}: {arg} is not a parameter")
        return values[arg]
    args = evaluate(arg, values, condition, name)
    functions = {
        "Fn::Equals": lambda a: a[0] == a[1],
        "Fn::Not": lambda a: not a[0],
        "Fn::And": all,
        "Fn::Or": any,
        "Fn::Join": lambda a: a[0].join(a[1]),
        "Fn::Split": lambda a: a[1].split(a[0]),
        "Fn::Select": lambda a: a[1][int(a[0])],
    }
    if fn not in functions:
        raise RehearsalError(f"condition {name}: cannot evaluate {fn}")
    return functions[fn](args)


def references(node, conditions):
    """The names node refers to by Ref, Fn::GetAtt and Fn::Sub (parameters among them),
    following only the branch of each Fn::If that its condition takes."""
    if isinstance(node, list):
        return set().union(*(references(n, conditions) for n in node))
    if not isinstance(node, dict):
        return set()
    if len(node) == 1:
        (fn, arg), = node.items()
        if fn == "Ref" and isinstance(arg, str):
            return {arg}
        if fn == "Fn::GetAtt":
            return {arg[0] if isinstance(arg, list) else str(arg).split(".")[0]}
        if fn == "Fn::If":
            name, if_true, if_false = arg
            return references(if_true if conditions.get(name, True) else if_false, conditions)
        if fn == "Fn::Sub":
            text, names = (arg, {}) if isinstance(arg, str) else arg
            named = {v.split(".")[0] for v in SUB_VARIABLE.findall(text) if v not in names}
            return named | references(names, conditions)
    return set().union(*(references(v, conditions) for v in node.values()))


def moto_models():
    """moto's CloudFormation models by resource type: what its CreateStack can create.
    The moto this python imports is the one scripts/with-moto serves."""
    from moto.cloudformation.parsing import get_model_map

    return get_model_map()


def plan(cfn, conditions, models):
    """Removes from cfn what moto cannot create and what refers to it, and returns what
    was left out and why: {"types": {(type, reason): [ids]}, "dependents": {id: needs},
    "outputs": {name: needs}, "ignored": {(type, property): [ids]}}. Only resources and
    outputs whose condition holds are named; DependsOn entries naming a removed resource
    are dropped, since the order they asked for no longer matters."""
    resources = cfn["Resources"]
    active = {i for i, r in resources.items() if conditions.get(r.get("Condition"), True)}
    removed, types = set(), {}
    for logical_id, resource in resources.items():
        reason = cannot_create(resource["Type"], models)
        if reason:
            removed.add(logical_id)
            types.setdefault((resource["Type"], reason), []).append(logical_id)
    dependents = {}
    while True:  # each pass removes at least one resource, or ends: at most len(resources) passes
        found = {i: needs for i, r in resources.items() if i not in removed
                 for needs in [references(r.get("Properties", {}), conditions) & removed] if needs}
        if not found:
            break
        dependents.update(found)
        removed |= set(found)
    outputs = {name: needs for name, o in cfn.get("Outputs", {}).items()
               for needs in [references(o, conditions) & removed] if needs}
    active_outputs = {n for n in outputs if conditions.get(cfn["Outputs"][n].get("Condition"), True)}
    for name in outputs:
        del cfn["Outputs"][name]
    for logical_id in removed:
        del resources[logical_id]
    for resource in resources.values():
        drop_depends_on(resource, removed)
    return {
        "types": {k: v for k, v in ((k, [i for i in ids if i in active]) for k, ids in types.items()) if v},
        "dependents": {i: needs for i, needs in dependents.items() if i in active},
        "outputs": {n: needs for n, needs in outputs.items() if n in active_outputs},
        "ignored": ignored_properties(resources, active, models),
    }


def cannot_create(resource_type, models):
    """Why moto's CloudFormation cannot create a resource of this type here, or None."""
    if resource_type in CANNOT_RUN_HERE:
        return CANNOT_RUN_HERE[resource_type]
    if resource_type.startswith("Custom::"):
        return "a custom resource: moto would run its function in Docker"
    if resource_type not in models:
        return "moto has no such resource"
    return None


def drop_depends_on(resource, removed):
    """Removes the names of removed resources from resource's DependsOn."""
    depends = resource.get("DependsOn")
    if depends is None:
        return
    kept = [d for d in ([depends] if isinstance(depends, str) else depends) if d not in removed]
    if kept:
        resource["DependsOn"] = kept
    else:
        del resource["DependsOn"]


def ignored_properties(resources, active, models):
    """{(type, property): [ids]} of the properties moto's source never names: its model
    cannot read them, so the resource is created without them. A property it does name
    may still be ignored; this finds only the certain cases."""
    sources, ignored = {}, {}
    for logical_id, resource in resources.items():
        model = models.get(resource["Type"])
        if model is None or logical_id not in active:
            continue
        if model not in sources:
            sources[model] = package_source(model)
        for prop in resource.get("Properties", {}):
            if prop not in sources[model]:
                ignored.setdefault((resource["Type"], prop), []).append(logical_id)
    return ignored


def package_source(model):
    """The source of the moto package (moto.sqs, moto.dynamodb …) that defines model."""
    import importlib

    package = importlib.import_module(".".join(model.__module__.split(".")[:2]))
    return "\n".join(p.read_text() for p in Path(package.__file__).parent.rglob("*.py"))


def report_plan(p):
    """Prints what plan left out, one line per type, then the rest."""
    for (resource_type, reason), ids in sorted(p["types"].items()):
        say(f"skipped {resource_type} ({reason}): {', '.join(sorted(ids))}")
    if p["dependents"]:
        say("skipped, referring to a skipped resource: " + named(p["dependents"]))
    if p["outputs"]:
        say("outputs left out, naming a skipped resource: " + named(p["outputs"]))
    for (resource_type, prop), ids in sorted(p["ignored"].items()):
        say(f"ignored by moto (its source never names it): {resource_type} {prop} of {', '.join(sorted(ids))}")
    if not any(p.values()):
        say("nothing: moto creates every resource")


def named(needs):
    """Each name with what it refers to: "A (B, C), D (E)"."""
    return ", ".join(f"{name} ({', '.join(sorted(n))})" for name, n in sorted(needs.items()))


def upload(aws, bucket, packages):
    """Puts the functions' packages in a new bucket on moto, as `sam deploy` does in its
    own bucket."""
    try:
        if packages:
            aws.s3.create_bucket(Bucket=bucket)
        for key, body in packages.items():
            aws.s3.put_object(Bucket=bucket, Key=key, Body=body)
    except aws_errors() as e:
        raise RehearsalError(f"upload the functions' code to s3://{bucket} on {aws.endpoint}: {one_line(e)}") from e


def aws_errors():
    """What a failed call to moto raises: botocore's errors, and its parser's when moto
    answers in a form the client cannot read (an HTML page for a 500, say)."""
    from botocore.exceptions import BotoCoreError, ClientError
    from botocore.parsers import ResponseParserError

    return BotoCoreError, ClientError, ResponseParserError


def one_line(error):
    """An exception's message on one line."""
    return " ".join(str(error).split())


def create_stack(aws, stack, cfn, parameters):
    """Creates the stack, waits until moto has made it, prints its resources and
    outputs, and returns the outputs by key."""
    try:
        aws.cloudformation.create_stack(
            StackName=stack, TemplateBody=json.dumps(cfn, default=str),
            Parameters=[{"ParameterKey": k, "ParameterValue": v} for k, v in sorted(parameters.items())],
            Capabilities=["CAPABILITY_IAM", "CAPABILITY_NAMED_IAM", "CAPABILITY_AUTO_EXPAND"])
        described = wait_for_stack(aws, stack)
        resources = aws.cloudformation.list_stack_resources(StackName=stack)["StackResourceSummaries"]
    except aws_errors() as e:
        raise RehearsalError(f"create stack {stack}: {one_line(e)}") from e
    resources = [r for r in resources if r["LogicalResourceId"]]  # moto lists one blank entry per resource a condition left out
    say(f"{described['StackStatus']}: {len(resources)} resources")
    by_type = {}
    for r in resources:
        by_type.setdefault(r["ResourceType"], []).append(r["LogicalResourceId"])
    for resource_type, ids in sorted(by_type.items()):
        say(f"  {resource_type}: {', '.join(sorted(ids))}")
    nameless = sorted(r["LogicalResourceId"] for r in resources if not r["PhysicalResourceId"])
    if nameless:
        say(f"moto gave no physical id, so no Ref value, to: {', '.join(nameless)}")
    outputs = {o["OutputKey"]: o["OutputValue"] for o in described.get("Outputs", [])}
    say("outputs:")
    for key, value in sorted(outputs.items()):
        # moto puts a Ref it cannot resolve into an output as its model's repr: <moto.… object at 0x…>
        say(f"  {key} = {'(none: moto could not resolve it)' if value.startswith('<moto.') else value}")
    return outputs


def wait_for_stack(aws, stack):
    """The stack once no longer in progress; an error unless CREATE_COMPLETE."""
    import time

    deadline = time.monotonic() + STACK_WAIT_SECONDS
    while True:  # bounded by deadline
        described = aws.cloudformation.describe_stacks(StackName=stack)["Stacks"][0]
        status = described["StackStatus"]
        if not status.endswith("_IN_PROGRESS"):
            break
        if time.monotonic() > deadline:
            raise RehearsalError(f"create stack {stack}: still {status} after {STACK_WAIT_SECONDS} s")
        time.sleep(0.5)
    if status != "CREATE_COMPLETE":
        events = aws.cloudformation.describe_stack_events(StackName=stack)["StackEvents"]
        failed = [f"{e['LogicalResourceId']}: {e.get('ResourceStatusReason', '')}" for e in events if e["ResourceStatus"].endswith("FAILED")]
        raise RehearsalError(f"create stack {stack}: {status} ({'; '.join(failed) or described.get('StackStatusReason', 'no reason given')})")
    return described


def read_back(aws, stack):
    """Prints the stack's tables and queues as moto describes them: what the template
    asked for, as the service holds it."""
    try:
        resources = aws.cloudformation.list_stack_resources(StackName=stack)["StackResourceSummaries"]
        queues = {r["PhysicalResourceId"].rsplit("/", 1)[-1]: r["LogicalResourceId"] for r in resources if r["ResourceType"] == "AWS::SQS::Queue"}
        for r in sorted(resources, key=lambda r: (r["ResourceType"], r["LogicalResourceId"])):
            if r["ResourceType"] == "AWS::DynamoDB::Table":
                say(describe_table(aws.dynamodb.describe_table(TableName=r["PhysicalResourceId"])["Table"], r["LogicalResourceId"]))
            elif r["ResourceType"] == "AWS::SQS::Queue":
                attrs = aws.sqs.get_queue_attributes(QueueUrl=r["PhysicalResourceId"], AttributeNames=["All"])["Attributes"]
                say(describe_queue(attrs, r["LogicalResourceId"], queues))
    except aws_errors() as e:
        raise RehearsalError(f"read back stack {stack}: {one_line(e)}") from e


def describe_table(table, logical_id):
    """One line: a table's keys, indexes, stream and billing."""
    def keys(schema):
        """A key schema's attribute names, hash key first."""
        return ", ".join(k["AttributeName"] for k in schema)

    indexes = ", ".join(f"{i['IndexName']} ({keys(i['KeySchema'])})" for i in sorted(table.get("GlobalSecondaryIndexes", []), key=lambda i: i["IndexName"]))
    stream = table.get("StreamSpecification") or {}
    return (f"table {table['TableName']} ({logical_id}): key {keys(table['KeySchema'])}; indexes {indexes or 'none'}; "
            f"stream {stream.get('StreamViewType', 'none') if stream.get('StreamEnabled') else 'none'}; "
            f"billing {(table.get('BillingModeSummary') or {}).get('BillingMode', 'PROVISIONED')}")


def describe_queue(attrs, logical_id, queues):
    """One line: a queue's visibility timeout, retention and dead-letter queue."""
    line = f"queue {logical_id}: visibility {attrs['VisibilityTimeout']} s, retention {attrs['MessageRetentionPeriod']} s"
    if "RedrivePolicy" in attrs:
        redrive = json.loads(attrs["RedrivePolicy"])
        target = redrive["deadLetterTargetArn"].rsplit(":", 1)[-1]
        line += f", to {queues.get(target, target)} after {redrive['maxReceiveCount']} receives"
    return line


def use_stack(args, outputs, aws):
    """Sends movements to the stack's queue, applies them with the consumer's handler
    and reads them back through the stack's table and dead-letter queue."""
    for key in ("MovementsQueueUrl", "DeadLetterQueueUrl", "TableName"):
        if key not in outputs:
            raise RehearsalError(f"the stack has no output {key}: the rehearsal sends and reads through it")
    queue, dlq, table = outputs["MovementsQueueUrl"], outputs["DeadLetterQueueUrl"], outputs["TableName"]
    endpoint = ["--endpoint", args.endpoint]
    step("send movements to the stack's queue")
    ledger(args, "send", "--queue-url", queue, *endpoint, "--from", str(EXAMPLES.relative_to(ROOT)))
    if args.movements:
        ledger(args, "send", "--queue-url", queue, *endpoint, "--generate", str(args.movements), "--duplicates", "0.2")
    step("apply them with the consumer's handler (the consumer function does this in AWS)")
    ledger(args, "consume", "--queue-url", queue, "--dlq-url", dlq, *endpoint, "--table", table,
           "--drain", "--wait", "2s", "--retry-delay", "1s")
    step("read them back through the stack's table")
    ledger(args, "audit", *endpoint, "--table", table)
    ledger(args, "cuenta", EXAMPLE_ACCOUNT, *endpoint, "--table", table)
    step("and through its dead-letter queue")
    read_dead_letters(aws, dlq)


def ledger(args, *words):
    """Runs one ledger command, printing it and its stdout; its stderr (a log line per
    message) is shown only if it fails, which fails the rehearsal."""
    import shlex

    say("$ ledger " + " ".join(shlex.quote(w) for w in words))
    # Placeholder credentials and moto's region, whatever the shell names: nothing reaches AWS.
    env = dict(os.environ, AWS_REGION=REGION, AWS_ACCESS_KEY_ID="rehearsal", AWS_SECRET_ACCESS_KEY="rehearsal")
    env.pop("AWS_SESSION_TOKEN", None)
    try:
        done = subprocess.run([args.ledger, *words], capture_output=True, text=True, env=env, cwd=ROOT, timeout=COMMAND_TIMEOUT_SECONDS)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise RehearsalError(f"ledger {words[0]}: {one_line(e)}") from e
    sys.stdout.write(done.stdout)
    sys.stdout.flush()
    if done.returncode != 0:
        sys.stderr.write("".join(done.stderr.splitlines(keepends=True)[-10:]))
        raise RehearsalError(f"ledger {words[0]} exited with status {done.returncode}")


def read_dead_letters(aws, dlq):
    """Prints the messages in the dead-letter queue, and why each was parked, leaving
    them there (visibility timeout 0)."""
    try:
        got = aws.sqs.receive_message(QueueUrl=dlq, MaxNumberOfMessages=10, VisibilityTimeout=0,
                                      WaitTimeSeconds=1, MessageAttributeNames=["All"]).get("Messages", [])
    except aws_errors() as e:
        raise RehearsalError(f"receive from the dead-letter queue: {one_line(e)}") from e
    say(f"{len(got)} message{'' if len(got) == 1 else 's'} in the dead-letter queue")
    for m in got:
        attrs = m.get("MessageAttributes", {})
        why = attrs.get("ledger.error", {}).get("StringValue", "moved by SQS after maxReceiveCount")
        say(f"  {movement_id(m['Body'])}: {why}")


def movement_id(body):
    """The id of the movement a body holds, or its start when it has none."""
    try:
        return json.loads(body)["id"]
    except (ValueError, KeyError, TypeError):
        return body[:40]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
