"""RabbitMQ as the broker with the job store in Redis (docs/scaling.md, "RabbitMQ with Redis state"):
settings, the Celery configuration, and end to end through a RabbitMQ node of the tests' own
(``tests/rabbitmq_harness.py``), a real redis-server for the job store, real
``celery -A worker worker`` processes serving the shipped ``models/en-de`` bundle, and the real
client: durable quorum queues, batches across jobs, a small job ahead of a big document's chunks,
no Celery task records, and a worker killed mid-job whose messages another worker runs."""
from __future__ import annotations

import os
import signal
import ssl
import time

import amqp
import pytest

from client.client import TranslationClient
from queue_config.celery_config import celery_config
from queue_config.names import batch_queue_for, chunk_queue_for, queue_for
from queue_config.settings import SettingsError, load_settings

from .queue_harness import CeleryWorker, wait_for
from .rabbitmq_harness import PASSWORD, QUEUES, USER, job_store, rabbit_node  # noqa: F401 (fixtures)
from .rabbitmq_harness import worker_settings

REDIS = "redis://:pw@redis:6379/0"
AMQP = "amqp://nmt:secret@rabbit:5672//"
SMALL = [f"The {a} {b} is on the {c}." for a in ("red", "old", "small", "new") for b in ("car", "book", "cup", "chair", "lamp")
         for c in ("table",)]


# -- settings and configuration (no processes) -------------------------------------------------

@pytest.mark.parametrize("backend", [REDIS, "rediss://:pw@redis:6380/0?ssl_cert_reqs=required", "unix:///run/redis.sock",
                                     "sentinel://s1:26379;sentinel://s2:26379"])
def test_an_amqp_broker_is_accepted_with_a_redis_job_store(backend):
    settings = load_settings({"NMT_BROKER_URL": AMQP, "NMT_RESULT_BACKEND": backend, "NMT_REDIS_SENTINEL_MASTER": "m"})
    assert settings.amqp_broker and settings.backend_url == backend
    assert load_settings({"NMT_BROKER_URL": "amqps://nmt:secret@rabbit//", "NMT_RESULT_BACKEND": REDIS}).amqp_broker
    assert not load_settings({"NMT_BROKER_URL": REDIS}).amqp_broker


@pytest.mark.parametrize("env, message", [
    ({"NMT_BROKER_URL": AMQP}, "NMT_BROKER_URL must be a redis.* or an amqp:// or amqps:// URL .RabbitMQ. with "
                               "NMT_RESULT_BACKEND naming the Redis job store: NMT_BROKER_URL is "
                               r"'amqp://nmt:\*\*\*@rabbit:5672//' and NMT_RESULT_BACKEND is not set"),
    ({"NMT_BROKER_URL": AMQP, "NMT_RESULT_BACKEND": AMQP}, "NMT_RESULT_BACKEND names the Redis job store .* RabbitMQ"),
    ({"NMT_BROKER_URL": REDIS, "NMT_RESULT_BACKEND": AMQP}, "NMT_RESULT_BACKEND names the Redis job store"),
    ({"NMT_BROKER_URL": "amqp://nmt:secret@:5672//", "NMT_RESULT_BACKEND": REDIS}, "NMT_BROKER_URL: no host"),
    ({"NMT_BROKER_URL": "amqp://h1:5672//;redis://h2", "NMT_RESULT_BACKEND": REDIS}, "must be amqp:// or amqps://"),
    ({"NMT_BROKER_URL": "amqp://h1:5672//;amqps://h2", "NMT_RESULT_BACKEND": REDIS}, "all amqp:// or all amqps://"),
    ({"NMT_BROKER_URL": AMQP, "NMT_RESULT_BACKEND": REDIS, "NMT_CACHE_REDIS": "1"}, "NMT_CACHE_REDIS .* turn it off"),
    ({"NMT_BROKER_URL": AMQP, "NMT_RESULT_BACKEND": "sentinel://s1:26379"}, "NMT_REDIS_SENTINEL_MASTER"),
])
def test_an_amqp_broker_without_a_redis_job_store_is_refused_with_the_reason(env, message):
    with pytest.raises(SettingsError, match=message):
        load_settings(env)


