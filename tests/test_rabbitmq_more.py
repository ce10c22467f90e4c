"""RabbitMQ as the broker, continued (docs/scaling.md, "RabbitMQ with Redis state"): workers that
hang past the node's ``consumer_timeout``, ``amqps://`` with a CA of the test's own, and cancel.

One RabbitMQ node for the file (``tests/rabbitmq_harness.py``): a plain AMQP listener and a TLS one
whose certificate a CA made here signed, a 6 s heartbeat, channels that check ``consumer_timeout``
every 0.5 s (``channel_tick_interval``; 60 s by default; the timeout itself is set at run time for
the channels of one worker), a real redis-server for the job store, real ``celery -A worker
worker`` processes serving ``models/en-de``, and the real client and ``nmt`` CLI.
"""
from __future__ import annotations

import os
import signal
import ssl
import subprocess
import sys
import time
from datetime import datetime

import pytest

from client.client import JobFailedError, TranslationClient
from queue_config.celery_config import celery_config
from queue_config.names import batch_queue_for, queue_for
from queue_config.settings import QueueSettings, SettingsError, load_settings

from .conftest import REPO_ROOT
from .queue_harness import CeleryWorker, free_port, wait_for
from .rabbitmq_harness import PASSWORD, QUEUES, USER, RabbitNode, job_store, make_tls, worker_settings  # noqa: F401
from .test_rabbitmq import SMALL, _purge, _ready, document

CONSUMER_TIMEOUT_MS = 8000  # the hung worker's channels: a delivery unacknowledged this long closes its channel
DEFAULT_TIMEOUT_MS = 1_800_000  # RabbitMQ 3.10's default, for every other channel
HEARTBEAT = 6  # the node's heartbeat (s), below the workers' 30: it closes a silent connection after 2 to 3 of them


@pytest.fixture(scope="module")
def tls(tmp_path_factory):
    """The node's CA and certificate, and a CA of another name that signed nothing of the node's."""
    directory = tmp_path_factory.mktemp("tls")
    return make_tls(directory / "node"), make_tls(directory / "other", name="another CA")


@pytest.fixture(scope="module")
def node(tmp_path_factory, tls):
    node = RabbitNode(tmp_path_factory.mktemp("rabbitmq-more"), heartbeat=HEARTBEAT, channel_tick_ms=500,
                      tls=tls[0]).start()
    yield node
    node.stop()


@pytest.fixture
def fleet(node, job_store, tmp_path):
    """Starts workers on the node's plain listener (``broker_url=`` for another); afterwards a
    stopped worker is continued and stopped, the queues emptied and the job store flushed."""
    started: list[CeleryWorker] = []

    def start(name: str, concurrency: int = 1, wait: bool = True, **env) -> CeleryWorker:
        worker = CeleryWorker(name, worker_settings(node.url, job_store.url, **env), tmp_path, concurrency)
        started.append(worker)
        return worker.start(wait=wait)

    yield start
    for worker in started:
        if worker.process is not None and worker.process.poll() is None:
            os.killpg(worker.process.pid, signal.SIGCONT)
        worker.stop()
    _purge(node, QUEUES)
    job_store.client().flushall()


@pytest.fixture
def client(node, job_store):
    return TranslationClient(broker_url=node.url, result_backend=job_store.url)


def _attempts(job_store, job_id: str, scope: str = "document") -> int:
    return int(job_store.client().get(f"nmt:job:{job_id}:attempts:{scope}") or 0)


def _lease_holder(job_store, job_id: str) -> int:
    """The pid of the worker child whose lease the job's document holds (owner "host:pid:tag")."""
    owner = job_store.client().get(f"nmt:job:{job_id}:document:lease")
    assert owner, f"job {job_id} holds no lease"
    return int(owner.split(":")[-2])


def _healthy(worker: CeleryWorker) -> None:
    log = worker.log.read_text(errors="replace")
    assert worker.process.poll() is None, f"worker {worker.name} exited: {log[-3000:]}"
    assert "Unrecoverable error" not in log, log[-3000:]


# -- settings (no processes) -----------------------------------------------------------------------

