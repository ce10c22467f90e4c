"""Job records in Redis, keyed by job id: state, progress, attempts, a running lease, chunk results
and the final result. Shared by the client (reads, cancel) and the worker (writes).

Writes are idempotent because delivery is at-least-once: a result is stored with SET NX, so a
redelivered job never replaces or duplicates it, and a failure never overwrites a success. A worker
admits the scopes it was delivered (``admit``) and ends them (``end``) in one Lua call for a whole
batch of jobs, each job still checked, leased, stored and failed on its own.

The Redis client comes from ``queue_config.connection`` (``JobStore.for_settings``): plain, or the
master the sentinels name, found again after a failover; a write refused by a demoted master is a
lost connection there, retried on the new master (every write here may run twice: SET NX, state
checks). With ``NMT_REDIS_WAIT_REPLICAS`` each job-state write is followed by ``WAIT`` on the same
connection, so a failover right after it does not lose it unless the replicas missed it too.

    nmt:job:<id>            hash: state, done, total, error, failure ("input": its document cannot be read),
                            src, tgt, name, submitted, finished, seconds (chunks)
    nmt:job:<id>:result     JSON of the finished job (JobResult), or a reference to it in the result store
                            (NMT_RESULT_STORE, queue_config.result_store: files or PostgreSQL)
    nmt:job:<id>:attempts:<scope>  deliveries of the scope's task (document, chunk-<i>)
    nmt:job:<id>:<scope>:lease     the worker running the scope now (SET NX with expiry, renewed)
    nmt:job:<id>:plan       JSON layout of a chunked document
    nmt:job:<id>:chunk:<i>  JSON results of chunk i;  nmt:job:<id>:chunks  set of finished chunks
    nmt:job:<id>:message:<scope>  the task message of a queued or running scope (document, chunk-<i>), to re-send
    nmt:active              sorted set "<id>|<scope>" -> when a worker last reported it alive (worker.sweep)
    nmt:queued              sorted set "<id>|<scope>" -> when it was sent, then when the sweep last looked, of a job's
                            document (from submission) or a chunk (from its fan-out) no worker has started; its message
                            is kept in message:<scope> (worker.sweep); admission removes it
    nmt:pairs               hash "src-tgt" -> unix time a worker last announced it
    nmt:models              hash model name -> "src-tgt" (a multilingual model's pairs, comma-separated), as announced
"""
from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from typing import Any

import redis

from .connection import redis_client
from .names import KEY_PREFIX
from .result_store import RedisResultStore, ResultStore, resolve, result_store
from .settings import QueueSettings

log = logging.getLogger(__name__)

ACTIVE = f"{KEY_PREFIX}:active"
QUEUED = f"{KEY_PREFIX}:queued"
FINAL_STATES = ("done", "failed", "cancelled")
NO_SUCH_JOB = "no such job (never submitted, or its record expired)"
# A failed job's ``failure`` when its own document is at fault (corrupt, not of its format, no text):
# the client's to fix, where any other failure is the fleet's (the gateway answers 400, not 500).
INPUT_FAILURE = "input"
CHUNK_GRACE = 60  # seconds a chunked job's chunk results stay once its result is kept outside Redis


@dataclass(frozen=True)
class JobStatus:
    job_id: str
    state: str  # queued | running | done | failed | cancelled | unknown
    done: int  # segments translated
    total: int  # segments in the document (0 until a worker has read it)
    error: str = ""
    failure: str = ""  # INPUT_FAILURE when a failed job's document cannot be read; "" otherwise

    @property
    def finished(self) -> bool:
        return self.state in FINAL_STATES


@dataclass(frozen=True)
class Delivery:
    """One delivery of the task that runs a job's ``scope`` ("document", or a chunk: "chunk-<i>")."""
    job_id: str
    scope: str
    message: dict[str, Any]  # {"task", "args", "queue"}: what the sweep sends again if the scope is lost


_CHUNK_SCOPE = "chunk-"


