"""The fleet's sweep for work whose message is gone.

Late acks and Redis's visibility timeout redeliver the message of a job whose worker died. They
cannot when the message itself is lost: Redis crashed while the job ran (with AOF ``everysec`` the
last second of writes, an acknowledgement or a requeue among them, may be gone), or a retry could
not be published during an outage (Celery then rejects the message without requeueing it). Such a
job would stay "running" forever.

So every job scope a worker starts (the document, or one chunk) is kept in ``nmt:active`` with
the message that starts it (``JobStore.admit``), and the worker's heartbeat renews its time.
Every ``NMT_SWEEP_SECONDS`` one worker parent of the fleet (a lock decides which) looks for scopes
not reported alive for ``stale_after`` seconds, longer than any redelivery of a message Redis still
holds takes to start, whose lease nobody holds, and sends their messages again. A re-sent scope
waits twice as long before the next re-send (no queue floods with copies of a job stuck behind a
backlog); after ``NMT_MAX_ATTEMPTS`` re-sends its job fails with the reason. Copies are harmless:
a finished job or chunk is never run again, and a running one is guarded by its lease.

A job no worker has started can lose its message too: kombu pops it off the queue list (BRPOP) and
records it as unacknowledged in a second command, and a Redis master that dies between the two
(SIGKILL, a Sentinel failover, the AOF's last second) keeps the pop and loses the record. So the
client marks each job's document queued when it creates the job, with its message
(``JobStore.create``), and admission removes the mark. For marks older than ``stale_after`` the
sweep reads the pair's queue lists and kombu's ``unacked`` hash, and sends again the message of
every job it finds in neither (the same backoff and cap); those it finds wait ``stale_after`` for
the next look (not twice as long each time: their message can be lost whenever a worker pops it,
however long they have waited, and one read serves every job due). The read is bounded: with more than ``MAX_SCANNED_MESSAGES`` messages (or
``MAX_SCANNED_BYTES``) to read, the look waits until the backlog has drained below that.

A chunk's message can be lost the same way after its document task has fanned it out (and the
document's scope has ended, so nothing running stands for it). So the fan-out marks every chunk
queued with its message in one write before sending them (``JobStore.mark_queued``), admission
removes each mark, and the sweep treats a chunk's mark as a job's: while its job runs and its
results are not stored it looks for the chunk's message (matched by job id and index) and sends it
again if it is gone; past the cap the job fails, the reason naming the chunk.

The same worker also removes results past ``NMT_RESULT_EXPIRES`` from the result store
(``NMT_RESULT_STORE``: files or PostgreSQL rows; readers already skip them) at most every
``EXPIRE_SECONDS``, as Redis removes its own expired keys.
"""
from __future__ import annotations

import base64
import dataclasses
import json
import logging
import os
import socket
import threading
import time
from typing import Any, Callable

import redis
from kombu.transport import redis as kombu_redis

from queue_config.celery_config import RESTORE_INTERVAL
from queue_config.connection import redis_client
from queue_config.jobstore import FINAL_STATES, JobStore, QueuedScope, chunk_scope
from queue_config.names import CHUNK_TASK, KEY_PREFIX, TRANSLATE_TASK, batch_queue_for, queue_for, queue_lists
from queue_config.settings import QueueSettings

from . import metrics

log = logging.getLogger(__name__)
LOCK = f"{KEY_PREFIX}:sweep:lock"
MARGIN = 20  # seconds beyond a redelivery's start before a scope counts as lost
EXPIRE_SECONDS = 600  # at most this long between removals of expired results from the result store
# Bounds of one look for queued jobs' messages: above either, the look waits for the backlog to drain.
# 10,000 one-sentence messages are about 15 MB; the bytes bound caps a backlog of large documents.
MAX_SCANNED_MESSAGES = 10_000  # queue-list items plus unacknowledged messages
MAX_SCANNED_BYTES = 64 * 2 ** 20
SCAN_PAGE = 500  # items per LRANGE / HSCAN round trip
QUEUED_PER_PASS = 1_000  # queued jobs due for a look taken per pass, oldest first; the rest wait their turn
UNACKED = kombu_redis.Channel.unacked_key  # kombu's hash of delivered, unacknowledged messages


def stale_after(settings: QueueSettings) -> float:
    """Seconds without a heartbeat after which a scope's message counts as lost: the visibility
    timeout plus one restore interval (when Redis hands a message it still holds to another
    worker) plus a margin for that worker to start it (120 s by default)."""
    return settings.visibility_timeout + RESTORE_INTERVAL + MARGIN


def sweep_once(store: JobStore, settings: QueueSettings, send: Callable[[dict[str, Any]], None],
               now: float | None = None, broker: redis.Redis | None = None) -> dict[str, int]:
    """One pass: re-send or fail what is lost, forget what ended, first of running scopes, then of
    queued ones (their messages looked for on ``broker``, the broker's Redis; default: a client
    for ``settings.broker_url``, made only when a queued scope is due). Returns counts by action
    ("alive": left be, running or its message found, or the look put off by a long backlog)."""
    now = time.time() if now is None else now
    counts = {"resent": 0, "failed": 0, "forgotten": 0, "alive": 0}
    _sweep_running(store, settings, send, now, counts)
    _sweep_queued(store, settings, send, now, counts, broker)
    return counts


