"""RabbitMQ killed and restarted under a running fleet (docs/scaling.md, "RabbitMQ with Redis state").

A RabbitMQ node of the tests' own (``tests/rabbitmq_harness.py``, never the machine's service) is
SIGKILLed, the VM and all, while real ``celery -A worker worker`` processes run jobs, and started
again on the same ports and database: the durable quorum queues come back from disk with every
confirmed message that was not acknowledged, the workers reconnect by themselves (their parents
never exit), a client that submits during the outage gets an error (publisher confirms: never a
job reported sent that RabbitMQ does not have), and every job ends done; a job may run twice (its
message was unacknowledged when the node died), which the job store's attempt counts show. A worker
idle through the restart consumes again afterwards (workers have stopped consuming after a broker
restart in several Celery releases: PITFALLS.md)."""
from __future__ import annotations

import time

import pytest
from kombu.exceptions import OperationalError

from client.client import TranslationClient

from .queue_harness import CeleryWorker, wait_for
from .rabbitmq_harness import QUEUES, RabbitNode, job_store, worker_settings  # noqa: F401 (job_store: a fixture)
from .test_rabbitmq import document

OUTAGE = 3.0  # seconds the node stays down
HEARTBEAT = 6  # the node's heartbeat (s), below the workers' 30: it closes a silent connection after ~12 s
SMALL = [f"The {a} {b} is {c}." for a in ("red", "old", "small", "new", "big", "blue") for b in ("car", "book", "lamp",
                                                                                               "chair", "cup")
         for c in ("here",)]

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    """A node of this file's own: the tests crash it. Its short heartbeat makes a connection that
    stopped sending heartbeats show within seconds (the node closes it: "missed heartbeats")."""
    node = RabbitNode(tmp_path_factory.mktemp("rabbitmq-restart"), heartbeat=HEARTBEAT).start()
    yield node
    node.stop()


@pytest.fixture
def fleet(node, job_store, tmp_path):
    started: list[CeleryWorker] = []

    def start(name: str, **env) -> CeleryWorker:
        worker = CeleryWorker(name, worker_settings(node.url, job_store.url, **env), tmp_path, 1)
        started.append(worker)
        return worker.start()

    yield start
    for worker in started:
        worker.stop()
    job_store.client().flushall()


@pytest.fixture
def client(node, job_store):
    return TranslationClient(broker_url=node.url, result_backend=job_store.url)


def _crash_and_restart(node: RabbitNode, during=None) -> tuple[float, object]:
    """SIGKILL the node, call ``during`` while it is down, restart it after ``OUTAGE`` seconds.
    Returns when the restarted node accepts logins (time.monotonic()) and what ``during`` returned."""
    node.kill()
    down = time.monotonic()
    outcome = during() if during else None
    time.sleep(max(0.0, down + OUTAGE - time.monotonic()))
    node.restart()
    return time.monotonic(), outcome


def _healthy(workers: list[CeleryWorker]) -> None:
    """Every worker parent still runs, and none logged an unrecoverable error."""
    for worker in workers:
        log = worker.log.read_text(errors="replace")
        assert worker.process.poll() is None, f"worker {worker.name} exited: {log[-3000:]}"
        assert "Unrecoverable error" not in log, log[-3000:]


def _duplicates(job_store) -> int:
    """Deliveries past the first of every job scope (a document, a chunk): the runs a crash repeated."""
    redis = job_store.client()
    return sum(int(redis.get(key) or 1) - 1 for key in redis.scan_iter("nmt:job:*:attempts:*"))


def test_jobs_in_flight_survive_a_crash_of_the_node_and_finish_without_anyone_acting(node, job_store, fleet, client):
    workers = [fleet("w1", chunk_sentences=4, batch_jobs=5), fleet("w2", chunk_sentences=4, batch_jobs=5)]
    doc = client.submit(text=document(24), src="en", tgt="de", name="big")  # 6 chunks
    smalls = client.submit_many([{"text": text, "src": "en", "tgt": "de"} for text in SMALL])
    jobs = [doc, *smalls]
    wait_for(lambda: doc.status().done > 0 and any(job.status().finished for job in smalls), 90,
             "the document's first chunk and a small job")
    done_before = sum(job.status().state == "done" for job in jobs)
    assert done_before < len(jobs)

    def submit_while_down():
        started = time.monotonic()
        with pytest.raises(OperationalError) as refused:
            client.submit(text="A bird sings.", src="en", tgt="de", job_id="sent-while-down")
        return time.monotonic() - started, refused.value

    restarted, (refusal_s, refusal) = _crash_and_restart(node, submit_while_down)
    assert refusal_s < 15, refusal_s  # a clear error, soon: the publish found no broker

    first = wait_for(lambda: sum(job.status().state == "done" for job in jobs) > done_before and time.monotonic(), 60,
                     "a job to finish after the restart")
    wait_for(lambda: all(job.status().finished for job in jobs), 120, "every job to end")
    ended = time.monotonic()
    assert [job.status().state for job in jobs] == ["done"] * len(jobs), [job.status() for job in jobs]
    assert len(doc.result().segments) == 24 and all(job.result().text for job in smalls)
    _healthy(workers)

    # Nothing left behind: every confirmed message was run and acknowledged, and the job whose
    # submit raised was never published (its record stays queued; the client said to submit again).
    wait_for(lambda: all(ready == 0 for ready, _ in node.queue_depths(*QUEUES).values()), 30, "the queues to drain")
    assert client.job("sent-while-down").status().state == "queued"
    duplicates = _duplicates(job_store)
    print(f"\nrestart: {done_before}/{len(jobs)} jobs done at the crash; submit refused after {refusal_s:.2f} s "
          f"({type(refusal).__name__}: {refusal}); first job done {first - restarted:.1f} s after the restart, "
          f"all done {ended - restarted:.1f} s after it; duplicate runs: {duplicates}")


def test_a_worker_idle_through_the_restart_consumes_again(node, job_store, fleet, client):
    """The worker parent reconnects and consumes its three queues again, and its child's own taking
    connection (batches), whose heartbeat thread found the old socket dead while the child idled,
    comes back with its heartbeats: the node closes no connection for missed heartbeats."""
    worker = fleet("idle", chunk_sentences=4)
    client.submit(text="A dog runs.", src="en", tgt="de").wait(timeout=60)  # consumed, and took, before the crash
    connected = worker.log.read_text().count("Connected to ")
    restarted, _ = _crash_and_restart(node)
    since = node.log.stat().st_size
    wait_for(lambda: worker.log.read_text().count("Connected to ") > connected, 60, "the idle worker to reconnect")
    reconnected = time.monotonic()
    jobs = [client.submit(text="A cat sleeps.", src="en", tgt="de"),  # the batch queue: the child takes
            client.submit(text="A *cat* sleeps.", src="en", tgt="de", format="markdown"),  # the pair's queue
            client.submit(text=document(8), src="en", tgt="de")]  # two chunks on the chunk queue
    for job in jobs:
        job.wait(timeout=60)
    assert "*" in jobs[1].result().text and len(jobs[2].result().segments) == 8
    time.sleep(3 * HEARTBEAT)  # the idle child's taking connection must keep sending heartbeats
    assert "missed heartbeats" not in node.log.read_text(errors="replace")[since:]
    later = client.submit_many([{"text": text, "src": "en", "tgt": "de"} for text in SMALL[:3]])
    assert all(job.wait(timeout=60).segments for job in later)
    _healthy([worker])
    assert "could not take more jobs" not in worker.log.read_text()
    print(f"\nidle worker: reconnected {reconnected - restarted:.1f} s after the restart")
