"""Faults a fleet meets, each on a real redis-server with real ``celery -A worker worker`` processes:
options and texts the worker cannot honour, poison messages, forged chunk messages, reused job ids,
names the file system refuses, reads outside the input root, and Redis outages while a client waits.
Every job ends in a final state with a reason, and no worker parent goes down."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

import pytest

from client.client import JobExistsError, JobFailedError, JobNotFoundError
from queue_config.messages import JobOptions, JobRequest, MessageError
from queue_config.names import CHUNK_TASK, TRANSLATE_TASK, queue_for

from .conftest import REPO_ROOT
from .queue_harness import free_port, wait_for
from .test_queue_integration import LONG, client, document, redis_server, workers  # noqa: F401 (fixtures)

pytestmark = [pytest.mark.integration, pytest.mark.slow]
QUEUE = queue_for("en", "de")
# Worker settings for the redelivery tests: a 12 s visibility timeout (with the backoff it allows)
# and a 2 s sweep stand in for the defaults' 90 s and 10 s; one job per message.
FAST = {"visibility_timeout": 12, "retry_backoff_max": 3, "sweep_seconds": 2, "chunk_sentences": 100000}


def send_raw(client, payload: dict, job_id: str) -> None:
    """A job message as a client that skipped validation would send it (the record, then the task)."""
    client.store.create(job_id, "en", "de", "document")
    client.app.send_task(TRANSLATE_TASK, args=[payload], queue=QUEUE, task_id=job_id)


@pytest.mark.parametrize("options, error", [
    ({"n_best": 6}, "n_best"),
    ({"max_len_a": 0, "max_len_b": 0}, "both 0"),
    ({"max_len_a": float("inf")}, "max_len_a"),
    ({"max_len_a": float("nan")}, "max_len_a"),
    ({"length_penalty": float("inf")}, "length_penalty"),
    ({"coverage_penalty": -1.0}, "coverage_penalty"),
    ({"max_len_b": 10 ** 12}, "max_len_b"),
    ({"min_len": 10 ** 9}, "min_len"),
    ({"beam": 10 ** 6}, "beam"),
])
def test_options_out_of_range_are_refused_at_submit(options, error):
    if options == {"n_best": 6}:  # valid on its face: only the worker knows the model's beam
        assert JobOptions.from_json(options).n_best == 6
        return
    with pytest.raises(MessageError, match=error):
        JobOptions.from_json(options)


def test_names_and_texts_the_worker_could_not_use_are_refused_at_submit():
    base = {"job_id": "j", "src": "en", "tgt": "de", "text": "A dog."}
    for name in ("x" * 300, "a/b", "a\\b", "tab\there", ".hidden", "line\n", "ü" * 101):
        with pytest.raises(MessageError, match="'name' must be a file stem"):
            JobRequest.from_json(base | {"name": name})
    assert JobRequest.from_json(base | {"name": "Brief an Frau Müller (2)"}).name == "Brief an Frau Müller (2)"
    with pytest.raises(MessageError, match="lone surrogate U\\+DCFF"):
        JobRequest.from_json(base | {"text": "A dog \udcff runs."})


def test_jobs_the_worker_cannot_do_fail_with_a_reason_and_the_parent_keeps_serving(workers, client):
    """Each of these left its job "running" or "queued" forever (or, for max_len_b 10**12, took
    the worker parent down with a MemoryError); now each job fails, saying why."""
    worker = workers()
    parent = worker.process.pid
    with pytest.raises(JobFailedError, match="n_best must be in \\[1, beam=5\\]"):
        client.submit(text="A dog.", src="en", tgt="de", options={"n_best": 6}).wait(timeout=60)
    raw = [
        ({"max_len_a": 0, "max_len_b": 0}, "A dog.", "both 0"),
        ({"max_len_a": float("inf")}, "A dog.", "max_len_a"),
        ({"max_len_a": float("nan")}, "A dog.", "max_len_a"),
        ({"max_len_b": 10 ** 12}, "A dog.", "max_len_b"),
        ({}, "A dog \udcff runs.", "lone surrogate"),
    ]
    for i, (options, text, error) in enumerate(raw):
        job_id = f"raw-{i}"
        send_raw(client, {"job_id": job_id, "src": "en", "tgt": "de", "text": text, "options": options}, job_id)
        with pytest.raises(JobFailedError, match=error):
            client.job(job_id).wait(timeout=60)
    assert worker.process.poll() is None and worker.process.pid == parent
    assert len(client.submit(text="A dog runs.", src="en", tgt="de").wait(timeout=60).segments) == 1


def test_poison_messages_on_the_queue_do_not_take_workers_down(workers, client):
    """Items on the queue that are not Celery messages at all, or messages with bodies no task can
    read, are dropped with a log line; the worker that read them keeps serving."""
    worker = workers()
    r = client.store.redis
    r.lpush(QUEUE, "this is not JSON")
    r.lpush(QUEUE, '{"body": "not base64 !!", "headers": {}, "content-type": "application/json", '
                   '"properties": {"delivery_tag": "x", "body_encoding": "base64"}}')
    r.lpush(QUEUE, '{"body": "e30=", "headers": {}, "content-type": "application/json"}')
    r.lpush(QUEUE, "[1, 2, 3]")
    time.sleep(2)
    assert worker.process.poll() is None, worker.log.read_text()[-3000:]
    assert len(client.submit(text="A dog runs.", src="en", tgt="de").wait(timeout=60).segments) == 1
    assert worker.process.poll() is None


def test_a_finished_job_id_cannot_be_reused_or_rerun(workers, client):
    workers()
    job = client.submit(text="A dog runs.", src="en", tgt="de", job_id="report-2026-11")
    first = job.wait(timeout=60)
    with pytest.raises(JobExistsError, match="'report-2026-11' is already in use \\(state done\\)"):
        client.submit(text="Another text.", src="en", tgt="de", job_id="report-2026-11")
    with pytest.raises(JobExistsError, match="given twice"):
        client.submit_many([{"text": "A.", "src": "en", "tgt": "de", "job_id": "twin"},
                            {"text": "B.", "src": "en", "tgt": "de", "job_id": "twin"}])
    assert client.job("twin").status().state == "unknown"  # neither was sent
    # A raw copy of the message (a broker redelivery, or a client that skipped the check) finds
    # the job done and leaves it so.
    client.app.send_task(TRANSLATE_TASK, args=[{"job_id": job.id, "src": "en", "tgt": "de", "text": "Another text."}],
                         queue=QUEUE)
    marker = client.submit(text="A cat.", src="en", tgt="de")
    marker.wait(timeout=60)  # one worker, one queue: the copy was handled before this
    assert job.status().state == "done" and job.wait(timeout=5).text == first.text


def test_a_failed_output_write_fails_the_job(workers, client, tmp_path):
    not_a_directory = tmp_path / "out-file"
    not_a_directory.write_text("a file where the output directory should be\n")
    workers(output_dir=str(not_a_directory))
    with pytest.raises(JobFailedError, match="could not write the translation to NMT_OUTPUT_DIR"):
        client.submit(text="A dog runs.", src="en", tgt="de").wait(timeout=60)


def test_chunk_messages_cannot_touch_jobs_they_do_not_belong_to(workers, client):
    workers(chunk_sentences=3)
    text, sentences = document(60, seed=11)
    chunked = client.submit(text=text, src="en", tgt="de", options=LONG)
    plain = client.submit(text="A dog runs.", src="en", tgt="de", options=LONG)
    wait_for(lambda: client.store.plan(chunked.id) is not None, 60, "the chunk plan")
    for job_id, index in ((chunked.id, 999), (chunked.id, -1), (plain.id, 0), ("no-such-job", 0)):
        client.app.send_task(CHUNK_TASK, args=[job_id, index], queue=QUEUE)
    client.app.send_task(CHUNK_TASK, args=[chunked.id, "0"], queue=QUEUE)
    assert [s.source for s in chunked.wait(timeout=180).segments] == sentences
    assert len(plain.wait(timeout=60).segments) == 1
    assert client.job("no-such-job").status().state == "unknown"


def test_jobs_by_path_are_refused_without_an_input_root(workers, client):
    workers()
    job = client.submit(path="/etc/passwd", src="en", tgt="de")
    with pytest.raises(JobFailedError, match="jobs by path are off.*NMT_INPUT_ROOT") as failure:
        job.wait(timeout=60)
    assert "root:" not in str(failure.value)


def test_jobs_by_path_stay_inside_the_input_root(workers, client, tmp_path):
    root = tmp_path / "inputs"
    (root / "letters").mkdir(parents=True)
    (root / "letters" / "a.txt").write_text("A dog runs.\n", encoding="utf-8")
    (root / "escape.txt").symlink_to("/etc/hostname")
    workers(input_root=str(root))
    assert len(client.submit(path=str(root / "letters" / "a.txt"), src="en", tgt="de").wait(timeout=60).segments) == 1
    assert len(client.submit(path="letters/a.txt", src="en", tgt="de").wait(timeout=60).segments) == 1
    for path in ("/proc/self/status", str(root / "letters" / ".." / ".." / "x.txt"), str(root / "escape.txt")):
        with pytest.raises(JobFailedError, match="outside NMT_INPUT_ROOT") as failure:
            client.submit(path=path, src="en", tgt="de").wait(timeout=60)
        assert str(root) not in str(failure.value).replace(path, "")  # the error never shows the root


def test_wait_rides_out_a_redis_outage_and_stops_on_unknown_jobs(workers, client, redis_server):
    workers()
    with pytest.raises(JobNotFoundError, match="no such job"):
        client.job("never-submitted").wait(timeout=30)
    job = client.submit(text="A dog runs.", src="en", tgt="de")
    expected = job.wait(timeout=60).text
    time.sleep(1.5)  # appendfsync everysec
    redis_server.kill()
    results: list = []
    waiter = threading.Thread(target=lambda: results.append(client.job(job.id).wait(timeout=60)))
    waiter.start()
    time.sleep(2.0)  # the client polls a dead Redis meanwhile
    redis_server.start()
    waiter.join(timeout=60)
    assert results and results[0].text == expected


def submit_cli(tmp_path, env: dict, *args: str) -> subprocess.CompletedProcess:
    src = tmp_path / "note.txt"
    src.write_text("A dog runs.\n", encoding="utf-8")
    return subprocess.run([sys.executable, "-m", "nmt", "submit", str(src), "--src", "en", "--tgt", "de", *args],
                          cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120)


def test_nmt_submit_wait_says_in_one_line_why_it_stopped(redis_server, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("NMT_")}
    # No worker consumes the queue.
    done = submit_cli(tmp_path, env | {"NMT_BROKER_URL": redis_server.url}, "--wait", "--timeout", "2")
    assert done.returncode == 1
    assert "gave up after 2 s: still queued: no worker is consuming nmt.en-de" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and "test-secret" not in done.stderr
    # The broker is unreachable: one line, the URL without its password.
    dead = f"redis://:test-secret@127.0.0.1:{free_port()}/0"
    done = submit_cli(tmp_path, env | {"NMT_BROKER_URL": dead}, "--wait", "--timeout", "2")
    assert done.returncode == 1
    assert f"cannot reach the broker at redis://:***@127.0.0.1:{dead.rsplit(':', 1)[1]}" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and "test-secret" not in done.stderr
    # Unset: the default is said, not silently used (a missing file: nothing is sent anywhere).
    unset = subprocess.run([sys.executable, "-m", "nmt", "submit", str(tmp_path / "missing.txt"), "--src", "en",
                            "--tgt", "de"], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert "NMT_BROKER_URL is not set: using redis://127.0.0.1:6379/0" in unset.stderr, unset.stderr
    assert "skipped" in unset.stderr and unset.returncode == 1
    help_text = subprocess.run([sys.executable, "-m", "nmt", "submit", "--help"], cwd=REPO_ROOT, env=env,
                               capture_output=True, text=True, timeout=60).stdout
    assert "default 3600" in " ".join(help_text.split())


def test_nmt_status_result_and_cancel_follow_a_job_by_its_id(workers, client, redis_server, tmp_path):
    workers()
    job = client.submit(text="A dog runs.\n", src="en", tgt="de", name="note")
    result = job.wait(timeout=60)
    env = os.environ | {"NMT_BROKER_URL": redis_server.url}

    def nmt(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "nmt", *args], cwd=REPO_ROOT, env=env, capture_output=True,
                              text=True, timeout=60)

    status = nmt("status", job.id)
    assert status.returncode == 0 and status.stdout.strip().split("\t") == [job.id, "done", "1/1 segments"]
    fetched = nmt("result", job.id)
    assert fetched.returncode == 0 and fetched.stdout == result.text
    written = nmt("result", job.id, "--out", str(tmp_path / "res"))
    assert (tmp_path / "res" / "note.de.txt").read_text(encoding="utf-8") == result.text, written.stderr
    cancel = nmt("cancel", job.id)
    assert cancel.returncode == 1 and "is done: nothing to cancel" in cancel.stderr
    unknown = nmt("status", "no-such-job")
    assert unknown.returncode == 1 and "no such job" in unknown.stderr and "Traceback" not in unknown.stderr


def test_documents_are_not_kept_in_celery_task_records(workers, client):
    """Celery's task records (celery-task-meta-*) hold no task arguments: a refused document is not
    kept for the result TTL, and a translated one lives only in its job's result."""
    workers(max_document_bytes=4000)
    refused = client.submit(text="Refused marker sentence. " * 200, src="en", tgt="de")
    with pytest.raises(JobFailedError, match="exceeds the limit"):
        refused.wait(timeout=60)
    done = client.submit(text="A dog sees the kept marker.", src="en", tgt="de")
    done.wait(timeout=60)
    r = client.store.redis
    records = [k for k in r.scan_iter("celery-task-meta-*")]
    assert records, "the task records exist (states and errors)"
    for key in records:
        value = r.get(key) or ""
        assert "marker" not in value, (key, value[:300])
    failure = json.loads(r.get(f"celery-task-meta-{refused.id}"))
    assert failure["status"] == "FAILURE" and failure["traceback"] is None  # the reason, never a traceback
    assert "exceeds the limit" in failure["result"]["exc_message"][0]


