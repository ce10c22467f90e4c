"""Faults against a fleet on a loopback Redis: kill -9 of worker children and of whole workers, a
Redis crash and restart with AOF, the fuzz list of bad jobs and raw messages, and a load of
one-sentence and chunked jobs. Counts what every job ended as.

    python bench/chaos.py [--jobs 1000] [--chunked 20] [--bundle models/multi30k-en-de-int8] [--json]

Reported: submitted, done, failed (the fuzz jobs are expected to fail, with a reason), lost (Redis
has no record), stuck (not final when the run ends), duplicated (a job whose result was offered
twice), worker parents that went down without being killed, and the seconds from each kill to the
redelivery of the jobs it held. Targets: 0 lost, 0 stuck, 0 duplicated, 0 parents down.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from client.client import TranslationClient  # noqa: E402
from queue_config.names import CHUNK_TASK, TRANSLATE_TASK, queue_for  # noqa: E402

PASSWORD = "chaos-secret"
QUEUE = queue_for("en", "de")
# Raw job options and texts no client would send; each job must fail with a reason.
FUZZ = [({"n_best": 6}, "A dog."), ({"max_len_a": 0, "max_len_b": 0}, "A dog."), ({"max_len_a": float("inf")}, "A dog."),
        ({"max_len_a": float("nan")}, "A dog."), ({"max_len_b": 10 ** 12}, "A dog."), ({}, "A dog \udcff runs."),
        ({"beam": "five"}, "A dog."), ({"temperature": 2}, "A dog."), ({}, "  \n ")]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Fleet:
    def __init__(self, directory: Path, bundle: str) -> None:
        self.directory, self.bundle, self.port = directory, bundle, free_port()
        self.url = f"redis://:{PASSWORD}@127.0.0.1:{self.port}/0"
        self.redis: subprocess.Popen | None = None
        self.workers: dict[str, subprocess.Popen] = {}
        self.killed: set[str] = set()

    def start_redis(self) -> None:
        self.redis = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--requirepass", PASSWORD, "--dir",
             str(self.directory), "--appendonly", "yes", "--appendfsync", "everysec", "--save", ""],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def kill_redis(self) -> None:
        self.redis.kill()
        self.redis.wait(timeout=10)

    def start_worker(self, name: str) -> None:
        env = os.environ | {"NMT_BROKER_URL": self.url, "NMT_BUNDLES": self.bundle, "NMT_CHUNK_SENTENCES": "20",
                            "OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1"}
        self.workers[name] = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "worker", "worker", "-c", "1", "-n", f"{name}@%h", "--loglevel=INFO",
             "--without-gossip", "--without-mingle"], cwd=REPO, env=env, start_new_session=True,
            stdout=open(self.directory / f"{name}.log", "ab"), stderr=subprocess.STDOUT)

    def children(self, name: str) -> list[int]:
        out = subprocess.run(["pgrep", "-P", str(self.workers[name].pid)], capture_output=True, text=True)
        return [int(p) for p in out.stdout.split()]

    def kill_child(self, name: str) -> None:
        for pid in self.children(name):
            os.kill(pid, signal.SIGKILL)

    def kill_worker(self, name: str) -> None:
        self.killed.add(name)
        os.killpg(self.workers[name].pid, signal.SIGKILL)
        self.workers[name].wait(timeout=10)

    def stop(self) -> None:
        for name, process in self.workers.items():
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
        if self.redis and self.redis.poll() is None:
            self.redis.terminate()
            self.redis.wait(timeout=10)


def jobs_held_by(client: TranslationClient, pids: list[int]) -> list[str]:
    """Ids of the jobs whose lease is held by one of these worker children (owner "host:pid:tag")."""
    held = []
    for key in client.store.redis.scan_iter("nmt:job:*:lease"):
        owner = client.store.redis.get(key) or ""
        if owner.count(":") >= 2 and int(owner.split(":")[-2]) in pids:
            held.append(key.split(":")[2])
    return held


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=1000, help="one-sentence jobs")
    parser.add_argument("--chunked", type=int, default=20, help="documents of 100 sentences (5 chunks each)")
    parser.add_argument("--bundle", default=str(REPO / "models" / "multi30k-en-de-int8"))
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds to wait for every job to end")
    parser.add_argument("--settle", type=float, default=300.0,
                        help="stop waiting once no job has ended for this long (past the 90 s visibility timeout, "
                             "kombu's restore and the job store's sweep after 120 s, a job still not final is stuck)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="nmt-chaos."))
    fleet = Fleet(work, args.bundle)
    fleet.start_redis()
    for name in ("w1", "w2", "w3"):
        fleet.start_worker(name)
    client = TranslationClient(broker_url=fleet.url)
    sentences = [line.strip() for line in (REPO / "examples" / "sample.en.txt").read_text().splitlines() if line.strip()]
    started = time.monotonic()
    jobs = [client.submit(text=sentences[i % len(sentences)], src="en", tgt="de") for i in range(args.jobs)]
    jobs += [client.submit(text=" ".join(sentences[(i + k) % len(sentences)] for k in range(100)), src="en", tgt="de")
             for i in range(args.chunked)]
    fuzz_ids = []
    for i, (options, text) in enumerate(FUZZ):
        job_id = f"fuzz-{i}"
        client.store.create(job_id, "en", "de", "document")
        client.app.send_task(TRANSLATE_TASK, args=[{"job_id": job_id, "src": "en", "tgt": "de", "text": text,
                                                     "options": options}], queue=QUEUE, task_id=job_id)
        fuzz_ids.append(job_id)
    client.store.redis.lpush(QUEUE, "not json")
    client.app.send_task(CHUNK_TASK, args=[jobs[-1].id, 999], queue=QUEUE)
    ids = [job.id for job in jobs]

    redeliveries: list[float] = []
    time.sleep(2)
    fleet.kill_child("w1")  # a child dies (out of memory): its message is requeued at once
    deadline = time.monotonic() + 30
    held: list[str] = []
    while not held and time.monotonic() < deadline:  # kill w2 while it runs a job
        held = jobs_held_by(client, fleet.children("w2"))
        time.sleep(0.05)
    fleet.kill_worker("w2")  # a host dies: parent and children
    killed_at = time.monotonic()
    fleet.start_worker("w4")
    time.sleep(1.5)  # appendfsync everysec
    fleet.kill_redis()  # Redis crashes and comes back from its AOF after 5 s
    time.sleep(5)
    fleet.start_redis()

    pending = {job_id for job_id in ids + fuzz_ids}
    waiting_held = set(held)
    states: dict[str, str] = {}
    last_change = time.monotonic()
    while pending and time.monotonic() - started < args.timeout and time.monotonic() - last_change < args.settle:
        try:
            for job_id in list(pending):
                status = client.store.status(job_id)
                if status.finished or status.state == "unknown":
                    states[job_id] = status.state
                    pending.discard(job_id)
                    last_change = time.monotonic()
            for job_id in list(waiting_held):
                attempts = client.store.redis.get(client.store.key(job_id, "attempts", "document"))
                if (attempts and int(attempts) >= 2) or client.store.status(job_id).finished:
                    redeliveries.append(time.monotonic() - killed_at)
                    waiting_held.discard(job_id)
        except Exception:  # noqa: BLE001 - Redis may still be loading its AOF
            pass
        time.sleep(1.0)
    for job_id in pending:
        states[job_id] = "stuck"
    logs = "".join((work / f"{name}.log").read_text(errors="replace") for name in fleet.workers)
    parents_down = sorted(name for name, p in fleet.workers.items() if p.poll() is not None and name not in fleet.killed)
    fleet.stop()
    regular = [states[i] for i in ids]
    report = {
        "submitted": len(ids) + len(fuzz_ids),
        "done": regular.count("done"),
        "failed": regular.count("failed"),
        "lost": regular.count("unknown"),
        "stuck": regular.count("stuck") + sum(states[i] in ("stuck", "running", "queued") for i in fuzz_ids),
        "fuzz_failed_with_reason": sum(states[i] == "failed" for i in fuzz_ids),
        "fuzz": len(fuzz_ids),
        "duplicated": len(re.findall(r"a result was already stored", logs)),
        "worker_parents_down": parents_down,
        "redelivery_seconds_max": round(max(redeliveries), 1) if redeliveries else None,
        "jobs_held_by_the_killed_worker": len(held),
        "seconds": round(time.monotonic() - started, 1),
        "log_dir": str(work),
    }
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        for key, value in report.items():
            print(f"{key:32} {value}")
    ok = not (report["lost"] or report["stuck"] or report["duplicated"] or parents_down)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
