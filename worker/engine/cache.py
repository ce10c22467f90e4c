"""The segment cache: finished sentence results, keyed by everything that decides them (bundle
signature, search and text options, attention, the sentence), so a repeated segment is decoded once.

Two layers: a local LRU per worker process (thread-safe: batches decode on threads) and, optionally,
a Redis shared by every worker, whose entries expire after a TTL. Values are ``SegmentResult``
objects locally and ``SegmentResult.to_json()`` in Redis. Results are in sentence offsets, so a
hit is valid wherever the sentence appears; ``assemble_document`` moves it into place.
"""
from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from redis.exceptions import RedisError

if TYPE_CHECKING:
    from worker.text.segment import SegmentResult

log = logging.getLogger(__name__)
VERSION = 1  # part of every key: bump it when what a result holds, or how it is made, changes
REDIS_PREFIX = "nmt:seg:"


class SegmentCache:
    """``size``: entries kept locally (0: none); ``ttl``: seconds an entry lives, locally and in
    Redis; ``redis``: a ``redis.Redis`` client shared by all workers, or None. A Redis that fails
    makes the cache miss (and logs why): the cache never fails a translation."""

    def __init__(self, size: int = 10_000, ttl: float = 86_400, redis: Any = None) -> None:
        if size < 0 or ttl <= 0:
            raise ValueError(f"cache size must be >= 0 and ttl > 0, got size={size}, ttl={ttl}")
        self.size, self.ttl, self.redis = size, ttl, redis
        self._entries: OrderedDict[str, tuple[float, SegmentResult]] = OrderedDict()  # key -> (expires, result)
        self._lock = threading.Lock()

    @staticmethod
    def context(**parts: Any) -> "hashlib._Hash":
        """The hash state of everything but the sentence (JSON with sorted keys: stable across processes)."""
        digest = hashlib.sha256(json.dumps({"version": VERSION, **parts}, sort_keys=True, ensure_ascii=False).encode())
        digest.update(b"\0")
        return digest

    @staticmethod
    def key(context: "hashlib._Hash", sentence: str) -> str:
        digest = context.copy()
        digest.update(sentence.encode("utf-8"))
        return digest.hexdigest()

    def get_many(self, keys: Iterable[str]) -> dict[str, "SegmentResult"]:
        """The cached results among ``keys``: local first, then Redis (whose hits are kept locally)."""
        found, missing, now = {}, [], time.monotonic()
        with self._lock:
            for key in dict.fromkeys(keys):
                entry = self._entries.get(key)
                if entry is not None and entry[0] > now:
                    self._entries.move_to_end(key)
                    found[key] = entry[1]
                else:
                    self._entries.pop(key, None)
                    missing.append(key)
        if self.redis is not None and missing:
            from worker.text.segment import SegmentResult

            shared: dict[str, SegmentResult] = {}
            try:
                raw = self.redis.mget([REDIS_PREFIX + k for k in missing])
                shared = {k: SegmentResult.from_json(json.loads(v)) for k, v in zip(missing, raw) if v is not None}
            except (RedisError, OSError, ValueError, KeyError) as exc:  # an outage is a miss, never a failed job
                log.warning("segment cache: Redis lookup failed: %s", exc)
            self._keep(shared)
            found |= shared
        return found

    def put_many(self, results: Mapping[str, "SegmentResult"]) -> None:
        """Store fresh results, locally and (with Redis) for every worker."""
        self._keep(results)
        if self.redis is not None and results:
            try:
                with self.redis.pipeline(transaction=False) as pipe:
                    for key, result in results.items():
                        value = json.dumps(result.to_json(), ensure_ascii=False)
                        pipe.set(REDIS_PREFIX + key, value, px=max(1, round(self.ttl * 1000)))
                    pipe.execute()
            except (RedisError, OSError) as exc:
                log.warning("segment cache: Redis store failed: %s", exc)

    def __len__(self) -> int:
        return len(self._entries)

    def _keep(self, results: Mapping[str, "SegmentResult"]) -> None:
        if not self.size:
            return
        expires = time.monotonic() + self.ttl
        with self._lock:
            for key, result in results.items():
                self._entries[key] = (expires, result)
                self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
