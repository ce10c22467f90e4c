"""The Python client: submit documents to the Celery workers by task name, follow and collect jobs.

    client = TranslationClient(broker_url="redis://:secret@host:6379/0")
    job = client.submit(text="A man sees a dog.", src="en", tgt="de", options={"beam": 5})
    result = job.wait(timeout=60, progress=True)   # JobResult: text, segments (alignments), provenance

It never imports the worker (nor onnxruntime or numpy): requests are validated here with the same
message classes the worker uses, and job state is read from the Redis job store.
"""
from __future__ import annotations

import base64
import logging
import os
import time
import uuid
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import redis
from celery import Celery

from queue_config.celery_config import celery_config
from queue_config.glossary import read_glossary
from queue_config.jobstore import NO_SUCH_JOB, JobStatus, JobStore
from queue_config.messages import JobOptions, JobRequest, JobResult, MessageError, batchable
from queue_config.names import BINARY_FORMATS, TRANSLATE_TASK, batch_queue_for, queue_for
from queue_config.result_store import ResultStoreError
from queue_config.settings import QueueSettings, load_settings, redacted

log = logging.getLogger(__name__)
TRANSIENT = (redis.ConnectionError, redis.TimeoutError)


class ClientError(RuntimeError):
    """Base class of the client's errors."""


class UnknownModelError(ClientError, ValueError):
    """No worker has announced the requested model for the job's language pair."""


class UnknownLanguagePairError(ClientError, ValueError):
    """No worker has announced the requested language pair."""


class JobExistsError(ClientError, ValueError):
    """The job id is taken by a job still on record (queued, running or finished)."""


class JobFailedError(ClientError):
    """The job failed (or was cancelled); the message is the worker's error."""


class JobNotFoundError(ClientError):
    """Redis has no record of the job: never submitted, or expired (NMT_RESULT_EXPIRES)."""


class ResultUnavailableError(ClientError):
    """The job is done but its result cannot be read: deleted or expired, or kept in a result store
    this client does not use (its NMT_RESULT_STORE differs from the workers')."""


class JobNotFinishedError(ClientError):
    """``result()`` was asked of a job that has not finished."""


