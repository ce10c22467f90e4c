"""Redis Sentinel against live servers, beyond ``tests/test_sentinel.py``: real ``celery -A worker
worker`` processes and the client over a group serving TLS only (and refused with another CA), over
a master with ``min-replicas-to-write 1`` and ``NMT_REDIS_WAIT_REPLICAS=1`` (its replica stopped
and started again), and the shared segment cache (``NMT_CACHE_REDIS``) over a sentinel:// URL.
Each group is a master, a replica and three sentinels on loopback ports (``sentinel_harness``)."""
from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest
import redis

from client.client import TranslationClient
from queue_config.settings import load_settings

from .conftest import REPO_ROOT
from .queue_harness import PASSWORD, CeleryWorker, free_port, wait_for
from .rabbitmq_harness import make_tls
from .sentinel_harness import QUICK_PERIODS, QUICK_SYNC, SENTINEL_PASSWORD, SentinelGroup

pytestmark = [pytest.mark.integration, pytest.mark.slow]

BUNDLE = REPO_ROOT / "models" / "multi30k-en-de"
WORKER = {"NMT_BUNDLES": str(BUNDLE), "NMT_LEASE_SECONDS": "3"}
TEXT = "A man rides a bike. Two dogs play in the snow."


def _group(tmp_path, **options) -> SentinelGroup:
    return SentinelGroup(tmp_path / "sentinel", periods=QUICK_PERIODS, **options)


def _client(group: SentinelGroup, **extra: str) -> TranslationClient:
    return TranslationClient(settings=load_settings(group.settings_env() | extra))


def _submit_cli(tmp_path, env: dict[str, str]) -> subprocess.CompletedProcess:
    src = tmp_path / "note.txt"
    src.write_text("A dog runs.\n", encoding="utf-8")
    clean = {k: v for k, v in os.environ.items() if not k.startswith("NMT_")}
    return subprocess.run([sys.executable, "-m", "nmt", "submit", str(src), "--src", "en", "--tgt", "de"],
                          cwd=REPO_ROOT, env=clean | env, capture_output=True, text=True, timeout=120)


def _quiet(done: subprocess.CompletedProcess) -> None:
    """One clear line, no traceback, no password."""
    assert "Traceback" not in done.stderr, done.stderr
    assert PASSWORD not in done.stderr and SENTINEL_PASSWORD not in done.stderr, done.stderr


def test_workers_and_client_run_jobs_over_sentinel_with_tls_only_and_another_ca_is_refused(tmp_path):
    tls = make_tls(tmp_path / "tls")
    group = _group(tmp_path, master_extra=QUICK_SYNC, tls=tls).start()  # started: replication and sentinels over TLS
    worker = None
    try:
        # Nothing answers in plain TCP: every node and sentinel serves TLS only.
        for node in (*group.nodes, *group.sentinels):
            with pytest.raises(redis.ConnectionError):
                redis.Redis(host="127.0.0.1", port=node.port, socket_timeout=2, socket_connect_timeout=2).ping()
        assert group.master.client().info("replication")["connected_slaves"] == 1
        worker = CeleryWorker("tls", group.settings_env() | WORKER, tmp_path).start()
        client = _client(group)
        jobs = [client.submit(text=TEXT, src="en", tgt="de"),
                client.submit(text="A woman reads a book.\n\nA child plays.", src="en", tgt="de", format="markdown")]
        results = [job.wait(timeout=60) for job in jobs]
        assert all(r.text.strip() for r in results) and [len(r.segments) for r in results] == [2, 2]
        assert [job.status().state for job in jobs] == ["done", "done"]
        wait_for(lambda: group.replica.client().hget(f"nmt:job:{jobs[1].id}", "state") == "done", 10,
                 "the job's record to reach the replica")
        assert "succeeded" in worker.log.read_text()
        # The same group with another CA: refused, saying why, in one line.
        other = make_tls(tmp_path / "other", name="another CA")
        done = _submit_cli(tmp_path, group.settings_env() | {"NMT_REDIS_SENTINEL_CA_CERTS": str(other.ca),
                                                             "NMT_REDIS_FAILOVER_SECONDS": "1"})
        assert done.returncode == 1, done.stderr
        assert "nmt submit: error: cannot reach the broker at sentinel://:***@127.0.0.1:" in done.stderr, done.stderr
        assert "certificate verify failed" in done.stderr, done.stderr
        assert "Traceback" not in done.stderr and PASSWORD not in done.stderr, done.stderr
    finally:
        if worker:
            worker.discard()
        group.stop()