def test_the_amqp_configuration_keeps_messages_until_jobs_end_and_writes_no_task_records():
    config = celery_config(load_settings({"NMT_BROKER_URL": AMQP, "NMT_RESULT_BACKEND": REDIS}))
    assert config["task_acks_late"] and config["task_reject_on_worker_lost"]
    assert config["task_default_queue_type"] == config["task_create_missing_queue_type"] == "quorum"
    assert config["worker_prefetch_multiplier"] == 1  # per consumer on quorum queues: a worker holds -c of each queue
    assert config["result_backend"] is None and config["task_ignore_result"]  # the job store only
    # RabbitMQ confirms each publish, and no Redis transport option reaches py-amqp
    assert config["broker_transport_options"] == {"confirm_publish": True}
    assert config["broker_heartbeat"] == 30
    assert "broker_use_ssl" not in config
    tls = celery_config(load_settings({"NMT_BROKER_URL": "amqps://nmt:secret@rabbit//", "NMT_RESULT_BACKEND": REDIS}))
    assert tls["broker_use_ssl"] == {"cert_reqs": ssl.CERT_REQUIRED, "server_hostname": None}  # host name checked too
    # the Redis configuration is unchanged
    redis_config = celery_config(load_settings({"NMT_BROKER_URL": REDIS}))
    assert redis_config["result_backend"] == REDIS and "task_ignore_result" not in redis_config
    assert redis_config["broker_transport_options"]["visibility_timeout"] == 90


# -- end to end -----------------------------------------------------------------------------------

@pytest.fixture
def fleet(rabbit_node, job_store, tmp_path):
    """Starts ``celery -A worker worker`` processes on the node and the job store; the queues are
    emptied and the job store flushed after each test."""
    started: list[CeleryWorker] = []

    def start(name: str, concurrency: int = 1, **env) -> CeleryWorker:
        worker = CeleryWorker(name, worker_settings(rabbit_node.url, job_store.url, **env), tmp_path, concurrency)
        started.append(worker)
        return worker.start()

    yield start
    for worker in started:
        worker.stop()
    _purge(rabbit_node, QUEUES)
    job_store.client().flushall()


@pytest.fixture
def client(rabbit_node, job_store):
    return TranslationClient(broker_url=rabbit_node.url, result_backend=job_store.url)


def _channel(node):
    connection = amqp.Connection(f"127.0.0.1:{node.port}", userid=USER, password=PASSWORD)
    connection.connect()
    return connection, connection.channel()


def _purge(node, queues):
    connection, channel = _channel(node)
    try:
        for queue in queues:
            try:
                channel.queue_purge(queue)
            except amqp.exceptions.NotFound:
                channel = connection.channel()
    finally:
        connection.close()


def _ready(node, queue: str) -> int:
    return node.queue_depths(queue)[queue][0]


def document(n: int) -> str:
    """An English document of ``n`` sentences, one paragraph."""
    things = ("house", "garden", "river", "road", "window", "bridge", "school", "market", "train", "station")
    return " ".join(f"The {things[i % 10]} near the {things[(i * 3 + 1) % 10]} was {('old', 'new', 'quiet', 'busy')[i % 4]} "
                    f"in the year {1900 + i}." for i in range(n))


@pytest.mark.integration
@pytest.mark.slow
def test_jobs_batch_across_jobs_and_a_small_job_goes_ahead_of_a_big_documents_chunks(rabbit_node, job_store, fleet,
                                                                                    client):
    # Twenty small jobs queued before the worker starts: its first task takes the other nineteen
    # (basic_get on the child's own connection) and decodes them as one batch.
    jobs = client.submit_many([{"text": text, "src": "en", "tgt": "de"} for text in SMALL])
    assert _ready(rabbit_node, batch_queue_for("en", "de")) == len(SMALL)
    fleet("w1", chunk_sentences=4)
    batched = [job.wait(timeout=120).provenance["timings"]["batched_jobs"] for job in jobs]
    assert batched == [len(SMALL)] * len(SMALL), batched
    assert all(job.result().text for job in jobs)

    # A big document split into chunks on the chunk queue; once they are queued, small jobs sent
    # after them (one for the batch queue, one Markdown job for the pair's queue, which is the
    # big document's own) run as soon as the worker's child is free: after the chunk it runs and
    # at most one more (the prefetch, if it came first), never after the chunk queue.
    big = client.submit(text=document(48), src="en", tgt="de", options={"beam": 8})
    wait_for(lambda: big.status().done > 0, 120, "the big document's first chunk")
    chunks = client.store.plan(big.id)["chunks"]
    assert chunks == 12 and _ready(rabbit_node, chunk_queue_for("en", "de")) > 0
    before = big.status().done
    small = client.submit(text="A dog runs in the park.", src="en", tgt="de")
    marked = client.submit(text="A *cat* sleeps.", src="en", tgt="de", format="markdown")
    for job in (small, marked):
        job.wait(timeout=120)
    status = big.status()
    assert status.state == "running" and status.done <= before + 3 * 4 < status.total, (before, status)
    assert "*" in marked.result().text
    assert len(big.wait(timeout=240).segments) == status.total == 48

    # Durable quorum queues, declared by the worker and the client alike (a classic declaration of
    # the same name is refused); and no Celery task record in Redis: the job store is the record.
    for queue in QUEUES:
        connection, channel = _channel(rabbit_node)
        with pytest.raises(amqp.exceptions.PreconditionFailed, match="x-queue-type.*'classic' but current is 'quorum'"):
            channel.queue_declare(queue, durable=True, auto_delete=False, arguments={"x-queue-type": "classic"})
        connection.close()
    assert not list(job_store.client().scan_iter("celery-task-meta-*"))


