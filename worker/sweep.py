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

The same worker also removes results past ``NMT_RESULT_EXPIRES`` from the result store
(``NMT_RESULT_STORE``: files or PostgreSQL rows; readers already skip them) at most every
``EXPIRE_SECONDS``, as Redis removes its own expired keys.
"""
from __future__ import annotations

import logging
import os
import socket
import threading
import time
from typing import Any, Callable

import redis

from queue_config.celery_config import RESTORE_INTERVAL
from queue_config.jobstore import FINAL_STATES, JobStore
from queue_config.names import KEY_PREFIX
from queue_config.settings import QueueSettings

from . import metrics

log = logging.getLogger(__name__)
LOCK = f"{KEY_PREFIX}:sweep:lock"
MARGIN = 20  # seconds beyond a redelivery's start before a scope counts as lost
EXPIRE_SECONDS = 600  # at most this long between removals of expired results from the result store


def stale_after(settings: QueueSettings) -> float:
    """Seconds without a heartbeat after which a scope's message counts as lost: the visibility
    timeout plus one restore interval (when Redis hands a message it still holds to another
    worker) plus a margin for that worker to start it (120 s by default)."""
    return settings.visibility_timeout + RESTORE_INTERVAL + MARGIN


def sweep_once(store: JobStore, settings: QueueSettings, send: Callable[[dict[str, Any]], None],
               now: float | None = None) -> dict[str, int]:
    """One pass: re-send or fail what is lost, forget what ended. Returns counts by action."""
    now = time.time() if now is None else now
    after = stale_after(settings)
    counts = {"resent": 0, "failed": 0, "forgotten": 0, "alive": 0}
    for job_id, scope in store.idle(now - after):
        state = store.status(job_id).state
        if state in FINAL_STATES or state == "unknown":
            store.deactivate(job_id, scope)
            counts["forgotten"] += 1
            continue
        if store.lease_held(job_id, scope):  # someone runs it; its heartbeat will say so again
            store.touch(job_id, scope, now)
            counts["alive"] += 1
            continue
        message = store.message(job_id, scope)
        resends = store.count_resend(job_id, scope)
        if message is None or resends > settings.max_attempts:
            why = ("its task message is gone" if message is None else
                   f"it was sent again {resends - 1} times after its worker stopped reporting, and never finished")
            store.fail(job_id, f"job lost: its {scope} task stopped without a live worker and {why} "
                               f"(NMT_MAX_ATTEMPTS={settings.max_attempts}); submit it again")
            store.deactivate(job_id, scope)
            metrics.record_failure("lost")
            counts["failed"] += 1
            continue
        send(message)
        store.touch(job_id, scope, now + after * (2 ** (resends - 1) - 1))  # the next re-send waits twice as long
        log.warning("job %s: %s had no live worker for %.0f s; its message was sent again (%d of %d)",
                    job_id, scope, after, resends, settings.max_attempts)
        counts["resent"] += 1
    return counts


class Sweeper:
    """A daemon thread in a worker parent: every ``settings.sweep_seconds``, if this process wins
    the fleet's lock for the interval, run ``sweep_once``."""

    def __init__(self, store: JobStore, settings: QueueSettings, send: Callable[[dict[str, Any]], None]) -> None:
        self.store, self.settings, self.send = store, settings, send
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
                    counts = sweep_once(self.store, self.settings, self.send)
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
