"""moto's server, with DynamoDB requests serialised.

moto applies a TransactWriteItems by snapshotting the tables it touches and, if any
action fails, restoring those snapshots, without a lock. Under concurrent requests a
cancelled transaction can therefore restore a table over another transaction's commit,
undoing it: a fault of the emulator that DynamoDB, whose transactions are serialisable,
never shows. This wrapper runs DynamoDB requests one at a time (as minidyn does) and
leaves SQS and SNS concurrent, so long polls still overlap.

Usage: python3 moto_server.py PORT  (listens on 127.0.0.1 only)
"""

import sys
import threading

from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
from werkzeug.serving import run_simple

app = DomainDispatcherApplication(create_backend_app)
dynamodb = threading.Lock()


def serialised(environ, start_response):
    if environ.get("HTTP_X_AMZ_TARGET", "").startswith("DynamoDB_"):
        with dynamodb:
            return list(app(environ, start_response))  # the whole answer, inside the lock
    return app(environ, start_response)


if __name__ == "__main__":
    run_simple("127.0.0.1", int(sys.argv[1]), serialised, threaded=True)
