"""Every queue and worker setting, read from ``NMT_*`` environment variables in this one place.

Invariants checked on load: the visibility timeout is at least twice the job lease (Redis redelivers
a message still running after it; the lease keeps that copy from running while the job's worker
lives), retry delays stay well below it, a
``rediss://`` URL verifies certificates (kombu otherwise skips verification with a warning), a
``sentinel://`` URL list (``queue_config.connection``) comes with the master's name, and an
``amqp://`` (RabbitMQ) broker comes with a Redis job store in ``NMT_RESULT_BACKEND``.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, fields
from typing import Mapping
from urllib.parse import parse_qs, unquote, urlparse

PREFIX = "NMT_"
SENTINEL_SCHEME = "sentinel"
DEFAULT_SENTINEL_PORT = 26379
AMQP_SCHEMES = ("amqp", "amqps")  # RabbitMQ as the broker (docs/scaling.md); the job store stays in Redis


class SettingsError(ValueError):
    """An NMT_* environment variable is missing, malformed or inconsistent; names the variable."""


@dataclass(frozen=True)
class QueueSettings:
    broker_url: str = "redis://127.0.0.1:6379/0"
    # the Redis job store (state, progress, results, leases); empty: the broker URL. Required, as a
    # Redis URL, when the broker is RabbitMQ (amqp://, amqps://)
    result_backend: str = ""
    # with an amqps:// broker (RabbitMQ over TLS): a PEM file of the CA(s) its certificate is checked
    # against, instead of the system's; empty: the system's CAs. The host name is checked either way
    broker_ca_certs: str = ""
    # Redis Sentinel (queue_config.connection): with sentinel://h1:26379;sentinel://h2:26379 URLs, the
    # name of the master the sentinels monitor, their own password, and TLS to sentinels and Redis
    # (certificates verified, against this CA file if given)
    redis_sentinel_master: str = ""
    redis_sentinel_password: str = ""
    redis_sentinel_tls: bool = False
    redis_sentinel_ca_certs: str = ""
    # seconds a Sentinel client keeps retrying a lost or demoted master (asking the sentinels again)
    # before its caller sees the error: above the sentinels' down-after-milliseconds plus a few seconds
    redis_failover_seconds: float = 30.0
    # after each job-state write, wait for this many replicas to acknowledge it (Redis WAIT), at most
    # redis_wait_ms; 0: never wait (a failover may then lose the last writes before it)
    redis_wait_replicas: int = 0
    redis_wait_ms: int = 100
    # comma-separated bundle directories a worker serves; per language pair, the first is the default
    bundles: str = "models/en-de,models/multi30k-en-de"
    output_dir: str = ""  # also write <job>.txt/.json here (shared storage); empty: Redis only
    # where the storage shared for jobs by path is mounted on this host. Workers read a job's path
    # under it (a relative path is resolved against it; nothing outside it is read); empty: no job by
    # path. Clients send paths relative to theirs, so hosts may mount the storage at different places
    input_root: str = ""
    soft_time_limit: int = 600  # seconds; the job fails cleanly after this
    time_limit: int = 660  # seconds; hard kill
    # seconds a delivered message may stay unacknowledged before Redis hands it to another worker:
    # a job whose worker host died is redelivered within this plus RESTORE_INTERVAL (kombu's sweep).
    # A live job outlasting it is not run twice: the copy finds the job's lease held and waits.
    visibility_timeout: int = 90
    result_expires: int = 7 * 24 * 3600  # seconds results stay in Redis (or in the result store)
    # where results are kept: empty: in Redis; file:///shared/dir (storage every host mounts) or
    # postgresql://user:pw@host/db; Redis then keeps a reference (queue_config.result_store)
    result_store: str = ""
    max_attempts: int = 3  # deliveries of one job (worker deaths count) before it fails
    retry_backoff_max: int = 20  # seconds; transient-error retries back off up to this
    max_retries: int = 5  # transient-error retries per task
    chunk_sentences: int = 200  # a document with more sentences is split into chunks across workers
    max_document_bytes: int = 20_000_000
    lease_seconds: int = 30  # a running job's lease, renewed while it runs
    # seconds between sweeps for running jobs whose message is gone (worker.sweep); 0: this worker never sweeps
    sweep_seconds: int = 30
    provider: str = "auto"  # ONNX Runtime execution provider: auto | cpu | cuda
    shortlist: str = "auto"  # lexical shortlist: auto (as each bundle's manifest says) | on | off
    threads: int = 0  # ONNX Runtime intra-op threads per worker child (0: default)
    batch_workers: int = 1  # batches of one job decoded at once per worker child, one thread each
    max_batch_tokens: int = 6000
    segment_seconds: float = 20.0  # an over-long segment's decoding time; past it, kept and flagged time_budget
    shutdown_timeout: float = 30.0  # soft-shutdown seconds for running jobs on SIGTERM
    proc_alive_timeout: float = 60.0  # seconds a new worker child may take to report up
    socket_timeout: float = 30.0
    # a worker child is replaced after this many tasks, or once it holds more than this much memory
    # after a task (MiB); 0: never (Celery's worker_max_tasks_per_child / worker_max_memory_per_child)
    max_tasks_per_child: int = 1000
    max_memory_per_child: int = 3000
    metrics_port: int = 0  # serve Prometheus metrics from the worker parent on this port; 0: off
    metrics_host: str = "127.0.0.1"  # the metrics endpoint's address (0.0.0.0 exposes it to the network)
    cache_size: int = 10_000  # translated segments each worker child keeps (LRU); 0: none
    cache_redis: bool = False  # also share translated segments between workers through the broker's Redis
    cache_ttl: int = 24 * 3600  # seconds a cached segment lives
    # Small plain-text jobs (text of at most batch_bytes UTF-8 bytes) go to the pair's batch queue; a
    # worker child that takes one also takes more from it until the batch holds batch_jobs jobs or
    # batch_chars characters of text, waiting at most batch_wait_ms for them, and decodes their
    # sentences together (worker.taking). batch_jobs 1: one job at a time; batch_chars 0: no budget.
    batch_bytes: int = 2000
    batch_jobs: int = 256
    batch_chars: int = 16_000
    batch_wait_ms: int = 20

    @property
    def backend_url(self) -> str:
        return self.result_backend or self.broker_url

    @property
    def bundle_paths(self) -> list[str]:
        return [b.strip() for b in self.bundles.split(",") if b.strip()]

    @property
    def amqp_broker(self) -> bool:
        """Whether the broker is RabbitMQ (the job store is then ``result_backend``'s Redis)."""
        return is_amqp(self.broker_url)

    def validate(self) -> "QueueSettings":
        redis_urls = [(self.broker_url, "BROKER_URL"), (self.backend_url, "RESULT_BACKEND")]
        if self.amqp_broker:
            check_amqp_broker(self.broker_url, self.result_backend)
            redis_urls = redis_urls[1:]
            if self.cache_redis:
                raise SettingsError(f"{PREFIX}CACHE_REDIS shares translated segments through the broker's Redis, and "
                                    f"{PREFIX}BROKER_URL is RabbitMQ ({redacted(self.broker_url)!r}): turn it off")
        if self.broker_ca_certs:
            check_broker_ca_certs(self.broker_url, self.broker_ca_certs)
        for url, name in redis_urls:
            if is_amqp(url):
                raise SettingsError(f"{PREFIX}{name} names the Redis job store and must be a redis://, rediss://, "
                                    f"unix:// or sentinel:// URL; RabbitMQ (amqp://) can only be {PREFIX}BROKER_URL")
            check_redis_url(url, PREFIX + name)
            if is_sentinel(url) and not self.redis_sentinel_master:
                raise SettingsError(f"{PREFIX}{name} is a sentinel:// URL: set {PREFIX}REDIS_SENTINEL_MASTER to the "
                                    "name the sentinels monitor (their 'sentinel monitor <name> ...' line)")
        if self.redis_sentinel_ca_certs and not self.redis_sentinel_tls:
            raise SettingsError(f"{PREFIX}REDIS_SENTINEL_CA_CERTS is set but {PREFIX}REDIS_SENTINEL_TLS is off")
        if not self.redis_failover_seconds > 0:
            raise SettingsError(f"{PREFIX}REDIS_FAILOVER_SECONDS must be > 0, got {self.redis_failover_seconds}")
        if self.redis_wait_replicas < 0 or self.redis_wait_ms < 1:
            raise SettingsError(f"{PREFIX}REDIS_WAIT_REPLICAS must be >= 0 (0: off) and {PREFIX}REDIS_WAIT_MS >= 1, "
                                f"got {self.redis_wait_replicas} and {self.redis_wait_ms}")
        if not 0 < self.soft_time_limit < self.time_limit:
            raise SettingsError(f"{PREFIX}SOFT_TIME_LIMIT ({self.soft_time_limit}) must be > 0 and below "
                                f"{PREFIX}TIME_LIMIT ({self.time_limit})")
        if self.visibility_timeout < 2 * self.lease_seconds:
            raise SettingsError(f"{PREFIX}VISIBILITY_TIMEOUT ({self.visibility_timeout}) must be at least twice "
                                f"{PREFIX}LEASE_SECONDS ({self.lease_seconds}): a redelivered copy of a live job "
                                "waits a lease period before it looks again")
        if self.retry_backoff_max * 4 > self.visibility_timeout:
            raise SettingsError(f"{PREFIX}RETRY_BACKOFF_MAX ({self.retry_backoff_max}) must stay well below the "
                                f"visibility timeout ({self.visibility_timeout}); at most a quarter of it")
        for name in ("max_attempts", "chunk_sentences", "max_document_bytes", "lease_seconds", "max_batch_tokens",
                     "batch_workers", "cache_ttl", "batch_jobs"):
            if getattr(self, name) < 1:
                raise SettingsError(f"{PREFIX}{name.upper()} must be >= 1, got {getattr(self, name)}")
        for name in ("max_tasks_per_child", "max_memory_per_child"):
            if getattr(self, name) < 0:
                raise SettingsError(f"{PREFIX}{name.upper()} must be >= 0 (0: no limit), got {getattr(self, name)}")
        if not 0 <= self.metrics_port <= 65535:
            raise SettingsError(f"{PREFIX}METRICS_PORT must be a port number (0: off), got {self.metrics_port}")
        if self.sweep_seconds < 0:
            raise SettingsError(f"{PREFIX}SWEEP_SECONDS must be >= 0 (0: this worker never sweeps), got {self.sweep_seconds}")
        if self.batch_bytes < 0 or self.batch_wait_ms < 0 or self.batch_chars < 0:
            raise SettingsError(f"{PREFIX}BATCH_BYTES, {PREFIX}BATCH_CHARS and {PREFIX}BATCH_WAIT_MS must be >= 0 "
                                f"(0 bytes: no job is batched; 0 characters: no budget), got {self.batch_bytes}, "
                                f"{self.batch_chars} and {self.batch_wait_ms}")
        if not self.segment_seconds > 0:
            raise SettingsError(f"{PREFIX}SEGMENT_SECONDS must be > 0, got {self.segment_seconds}")
        if self.cache_size < 0:
            raise SettingsError(f"{PREFIX}CACHE_SIZE must be >= 0 (0: no local cache), got {self.cache_size}")
        if self.shortlist not in ("auto", "on", "off"):
            raise SettingsError(f"{PREFIX}SHORTLIST must be auto, on or off, got {self.shortlist!r}")
        if self.provider not in ("auto", "cpu", "cuda"):
            raise SettingsError(f"{PREFIX}PROVIDER must be auto, cpu or cuda, got {self.provider!r}")
        check_result_store_url(self.result_store, PREFIX + "RESULT_STORE")
        return self


def load_settings(environ: Mapping[str, str] | None = None) -> QueueSettings:
    """``QueueSettings`` from ``NMT_<FIELD>`` variables (e.g. ``NMT_BROKER_URL``), validated."""
    environ = os.environ if environ is None else environ
    values = {}
    for f in fields(QueueSettings):
        key = PREFIX + f.name.upper()
        if key in environ:
            kind = type(f.default)
            try:
                values[f.name] = _flag(environ[key]) if kind is bool else kind(environ[key])
            except ValueError:
                what = "on/off value (1, true, yes, on, 0, false, no, off)" if kind is bool else kind.__name__
                raise SettingsError(f"{key}={environ[key]!r} is not a valid {what}") from None
    return QueueSettings(**values).validate()


def _flag(value: str) -> bool:
    """An on/off setting: 1/true/yes/on or 0/false/no/off (any case); ValueError otherwise."""
    lowered = value.strip().lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off", ""):
        return False
    raise ValueError(value)


def check_redis_url(url: str, variable: str) -> None:
    parsed = urlparse(url)
    if parsed.scheme == SENTINEL_SCHEME:
        try:
            parse_sentinel_url(url)
        except ValueError as exc:
            raise SettingsError(f"{variable} is not a Sentinel URL list "
                                f"(sentinel://[:password@]host:port[/db];sentinel://...): {exc}") from None
        return
    if parsed.scheme not in ("redis", "rediss", "unix"):
        raise SettingsError(f"{variable} must be a redis://, rediss://, unix:// or sentinel:// URL (a list of "
                            f"sentinel://host:port separated by ';'), got scheme {parsed.scheme!r}")
    if parsed.scheme == "rediss":
        reqs = parse_qs(parsed.query).get("ssl_cert_reqs", [""])[0].lower()
        if reqs not in ("required", "cert_required"):
            raise SettingsError(f"{variable} uses rediss:// without ssl_cert_reqs=required: kombu would skip "
                                "certificate verification; add ?ssl_cert_reqs=required (and ssl_ca_certs=... if needed)")


def is_amqp(url: str) -> bool:
    return url.split("://", 1)[0].lower() in AMQP_SCHEMES


def check_amqp_broker(url: str, result_backend: str) -> None:
    """An ``amqp://`` or ``amqps://`` broker URL (or kombu's failover list of them, separated by
    ';'), with the Redis job store named by ``result_backend``: RabbitMQ carries the messages only."""
    variable = PREFIX + "BROKER_URL"
    if not result_backend:
        raise SettingsError(f"{variable} must be a redis://, rediss://, unix:// or sentinel:// URL, or an amqp:// or "
                            f"amqps:// URL (RabbitMQ) with {PREFIX}RESULT_BACKEND naming the Redis job store: "
                            f"{variable} is {redacted(url)!r} and {PREFIX}RESULT_BACKEND is not set")
    schemes = set()
    for part in (p.strip() for p in url.split(";")):
        if not part:
            continue
        parsed = urlparse(part)
        schemes.add(parsed.scheme.lower())
        if parsed.scheme.lower() not in AMQP_SCHEMES:
            raise SettingsError(f"{variable}: every URL of a RabbitMQ list must be amqp:// or amqps://, "
                                f"got {redacted(part)!r}")
        try:
            parsed.port
        except ValueError:
            raise SettingsError(f"{variable}: bad port in {redacted(part)!r}") from None
        if not parsed.hostname:
            raise SettingsError(f"{variable}: no host in {redacted(part)!r}")
    if len(schemes) > 1:
        raise SettingsError(f"{variable}: a RabbitMQ list is all amqp:// or all amqps://, got both")


def check_broker_ca_certs(url: str, path: str) -> None:
    """``NMT_BROKER_CA_CERTS`` goes with an ``amqps://`` broker and names a readable file."""
    variable = PREFIX + "BROKER_CA_CERTS"
    if not url.lower().startswith("amqps://"):
        raise SettingsError(f"{variable} is set but {PREFIX}BROKER_URL is not amqps:// (RabbitMQ over TLS); for a "
                            "rediss:// Redis, give the CA file in the URL: ?ssl_cert_reqs=required&ssl_ca_certs=...")
    if not os.path.isfile(path) or not os.access(path, os.R_OK):
        raise SettingsError(f"{variable}: {path} is not a readable file (a PEM file of the CA that signed the "
                            "broker's certificate)")


def redacted(url: str) -> str:
    """The URL with its password replaced, for logs and error messages (in every URL of a
    Sentinel list)."""
    parsed = urlparse(url)
    if parsed.password:
        return url.replace(f":{parsed.password}@", ":***@")
    return url


# redis-py's repr of a Sentinel connection in its errors (MasterNotFoundError: "No master found for
# 'name' : <redis.client.Redis(<...ConnectionPool(<...Connection(...,password=...,host=H,port=P,...)>)>)> - ...")
_CONNECTION_REPR = re.compile(r"<redis\.client\.Redis\(.*?host=([^,)]*),port=([^,)]*).*?\)>\)>\)>")
_PASSWORD_FIELD = re.compile(r"(password=)[^,)>\s]+")


def secrets_of(settings: "QueueSettings") -> tuple[str, ...]:
    """The passwords in ``settings``: of the broker, job store and result store URLs (every URL of
    a list) and the sentinels'."""
    found = {settings.redis_sentinel_password}
    for value in (settings.broker_url, settings.backend_url, settings.result_store):
        for url in value.split(";"):
            try:
                found.add(unquote(urlparse(url.strip()).password or ""))
            except ValueError:
                continue
    return tuple(sorted(secret for secret in found if len(secret) >= 4))  # shorter: only as password=...


def redacted_text(text: str, secrets: tuple[str, ...] = ()) -> str:
    """``text`` (an error message, a log line, a traceback) fit to print: redis-py's connection
    reprs cut to ``sentinel HOST:PORT``, any ``password=...`` field and each of ``secrets``
    (``secrets_of``) replaced by ``***``."""
    text = _CONNECTION_REPR.sub(lambda m: f"sentinel {m[1]}:{m[2]}", text)
    text = _PASSWORD_FIELD.sub(r"\1***", text)
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(secret, "***")
    return text


RESULT_STORE_SCHEMES = ("file", "postgresql", "postgres")


def check_result_store_url(url: str, variable: str) -> None:
    """Empty (results in Redis), ``file:///dir`` (an existing directory this user can write) or
    ``postgresql://...`` (reached on first use, when an unreachable server is reported)."""
    if not url:
        return
    parsed = urlparse(url)
    if parsed.scheme not in RESULT_STORE_SCHEMES:
        raise SettingsError(f"{variable} must be empty (results in Redis), file:///shared/dir or "
                            f"postgresql://user:password@host/db, got scheme {parsed.scheme!r} in {redacted(url)!r}")
    if parsed.scheme == "file":
        path = unquote(parsed.path)
        if parsed.netloc not in ("", "localhost") or not path.startswith("/"):
            raise SettingsError(f"{variable} must name an absolute path on this host (file:///shared/dir), got {url!r}")
        if not os.path.isdir(path):
            raise SettingsError(f"{variable}: {path} is not an existing directory (mount the shared storage, "
                                "or create it with mode 0700)")
        if not os.access(path, os.W_OK | os.X_OK):
            raise SettingsError(f"{variable}: {path} is not writable by this user (uid {os.getuid()}); "
                                "every host must run as the user that owns it")


def is_sentinel(url: str) -> bool:
    return url.split("://", 1)[0].lower() == SENTINEL_SCHEME


@dataclass(frozen=True)
class SentinelAddress:
    """A parsed Sentinel URL list: the sentinels, and the Redis credentials and database."""
    sentinels: tuple[tuple[str, int], ...]
    username: str | None
    password: str | None
    db: int


def parse_sentinel_url(url: str) -> SentinelAddress:
    """``sentinel://[:pw@]host[:port][/db];sentinel://...`` -> ``SentinelAddress``; ValueError on a
    malformed part (named)."""
    nodes = []
    first = None
    for part in (p.strip() for p in url.split(";")):
        if not part:
            continue
        parsed = urlparse(part)
        if parsed.scheme.lower() != SENTINEL_SCHEME:
            raise ValueError(f"every URL of a Sentinel list must be sentinel://host:port, got {part.split('@')[-1]!r}")
        try:
            port = parsed.port or DEFAULT_SENTINEL_PORT
        except ValueError:
            raise ValueError(f"bad port in {part.split('@')[-1]!r}") from None
        if not parsed.hostname:
            raise ValueError(f"no host in {part.split('@')[-1]!r}")
        nodes.append((parsed.hostname, port))
        first = first or parsed
    if first is None:
        raise ValueError("no sentinel:// URL given")
    path = first.path.strip("/")
    if path and not path.isdigit():
        raise ValueError(f"the database must be a number, got {path!r}")
    return SentinelAddress(tuple(nodes), unquote(first.username) if first.username else None,
                           unquote(first.password) if first.password else None, int(path or 0))
