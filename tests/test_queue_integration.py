"""End to end through a real redis-server and real ``celery -A worker worker`` processes, driven by
the real client: results exactly once and in order, worker deaths, time limits, duplicate
deliveries, Redis restarts and malformed messages."""
from __future__ import annotations

import gc
import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from client.client import JobFailedError, JobNotFoundError, TranslationClient, UnknownLanguagePairError, UnknownModelError
from queue_config.messages import MessageError
from queue_config.names import TRANSLATE_TASK, queue_for
from worker.engine.bundle import load_bundle
from worker.text.layout import split_document

from .conftest import REPO_ROOT, make_toy_pairs
from .queue_harness import CeleryWorker, RedisServer, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture
def redis_server(tmp_path):
    server = RedisServer(tmp_path / "redis").start()
    yield server
    server.stop()


@pytest.fixture
def workers(tmp_path, redis_server, tiny_bundle):
    started: list[CeleryWorker] = []

    def start(name: str = "w1", concurrency: int = 1, wait: bool = True, cwd=REPO_ROOT, **env: str) -> CeleryWorker:
        settings = {"NMT_BROKER_URL": redis_server.url, "NMT_BUNDLES": str(tiny_bundle), "NMT_LEASE_SECONDS": "3",
                    "NMT_OUTPUT_DIR": str(tmp_path / "out")} | {f"NMT_{k.upper()}": str(v) for k, v in env.items()}
        worker = CeleryWorker(name, settings, tmp_path, concurrency, cwd)
        started.append(worker)
        return worker.start(wait=wait)

    yield start
    for worker in started:  # killed: a warm shutdown takes seconds and is not what these tests check
        if "NMT_METRICS_PORT" in worker.env:
            worker.stop()  # its exit removes the metrics directory it made
        else:
            worker.discard()


@pytest.fixture
def client(redis_server):
    return TranslationClient(broker_url=redis_server.url)


# Decoding options that make a toy document of a few thousand sentences take seconds, so a test
# can act on the job while it runs.
LONG = {"beam": 12}


def document(n: int, seed: int = 0) -> tuple[str, list[str]]:
    """A toy document and its sentences as the worker's splitter sees them."""
    text = " ".join(s for s, _ in make_toy_pairs(n, seed))
    return text, [s.text for s in split_document(text, "en").sentences]


def test_submit_wait_result_end_to_end(workers, client, tiny_bundle, tmp_path):
    workers()
    text = "A man sees a dog. The cat runs home.\n\n  A big red ball.\n"
    job = client.submit(text=text, src="en", tgt="de", options={"beam": 3}, name="story")
    result = job.wait(timeout=60)
    assert job.status().state == "done" and job.status().done == job.status().total == 3
    assert [s.source for s in result.segments] == ["A man sees a dog.", "The cat runs home.", "A big red ball."]
    assert result.text.count("\n") == 3 and "\n\n  " in result.text
    for segment in result.segments:
        assert all(0 <= i < len(segment.source.split()) for i, _ in segment.pairs)
        assert 0.0 <= segment.confidence <= 1.0 and isinstance(segment.flags, tuple)
        assert [text[a:b] for a, b in segment.source_words] == segment.source.split()
        assert [result.text[a:b] for a, b in segment.target_words] == segment.translation.split()
    assert result.provenance["signature"] == load_bundle(tiny_bundle).signature
    assert result.provenance["decoding"]["beam"] == 3
    # Stored atomically in the shared output directory too, as nmt translate writes it.
    stored = json.loads((tmp_path / "out" / job.id / "story.de.json").read_text(encoding="utf-8"))
    assert stored["segments"] == [dict(s) for s in result.raw["segments"]]
    assert (tmp_path / "out" / job.id / "story.de.txt").read_text(encoding="utf-8") == result.text


