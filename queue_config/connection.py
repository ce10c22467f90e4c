"""Broker and job-store connections for every component: one place that turns plain and Sentinel
URLs into Redis clients (the URL grammar, checked on load, is
``queue_config.settings.parse_sentinel_url``), and the RabbitMQ transport clients and workers share
(``AmqpTransport``: TLS host names checked against each broker of a failover list).

Plain: ``redis://``, ``rediss://`` or ``unix://``, one server. Sentinel: kombu's list form,
``sentinel://:PASSWORD@h1:26379/0;sentinel://:PASSWORD@h2:26379/0;...``, one URL per sentinel,
with the master's name in ``NMT_REDIS_SENTINEL_MASTER``. The Redis password and database are
read from the first URL, as kombu reads them; the sentinels' own password is
``NMT_REDIS_SENTINEL_PASSWORD``, and ``NMT_REDIS_SENTINEL_TLS`` reaches sentinels and Redis over
TLS with certificates verified.

A Sentinel client asks the sentinels for the master on every new connection (redis-py's
``Sentinel.master_for``), so after a failover it finds the promoted replica by itself. A
connection to a node that was demoted keeps working but every write is refused (``READONLY``), a
blocked ``BRPOP`` is cut (``UNBLOCKED``), and a master short of replicas for
``min-replicas-to-write`` refuses writes (``NOREPLICAS``): each of these is turned into a
``ConnectionError`` after closing the connection, so every caller's handling of a lost connection
(retry, reconnect, ask the sentinels again) applies, and nothing treats it as a fatal reply.

Such a refusal comes at once after a connect that succeeded, so a reconnect loop that waits only
when a connect fails (a Celery worker's consumer: kombu's ``ensure_connection``) would spin: an
idle worker whose ``BRPOP`` (a write) a replica-starved master refuses logged a lost connection
with its traceback 3 to 7 times a second. A refusal therefore waits before it is raised
(``REFUSAL_BACKOFF``: 0.25 s, doubling per refusal in a row up to 2 s) on connections whose
callers do not wait by themselves; ``FailoverRetry``'s (the project's own clients) already do.
"""
from __future__ import annotations

import socket
import ssl
import threading
import time
from typing import Any, Callable
from urllib.parse import urlparse

import redis
from kombu import transport as kombu_transport
from kombu.transport import pyamqp
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError, ResponseError, TimeoutError
from redis.retry import Retry
from redis.sentinel import Sentinel, SentinelManagedConnection

from .settings import QueueSettings, SettingsError, is_sentinel, parse_sentinel_url

# Error codes of a node that is no longer the writable master, or not yet safe to write to.
FAILOVER_CODES = ("READONLY", "UNBLOCKED", "NOREPLICAS")


def failover_error(exc: ResponseError) -> bool:
    """Whether a Redis error reply says the node is not (or not safely) the writable master."""
    return str(getattr(exc, "status_code", "") or "").upper() in FAILOVER_CODES or \
        str(exc).split(" ", 1)[0].upper() in FAILOVER_CODES


class RefusalBackoff:
    """The pause before a refusal (``failover_error``) is raised as a lost connection: ``first``
    seconds, doubling with each refusal by the same master in a row, at most ``cap``. A refusal
    more than ``quiet`` seconds after the previous one's pause ended starts again from ``first``:
    a master that took commands again (a replica back, a failover over) costs at most ``cap``
    seconds more of waiting once, and a failover's one or two refusals (``UNBLOCKED``,
    ``READONLY``) a fraction of a second. Kept per process and master name, across connection
    pools (kombu builds a new pool on every reconnect)."""

    def __init__(self, first: float = 0.25, cap: float = 2.0, quiet: float = 10.0) -> None:
        self.first, self.cap, self.quiet = first, cap, quiet
        self._lock = threading.Lock()
        self._streaks: dict[Any, tuple[int, float]] = {}

    def pause(self, key: Any) -> float:
        """Seconds to wait after a refusal by master ``key`` (the refusal counted)."""
        now = time.monotonic()
        with self._lock:
            count, resumed = self._streaks.get(key, (0, float("-inf")))
            count = count + 1 if now - resumed < self.quiet else 1
            seconds = min(self.cap, self.first * 2 ** min(count - 1, 16))
            self._streaks[key] = (count, now + seconds)
        return seconds


REFUSAL_BACKOFF = RefusalBackoff()