def test_the_broker_ca_setting_goes_with_amqps_and_a_readable_file_and_channel_errors_reconnect(tmp_path):
    ca = tmp_path / "ca.pem"
    ca.write_text("-----BEGIN CERTIFICATE-----\n")
    redis_url = "redis://127.0.0.1:6379/0"
    config = celery_config(load_settings({"NMT_BROKER_URL": "amqps://nmt:pw@rabbit//", "NMT_RESULT_BACKEND": redis_url,
                                          "NMT_BROKER_CA_CERTS": str(ca)}))
    assert config["broker_use_ssl"] == {"cert_reqs": ssl.CERT_REQUIRED, "server_hostname": None, "ca_certs": str(ca)}
    assert config["broker_channel_error_retry"] is True  # a channel closed by the broker: reconnect, never exit
    assert config["broker_transport"] == "queue_config.connection:AmqpTransport"
    not_amqps = "NMT_BROKER_CA_CERTS is set but NMT_BROKER_URL is not amqps://"
    for env, message in [({"NMT_BROKER_URL": "amqp://nmt:pw@rabbit//", "NMT_RESULT_BACKEND": redis_url}, not_amqps),
                         ({"NMT_BROKER_URL": redis_url}, not_amqps),
                         ({"NMT_BROKER_URL": "amqps://nmt:pw@rabbit//", "NMT_RESULT_BACKEND": redis_url,
                           "NMT_BROKER_CA_CERTS": str(tmp_path / "missing.pem")}, "missing.pem is not a readable")]:
        with pytest.raises(SettingsError, match=message):
            load_settings({"NMT_BROKER_CA_CERTS": str(ca)} | env)


# -- 1. a hung worker past consumer_timeout ---------------------------------------------------------

def _logged_at(node, text: str) -> list[float]:
    """When (Unix time) the node logged each line holding ``text``."""
    return [datetime.fromisoformat(line.split(" [", 1)[0]).timestamp()
            for line in node.log.read_text(errors="replace").splitlines() if text in line]


def _timed_out(node) -> int:
    """How many times the node has logged a channel past its consumer_timeout."""
    return node.log.read_text(errors="replace").count("has timed out waiting for delivery acknowledgement")


