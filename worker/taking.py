"""Taking more small jobs off the broker than Celery delivered: batches across jobs.

Celery hands a worker child one message at a time (prefetch 1, late acks). When the child gets a
small plain-text job, it takes more messages from the pair's batch queue itself
(``worker.transport.Channel.take``: up to a count in one round trip, each unacknowledged as
``basic_get`` leaves one, in kombu's unacked set until its job is done) until the batch holds
``NMT_BATCH_JOBS`` jobs or ``NMT_BATCH_CHARS`` characters of text, waiting at most
``NMT_BATCH_WAIT_MS`` for more while the queue is empty, and decodes all their sentences together
(``worker.jobs.run_batch``). The character budget sizes a batch by its work rather than its job
count: a batch of one-sentence jobs holds many of them, one of ten-sentence jobs fewer, so that
other workers of a fleet get their share of a burst. Each round asks for as many jobs as the
text per job seen so far says will fill the budget, at most twice as many as the batch holds
(a batch overshoots its budget by a factor of about two at most when job sizes change).

The taken messages are acknowledged together (``ack_all``), only after their jobs' results are
stored. If the child or its host dies first, Redis hands the messages to another worker after the
visibility timeout, as it does for Celery's own; the sweep (``worker.sweep``) resends any whose
job was running. Celery's own task records do not list the
jobs taken this way: the job store does (``nmt status``).

With RabbitMQ (``amqp://``) the same loop takes with ``basic_get`` on the child's own connection
(``worker.transport.AmqpChannel``), which sends heartbeats while the child decodes: the messages
stay unacknowledged on that connection until their jobs are done, and RabbitMQ hands them to
another worker as soon as the connection closes (the child or its host died). RabbitMQ's
``consumer_timeout`` covers them too: it closes the channel, but takes the messages back only once
the child answers the close, on its next take or acknowledgement (docs/scaling.md). A channel that
cannot take is said once in the log, at error level: each job then runs alone.
"""
from __future__ import annotations

import logging
import math
import time
from functools import cached_property
from typing import Any

import redis
from amqp.exceptions import AMQPError

from queue_config.celery_config import AMQP_HEARTBEAT
from queue_config.names import TRANSLATE_TASK
from queue_config.settings import is_amqp

log = logging.getLogger(__name__)
_POLL = 0.005  # seconds between looks at an empty queue while a batch waits to fill
TRANSIENT = (redis.ConnectionError, redis.TimeoutError, OSError, AMQPError)

class Taken:
    """One message taken from the batch queue: its job payload, and ack/requeue."""

    def __init__(self, message: Any) -> None:
        self.message = message

    @property
    def is_job(self) -> bool:
        return (self.message.headers or {}).get("task") == TRANSLATE_TASK

    def payload(self) -> Any:
        """The job request the message carries (Celery's protocol 2 body: [args, kwargs, embed])."""
        return self._payload

    @cached_property
    def _payload(self) -> Any:
        body = self.message.decode()
        return body[0][0] if isinstance(body, list) and body and isinstance(body[0], list) and body[0] else body

    @property
    def chars(self) -> int:
        """Characters of the job's text (0 for a message that is not a readable job)."""
        try:
            text = self.payload().get("text") if self.is_job else None
        except Exception:  # noqa: BLE001 - a malformed message fails its job later (worker.tasks)
            return 0
        return len(text) if isinstance(text, str) else 0

    def ack(self) -> None:
        if self._live("acknowledged"):
            self.message.ack()

    def requeue(self) -> None:
        if self._live("requeued"):
            self.message.requeue()

    def _live(self, what: str) -> bool:
        """Whether the message's channel is open: a closed one gave back what it held, and acting
        through it would open a new pool on it."""
        if self.message.channel.closed:
            log.warning("a taken message was not %s: its channel closed and gave it back", what)
            return False
        return True


def ack_all(taken: list[Taken]) -> None:
    """Acknowledge messages one ``take`` took, in one round trip (never through a closed channel).
    A broker error is logged, not raised: the jobs' results are stored already, so the messages
    Redis hands out again find their jobs done."""
    if not taken:
        return
    try:
        taken[0].message.channel.ack_many([item.message for item in taken])
    except TRANSIENT as exc:
        log.warning("could not acknowledge %d taken message(s) (%s): they come back after the visibility "
                    "timeout and find their jobs done", len(taken), exc)


class Taker:
    """Takes messages for batches over a worker child's own broker connection (made on first use,
    after the fork, and made again after a broker error)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.connection: Any = None
        self._beating: Any = None  # the channel whose heartbeats a thread sends
        self._said_cannot_take = False

    def take(self, queue: str, limit: int, wait: float, budget: int = 0, held: int = 0) -> list[Taken]:
        """Up to ``limit`` messages from ``queue``, stopping once their jobs' text and the ``held``
        characters of the job in hand reach ``budget`` characters (0: no budget), waiting at most
        ``wait`` seconds for more while the queue is empty. On a broker error, what was taken so far
        (the batch may hold only the job Celery delivered)."""
        if limit <= 0:
            return []
        taken: list[Taken] = []
        chars = held
        deadline = time.monotonic() + wait
        try:
            channel = self._channel()
            if not hasattr(channel, "take"):
                if not self._said_cannot_take:
                    self._said_cannot_take = True
                    log.error("the broker's channels (%s) cannot take messages for batches: every job runs alone "
                              "(NMT_BATCH_JOBS has no effect)", type(channel).__module__ + "." + type(channel).__name__)
                return []
            while True:
                size = _round_size(limit - len(taken), budget, chars, 1 + len(taken))
                got = [Taken(message) for message in channel.take(queue, size)]
                taken += got
                chars += sum(item.chars for item in got)
                if len(taken) >= limit or (budget and chars >= budget):
                    break
                if not got:  # the queue is empty: wait for more until the deadline
                    if time.monotonic() >= deadline:
                        break
                    time.sleep(_POLL)
        except Exception as exc:  # noqa: BLE001 - what was taken stays unacknowledged; Redis hands it out again
            log.warning("could not take more jobs from %s for a batch: %s", queue, exc)
            self.connection = None
        return taken

    def _channel(self) -> Any:
        """The channel of this child's own broker connection, made on first use: over RabbitMQ with
        heartbeats, sent from a thread (``AmqpChannel.keep_alive``) while the child decodes. kombu
        makes the connection again by itself, with a new channel, when it finds it lost (a heartbeat
        that could not be sent while the broker was down ends the thread and marks it so): the new
        channel gets a heartbeat thread of its own, or the broker would close it two heartbeats later
        and requeue what it took."""
        if self.connection is None:
            amqp = is_amqp(self.app.conf.broker_url or "")
            self.connection = self.app.connection_for_read(**({"heartbeat": AMQP_HEARTBEAT} if amqp else {}))
        channel = self.connection.default_channel
        if channel is not self._beating and hasattr(channel, "keep_alive"):
            channel.keep_alive(AMQP_HEARTBEAT / 3)
            self._beating = channel
        return channel

    def close(self) -> None:
        """Give back what the connection still holds (kombu requeues it)."""
        if self.connection is not None:
            self.connection.release()
            self.connection = None
            self._beating = None


def _round_size(room: int, budget: int, chars: int, jobs: int) -> int:
    """How many messages one round of ``take`` asks for: ``room`` left for, without a budget; else
    as many as the ``chars`` of the ``jobs`` held so far say the rest of the budget holds, at least
    one and at most twice as many as are held."""
    if not budget:
        return room
    per_job = max(1.0, chars / jobs)
    return max(1, min(room, math.ceil((budget - chars) / per_job), 2 * jobs))