def test_a_job_whose_worker_host_dies_is_redelivered_within_the_visibility_timeout_and_a_sweep(workers, client):
    """SIGKILL of the worker parent and its children together (the host died): another worker runs
    the job again within the visibility timeout plus one sweep. A 12 s visibility timeout stands in
    for the default 90 s, whose bound (two minutes) the sweep test below checks."""
    first = workers("w1", **FAST)
    text, sentences = document(200, seed=12)  # ~190 sentences: progress after 64 (a slice), two slices left
    job = client.submit(text=text, src="en", tgt="de", options=LONG)
    wait_for(lambda: job.status().done > 0, 60, "the job to make progress")
    assert job.status().state == "running", "the job ended before its worker could be killed: lengthen it"
    os.killpg(first.process.pid, signal.SIGKILL)
    killed = time.monotonic()
    first.process.wait(timeout=10)
    workers("w2", **FAST)
    attempts = client.store.key(job.id, "attempts", "document")
    wait_for(lambda: client.store.redis.get(attempts) == "2", 120, "the job to be redelivered")
    redelivered = time.monotonic() - killed
    assert redelivered < 12 + 10 + 20 + 15, redelivered  # stale_after of these settings, and a worker's start
    assert len(job.wait(timeout=360).segments) == len(sentences)


