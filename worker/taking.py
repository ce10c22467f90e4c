"""Taking more small jobs off the broker than Celery delivered: batches across jobs.

Celery hands a worker child one message at a time (prefetch 1, late acks). When the child gets a
small plain-text job, it takes up to ``NMT_BATCH_JOBS - 1`` more messages from the pair's batch
queue itself (``worker.transport.Channel.take``: as many as are there in one round trip, each
unacknowledged as ``basic_get`` leaves one, in kombu's unacked set until its job is done), waiting
at most ``NMT_BATCH_WAIT_MS`` for them, and decodes all their sentences together
(``worker.jobs.run_batch``). The taken messages are acknowledged together (``ack_all``), only
after their jobs' results are stored. If the child or its host dies first, Redis hands the
messages to another worker after the visibility timeout, as it does for Celery's own; the sweep
(``worker.sweep``) resends any whose job was running. Celery's own task records do not list the
jobs taken this way: the job store does (``nmt status``).
"""
from __future__ import annotations

import logging
import time
from typing import Any

from queue_config.names import TRANSLATE_TASK

log = logging.getLogger(__name__)
_POLL = 0.005  # seconds between looks at an empty queue while a batch waits to fill

_connection: Any = None  # this worker child's own connection (made after the fork)


class Taken:
    """One message taken from the batch queue: its job payload, and ack/requeue."""

    def __init__(self, message: Any) -> None:
        self.message = message

    @property
    def is_job(self) -> bool:
        return (self.message.headers or {}).get("task") == TRANSLATE_TASK

    def payload(self) -> Any:
        """The job request the message carries (Celery's protocol 2 body: [args, kwargs, embed])."""
        body = self.message.decode()
        return body[0][0] if isinstance(body, list) and body and isinstance(body[0], list) and body[0] else body

    def ack(self) -> None:
        self.message.ack()

    def requeue(self) -> None:
        self.message.requeue()


def ack_all(taken: list[Taken]) -> None:
    """Acknowledge messages one ``take`` took, in one round trip."""
    if taken:
        taken[0].message.channel.ack_many([item.message for item in taken])


def take(app: Any, queue: str, limit: int, wait: float) -> list[Taken]:
    """Up to ``limit`` messages from ``queue``, waiting at most ``wait`` seconds for them to come;
    none on a broker error (the batch then holds only the job Celery delivered)."""
    global _connection
    if limit <= 0:
        return []
    taken: list[Taken] = []
    deadline = time.monotonic() + wait
    try:
        if _connection is None:
            _connection = app.connection_for_read()
        channel = _connection.default_channel
        while True:
            taken += [Taken(message) for message in channel.take(queue, limit - len(taken))]
            if len(taken) >= limit or time.monotonic() >= deadline:
                break
            time.sleep(_POLL)
    except Exception as exc:  # noqa: BLE001 - what was taken stays unacknowledged; Redis hands it out again
        log.warning("could not take more jobs from %s for a batch: %s", queue, exc)
        _connection = None
    return taken
