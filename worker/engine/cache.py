"""The segment cache: finished sentence results, keyed by everything that decides them (bundle
signature, search and text options, attention, the sentence), so a repeated segment is decoded once.

Two layers: a local LRU per worker process (thread-safe: batches decode on threads) and, optionally,
a store shared by every worker (``SharedStore``: the workers inject a Redis one, worker.cache_store),
whose entries expire after a TTL. Values are ``SegmentResult`` objects locally and
``SegmentResult.to_json()`` texts in the shared store. Results are in sentence offsets, so a
hit is valid wherever the sentence appears; ``assemble_document`` moves it into place.
"""
from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from collections import OrderedDict
from typing import Any, Iterable, Mapping, Protocol

from worker.text.segment import SegmentResult

log = logging.getLogger(__name__)
VERSION = 1  # part of every key: bump it when what a result holds, or how it is made, changes


class SharedStore(Protocol):
    """Results shared between workers. A store that cannot answer returns nothing and stores
    nothing (and says why in its log): the cache never fails a translation."""

    def load(self, keys: list[str]) -> dict[str, str]:
        """The JSON texts it holds among ``keys``."""

    def store(self, values: Mapping[str, str], ttl: float) -> None:
        """Keep ``values`` (key -> JSON text) for ``ttl`` seconds."""


class SegmentCache:
    """``size``: entries kept locally (0: none); ``ttl``: seconds an entry lives, locally and in
    the shared store; ``shared``: the store every worker reads, or None."""

    def __init__(self, size: int = 10_000, ttl: float = 86_400, shared: SharedStore | None = None) -> None:
        if size < 0 or ttl <= 0:
            raise ValueError(f"cache size must be >= 0 and ttl > 0, got size={size}, ttl={ttl}")
        self.size, self.ttl, self.shared = size, ttl, shared
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

    def get_many(self, keys: Iterable[str]) -> dict[str, SegmentResult]:
        """The cached results among ``keys``: local first, then the shared store (whose hits are kept locally)."""
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
        if self.shared is not None and missing:
            shared: dict[str, SegmentResult] = {}
            try:
                shared = {k: SegmentResult.from_json(json.loads(v)) for k, v in self.shared.load(missing).items()}
            except (ValueError, KeyError) as exc:  # an entry of another version is a miss, never a failed job
                log.warning("segment cache: unreadable shared entry: %s", exc)
            self._keep(shared)
            found |= shared
        return found

    def put_many(self, results: Mapping[str, SegmentResult]) -> None:
        """Store fresh results, locally and (with a shared store) for every worker."""
        self._keep(results)
        if self.shared is not None and results:
            self.shared.store({k: json.dumps(r.to_json(), ensure_ascii=False) for k, r in results.items()}, self.ttl)

    def __len__(self) -> int:
        return len(self._entries)

    def _keep(self, results: Mapping[str, SegmentResult]) -> None:
        if not self.size:
            return
        expires = time.monotonic() + self.ttl
        with self._lock:
            for key, result in results.items():
                self._entries[key] = (expires, result)
                self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
