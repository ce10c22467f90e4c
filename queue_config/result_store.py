"""Where finished jobs' results are kept (``NMT_RESULT_STORE``): in Redis beside the job's state (unset,
the default), in files on storage every host mounts (``file:///shared/dir``), or in one PostgreSQL
table (``postgresql://user:pw@host/db``). Outside Redis, the job's result key holds only a reference
(``stored:file``, ``stored:postgresql``, 17-22 bytes) in place of the result's JSON.

Each store keeps a result for ``NMT_RESULT_EXPIRES`` seconds, as Redis does its keys: Redis drops
them itself; files and rows past it are never read and are removed by the worker's sweep
(``worker.sweep``). A result is written once (delivery is at-least-once): a later ``put`` of the
same job keeps what is stored unless that has expired.
"""
from __future__ import annotations

import errno
import hashlib
import os
import tempfile
import threading
import time
from pathlib import Path
from typing import Protocol
from urllib.parse import unquote, urlparse

import redis

from .names import KEY_PREFIX
from .settings import QueueSettings, redacted

REFERENCE = "stored:"  # a result key's value, followed by the store's kind, when the result is kept elsewhere
STALE_TEMP_SECONDS = 3600  # a file store's temporary file this old was left by a writer that died
_NO_LINKS = (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS)  # hard links refused by the filesystem


class ResultStoreError(RuntimeError):
    """A result is referenced in a store this process does not use, or the store refused it."""


class ResultStoreUnreachableError(redis.ConnectionError):
    """The result store cannot be reached. A ``redis.ConnectionError``, so every caller that rides
    out a Redis outage (the worker's retries, the client's wait, the gateway's 503) rides out this one."""


class ResultStore(Protocol):
    kind: str  # "redis", "file" or "postgresql"

    def put(self, job_id: str, data: bytes) -> str:
        """Keep ``data`` (the result's UTF-8 JSON) unless a live result of the job is kept already;
        returns what the job's result key in Redis holds: the JSON itself, or a reference."""

    def get(self, job_id: str) -> bytes | None:
        """The job's result, None when none is kept or it has expired."""

    def delete(self, job_id: str) -> None:
        """Remove the job's result (nothing if there is none)."""

    def expire(self, now: float | None = None) -> int:
        """Remove every result older than the store's expiry; returns how many were removed."""


def result_key(job_id: str) -> str:
    """The job's result key in Redis (``JobStore.key(job_id, "result")``): the result, or its reference."""
    return f"{KEY_PREFIX}:job:{job_id}:result"


def reference(kind: str) -> str:
    return REFERENCE + kind


def resolve(store: ResultStore, job_id: str, held: str | None) -> str | bytes | None:
    """The result's JSON from what the job's result key holds: the JSON itself (kept in Redis, as
    before a store was set), or read from ``store`` when it is a reference."""
    if held is None or not held.startswith(REFERENCE):
        return held
    kind = held[len(REFERENCE):]
    if kind != store.kind:
        raise ResultStoreError(f"job {job_id}: its result is kept in the {kind} result store, but NMT_RESULT_STORE "
                               f"here selects {store.kind}: give this process the workers' NMT_RESULT_STORE")
    return store.get(job_id)


class RedisResultStore:
    """Results in Redis: the JSON is the job's result key itself, written by ``JobStore`` in the same
    atomic call that ends the job (``put`` only hands it back), and expired by Redis (EX)."""
    kind = "redis"

    def __init__(self, client: redis.Redis) -> None:
        self.redis = client

    def put(self, job_id: str, data: bytes) -> str:
        return data.decode("utf-8")

    def get(self, job_id: str) -> bytes | None:
        held = self.redis.get(result_key(job_id))
        if held is None or (isinstance(held, str) and held.startswith(REFERENCE)):
            return None
        return held.encode("utf-8") if isinstance(held, str) else held

    def delete(self, job_id: str) -> None:
        self.redis.delete(result_key(job_id))

    def expire(self, now: float | None = None) -> int:
        return 0  # Redis drops expired keys itself


class FileResultStore:
    """One file per result, ``<root>/<2 hex of sha256(job id)>/<job id>.json`` (256 directories keep
    each small), mode 0600 in directories of mode 0700: every host must run as the same user. Written
    to a temporary file and linked into place, so a reader never sees a partial file and a second
    writer never replaces the first. A file expires ``ttl`` seconds after its modification time."""
    kind = "file"

    def __init__(self, root: str | Path, ttl: int) -> None:
        self.root = Path(root)
        self.ttl = ttl

    def path(self, job_id: str) -> Path:
        return self.root / hashlib.sha256(job_id.encode()).hexdigest()[:2] / f"{job_id}.json"

    def put(self, job_id: str, data: bytes) -> str:
        path = self.path(job_id)
        path.parent.mkdir(mode=0o700, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")  # mode 0600
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())  # on disk before any reference to it is
            try:
                os.link(tmp, path)  # fails if a result is there: the first writer's stays
            except FileExistsError:
                if self._expired(path, time.time()):
                    os.replace(tmp, path)  # a job id used again after its result expired
            except OSError as exc:
                if exc.errno not in _NO_LINKS:
                    raise
                if self._expired(path, time.time()):  # a filesystem without hard links: nearly as safe
                    os.replace(tmp, path)
        except OSError as exc:
            raise ResultStoreUnreachableError(f"the file result store {self.root} refused job {job_id}'s result: "
                                              f"{exc.strerror or exc}") from exc
        finally:
            Path(tmp).unlink(missing_ok=True)
        return reference(self.kind)

    def get(self, job_id: str) -> bytes | None:
        path = self.path(job_id)
        try:
            with open(path, "rb") as handle:
                if self._expired_at(os.fstat(handle.fileno()).st_mtime, time.time()):
                    return None
                return handle.read()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise ResultStoreUnreachableError(f"the file result store {self.root} cannot be read: "
                                              f"{exc.strerror or exc}") from exc

    def delete(self, job_id: str) -> None:
        self.path(job_id).unlink(missing_ok=True)

    def expire(self, now: float | None = None) -> int:
        now = time.time() if now is None else now
        removed = 0
        for shard in self.root.iterdir():
            if not (len(shard.name) == 2 and shard.is_dir()):
                continue
            with os.scandir(shard) as entries:
                for entry in entries:
                    try:
                        mtime = entry.stat().st_mtime
                    except FileNotFoundError:
                        continue
                    temp = entry.name.startswith(".") and entry.name.endswith(".tmp")
                    if (temp and now - mtime > STALE_TEMP_SECONDS) or (not temp and self._expired_at(mtime, now)):
                        Path(entry.path).unlink(missing_ok=True)
                        removed += not temp
        return removed

    def _expired(self, path: Path, now: float) -> bool:
        try:
            return self._expired_at(path.stat().st_mtime, now)
        except FileNotFoundError:
            return True

    def _expired_at(self, mtime: float, now: float) -> bool:
        return mtime + self.ttl <= now


