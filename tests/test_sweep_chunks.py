"""Chunks of a split document whose message the broker lost before any worker started them (a pop
that survived a Redis crash when kombu's unacknowledged copy did not; a message deleted from its
list): the document's fan-out marks each chunk queued with its message, and the sweep sends a
vanished one again, fails the job naming the chunk past the cap, and leaves copies harmless. On a
real redis-server with real ``celery -A worker worker`` processes."""
from __future__ import annotations

import base64
import json
import time

import pytest

from queue_config.jobstore import ACTIVE, QUEUED
from queue_config.names import CHUNK_PRIORITY, CHUNK_TASK, PRIORITY_STEPS, queue_for, queue_lists
from queue_config.settings import QueueSettings
from worker.sweep import held_scopes, stale_after, sweep_once

from .queue_harness import wait_for
from .test_queue_integration import LONG, client, document, redis_server, workers  # noqa: F401 (fixtures)

pytestmark = [pytest.mark.integration, pytest.mark.slow]
QUEUE = queue_for("en", "de")
CHUNK_LIST = queue_lists(QUEUE)[PRIORITY_STEPS.index(CHUNK_PRIORITY)]  # where chunk messages wait
IDLE = {"resent": 0, "failed": 0, "forgotten": 0, "alive": 0}
# The worker's sweep every second with a 6 s visibility timeout: a lost message is sent again once
# it has been marked stale_after = 36 s (120 s with the defaults).
FAST = {"visibility_timeout": 6, "retry_backoff_max": 1, "sweep_seconds": 1}


def chunk_message(job_id: str, index: int) -> dict:
    return {"task": CHUNK_TASK, "args": [job_id, index], "queue": QUEUE, "priority": CHUNK_PRIORITY}


def chunk_of(item: str) -> list:
    """[job id, index] of a chunk message on a queue list ([] for another message)."""
    envelope = json.loads(item)
    if envelope["headers"]["task"] != CHUNK_TASK:
        return []
    return json.loads(base64.b64decode(envelope["body"]))[0]