def chunk_scope(index: int) -> str:
    """The scope of a chunked job's chunk ``index``: its lease, attempts and message are keyed by it."""
    return f"{_CHUNK_SCOPE}{index}"


def _chunk_index(scope: str) -> str:
    """The chunk index of a chunk's scope (``chunk_scope(3)``: "3"), "" for a document's."""
    return scope.removeprefix(_CHUNK_SCOPE) if scope.startswith(_CHUNK_SCOPE) else ""


def chunk_index(scope: str) -> int | None:
    """The index of a chunk scope ("chunk-3": 3); None for any other scope."""
    prefix, _, index = scope.partition("-")
    return int(index) if prefix == "chunk" and index.isdigit() else None


@dataclass(frozen=True)
class QueuedScope:
    """A job scope sent but not started by any worker (``JobStore.queued``), with what its record
    says: the sweep looks for its message on the pair's queues and sends it again if it is gone."""
    job_id: str
    scope: str
    state: str  # the job's state now ("queued" unless it started or ended since; "unknown": no record)
    src: str
    tgt: str
    stored: bool = False  # a chunk scope whose results are stored (a copy of its message ran it)

    @property
    def waiting(self) -> bool:
        """Whether its message still has work to start: a job's document while the job is queued;
        a chunk while its job has not ended and its results are not stored."""
        if chunk_index(self.scope) is None:
            return self.state == "queued"
        return self.state not in (*FINAL_STATES, "unknown") and not self.stored


@dataclass(frozen=True)
class Admission:
    """What ``JobStore.admit`` decided for one delivery."""
    state: str  # "run" | "busy" (another owner holds the lease) | "over" (attempts above the cap) | an ended job's state
    attempts: int  # deliveries of the scope counted so far, this one included (0 when it was not counted)


@dataclass(frozen=True)
class Ending:
    """How a running scope ends (``JobStore.end``): with its job's ``result`` stored, with its job
    failed for ``error``, or with neither (its work stored what it had). ``keep_active`` leaves it
    in the sweep's set: its work stopped on a transient error and its message may never come back."""
    job_id: str
    scope: str
    result: dict[str, Any] | None = None
    error: str | None = None
    keep_active: bool = False
    failure: str = ""  # with ``error``: INPUT_FAILURE when the job's document is at fault


