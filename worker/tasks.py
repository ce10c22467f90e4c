"""The Celery app and its tasks: ``celery -A worker worker`` (``worker.app`` resolves here lazily).

Tasks are thin: parse the message, guard delivery (attempt cap, lease), call ``worker.jobs``.
Translators load lazily in the worker child on first use, never at import or in the parent:
ONNX Runtime sessions must not cross a fork.
"""
from __future__ import annotations

import logging
import os
import socket
import threading
import uuid
from contextlib import contextmanager
from typing import Any, Iterator

import redis
from celery import Celery, Task, signals
from celery.exceptions import SoftTimeLimitExceeded
from kombu import Queue

from queue_config.celery_config import celery_config
from queue_config.jobstore import JobStore
from queue_config.messages import JobRequest, MessageError
from queue_config.names import CHUNK_PRIORITY, CHUNK_TASK, TRANSLATE_TASK, queue_for
from queue_config.settings import load_settings

from .bundle import BundleError
from . import metrics
from .jobs import JobError, Runtime, run_chunk, run_document, served_models
from .sweep import Sweeper

log = logging.getLogger(__name__)
TRANSIENT = (redis.ConnectionError, redis.TimeoutError)

settings = load_settings()
MODELS = served_models(settings)
PAIRS = sorted({m.pair for m in MODELS.values()})
app = Celery("nmt")
app.conf.update(celery_config(settings))
if settings.broker_url.startswith(("redis://", "rediss://")):
    app.conf.broker_transport = "worker.transport:Transport"  # drops poison items instead of dying on them
if settings.backend_url.startswith(("redis://", "rediss://")):
    app.conf.result_backend = f"worker.results:ReasonOnlyRedisBackend+{settings.backend_url}"  # no tracebacks stored
# With no -Q, a worker consumes the queues of the language pairs its bundles serve.
app.conf.task_queues = [Queue(queue_for(*pair.split("-"))) for pair in PAIRS]


class InvalidJobError(ValueError):
    """The task's message is malformed or the job cannot be done; the job (if identifiable) fails."""


class JobTask(Task):
    """Base task: one lazily built ``Runtime`` per worker child."""

    _runtime: Runtime | None = None

    @property
    def runtime(self) -> Runtime:
        if JobTask._runtime is None:
            store = JobStore.from_url(settings.backend_url, settings.result_expires,
                                      socket_timeout=settings.socket_timeout)
            JobTask._runtime = Runtime(settings, store, MODELS)
        return JobTask._runtime


RETRY = dict(bind=True, base=JobTask, autoretry_for=TRANSIENT, retry_backoff=True, retry_jitter=True,
             retry_backoff_max=settings.retry_backoff_max, max_retries=settings.max_retries, acks_late=True,
             throws=(InvalidJobError,))  # expected failures: logged without a traceback


@app.task(name=TRANSLATE_TASK, **RETRY)
def translate_document(self: JobTask, payload: Any) -> dict[str, Any]:
    job_id = payload.get("job_id") if isinstance(payload, dict) else None
    store = self.runtime.store
    try:
        request = JobRequest.from_json(payload)
    except MessageError as exc:
        if isinstance(job_id, str) and job_id:
            store.fail(job_id, f"malformed job message: {exc}")
            metrics.record_failure("malformed_message")
        raise InvalidJobError(f"malformed job message: {exc}") from None
    message = {"task": TRANSLATE_TASK, "args": [payload], "queue": queue_for(request.src, request.tgt)}
    return _guarded(self, request.job_id, "document", message,
                    lambda: run_document(self.runtime, request, _send_chunk(request)))


@app.task(name=CHUNK_TASK, **RETRY)
def translate_chunk(self: JobTask, job_id: Any, index: Any) -> dict[str, Any]:
    # A chunk message changes its job only if the job's stored plan has that chunk: a stray or
    # forged message is refused without touching any job.
    if not isinstance(job_id, str) or isinstance(index, bool) or not isinstance(index, int):
        raise InvalidJobError(f"malformed chunk message: job_id={job_id!r}, index={index!r}")
    plan = self.runtime.store.plan(job_id)
    if plan is None or not 0 <= index < int(plan.get("chunks", 0)):
        raise InvalidJobError(f"chunk message refused: job {job_id!r} has no chunk {index}")
    message = _chunk_message(job_id, index, plan["request"]["src"], plan["request"]["tgt"])
    return _guarded(self, job_id, f"chunk-{index}", message, lambda: run_chunk(self.runtime, job_id, index, plan))


def _chunk_message(job_id: str, index: int, src: str, tgt: str) -> dict[str, Any]:
    """The message of one chunk task. Chunks wait below whole documents: a small job sent after a
    big one is taken before the big one's remaining chunks."""
    return {"task": CHUNK_TASK, "args": [job_id, index], "queue": queue_for(src, tgt), "priority": CHUNK_PRIORITY}


def _send(message: dict[str, Any], connection: Any = None) -> None:
    app.send_task(message["task"], args=message["args"], queue=message["queue"], priority=message.get("priority"),
                  connection=connection)


