"""Job records in Redis, keyed by job id: state, progress, attempts, a running lease, chunk results
and the final result. Shared by the client (reads, cancel) and the worker (writes).

Writes are idempotent because delivery is at-least-once: a result is stored with SET NX, so a
redelivered job never replaces or duplicates it, and a failure never overwrites a success.

    nmt:job:<id>            hash: state, done, total, error, src, tgt, name, submitted, finished, seconds (chunks)
    nmt:job:<id>:result     JSON of the finished job (JobResult)
    nmt:job:<id>:attempts   deliveries of the document task
    nmt:job:<id>:lease      the worker currently running it (SET NX with expiry, renewed)
    nmt:job:<id>:plan       JSON layout of a chunked document
    nmt:job:<id>:chunk:<i>  JSON results of chunk i;  nmt:job:<id>:chunks  set of finished chunks
    nmt:job:<id>:message:<scope>  the task message of a running scope (document, chunk-<i>), to re-send
    nmt:active              sorted set "<id>|<scope>" -> when a worker last reported it alive (worker.sweep)
    nmt:pairs               hash "src-tgt" -> unix time a worker last announced it
    nmt:models              hash model name -> "src-tgt", as workers announced them
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

import redis

from .names import KEY_PREFIX

ACTIVE = f"{KEY_PREFIX}:active"
STATES = ("queued", "running", "done", "failed", "cancelled")
FINAL_STATES = ("done", "failed", "cancelled")

# Finish atomically unless the job already ended: KEYS[1] hash; ARGV state, error, time, ttl.
_FINISH = """
local state = redis.call('HGET', KEYS[1], 'state')
if state == 'done' or state == 'failed' or state == 'cancelled' then return 0 end
redis.call('HSET', KEYS[1], 'state', ARGV[1], 'error', ARGV[2], 'finished', ARGV[3])
redis.call('EXPIRE', KEYS[1], ARGV[4])
return 1
"""


@dataclass(frozen=True)
class JobStatus:
    job_id: str
    state: str  # queued | running | done | failed | cancelled | unknown
    done: int  # segments translated
    total: int  # segments in the document (0 until a worker has read it)
    error: str = ""

    @property
    def finished(self) -> bool:
        return self.state in FINAL_STATES


# Create unless the id is in use: KEYS[1] hash, KEYS[2] result; ARGV src, tgt, name, time, ttl.
_CREATE = """
if redis.call('EXISTS', KEYS[1]) == 1 or redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'state', 'queued', 'done', 0, 'total', 0, 'error', '', 'src', ARGV[1], 'tgt', ARGV[2],
           'name', ARGV[3], 'submitted', ARGV[4])
