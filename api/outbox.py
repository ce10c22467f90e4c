"""Webhook deliveries, at least once: when a watched job ends (done, failed or cancelled) an event
is written to Redis, and a background task of every gateway process posts the due ones, signed,
retrying with exponential backoff for up to ``NMT_WEBHOOK_MAX_AGE`` seconds. Everything pending
lives in Redis, so a gateway that restarts (or another one) delivers what was left.

    nmt:api:webhooks:watch      sorted set: job id -> next look at its state (api.job_records)
    nmt:api:webhooks:due        sorted set: event id -> when its next attempt is due
    nmt:api:webhook:<event id>  hash: url, body, job_id, created, attempts, last_error
    nmt:api:webhooks:dead       list: JSON of the last 1,000 deliveries given up

An event's id is ``evt_<job id>`` (a job ends once), sent in the body and the NMT-Event-Id header
for the receiver to deduplicate on. Taking due entries is one Lua call that also puts off their
next turn, so gateway processes sharing Redis do not post the same event at the same time.
"""
from __future__ import annotations

import asyncio
import json
import logging
import random
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from urllib.parse import urlsplit

import redis
from starlette.concurrency import run_in_threadpool

from queue_config.jobstore import FINAL_STATES, JobStore
from queue_config.names import KEY_PREFIX

from .callbacks import ATTEMPT_HEADER, EVENT_HEADER, SIGNATURE_HEADER, AllowList, sign
from .job_records import WATCH, JobRecords, job_view
from .limits import Limits
from .metrics import record_webhook
from .settings import WebhookSettings

log = logging.getLogger("api.webhooks")
DUE = f"{KEY_PREFIX}:api:webhooks:due"
DEAD = f"{KEY_PREFIX}:api:webhooks:dead"
KEEP_DEAD = 1000
BATCH = 50  # jobs looked at, or deliveries posted, per turn of a process
USER_AGENT = "nmt-gateway-webhooks/1"

# Take up to ARGV[3] members of KEYS[1] due by ARGV[1], and put their next turn at ARGV[2].
_TAKE = """
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[3])
for _, id in ipairs(ids) do redis.call('ZADD', KEYS[1], 'XX', ARGV[2], id) end
return ids
"""
# A watched job ended: KEYS watch set, event hash, due set; ARGV job id, event id, url, body, now, ttl.
# Only the call that takes the job off the watch set writes its event.
_EMIT = """
if redis.call('ZREM', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[2], 'url', ARGV[3], 'body', ARGV[4], 'job_id', ARGV[1], 'created', ARGV[5], 'attempts', 0)
redis.call('EXPIRE', KEYS[2], ARGV[6])
redis.call('ZADD', KEYS[3], ARGV[5], ARGV[2])
return 1
"""
EVENT_TYPES = {"done": "job.done", "failed": "job.failed", "cancelled": "job.cancelled"}


@dataclass(frozen=True)
class Delivery:
    event_id: str
    url: str
    body: bytes
    created: float
    attempts: int  # attempts made before this one


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """A redirect is a failed attempt: following it could lead off the allow-list."""

    def redirect_request(self, *args, **kwargs):
        return None


# Deliveries go straight to the receiver: no proxy from the environment, no redirects.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}), _NoRedirects)


def event_key(event_id: str) -> str:
    return f"{KEY_PREFIX}:api:webhook:{event_id}"


