"""moto's server, with DynamoDB requests serialised.

moto applies a TransactWriteItems by snapshotting the tables it touches and, if any
action fails, restoring those snapshots, without a lock. Under concurrent requests a
cancelled transaction can therefore restore a table over another transaction's commit,
undoing it: a fault of the emulator that DynamoDB, whose transactions are serialisable,
never shows. This wrapper runs DynamoDB requests one at a time (as minidyn does) and
leaves SQS and SNS concurrent, so long polls still overlap.

It also keeps a table's DynamoDB stream whole across a cancelled transaction. moto
appends a transaction's stream records as it applies each action; the rollback restores
the table from its snapshot, stream shard included, so the records leave the table's
shard, but the shard object a shard iterator already holds keeps them, and never sees a
later write. A reader that took an iterator before a cancelled transaction would read
records of writes that never happened (whose sequence numbers later writes reuse) and
miss every record after them. Here a cancelled transaction leaves the table's own shard
in place, cut back to its committed records, so every iterator reads what committed.
DynamoDB Streams requests take the DynamoDB turn too, so none reads a transaction half
applied.

It also takes no copy of a table for a transaction. moto deep-copies each table a
transaction names, stream shard included, to put it back if an action fails: the whole
table for every transaction, so that a transaction's cost grew with its table: two
fifths of moto's time in the property test, and more in the soak (tables of thousands
of items). Here a transaction instead notes each item it writes as it was before the
write (an item an update changes in place is copied first), and a cancelled one puts
those items back, the last first: the table ends as moto's own rollback leaves it, at
the cost of the items written, whatever the table's size.

It writes an item's attributes into a DynamoDB answer as they are. moto hands its
serializer each AttributeValue already in DynamoDB's JSON ({"S": "…"}, {"N": "…"}, maps
and lists of them), and the serializer, driven by the service's model, looks each one's
ten possible members up under every alias a model name may have: over a quarter of
moto's time in the property test. A value holding bytes (a binary attribute, which needs
base64) still goes through the serializer.

It remembers the ClientRequestToken of every TransactWriteItems that succeeded for 10
minutes, as DynamoDB does and moto does not: the same request with its token again is
answered success and writes nothing (so the SDK's retry of an answer lost after commit
is harmless), and another request with that token is refused with
IdempotentParameterMismatchException. A cancelled or failed request is not remembered.

It lists moto's service modules once: moto's server lists its package directory, and
stats every entry, for every request, to route it.

And it compiles each JSONPath of EventBridge's input templates once: moto builds a
parser for every path of every event for every rule target, about 35 ms each, so that
one PutEvents of ten entries to a bus with two rules took seconds. The compiled paths
are the same objects moto would build, kept.

It mends two faults of moto's FIFO queues, which SQS never shows, by running each
ReceiveMessage alone and clearing first the in-flight state of the messages whose
visibility timeout has passed. Without that, two receives at once can both hand out one
message group (each reads which groups are in flight before the other marks its own),
and when several messages of a group come back together moto hands out the last first
(each earlier one still counts as in flight while the loop reaches it).

Usage: python3 moto_server.py PORT  (listens on 127.0.0.1 only)
"""

import collections
import copy
import functools
import hashlib
import io
import json
import sys
import threading
import time

import jsonpath_ng.ext

import moto.backends as backends
from moto.core.serialize import BaseJSONSerializer
import moto.dynamodb.models as dynamodb_models
from moto.dynamodb.models.dynamo_type import DynamoType
from moto.dynamodb.models.table import Table
import moto.sqs.models as sqs_models
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
from werkzeug.serving import run_simple


class Undo:
    """The items a running transaction wrote, each as it was before (None: absent), with
    its table and key, in the order written; None while no transaction runs. Safe because
    DynamoDB requests run one at a time (below)."""

    log = None

    def note(self, table, hash_value, range_value, item):
        if self.log is not None:
            self.log.append((table, hash_value, range_value, item))

    def put_back(self):
        """Puts every noted item back as it was, the last written first."""
        for table, hash_value, range_value, item in reversed(self.log):
            if range_value is None and item is None:
                table.items.pop(hash_value, None)
            elif range_value is None:
                table.items[hash_value] = item
            elif item is None:
                table.items.get(hash_value, {}).pop(range_value, None)
            else:
                table.items[hash_value][range_value] = item


