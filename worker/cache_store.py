"""The segment cache's shared layer on Redis (``NMT_CACHE_REDIS``): entries under one key prefix,
expiring after the cache's TTL. An outage is a miss and a skipped store, logged, never a failed job."""
from __future__ import annotations

import logging
from typing import Mapping

import redis
from redis.exceptions import RedisError

log = logging.getLogger(__name__)
PREFIX = "nmt:seg:"


class RedisStore:
    """``worker.engine.cache.SharedStore`` on a Redis client every worker reaches."""

    def __init__(self, client: redis.Redis) -> None:
        self.client = client

    def load(self, keys: list[str]) -> dict[str, str]:
        try:
            values = self.client.mget([PREFIX + k for k in keys])
        except (RedisError, OSError) as exc:
            log.warning("segment cache: Redis lookup failed: %s", exc)
            return {}
        return {k: v.decode("utf-8") if isinstance(v, bytes) else v for k, v in zip(keys, values) if v is not None}

    def store(self, values: Mapping[str, str], ttl: float) -> None:
        try:
            with self.client.pipeline(transaction=False) as pipe:
                for key, value in values.items():
                    pipe.set(PREFIX + key, value, px=max(1, round(ttl * 1000)))
                pipe.execute()
        except (RedisError, OSError) as exc:
            log.warning("segment cache: Redis store failed: %s", exc)
