"""Results outside Redis (``NMT_RESULT_STORE``): each store's put/get/delete/expiry against real
parts (a temporary directory, a real redis-server, the machine's PostgreSQL in a database of this
test's own), the settings' checks, the sweep's removal of expired results, and end to end: a real
worker writes results into files or PostgreSQL while Redis keeps a reference of a few bytes, and
the client, ``nmt result`` and the gateway read them back."""
from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import pytest
import requests

from client.client import ResultUnavailableError, TranslationClient
from queue_config.jobstore import CHUNK_GRACE, Delivery, Ending, JobStore
from queue_config.result_store import (FileResultStore, PostgresResultStore, RedisResultStore, ResultStoreError,
                                       ResultStoreUnreachableError, result_key, result_store)
from queue_config.settings import QueueSettings, SettingsError, load_settings
from worker.sweep import Sweeper

from .conftest import REPO_ROOT
from .queue_harness import CeleryWorker, RedisServer, free_port, wait_for
from .test_api_gateway import BUNDLE, Gateway

PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
API_KEY = "result-store-key-5d1e"


@pytest.fixture(scope="module")
def postgres_url():
    """A database of this module's own on the machine's PostgreSQL (127.0.0.1:5432, user postgres),
    dropped afterwards; the tests that need it skip where no server answers."""
    psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed (pip install -e \".[postgres]\")")
    try:
        admin = psycopg.connect(PG_ADMIN, autocommit=True, connect_timeout=3)
    except psycopg.OperationalError as exc:
        pytest.skip(f"PostgreSQL is not reachable at 127.0.0.1:5432 as user postgres: {str(exc).strip()[:200]}")
    name = f"nmt_test_{uuid.uuid4().hex[:12]}"
    admin.execute(f"CREATE DATABASE {name}")
    try:
        yield f"postgresql://postgres@127.0.0.1:5432/{name}"
    finally:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        admin.close()


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory):
    server = RedisServer(tmp_path_factory.mktemp("result-store-redis")).start()
    yield server
    server.stop()


def make_store(kind: str, ttl: int, tmp_path, postgres_url, redis_server):
    if kind == "redis":
        return RedisResultStore(redis_server.client())
    if kind == "file":
        root = tmp_path / "results"
        root.mkdir(exist_ok=True)
        return FileResultStore(root, ttl)
    return PostgresResultStore(postgres_url, ttl)


@pytest.fixture(params=["redis", "file", "postgresql"])
def jobs(request, tmp_path, redis_server):
    """A ``JobStore`` on the real redis-server, its results kept in the store of the parameter."""
    url = request.getfixturevalue("postgres_url") if request.param == "postgresql" else None
    store = JobStore(redis_server.client(), ttl=600)
    store.results = make_store(request.param, 600, tmp_path, url, redis_server)
    return store


def payload(job_id: str, text: str) -> dict:
    return {"job_id": job_id, "text": text, "segments": [{"source": "A dog.", "translation": text}],
            "provenance": {"bundle": "test"}}


def new_job(jobs: JobStore) -> str:
    job_id = uuid.uuid4().hex
    assert jobs.create(job_id, "en", "de", "doc")
    return job_id


def test_each_store_keeps_the_first_result_reads_it_back_and_deletes_it(jobs):
    job_id = new_job(jobs)
    first = payload(job_id, "Ein Hund läuft.")
    assert jobs.put_result(job_id, first) is True
    assert jobs.status(job_id).state == "done" and jobs.status(job_id).done == 1
    assert jobs.result(job_id) == first
    # a redelivered job's second result is refused, where the result lives and in Redis
    assert jobs.put_result(job_id, payload(job_id, "Ein anderer Hund.")) is False
    assert jobs.result(job_id) == first
    held = jobs.redis.get(jobs.key(job_id, "result"))
    if jobs.results.kind == "redis":
        assert json.loads(held) == first
    else:  # Redis holds a reference of a few bytes, the store the bytes
        assert held == f"stored:{jobs.results.kind}"
        assert json.loads(jobs.results.get(job_id)) == first
    assert jobs.redis.ttl(jobs.key(job_id, "result")) > 500  # expires with the job's record, as before
    jobs.delete_result(job_id)
    assert jobs.result(job_id) is None and jobs.results.get(job_id) is None
    assert not jobs.redis.exists(jobs.key(job_id, "result"))
    jobs.delete_result(job_id)  # nothing left: nothing happens
    assert jobs.result("never-submitted") is None


