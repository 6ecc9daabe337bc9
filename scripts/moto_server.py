"""moto's server, with DynamoDB requests serialised.

moto applies a TransactWriteItems by snapshotting the tables it touches and, if any
action fails, restoring those snapshots, without a lock. Under concurrent requests a
cancelled transaction can therefore restore a table over another transaction's commit,
undoing it: a fault of the emulator that DynamoDB, whose transactions are serialisable,
never shows. This wrapper runs DynamoDB requests one at a time (as minidyn does) and
leaves SQS and SNS concurrent, so long polls still overlap.

It also makes that snapshot once per table per transaction instead of once per action:
moto deep-copies the whole table for every action, before applying any, so the copies
are identical and one serves them all. A ten-action transaction then copies the table
once, not ten times, which is what keeps the reliability suites and the soak (tables of
thousands of items) fast.

It mends two faults of moto's FIFO queues, which SQS never shows, by running each
ReceiveMessage alone and clearing first the in-flight state of the messages whose
visibility timeout has passed. Without that, two receives at once can both hand out one
message group (each reads which groups are in flight before the other marks its own),
and when several messages of a group come back together moto hands out the last first
(each earlier one still counts as in flight while the loop reaches it).

Usage: python3 moto_server.py PORT  (listens on 127.0.0.1 only)
"""

import copy
import sys
import threading

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
    snapshots.memo = {}
    try:
        return transact_write_items(self, transact_items)
    finally:
        snapshots.memo = None


dynamodb_models.DynamoDBBackend.transact_write_items = transact_write_items_snapshotting_once

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
    if environ.get("HTTP_X_AMZ_TARGET", "").startswith("DynamoDB_"):
        with dynamodb:
            return list(app(environ, start_response))  # the whole answer, inside the lock
    return app(environ, start_response)


if __name__ == "__main__":
    run_simple("127.0.0.1", int(sys.argv[1]), serialised, threaded=True)
