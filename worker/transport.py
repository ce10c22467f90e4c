"""kombu's Redis transport, hardened against poison items on a queue, and taking many messages at once.

kombu pops an item off the queue list and parses it in the worker's event loop: an item that is not
JSON (``LPUSH nmt.en-de garbage``) or not a kombu envelope raises there and stops the worker parent
("Unrecoverable error"), and every worker that pops it next goes down the same way. This transport
drops such an item with one log line instead; real messages pass unchanged. The worker selects it
(``broker_transport``) for redis:// and rediss:// brokers, and ``SentinelTransport`` (kombu's
Sentinel transport with the same additions) for a sentinel:// list.

Over Sentinel, the connections are ``queue_config.connection``'s: a demoted master's refusals
(``READONLY`` on a write, ``UNBLOCKED`` on a waiting ``BRPOP``, ``NOREPLICAS``) are connection
losses, so the worker reconnects through the sentinels to the new master instead of taking them
for a fatal reply ("Unrecoverable error: ReadOnlyError").

For batches across jobs (``worker.taking``) a channel also takes up to N messages in one atomic
round trip, each held unacknowledged exactly as kombu's ``basic_get`` holds one (in the unacked
hash and index, so Redis restores it after the visibility timeout), and acknowledges many in one.
kombu's ``basic_get`` and ``ack`` take two round trips and one for each message.

A channel also honours ``unacked_restore_interval`` (seconds between restores of messages past the
visibility timeout; ``queue_config.celery_config`` sets it), which kombu 5.6 ignores: its worker
loop calls ``restore_visible`` every 10 s and restores on every 10th call only, so a message held
by a worker that lost its broker (a dead host, a Sentinel failover) came back up to 100 s after
its visibility timeout instead of 10 s.

kombu takes a Sentinel URL list (``sentinel://...;sentinel://...``) for failover alternates, and on
every reconnect switches to the next by its scheme (``Connection.switch``): to kombu's own Sentinel
transport, not the worker's ``broker_transport``. So importing this module makes the ``sentinel``
alias name ``SentinelTransport``: a worker that reconnected after a failover keeps this module's
channels (the restore interval, batches, poison items dropped, a demoted master's refusals).

With RabbitMQ as the broker (``amqp://``, ``amqps://``) the worker selects ``AmqpTransport``:
kombu's py-amqp transport whose channels also ``take`` (``basic_get`` up to N messages, each held
unacknowledged on the taking connection until its job is done) and ``ack_many``, and keep an idle
taking connection alive with heartbeat frames (``keep_alive``), so that RabbitMQ can tell a dead
host's connection from a busy one and hand the host's messages to other workers.
"""
from __future__ import annotations

import base64
import binascii
import json
import logging
import threading
import time
from functools import cached_property
from typing import Any

from kombu import transport as kombu_transport
from kombu.transport import pyamqp
from kombu.transport import redis as kombu_redis
from kombu.transport import virtual

from queue_config import connection
from queue_config.connection import FailoverAwareConnection, FailoverAwareSSLConnection

log = logging.getLogger(__name__)

# KEYS a queue's lists (first taken first), the unacked hash and its index; ARGV limit, time. Pops up
# to limit items and holds each envelope as kombu's QoS.append does (HSET tag -> [message, exchange,
# routing key], ZADD tag), the message spliced in as it was queued. Returns {item, tag held or ""}s.
_TAKE = """
local taken, limit, unacked, index = {}, tonumber(ARGV[1]), KEYS[#KEYS - 1], KEYS[#KEYS]
for i = 1, #KEYS - 2 do
  while #taken < limit do
    local item = redis.call('RPOP', KEYS[i])
    if not item then break end
    local ok, message = pcall(cjson.decode, item)
    local tag = ''
    if ok and type(message) == 'table' and type(message.properties) == 'table' and message.properties.delivery_tag then
      local info = message.properties.delivery_info
      if type(info) ~= 'table' then info = {} end
      tag = tostring(message.properties.delivery_tag)
      redis.call('HSET', unacked, tag, '[' .. item .. ',' .. cjson.encode(info.exchange or '') .. ','
                 .. cjson.encode(info.routing_key or '') .. ']')
      redis.call('ZADD', index, ARGV[2], tag)
    end
    taken[#taken + 1] = {item, tag}
  end
end
return taken
"""


def envelope_problem(message: Any) -> str | None:
    """Why ``message`` (a parsed queue item) is not a kombu message, or None when it is one."""
    if not isinstance(message, dict):
        return f"a JSON {type(message).__name__}, not an object"
    properties = message.get("properties")
    if not isinstance(properties, dict) or "delivery_tag" not in properties:
        return "no properties.delivery_tag"
    body = message.get("body")
    if body is not None and not isinstance(body, str):
        return f"its body is a {type(body).__name__}, not a string"
    if properties.get("body_encoding") == "base64":
        try:
            base64.b64decode(body or "", validate=True)
        except (binascii.Error, ValueError):
            return "its body is not base64 as its body_encoding says"
    return None