def test_worker_runs_from_an_installed_package_outside_the_repository(workers, client, tmp_path):
    """`celery -A worker worker` imports the installed package, not files in the current directory."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    workers(cwd=elsewhere)
    assert len(client.submit(text="A dog runs.", src="en", tgt="de").wait(timeout=60).segments) == 1


def test_nmt_submit_cli_writes_the_same_files_as_translate(workers, redis_server, tmp_path):
    workers()
    src = tmp_path / "letter.txt"
    src.write_text("A man sees a dog.\n\nThe cat runs home.\n", encoding="utf-8")
    env = os.environ | {"NMT_BROKER_URL": redis_server.url}
    done = subprocess.run([sys.executable, "-m", "nmt", "submit", str(src), "--src", "en", "--tgt", "de", "--wait",
                           "--out", str(tmp_path / "cli"), "--timeout", "60"], cwd=REPO_ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    payload = json.loads((tmp_path / "cli" / "letter.de.json").read_text(encoding="utf-8"))
    assert {"segments", "provenance"} <= set(payload)
    assert {"source", "translation", "score", "alignment", "confidence", "flags"} <= set(payload["segments"][0])
    assert re.search(r"nmt submit: 2 segments, (none flagged|\d+ flagged \w+)", done.stderr), done.stderr
    assert (tmp_path / "cli" / "letter.de.txt").read_text(encoding="utf-8").count("\n") == 3


def test_two_workers_200_documents_each_result_once_and_in_order(workers, client):
    # Chunks of 3 sentences: the longer documents are shared across workers and reassembled.
    workers("w1", chunk_sentences=3)
    workers("w2", chunk_sentences=3)
    docs = [document(1 + i % 7, seed=i) for i in range(200)]
    jobs = client.submit_many({"text": text, "src": "en", "tgt": "de", "options": {"beam": 2}} for text, _ in docs)
    assert len({job.id for job in jobs}) == 200
    for job, (_, sentences) in zip(jobs, docs):
        result = job.wait(timeout=180)
        assert result.job_id == job.id
        assert [s.source for s in result.segments] == sentences
    # Exactly once: each job ran its document task once and has one result.
    store = client.store
    for job in jobs:
        assert store.redis.get(store.key(job.id, "attempts", "document")) == "1"
    chunked = [job for job, (_, sentences) in zip(jobs, docs) if len(sentences) > 3]
    assert chunked and all(job.result().provenance.get("chunks", 0) >= 2 for job in chunked)


def test_worker_child_killed_mid_job_still_completes(workers, client):
    worker = workers(chunk_sentences=100000)
    text, sentences = document(200, seed=3)  # ~190 sentences: progress after 64 (a slice), two slices left
    job = client.submit(text=text, src="en", tgt="de", options=LONG)
    wait_for(lambda: job.status().done > 0, 60, "the job to make progress")
    [child] = worker.children()
    os.kill(child, signal.SIGKILL)
    result = job.wait(timeout=360)
    assert len(result.segments) == len(sentences)
    assert client.store.redis.get(client.store.key(job.id, "attempts", "document")) == "2"


def test_job_that_always_kills_its_worker_fails_after_the_attempt_cap(workers, client):
    worker = workers(chunk_sentences=100000, max_attempts=2)
    text, _ = document(3000, seed=4)
    job = client.submit(text=text, src="en", tgt="de", options=LONG)
    for attempt in range(2):
        wait_for(lambda: client.store.redis.get(client.store.key(job.id, "attempts", "document")) == str(attempt + 1)
                 and job.status().done > 0, 120, f"attempt {attempt + 1} to make progress")
        for child in worker.children():
            os.kill(child, signal.SIGKILL)
    with pytest.raises(JobFailedError, match="delivered 2 times and its worker died each time"):
        job.wait(timeout=120)


def test_job_past_the_soft_time_limit_fails_cleanly_and_the_worker_keeps_serving(workers, client):
    workers(chunk_sentences=100000, soft_time_limit=1, time_limit=30, retry_backoff_max=5)
    text, _ = document(4000, seed=5)
    slow = client.submit(text=text, src="en", tgt="de", options=LONG)
    with pytest.raises(JobFailedError, match="exceeded the soft time limit of 1 s"):
        slow.wait(timeout=120)
    quick = client.submit(text="A dog.", src="en", tgt="de")
    assert len(quick.wait(timeout=60).segments) == 1


def test_a_job_outliving_the_visibility_timeout_is_not_run_twice_at_the_same_time(workers, client, redis_server,
                                                                                    tmp_path):
    """Redis hands a message that outlived the visibility timeout to another worker (kombu's
    restore_visible, run by any consumer whose timeout is shorter: the shortest in a fleet wins).
    Here a consumer with a 1 s timeout restores the running job's message; the second worker
    receives it while the first still runs, and the job's lease keeps it from running twice."""
    from kombu import Connection

    workers("w1", chunk_sentences=100000)
    workers("w2", chunk_sentences=100000)
    text, sentences = document(400, seed=6)  # 370 sentences: outlives the restore by 10 s on a fast CPU
    job = client.submit(text=text, src="en", tgt="de", options=LONG)
    wait_for(lambda: job.status().done > 0, 60, "the job to make progress")
    time.sleep(1.2)
    with Connection(redis_server.url, transport_options={"visibility_timeout": 1}) as connection:
        connection.default_channel.qos.restore_visible(num=100, interval=1)
    assert job.status().state == "running", "the job ended before its message could be restored: lengthen it"
    result = job.wait(timeout=360)
    assert len(result.segments) == len(sentences)
    received = sum((tmp_path / f"{w}.log").read_text().count(f"nmt.translate_document[{job.id}] received")
                   for w in ("w1", "w2"))
    assert received >= 2, "the message was not redelivered"
    time.sleep(4)  # the copy retries after the lease period, then finds the job done
    assert client.store.redis.get(client.store.key(job.id, "attempts", "document")) == "1"
    assert client.store.redis.get(client.store.key(job.id, "result")) is not None