TABLE = "nmt_results"
_SCHEMA = (f"CREATE TABLE IF NOT EXISTS {TABLE} (job_id text PRIMARY KEY, result bytea NOT NULL, "
           "created timestamptz NOT NULL DEFAULT now(), expires timestamptz NOT NULL)",
           f"CREATE INDEX IF NOT EXISTS {TABLE}_expires ON {TABLE} (expires)")
# A row is replaced only once it has expired (a job id used again); else the first result stays.
_PUT = (f"INSERT INTO {TABLE} (job_id, result, created, expires) VALUES (%s, %s, now(), now() + make_interval(secs => %s)) "
        f"ON CONFLICT (job_id) DO UPDATE SET result = EXCLUDED.result, created = EXCLUDED.created, "
        f"expires = EXCLUDED.expires WHERE {TABLE}.expires <= now()")


class PostgresResultStore:
    """Results in the table ``nmt_results`` (job id, result bytes, created, expires), created if
    missing. One autocommit connection per process, opened on first use (again after a fork, or
    once it broke); an unreachable server is ``ResultStoreUnreachableError`` with the password masked."""
    kind = "postgresql"

    def __init__(self, url: str, ttl: int) -> None:
        self.url = url
        self.ttl = ttl
        self._connection = None
        self._pid = 0
        self._lock = threading.Lock()

    def put(self, job_id: str, data: bytes) -> str:
        self._execute(_PUT, (job_id, data, self.ttl))
        return reference(self.kind)

    def get(self, job_id: str) -> bytes | None:
        row = self._execute(f"SELECT result FROM {TABLE} WHERE job_id = %s AND expires > now()", (job_id,), fetch=True)
        return None if row is None else bytes(row[0])

    def delete(self, job_id: str) -> None:
        self._execute(f"DELETE FROM {TABLE} WHERE job_id = %s", (job_id,))

    def expire(self, now: float | None = None) -> int:
        if now is None:
            return self._execute(f"DELETE FROM {TABLE} WHERE expires <= now()", ())
        return self._execute(f"DELETE FROM {TABLE} WHERE expires <= to_timestamp(%s)", (now,))

    def close(self) -> None:
        with self._lock:
            if self._connection is not None and self._pid == os.getpid():
                self._connection.close()
            self._connection = None

    def _execute(self, sql: str, params: tuple, fetch: bool = False):
        """Run ``sql``: the first row with ``fetch``, else the number of rows it changed. A broken
        connection is dropped (the next call opens a new one) and reported as unreachable."""
        import psycopg

        with self._lock:
            try:
                connection = self._connect()
                with connection.cursor() as cursor:
                    cursor.execute(sql, params)
                    return cursor.fetchone() if fetch else cursor.rowcount
            except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
                self._connection = None
                raise ResultStoreUnreachableError(f"the result store {redacted(self.url)} is unreachable: "
                                                  f"{self._masked(exc)}") from None

    def _connect(self):
        import psycopg

        if self._connection is not None and self._pid == os.getpid() and not self._connection.closed:
            return self._connection
        # a connection inherited through a fork is the parent's: dropped, never closed from here
        self._connection = psycopg.connect(self.url, autocommit=True, connect_timeout=10)
        self._pid = os.getpid()
        for statement in _SCHEMA:
            try:
                self._connection.execute(statement)
            except psycopg.errors.UniqueViolation:  # another process created it at the same moment
                pass
        return self._connection

    def _masked(self, exc: Exception) -> str:
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        password = urlparse(self.url).password
        return text.replace(unquote(password), "***") if password else text


def result_store(settings: QueueSettings, client: redis.Redis) -> ResultStore:
    """The store ``NMT_RESULT_STORE`` selects (validated by the settings); ``client``: the job
    store's Redis, where results are kept when it is unset."""
    url = settings.result_store
    if not url:
        return RedisResultStore(client)
    parsed = urlparse(url)
    if parsed.scheme == "file":
        return FileResultStore(unquote(parsed.path), settings.result_expires)
    return PostgresResultStore(url, settings.result_expires)
