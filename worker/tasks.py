"""The Celery app and its tasks: ``celery -A worker worker`` (``worker.app`` resolves here lazily).

Tasks are thin: parse the message, guard delivery (attempt cap, lease), call ``worker.jobs``.
Translators load lazily in the worker child on first use, never at import or in the parent:
ONNX Runtime sessions must not cross a fork.
"""
from __future__ import annotations

import functools
import logging
import os
import socket
import threading
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum
from typing import Any, Iterator

import redis
from celery import Celery, Task, signals
from celery.exceptions import SoftTimeLimitExceeded
from celery.worker.consumer import Consumer as CeleryConsumer
from kombu import Exchange, Queue

from queue_config.celery_config import QUORUM, celery_config
from queue_config.connection import is_sentinel
from queue_config.jobstore import INPUT_FAILURE, Delivery, Ending, JobStore, chunk_scope
from queue_config.messages import JobRequest, MessageError, batchable
from queue_config.names import CHUNK_PRIORITY, CHUNK_TASK, TRANSLATE_TASK, batch_queue_for, chunk_queue_for, queue_for
from queue_config.settings import QueueSettings, load_settings, redacted_text, secrets_of
from worker.engine.bundle import BundleError

from . import metrics
from .jobs import (Completed, InputError, JobError, Runtime, ServedModel, reported, run_batch, run_chunk, run_document,
                   served_models)
from .sweep import Sweeper
from .taking import Taken, Taker, ack_all

log = logging.getLogger(__name__)
TRANSIENT = (redis.ConnectionError, redis.TimeoutError)

app = Celery("nmt")


class Consumer(CeleryConsumer):
    """Celery's worker consumer without its native delayed delivery step, which this project never
    uses over RabbitMQ (its exchanges are direct: a countdown is held by the worker,
    ``queue_config.celery_config.amqp_config``). The step declared delay exchanges and queues on
    every broker of a failover list at each start and reconnect, and a broker of the list that was
    down held the worker back about 17 s (three retries) before it consumed."""

    class Blueprint(CeleryConsumer.Blueprint):
        default_steps = [step for step in CeleryConsumer.Blueprint.default_steps
                         if not step.endswith(":DelayedDelivery")]


@functools.cache
def settings() -> QueueSettings:
    """The NMT_* settings, read when first needed (importing this module reads nothing)."""
    return load_settings()


@functools.cache
def served() -> dict[str, ServedModel]:
    """The bundles this worker serves (their manifests are read on first use)."""
    return served_models(settings())


def served_pairs() -> list[str]:
    return sorted({pair for m in served().values() for pair in m.pairs})


def _configuration() -> dict[str, Any]:
    """Celery's configuration, made when Celery first needs it (when the worker starts, or a task
    is sent) rather than at import."""
    s = settings()
    conf = celery_config(s)
    if s.amqp_broker:
        conf["broker_transport"] = "worker.transport:AmqpTransport"  # RabbitMQ, with channels that take batches
        conf["worker_consumer"] = f"{__name__}:Consumer"  # no native delayed delivery step (unused)
    elif s.broker_url.startswith(("redis://", "rediss://")):
        conf["broker_transport"] = "worker.transport:Transport"  # drops poison items instead of dying on them
    elif is_sentinel(s.broker_url):
        conf["broker_transport"] = "worker.transport:SentinelTransport"  # the same, through the sentinels
    if s.amqp_broker:
        pass  # no Celery result backend: the job store is the only record (queue_config.celery_config.amqp_config)
    elif s.backend_url.startswith(("redis://", "rediss://")):
        conf["result_backend"] = f"worker.backend:ReasonOnlyRedisBackend+{s.backend_url}"  # no tracebacks stored
    elif is_sentinel(s.backend_url):
        conf["result_backend"] = f"worker.backend:ReasonOnlySentinelBackend+{s.backend_url}"
    # With no -Q, a worker consumes the queues of the language pairs its bundles serve.
    # Each pair also has a batch queue for small plain-text jobs (worker.taking), and with RabbitMQ a
    # chunk queue (its quorum queues have no priorities), all three durable quorum queues.
    if s.amqp_broker:
        conf["task_queues"] = [Queue(name, Exchange(name, "direct"), routing_key=name, queue_arguments=QUORUM)
                               for pair in served_pairs()
                               for name in (queue_for(*pair.split("-")), batch_queue_for(*pair.split("-")),
                                            chunk_queue_for(*pair.split("-")))]
    else:
        conf["task_queues"] = [Queue(name(*pair.split("-"))) for pair in served_pairs()
                               for name in (queue_for, batch_queue_for)]
    # Retry limits from the settings, set on the job tasks as they are bound to the app.
    retries = {"max_retries": s.max_retries, "retry_backoff_max": s.retry_backoff_max}
    conf["task_annotations"] = {TRANSLATE_TASK: retries, CHUNK_TASK: retries}
    return conf