def test_results_of_a_batch_of_endings_go_to_the_store_and_read_back_in_one_call(jobs):
    ids = [new_job(jobs) for _ in range(3)]
    deliveries = [Delivery(job_id, "document", {"task": "t", "args": [], "queue": "q"}) for job_id in ids]
    assert [a.state for a in jobs.admit(deliveries, "owner-1", 30, 3)] == ["run"] * 3
    endings = [Ending(ids[0], "document", result=payload(ids[0], "Eins.")),
               Ending(ids[1], "document", error="broken"),
               Ending(ids[2], "document", result=payload(ids[2], "Drei."))]
    assert jobs.end(endings, "owner-1") == [True, True, True]
    assert jobs.results_of(ids) == [payload(ids[0], "Eins."), None, payload(ids[2], "Drei.")]
    assert jobs.results_of([]) == []
    assert jobs.results.get(ids[1]) is None  # a failed job keeps nothing in the store


def test_outside_redis_a_chunked_jobs_chunk_results_leave_redis_once_its_result_is_kept(jobs):
    job_id = new_job(jobs)
    for index in range(3):
        jobs.put_chunk(job_id, index, [{"source": f"S{index}.", "translation": f"T{index}."}])
    assert jobs.put_result(job_id, payload(job_id, "T0. T1. T2."))
    ttls = [jobs.redis.ttl(jobs.key(job_id, "chunk", str(i))) for i in range(3)]
    if jobs.results.kind == "redis":
        assert min(ttls) > CHUNK_GRACE  # kept as before, with the job's record
    else:
        assert all(0 < ttl <= CHUNK_GRACE for ttl in ttls)
    assert jobs.result(job_id)["text"] == "T0. T1. T2."


@pytest.mark.parametrize("kind", ["file", "postgresql"])
def test_expired_results_are_never_read_are_removed_by_expire_and_an_id_may_be_used_again(kind, tmp_path, request):
    url = request.getfixturevalue("postgres_url") if kind == "postgresql" else None
    store = make_store(kind, 1, tmp_path, url, None)
    store.put("old", b'{"text": "alt"}')
    store.put("young", b'{"text": "jung"}')
    assert store.get("old") == b'{"text": "alt"}'
    time.sleep(1.2)
    assert store.get("old") is None  # past its expiry: never read, whether or not it is still on disk
    assert store.expire() == 2  # both past it now
    assert store.expire() == 0
    if kind == "file":
        assert not store.path("old").exists()
    # A job id used again after its result expired gets its new result (the first writer's rule
    # is for live results only).
    store.put("again", b"1")
    time.sleep(1.2)
    store.put("again", b"2")
    assert store.get("again") == b"2"
    assert store.expire(now=time.time() + 5) == 1


def test_file_store_writes_owner_only_files_atomically_and_the_first_of_racing_writers_wins(tmp_path):
    root = tmp_path / "results"
    root.mkdir()
    store = FileResultStore(root, 600)
    bodies = [json.dumps({"writer": i, "text": "x" * 200_000}).encode() for i in range(8)]
    barrier = threading.Barrier(len(bodies))

    def write(body: bytes) -> None:
        barrier.wait()
        store.put("raced", body)

    threads = [threading.Thread(target=write, args=(body,)) for body in bodies]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert store.get("raced") in bodies  # one writer's whole result, never a mix
    path = store.path("raced")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert [p.name for p in path.parent.iterdir()] == ["raced.json"]  # no temporary file left
    store.put("raced", b"late")
    assert store.get("raced") in bodies


def test_a_result_referenced_in_another_store_is_a_clear_error(tmp_path, redis_server):
    jobs = JobStore(redis_server.client(), ttl=600)
    (tmp_path / "r").mkdir()
    jobs.results = FileResultStore(tmp_path / "r", 600)
    job_id = new_job(jobs)
    jobs.put_result(job_id, payload(job_id, "Hallo."))
    reader = JobStore(redis_server.client(), ttl=600)  # NMT_RESULT_STORE unset: results in Redis
    with pytest.raises(ResultStoreError, match="kept in the file result store, but NMT_RESULT_STORE here selects redis"):
        reader.result(job_id)