redis.call('EXPIRE', KEYS[1], ARGV[5])
return 1
"""


class JobStore:
    def __init__(self, client: redis.Redis, ttl: int) -> None:
        self.redis = client
        self.ttl = ttl
        self._finish = client.register_script(_FINISH)
        self._create = client.register_script(_CREATE)

    @classmethod
    def from_url(cls, url: str, ttl: int, **kwargs: Any) -> "JobStore":
        return cls(redis.Redis.from_url(url, decode_responses=True, **kwargs), ttl)

    def key(self, job_id: str, *parts: str) -> str:
        return ":".join((KEY_PREFIX, "job", job_id, *parts))

    # -- client side ----------------------------------------------------------------------------
    def create(self, job_id: str, src: str, tgt: str, name: str) -> bool:
        """A new queued job; False (and nothing changed) if the id is taken by a job still on record."""
        return bool(self._create(keys=[self.key(job_id), self.key(job_id, "result")],
                                 args=[src, tgt, name, time.time(), self.ttl]))

    def status(self, job_id: str) -> JobStatus:
        record = self.redis.hgetall(self.key(job_id))
        if not record:
            return JobStatus(job_id, "unknown", 0, 0, "no such job (never submitted, or its record expired)")
        return JobStatus(job_id, record.get("state", "unknown"), int(record.get("done", 0)),
                         int(record.get("total", 0)), record.get("error", ""))

    def states(self, job_ids: list[str]) -> dict[str, str]:
        """``{job id: state}`` for many jobs in one round trip ("unknown" for ids with no record)."""
        with self.redis.pipeline(transaction=False) as pipe:
            for job_id in job_ids:
                pipe.hget(self.key(job_id), "state")
            return {job_id: state or "unknown" for job_id, state in zip(job_ids, pipe.execute())}

    def result(self, job_id: str) -> dict[str, Any] | None:
        raw = self.redis.get(self.key(job_id, "result"))
        return None if raw is None else json.loads(raw)

    def cancel(self, job_id: str) -> bool:
        return bool(self._finish(keys=[self.key(job_id)], args=["cancelled", "cancelled by the client", time.time(), self.ttl]))

    def served_pairs(self, max_age: float = 300.0) -> list[str]:
        now = time.time()
        return sorted(pair for pair, seen in self.redis.hgetall(f"{KEY_PREFIX}:pairs").items() if now - float(seen) < max_age)

    # -- worker side ----------------------------------------------------------------------------
    def announce_pairs(self, pairs: list[str]) -> None:
        if pairs:
            self.redis.hset(f"{KEY_PREFIX}:pairs", mapping={p: time.time() for p in pairs})

    def announce_models(self, models: dict[str, str]) -> None:
        """``{model name: "src-tgt"}`` a worker serves."""
        if models:
            self.redis.hset(f"{KEY_PREFIX}:models", mapping=models)

    def served_models(self) -> dict[str, str]:
        """Every model name any worker has announced, with its pair."""
        return dict(self.redis.hgetall(f"{KEY_PREFIX}:models"))

    def start(self, job_id: str, total: int) -> None:
        """Record the segment count; a queued (or never created) job becomes running."""
        self.redis.eval(
            "redis.call('HSET', KEYS[1], 'total', ARGV[1]) "
            "local state = redis.call('HGET', KEYS[1], 'state') "
            "if not state or state == 'queued' then redis.call('HSET', KEYS[1], 'state', 'running') end "
            "redis.call('EXPIRE', KEYS[1], ARGV[2]) return 1",
            1, self.key(job_id), total, self.ttl)

    def set_progress(self, job_id: str, done: int) -> None:
        self.redis.hset(self.key(job_id), "done", done)

    def attempt(self, job_id: str, scope: str = "document") -> int:
        """Count one more delivery of the job's document task (or of one of its chunks)."""
        key = self.key(job_id, "attempts", scope)
        with self.redis.pipeline() as pipe:
            pipe.incr(key)
            pipe.expire(key, self.ttl)
            count, _ = pipe.execute()
        return int(count)

    def put_result(self, job_id: str, payload: dict[str, Any]) -> bool:
        """Store the result once; returns False if a result was already there. Either way the job
        ends "done" (unless it had already ended): a stored result is never left behind a
        "running" record."""
        stored = self.redis.set(self.key(job_id, "result"), json.dumps(payload, ensure_ascii=False), nx=True, ex=self.ttl)
        if self._finish(keys=[self.key(job_id)], args=["done", "", time.time(), self.ttl]):
            self.redis.hset(self.key(job_id), "done", len(payload.get("segments", ())))
        return bool(stored)

    def fail(self, job_id: str, error: str) -> bool:
        """Mark the job failed unless it already ended (a success is never overwritten)."""
        return bool(self._finish(keys=[self.key(job_id)], args=["failed", error, time.time(), self.ttl]))

    def is_cancelled(self, job_id: str) -> bool:
        return self.redis.hget(self.key(job_id), "state") == "cancelled"

    def acquire_lease(self, job_id: str, owner: str, seconds: int) -> bool:
        return bool(self.redis.set(self.key(job_id, "lease"), owner, nx=True, ex=seconds))

    def renew_lease(self, job_id: str, owner: str, seconds: int) -> bool:
        return bool(self.redis.eval(
            "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('EXPIRE', KEYS[1], ARGV[2]) end return 0",
            1, self.key(job_id, "lease"), owner, seconds))

    def release_lease(self, job_id: str, owner: str) -> None:
        self.redis.eval("if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0",
                        1, self.key(job_id, "lease"), owner)

    # -- work in flight, for the sweep (worker.sweep) ------------------------------------------
    def activate(self, job_id: str, scope: str, message: dict[str, Any]) -> None:
        """A worker started the job's ``scope``: keep the task ``message`` ({"task", "args",
        "queue"}) that would start it again, until the scope ends."""
        with self.redis.pipeline() as pipe:
            pipe.set(self.key(job_id, "message", scope), json.dumps(message, ensure_ascii=False), ex=self.ttl)
            pipe.zadd(ACTIVE, {f"{job_id}|{scope}": time.time()})
            pipe.execute()

    def touch(self, job_id: str, scope: str, at: float | None = None) -> None:
        """The scope is alive (heartbeat) at ``at`` (default now): ZADD, so an entry Redis lost comes back."""
        self.redis.zadd(ACTIVE, {f"{job_id}|{scope}": time.time() if at is None else at})

    def deactivate(self, job_id: str, scope: str) -> None:
        with self.redis.pipeline() as pipe:
            pipe.zrem(ACTIVE, f"{job_id}|{scope}")
            pipe.delete(self.key(job_id, "message", scope))
            pipe.execute()

    def idle(self, before: float, limit: int = 100) -> list[tuple[str, str]]:
        """(job id, scope) of active scopes last reported alive before ``before``, oldest first."""
        members = self.redis.zrangebyscore(ACTIVE, "-inf", before, start=0, num=limit)
        return [tuple(m.rsplit("|", 1)) for m in members]  # type: ignore[misc]

    def message(self, job_id: str, scope: str) -> dict[str, Any] | None:
        raw = self.redis.get(self.key(job_id, "message", scope))
        return None if raw is None else json.loads(raw)

    def lease_held(self, job_id: str, scope: str) -> bool:
        return bool(self.redis.exists(self.key(f"{job_id}:{scope}", "lease")))

    def count_resend(self, job_id: str, scope: str) -> int:
        return int(self.redis.hincrby(self.key(job_id), f"resent:{scope}", 1))

    def put_plan(self, job_id: str, plan: dict[str, Any]) -> None:
        self.redis.set(self.key(job_id, "plan"), json.dumps(plan, ensure_ascii=False), nx=True, ex=self.ttl)

    def plan(self, job_id: str) -> dict[str, Any] | None:
        raw = self.redis.get(self.key(job_id, "plan"))
        return None if raw is None else json.loads(raw)

    def put_chunk(self, job_id: str, index: int, segments: list[dict[str, Any]], seconds: float = 0.0) -> int:
        """Store chunk ``index`` once (and the seconds it took) and return how many chunks are finished."""
        stored = self.redis.set(self.key(job_id, "chunk", str(index)), json.dumps(segments, ensure_ascii=False),
                                nx=True, ex=self.ttl)
        with self.redis.pipeline() as pipe:
            pipe.sadd(self.key(job_id, "chunks"), index)
            pipe.expire(self.key(job_id, "chunks"), self.ttl)
            if stored:
                pipe.hincrby(self.key(job_id), "done", len(segments))
                pipe.hincrbyfloat(self.key(job_id), "seconds", seconds)
            pipe.scard(self.key(job_id, "chunks"))
            return int(pipe.execute()[-1])

    def chunk_seconds(self, job_id: str) -> float:
        """Decoding seconds summed over a chunked job's stored chunks."""
        return float(self.redis.hget(self.key(job_id), "seconds") or 0.0)

    def chunks_finished(self, job_id: str) -> int:
        return int(self.redis.scard(self.key(job_id, "chunks")))

    def chunk_done(self, job_id: str, index: int) -> bool:
        return bool(self.redis.exists(self.key(job_id, "chunk", str(index))))

    def chunks(self, job_id: str, count: int) -> list[list[dict[str, Any]]]:
        raws = self.redis.mget([self.key(job_id, "chunk", str(i)) for i in range(count)])
        if any(r is None for r in raws):
            missing = [i for i, r in enumerate(raws) if r is None]
            raise KeyError(f"job {job_id}: chunk results missing for {missing}")
        return [json.loads(r) for r in raws]