app.add_defaults(_configuration)


class Verdict(Enum):
    RUN = "run"  # lease held, attempt counted, scope active
    BUSY = "busy"  # a live worker holds the lease: try again later
    ENDED = "ended"  # the job already ended: report its state
    FAILED = "failed"  # delivered too often: the job is failed


@dataclass(frozen=True)
class Admitted:
    """What one delivery of a job scope does (``_admit``)."""
    verdict: Verdict
    detail: str = ""  # ENDED: the job's state; FAILED: the reason


class InvalidJobError(ValueError):
    """The task's message is malformed or the job cannot be done; the job (if identifiable) fails."""


class JobTask(Task):
    """Base task: one lazily built ``Runtime`` and ``Taker`` per worker child."""

    _runtime: Runtime | None = None
    _taker: Taker | None = None
    pool_children = 1  # worker processes sharing this host's cores (set in the worker parent before it forks)

    @property
    def runtime(self) -> Runtime:
        if JobTask._runtime is None:
            store = JobStore.for_settings(settings())
            JobTask._runtime = Runtime(settings(), store, served(), JobTask.pool_children)
        return JobTask._runtime

    @property
    def taker(self) -> Taker:
        if JobTask._taker is None:
            JobTask._taker = Taker(app)
        return JobTask._taker