# Seconds between kombu's calls of ``QoS.restore_visible`` in the worker loop (``call_repeatedly(10, ...)``).
RESTORE_TICK = 10


class QoS(kombu_redis.QoS):
    def restore_visible(self, start: int = 0, num: int = 10, interval: int = 10) -> None:
        """kombu's restore of messages past the visibility timeout, every ``unacked_restore_interval``
        seconds of the channel (rounded to kombu's 10 s tick) rather than every 10th tick."""
        every = max(1, round(self.channel.unacked_restore_interval / RESTORE_TICK))
        super().restore_visible(start=start, num=num, interval=every)

    def hold(self, message: virtual.Message) -> None:
        """Record a message ``Channel.take`` took as delivered and unacknowledged (kombu's
        ``append`` less its round trip, which the take script did)."""
        virtual.QoS.append(self, message, message.delivery_tag)

    def ack_many(self, delivery_tags: list[str]) -> None:
        """Acknowledge messages in one round trip (kombu's ``ack``: out of the unacked hash and
        index, for all the tags at once)."""
        with self.pipe_or_acquire() as pipe:
            pipe.zrem(self.unacked_index_key, *delivery_tags).hdel(self.unacked_key, *delivery_tags).execute()
        for tag in delivery_tags:
            virtual.QoS.ack(self, tag)


class TakingChannel:
    """What this project adds to kombu's Redis channels (plain and Sentinel): ``take`` and
    ``ack_many`` for batches, poison items dropped, and ``unacked_restore_interval`` honoured."""
    QoS = QoS
    unacked_restore_interval = 10 * RESTORE_TICK  # kombu's own period; the worker's settings set 10

    @cached_property
    def _take(self) -> Any:
        with self.conn_or_acquire() as client:
            return client.register_script(_TAKE)

    def take(self, queue: str, limit: int) -> list[virtual.Message]:
        """Up to ``limit`` messages from ``queue`` (its priority lists in order), unacknowledged
        as ``basic_get`` leaves one, in one atomic round trip. An item that is not a message is
        dropped with a log line (and never restored)."""
        keys = [self._q_for_pri(queue, pri) for pri in self.priority_steps] + [self.unacked_key, self.unacked_index_key]
        messages, dropped = [], []
        for item, tag in self._take(keys=keys, args=[limit, time.time()]):
            payload = _envelope(item, queue)
            if payload is None:
                dropped += [tag] if tag else []
                continue
            message = self.Message(payload, channel=self)
            self.qos.hold(message)
            messages.append(message)
        if dropped:
            self.qos.ack_many(dropped)
        return messages

    def ack_many(self, messages: list[virtual.Message]) -> bool:
        """Acknowledge messages ``take`` took, in one round trip. Never through a closed channel:
        kombu gave back what the channel still held when it closed (an ack now would open a new
        pool on it and acknowledge nothing); False then, and their jobs run again (finished ones
        are skipped by the job store)."""
        if self.closed:
            log.warning("not acknowledging %d taken message(s): their channel closed and gave them back", len(messages))
            return False
        self.qos.ack_many([message.delivery_tag for message in messages])
        return True

    def _brpop_read(self, **options):
        try:
            return super()._brpop_read(**options)
        except json.JSONDecodeError as exc:  # the item is already off the queue: dropping it loses nothing real
            log.error("dropped an item on a queue that is not a message (not JSON: %s)", exc)
            return True


class Channel(TakingChannel, kombu_redis.Channel):
    from_transport_options = kombu_redis.Channel.from_transport_options + ("unacked_restore_interval",)


class SentinelChannel(TakingChannel, kombu_redis.SentinelChannel):
    """kombu's Sentinel channel (``master_name`` and ``sentinel_kwargs`` from the transport
    options), on connections that take a demoted master's refusals for a lost connection."""
    from_transport_options = kombu_redis.SentinelChannel.from_transport_options + ("unacked_restore_interval",)
    connection_class = FailoverAwareConnection
    connection_class_ssl = FailoverAwareSSLConnection


class DroppingPoison:
    """A transport that drops queue items that are not kombu messages instead of dying on them."""

    def _deliver(self, message: Any, queue: str) -> None:
        problem = envelope_problem(message)
        if problem is not None:
            log.error("dropped an item on queue %s that is not a message (%s): %.200r", queue, problem, message)
            return
        super()._deliver(message, queue)


class Transport(DroppingPoison, kombu_redis.Transport):
    Channel = Channel