def test_an_unreachable_postgresql_is_reported_on_first_use_with_the_password_masked():
    port = free_port()  # nothing listens there
    store = PostgresResultStore(f"postgresql://nmt:hunter2-secret@127.0.0.1:{port}/results", 60)
    with pytest.raises(ResultStoreUnreachableError, match=rf"postgresql://nmt:\*\*\*@127.0.0.1:{port}/results is unreachable") as caught:
        store.get("a-job")
    assert "hunter2" not in str(caught.value)
    # a ConnectionError like Redis's own: the worker retries, the client waits, the gateway answers 503
    import redis

    assert isinstance(caught.value, redis.ConnectionError)


@pytest.mark.parametrize("value, error", [
    ("s3://bucket/results", r"must be empty \(results in Redis\), file:///shared/dir or postgresql://.*got scheme 's3'"),
    ("file:///no/such/directory", "/no/such/directory is not an existing directory"),
    ("file://relative/dir", "must name an absolute path on this host"),
    ("redis://:pw@127.0.0.1:6379/1", "got scheme 'redis'"),
])
def test_bad_result_store_settings_are_refused_with_the_variable_named(value, error):
    with pytest.raises(SettingsError, match=error) as caught:
        load_settings({"NMT_RESULT_STORE": value})
    assert "NMT_RESULT_STORE" in str(caught.value) and ":pw@" not in str(caught.value)


def test_a_result_directory_this_user_cannot_write_is_refused(tmp_path):
    if os.getuid() != 0:
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        with pytest.raises(SettingsError, match="is not writable by this user"):
            load_settings({"NMT_RESULT_STORE": f"file://{locked}"})
        return
    # root writes anywhere: the check is seen by another user (nobody), on a directory it may enter
    as_nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-c"]
    probe = subprocess.run(as_nobody + ["import queue_config.settings"], capture_output=True, text=True, cwd=REPO_ROOT)
    if probe.returncode != 0:  # setpriv missing, or a work tree (a clone under mktemp -d, mode 700) nobody cannot read
        pytest.skip(f"cannot import this work tree's queue_config as the user nobody: {probe.stderr[-200:]}")
    base = Path(tempfile.mkdtemp(prefix="nmt-result-store-"))
    try:
        os.chmod(base, 0o755)
        (base / "locked").mkdir(mode=0o555)
        result = subprocess.run(as_nobody + ["from queue_config.settings import load_settings; "
                                             f"load_settings({{'NMT_RESULT_STORE': 'file://{base / 'locked'}'}})"],
                                capture_output=True, text=True, cwd=REPO_ROOT)
        assert result.returncode != 0 and "is not writable by this user (uid 65534)" in result.stderr, result.stderr
    finally:
        shutil.rmtree(base)


def test_the_factory_selects_each_store_from_the_setting(tmp_path, redis_server):
    client = redis_server.client()
    assert isinstance(result_store(QueueSettings(), client), RedisResultStore)
    chosen = result_store(QueueSettings(result_store=f"file://{tmp_path}", result_expires=60), client)
    assert isinstance(chosen, FileResultStore) and chosen.root == tmp_path and chosen.ttl == 60
    assert isinstance(result_store(QueueSettings(result_store="postgresql://u@db.example/x"), client), PostgresResultStore)
    assert result_key("abc") == JobStore(client, 1).key("abc", "result")


def test_the_sweep_removes_expired_results_from_the_store(tmp_path, redis_server):
    root = tmp_path / "results"
    root.mkdir()
    jobs = JobStore(redis_server.client(), ttl=1)
    jobs.results = FileResultStore(root, 1)
    job_id = new_job(jobs)
    jobs.put_result(job_id, payload(job_id, "Bald weg."))
    assert jobs.results.path(job_id).exists()
    settings = QueueSettings(broker_url=redis_server.url, sweep_seconds=1, result_expires=1)
    sweeper = Sweeper(jobs, settings, lambda message: None).start()
    try:
        wait_for(lambda: not jobs.results.path(job_id).exists(), 15, "the sweep to remove the expired result file")
    finally:
        sweeper.stop()
    assert jobs.result(job_id) is None  # Redis dropped its reference itself, at the same expiry