# Create unless the id is in use: KEYS[1] hash, KEYS[2] result, KEYS[3] the queued set, KEYS[4] the
# document's message key; ARGV src, tgt, name, time, ttl, queued-set member, message JSON ("": none).
# With a message, the job is marked queued and its message kept, in the same call as its record.
_CREATE = """
if redis.call('EXISTS', KEYS[1]) == 1 or redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'state', 'queued', 'done', 0, 'total', 0, 'error', '', 'src', ARGV[1], 'tgt', ARGV[2],
           'name', ARGV[3], 'submitted', ARGV[4])
redis.call('EXPIRE', KEYS[1], ARGV[5])
if ARGV[7] ~= '' then
  redis.call('SET', KEYS[4], ARGV[7], 'EX', ARGV[5])
  redis.call('ZADD', KEYS[3], ARGV[4], ARGV[6])
end
return 1
"""
# Mark scopes sent (JobStore.mark_queued): KEYS[1] the queued set, then each scope's message key;
# ARGV time, ttl, then per scope its queued-set member and message JSON.
_MARK_QUEUED = """
for i = 2, #KEYS do
  redis.call('SET', KEYS[i], ARGV[2 * i], 'EX', ARGV[2])
  redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2 * i - 1])
end
return #KEYS - 1
"""
# Lua functions the scripts below share. finish: end a job unless it already ended (1 if this call
# ended it). store: its result once (SET NX; 1 if stored now), and the job ends done with its count.
_ENDINGS = """
local function finish(hash, state, error, now, ttl)
  local current = redis.call('HGET', hash, 'state')
  if current == 'done' or current == 'failed' or current == 'cancelled' then return 0 end
  redis.call('HSET', hash, 'state', state, 'error', error, 'finished', now)
  redis.call('EXPIRE', hash, ttl)
  return 1
end
local function store(hash, key, result, segments, now, ttl)
  local stored = redis.call('SET', key, result, 'NX', 'EX', ttl)
  if finish(hash, 'done', '', now, ttl) == 1 then redis.call('HSET', hash, 'done', segments) end
  if stored then return 1 end
  return 0
end
"""
# Fail a job with its failure kind, in the same call (a reader never sees one without the other):
# KEYS[1] hash; ARGV error, time, ttl, failure.
_FAIL = _ENDINGS + """
local ended = finish(KEYS[1], 'failed', ARGV[1], ARGV[2], ARGV[3])
if ended == 1 and ARGV[4] ~= '' then redis.call('HSET', KEYS[1], 'failure', ARGV[4]) end
return ended
"""
# A client's cancel: end a job that has not ended (1), 0 if it had, and -1 with nothing written when
# it has no record (a cancel must not make one for an id never submitted, or whose record expired).
# KEYS[1] hash; ARGV state, error, time, ttl.
_CANCEL = _ENDINGS + """
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
return finish(KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4])
"""
# KEYS[1] hash, KEYS[2] result; ARGV result JSON, segments, time, ttl.
_PUT_RESULT = _ENDINGS + "return store(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3], ARGV[4])"
# A chunk's results once, counted once: KEYS chunk, finished-chunks set, job hash; ARGV index,
# segments JSON, segment count, seconds, ttl. Returns the number of finished chunks.
_PUT_CHUNK = """
local stored = redis.call('SET', KEYS[1], ARGV[2], 'NX', 'EX', ARGV[5])
redis.call('SADD', KEYS[2], ARGV[1])
redis.call('EXPIRE', KEYS[2], ARGV[5])
if stored then
  redis.call('HINCRBY', KEYS[3], 'done', ARGV[3])
  redis.call('HINCRBYFLOAT', KEYS[3], 'seconds', ARGV[4])
end
return redis.call('SCARD', KEYS[2])
"""
# Segment counts; a queued (or never created) job becomes running. KEYS job hashes; ARGV ttl, then a total per key.
_START = """
for i, hash in ipairs(KEYS) do
  redis.call('HSET', hash, 'total', ARGV[i + 1])
  local state = redis.call('HGET', hash, 'state')
  if not state or state == 'queued' then redis.call('HSET', hash, 'state', 'running') end
  redis.call('EXPIRE', hash, ARGV[1])
end
return #KEYS
"""
# Admit deliveries (JobStore.admit): KEYS[1] the active set, KEYS[2] the queued set, then per delivery
# its job hash, lease, attempts, message and finished-chunks keys; ARGV owner, lease seconds, ttl, max
# attempts, time, then per delivery its active-set member, message JSON and chunk index ("" for a
# document). Returns {state, attempts} per delivery. Every delivery leaves the queued set: its
# message reached a worker. A copy of a chunk that already finished (a restore after the visibility
# timeout, while it ran) runs, to assemble the document if its first run died before that, but is
# not counted as an attempt: only a delivery that may die mid-translation is.
_ADMIT = """
local out = {}
for i = 0, (#KEYS - 2) / 5 - 1 do
  local hash, lease, attempts, message = KEYS[5 * i + 3], KEYS[5 * i + 4], KEYS[5 * i + 5], KEYS[5 * i + 6]
  local finished, index = KEYS[5 * i + 7], ARGV[3 * i + 8]
  redis.call('ZREM', KEYS[2], ARGV[3 * i + 6])
  local state = redis.call('HGET', hash, 'state')
  if state == 'done' or state == 'failed' or state == 'cancelled' then
    out[i + 1] = {state, 0}
  elseif not redis.call('SET', lease, ARGV[1], 'NX', 'EX', ARGV[2]) then
    out[i + 1] = {'busy', 0}
  else
    local count
    if index ~= '' and redis.call('SISMEMBER', finished, index) == 1 then
      count = tonumber(redis.call('GET', attempts) or '0')
    else
      count = redis.call('INCR', attempts)
      redis.call('EXPIRE', attempts, ARGV[3])
    end
    if count > tonumber(ARGV[4]) then
      redis.call('DEL', lease)
      out[i + 1] = {'over', count}
    else
      redis.call('SET', message, ARGV[3 * i + 7], 'EX', ARGV[3])
      redis.call('ZADD', KEYS[1], ARGV[5], ARGV[3 * i + 6])
      out[i + 1] = {'run', count}
    end
  end
end
return out
"""
# End running scopes (JobStore.end): KEYS[1] the active set, then per ending its job hash, result,
# lease and message keys; ARGV owner, ttl, time, then per ending its active-set member, what it
# does ("result", "error" or "none"), the result JSON or error, the result's segments, and "1" to
# keep it active. Returns 1 per ending whose result was stored or whose job failed by this call.
_END = _ENDINGS + """
local out = {}
for i = 0, (#KEYS - 1) / 4 - 1 do
  local hash, result, lease, message = KEYS[4 * i + 2], KEYS[4 * i + 3], KEYS[4 * i + 4], KEYS[4 * i + 5]
  local member, what, body, segments, keep = ARGV[5 * i + 4], ARGV[5 * i + 5], ARGV[5 * i + 6], ARGV[5 * i + 7], ARGV[5 * i + 8]
  out[i + 1] = 0
  if what == 'result' then out[i + 1] = store(hash, result, body, segments, ARGV[3], ARGV[2]) end
  if what == 'error' or what == 'input' then out[i + 1] = finish(hash, 'failed', body, ARGV[3], ARGV[2]) end
  if what == 'input' and out[i + 1] == 1 then redis.call('HSET', hash, 'failure', 'input') end
  if keep ~= '1' then
    redis.call('ZREM', KEYS[1], member)
    redis.call('DEL', message)
  end
  if redis.call('GET', lease) == ARGV[1] then redis.call('DEL', lease) end
end
return out
"""
# Heartbeat: KEYS[1] the active set, then leases; ARGV owner, lease seconds, time, then the
# leases' active-set members. Renews the leases the owner holds; every scope is reported alive.
_KEEP_ALIVE = """
for i = 2, #KEYS do
  if redis.call('GET', KEYS[i]) == ARGV[1] then redis.call('EXPIRE', KEYS[i], ARGV[2]) end
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[i + 2])
end
return #KEYS - 1
"""