def test_a_refusal_by_every_sentinel_prints_and_logs_no_password(tmp_path):
    """No sentinel answers (nothing listens on their ports; another CA is refused the same way):
    ``nmt submit`` says so in one line, and a worker logs its reconnects, without the sentinels' or
    the master's password. redis-py's MasterNotFoundError holds each sentinel connection's repr,
    ``password=...`` included (``queue_config.settings.redacted_text``)."""
    url = ";".join(f"sentinel://:{PASSWORD}@127.0.0.1:{free_port()}/0" for _ in range(3))
    env = {"NMT_BROKER_URL": url, "NMT_REDIS_SENTINEL_MASTER": "nmt-master",
           "NMT_REDIS_SENTINEL_PASSWORD": SENTINEL_PASSWORD, "NMT_REDIS_FAILOVER_SECONDS": "1"}
    done = _submit_cli(tmp_path, env)
    assert done.returncode == 1, done.stderr
    assert "nmt submit: error: cannot reach the broker at sentinel://:***@127.0.0.1:" in done.stderr, done.stderr
    assert "No master found for 'nmt-master' : sentinel 127.0.0.1:" in done.stderr, done.stderr
    assert "Connection refused" in done.stderr and len(done.stderr) < 1000, done.stderr
    _quiet(done)
    worker = CeleryWorker("refused", env | WORKER, tmp_path).start(wait=False)
    try:
        wait_for(lambda: worker.log.read_text(errors="replace").count("No master found") >= 2, 60,
                 "the worker to log two failed connections")
        log = worker.log.read_text(errors="replace")
        assert PASSWORD not in log and SENTINEL_PASSWORD not in log, log[-3000:]
        assert "password=***" in log or "sentinel 127.0.0.1:" in log, log[-3000:]
    finally:
        worker.discard()


def test_wait_replicas_with_min_replicas_to_write_refuses_writes_without_the_replica_and_recovers(tmp_path):
    group = _group(tmp_path, master_extra=(*QUICK_SYNC, "--min-replicas-to-write", "1",
                                           "--min-replicas-max-lag", "10")).start()
    wait_env = {"NMT_REDIS_WAIT_REPLICAS": "1"}
    worker = None
    try:
        worker = CeleryWorker("wait", group.settings_env() | WORKER | wait_env, tmp_path).start()
        client = _client(group, **wait_env)
        first = client.submit(text=TEXT, src="en", tgt="de")
        # WAIT 1: the record is on the replica when submit returns.
        assert group.replica.client().hget(f"nmt:job:{first.id}", "state") == "queued"
        assert first.wait(timeout=60).text.strip()
        assert client.store.unreplicated == 0
        # The replica stops: the master refuses every write (NOREPLICAS). The client retries it like
        # a lost connection for NMT_REDIS_FAILOVER_SECONDS, then the error reaches its caller.
        group.replica.stop()
        wait_for(lambda: group.master.client().info("replication")["connected_slaves"] == 0, 10,
                 "the master to lose its replica")
        with pytest.raises(redis.ResponseError, match="NOREPLICAS"):
            group.master.client().set("x", "1")
        started = time.monotonic()
        with pytest.raises(redis.ConnectionError, match="NOREPLICAS"):
            _client(group, NMT_REDIS_FAILOVER_SECONDS="2", **wait_env).submit(text=TEXT, src="en", tgt="de")
        assert 2 <= time.monotonic() - started < 15
        done = _submit_cli(tmp_path, group.settings_env() | wait_env | {"NMT_REDIS_FAILOVER_SECONDS": "2"})
        assert done.returncode == 1, done.stderr
        assert "nmt submit: error: cannot reach the broker at sentinel://:***@" in done.stderr, done.stderr
        assert "NOREPLICAS" in done.stderr, done.stderr
        _quiet(done)
        # A submit under way when the replica comes back (within its retry window) goes through.
        submitted: list = []
        thread = threading.Thread(target=lambda: submitted.append(client.submit(text=TEXT, src="en", tgt="de")))
        thread.start()
        time.sleep(1.5)
        assert thread.is_alive() and not submitted  # still retrying
        group.replica.replica_of = group.master.port  # back as the master's replica, as an operator would
        group.replica.start()
        thread.join(timeout=40)
        assert submitted, "the submit did not go through after the replica came back"
        after = client.submit(text="A woman reads a book.", src="en", tgt="de")
        assert submitted[0].wait(timeout=60).text.strip() and after.wait(timeout=60).text.strip()
        # WAIT gives up after NMT_REDIS_WAIT_MS (100 ms): on a busy machine the record may land later.
        wait_for(lambda: group.replica.client().hget(f"nmt:job:{after.id}", "state") == "done", 10,
                 "the job's record to reach the replica")
    finally:
        if worker:
            worker.discard()
        group.stop()


