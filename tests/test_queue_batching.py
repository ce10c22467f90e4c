"""Batches across jobs, on a real redis-server with real ``celery -A worker worker`` processes:
small plain-text jobs go to the pair's batch queue, a worker child decodes several of them
together and completes each on its own, and a worker killed mid-batch loses none of them."""
from __future__ import annotations

import os
import signal

import pytest

from client.client import JobFailedError
from queue_config.names import batch_queue_for, queue_for

from .queue_harness import wait_for
from .test_queue_integration import client, redis_server, workers  # noqa: F401 (fixtures)

pytestmark = [pytest.mark.integration, pytest.mark.slow]
SENTENCES = ["a man rides a red bike .", "two dogs play in the park .", "a woman reads a book .",
             "the child eats an apple .", "a big dog runs .", "people walk on the street ."]


def test_small_jobs_share_batches_and_each_finishes_on_its_own(workers, client, tiny_bundle):
    from worker.engine.translator import Translator

    jobs = client.submit_many([{"text": SENTENCES[i % len(SENTENCES)], "src": "en", "tgt": "de", "name": f"j{i}"}
                               for i in range(24)] + [{"text": " \n ", "src": "en", "tgt": "de", "name": "empty"}])
    big = client.submit(text=" ".join(SENTENCES) * 40, src="en", tgt="de", name="big")  # over batch_bytes
    assert client.store.redis.llen(batch_queue_for("en", "de")) == 25 and client.store.redis.llen(queue_for("en", "de")) == 1
    workers("w1", batch_wait_ms=200, batch_jobs=10)
    expected = {s: r.translation for s, r in zip(SENTENCES, Translator(tiny_bundle).translate_documents(SENTENCES))}
    batched = []
    for i, job in enumerate(jobs[:-1]):
        result = job.wait(timeout=120)
        assert result.text == expected[SENTENCES[i % len(SENTENCES)]]  # the same as decoded alone
        batched.append(result.provenance["timings"]["batched_jobs"])
    assert max(batched) == 10 and sum(batched) / len(batched) > 3, batched  # jobs really shared batches
    with pytest.raises(JobFailedError, match="document is empty"):  # failed on its own, in a batch
        jobs[-1].wait(timeout=60)
    assert big.wait(timeout=120).text and "batched_jobs" not in big.wait().provenance["timings"]
    redis = client.store.redis  # every message acknowledged, every lease released, nothing left active
    wait_for(lambda: not redis.hlen("unacked") and not redis.zcard("nmt:active")
             and not list(redis.scan_iter("nmt:job:*:lease")), 30, "the batches to leave nothing held")


def test_a_batch_stops_taking_jobs_at_its_character_budget(workers, client):
    """24 queued jobs of 16-27 characters, room for 50 in a batch but a budget of 60 characters:
    each batch holds about three jobs (never all of them), and every job finishes."""
    jobs = client.submit_many([{"text": SENTENCES[i % len(SENTENCES)], "src": "en", "tgt": "de"} for i in range(24)])
    workers("w1", batch_wait_ms=200, batch_jobs=50, batch_chars=60)
    batched = [job.wait(timeout=120).provenance["timings"]["batched_jobs"] for job in jobs]
    assert 2 <= max(batched) <= 5 and len(jobs) / sum(1 / n for n in batched) >= 2, batched


def test_a_worker_killed_mid_batch_loses_none_of_its_jobs(workers, client):
    """SIGKILL of the worker (parent and children) while a batch it took waits to fill: every job
    it had taken off the queue is handed to the next worker and finishes."""
    settings = {"visibility_timeout": 10, "retry_backoff_max": 2, "batch_jobs": 8}
    jobs = client.submit_many([{"text": s, "src": "en", "tgt": "de"} for s in SENTENCES])
    first = workers("w1", batch_wait_ms=8000, **settings)  # takes all six, then waits for two more
    queue = batch_queue_for("en", "de")
    wait_for(lambda: client.store.redis.llen(queue) == 0, 60, "the batch to take the jobs off the queue")
    assert not any(client.store.status(job.id).finished for job in jobs)
    os.killpg(first.process.pid, signal.SIGKILL)
    first.process.wait(timeout=10)
    workers("w2", batch_wait_ms=50, **settings)
    for job, sentence in zip(jobs, SENTENCES):
        assert len(job.wait(timeout=120).segments) == 1