def _sweep_running(store: JobStore, settings: QueueSettings, send: Callable[[dict[str, Any]], None],
                   now: float, counts: dict[str, int]) -> None:
    for job_id, scope in store.idle(now - stale_after(settings)):
        state = store.status(job_id).state
        if state in FINAL_STATES or state == "unknown":
            store.deactivate(job_id, scope)
            counts["forgotten"] += 1
            continue
        if store.lease_held(job_id, scope):  # someone runs it; its heartbeat will say so again
            store.touch(job_id, scope, now)
            counts["alive"] += 1
            continue
        counts[_send_again(store, settings, send, job_id, scope, now, queued=False)] += 1


def _sweep_queued(store: JobStore, settings: QueueSettings, send: Callable[[dict[str, Any]], None],
                  now: float, counts: dict[str, int], broker: redis.Redis | None) -> None:
    after = stale_after(settings)
    due: list[QueuedScope] = []
    for queued in store.queued(now - after, limit=QUEUED_PER_PASS):
        if queued.waiting:
            due.append(queued)
            continue
        # Started since (the running scopes' sweep watches it now), a chunk a copy of its message
        # has stored, ended, or no record left.
        store.unqueue(queued.job_id, queued.scope, drop_message=queued.state in (*FINAL_STATES, "unknown"))
        counts["forgotten"] += 1
    if not due:
        return
    if settings.amqp_broker:
        # RabbitMQ's queues cannot be read without taking their messages, and it loses none it has
        # confirmed (durable quorum queues, publisher confirms; a dead consumer's are requeued): its
        # queued scopes are only forgotten once started or ended, above, never sent again.
        counts["alive"] += len(due)
        return
    queues = sorted({queue for q in due for queue in (queue_for(q.src, q.tgt), batch_queue_for(q.src, q.tgt))})
    held = held_scopes(broker if broker is not None else redis_client(settings, settings.broker_url), queues)
    if held is None:
        log.info("sweep: %d queued job scope(s) not checked: more than %d messages (or %d MiB) wait on %s",
                 len(due), MAX_SCANNED_MESSAGES, MAX_SCANNED_BYTES // 2 ** 20, ", ".join(queues))
        counts["alive"] += len(due)
        return
    # Found: waiting or delivered. Looked at again after ``after``, not later: a message is lost
    # when a worker pops it, so however long the job has waited, its loss is then found as soon.
    store.touch_queued([(q.job_id, q.scope) for q in due if (q.job_id, q.scope) in held], now)
    for queued in due:
        if (queued.job_id, queued.scope) in held:
            counts["alive"] += 1
        elif not store.is_queued(queued.job_id, queued.scope) or not _still_waiting(store, queued):
            counts["alive"] += 1  # a worker took it while the lists were read (or its job ended)
        else:
            counts[_send_again(store, settings, send, queued.job_id, queued.scope, now, queued=True)] += 1


def _still_waiting(store: JobStore, queued: QueuedScope) -> bool:
    """Whether a queued scope's message still has work to start, read again after the lists were."""
    return dataclasses.replace(queued, state=store.status(queued.job_id).state).waiting


def _send_again(store: JobStore, settings: QueueSettings, send: Callable[[dict[str, Any]], None],
                job_id: str, scope: str, now: float, queued: bool) -> str:
    """Send a lost scope's kept message again, each next look twice as far off ("resent"), or fail
    its job past ``NMT_MAX_ATTEMPTS`` re-sends or without a message ("failed"). Running and queued
    re-sends of a scope share one count."""
    after = stale_after(settings)
    message = store.message(job_id, scope)
    resends = store.count_resend(job_id, scope)
    if message is None or resends > settings.max_attempts:
        how = "message vanished from the broker before any worker started it" if queued else \
            "task stopped without a live worker"
        why = ("its task message is gone" if message is None else
               f"it was sent again {resends - 1} times and no worker ever started it" if queued else
               f"it was sent again {resends - 1} times after its worker stopped reporting, and never finished")
        store.fail(job_id, f"job lost: its {scope} {how} and {why} "
                           f"(NMT_MAX_ATTEMPTS={settings.max_attempts}); submit it again")
        if queued:
            store.unqueue(job_id, scope, drop_message=True)
        else:
            store.deactivate(job_id, scope)
        metrics.record_failure("lost")
        return "failed"
    send(message)
    at = now + after * (2 ** (resends - 1) - 1)  # the next re-send waits twice as long
    if queued:
        store.touch_queued([(job_id, scope)], at)
        log.warning("job %s: %s queued for %.0f s or more and its message is on no queue list and not delivered; "
                    "its message was sent again (%d of %d)", job_id, scope, after, resends, settings.max_attempts)
    else:
        store.touch(job_id, scope, at)
        log.warning("job %s: %s had no live worker for %.0f s; its message was sent again (%d of %d)",
                    job_id, scope, after, resends, settings.max_attempts)
    return "resent"


def held_scopes(broker: redis.Redis, queues: list[str]) -> set[tuple[str, str]] | None:
    """(job id, scope) of the document and chunk messages the broker holds: waiting on one of
    ``queues``' lists (every priority step) or delivered and not yet acknowledged (kombu's
    ``unacked`` hash). None when more than ``MAX_SCANNED_MESSAGES`` items (or ``MAX_SCANNED_BYTES``)
    would be read."""
    lists = [name for queue in queues for name in queue_lists(queue)]
    with broker.pipeline(transaction=False) as pipe:
        for name in lists:
            pipe.llen(name)
        pipe.hlen(UNACKED)
        if sum(pipe.execute()) > MAX_SCANNED_MESSAGES:
            return None
    scopes: set[tuple[str, str]] = set()
    count = size = 0
    for item in _items(broker, lists):
        count, size = count + 1, size + len(item)
        if count > MAX_SCANNED_MESSAGES or size > MAX_SCANNED_BYTES:  # the backlog grew while it was read
            return None
        scope = _scope_of(item)
        if scope is not None:
            scopes.add(scope)
    return scopes


def _items(broker: redis.Redis, lists: list[str]) -> Any:
    """Every item of ``lists``, then every unacknowledged message, a page per round trip. The lists
    are read from the head: a message pushed meanwhile shifts the rest on (read twice, never
    skipped), and one taken from the tail meanwhile is in ``unacked``, read last."""
    for name in lists:
        start = 0
        while True:
            page = broker.lrange(name, start, start + SCAN_PAGE - 1)
            yield from page
            if len(page) < SCAN_PAGE:
                break
            start += SCAN_PAGE
    for _, value in broker.hscan_iter(UNACKED, count=SCAN_PAGE):
        yield value


def _scope_of(item: bytes | str) -> tuple[str, str] | None:
    """The (job id, scope) of a document or chunk message (a queue item, or an unacknowledged
    [message, exchange, routing key]): from the arguments in its body, which every copy shares (a
    copy the sweep sent again has a task id of its own): a document's request, or a chunk's job id
    and index. None for another task or an item that is not a message."""
    try:
        envelope = json.loads(item)
        if isinstance(envelope, list):
            envelope = envelope[0]
        task = envelope["headers"]["task"]
        if task not in (TRANSLATE_TASK, CHUNK_TASK):
            return None
        body = envelope["body"]
        if envelope["properties"].get("body_encoding") == "base64":
            body = base64.b64decode(body)
        args = json.loads(body)[0]
        if task == CHUNK_TASK:
            job_id, index = args
            scope = chunk_scope(index) if isinstance(index, int) and not isinstance(index, bool) else None
        else:
            job_id, scope = args[0]["job_id"], "document"
    except (ValueError, KeyError, TypeError, IndexError, AttributeError):
        return None
    return (job_id, scope) if isinstance(job_id, str) and scope is not None else None


class Sweeper:
    """A daemon thread in a worker parent: every ``settings.sweep_seconds``, if this process wins
    the fleet's lock for the interval, run ``sweep_once``."""

    def __init__(self, store: JobStore, settings: QueueSettings, send: Callable[[dict[str, Any]], None]) -> None:
        self.store, self.settings, self.send = store, settings, send
        # Queue lists, read for queued jobs' messages (none to read on RabbitMQ: sweep_once never looks).
        self.broker = None if settings.amqp_broker else redis_client(settings, settings.broker_url)
        self.owner = f"{socket.gethostname()}:{os.getpid()}"
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="nmt-sweep", daemon=True)
        self._next_expiry = 0.0  # time.monotonic() of the next removal of expired results

    def start(self) -> "Sweeper":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        interval = self.settings.sweep_seconds
        while not self._stop.wait(interval):
            try:
                if self.store.redis.set(LOCK, self.owner, nx=True, ex=max(1, interval - 1)):
                    counts = sweep_once(self.store, self.settings, self.send, broker=self.broker)
                    if counts["resent"] or counts["failed"]:
                        log.warning("sweep: %s", counts)
                    self._expire_results()
            except (redis.ConnectionError, redis.TimeoutError) as exc:
                log.warning("sweep skipped: Redis unreachable (%s)", exc)
            except Exception:  # the sweep must never take the worker parent down
                log.exception("sweep failed")

    def _expire_results(self) -> None:
        """Remove the result store's expired results, at most every ``EXPIRE_SECONDS`` (or every
        ``NMT_RESULT_EXPIRES``, if shorter); a store that cannot be reached waits for the next time."""
        now = time.monotonic()
        if now < self._next_expiry:
            return
        self._next_expiry = now + min(EXPIRE_SECONDS, self.settings.result_expires)
        try:
            removed = self.store.results.expire()
        except (redis.ConnectionError, OSError) as exc:
            log.warning("expired results not removed: %s", exc)
            return
        if removed:
            log.info("sweep: removed %d expired results from the %s result store", removed, self.store.results.kind)