undo = Undo()


def key_of(table, attrs):
    """The hash and range values (None for a table without a range key) moto keys attrs by,
    or None when attrs lacks a key attribute (moto refuses the write before making it)."""
    if table.hash_key_attr not in attrs or (table.range_key_attr is not None and table.range_key_attr not in attrs):
        return None
    range_value = DynamoType(attrs[table.range_key_attr]) if table.range_key_attr is not None else None
    return DynamoType(attrs[table.hash_key_attr]), range_value


def stored(table, hash_value, range_value):
    """The item at the key, or None, read without creating a bucket in moto's defaultdict."""
    bucket = table.items.get(hash_value)
    if range_value is None or bucket is None:
        return bucket
    return bucket.get(range_value)


class NoTableCopy:
    """Stands in for the copy module inside moto.dynamodb.models: while a transaction runs,
    deepcopy of a table returns the table itself, which the undo log can put back; every
    other copy is made."""

    def __getattr__(self, name):
        return getattr(copy, name)

    def deepcopy(self, obj, *args):
        if undo.log is not None and isinstance(obj, Table):
            return obj
        return copy.deepcopy(obj, *args)


dynamodb_models.copy = NoTableCopy()
table_put_item, table_delete_item = Table.put_item, Table.delete_item
backend_update_item = dynamodb_models.DynamoDBBackend.update_item
transact_write_items = dynamodb_models.DynamoDBBackend.transact_write_items


def put_item_noted(self, item_attrs, *args, **kwargs):
    key = key_of(self, item_attrs) if undo.log is not None else None
    if key is not None:
        undo.note(self, *key, stored(self, *key))
    return table_put_item(self, item_attrs, *args, **kwargs)


def delete_item_noted(self, hash_key, range_key):
    if undo.log is not None:
        range_value = range_key if self.range_key_attr is not None else None
        undo.note(self, hash_key, range_value, stored(self, hash_key, range_value))
    return table_delete_item(self, hash_key, range_key)


def update_item_noted(self, table_name, key, *args, **kwargs):
    # moto changes an item in place for an update: the note is a copy. The key is a dict
    # of the table's key attributes; any other shape moto refuses.
    if undo.log is not None and isinstance(key, dict) and table_name in self.tables:
        table = self.tables[table_name]
        at = key_of(table, key)
        if at is not None:
            undo.note(table, *at, copy.deepcopy(stored(table, *at)))
    return backend_update_item(self, table_name, key, *args, **kwargs)


def transact_write_items_undoing(self, transact_items):
    # Each table's stream shard and its length: on a rollback, the shard is cut back to it
    # (see the module's doc).
    shards = {name: (t.stream_shard, len(t.stream_shard.items)) for name, t in self.tables.items() if t.stream_shard is not None}
    undo.log = []
    try:
        return transact_write_items(self, transact_items)
    except Exception:
        undo.put_back()
        for name, (shard, length) in shards.items():
            table = self.tables.get(name)
            if table is not None:
                del shard.items[length:]
                shard.table, table.stream_shard = table, shard
        raise
    finally:
        undo.log = None


Table.put_item, Table.delete_item = put_item_noted, delete_item_noted
dynamodb_models.DynamoDBBackend.update_item = update_item_noted
dynamodb_models.DynamoDBBackend.transact_write_items = transact_write_items_undoing

def wire_json(value):
    """Whether value is an AttributeValue already in DynamoDB's JSON: strings, booleans,
    None, and lists and maps of them; bytes need the serializer's base64."""
    if isinstance(value, dict):
        return all(isinstance(k, str) and wire_json(v) for k, v in value.items())
    if isinstance(value, list):
        return all(wire_json(v) for v in value)
    return value is None or isinstance(value, (str, bool))


serialize_structure = BaseJSONSerializer._serialize_type_structure


def serialize_structure_as_is(self, serialized, value, shape, key):
    if shape.name == "AttributeValue" and key and wire_json(value):
        serialized[key] = value
        return
    serialize_structure(self, serialized, value, shape, key)


BaseJSONSerializer._serialize_type_structure = serialize_structure_as_is