@pytest.mark.integration
@pytest.mark.slow
def test_a_hung_worker_keeps_its_messages_past_the_consumer_timeout_until_its_connections_miss_heartbeats(
        node, job_store, fleet, client):
    """A worker (-c 2) stops (SIGSTOP to its parent and children: a hung host, its connections open
    and silent) while one child decodes a 40-sentence document Celery delivered and the other holds
    a small job Celery delivered and five more it took with ``basic_get`` for a batch. Its channels
    were opened with an 8 s ``consumer_timeout``. The node finds both channels (the consumer's and
    the taking one's) past it and closes them, but a quorum queue's messages go back only when the
    channel has ended, and a channel ends when the client answers the close: a hung client never
    does, so nothing is requeued then. The node closes the connections once they have missed two to
    three heartbeats (6 s here), and all seven messages are requeued; a second worker runs them, each
    job ends done once, and the hung worker, continued, reconnects and serves again."""
    node.set_consumer_timeout(CONSUMER_TIMEOUT_MS)
    try:
        hung = fleet("hung", concurrency=2, batch_wait_ms=60_000, batch_jobs=len(SMALL) + 10)
        doc = client.submit(text=document(40), src="en", tgt="de", options={"beam": 8})  # over NMT_BATCH_BYTES: alone
        smalls = client.submit_many([{"text": text, "src": "en", "tgt": "de"} for text in SMALL[:6]])
        jobs = [doc, *smalls]
        wait_for(lambda: doc.status().state == "running" and _ready(node, batch_queue_for("en", "de")) == 0, 30,
                 "the document to start and the batch to take the small jobs")
        timed_out = _timed_out(node)
        os.killpg(hung.process.pid, signal.SIGSTOP)
        stopped = time.time()
    finally:
        node.set_consumer_timeout(DEFAULT_TIMEOUT_MS)  # the second worker's channels: the default
    assert not any(job.status().finished for job in jobs)

    # Past the consumer timeout: both channels found late, and nothing requeued yet.
    wait_for(lambda: _timed_out(node) >= timed_out + 2, 30, "the node to find the hung worker's channels late")
    found_late = _logged_at(node, "has timed out waiting for delivery acknowledgement")[timed_out] - stopped
    log = node.log.read_text(errors="replace")
    if "missed heartbeats" not in log:  # (on a slow machine the heartbeats may have run out already)
        assert _ready(node, queue_for("en", "de")) == _ready(node, batch_queue_for("en", "de")) == 0

    # Two to three missed heartbeats later the node closes the connections and requeues all seven:
    # the second worker (started meanwhile) runs them.
    second = fleet("second", batch_wait_ms=50)
    wait_for(lambda: "missed heartbeats from client" in node.log.read_text(errors="replace"), 60,
             "the node to close the hung worker's connections")
    requeued = _logged_at(node, "missed heartbeats from client")[0] - stopped
    wait_for(lambda: all(job.status().finished for job in jobs), 120, "every job to end")
    ended = time.time() - stopped
    assert [job.status().state for job in jobs] == ["done"] * len(jobs)
    assert len(doc.result().segments) == 40 and all(len(job.result().segments) == 1 for job in smalls)
    assert _attempts(job_store, doc.id) == 2  # started by the hung worker, run again by the second

    # Continued, the hung worker finds its connections gone and makes them again; what its children
    # finish finds the jobs done and changes nothing.
    results = {job.id: job.result().text for job in jobs}
    connected = hung.log.read_text(errors="replace").count("Connected to ")
    os.killpg(hung.process.pid, signal.SIGCONT)
    wait_for(lambda: hung.log.read_text(errors="replace").count("Connected to ") > connected, 60,
             "the hung worker to reconnect")
    second.stop()  # what comes next is the hung worker's (a Markdown job: never held for a batch to fill)
    later = client.submit(text="A *bird* sings in the tree.", src="en", tgt="de", format="markdown")
    assert later.wait(timeout=60).text
    _healthy(hung)
    assert {job.id: job.result().text for job in jobs} == results
    assert [job.status().state for job in jobs] == ["done"] * len(jobs)
    duplicates = sum(_attempts(job_store, job.id) for job in jobs) - len(jobs)
    print(f"\nhung worker: channels found past the {CONSUMER_TIMEOUT_MS / 1000:.0f} s consumer timeout "
          f"{found_late:.1f} s after the hang, connections closed and messages requeued {requeued:.1f} s after it "
          f"(heartbeat {HEARTBEAT} s), all {len(jobs)} jobs done {ended:.1f} s after it; duplicate runs: {duplicates}")


@pytest.mark.integration
@pytest.mark.slow
def test_a_live_worker_whose_channel_passes_the_consumer_timeout_reconnects_and_its_job_runs_again(
        node, job_store, fleet, client):
    """A worker (-c 2) whose channel was opened with an 8 s ``consumer_timeout``, one child of which
    hangs (SIGSTOP to that child only: the parent reads its socket) while it runs a document. The
    node closes the parent's channel 8 s after the delivery; the parent answers the close (py-amqp
    does), so the channel ends and RabbitMQ requeues the message at once. The parent takes the
    closed channel for a lost connection: it terminates the hung child's task (SIGTERM, acted on
    once the child is continued), reconnects and stays up (Celery's default,
    ``broker_channel_error_retry`` off, made it exit: "Unrecoverable error: PreconditionFailed"),
    and the job runs again from the start and ends done once."""
    node.set_consumer_timeout(CONSUMER_TIMEOUT_MS)
    try:
        slow = fleet("slow", concurrency=2)
    finally:
        node.set_consumer_timeout(DEFAULT_TIMEOUT_MS)  # channels opened from now on (reconnects): the default
    doc = client.submit(text=document(24), src="en", tgt="de", options={"beam": 8})
    wait_for(lambda: doc.status().state == "running", 30, "the document to start")
    hung = _lease_holder(job_store, doc.id)
    assert hung in slow.children()
    os.kill(hung, signal.SIGSTOP)
    stopped = time.monotonic()
    try:
        wait_for(lambda: "Terminating it instead" in slow.log.read_text(errors="replace"), 30,
                 "the parent to read the channel's close and terminate the hung child's task")
        closed = time.monotonic() - stopped
    finally:
        os.kill(hung, signal.SIGCONT)  # the SIGTERM it was sent ends it now
    assert len(doc.wait(timeout=120).segments) == 24
    ended = time.monotonic() - stopped
    log = slow.log.read_text(errors="replace")
    assert "PRECONDITION_FAILED - delivery acknowledgement on channel 1 timed out" in log
    _healthy(slow)
    assert doc.status().state == "done"
    assert _attempts(job_store, doc.id) == 2  # the hung child's run, and the one after the close
    later = client.submit(text="A *bird* sings in the tree.", src="en", tgt="de", format="markdown")
    assert later.wait(timeout=60).text
    print(f"\nlive worker: channel closed {closed:.1f} s after the child hung ({CONSUMER_TIMEOUT_MS / 1000:.0f} s "
          f"consumer timeout, counted from the delivery), job done {ended:.1f} s after the hang")


