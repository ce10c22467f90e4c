"""RabbitMQ as the broker with a Redis Sentinel group as the job store (docs/scaling.md, "RabbitMQ
with Redis state"): a RabbitMQ node of the file's own (``tests/rabbitmq_harness.py``), a master, a
replica and three sentinels (``tests/sentinel_harness.py``), real ``celery -A worker worker``
processes serving ``models/multi30k-en-de-int8`` with ``NMT_BROKER_URL=amqp://...`` and
``NMT_RESULT_BACKEND=sentinel://...;...``, and the real client. Small jobs and a Markdown job
finish with their records on the master and its replica; the master SIGKILLed mid-run: the
sentinels promote the replica, every job finishes, none is lost, the worker parents stay up, and
the client reads every result from the promoted master."""
from __future__ import annotations

import pytest

from client.client import TranslationClient
from queue_config.settings import load_settings

from .conftest import REPO_ROOT
from .queue_harness import CeleryWorker, wait_for
from .rabbitmq_harness import QUEUES, rabbit_node, worker_settings  # noqa: F401 (fixture)
from .sentinel_harness import QUICK_PERIODS, QUICK_SYNC, SentinelGroup, failover_run
from .test_queue_integration import document
from .test_rabbitmq import _purge

pytestmark = [pytest.mark.integration, pytest.mark.slow]

BUNDLE = REPO_ROOT / "models" / "multi30k-en-de-int8"
# Jobs above 200 bytes run on their own (the document path), smaller ones in batches of at most 8;
# the job store's clients ride out a failover for up to 15 s (NMT_REDIS_FAILOVER_SECONDS).
WORKER = {"bundles": str(BUNDLE), "batch_bytes": "200", "batch_jobs": "8", "sweep_seconds": "2",
          "redis_failover_seconds": "15"}


def _jobs(n: int) -> list[dict]:
    """``n`` toy jobs, beam 8: every fifth one of 1 to 4 sentences (batched), the others documents
    of 40 sentences (over NMT_BATCH_BYTES: each runs alone), long enough that most are still
    queued or running when the master is killed after the first few."""
    return [{"text": document(1 + i % 4 if i % 5 == 0 else 40, seed=i)[0], "src": "en", "tgt": "de",
             "options": {"beam": 8}} for i in range(n)]


def _store_env(group: SentinelGroup) -> dict[str, str]:
    """The group's settings with its sentinel:// list as the job store (``NMT_RESULT_BACKEND``)."""
    env = group.settings_env()
    return {"NMT_RESULT_BACKEND": env.pop("NMT_BROKER_URL")} | env


@pytest.fixture
def setup(rabbit_node, tmp_path):  # noqa: F811 (the fixture)
    """A Sentinel group of the test's own, and a function starting workers on the node and the group;
    every worker and the group are stopped, and the pair's queues emptied, after the test."""
    group = SentinelGroup(tmp_path / "sentinel", periods=QUICK_PERIODS, master_extra=QUICK_SYNC).start()
    started: list[CeleryWorker] = []

    def start(*names: str) -> list[CeleryWorker]:
        store = _store_env(group)
        env = worker_settings(rabbit_node.url, store.pop("NMT_RESULT_BACKEND"), **WORKER) | store
        workers = [CeleryWorker(name, env, tmp_path).start(wait=False) for name in names]
        started.extend(workers)
        for worker in workers:
            wait_for(lambda: worker.ready or worker.process.poll() is not None, 60, f"worker {worker.name} to be ready")
            assert worker.ready, worker.log.read_text()[-3000:]
        return workers

    try:
        yield group, start
    finally:
        for worker in started:
            worker.discard()
        group.stop()
        _purge(rabbit_node, QUEUES)


def _client(rabbit_node, group: SentinelGroup) -> TranslationClient:  # noqa: F811
    env = {"NMT_BROKER_URL": rabbit_node.url, "NMT_BATCH_BYTES": WORKER["batch_bytes"]}  # the client routes by size
    return TranslationClient(settings=load_settings(_store_env(group) | env))


def test_jobs_run_over_rabbitmq_with_records_on_the_sentinel_master_and_replica(rabbit_node, setup):  # noqa: F811
    group, start = setup
    client = _client(rabbit_node, group)
    texts = ["A man rides a bike.", "Two dogs play in the snow.", "A woman reads a book.", "A child runs."]
    jobs = client.submit_many([{"text": text, "src": "en", "tgt": "de"} for text in texts])
    marked = client.submit(text="A *cat* sleeps.\n\nA dog runs.", src="en", tgt="de", format="markdown")
    (worker,) = start("w1")  # queued first: its first batch takes the other small jobs
    results = [job.wait(timeout=60) for job in (*jobs, marked)]
    assert all(r.text.strip() for r in results) and [len(r.segments) for r in results] == [1, 1, 1, 1, 2]
    assert "*" in results[-1].text
    assert max(r.provenance["timings"]["batched_jobs"] for r in results[:-1]) > 1  # taken over RabbitMQ
    assert client.store.redis.connection_pool.get_master_address() == ("127.0.0.1", group.master.port)
    for job in (*jobs, marked):  # the records on the master, and replicated
        assert group.master.client().hget(f"nmt:job:{job.id}", "state") == "done"
        wait_for(lambda: group.replica.client().hget(f"nmt:job:{job.id}", "state") == "done", 10,
                 f"job {job.id}'s record to reach the replica")
    # the job store holds the jobs only; the messages were on RabbitMQ
    assert not [k for k in group.master.client().keys("*") if k.startswith(("celery", "_kombu", "unacked"))]
    assert "succeeded" in worker.log.read_text()


def test_the_job_stores_master_killed_mid_run_every_job_ends_on_the_promoted_replica(rabbit_node, setup):  # noqa: F811
    """SIGKILL of the job store's master once 3 of 30 jobs are done (RabbitMQ keeps the messages)."""
    group, start = setup
    workers = start("w1", "w2")
    parents = [worker.process.pid for worker in workers]
    old, new = group.master, group.replica
    client = _client(rabbit_node, group)
    jobs = _jobs(30)
    figures, submitted = failover_run(group, client, jobs, kill_when_done=3, deadline=40)
    logs = {worker.name: worker.log.read_text(errors="replace") for worker in workers}
    print(f"\n[rabbitmq+sentinel] {figures}")
    assert figures["done_before_kill"] <= len(jobs) // 2, "most jobs ended before the kill: make them longer"
    assert (figures["done"], figures["failed"], figures["lost"], figures["stuck"]) == (len(jobs), 0, 0, 0), (
        figures, {name: log[-4000:] for name, log in logs.items()})
    assert group.master_node() is new and new.role() == "master" and old.process.poll() is not None
    assert [worker.process.poll() for worker in workers] == [None, None], "a worker parent went down"
    assert [worker.process.pid for worker in workers] == parents
    assert not any("Unrecoverable error" in log for log in logs.values()), logs
    # the client reads every result from the promoted master
    assert client.store.redis.connection_pool.get_master_address() == ("127.0.0.1", new.port)
    assert len(submitted) == len(jobs)
    for job in submitted:
        assert job.result().text.strip() and new.client().hget(f"nmt:job:{job.id}", "state") == "done"