class SentinelTransport(DroppingPoison, kombu_redis.SentinelTransport):
    Channel = SentinelChannel


# The transport a reconnect's switch to the next sentinel:// URL resolves (kombu caches resolved names).
kombu_transport.TRANSPORT_ALIASES["sentinel"] = f"{__name__}:SentinelTransport"
kombu_transport._transport_cache.pop("sentinel", None)


def _envelope(item: Any, queue: str) -> dict[str, Any] | None:
    """A taken queue item as a kombu message envelope, or None (logged) when it is not one."""
    try:
        message = json.loads(item)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        log.error("dropped an item on queue %s that is not a message (not JSON: %s)", queue, exc)
        return None
    problem = envelope_problem(message)
    if problem is not None:
        log.error("dropped an item on queue %s that is not a message (%s): %.200r", queue, problem, message)
        return None
    return message


class AmqpChannel(pyamqp.Channel):
    """kombu's py-amqp channel with what the batch taker (``worker.taking``) needs: ``take``,
    ``ack_many``, ``closed``, and heartbeats from a thread while the worker child is busy decoding.
    Every frame this channel's connection sends goes through ``lock`` (the heartbeat thread's too):
    py-amqp, and OpenSSL under amqps://, must not write from two threads at once."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.lock = threading.RLock()
        super().__init__(*args, **kwargs)

    @property
    def closed(self) -> bool:
        return not self.is_open

    def take(self, queue: str, limit: int) -> list[pyamqp.Message]:
        """Up to ``limit`` messages from ``queue`` (``basic_get``, one round trip each), each
        unacknowledged until ``ack_many`` (or the message's ack or requeue); RabbitMQ hands them to
        another consumer if this connection closes first. Stops early when the broker says the
        queue held no more than the one it gave."""
        messages = []
        with self.lock:
            while len(messages) < limit:
                raw = self.basic_get(queue)
                if raw is None:
                    break
                messages.append(self.message_to_python(raw))
                if not raw.delivery_info.get("message_count"):
                    break
        return messages

    def ack_many(self, messages: list[pyamqp.Message]) -> bool:
        """Acknowledge messages ``take`` took (one frame each, no round trip). Never through a closed
        channel: RabbitMQ requeued what it held when it closed; False then, and their jobs run again
        (finished ones are skipped by the job store)."""
        if self.closed:
            log.warning("not acknowledging %d taken message(s): their channel closed and RabbitMQ requeued them",
                        len(messages))
            return False
        with self.lock:
            for message in messages:
                self.basic_ack(message.delivery_tag)
        return True

    def basic_ack(self, *args: Any, **kwargs: Any) -> Any:
        with self.lock:
            return super().basic_ack(*args, **kwargs)

    def basic_reject(self, *args: Any, **kwargs: Any) -> Any:
        with self.lock:
            return super().basic_reject(*args, **kwargs)

    def keep_alive(self, interval: float) -> threading.Thread:
        """Send a heartbeat frame every ``interval`` seconds from a daemon thread while the channel
        is open. A worker child reads its taking connection only when it takes or acknowledges, and
        decodes for seconds in between: without these frames RabbitMQ would close the connection
        (and requeue what it holds) after two heartbeat intervals, and without a heartbeat at all it
        would keep a dead host's messages until the host's TCP connection timed out. At most a third
        of the heartbeat the connection negotiated (a broker's ``heartbeat`` below the client's wins)."""
        negotiated = getattr(self.connection, "heartbeat", 0) or 0
        if negotiated:
            interval = min(interval, negotiated / 3)

        def beat() -> None:
            while not stop.wait(interval):
                with self.lock:
                    connection = self.connection
                    if self.closed or connection is None:
                        return
                    try:
                        connection.send_heartbeat()
                    except Exception as exc:  # noqa: BLE001 - the next take finds the connection gone
                        log.info("taking connection: heartbeat not sent (%s); stopping its heartbeats", exc)
                        return

        stop = threading.Event()
        thread = threading.Thread(target=beat, name="amqp-keepalive", daemon=True)
        thread.start()
        return thread


class AmqpConnection(pyamqp.Connection):
    Channel = AmqpChannel


class AmqpTransport(connection.AmqpTransport):
    """kombu's py-amqp transport (amqp:// and amqps://, TLS from ``broker_use_ssl``, each broker's
    host name checked: ``queue_config.connection.AmqpTransport``) with ``AmqpChannel``s."""
    Connection = AmqpConnection


# The transport a switch to the next amqp:// or amqps:// URL of a failover list resolves: this one,
# or a worker that failed over takes no batches ("cannot take messages for batches").
connection.name_amqp_transport(f"{__name__}:AmqpTransport")