def test_redis_restart_with_aof_loses_no_queued_job(workers, client, redis_server):
    jobs = [client.submit(text=f"A man sees {i} dogs.", src="en", tgt="de") for i in range(30)]
    time.sleep(1.5)  # appendfsync everysec
    redis_server.kill()  # a crash: only the append-only file survives
    redis_server.start()
    workers()
    for job in jobs:
        assert len(job.wait(timeout=120).segments) == 1


def test_worker_keeps_serving_across_a_redis_restart(workers, client, redis_server):
    workers()
    assert client.submit(text="A dog.", src="en", tgt="de").wait(timeout=60)
    time.sleep(1.5)
    redis_server.kill()
    redis_server.start()
    job = client.submit(text="The cat runs home.", src="en", tgt="de")
    assert len(job.wait(timeout=120).segments) == 1


@pytest.fixture(scope="module")
def malformed_fleet(tmp_path_factory, tiny_bundle):
    """A client of one redis-server served by one worker (documents capped at 2000 bytes, an input
    root), shared by the cases below: each sends its own job id and checks that the worker still
    serves after it, and a worker's start costs seconds."""
    directory = tmp_path_factory.mktemp("malformed")
    (directory / "inputs").mkdir()
    server = RedisServer(directory / "redis").start()
    worker = CeleryWorker("w1", {"NMT_BROKER_URL": server.url, "NMT_BUNDLES": str(tiny_bundle),
                                 "NMT_LEASE_SECONDS": "3", "NMT_OUTPUT_DIR": str(directory / "out"),
                                 "NMT_MAX_DOCUMENT_BYTES": "2000", "NMT_INPUT_ROOT": str(directory / "inputs")},
                          directory)
    try:
        worker.start()
        yield TranslationClient(broker_url=server.url)
    finally:
        worker.discard()
        server.stop()