def test_worker_children_share_the_cores_when_no_thread_count_is_set(workers, client, tmp_path):
    from worker.engine.settings import EngineSettings, worker_child_settings

    assert worker_child_settings(EngineSettings(), children=2, cores=8).intra_op_threads == 4
    assert worker_child_settings(EngineSettings(batch_workers=2), children=2, cores=8).intra_op_threads == 2
    assert worker_child_settings(EngineSettings(), children=4, cores=2).intra_op_threads == 1
    assert worker_child_settings(EngineSettings(intra_op_threads=3), children=4, cores=2).intra_op_threads == 3
    worker = workers("w1", concurrency=2)
    job = client.submit(text="A dog runs.", src="en", tgt="de")
    job.wait(timeout=60)
    cores = len(os.sched_getaffinity(0))
    assert re.search(rf"job {job.id} done: en-de, model toy-en-de, 1 segments, [0-9.]+ s, CPUExecutionProvider",
                     worker.log.read_text())  # one line per job
    assert f"{max(1, cores // 2)} ONNX Runtime thread(s) x 1 batch worker(s) in this child (derived from the cores, 2 children)" \
        in worker.log.read_text()


def test_the_sweep_resends_lost_work_forgets_ended_work_and_fails_what_never_finishes(redis_server):
    """worker.sweep.sweep_once on a real Redis: what it does with each kind of idle scope."""
    from queue_config.jobstore import Delivery, JobStore
    from queue_config.settings import QueueSettings
    from worker.sweep import stale_after, sweep_once

    store = JobStore.from_url(redis_server.url, 3600)
    settings = QueueSettings(broker_url=redis_server.url, max_attempts=2)
    after, sent = stale_after(settings), []
    assert after == 120  # visibility timeout 90 + kombu's restore interval 10 + 20
    message = {"task": TRANSLATE_TASK, "args": [{"job_id": "lost"}], "queue": QUEUE}
    for job_id in ("lost", "ended", "leased", "bare"):
        store.create(job_id, "en", "de", "document")
        store.start(job_id, 10)
    store.admit([Delivery(job_id, "document", message | {"args": [{"job_id": job_id}]})
                 for job_id in ("lost", "ended", "leased", "bare")], "someone", 60, 3)
    for job_id in ("lost", "ended", "bare"):  # their worker died and its leases expired
        store.redis.delete(store.lease_key(job_id, "document"))
    store.fail("ended", "it failed")
    store.redis.delete(store.key("bare", "message", "document"))
    now = time.time()
    assert sweep_once(store, settings, sent.append, now=now) == {"resent": 0, "failed": 0, "forgotten": 0, "alive": 0}

    counts = sweep_once(store, settings, sent.append, now=now + after + 1)
    assert counts == {"resent": 1, "failed": 1, "forgotten": 1, "alive": 1}
    assert sent == [message]
    assert store.status("bare").state == "failed" and "message is gone" in store.status("bare").error
    assert store.idle(now + 10 ** 6) == [("leased", "document"), ("lost", "document")]  # ended ones forgotten
    # The next re-send waits twice as long; after max_attempts re-sends the job fails with the reason.
    assert sweep_once(store, settings, sent.append, now=now + 2 * after)["resent"] == 0
    assert sweep_once(store, settings, sent.append, now=now + 3 * after + 2)["resent"] == 1
    assert sweep_once(store, settings, sent.append, now=now + 5 * after)["resent"] == 0  # waits 2 x after
    assert sweep_once(store, settings, sent.append, now=now + 5 * after + 3)["failed"] == 1
    assert len(sent) == 2
    status = store.status("lost")
    assert status.state == "failed" and "sent again 2 times" in status.error and "NMT_MAX_ATTEMPTS=2" in status.error
    assert store.idle(now + 10 ** 6) == [("leased", "document")]


