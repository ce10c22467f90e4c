"""Jobs submitted through ``/v1/jobs``: which key made each (a job is seen by that key only), its
file name, format, billed characters and callback URL, and the jobs whose end a webhook awaits.

    nmt:api:job:<job id>      hash: owner (key id), filename, format, src, tgt, characters, created,
                              callback_url, refunded; it expires with the job's record
    nmt:api:webhooks:watch    sorted set: job id -> when the gateway next looks at its state
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass

import redis

from queue_config.jobstore import JobStatus
from queue_config.names import KEY_PREFIX

from .limits import Limits

WATCH = f"{KEY_PREFIX}:api:webhooks:watch"
MAX_JOB_ID = 128


@dataclass(frozen=True)
class JobRecord:
    job_id: str
    owner: str  # key id
    filename: str
    format: str
    src: str
    tgt: str
    characters: int
    created: float
    callback_url: str = ""


def job_view(record: JobRecord, status: JobStatus) -> dict:
    """A job as ``GET /v1/jobs/{id}`` shows it and as its webhook carries it."""
    view = {"id": record.job_id, "status": status.state, "progress": {"done": status.done, "total": status.total},
            "error": status.error or None, "filename": record.filename, "format": record.format,
            "source_lang": record.src, "target_lang": record.tgt, "billed_characters": record.characters,
            "created": record.created}
    if status.state == "done":
        view["result_url"] = f"/v1/jobs/{record.job_id}/result"
    return view


class JobRecords:
    def __init__(self, client: redis.Redis, ttl: int) -> None:
        self.redis = client
        self.ttl = ttl

    @staticmethod
    def _key(job_id: str) -> str:
        return f"{KEY_PREFIX}:api:job:{job_id}"

    def remember(self, record: JobRecord) -> None:
        """Keep the record; a job with a callback URL is watched for its end, in the same transaction."""
        fields = {k: v for k, v in asdict(record).items() if k != "job_id"}
        with self.redis.pipeline() as pipe:
            pipe.hset(self._key(record.job_id), mapping=fields)
            pipe.expire(self._key(record.job_id), self.ttl)
            if record.callback_url:
                pipe.zadd(WATCH, {record.job_id: time.time()})
            pipe.execute()

    def get(self, job_id: str) -> JobRecord | None:
        if not job_id or len(job_id) > MAX_JOB_ID:
            return None
        raw = self.redis.hgetall(self._key(job_id))
        if not raw or "owner" not in raw:
            return None
        return JobRecord(job_id, raw["owner"], raw.get("filename", ""), raw.get("format", "txt"), raw.get("src", ""),
                         raw.get("tgt", ""), int(raw.get("characters", 0)), float(raw.get("created", 0)),
                         raw.get("callback_url", ""))

    def owned(self, job_id: str, key_id: str) -> JobRecord | None:
        """The record of a job ``key_id`` made; None for any other (no difference is told)."""
        record = self.get(job_id)
        return record if record is not None and record.owner == key_id else None

    def refund_unfinished(self, record: JobRecord, status: JobStatus, limits: Limits) -> None:
        """A job that failed or was cancelled is not billed: its characters are given back once."""
        if status.state in ("failed", "cancelled") and self.redis.hsetnx(self._key(record.job_id), "refunded", 1):
            limits.refund(record.owner, record.characters)
