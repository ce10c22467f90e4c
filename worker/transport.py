"""kombu's Redis transport, hardened against poison items on a queue.

kombu pops an item off the queue list and parses it in the worker's event loop: an item that is not
JSON (``LPUSH nmt.en-de garbage``) or not a kombu envelope raises there and stops the worker parent
("Unrecoverable error"), and every worker that pops it next goes down the same way. This transport
drops such an item with one log line instead; real messages pass unchanged. The worker selects it
(``broker_transport``) for redis:// and rediss:// brokers.
"""
from __future__ import annotations

import base64
import binascii
import json
import logging
from typing import Any

from kombu.transport import redis as kombu_redis

log = logging.getLogger(__name__)


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


class Channel(kombu_redis.Channel):
    def _brpop_read(self, **options):
        try:
            return super()._brpop_read(**options)
        except json.JSONDecodeError as exc:  # the item is already off the queue: dropping it loses nothing real
            log.error("dropped an item on a queue that is not a message (not JSON: %s)", exc)
            return True


class Transport(kombu_redis.Transport):
    Channel = Channel

    def _deliver(self, message: Any, queue: str) -> None:
        problem = envelope_problem(message)
        if problem is not None:
            log.error("dropped an item on queue %s that is not a message (%s): %.200r", queue, problem, message)
            return
        super()._deliver(message, queue)