class FailoverAwareConnection(SentinelManagedConnection):
    """A connection to the master the sentinels name, on which a refusal by a demoted (or
    replica-starved) master is a lost connection: closed, and raised as ``ConnectionError`` so the
    next attempt asks the sentinels again, after ``REFUSAL_BACKOFF``'s pause unless the caller's
    retry is a ``FailoverRetry``. redis-py does this for ``READONLY`` only.

    It also asks the sentinels on every reconnect: redis-py 8.1 reconnects a dropped connection
    when it next sends a command (``send_packed_command`` -> ``connect_check_health``), past
    ``SentinelManagedConnection.connect``, so to the address it had, and a client whose connection
    was dropped by a demoted master went back to it until its retries ran out."""

    _addressed = False  # within connect_to: the address was just asked of the sentinels

    def connect_to(self, address: tuple[str, int]) -> None:
        self._addressed = True
        try:
            super().connect_to(address)
        finally:
            self._addressed = False

    def connect_check_health(self, check_health: bool = True, retry_socket_connect: bool = True) -> None:
        if not self._sock and not self._addressed and self.connection_pool.is_master:
            self.host, self.port = self.connection_pool.get_master_address()
        super().connect_check_health(check_health=check_health, retry_socket_connect=retry_socket_connect)

    def read_response(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().read_response(*args, **kwargs)
        except ResponseError as exc:
            if not failover_error(exc):
                raise
            self.disconnect()
            if not isinstance(self.retry, FailoverRetry):  # which backs off by itself
                time.sleep(REFUSAL_BACKOFF.pause(getattr(self.connection_pool, "service_name", None)
                                                 or (self.host, self.port)))
            raise ConnectionError(f"the master refused the command ({exc}); asking the sentinels for the master again") from exc


class FailoverAwareSSLConnection(FailoverAwareConnection, redis.SSLConnection):
    """``FailoverAwareConnection`` over TLS."""


class FailoverRetry(Retry):
    """redis-py's retry for Sentinel clients: on a lost connection, back off (50 ms doubling to
    0.5 s) and try again, each connect asking the sentinels for the master, until ``seconds`` have
    passed since the first failure. A promotion takes the sentinels' ``down-after-milliseconds``
    plus a second or two: with ``seconds`` above that, callers never see it; a longer outage
    reaches them as ``ConnectionError`` (after at most twice ``seconds``: a command's retry may
    wait on a connect's)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(ExponentialBackoff(cap=0.5, base=0.05), retries=-1,
                         supported_errors=(ConnectionError, TimeoutError, socket.timeout))
        self.seconds = seconds

    def call_with_retry(self, do: Callable[[], Any], fail: Callable[..., Any],
                        is_retryable: Callable[[Exception], bool] | None = None,
                        with_failure_count: bool = False) -> Any:
        self._backoff.reset()
        failures, deadline = 0, None
        while True:
            try:
                return do()
            except self._supported_errors as error:
                if is_retryable and not is_retryable(error):
                    raise
                failures += 1
                if with_failure_count:
                    fail(error, failures)
                else:
                    fail(error)
                now = time.monotonic()
                deadline = deadline or now + self.seconds
                if now >= deadline:
                    raise error
                time.sleep(max(0.0, min(self._backoff.compute(failures), deadline - now)))


def keepalive_options(settings: QueueSettings) -> dict[str, Any]:
    """redis-py's TCP keepalive options, from ``settings.socket_timeout`` (T s): a peer whose host
    went silent (its link cut, its machine off: no reset comes) is found dead within about T s,
    idle (probes after T/3 s, every T/9 s, three lost) or with data unacknowledged
    (``TCP_USER_TIMEOUT``, Linux). A socket timeout alone does not do it: a consumer's BRPOP waits
    in epoll, where no socket timeout applies, and the OS's own keepalive starts after 2 hours."""
    seconds = settings.socket_timeout
    wanted = {"TCP_KEEPIDLE": max(1, int(seconds / 3)), "TCP_KEEPINTVL": max(1, int(seconds / 9)), "TCP_KEEPCNT": 3,
              "TCP_USER_TIMEOUT": max(1000, int(seconds * 1000))}
    return {"socket_keepalive": True,
            "socket_keepalive_options": {getattr(socket, name): value for name, value in wanted.items()
                                         if hasattr(socket, name)}}


def sentinel_kwargs(settings: QueueSettings) -> dict[str, Any]:
    """Connection options for the sentinels themselves (not the master)."""
    options: dict[str, Any] = {"socket_timeout": settings.socket_timeout,
                               "socket_connect_timeout": settings.socket_timeout}
    if settings.redis_sentinel_password:
        options["password"] = settings.redis_sentinel_password
    options.update(tls_options(settings))
    return options


def tls_options(settings: QueueSettings) -> dict[str, Any]:
    """redis-py's TLS options for a Sentinel group reached over TLS (certificates verified); {} otherwise."""
    if not settings.redis_sentinel_tls:
        return {}
    options: dict[str, Any] = {"ssl": True, "ssl_cert_reqs": ssl.CERT_REQUIRED}
    if settings.redis_sentinel_ca_certs:
        options["ssl_ca_certs"] = settings.redis_sentinel_ca_certs
    return options


def redis_client(settings: QueueSettings, url: str, **kwargs: Any) -> redis.Redis:
    """A ``redis.Redis`` for ``url``: ``Redis.from_url`` for a plain URL, the current master
    through the sentinels for a Sentinel list (found again after a failover). ``kwargs`` go to
    redis-py (``decode_responses``, ...); socket timeouts and keepalive come from the settings."""
    kwargs.setdefault("socket_timeout", settings.socket_timeout)
    for key, value in keepalive_options(settings).items():
        kwargs.setdefault(key, value)
    if not is_sentinel(url):
        return redis.Redis.from_url(url, **kwargs)
    if not settings.redis_sentinel_master:
        raise SettingsError("a sentinel:// URL needs NMT_REDIS_SENTINEL_MASTER, the name the sentinels monitor")
    address = parse_sentinel_url(url)
    kwargs.setdefault("socket_connect_timeout", settings.socket_timeout)
    tls = tls_options(settings)
    sentinel = Sentinel(list(address.sentinels), sentinel_kwargs=sentinel_kwargs(settings))
    return sentinel.master_for(
        settings.redis_sentinel_master,
        connection_class=FailoverAwareSSLConnection if tls else FailoverAwareConnection,
        username=address.username, password=address.password, db=address.db, retry=FailoverRetry(settings.redis_failover_seconds),
        **{k: v for k, v in tls.items() if k != "ssl"}, **kwargs)


def transport_options(settings: QueueSettings, url: str) -> dict[str, Any]:
    """What kombu's Sentinel transport (and Celery's Sentinel result backend) need beyond the
    URL: the master's name and the sentinels' connection options; {} for a plain URL."""
    if not is_sentinel(url):
        return {}
    return {"master_name": settings.redis_sentinel_master, "sentinel_kwargs": sentinel_kwargs(settings)}


def use_ssl(settings: QueueSettings, url: str) -> dict[str, Any] | None:
    """Celery's ``broker_use_ssl`` / ``redis_backend_use_ssl`` for ``url``: certificates verified
    for ``rediss://`` and for a Sentinel group over TLS; None for plain TCP."""
    if urlparse(url).scheme == "rediss":
        return {"ssl_cert_reqs": ssl.CERT_REQUIRED}
    if is_sentinel(url) and settings.redis_sentinel_tls:
        return {k: v for k, v in tls_options(settings).items() if k != "ssl"}
    return None


class AmqpTransport(pyamqp.Transport):
    """kombu's py-amqp transport for ``amqp://`` and ``amqps://`` brokers, with the TLS host name
    checked against the broker each connection reaches.

    kombu fills ``server_hostname`` (``broker_use_ssl``, None in ``celery_config``) with the URL's
    host by writing it into the options dict itself, and that dict is Celery's setting, shared by
    every connection of the process: after the first connection every later one, to the next
    broker of a failover list (``amqps://h1//;amqps://h2//``) too, checked the first broker's name
    and was refused ("certificate is not valid for 'h1'"). Each connection now gets a copy, with
    the name left for kombu to fill from the URL it connects to.

    kombu also picks the transport by the URL's scheme when it switches to the next broker of a
    failover list, not by ``broker_transport``: the ``amqp``, ``amqps`` and ``pyamqp`` aliases name
    this class (``AMQP_ALIASES``; ``worker.transport`` names its subclass), so a connection that
    failed over keeps it; for ``amqps`` it turns TLS on as kombu's ``SSLTransport`` does."""

    def __init__(self, client: Any, **kwargs: Any) -> None:
        super().__init__(client, **kwargs)
        if str(getattr(client, "transport_cls", "")).lower() == "amqps" and not client.ssl:
            client.ssl = True

    def establish_connection(self) -> Any:
        options = self.client.ssl
        if isinstance(options, dict) and "server_hostname" in options:
            self.client.ssl = dict(options, server_hostname=None)
        return super().establish_connection()


AMQP_ALIASES = ("amqp", "amqps", "pyamqp")


def name_amqp_transport(path: str) -> None:
    """Make kombu's ``amqp://`` and ``amqps://`` schemes resolve to the transport at ``path``
    ("module:Class"), also where kombu resolves a failover list's next URL by its scheme."""
    for alias in AMQP_ALIASES:
        kombu_transport.TRANSPORT_ALIASES[alias] = path
        kombu_transport._transport_cache.pop(alias, None)  # kombu caches resolved names


name_amqp_transport(f"{__name__}:AmqpTransport")