class Job:
    def __init__(self, client: "TranslationClient", job_id: str, name: str = "document") -> None:
        self.client = client
        self.id = job_id
        self.name = name

    def __repr__(self) -> str:
        return f"Job({self.id!r})"

    def status(self) -> JobStatus:
        return self.client.store.status(self.id)

    def result(self) -> JobResult:
        status = self.status()
        if status.state == "done":
            try:  # from Redis, or from the result store its reference names (NMT_RESULT_STORE)
                raw = self.client.store.result(self.id)
            except ResultStoreError as exc:
                raise ResultUnavailableError(str(exc)) from None
            if raw is None:
                raise ResultUnavailableError(f"job {self.id} is done but its result is gone: deleted, or expired "
                                             "(NMT_RESULT_EXPIRES)")
            return JobResult.from_json(raw)
        if status.state in ("failed", "cancelled", "unknown"):
            raise JobFailedError(f"job {self.id} {status.state}: {status.error}")
        raise JobNotFinishedError(f"job {self.id} is {status.state} ({status.done}/{status.total} segments)")

    def wait(self, timeout: float | None = None, progress: bool = False, poll: float = 0.2) -> JobResult:
        """Block until the job ends and return its result.

        Redis outages are ridden out: polling backs off (up to 5 s) until Redis answers again.
        ``JobNotFoundError`` when Redis has no record of the job, ``JobFailedError`` when it failed
        or was cancelled, and ``TimeoutError`` after ``timeout`` seconds, saying why it stopped:
        the broker unreachable, no worker consuming the job's queue, or the job still running.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        bar = None
        if progress:
            from tqdm import tqdm

            bar = tqdm(desc=self.name, unit="seg", total=0)
        delay, outage, status = poll, None, None
        try:
            while True:
                try:
                    status = self.status()
                    delay, outage = poll, None
                except TRANSIENT as exc:
                    outage = outage or exc
                    delay = min(delay * 2, 5.0)
                if status is not None and outage is None:
                    if bar is not None and status.total:
                        bar.total = status.total
                        bar.n = status.done
                        bar.refresh()
                    if status.state == "unknown":
                        raise JobNotFoundError(f"job {self.id}: {status.error}")
                    if status.finished:
                        return self.result()
                if deadline is not None and time.monotonic() > deadline:
                    raise TimeoutError(f"job {self.id}: gave up after {timeout:g} s: {self._why(status, outage)}")
                time.sleep(delay if deadline is None else max(0.0, min(delay, deadline - time.monotonic())))
        finally:
            if bar is not None:
                bar.close()

    def _why(self, status: JobStatus | None, outage: BaseException | None) -> str:
        """One line on why a job is not finished."""
        url = redacted(self.client.settings.backend_url)
        if outage is not None:
            return f"the broker at {url} is unreachable ({type(outage).__name__})"
        assert status is not None
        where = f"{status.done}/{status.total} segments" if status.total else "not started"
        if status.state == "queued":
            queue = self.client.queue_of(self.id)
            if queue and not self.client.consumers(queue):
                return f"still queued: no worker is consuming {queue} on {url}"
        return f"still {status.state} ({where})"

    def cancel(self) -> bool:
        """Cancel the job if it has not ended (False if it had); workers stop at their next checkpoint.
        ``JobNotFoundError`` when Redis has no record of the job, and then nothing is written."""
        cancelled = self.client.store.cancel(self.id)
        if cancelled is None:
            raise JobNotFoundError(f"job {self.id}: {NO_SUCH_JOB}")
        if cancelled:
            self.client.app.control.revoke(self.id)
        return cancelled


class TranslationClient:
    def __init__(self, broker_url: str | None = None, result_backend: str | None = None,
                 settings: QueueSettings | None = None) -> None:
        settings = settings or load_settings()
        if broker_url:
            settings = replace(settings, broker_url=broker_url)
        if result_backend:
            settings = replace(settings, result_backend=result_backend)
        self.settings = settings.validate()
        if not broker_url and "NMT_BROKER_URL" not in os.environ and settings.broker_url == QueueSettings.broker_url:
            log.warning("NMT_BROKER_URL is not set: using %s", settings.broker_url)
        self.app = Celery("nmt-client")
        self.app.conf.update(celery_config(self.settings))
        self.store = JobStore.for_settings(self.settings)  # plain Redis or through Sentinel

    def submit(self, *, src: str, tgt: str, text: str | bytes | None = None, path: str | Path | None = None,
               options: Mapping[str, Any] | JobOptions | None = None, name: str | None = None,
               job_id: str | None = None, model: str | None = None,
               glossary: str | Path | Mapping[str, str] | Iterable[Sequence[str]] | None = None,
               format: str | None = None) -> Job:
        """Validate and enqueue one document (its text, or a path on storage the workers share: see
        ``shared_path``).
        ``model`` names a bundle the workers serve (e.g. "multi30k-en-de"); None: the pair's default.
        ``format``: "html", "markdown", "xliff", "srt", "vtt", "po", "docx" or "txt"; None: plain text, or a
        path's extension. The result's ``text`` is then the translated file in that format; a DOCX file
        is sent as ``text=<its bytes>`` and comes back as the result's ``data`` (bytes).
        ``glossary`` forces translations of terms: a TSV file here (``source<TAB>target`` lines), a
        {source: target} mapping, or [source, target] pairs; each segment's ``details["glossary"]``
        says which were applied."""
        path = None if path is None else self.shared_path(path)
        [job] = self._send([self._request(src, tgt, text, path, options, name, job_id, model, glossary, format)])
        return job

    def submit_many(self, documents: Iterable[Mapping[str, Any]]) -> list[Job]:
        """Submit each mapping of ``submit`` keyword arguments; all are validated before any is sent."""
        return self._send([self._request(**(document if document.get("path") is None else
                                             {**document, "path": self.shared_path(document["path"])}))
                           for document in documents])

    def shared_path(self, path: str | Path) -> str:
        """The path a job by path carries. With this client's NMT_INPUT_ROOT set (where the shared
        storage is mounted here), the file's path relative to that root, in ``/`` form: each worker
        reads it under its own NMT_INPUT_ROOT, so the mounts may differ between hosts. An absolute
        path must lie under the root (symbolic links resolved first); a relative one is taken as
        relative to the root already and may not climb out of it. ``MessageError`` otherwise.
        Without a client root the path is sent as given (one host: the worker reads an absolute
        path only under its own root)."""
        if not self.settings.input_root:
            return str(path)
        root = Path(self.settings.input_root).resolve()
        given = Path(path)
        if "\x00" in str(path):
            raise MessageError(f"'path' must not contain NUL characters, got {str(path)[:80]!r}")
        resolved = (given if given.is_absolute() else root / given).resolve()
        if not resolved.is_relative_to(root):
            raise MessageError(f"path {path} is outside NMT_INPUT_ROOT ({root}), the directory this client shares "
                               "with the workers: jobs by path can only name files under it")
        if resolved == root:
            raise MessageError(f"path {path} is NMT_INPUT_ROOT itself ({root}), not a file under it")
        return resolved.relative_to(root).as_posix()


    @staticmethod
    def _request(src: str, tgt: str, text: str | bytes | None = None, path: str | Path | None = None,
                 options: Mapping[str, Any] | JobOptions | None = None, name: str | None = None,
                 job_id: str | None = None, model: str | None = None,
                 glossary: str | Path | Mapping[str, str] | Iterable[Sequence[str]] | None = None,
                 format: str | None = None) -> JobRequest:
        if isinstance(options, JobOptions):
            options = {k: v for k, v in asdict(options).items() if v != getattr(JobOptions(), k)}
        payload: dict[str, Any] = {"job_id": job_id or uuid.uuid4().hex, "src": src, "tgt": tgt,
                                   "name": name or (Path(path).stem if path else "document"),
                                   "options": dict(options or {})}
        if isinstance(text, (bytes, bytearray)):
            if format not in BINARY_FORMATS:
                raise MessageError(f"bytes are sent only for a binary format ({', '.join(sorted(BINARY_FORMATS))}): "
                                   "give format=, or send text as a string")
            text = base64.b64encode(bytes(text)).decode("ascii")
        if text is not None:
            payload["text"] = text
        if path is not None:
            payload["path"] = str(path)
        if model is not None:
            payload["model"] = model
        if glossary is not None:
            payload["glossary"] = _glossary_pairs(glossary)
        if format is not None:
            payload["format"] = format
        return JobRequest.from_json(payload)  # MessageError (a ValueError) names the bad field

    def _send(self, requests: list[JobRequest]) -> list[Job]:
        limit = self.settings.max_document_bytes
        for request in requests:  # the workers' cap, refused here before anything is sent
            size = (len(request.text.encode("utf-8")) if request.text is not None
                    else _local_size(request.path, self.settings.input_root))
            if size > limit:
                raise MessageError(f"document {request.name!r} of {size} bytes exceeds the limit of {limit} bytes "
                                   "(NMT_MAX_DOCUMENT_BYTES); split it")
        served = self.store.served_pairs(max_age=float("inf"))
        for request in requests:
            pair = f"{request.src}-{request.tgt}"
            if served and pair not in served:
                raise UnknownLanguagePairError(f"no worker serves {pair} (served: {', '.join(served)})")
        models = self.store.served_models()
        for request in requests:
            pair = f"{request.src}-{request.tgt}"
            if request.model is not None and models and pair not in models.get(request.model, "").split(","):
                names = ", ".join(sorted(m for m, p in models.items() if pair in p.split(","))) or "none"
                raise UnknownModelError(f"no worker serves the model {request.model!r} for {pair} (served: {names})")
        ids = [request.job_id for request in requests]
        problems = [f"{i!r} is given twice" for i in sorted({i for i in ids if ids.count(i) > 1})]
        problems += [f"{job_id!r} is already in use (state {state})"
                     for job_id, state in self.store.states(list(dict.fromkeys(ids))).items() if state != "unknown"]
        if problems:  # checked for all before any is sent
            raise JobExistsError(f"job id {'; '.join(problems[:5])}: fetch an existing job with client.job(id), "
                                 "or submit under a new id")
        jobs = []
        for request in requests:
            # The record keeps the message too: the fleet's sweep sends it again if the broker loses it.
            message = {"task": TRANSLATE_TASK, "args": [request.to_json()], "queue": self._queue(request)}
            if not self.store.create(request.job_id, request.src, request.tgt, request.name, message):
                raise JobExistsError(f"job id {request.job_id!r} is already in use (state "
                                     f"{self.store.status(request.job_id).state}): fetch it with client.job(id), "
                                     "or submit under a new id")
            self.app.send_task(message["task"], args=message["args"], queue=message["queue"], task_id=request.job_id)
            jobs.append(Job(self, request.job_id, request.name))
        return jobs

    def _queue(self, request: JobRequest) -> str:
        """The pair's batch queue for a small plain-text job (decoded together with others), else
        the pair's queue."""
        return (batch_queue_for if batchable(request, self.settings.batch_bytes) else queue_for)(request.src, request.tgt)

    def job(self, job_id: str) -> Job:
        return Job(self, job_id)

    def queue_of(self, job_id: str) -> str | None:
        """The queue a job was sent to, from its record (None when Redis has no record of it)."""
        record = self.store.redis.hmget(self.store.key(job_id), ["src", "tgt"])
        return queue_for(*record) if all(record) else None

    def consumers(self, queue: str, timeout: float = 1.0) -> list[str]:
        """Names of the live workers consuming ``queue`` (asked by broadcast; waits ``timeout`` s)."""
        replies = self.app.control.inspect(timeout=timeout).active_queues() or {}
        return sorted(name for name, queues in replies.items() if any(q.get("name") == queue for q in queues))


def _glossary_pairs(glossary: str | Path | Mapping[str, str] | Iterable[Sequence[str]]) -> list:
    """The job message's [source, target] pairs; a str or Path is a glossary file (GlossaryError,
    a ValueError, names its line)."""
    if isinstance(glossary, (str, Path)):
        return [list(pair) for pair in read_glossary(glossary)]
    if isinstance(glossary, Mapping):
        return [[source, target] for source, target in glossary.items()]
    return [list(pair) if isinstance(pair, (list, tuple)) else pair for pair in glossary]


def _local_size(path: str | None, root: str = "") -> int:
    """The size of a job's file when this machine sees it too (a relative path: under this client's
    NMT_INPUT_ROOT); 0 when it does not (the worker checks)."""
    try:
        return (Path(root) / path).stat().st_size if path and (root or Path(path).is_absolute()) else 0
    except OSError:
        return 0