def _member(job_id: str, scope: str) -> str:
    """A scope's member in the active set."""
    return f"{job_id}|{scope}"


def _what(ending: Ending) -> tuple[str, str]:
    """What ``JobStore.end`` does for an ending, with what: ("result", its JSON), ("error", the
    reason), ("input", the reason: a failure of the job's document) or ("none", "")."""
    if ending.result is not None:
        return "result", _json(ending.result)
    if ending.error is not None:
        return ("input" if ending.failure == INPUT_FAILURE else "error"), ending.error
    return "none", ""


class JobStore:
    def __init__(self, client: redis.Redis, ttl: int, wait_replicas: int = 0, wait_ms: int = 100) -> None:
        self.redis = client
        self.ttl = ttl
        self.wait_replicas = wait_replicas  # replicas each job-state write waits for (WAIT); 0: none
        self.wait_ms = wait_ms
        self.unreplicated = 0  # job-state writes fewer replicas acknowledged within wait_ms than asked
        self._create = client.register_script(_CREATE)
        self._mark_queued = client.register_script(_MARK_QUEUED)
        self._cancel = client.register_script(_CANCEL)
        self._fail = client.register_script(_FAIL)
        self._put_result = client.register_script(_PUT_RESULT)
        self._start = client.register_script(_START)
        self._admit = client.register_script(_ADMIT)
        self._end = client.register_script(_END)
        self._keep_alive = client.register_script(_KEEP_ALIVE)
        self._put_chunk = client.register_script(_PUT_CHUNK)
        self.results: ResultStore = RedisResultStore(client)  # where results are kept (for_settings: NMT_RESULT_STORE)

    @classmethod
    def from_url(cls, url: str, ttl: int, **kwargs: Any) -> "JobStore":
        """On one plain Redis (``redis://``, ``rediss://``, ``unix://``); components use ``for_settings``."""
        return cls(redis.Redis.from_url(url, decode_responses=True, **kwargs), ttl)

    @classmethod
    def for_settings(cls, settings: QueueSettings, url: str | None = None) -> "JobStore":
        """The job store on ``url`` (default: the result backend), plain or through Sentinel, with
        ``WAIT`` as the settings ask."""
        client = redis_client(settings, url or settings.backend_url, decode_responses=True)
        store = cls(client, settings.result_expires, settings.redis_wait_replicas, settings.redis_wait_ms)
        store.results = result_store(settings, client)
        return store

    def _write(self, script: Any, keys: list[str], args: list[Any]) -> Any:
        """Run a job-state write script; with ``wait_replicas``, and ``WAIT`` for that many replicas
        in the same round trip (WAIT counts the writes of its own connection: a pipeline keeps both on one)."""
        if not self.wait_replicas:
            return script(keys=keys, args=args)
        with self.redis.pipeline(transaction=False) as pipe:
            script(keys=keys, args=args, client=pipe)
            pipe.execute_command("WAIT", self.wait_replicas, self.wait_ms)
            result, acknowledged = pipe.execute()
        self._replicated(acknowledged)
        return result

    def _replicated(self, acknowledged: int) -> None:
        if acknowledged < self.wait_replicas:
            self.unreplicated += 1
            if self.unreplicated == 1 or self.unreplicated % 1000 == 0:
                log.warning("job-state write acknowledged by %d of %d replica(s) within %d ms (%d such writes): "
                            "a failover now may lose it", acknowledged, self.wait_replicas, self.wait_ms,
                            self.unreplicated)

    def key(self, job_id: str, *parts: str) -> str:
        return ":".join((KEY_PREFIX, "job", job_id, *parts))

    def lease_key(self, job_id: str, scope: str) -> str:
        """The lease on a job's scope (held by the worker running it): the one place its key is made."""
        return self.key(job_id, scope, "lease")

    # -- client side ----------------------------------------------------------------------------
    def create(self, job_id: str, src: str, tgt: str, name: str, message: dict[str, Any] | None = None) -> bool:
        """A new queued job; False (and nothing changed) if the id is taken by a job still on record.
        ``message`` ({"task", "args", "queue"}, what the submitter sends) marks its document queued
        and is kept, in the same write: the sweep sends it again if the broker loses it before a
        worker starts the job (``worker.sweep``). Without one the job is not watched while queued."""
        keys = [self.key(job_id), self.key(job_id, "result"), QUEUED, self.key(job_id, "message", "document")]
        args = [src, tgt, name, time.time(), self.ttl, _member(job_id, "document"), "" if message is None else _json(message)]
        return bool(self._write(self._create, keys=keys, args=args))

    def status(self, job_id: str) -> JobStatus:
        record = self.redis.hgetall(self.key(job_id))
        if not record:
            return JobStatus(job_id, "unknown", 0, 0, NO_SUCH_JOB)
        return JobStatus(job_id, record.get("state", "unknown"), int(record.get("done", 0)),
                         int(record.get("total", 0)), record.get("error", ""), record.get("failure", ""))

    def states(self, job_ids: list[str]) -> dict[str, str]:
        """``{job id: state}`` for many jobs in one round trip ("unknown" for ids with no record)."""
        with self.redis.pipeline(transaction=False) as pipe:
            for job_id in job_ids:
                pipe.hget(self.key(job_id), "state")
            return {job_id: state or "unknown" for job_id, state in zip(job_ids, pipe.execute())}

    def result(self, job_id: str) -> dict[str, Any] | None:
        raw = resolve(self.results, job_id, self.redis.get(self.key(job_id, "result")))
        return None if raw is None else json.loads(raw)

    def results_of(self, job_ids: list[str]) -> list[dict[str, Any] | None]:
        """``result`` of each job, its Redis keys read in one round trip."""
        held = self.redis.mget([self.key(job_id, "result") for job_id in job_ids]) if job_ids else []
        raws = [resolve(self.results, job_id, value) for job_id, value in zip(job_ids, held)]
        return [None if raw is None else json.loads(raw) for raw in raws]

    def delete_result(self, job_id: str) -> None:
        """Remove a job's result: where it is stored, and its key (or reference) in Redis."""
        self.results.delete(job_id)
        self.redis.delete(self.key(job_id, "result"))

    def cancel(self, job_id: str) -> bool | None:
        """Cancel a job that has not ended: True if this call cancelled it, False if it had already
        ended, None if Redis has no record of it (and then nothing is written)."""
        cancelled = self._write(self._cancel, keys=[self.key(job_id)],
                                 args=["cancelled", "cancelled by the client", time.time(), self.ttl])
        return None if cancelled == -1 else bool(cancelled)

    def served_pairs(self, max_age: float = 300.0) -> list[str]:
        now = time.time()
        return sorted(pair for pair, seen in self.redis.hgetall(f"{KEY_PREFIX}:pairs").items() if now - float(seen) < max_age)

    # -- worker side ----------------------------------------------------------------------------
    def announce_pairs(self, pairs: list[str]) -> None:
        if pairs:
            self.redis.hset(f"{KEY_PREFIX}:pairs", mapping={p: time.time() for p in pairs})

    def announce_models(self, models: dict[str, str]) -> None:
        """``{model name: "src-tgt"}`` a worker serves ("src-tgt,src-tgt2" for a model of several pairs)."""
        if models:
            self.redis.hset(f"{KEY_PREFIX}:models", mapping=models)

    def served_models(self) -> dict[str, str]:
        """Every model name any worker has announced, with its pair (pairs, comma-separated)."""
        return dict(self.redis.hgetall(f"{KEY_PREFIX}:models"))

    def start(self, job_id: str, total: int) -> None:
        """Record the segment count; a queued (or never created) job becomes running."""
        self.start_many({job_id: total})

    def start_many(self, totals: dict[str, int]) -> None:
        """``start`` for each ``{job id: segment count}``, in one round trip."""
        if totals:
            self._write(self._start, keys=[self.key(job_id) for job_id in totals], args=[self.ttl, *totals.values()])

    def set_progress(self, job_id: str, done: int) -> None:
        self.redis.hset(self.key(job_id), "done", done)

    def put_result(self, job_id: str, payload: dict[str, Any]) -> bool:
        """Store the result once; returns False if a result was already there. Either way the job
        ends "done" (unless it had already ended): a stored result is never left behind a
        "running" record."""
        stored = bool(self._write(self._put_result, keys=[self.key(job_id), self.key(job_id, "result")],
                                  args=[self._kept(job_id, payload), len(payload.get("segments", ())), time.time(), self.ttl]))
        if stored and self.results.kind != "redis":
            self._drop_chunks(job_id)
        return stored

    def _kept(self, job_id: str, payload: dict[str, Any]) -> str:
        """The result in the result store (unless one is kept already); what its Redis key holds."""
        return self.results.put(job_id, _json(payload).encode("utf-8"))

    def _drop_chunks(self, job_id: str) -> None:
        """With results outside Redis, a chunked job's chunk results (as large as its result) leave
        Redis once the result is stored: after ``CHUNK_GRACE`` seconds, for a copy of the last
        chunk still assembling them. A later copy of any chunk finds the job done and is skipped."""
        indices = self.redis.smembers(self.key(job_id, "chunks"))
        if indices:
            with self.redis.pipeline(transaction=False) as pipe:
                for index in indices:
                    pipe.expire(self.key(job_id, "chunk", str(index)), CHUNK_GRACE)
                pipe.execute()

    def fail(self, job_id: str, error: str, failure: str = "") -> bool:
        """Mark the job failed unless it already ended (a success is never overwritten);
        ``failure=INPUT_FAILURE`` when its document is at fault."""
        return bool(self._write(self._fail, keys=[self.key(job_id)], args=[error, time.time(), self.ttl, failure]))

    def is_cancelled(self, job_id: str) -> bool:
        return self.redis.hget(self.key(job_id), "state") == "cancelled"

    # -- work in flight: leases, attempts and the sweep's active set (worker.sweep) -------------
    def admit(self, deliveries: list[Delivery], owner: str, lease_seconds: int, max_attempts: int) -> list[Admission]:
        """Decide each delivery in one atomic round trip for all: a scope whose job ended is skipped
        (its state); else ``owner`` takes its lease ("busy" if another holds it) and its attempt is
        counted (not for a copy of a chunk that already finished); above ``max_attempts`` the lease
        is given back ("over": the caller fails the job), else its message joins the active set
        ("run"). Each leaves the queued set."""
        if not deliveries:
            return []
        keys, args = [ACTIVE, QUEUED], [owner, lease_seconds, self.ttl, max_attempts, time.time()]
        for d in deliveries:
            keys += [self.key(d.job_id), self.lease_key(d.job_id, d.scope), self.key(d.job_id, "attempts", d.scope),
                     self.key(d.job_id, "message", d.scope), self.key(d.job_id, "chunks")]
            args += [_member(d.job_id, d.scope), _json(d.message), _chunk_index(d.scope)]
        return [Admission(state, int(attempts)) for state, attempts in self._write(self._admit, keys=keys, args=args)]

    def end(self, endings: list[Ending], owner: str) -> list[bool]:
        """End running scopes in one atomic round trip for all, each on its own: store its job's
        result once (the job ends done) or fail its job (unless it already ended), take it out of
        the active set (unless ``keep_active``), and release its lease if ``owner`` holds it.
        Returns per ending whether this call stored its result or failed its job."""
        if not endings:
            return []
        keys, args = [ACTIVE], [owner, self.ttl, time.time()]
        for e in endings:
            keys += [self.key(e.job_id), self.key(e.job_id, "result"), self.lease_key(e.job_id, e.scope),
                     self.key(e.job_id, "message", e.scope)]
            what, body = _what(e)
            body = self.results.put(e.job_id, body.encode("utf-8")) if what == "result" else body
            args += [_member(e.job_id, e.scope), what, body, len((e.result or {}).get("segments", ())), int(e.keep_active)]
        return [bool(took) for took in self._write(self._end, keys=keys, args=args)]

    def keep_alive(self, scopes: list[tuple[str, str]], owner: str, lease_seconds: int) -> None:
        """Heartbeat of (job id, scope)s: renew the leases ``owner`` holds and report every scope
        alive now, in one round trip."""
        if scopes:
            self._keep_alive(keys=[ACTIVE, *(self.lease_key(job_id, scope) for job_id, scope in scopes)],
                             args=[owner, lease_seconds, time.time(), *(_member(*scope) for scope in scopes)])

    def touch(self, job_id: str, scope: str, at: float) -> None:
        """The sweep puts off its next look at the scope until ``at``: ZADD, so an entry Redis lost comes back."""
        self.redis.zadd(ACTIVE, {_member(job_id, scope): at})

    def deactivate(self, job_id: str, scope: str) -> None:
        with self.redis.pipeline() as pipe:
            pipe.zrem(ACTIVE, _member(job_id, scope))
            pipe.delete(self.key(job_id, "message", scope))
            pipe.execute()

    def idle(self, before: float, limit: int = 100) -> list[tuple[str, str]]:
        """(job id, scope) of active scopes last reported alive before ``before``, oldest first."""
        members = self.redis.zrangebyscore(ACTIVE, "-inf", before, start=0, num=limit)
        return [tuple(m.rsplit("|", 1)) for m in members]  # type: ignore[misc]

    def message(self, job_id: str, scope: str) -> dict[str, Any] | None:
        raw = self.redis.get(self.key(job_id, "message", scope))
        return None if raw is None else json.loads(raw)

    def queued(self, before: float, limit: int = 100) -> list[QueuedScope]:
        """Queued scopes due for a look at ``before`` (marked then or earlier), oldest first, with
        their job's state and pair (and for a chunk whether its results are stored), in two round trips."""
        members = self.redis.zrangebyscore(QUEUED, "-inf", before, start=0, num=limit)
        scopes = [tuple(m.rsplit("|", 1)) for m in members]
        chunks = {at: chunk_index(scope) for at, (_, scope) in enumerate(scopes) if chunk_index(scope) is not None}
        with self.redis.pipeline(transaction=False) as pipe:
            for job_id, _ in scopes:
                pipe.hmget(self.key(job_id), ["state", "src", "tgt"])
            for at, index in chunks.items():
                pipe.exists(self.key(scopes[at][0], "chunk", str(index)))
            replies = pipe.execute()
        stored = dict(zip(chunks, replies[len(scopes):]))
        return [QueuedScope(job_id, scope, state or "unknown", src or "", tgt or "", bool(stored.get(at)))
                for at, ((job_id, scope), (state, src, tgt)) in enumerate(zip(scopes, replies))]

    def mark_queued(self, job_id: str, messages: dict[str, dict[str, Any]]) -> None:
        """Mark a job's scopes queued, each with its message (``{scope: {"task", "args", "queue",
        "priority"}}``), in one write, before they are sent: the sweep sends a message again if the
        broker loses it before a worker admits its scope (a chunk's fan-out; ``create`` marks a
        job's document). A scope marked again is looked at ``stale_after`` from now."""
        if messages:
            keys = [QUEUED, *(self.key(job_id, "message", scope) for scope in messages)]
            args: list[Any] = [time.time(), self.ttl]
            for scope, message in messages.items():
                args += [_member(job_id, scope), _json(message)]
            self._write(self._mark_queued, keys=keys, args=args)

    def is_queued(self, job_id: str, scope: str) -> bool:
        """Whether the scope is still marked queued (no worker has admitted it)."""
        return self.redis.zscore(QUEUED, _member(job_id, scope)) is not None

    def touch_queued(self, scopes: list[tuple[str, str]], at: float) -> None:
        """The sweep puts off its next look at queued (job id, scope)s until ``at``, in one round
        trip (only those still marked: a scope admitted meanwhile is not marked again)."""
        if scopes:
            self.redis.zadd(QUEUED, {_member(*scope): at for scope in scopes}, xx=True)

    def unqueue(self, job_id: str, scope: str, drop_message: bool) -> None:
        """Take a scope out of the queued set; with ``drop_message`` its kept message goes too
        (its job ended or has no record: nothing will send it again)."""
        with self.redis.pipeline() as pipe:
            pipe.zrem(QUEUED, _member(job_id, scope))
            if drop_message:
                pipe.delete(self.key(job_id, "message", scope))
            pipe.execute()

    def lease_held(self, job_id: str, scope: str) -> bool:
        return bool(self.redis.exists(self.lease_key(job_id, scope)))

    def count_resend(self, job_id: str, scope: str) -> int:
        return int(self.redis.hincrby(self.key(job_id), f"resent:{scope}", 1))

    def put_plan(self, job_id: str, plan: dict[str, Any]) -> None:
        self.redis.set(self.key(job_id, "plan"), _json(plan), nx=True, ex=self.ttl)

    def plan(self, job_id: str) -> dict[str, Any] | None:
        raw = self.redis.get(self.key(job_id, "plan"))
        return None if raw is None else json.loads(raw)

    def put_chunk(self, job_id: str, index: int, segments: list[dict[str, Any]], seconds: float = 0.0) -> int:
        """Store chunk ``index`` once (and the seconds it took) and return how many chunks are finished."""
        return int(self._write(self._put_chunk, keys=[self.key(job_id, "chunk", str(index)), self.key(job_id, "chunks"),
                                                      self.key(job_id)],
                               args=[index, _json(segments), len(segments), seconds, self.ttl]))

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


def _json(value: Any) -> str:
    """JSON as the store keeps it (UTF-8, not ASCII-escaped)."""
    return json.dumps(value, ensure_ascii=False)
