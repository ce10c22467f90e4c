"""Per-key character quotas and request rates, kept in Redis so that every gateway process sharing
the broker counts alike.

    nmt:api:usage:<key id>          characters translated (a quota check and its count are one Lua call)
    nmt:api:rate:<key id>:<minute>  requests in that minute (fixed window)
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import redis

from queue_config.names import KEY_PREFIX

from .errors import ApiError

WINDOW = 60  # seconds of a rate window
# KEYS[1] the usage counter; ARGV characters, quota (0: none). -1 when they would pass the quota.
_RESERVE = """
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
local n, quota = tonumber(ARGV[1]), tonumber(ARGV[2])
if quota > 0 and used + n > quota then return -1 end
return redis.call('INCRBY', KEYS[1], n)
"""


@dataclass(frozen=True)
class Usage:
    characters: int
    quota: int  # 0: none


class Limits:
    def __init__(self, client: redis.Redis, character_quota: int, rate_limit: int) -> None:
        self.redis = client
        self.character_quota = character_quota
        self.rate_limit = rate_limit
        self._reserve = client.register_script(_RESERVE)

    @staticmethod
    def _usage_key(key_id: str) -> str:
        return f"{KEY_PREFIX}:api:usage:{key_id}"

    def check_rate(self, key_id: str, now: float | None = None) -> None:
        """Count one request; ``ApiError`` 429 with Retry-After past the key's requests per minute."""
        if not self.rate_limit:
            return
        now = time.time() if now is None else now
        window = int(now // WINDOW)
        key = f"{KEY_PREFIX}:api:rate:{key_id}:{window}"
        with self.redis.pipeline() as pipe:
            pipe.incr(key)
            pipe.expire(key, 2 * WINDOW)
            count = pipe.execute()[0]
        if count > self.rate_limit:
            wait = max(1, math.ceil((window + 1) * WINDOW - now))
            raise ApiError(429, f"Too many requests: {self.rate_limit} per minute for this key; retry in {wait} s",
                           retry_after=wait)

    def reserve(self, key_id: str, characters: int) -> None:
        """Count ``characters`` against the key's quota; ``ApiError`` 456 (and nothing counted) when
        they would pass it."""
        if self._reserve(keys=[self._usage_key(key_id)], args=[characters, self.character_quota]) < 0:
            raise ApiError(456, "Quota for this billing period has been exceeded "
                                f"({self.character_quota} characters for this key)")

    def refund(self, key_id: str, characters: int) -> None:
        """Give back characters whose translation was not delivered."""
        if characters:
            self.redis.decrby(self._usage_key(key_id), characters)

    def usage(self, key_id: str) -> Usage:
        return Usage(int(self.redis.get(self._usage_key(key_id)) or 0), self.character_quota)