# -- 2. amqps:// with a CA of one's own --------------------------------------------------------------

def _nmt(*args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nmt", *args], cwd=REPO_ROOT, env=os.environ | env,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.integration
@pytest.mark.slow
def test_amqps_with_the_ca_given_runs_jobs_and_a_wrong_ca_is_refused_naming_the_problem(node, job_store, fleet, tls,
                                                                                        tmp_path):
    """Worker and client reach the node's TLS listener with ``amqps://``, the certificate checked
    against ``NMT_BROKER_CA_CERTS`` (a CA made by the test) and the host name against the URL's. The
    worker's URL is a failover list whose first broker is down: its connections go on to the second
    and check that broker's name (kombu wrote the first one's name into the shared TLS options,
    and every connection after the first was refused). Small jobs are taken for a batch over the
    child's own TLS connection. With another CA, the client, ``nmt submit`` and a worker are refused
    with OpenSSL's reason."""
    ca, other = str(tls[0].ca), str(tls[1].ca)
    down = f"amqps://{USER}:{PASSWORD}@127.0.0.2:{free_port()}//"  # nothing listens there: refused at once
    secure = TranslationClient(settings=QueueSettings(broker_url=node.tls_url, result_backend=job_store.url,
                                                      broker_ca_certs=ca))
    jobs = secure.submit_many([{"text": text, "src": "en", "tgt": "de"} for text in SMALL[:4]])
    marked = secure.submit(text="A *cat* sleeps.", src="en", tgt="de", format="markdown")
    worker = fleet("tls", broker_url=f"{down};{node.tls_url}", broker_ca_certs=ca)
    assert [job.wait(timeout=60).provenance["timings"]["batched_jobs"] for job in jobs] == [4] * 4
    assert "*" in marked.wait(timeout=60).text
    log = worker.log.read_text(errors="replace")
    assert f"127.0.0.1:{node.tls_port}" in log and "could not take" not in log and "cannot take" not in log

    # Another CA: refused, with OpenSSL's reason, by a client (``nmt submit``, a process of its own:
    # kombu pools connections per URL, whatever the TLS options) and by a worker.
    text = tmp_path / "note.txt"
    text.write_text("A bird sings.\n", encoding="utf-8")
    started = time.monotonic()
    cli = _nmt("submit", "--src", "en", "--tgt", "de", str(text), NMT_BROKER_URL=node.tls_url,
               NMT_RESULT_BACKEND=job_store.url, NMT_BROKER_CA_CERTS=other)
    refused_s = time.monotonic() - started
    assert cli.returncode == 1 and "Traceback" not in cli.stderr, cli.stderr
    assert f"nmt submit: error: cannot reach the broker at amqps://nmt:***@127.0.0.1:{node.tls_port}//: " \
           "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed" in cli.stderr, cli.stderr
    refused = fleet("wrong-ca", wait=False, broker_url=node.tls_url, broker_ca_certs=other)
    wait_for(lambda: "CERTIFICATE_VERIFY_FAILED" in refused.log.read_text(errors="replace"), 60,
             "the worker with another CA to be refused")
    line = next(line for line in refused.log.read_text(errors="replace").splitlines()
                if "CERTIFICATE_VERIFY_FAILED" in line)
    assert f"Cannot connect to worker.transport:AmqpTransport://nmt:**@127.0.0.1:{node.tls_port}//: [SSL: " \
           "CERTIFICATE_VERIFY_FAILED] certificate verify failed: self-signed certificate in certificate chain" \
           in line, line
    assert not refused.ready
    print(f"\namqps: 4 jobs batched and a Markdown job done over TLS through a failover list; another CA: "
          f"nmt submit refused in {refused_s:.1f} s ({cli.stderr.strip()[:220]}); worker: {line[:300]}")


# -- 3. cancel ---------------------------------------------------------------------------------------

@pytest.mark.integration
@pytest.mark.slow
def test_cancel_over_rabbitmq_of_queued_jobs_and_of_a_running_chunked_document(node, job_store, fleet, client):
    """As with Redis: ``nmt cancel`` and ``Job.cancel`` mark the job cancelled in the job store
    (and ask the workers to revoke it); a cancelled job that is still queued is taken off its queue
    by the next worker without running (each of the three queues: the batch queue, the pair's queue,
    a document that would have been split), and a running chunked document stops after the chunks
    in flight: the rest of its chunks are consumed without running, and the worker is free for the
    next job at once."""
    env = {"NMT_BROKER_URL": node.url, "NMT_RESULT_BACKEND": job_store.url}
    small = client.submit(text="A dog runs.", src="en", tgt="de")
    marked = client.submit(text="A *cat* sleeps.", src="en", tgt="de", format="markdown")
    big = client.submit(text=document(48), src="en", tgt="de")
    first, again = _nmt("cancel", small.id, **env), _nmt("cancel", small.id, **env)
    assert (first.returncode, first.stdout) == (0, f"{small.id}\tcancelled\n"), first.stderr
    assert again.returncode == 1 and "is cancelled: nothing to cancel" in again.stderr, again.stderr
    assert marked.cancel() and big.cancel() and not marked.cancel()
    unknown = _nmt("cancel", "deadbeef", **env)
    assert unknown.returncode == 1 and unknown.stderr.strip() == \
        "nmt cancel: job deadbeef: no such job (never submitted, or its record expired)"

    worker = fleet("w1", chunk_sentences=4)
    # 60 chunks: on a fast CPU 12 of them were all done before `nmt cancel` had started
    running = client.submit(text=document(240), src="en", tgt="de", options={"beam": 8})
    wait_for(lambda: running.status().done > 0, 120, "the document's first chunk")
    cancelled = _nmt("cancel", running.id, **env)
    assert (cancelled.returncode, cancelled.stdout) == (0, f"{running.id}\tcancelled\n"), cancelled.stderr
    done_at_cancel = running.status().done
    with pytest.raises(JobFailedError, match="cancelled"):
        running.wait(timeout=30)
    later = client.submit(text="A *bird* sings in the tree.", src="en", tgt="de", format="markdown")
    assert later.wait(timeout=60).text
    wait_for(lambda: all(_ready(node, queue) == 0 for queue in QUEUES), 60, "the cancelled work to leave the queues")

    for job in (small, marked, big):
        status = job.status()
        assert (status.state, status.error) == ("cancelled", "cancelled by the client"), status
        assert _attempts(job_store, job.id) == 0 and job_store.client().get(f"nmt:job:{job.id}:result") is None
        with pytest.raises(JobFailedError, match="cancelled"):
            job.wait(timeout=5)
    assert client.store.plan(big.id) is None  # never split: no worker started it
    status = running.status()
    chunks_run = sum(_attempts(job_store, running.id, f"chunk-{index}") > 0 for index in range(60))
    assert status.state == "cancelled" and status.done < status.total == 240
    assert status.done <= done_at_cancel + 2 * 4 and chunks_run <= done_at_cancel // 4 + 2, (status, chunks_run)
    assert job_store.client().get(f"nmt:job:{running.id}:result") is None
    _healthy(worker)
    print(f"\ncancel: 3 queued jobs cancelled and never run; the running document stopped at {status.done}/240 "
          f"segments ({chunks_run} of 60 chunks run; {done_at_cancel} done at the cancel)")