def test_a_running_job_whose_message_is_lost_is_sent_again_and_finishes(workers, client):
    """A Redis crash can lose the message of a running job (its acknowledgement or requeue falls
    in the AOF window). Simulated: the worker host dies and Redis forgets the unacknowledged
    message, so no visibility timeout can bring it back. The sweep of another worker sends it again."""
    first = workers("w1", **FAST)
    text, sentences = document(200, seed=13)  # ~190 sentences: progress after 64 (a slice), two slices left
    job = client.submit(text=text, src="en", tgt="de", options=LONG)
    wait_for(lambda: job.status().done > 0, 60, "the job to make progress")
    r = client.store.redis
    assert r.zcard("nmt:active") == 1 and client.store.message(job.id, "document")["args"][0]["job_id"] == job.id
    os.killpg(first.process.pid, signal.SIGKILL)
    first.process.wait(timeout=10)
    # The message is gone: only the job store's record is left. On a loaded machine the job can
    # outlive the 12 s visibility timeout before the kill, and the worker's own restore then puts the
    # message back in the queue (a priority step is a list of its own), so every copy is removed.
    r.delete("unacked", "unacked_index", *r.scan_iter(f"{QUEUE}*"))
    assert r.llen(QUEUE) == 0 and r.hlen("unacked") == 0
    killed = time.monotonic()
    second = workers("w2", **FAST)
    attempts = client.store.key(job.id, "attempts", "document")
    wait_for(lambda: r.get(attempts) == "2", 120, "the sweep to send the job again")
    assert time.monotonic() - killed < 12 + 10 + 20 + 2 + 15
    assert len(job.wait(timeout=360).segments) == len(sentences)
    assert "its message was sent again (1 of 3)" in second.log.read_text()
    assert r.zcard("nmt:active") == 0 and client.store.message(job.id, "document") is None