@pytest.mark.integration
@pytest.mark.slow
def test_a_worker_killed_mid_job_has_its_messages_run_by_another_worker(rabbit_node, job_store, fleet, client):
    """SIGKILL of a worker (parent and children) while one child decodes a document and the other
    holds small jobs it took for a batch (waiting for more): RabbitMQ requeues every message the
    dead worker's connections held, unacknowledged, and the next worker finishes every job."""
    first = fleet("w1", concurrency=2, batch_wait_ms=60_000, batch_jobs=len(SMALL) + 10)
    doc = client.submit(text=document(100), src="en", tgt="de", options={"beam": 8})  # over NMT_BATCH_BYTES: alone
    wait_for(lambda: doc.status().state == "running", 60, "the document to start")
    smalls = client.submit_many([{"text": text, "src": "en", "tgt": "de"} for text in SMALL[:6]])
    wait_for(lambda: _ready(rabbit_node, batch_queue_for("en", "de")) == 0, 60, "the batch to take the small jobs")
    time.sleep(0.5)
    assert doc.status().state == "running" and not any(job.status().finished for job in smalls)
    os.killpg(first.process.pid, signal.SIGKILL)
    first.process.wait(timeout=10)
    wait_for(lambda: _ready(rabbit_node, batch_queue_for("en", "de")) == len(smalls)
             and _ready(rabbit_node, queue_for("en", "de")) == 1, 30, "RabbitMQ to requeue the dead worker's messages")

    fleet("w2", batch_wait_ms=50)
    assert len(doc.wait(timeout=240).segments) == 100
    for job in smalls:
        assert len(job.wait(timeout=60).segments) == 1
    attempts = job_store.client().get(f"nmt:job:{doc.id}:attempts:document")
    assert attempts == "2", attempts  # started by the dead worker, run again by the second


def test_the_sweep_never_sends_a_queued_job_again_on_rabbitmq_and_forgets_it_once_it_ends(rabbit_node, job_store, client):
    """RabbitMQ's queues cannot be read without taking from them, and it loses no confirmed message:
    the sweep leaves a job waiting there alone however long it waits (on Redis it would look for the
    message on the queue lists and, finding none, send it again), and forgets it once it ends."""
    from queue_config.jobstore import JobStore
    from queue_config.settings import QueueSettings
    from worker.sweep import stale_after, sweep_once

    settings = QueueSettings(broker_url=rabbit_node.url, result_backend=job_store.url, max_attempts=1)
    store, sent = JobStore.for_settings(settings), []
    try:
        job = client.submit(text="A dog runs.", src="en", tgt="de", job_id="waits-on-rabbitmq")
        assert store.is_queued(job.id, "document")
        late = time.time() + 10 * stale_after(settings)
        for _ in range(3):  # well past the re-send limit on Redis (max_attempts=1)
            assert sweep_once(store, settings, sent.append, now=late) == {"resent": 0, "failed": 0, "forgotten": 0,
                                                                          "alive": 1}
        assert sent == [] and job.status().state == "queued" and sum(_ready(rabbit_node, q) for q in QUEUES) == 1
        assert job.cancel()
        assert sweep_once(store, settings, sent.append, now=late)["forgotten"] == 1
        assert not store.is_queued(job.id, "document") and store.message(job.id, "document") is None
    finally:
        _purge(rabbit_node, QUEUES)
        job_store.client().flushall()