def fan_out(client, sentences: int, chunk_sentences: int) -> tuple:
    """Submit a document (its decoding slowed by LONG) and wait until its chunks are on the queue:
    the job, its text, its sentences as the worker splits them, and its chunk count."""
    text, split = document(sentences, seed=7)
    job = client.submit(text=text, src="en", tgt="de", options=LONG)
    plan = wait_for(lambda: client.store.plan(job.id), 60, "the document's chunk plan")
    assert plan["chunks"] == -(-len(split) // chunk_sentences) and plan["chunks"] >= 6
    return job, text, split, plan["chunks"]


def waiting(r, job_id: str, index: int) -> str:
    """Chunk ``index``'s message on the queue, once the fan-out has sent it. The worker runs one
    chunk at a time, the first ones first: a later chunk's message waits for the ones before it."""
    def find():
        return next((item for item in r.lrange(CHUNK_LIST, 0, -1) if chunk_of(item) == [job_id, index]), None)
    return wait_for(find, 30, f"chunk {index}'s message")


def take_off(r, job_id: str, index: int) -> str:
    """Take chunk ``index``'s message off the queue before any worker does (a lost pop)."""
    item = waiting(r, job_id, index)
    assert r.lrem(CHUNK_LIST, 1, item) == 1, "a worker took the chunk first"
    return item


def test_a_chunk_whose_message_vanished_is_sent_again_by_the_sweep_and_the_job_finishes(workers, client):
    worker = workers("w1", chunk_sentences=12, **FAST)
    after = stale_after(QueueSettings(lease_seconds=3, **FAST))
    job, _, sentences, chunks = fan_out(client, 100, 12)  # 92 sentences in 8 chunks
    sent = time.monotonic()
    last = chunks - 1
    r, store = client.store.redis, client.store
    take_off(r, job.id, last)
    assert store.is_queued(job.id, f"chunk-{last}")  # marked when it was sent; no worker has admitted it
    # Every other chunk runs; the job stays running without its last chunk until the sweep finds it lost.
    result = job.wait(timeout=after + 120)
    assert time.monotonic() - sent >= after - 2  # sent again once marked stale_after ago, not before
    assert [s.source for s in result.segments] == sentences
    status = job.status()
    assert status.state == "done" and status.done == status.total == len(sentences)
    assert result.provenance["chunks"] == chunks
    log = worker.log.read_text()
    assert f"job {job.id}: chunk-{last} queued for" in log and "its message was sent again (1 of 3)" in log
    assert r.hget(store.key(job.id), f"resent:chunk-{last}") == "1"
    assert all(r.hget(store.key(job.id), f"resent:chunk-{i}") is None for i in range(last))
    assert [r.get(store.key(job.id, "attempts", f"chunk-{i}")) for i in range(chunks)] == ["1"] * chunks
    assert r.zcard(QUEUED) == 0
    wait_for(lambda: all(store.message(job.id, f"chunk-{i}") is None for i in range(chunks)), 10,
             "the chunks' messages to be dropped")


def test_a_chunk_message_that_keeps_vanishing_fails_its_job_naming_the_chunk(workers, client, redis_server):
    """The re-sent copies vanish too (the sweep runs here, its sends recorded, not made): after
    NMT_MAX_ATTEMPTS re-sends, with the running scopes' backoff, the job fails and says which chunk.
    The document is small enough for the batch queue: its fan-out runs from a worker's batch."""
    worker = workers("w1", chunk_sentences=5, sweep_seconds=0)  # its own sweep off: the test sweeps
    store, r = client.store, client.store.redis
    job, text, _, chunks = fan_out(client, 40, 5)
    assert len(text.encode("utf-8")) <= QueueSettings().batch_bytes  # sent to the batch queue
    last = chunks - 1
    item = take_off(r, job.id, last)
    wait_for(lambda: store.chunks_finished(job.id) == chunks - 1 and r.zcard(ACTIVE) == 0, 120, "the other chunks")
    assert r.zrange(QUEUED, 0, -1) == [f"{job.id}|chunk-{last}"]  # admission removed the others' marks
    assert "'batched_jobs': 1" in worker.log.read_text()  # the document task's summary, as Celery logs it
    assert store.message(job.id, f"chunk-{last}") == chunk_message(job.id, last)

    settings = QueueSettings(broker_url=redis_server.url, max_attempts=2)
    after, resent = stale_after(settings), []
    now = time.time()
    assert sweep_once(store, settings, resent.append, now=now) == IDLE  # not marked long enough ago
    # Delivered and not acknowledged (as kombu's QoS holds it): found, left alone, looked at after stale_after.
    r.hset("unacked", "tag-1", json.dumps([json.loads(item), "", QUEUE]))
    assert sweep_once(store, settings, resent.append, now=now + after + 1) == IDLE | {"alive": 1}
    r.hdel("unacked", "tag-1")
    assert sweep_once(store, settings, resent.append, now=now + after + 2) == IDLE  # looked at after stale_after
    assert sweep_once(store, settings, resent.append, now=now + 2 * after + 2) == IDLE | {"resent": 1}
    assert sweep_once(store, settings, resent.append, now=now + 3 * after + 3) == IDLE | {"resent": 1}
    assert sweep_once(store, settings, resent.append, now=now + 4 * after + 3) == IDLE  # waits 2 x stale_after
    assert sweep_once(store, settings, resent.append, now=now + 5 * after + 4) == IDLE | {"failed": 1}
    assert resent == [chunk_message(job.id, last)] * 2
    status = job.status()
    assert status.state == "failed", status
    assert f"its chunk-{last} message vanished from the broker before any worker started it" in status.error
    assert "sent again 2 times" in status.error and "NMT_MAX_ATTEMPTS=2" in status.error
    assert r.zcard(QUEUED) == 0 and store.message(job.id, f"chunk-{last}") is None
    assert sweep_once(store, settings, resent.append, now=now + 10 * after) == IDLE


def test_a_chunk_message_delivered_twice_translates_once_and_leaves_the_result_unchanged(workers, client):
    """A copy of a chunk's message (another task id, as the sweep sends it) at a document's
    priority, taken before the original: the original, delivered while the job still runs, finds
    the chunk stored and stores nothing. The result is the one a job without the copy gets."""
    worker = workers("w1", chunk_sentences=12, **FAST)
    store, r = client.store, client.store.redis
    job, text, sentences, chunks = fan_out(client, 100, 12)  # 92 sentences in 8 chunks
    middle = chunks // 2
    waiting(r, job.id, middle)
    # While its message waits, the chunk is marked queued with that message, and the sweep's scan finds it.
    assert store.is_queued(job.id, f"chunk-{middle}")
    assert store.message(job.id, f"chunk-{middle}") == chunk_message(job.id, middle)
    assert (job.id, f"chunk-{middle}") in held_scopes(r, [QUEUE])
    client.app.send_task(CHUNK_TASK, args=[job.id, middle], queue=QUEUE, priority=0)
    result = job.wait(timeout=300)
    # The original ran after the copy had stored the chunk: it is no attempt (JobStore.admit)
    assert r.get(store.key(job.id, "attempts", f"chunk-{middle}")) == "1"
    status = job.status()
    assert status.state == "done" and status.done == status.total == len(sentences)  # counted once
    assert [s.source for s in result.segments] == sentences
    assert r.zcard(QUEUED) == 0 and r.hget(store.key(job.id), f"resent:chunk-{middle}") is None
    assert worker.log.read_text().count(f"job {job.id} done") == 1

    reference = client.submit(text=text, src="en", tgt="de", options=LONG).wait(timeout=300)
    assert [s.translation for s in result.segments] == [s.translation for s in reference.segments]
    assert job.result().raw["segments"] == result.raw["segments"]  # the stored result did not change
