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
miss every record after them. Here the rollback puts the table's own shard back,
without the cancelled transaction's records, so every iterator reads what committed.
DynamoDB Streams requests take the DynamoDB turn too, so none reads a transaction half
applied.

It also makes that snapshot once per table per transaction instead of once per action:
moto deep-copies the whole table for every action, before applying any, so the copies
are identical and one serves them all. A ten-action transaction then copies the table
once, not ten times, which is what keeps the reliability suites and the soak (tables of
thousands of items) fast.

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

import copy
import functools
import sys
import threading

import jsonpath_ng.ext

import moto.dynamodb.models as dynamodb_models
import moto.sqs.models as sqs_models
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
from werkzeug.serving import run_simple


class SnapshotOnce:
    """Stands in for the copy module inside moto.dynamodb.models: while a transaction
    runs, deepcopy returns one copy per object. Safe because DynamoDB requests run one
    at a time (below)."""

    memo = None

    def __getattr__(self, name):
        return getattr(copy, name)

    def deepcopy(self, obj, *args):
        if self.memo is None:
            return copy.deepcopy(obj, *args)
        if id(obj) not in self.memo:
            self.memo[id(obj)] = copy.deepcopy(obj, *args)
        return self.memo[id(obj)]


snapshots = SnapshotOnce()
dynamodb_models.copy = snapshots
transact_write_items = dynamodb_models.DynamoDBBackend.transact_write_items


def transact_write_items_snapshotting_once(self, transact_items):
    # Each table's stream shard and its length: on a rollback, the shard is put back into
    # the restored table, cut to that length (see the module's doc).
    shards = {name: (t.stream_shard, len(t.stream_shard.items)) for name, t in self.tables.items() if t.stream_shard is not None}
    snapshots.memo = {}
    try:
        return transact_write_items(self, transact_items)
    except Exception:
        for name, (shard, length) in shards.items():
            table = self.tables.get(name)
            if table is not None:
                del shard.items[length:]
                shard.table, table.stream_shard = table, shard
        raise
    finally:
        snapshots.memo = None


dynamodb_models.DynamoDBBackend.transact_write_items = transact_write_items_snapshotting_once

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

app = DomainDispatcherApplication(create_backend_app)
dynamodb = threading.Lock()


def serialised(environ, start_response):
    if environ.get("HTTP_X_AMZ_TARGET", "").startswith(("DynamoDB_", "DynamoDBStreams_")):
        with dynamodb:
            return list(app(environ, start_response))  # the whole answer, inside the lock
    return app(environ, start_response)


if __name__ == "__main__":
    run_simple("127.0.0.1", int(sys.argv[1]), serialised, threaded=True)