@pytest.mark.parametrize("payload, error", [
    ({"job_id": "j-options", "src": "en", "tgt": "de", "text": "A dog.", "options": {"beam": "five"}},
     "option 'beam' must be int"),
    ({"job_id": "j-unknown-option", "src": "en", "tgt": "de", "text": "A dog.", "options": {"temperature": 2}},
     "unknown option(s) 'temperature'"),
    ({"job_id": "j-pair", "src": "fr", "tgt": "cs", "text": "Un chien."}, "unknown language pair fr-cs"),
    ({"job_id": "j-empty", "src": "en", "tgt": "de", "text": "  \n\n "}, "document is empty"),
    ({"job_id": "j-both", "src": "en", "tgt": "de", "text": "x", "path": "/tmp/x"}, "exactly one of 'text' or 'path'"),
    ({"job_id": "j-missing", "src": "en", "tgt": "de", "path": "missing/doc.txt"}, "input file not found: missing/doc.txt"),
    ({"job_id": "j-big", "src": "en", "tgt": "de", "text": "A dog. " * 400}, "exceeds the limit of 2000 bytes"),
    ({"job_id": "j-lang", "src": "English", "tgt": "de", "text": "A dog."}, "'src' must be a language code"),
])
def test_malformed_or_impossible_jobs_fail_with_a_clear_error(malformed_fleet, payload, error):
    client = malformed_fleet
    client.store.create(payload["job_id"], "en", "de", "document")
    client.app.send_task(TRANSLATE_TASK, args=[payload], queue=queue_for("en", "de"))
    with pytest.raises(JobFailedError, match=error.replace("(", r"\(").replace(")", r"\)")):
        client.job(payload["job_id"]).wait(timeout=60)
    assert client.submit(text="A dog.", src="en", tgt="de").wait(timeout=60)  # still serving


def test_a_job_whose_own_document_cannot_be_read_is_an_input_failure_and_no_other_is(workers, client, tmp_path):
    """The job store says which failures are the client's to fix (the gateway answers those 400):
    a document with no text (the batch path), a file that is not UTF-8 and a broken SRT file (the
    document path); not a pair no worker serves."""
    workers(input_root=str(tmp_path))
    (tmp_path / "latin1.txt").write_bytes("Un caf\xe9.\n".encode("latin-1"))
    (tmp_path / "broken.srt").write_text("1\n00:00:01,000 -> nonsense\nText\n", encoding="utf-8")
    jobs = {"empty": client.submit(text=" \n\n ", src="en", tgt="de"),
            "latin1": client.submit(path=str(tmp_path / "latin1.txt"), src="en", tgt="de"),
            "srt": client.submit(path=str(tmp_path / "broken.srt"), src="en", tgt="de")}
    client.store.create("j-pair", "fr", "cs", "document")
    client.app.send_task(TRANSLATE_TASK, args=[{"job_id": "j-pair", "src": "fr", "tgt": "cs", "text": "Un chien."}],
                         queue=queue_for("en", "de"))
    for job in [*jobs.values(), client.job("j-pair")]:
        with pytest.raises(JobFailedError):
            job.wait(timeout=60)
    failures = {name: job.status().failure for name, job in jobs.items()}
    assert failures == {"empty": "input", "latin1": "input", "srt": "input"}
    assert client.job("j-pair").status().failure == "" and "unknown language pair" in client.job("j-pair").status().error


def test_undecodable_file_and_messages_without_a_job(workers, client, tmp_path):
    workers(input_root=str(tmp_path))
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("Un caf\xe9.\n".encode("latin-1"))
    job = client.submit(path=str(bad), src="en", tgt="de")
    with pytest.raises(JobFailedError, match=r"latin1.txt: not valid UTF-8 \(line 1"):
        job.wait(timeout=60)
    for payload in ("garbage", ["a", "list"], {"text": "no id"}):
        async_result = client.app.send_task(TRANSLATE_TASK, args=[payload], queue=queue_for("en", "de"))
        with pytest.raises(Exception, match="malformed job message"):
            async_result.get(timeout=60)
    assert client.submit(text="A dog.", src="en", tgt="de").wait(timeout=60)
    # The results unsubscribe now, while Redis runs: collected after this test's server stopped, they
    # retried their unsubscribes against it for 38 s (Celery's backend retries) in the next test's setup.
    del async_result
    gc.collect()


def test_client_rejects_bad_requests_before_sending(workers, client):
    workers()
    with pytest.raises(UnknownLanguagePairError, match="no worker serves fr-cs \\(served: en-de\\)"):
        client.submit(text="Bonjour.", src="fr", tgt="cs")
    with pytest.raises(MessageError, match="option 'n_best' must be in"):
        client.submit(text="A dog.", src="en", tgt="de", options={"beam": 2, "n_best": 3})
    with pytest.raises(MessageError, match="exactly one of 'text' or 'path'"):
        client.submit(src="en", tgt="de")