def _send_chunk(request: JobRequest):
    def send(job_id: str, index: int) -> None:
        _send(_chunk_message(job_id, index, request.src, request.tgt))
    return send


def _guarded(task: JobTask, job_id: str, scope: str, message: dict[str, Any], work) -> dict[str, Any]:
    """Run ``work`` once per job scope: skip finished jobs, cap deliveries, hold a lease, and keep
    the scope's ``message`` in the job store's active set while it runs (``worker.sweep`` sends it
    again if the scope stops with no live worker and its message is gone)."""
    store = task.runtime.store
    status = store.status(job_id)
    if status.finished:
        return {"job_id": job_id, "state": status.state, "redelivered": True}
    owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
    lease_key = f"{job_id}:{scope}"
    if not store.acquire_lease(lease_key, owner, settings.lease_seconds):
        # Another worker runs this right now (a redelivery while it is alive): try again later.
        raise task.retry(countdown=settings.lease_seconds, max_retries=None)
    keep_active = False
    try:
        attempts = store.attempt(job_id, scope)
        if attempts > settings.max_attempts:
            error = (f"job failed: its {scope} task was delivered {attempts - 1} times and its worker died each "
                     f"time (killed, or out of memory?); giving up after NMT_MAX_ATTEMPTS={settings.max_attempts}")
            store.fail(job_id, error)
            metrics.record_failure("attempt_cap")
            raise InvalidJobError(error)  # a FAILURE in Celery and Flower too, not a success
        store.activate(job_id, scope, message)
        with _heartbeat(store, job_id, scope, owner):
            return work()
    except InvalidJobError:
        raise
    except (JobError, MessageError, BundleError) as exc:
        if store.fail(job_id, str(exc)):
            metrics.record_failure("invalid_job")
        raise InvalidJobError(str(exc)) from None
    except SoftTimeLimitExceeded:
        error = f"job exceeded the soft time limit of {settings.soft_time_limit} s (NMT_SOFT_TIME_LIMIT)"
        if store.fail(job_id, error):
            metrics.record_failure("time_limit")
        raise InvalidJobError(error) from None
    except TRANSIENT:
        keep_active = True  # if the retry cannot be published either, the sweep sends the message again
        raise  # Celery retries these (the lease and the attempt count stay honest)
    except Exception as exc:  # a bug or an input nothing above foresaw: the job fails, never hangs
        log.exception("job %s (%s) failed unexpectedly", job_id, scope)
        error = f"job failed in the worker: {type(exc).__name__}: {str(exc)[:300]}"
        if store.fail(job_id, error):
            metrics.record_failure("worker_error")
        raise InvalidJobError(error) from None
    finally:
        if not keep_active:
            store.deactivate(job_id, scope)
        store.release_lease(lease_key, owner)


@contextmanager
def _heartbeat(store: JobStore, job_id: str, scope: str, owner: str) -> Iterator[None]:
    """Renew the lease, and report the scope alive, every third of the lease while the job runs."""
    stop = threading.Event()
    lease_key = f"{job_id}:{scope}"

    def renew() -> None:
        while not stop.wait(settings.lease_seconds / 3):
            try:
                store.renew_lease(lease_key, owner, settings.lease_seconds)
                store.touch(job_id, scope)
            except TRANSIENT:
                log.warning("could not renew the lease of %s", lease_key)

    thread = threading.Thread(target=renew, name=f"lease-{lease_key}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=5)


@signals.worker_init.connect
def _record_concurrency(sender: Any = None, **_: Any) -> None:
    """In the worker parent, before the pool forks: how many children will share the host's cores
    (each child derives its ONNX Runtime threads from it when NMT_THREADS is 0)."""
    from . import jobs

    concurrency = getattr(sender, "concurrency", None)
    jobs.POOL_CHILDREN = concurrency if isinstance(concurrency, int) and concurrency > 0 else 1  # "auto": unknown yet
    if settings.metrics_port:
        metrics.enable()  # before the fork: the children write their counters where the parent reads them


@signals.worker_ready.connect
def _announce(**_: Any) -> None:
    """In the worker parent: tell clients which language pairs are served (clients reject others
    at submit time), and start the sweep for jobs whose message is gone (``worker.sweep``)."""
    store = JobStore.from_url(settings.backend_url, settings.result_expires, socket_timeout=settings.socket_timeout)
    try:
        store.announce_pairs(PAIRS)
        store.announce_models({m.name: m.pair for m in MODELS.values()})
    except TRANSIENT as exc:
        log.warning("could not announce served pairs: %s", exc)
    if settings.sweep_seconds:
        Sweeper(store, settings, _resend).start()
    if settings.metrics_port:
        metrics.serve(settings.metrics_port, settings.metrics_host, store.redis, [q.name for q in app.conf.task_queues],
                      {"models": ",".join(MODELS), "provider_setting": settings.provider})


def _resend(message: dict[str, Any]) -> None:
    """The sweep's sender (a thread in the worker parent): a connection of its own."""
    with app.connection_for_write() as connection:
        _send(message, connection)