class Outbox:
    def __init__(self, store: JobStore, records: JobRecords, limits: Limits, settings: WebhookSettings) -> None:
        self.store = store
        self.redis = store.redis
        self.records = records
        self.limits = limits
        self.settings = settings
        self.allow = AllowList.parse(settings.allow)
        self._take = self.redis.register_script(_TAKE)
        self._emit = self.redis.register_script(_EMIT)

    @property
    def ttl(self) -> int:
        """Seconds an event's record outlives its last possible attempt."""
        return int(self.settings.max_age + self.settings.max_backoff + 3600)

    # (1) jobs whose end is awaited --------------------------------------------------------------
    def look(self, now: float | None = None) -> int:
        """Turn the watched jobs that have ended into due events; the number written."""
        now = time.time() if now is None else now
        job_ids = self._take(keys=[WATCH], args=[now, now + self.settings.poll, BATCH])
        if not job_ids:
            return 0
        states = self.store.states(job_ids)
        written = 0
        for job_id, state in states.items():
            if state == "unknown":  # the job's record expired: nothing to tell
                self.redis.zrem(WATCH, job_id)
                log.warning("webhook for job %s dropped: the job has no record any more", job_id)
            elif state in FINAL_STATES:
                written += self._event(job_id, now)
        return written

    def _event(self, job_id: str, now: float) -> int:
        record, status = self.records.get(job_id), self.store.status(job_id)
        if record is None or not record.callback_url:
            self.redis.zrem(WATCH, job_id)
            return 0
        self.records.refund_unfinished(record, status, self.limits)
        event_id = f"evt_{job_id}"
        body = json.dumps({"id": event_id, "type": EVENT_TYPES[status.state], "created": int(now),
                           "data": {"job": job_view(record, status)}}, ensure_ascii=False)
        return int(self._emit(keys=[WATCH, event_key(event_id), DUE],
                              args=[job_id, event_id, record.callback_url, body, now, self.ttl]))

    # (2) deliveries ------------------------------------------------------------------------------
    def take_due(self, now: float | None = None) -> list[Delivery]:
        """Due deliveries, each put off for as long as an attempt may take (another process skips it)."""
        now = time.time() if now is None else now
        ids = self._take(keys=[DUE], args=[now, now + self.settings.timeout + 5, BATCH])
        out = []
        for event_id in ids:
            raw = self.redis.hgetall(event_key(event_id))
            if not raw:
                self.redis.zrem(DUE, event_id)
                continue
            out.append(Delivery(event_id, raw["url"], raw["body"].encode("utf-8"), float(raw["created"]),
                                int(raw.get("attempts", 0))))
        return out

    def post(self, delivery: Delivery) -> str | None:
        """One attempt; None when the receiver answered 2xx, else what went wrong."""
        host = urlsplit(delivery.url).hostname or ""
        if not self.allow.allows(host):
            return "its host is no longer on NMT_WEBHOOK_ALLOW"
        request = urllib.request.Request(delivery.url, data=delivery.body, method="POST", headers={
            "Content-Type": "application/json", "User-Agent": USER_AGENT, EVENT_HEADER: delivery.event_id,
            SIGNATURE_HEADER: sign(self.settings.secret, delivery.body),
            ATTEMPT_HEADER: str(delivery.attempts + 1)})
        try:
            with _OPENER.open(request, timeout=self.settings.timeout) as answer:
                answer.read(64 * 1024)
                return None if 200 <= answer.status < 300 else f"HTTP {answer.status}"
        except urllib.error.HTTPError as exc:
            return f"HTTP {exc.code}"
        except (OSError, ValueError) as exc:  # refused, reset, timed out, DNS, a malformed answer
            return f"{type(exc).__name__}: {exc}"[:300]

    def settle(self, delivery: Delivery, error: str | None, now: float | None = None) -> None:
        """Forget a delivered event; otherwise schedule its next attempt, or give it up once its
        next attempt would fall past ``max_age``."""
        now = time.time() if now is None else now
        host = urlsplit(delivery.url).hostname
        if error is None:
            with self.redis.pipeline() as pipe:
                pipe.zrem(DUE, delivery.event_id)
                pipe.delete(event_key(delivery.event_id))
                pipe.execute()
            log.info("webhook %s delivered to %s (attempt %d)", delivery.event_id, host, delivery.attempts + 1)
            record_webhook("delivered")
            return
        attempts = delivery.attempts + 1
        wait = min(self.settings.backoff * 2 ** (attempts - 1), self.settings.max_backoff) * random.uniform(1.0, 1.1)
        permanent = error.startswith("its host")
        if permanent or now + wait > delivery.created + self.settings.max_age:
            dead = json.dumps({"event_id": delivery.event_id, "url": delivery.url, "attempts": attempts,
                               "last_error": error, "created": delivery.created, "given_up": now})
            with self.redis.pipeline() as pipe:
                pipe.zrem(DUE, delivery.event_id)
                pipe.delete(event_key(delivery.event_id))
                pipe.lpush(DEAD, dead)
                pipe.ltrim(DEAD, 0, KEEP_DEAD - 1)
                pipe.execute()
            log.warning("webhook %s to %s given up after %d attempts: %s", delivery.event_id, host, attempts, error)
            record_webhook("given_up")
            return
        with self.redis.pipeline() as pipe:
            pipe.hset(event_key(delivery.event_id), mapping={"attempts": attempts, "last_error": error})
            pipe.zadd(DUE, {delivery.event_id: now + wait})
            pipe.execute()
        log.info("webhook %s to %s: attempt %d failed (%s); next in %.1f s", delivery.event_id, host, attempts,
                 error, wait)
        record_webhook("retried")

    async def deliver(self, delivery: Delivery) -> None:
        error = await run_in_threadpool(self.post, delivery)
        await run_in_threadpool(self.settle, delivery, error)

    async def run(self) -> None:
        """The background task: look at watched jobs, post due deliveries, sleep, until cancelled."""
        log.info("webhooks: watching jobs every %g s", self.settings.poll)
        while True:
            try:
                await run_in_threadpool(self.look)
                due = await run_in_threadpool(self.take_due)
                await asyncio.gather(*(self.deliver(d) for d in due))
            except redis.RedisError as exc:  # Redis away: pending work waits there
                log.warning("webhooks: Redis unreachable (%s); retrying", type(exc).__name__)
            except Exception:
                log.exception("webhooks: a turn failed")
            await asyncio.sleep(self.settings.poll)