# -- end to end: a real worker, the client, nmt result and the gateway -------------------------------
SENTENCES = ["A man is riding a bicycle.", "Two dogs are playing in the snow.", "A woman is reading a book."]
DOCUMENT = ("A little girl is climbing into a wooden playhouse. A man sits on a bench.\n\n"
            "Two young guys with shaggy hair look at their hands while hanging out in the yard.\n\n"
            "Several men in hard hats are operating a giant pulley system. A dog runs through the grass.\n")


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.parametrize("kind", ["file", "postgresql"])
def test_a_real_fleet_keeps_results_in_the_store_and_redis_only_a_reference(kind, tmp_path, request):
    if kind == "file":
        (tmp_path / "results").mkdir(mode=0o700)
        url = f"file://{tmp_path / 'results'}"
    else:
        url = request.getfixturevalue("postgres_url")
    redis_server = RedisServer(tmp_path / "redis").start()
    env = {"NMT_BROKER_URL": redis_server.url, "NMT_RESULT_STORE": url}
    worker = CeleryWorker(f"rs-{kind}", env | {"NMT_BUNDLES": str(BUNDLE)}, tmp_path)
    gateway = Gateway(f"gw-{kind}", env | {"NMT_API_KEYS": API_KEY}, tmp_path)
    try:
        worker.start()
        client = TranslationClient(settings=QueueSettings(broker_url=redis_server.url, result_store=url))
        jobs = [client.submit(text=s, src="en", tgt="de") for s in SENTENCES]
        jobs.append(client.submit(text=DOCUMENT, src="en", tgt="de", name="story"))
        results = [job.wait(timeout=120) for job in jobs]
        assert [len(r.segments) for r in results] == [1, 1, 1, 5]
        assert all(r.text.strip() and r.text != s for r, s in zip(results, SENTENCES))
        assert results[3].text.count("\n\n") == 2  # the document's layout, from the store
        store, redis = client.store, redis_server.client()
        for job, result in zip(jobs, results):
            key = store.key(job.id, "result")
            assert redis.get(key) == f"stored:{kind}"
            stored = store.results.get(job.id)
            assert json.loads(stored) == result.raw
            # the reference (with its key's name and expiry) costs Redis about 120 bytes, the result
            # it stands for more than a kilobyte
            assert redis.memory_usage(key) < 160 < 1000 < len(stored)
            kept = sum(redis.memory_usage(k) for k in redis.scan_iter(f"nmt:job:{job.id}*"))
            assert kept < 1000, {k: redis.memory_usage(k) for k in redis.scan_iter(f"nmt:job:{job.id}*")}
        if kind == "file":
            path = store.results.path(jobs[3].id)
            assert stat.S_IMODE(path.stat().st_mode) == 0o600 and json.loads(path.read_bytes()) == results[3].raw
        # nmt result reads the store its NMT_RESULT_STORE names ...
        cli = subprocess.run([sys.executable, "-m", "nmt", "result", jobs[3].id], capture_output=True, text=True,
                             cwd=REPO_ROOT, env=os.environ | env, timeout=60)
        assert cli.returncode == 0 and cli.stdout == results[3].text, cli.stderr
        # ... and one without it says where the result is, rather than guessing
        elsewhere = TranslationClient(settings=QueueSettings(broker_url=redis_server.url))
        with pytest.raises(ResultUnavailableError, match=f"kept in the {kind} result store"):
            elsewhere.job(jobs[0].id).result()
        # The gateway reads its translations back from the store too (DeepL's /v2/translate, one call
        # for many texts).
        gateway.start()
        answer = requests.post(gateway.url + "/v2/translate", headers={"Authorization": f"DeepL-Auth-Key {API_KEY}"},
                               json={"text": SENTENCES, "source_lang": "EN", "target_lang": "DE"}, timeout=120)
        assert answer.status_code == 200, answer.text
        assert [t["text"] for t in answer.json()["translations"]] == [r.text for r in results[:3]]
        # deleting a job's result removes it from the store
        store.delete_result(jobs[0].id)
        assert store.results.get(jobs[0].id) is None
        with pytest.raises(ResultUnavailableError, match="its result is gone"):
            jobs[0].result()
    finally:
        gateway.stop()
        worker.stop()
        redis_server.stop()