RETRY = dict(bind=True, base=JobTask, autoretry_for=TRANSIENT, retry_backoff=True, retry_jitter=True,
             acks_late=True,
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
    if settings().batch_jobs > 1 and batchable(request, settings().batch_bytes):
        return _batch(self, request, _job_message(payload, batch_queue_for(request.src, request.tgt)))
    return _guarded(self, request.job_id, "document", _job_message(payload, queue_for(request.src, request.tgt)),
                    lambda: run_document(self.runtime, request, _send_chunks(store, request)))


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
    return _guarded(self, job_id, chunk_scope(index), message, lambda: run_chunk(self.runtime, job_id, index, plan))


def _job_message(payload: Any, queue: str) -> dict[str, Any]:
    """A document job's task message, as sent to ``queue`` (kept while it runs, for the sweep)."""
    return {"task": TRANSLATE_TASK, "args": [payload], "queue": queue}


def _chunk_message(job_id: str, index: int, src: str, tgt: str) -> dict[str, Any]:
    """The message of one chunk task. Chunks wait below whole documents: a small job sent after a
    big one is taken before the big one's remaining chunks (Redis: a lower priority step of the
    pair's queue; RabbitMQ: the pair's chunk queue, of which a worker holds at most its prefetch)."""
    if settings().amqp_broker:
        return {"task": CHUNK_TASK, "args": [job_id, index], "queue": chunk_queue_for(src, tgt)}
    return {"task": CHUNK_TASK, "args": [job_id, index], "queue": queue_for(src, tgt), "priority": CHUNK_PRIORITY}


def _send(message: dict[str, Any], connection: Any = None) -> None:
    app.send_task(message["task"], args=message["args"], queue=message["queue"], priority=message.get("priority"),
                  connection=connection)


def _send_chunks(store: JobStore, request: JobRequest):
    """The sender of a document's chunks: each chunk is marked queued with its message, all in one
    write, before any is sent (``worker.sweep`` sends one again if the broker loses it before a
    worker admits it; admission removes the mark)."""
    def send(job_id: str, indices: list[int]) -> None:
        messages = {chunk_scope(index): _chunk_message(job_id, index, request.src, request.tgt) for index in indices}
        store.mark_queued(job_id, messages)
        for message in messages.values():
            _send(message)
    return send


def _guarded(task: JobTask, job_id: str, scope: str, message: dict[str, Any], work) -> dict[str, Any]:
    """Run ``work`` once per job scope: skip finished jobs, cap deliveries, hold a lease, and keep
    the scope's ``message`` in the job store's active set while it runs (``worker.sweep`` sends it
    again if the scope stops with no live worker and its message is gone)."""
    store = task.runtime.store
    owner = _owner()
    admitted = _admit(store, [Delivery(job_id, scope, message)], owner)[0]
    if admitted.verdict is not Verdict.RUN:
        return _not_run(task, job_id, admitted)
    keep_active = False
    try:
        with _heartbeat(store, [(job_id, scope)], owner):
            return work()
    except TRANSIENT:
        keep_active = True  # if the retry cannot be published either, the sweep sends the message again
        raise  # Celery retries these (the lease and the attempt count stay honest)
    except Exception as exc:  # noqa: BLE001 - every other failure fails the job with its reason, never hangs it
        raise InvalidJobError(_failed(store, job_id, scope, exc)) from None
    finally:
        store.end([Ending(job_id, scope, keep_active=keep_active)], owner)


def _owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def _admit(store: JobStore, deliveries: list[Delivery], owner: str) -> list[Admitted]:
    """Whether each delivery of a job scope runs, all decided in one round trip."""
    admissions = store.admit(deliveries, owner, settings().lease_seconds, settings().max_attempts)
    return [Admitted(Verdict.FAILED, _give_up(store, delivery, admission.attempts)) if admission.state == "over"
            else Admitted(Verdict(admission.state)) if admission.state in ("run", "busy")
            else Admitted(Verdict.ENDED, admission.state)
            for delivery, admission in zip(deliveries, admissions)]


def _not_run(task: JobTask, job_id: str, admitted: Admitted) -> dict[str, Any]:
    """A delivery that does not run: retried later, failed, or answered with its ended job's state."""
    if admitted.verdict is Verdict.BUSY:  # another worker runs this right now (a redelivery while it is alive)
        raise task.retry(countdown=settings().lease_seconds, max_retries=None)
    if admitted.verdict is Verdict.FAILED:
        raise InvalidJobError(admitted.detail)  # a FAILURE in Celery and Flower too, not a success
    return {"job_id": job_id, "state": admitted.detail, "redelivered": True}


def _give_up(store: JobStore, delivery: Delivery, attempts: int) -> str:
    """Fail a job whose scope was delivered ``attempts`` times, more than NMT_MAX_ATTEMPTS; the reason."""
    error = (f"job failed: its {delivery.scope} task was delivered {attempts - 1} times and its worker died each "
             f"time (killed, or out of memory?); giving up after NMT_MAX_ATTEMPTS={settings().max_attempts}")
    store.fail(delivery.job_id, error)
    metrics.record_failure("attempt_cap")
    return error


def _failure(job_id: str, scope: str, exc: Exception) -> tuple[str, str]:
    """The reason a job fails for ``exc``, and the failure's metric label."""
    if isinstance(exc, (JobError, MessageError, BundleError)):
        return str(exc), "invalid_job"
    if isinstance(exc, SoftTimeLimitExceeded):
        return f"job exceeded the soft time limit of {settings().soft_time_limit} s (NMT_SOFT_TIME_LIMIT)", "time_limit"
    # a bug or an input nothing above foresaw: the job fails, never hangs
    log.error("job %s (%s) failed unexpectedly", job_id, scope, exc_info=exc)
    return f"job failed in the worker: {type(exc).__name__}: {str(exc)[:300]}", "worker_error"


def _failed(store: JobStore, job_id: str, scope: str, exc: Exception) -> str:
    """Fail the job for ``exc`` (counted once) and return the reason it is failed with."""
    if isinstance(exc, InvalidJobError):
        return str(exc)
    error, label = _failure(job_id, scope, exc)
    if store.fail(job_id, error, INPUT_FAILURE if isinstance(exc, InputError) else ""):
        metrics.record_failure(label)
    return error


def _batch(task: JobTask, request: JobRequest, message: dict[str, Any]) -> dict[str, Any]:
    """The job Celery delivered, with more taken from the pair's batch queue (``worker.taking``:
    up to NMT_BATCH_JOBS jobs or NMT_BATCH_CHARS characters in all), their sentences decoded together. The jobs are admitted together,
    ended together, and then the messages taken for them acknowledged together (one round trip
    each); each job is still skipped, leased, failed and finished on its own."""
    store, owner = task.runtime.store, _owner()
    taken = task.taker.take(batch_queue_for(request.src, request.tgt), settings().batch_jobs - 1, settings().batch_wait_ms / 1000,
                 settings().batch_chars, len(request.text or ""))
    entries = [(request, message, None), *_taken_jobs(store, taken)]
    states = _admit(store, [Delivery(job.job_id, "document", job_message) for job, job_message, _ in entries], owner)
    admitted, first = [], Admitted(Verdict.RUN)
    for (job, _, item), state in zip(entries, states):
        if state.verdict is Verdict.RUN:
            admitted.append((job, item))
        elif item is None:
            first = state
        elif state.verdict is Verdict.BUSY:
            item.requeue()
        else:
            item.ack()
    outcomes = _run_admitted(task, admitted, owner)
    if first.verdict is not Verdict.RUN:
        return _not_run(task, request.job_id, first)
    outcome = outcomes[request.job_id]
    if isinstance(outcome, Exception):
        raise outcome
    return outcome | {"batched_jobs": len(admitted)}


def _taken_jobs(store: JobStore, taken: list[Taken]) -> list[tuple[JobRequest, dict[str, Any], Taken]]:
    """The job requests of messages taken for a batch, with the message each keeps while it runs."""
    jobs = []
    for item in taken:
        payload = None
        try:
            if not item.is_job:
                item.requeue()  # not a job message: left for Celery to deal with
                continue
            payload = item.payload()
            request = JobRequest.from_json(payload)
        except Exception as exc:  # noqa: BLE001 - a malformed message fails its job (if it names one) and is dropped
            job_id = payload.get("job_id") if isinstance(payload, dict) else None
            if isinstance(job_id, str) and job_id:
                store.fail(job_id, f"malformed job message: {exc}")
                metrics.record_failure("malformed_message")
            item.ack()
            continue
        jobs.append((request, _job_message(payload, batch_queue_for(request.src, request.tgt)), item))
    return jobs


def _run_admitted(task: JobTask, admitted: list[tuple[JobRequest, Taken | None]], owner: str) -> dict[str, Any]:
    """Decode the admitted jobs of a batch together, end them all in one round trip (each result
    or failure stored, leases released), and only then acknowledge the messages taken for them.
    Returns ``{job id: summary, or the InvalidJobError that failed it}``."""
    store, jobs = task.runtime.store, [job for job, _ in admitted]
    try:
        with _heartbeat(store, [(job.job_id, "document") for job in jobs], owner):
            outcomes = run_batch(task.runtime, jobs, functools.partial(_send_chunks, store))
    except TRANSIENT:
        # Nothing is acknowledged: Redis hands the taken messages out again, and the jobs stay
        # active for the sweep in case the retry of the delivered one cannot be published.
        store.end([Ending(job.job_id, "document", keep_active=True) for job in jobs], owner)
        raise
    except Exception as exc:  # noqa: BLE001 - run_batch fails jobs one by one; anything else fails them all
        outcomes = {job.job_id: exc for job in jobs}
    failures = {job_id: _failure(job_id, "document", outcome) for job_id, outcome in outcomes.items()
                if isinstance(outcome, Exception)}
    endings = [_ending(job.job_id, outcomes[job.job_id], failures.get(job.job_id)) for job in jobs]
    summaries = {job.job_id: _summary(outcomes[job.job_id], failures.get(job.job_id), took)
                 for job, took in zip(jobs, store.end(endings, owner))}
    ack_all([item for _, item in admitted if item is not None])
    return summaries


def _ending(job_id: str, outcome: Completed | dict[str, Any] | Exception, failure: tuple[str, str] | None) -> Ending:
    """How a batched job's document scope ends: with its failure (reason, label), with its result,
    or with what its work stored itself (a job run as a document of its own)."""
    if failure is not None:
        return Ending(job_id, "document", error=failure[0],
                      failure=INPUT_FAILURE if isinstance(outcome, InputError) else "")
    if isinstance(outcome, Completed):
        return Ending(job_id, "document", result=outcome.payload)
    return Ending(job_id, "document")


def _summary(outcome: Completed | dict[str, Any] | Exception, failure: tuple[str, str] | None, took: bool) -> Any:
    """A batched job's summary once it has ended, or the InvalidJobError that failed it; counted in
    the metrics if ``took`` (its result or failure was stored by this delivery)."""
    if failure is not None:
        if took:
            metrics.record_failure(failure[1])
        return InvalidJobError(failure[0])
    if isinstance(outcome, Completed):
        return reported(outcome, took)
    return outcome


@contextmanager
def _heartbeat(store: JobStore, scopes: list[tuple[str, str]], owner: str) -> Iterator[None]:
    """Renew the leases of the (job id, scope)s, and report them alive, every third of the lease
    while the jobs run (one round trip for all)."""
    stop = threading.Event()

    def renew() -> None:
        while not stop.wait(settings().lease_seconds / 3):
            try:
                store.keep_alive(scopes, owner, settings().lease_seconds)
            except TRANSIENT:
                log.warning("could not renew the leases of %d job scope(s), %s first", len(scopes), scopes[0])

    thread = threading.Thread(target=renew, name=f"lease-{scopes[0][0] if scopes else 'none'}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=5)


class _Redacted(logging.Filter):
    """Keeps the settings' passwords out of the worker's log: redis-py's errors print each Sentinel
    connection with its password (``MasterNotFoundError``), and Celery logs them with their
    traceback each time the consumer reconnects (``queue_config.settings.redacted_text``)."""

    def filter(self, record: logging.LogRecord) -> bool:
        secrets = secrets_of(settings())
        message = record.getMessage()
        clean = redacted_text(message, secrets)
        if clean != message:
            record.msg, record.args = clean, None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redacted_text(record.exc_text, secrets)
        return True


@signals.after_setup_logger.connect
@signals.after_setup_task_logger.connect
def _redact_logs(logger: logging.Logger | None = None, **_: Any) -> None:
    for handler in logger.handlers if logger is not None else ():
        if not any(isinstance(f, _Redacted) for f in handler.filters):
            handler.addFilter(_Redacted())


@signals.worker_init.connect
def _record_concurrency(sender: Any = None, **_: Any) -> None:
    """In the worker parent, before the pool forks: how many children will share the host's cores
    (each child derives its ONNX Runtime threads from it when NMT_THREADS is 0)."""
    concurrency = getattr(sender, "concurrency", None)
    JobTask.pool_children = concurrency if isinstance(concurrency, int) and concurrency > 0 else 1  # "auto": unknown
    if settings().metrics_port:
        metrics.enable()  # before the fork: the children write their counters where the parent reads them


@signals.worker_ready.connect
def _announce(**_: Any) -> None:
    """In the worker parent: tell clients which language pairs are served (clients reject others
    at submit time), and start the sweep for jobs whose message is gone (``worker.sweep``)."""
    store = JobStore.for_settings(settings())
    try:
        store.announce_pairs(served_pairs())
        store.announce_models({m.name: ",".join(m.pairs) for m in served().values()})
    except TRANSIENT as exc:
        log.warning("could not announce served pairs: %s", exc)
    if settings().sweep_seconds:  # on RabbitMQ without the look for queued messages (worker.sweep)
        Sweeper(store, settings(), _resend).start()
    if settings().metrics_port:
        # Queue depths are read from Redis's lists: none with RabbitMQ (its own metrics have them).
        queues = [] if settings().amqp_broker else [q.name for q in app.conf.task_queues]
        metrics.serve(settings().metrics_port, settings().metrics_host, store.redis, queues,
                      {"models": ",".join(served()), "provider_setting": settings().provider})


def _resend(message: dict[str, Any]) -> None:
    """The sweep's sender (a thread in the worker parent): a connection of its own."""
    with app.connection_for_write() as connection:
        _send(message, connection)