def test_cancel_a_running_job(workers, client):
    workers(chunk_sentences=100000)
    text, _ = document(3000, seed=7)
    # Beam 2, not LONG: the worker sees the cancel after its next slice of 64 sentences, and the
    # 2,800 sentences keep the job running for tens of seconds even on a fast CPU.
    job = client.submit(text=text, src="en", tgt="de", options={"beam": 2})
    wait_for(lambda: job.status().done > 0, 60, "the job to make progress")
    assert job.cancel()
    with pytest.raises(JobFailedError, match="cancelled"):
        job.wait(timeout=60)
    assert client.submit(text="A dog.", src="en", tgt="de").wait(timeout=60)


def test_cancel_of_an_unknown_job_fails_as_status_does_and_writes_nothing(redis_server, client):
    """No worker runs: a job submitted here stays queued, so cancelling it works once; an id never
    submitted is refused by the client and by ``nmt cancel`` alike, and Redis is left as it was."""
    env = os.environ | {"NMT_BROKER_URL": redis_server.url}

    def nmt(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "nmt", *args], cwd=REPO_ROOT, env=env, capture_output=True,
                              text=True, timeout=120)

    keys_before = sorted(redis_server.client().keys("*"))
    with pytest.raises(JobNotFoundError, match=r"job deadbeef: no such job \(never submitted"):
        client.job("deadbeef").cancel()
    status, cancel = nmt("status", "deadbeef"), nmt("cancel", "deadbeef")
    assert (status.returncode, cancel.returncode) == (1, 1)
    assert cancel.stdout == "" and status.stdout == ""
    assert status.stderr.strip() == "nmt status: job deadbeef: no such job (never submitted, or its record expired)"
    assert cancel.stderr.strip() == "nmt cancel: job deadbeef: no such job (never submitted, or its record expired)"
    assert sorted(redis_server.client().keys("*")) == keys_before  # no nmt:job:deadbeef made
    assert nmt("status", "deadbeef").returncode == 1  # still unknown, not "cancelled"

    job = client.submit(text="A dog runs.", src="en", tgt="de")
    first, second = nmt("cancel", job.id), nmt("cancel", job.id)
    assert (first.returncode, first.stdout) == (0, f"{job.id}\tcancelled\n"), first.stderr
    assert second.returncode == 1 and "is cancelled: nothing to cancel" in second.stderr
    assert client.job(job.id).cancel() is False  # ended already: no error, nothing to do


def test_a_job_names_its_model_and_the_result_says_which_made_it(workers, client, tiny_bundle):
    """One worker serves two en-de bundles: the first listed is the pair's default, a job may name
    the other, and a model no worker serves is refused at submit (or, sent raw, fails the job)."""
    caption = REPO_ROOT / "models" / "multi30k-en-de"
    workers(bundles=f"{tiny_bundle},{caption}")
    default = client.submit(text="A man sees a dog.", src="en", tgt="de").wait(timeout=60)
    named = client.submit(text="A man sees a dog.", src="en", tgt="de", model="multi30k-en-de").wait(timeout=120)
    assert default.model == "toy-en-de" and default.provenance["signature"] == load_bundle(tiny_bundle).signature
    assert named.model == "multi30k-en-de" and named.provenance["signature"] == load_bundle(caption).signature
    assert named.text != default.text
    assert client.store.served_models() == {"toy-en-de": "en-de", "multi30k-en-de": "en-de"}
    with pytest.raises(UnknownModelError, match="'caption-xx'.*served: multi30k-en-de, toy-en-de"):
        client.submit(text="A dog.", src="en", tgt="de", model="caption-xx")
    # Past the client's check (e.g. a worker with fewer bundles took it): the job fails, naming the model.
    request = client._request("en", "de", text="A dog.", model="caption-xx")
    client.store.create(request.job_id, "en", "de", request.name)
    client.app.send_task(TRANSLATE_TASK, args=[request.to_json()], queue=queue_for("en", "de"), task_id=request.job_id)
    with pytest.raises(JobFailedError, match="unknown model 'caption-xx' for en-de"):
        client.job(request.job_id).wait(timeout=60)