def test_worker_children_are_recycled_by_task_count(workers, client):
    """NMT_MAX_TASKS_PER_CHILD: a child is replaced after that many tasks (its memory with it);
    jobs keep being served across the replacement."""
    worker = workers("w1", max_tasks_per_child=2)
    first = set(worker.children())
    for n in range(3):
        client.submit(text=f"A dog runs {n}.", src="en", tgt="de").wait(timeout=60)
    wait_for(lambda: worker.children() and not set(worker.children()) & first, 30, "a new child")
    assert client.submit(text="A cat sleeps.", src="en", tgt="de").wait(timeout=60).text


def test_a_document_over_the_size_cap_is_refused_at_submit(redis_server, tmp_path):
    """NMT_MAX_DOCUMENT_BYTES is checked by the client too: nothing is sent, nothing recorded."""
    from dataclasses import replace

    from client import TranslationClient
    from queue_config.settings import QueueSettings

    small = TranslationClient(settings=replace(QueueSettings(), broker_url=redis_server.url, max_document_bytes=100))
    with pytest.raises(MessageError, match="of 101 bytes exceeds the limit of 100 bytes"):
        small.submit(text="a" * 101, src="en", tgt="de", name="big", job_id="big")
    (tmp_path / "big.txt").write_text("b" * 200, encoding="utf-8")
    with pytest.raises(MessageError, match="of 200 bytes exceeds"):
        small.submit(path=str(tmp_path / "big.txt"), src="en", tgt="de")
    assert small.store.status("big").state == "unknown" and redis_server.client().llen(QUEUE) == 0
    assert small.submit(text="a" * 100, src="en", tgt="de").id


def test_a_small_job_is_not_queued_behind_a_big_documents_chunks(workers, client):
    """Chunks wait in a lower priority step than whole documents: a small job sent after a big
    document has been split is taken by the next free slot, before the document's remaining chunks."""
    workers("w1", chunk_sentences=10)
    text, _ = document(200, seed=21)  # 182 sentences in 19 chunks
    big = client.submit(text=text, src="en", tgt="de", options=LONG)
    wait_for(lambda: big.status().done > 0, 120, "the big document's first chunk")
    assert client.store.plan(big.id)["chunks"] >= 15
    small = client.submit(text="A dog runs.", src="en", tgt="de")
    small.wait(timeout=120)
    status = big.status()
    assert status.state == "running" and status.done <= status.total // 2, status  # most chunks still waiting
    assert len(big.wait(timeout=600).segments) == status.total