def test_the_shared_segment_cache_works_over_sentinel(tmp_path):
    group = _group(tmp_path, master_extra=QUICK_SYNC).start()
    env = group.settings_env() | WORKER | {"NMT_CACHE_REDIS": "on"}
    text = "A man rides a bike. Two dogs play in the snow.\n\nA man rides a bike."
    workers = [CeleryWorker("c1", env, tmp_path).start()]
    try:
        client = _client(group)
        first = client.submit(text=text, src="en", tgt="de").wait(timeout=60)
        workers.append(CeleryWorker("c2", env, tmp_path).start())
        workers[0].stop()  # the second job can only go to c2, whose own cache is empty
        second = client.submit(text=text, src="en", tgt="de").wait(timeout=60)
        assert [s.cached for s in first.segments] == [False, False, True]
        assert [s.cached for s in second.segments] == [True, True, True]
        assert first.provenance["timings"]["cache_hits"] == 1 and second.provenance["timings"]["cache_hits"] == 3
        assert second.text == first.text
        # The segments live on the group's master (and its replica), found through the sentinels.
        assert len(group.master.client().keys("nmt:seg:*")) == 2
        wait_for(lambda: len(group.replica.client().keys("nmt:seg:*")) == 2, 10, "the cache to reach the replica")
        # Celery logs a task's success after its result is stored: the client may see the result first.
        wait_for(lambda: "succeeded" in (tmp_path / "c2.log").read_text(), 10, "c2 to log the job's success")
        assert "c2@" in (tmp_path / "c2.log").read_text()
    finally:
        for worker in workers:
            worker.discard()
        group.stop()


def test_an_idle_worker_backs_off_while_the_master_refuses_writes_and_recovers(tmp_path):
    """An idle worker's BRPOP is a write: while the master refuses writes (NOREPLICAS, its replica
    stopped) every consume is refused at once, after a connect that succeeds. The worker's
    reconnects back off (``queue_config.connection.FailoverAwareConnection``) instead of logging a
    lost connection with its traceback several times a second (seen: 37 in 6 s),
    and it takes jobs again once the replica is back."""
    group = _group(tmp_path, master_extra=(*QUICK_SYNC, "--min-replicas-to-write", "1",
                                           "--min-replicas-max-lag", "10")).start()
    worker = None
    try:
        worker = CeleryWorker("idle", group.settings_env() | WORKER, tmp_path).start()
        client = _client(group)
        assert client.submit(text=TEXT, src="en", tgt="de").wait(timeout=60).text.strip()

        def lost() -> int:
            return worker.log.read_text(errors="replace").count("Connection to broker lost")

        before = lost()
        group.replica.stop()
        wait_for(lambda: group.master.client().info("replication")["connected_slaves"] == 0, 10,
                 "the master to lose its replica")
        wait_for(lambda: lost() > before, 10, "the worker to be refused")  # the refusal reaches it
        time.sleep(6)
        refused = lost() - before
        assert 1 <= refused <= 24, f"{refused} lost connections logged in ~6 s"  # before the backoff: 37
        group.replica.replica_of = group.master.port
        group.replica.start()
        wait_for(lambda: group.master.client().info("replication")["connected_slaves"] == 1, 20,
                 "the replica to come back")
        jobs = [client.submit(text=TEXT, src="en", tgt="de") for _ in range(2)]
        assert all(job.wait(timeout=60).text.strip() for job in jobs)
        assert [job.status().state for job in jobs] == ["done", "done"]
    finally:
        if worker:
            worker.discard()
        group.stop()