# moto's server routes a request by looking its host up in list_of_moto_modules, which
# lists the package's directory each time; the directory does not change while it runs.
moto_modules = tuple(backends.list_of_moto_modules())
backends.list_of_moto_modules = lambda: moto_modules

# moto.events imports jsonpath_ng.ext.parse when it renders an event for a target: the
# module attribute, cached here, is what it finds.
jsonpath_ng.ext.parse = functools.lru_cache(maxsize=256)(jsonpath_ng.ext.parse)

receive_message = sqs_models.SQSBackend.receive_message
receiving = threading.Lock()


def receive_message_alone(self, queue_name, *args, **kwargs):
    with receiving:
        queue = self.get_queue(queue_name)
        for message in list(queue.pending_messages):
            if message.visible:  # its visibility timeout passed: no longer in flight
                queue.pending_messages.remove(message)
        return receive_message(self, queue_name, *args, **kwargs)


sqs_models.SQSBackend.receive_message = receive_message_alone

TOKEN_WINDOW_SECONDS = 600  # how long DynamoDB remembers a ClientRequestToken


class Tokens:
    """The ClientRequestTokens of the TransactWriteItems that succeeded: token → (the
    request's digest, when it succeeded), with the tokens in the order remembered so
    that the lapsed leave first. Used inside the DynamoDB turn only."""

    def __init__(self):
        self.seen = {}
        self.order = collections.deque()

    def answer(self, token, digest, start_response):
        """The answer from memory to a request with token, or None when it must run."""
        use = self.seen.get(token)
        if use is None or time.monotonic() - use[1] >= TOKEN_WINDOW_SECONDS:
            return None
        headers = [("Content-Type", "application/x-amz-json-1.0")]
        if use[0] == digest:
            start_response("200 OK", headers)
            return [b"{}"]
        start_response("400 Bad Request", headers)
        return [json.dumps({
            "__type": "com.amazonaws.dynamodb.v20120810#IdempotentParameterMismatchException",
            "message": "Request has a ClientRequestToken already used by a request with other parameters",
        }).encode()]

    def remember(self, token, digest):
        now = time.monotonic()
        while self.order and now - self.order[0][1] >= TOKEN_WINDOW_SECONDS:
            old, at = self.order.popleft()
            if self.seen.get(old, (None, None))[1] == at:  # not remembered again since
                del self.seen[old]
        self.seen[token] = (digest, now)
        self.order.append((token, now))


tokens = Tokens()


def transact_write_items_once(environ, start_response):
    """Runs a TransactWriteItems unless its token answers it, and remembers the token of
    one that succeeded."""
    length = environ.get("CONTENT_LENGTH")
    body = environ["wsgi.input"].read(int(length)) if length else environ["wsgi.input"].read()
    environ["wsgi.input"] = io.BytesIO(body)
    try:
        request = json.loads(body)
        token = request.get("ClientRequestToken")
    except (ValueError, AttributeError):
        token = None  # moto answers what it cannot read
    if token is None:
        return list(app(environ, start_response))
    # the SDK writes a request's maps in any order: the digest is of one order
    digest = hashlib.sha256(json.dumps(request, sort_keys=True).encode()).digest()
    answer = tokens.answer(token, digest, start_response)
    if answer is not None:
        return answer
    status = []

    def noting_start_response(line, headers, *args):
        status.append(line)
        return start_response(line, headers, *args)

    answer = list(app(environ, noting_start_response))
    if status and status[0].startswith("200"):
        tokens.remember(token, digest)
    return answer


app = DomainDispatcherApplication(create_backend_app)
dynamodb = threading.Lock()


def serialised(environ, start_response):
    target = environ.get("HTTP_X_AMZ_TARGET", "")
    if target == "DynamoDB_20120810.TransactWriteItems":
        with dynamodb:
            return transact_write_items_once(environ, start_response)
    if target.startswith(("DynamoDB_", "DynamoDBStreams_")):
        with dynamodb:
            return list(app(environ, start_response))  # the whole answer, inside the lock
    return app(environ, start_response)


if __name__ == "__main__":
    run_simple("127.0.0.1", int(sys.argv[1]), serialised, threaded=True)
