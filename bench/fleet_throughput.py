"""Fleet throughput against the number of workers, and what each job costs the broker.

For each worker count N (``--workers 1 2``; more than the machine's cores only share them), a fresh
redis-server on a free loopback port and N ``celery -A worker worker`` processes (``-c 1``, one ONNX
Runtime thread, the shipped ``models/en-de`` bundle, no segment cache: the texts repeat). Phases,
each after ``CONFIG RESETSTAT``, (1) and (2) after a warm-up (every child loads its model):

(0) the server alone, before any worker starts, for ``--idle`` seconds (its own timers);
(1) idle: nothing submitted for ``--idle`` seconds: the commands, CPU and bytes the idle fleet costs
    Redis, per worker and second (Celery's polling, heartbeats, leases);
(2) run: J jobs submitted at once through ``TranslationClient.submit_many`` (one sentence each from
    a fixed list, or with ``--doc-sentences K`` documents of K sentences), waited for, and each
    job's result read once (``Job.result``: a status read and a result read, what ``Job.wait`` does
    once a job is done).

Per run: wall time, jobs/s, sentences/s, and from ``INFO`` before and after: Redis commands per job
(total and by command), Redis CPU seconds per job (``used_cpu_sys + used_cpu_user``), network bytes
in and out per job (``total_net_input_bytes``, ``total_net_output_bytes``), ``used_memory`` before
and its peak (``used_memory_peak`` since the server started; each N has its own server), and the bytes
Redis holds per finished job (``MEMORY USAGE`` of its keys). Left out of the counts: the bench's
own commands (``INFO``, ``CONFIG``, and its completion polls, one ``HGET`` of one job's state every
``--poll`` seconds, counted and subtracted). Everything else is in: the client's submits and reads,
the workers' work and their background traffic during the run.

The estimate for fleets of ``--fleet 100 500`` workers assumes costs per job stay as measured, each
worker runs at the best per-worker job rate measured here, and one Redis core saturates at 100% CPU
(Redis runs commands on one thread).

    python bench/fleet_throughput.py [--workers 1 2] [--jobs 200] [--doc-sentences 0] [--idle 10] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from span_fidelity import cpu_model  # noqa: E402  (bench/ is on sys.path when run as a script)

from tests.queue_harness import CeleryWorker, RedisServer  # noqa: E402  (one harness for tests and bench)

BUNDLE = REPO_ROOT / "models" / "en-de"
BENCH_COMMANDS = ("info", "config")  # the bench's own (and subcommands, "config|resetstat"), never counted

SENTENCES = [
    "Please restart the server after installing the update.",
    "The meeting has been moved to Thursday afternoon.",
    "Our customer service team is available from nine to five.",
    "The invoice must be paid within thirty days of receipt.",
    "Click the button in the upper right corner to save your changes.",
    "The new policy applies to all employees starting next month.",
    "We could not process your payment because the card has expired.",
    "The train to Berlin was delayed by almost two hours.",
    "Store the device in a cool and dry place.",
    "If the problem persists, contact your system administrator.",
    "The results of the study will be published next year.",
    "She has worked at the company for more than ten years.",
    "Do not open the cover while the printer is switched on.",
    "The hotel offers free parking and breakfast for all guests.",
    "Your order has been shipped and should arrive within three days.",
    "The software supports more than forty languages.",
    "Children under twelve must be accompanied by an adult.",
    "The city council approved the budget for the new library.",
    "Enter your password again to confirm the change.",
    "The weather forecast predicts heavy rain for the weekend.",
    "Each participant will receive a certificate at the end of the course.",
    "The report shows a significant increase in sales in the second quarter.",
    "Please read the safety instructions carefully before use.",
    "The museum is closed on Mondays and public holidays.",
    "We are looking for an experienced engineer to join our team.",
    "The file you requested could not be found on the server.",
    "Prices include value added tax but not shipping costs.",
    "The bridge will be closed for repairs until the end of March.",
    "You can cancel your subscription at any time.",
    "The doctor recommended that he rest for a few days.",
    "All data is encrypted before it is sent over the network.",
    "The conference brings together researchers from around the world.",
]


def texts(jobs: int, sentences_per_job: int) -> list[str]:
    """``jobs`` texts of ``sentences_per_job`` sentences each, taken in turn from ``SENTENCES``."""
    return [" ".join(SENTENCES[(j * sentences_per_job + i) % len(SENTENCES)] for i in range(sentences_per_job))
            for j in range(jobs)]


def snapshot(redis) -> dict:
    """The figures read from one ``INFO all``."""
    info = redis.info("all")
    return {"commands": {name.removeprefix("cmdstat_"): value["calls"]
                         for name, value in info.items() if name.startswith("cmdstat_")},
            "cpu_s": float(info["used_cpu_sys"]) + float(info["used_cpu_user"]),
            "net_in": int(info["total_net_input_bytes"]), "net_out": int(info["total_net_output_bytes"]),
            "used_memory": int(info["used_memory"]), "used_memory_peak": int(info["used_memory_peak"])}


def difference(before: dict, after: dict, exclude: Counter) -> dict:
    """Commands, CPU seconds and bytes between two snapshots, less the bench's own commands."""
    commands = Counter(after["commands"])
    commands.subtract(before["commands"])
    commands.subtract(exclude)
    commands = Counter({name: calls for name, calls in commands.items()
                        if calls > 0 and name.split("|")[0] not in BENCH_COMMANDS})
    return {"commands": commands, "cpu_s": after["cpu_s"] - before["cpu_s"],
            "net_in": after["net_in"] - before["net_in"], "net_out": after["net_out"] - before["net_out"]}


def job_bytes(redis, job_id: str) -> int:
    """``MEMORY USAGE`` summed over every key Redis holds for a finished job (as bench/result_store.py)."""
    keys = list(redis.scan_iter(f"nmt:job:{job_id}*")) + list(redis.scan_iter(f"celery-task-meta-{job_id}"))
    return sum(redis.memory_usage(key) or 0 for key in keys)


def reset(redis) -> dict:
    redis.config_resetstat()
    return snapshot(redis)


def measure(workers: int, job_texts: list[str], sentences_per_job: int, args, tmp: Path) -> dict:
    from client.client import TranslationClient

    server = RedisServer(tmp / f"redis-{workers}").start()
    env = {"NMT_BROKER_URL": server.url, "NMT_BUNDLES": args.bundle, "NMT_THREADS": "1", "NMT_PROVIDER": "cpu",
           "NMT_CACHE_SIZE": "0"}
    fleet = [CeleryWorker(f"fleet{workers}-{i}", env, tmp, concurrency=1) for i in range(workers)]
    try:
        redis = server.client()
        before = reset(redis)  # the server alone: its own timers, the base under the idle fleet's figures
        time.sleep(args.idle)
        alone = difference(before, snapshot(redis), Counter())
        for worker in fleet:
            worker.start()
        client = TranslationClient(broker_url=server.url)
        client.submit(text=SENTENCES[0], src="en", tgt="de").wait(timeout=600)  # warm-up: each child loads its model
        for job in client.submit_many([{"text": s, "src": "en", "tgt": "de"} for s in SENTENCES[:4 * workers]]):
            job.wait(timeout=600)
        time.sleep(2)  # let the warm-up's acknowledgements and leases settle

        before = reset(redis)
        time.sleep(args.idle)
        idle = difference(before, snapshot(redis), Counter())

        before = reset(redis)
        started = time.perf_counter()
        jobs = client.submit_many([{"text": text, "src": "en", "tgt": "de"} for text in job_texts])
        polls = Counter()
        pending = list(jobs)
        while pending:  # poll the last job's state; when it is finished, look at the rest once
            state = redis.hget(client.store.key(pending[-1].id), "state")
            polls["hget"] += 1
            if state in ("done", "failed", "cancelled"):
                states = client.store.states([job.id for job in pending])
                polls["hget"] += len(pending)
                pending = [job for job in pending if states[job.id] not in ("done", "failed", "cancelled")]
                if not pending:
                    break
            if time.perf_counter() - started > args.timeout:
                raise TimeoutError(f"{len(pending)} of {len(jobs)} jobs not finished after {args.timeout} s")
            time.sleep(args.poll)
        wall = time.perf_counter() - started
        failed = 0
        for job in jobs:  # the client reads each result once, as Job.wait does
            try:
                job.result()
            except Exception:  # noqa: BLE001  (counted, and reported)
                failed += 1
        after = snapshot(redis)
        run = difference(before, after, polls)
        held = [job_bytes(redis, job.id) for job in jobs]
    finally:
        for worker in fleet:
            worker.stop()
        server.stop()

    j = len(job_texts)
    total = sum(run["commands"].values())
    return {
        "workers": workers, "jobs": j, "sentences_per_job": sentences_per_job, "failed": failed,
        "wall_s": wall, "jobs_per_s": j / wall, "sentences_per_s": j * sentences_per_job / wall,
        "jobs_per_s_per_worker": j / wall / workers,
        "commands_per_job": total / j,
        "commands_per_job_by_command": {name: calls / j for name, calls in run["commands"].most_common()},
        "redis_cpu_ms_per_job": 1000 * run["cpu_s"] / j, "redis_cpu_share": run["cpu_s"] / wall,
        "net_in_bytes_per_job": run["net_in"] / j, "net_out_bytes_per_job": run["net_out"] / j,
        "used_memory_before": before["used_memory"], "used_memory_after": after["used_memory"],
        "used_memory_peak": after["used_memory_peak"],
        "used_memory_growth_per_job": (after["used_memory"] - before["used_memory"]) / j,
        "held_bytes_per_job": sum(held) / j,
        "bench_polls_excluded": polls["hget"],
        "idle_s": args.idle,
        "idle_commands_per_worker_s": sum(idle["commands"].values()) / args.idle / workers,
        "idle_commands_by_command": {name: calls / args.idle / workers for name, calls in idle["commands"].most_common()},
        "idle_cpu_share_per_worker": max(0.0, idle["cpu_s"] - alone["cpu_s"]) / args.idle / workers,
        "server_alone_cpu_share": alone["cpu_s"] / args.idle,
        "idle_net_bytes_per_worker_s": (idle["net_in"] + idle["net_out"]) / args.idle / workers,
    }


def estimate(rows: list[dict], fleets: list[int], result_expires: float) -> dict:
    """Redis load for fleets of ``fleets`` workers, from the run with the best per-worker job rate."""
    best = max(rows, key=lambda r: r["jobs_per_s_per_worker"])
    rate = best["jobs_per_s_per_worker"]
    out = {"from_workers": best["workers"], "jobs_per_s_per_worker": rate, "result_expires_s": result_expires,
           "fleets": []}
    for n in fleets:
        jobs_s = n * rate
        out["fleets"].append({
            "workers": n, "jobs_per_s": jobs_s,
            "commands_per_s": jobs_s * best["commands_per_job"],
            "redis_cpu_share": jobs_s * best["redis_cpu_ms_per_job"] / 1000,
            "net_bytes_per_s": jobs_s * (best["net_in_bytes_per_job"] + best["net_out_bytes_per_job"]),
            "held_bytes_per_hour": jobs_s * best["held_bytes_per_job"] * 3600,
            "held_bytes_at_expiry": jobs_s * best["held_bytes_per_job"] * result_expires,
            "idle_commands_per_s": n * best["idle_commands_per_worker_s"],
            "idle_redis_cpu_share": n * best["idle_cpu_share_per_worker"],
        })
    return out


def print_report(rows: list[dict], est: dict) -> None:
    print(f"CPU: {cpu_model()}, {os.cpu_count()} cores")
    print(f"{'workers':>7}{'jobs':>6}{'sent/job':>9}{'wall s':>8}{'jobs/s':>8}{'sent/s':>8}{'cmd/job':>9}"
          f"{'cpu ms/job':>11}{'in B/job':>10}{'out B/job':>10}{'held B/job':>11}{'peak MB':>9}{'failed':>7}")
    for r in rows:
        print(f"{r['workers']:>7}{r['jobs']:>6}{r['sentences_per_job']:>9}{r['wall_s']:>8.1f}{r['jobs_per_s']:>8.2f}"
              f"{r['sentences_per_s']:>8.2f}{r['commands_per_job']:>9.1f}{r['redis_cpu_ms_per_job']:>11.3f}"
              f"{r['net_in_bytes_per_job']:>10.0f}{r['net_out_bytes_per_job']:>10.0f}{r['held_bytes_per_job']:>11.0f}"
              f"{r['used_memory_peak'] / 2**20:>9.2f}{r['failed']:>7}")
    for r in rows:
        top = ", ".join(f"{name} {calls:.2f}" for name, calls in list(r["commands_per_job_by_command"].items())[:12])
        print(f"  {r['workers']} worker(s), commands per job: {top}")
        idle = ", ".join(f"{name} {calls:.2f}" for name, calls in list(r["idle_commands_by_command"].items())[:6])
        print(f"  {r['workers']} worker(s), idle: {r['idle_commands_per_worker_s']:.2f} commands/s per worker ({idle}); "
              f"Redis CPU {100 * r['idle_cpu_share_per_worker']:.3f}% of a core per worker "
              f"(over the server alone, {100 * r['server_alone_cpu_share']:.3f}%)")
    print(f"\nEstimate from the {est['from_workers']}-worker run ({est['jobs_per_s_per_worker']:.2f} jobs/s per worker); "
          "per-job costs constant, one Redis core saturates at 100% CPU; finished jobs' keys held "
          f"1 h, and {est['result_expires_s'] / 86400:g} days (NMT_RESULT_EXPIRES)")
    print(f"{'workers':>8}{'jobs/s':>9}{'commands/s':>12}{'Redis CPU':>11}{'net MB/s':>10}{'held GB/h':>10}{'held GB, expiry':>16}"
          f"{'idle cmd/s':>12}{'idle CPU':>10}")
    for f in est["fleets"]:
        print(f"{f['workers']:>8}{f['jobs_per_s']:>9.1f}{f['commands_per_s']:>12.0f}{100 * f['redis_cpu_share']:>10.1f}%"
              f"{f['net_bytes_per_s'] / 1e6:>10.2f}{f['held_bytes_per_hour'] / 1e9:>10.2f}{f['held_bytes_at_expiry'] / 1e9:>16.0f}"
              f"{f['idle_commands_per_s']:>12.0f}{100 * f['idle_redis_cpu_share']:>9.1f}%")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bundle", default=str(BUNDLE))
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="worker counts, one run each")
    parser.add_argument("--jobs", type=int, default=200)
    parser.add_argument("--doc-sentences", type=int, default=0,
                        help="K > 0: each job is a document of K sentences (one paragraph); 0: one sentence a job")
    parser.add_argument("--idle", type=float, default=10.0, help="seconds of the idle phase")
    parser.add_argument("--poll", type=float, default=0.5, help="seconds between the bench's completion polls")
    parser.add_argument("--timeout", type=float, default=3600.0)
    parser.add_argument("--fleet", type=int, nargs="+", default=[100, 500], help="fleet sizes to estimate")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    from queue_config.settings import QueueSettings

    size = max(1, args.doc_sentences)
    job_texts = texts(args.jobs, size)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.workers:
            rows.append(measure(n, job_texts, size, args, Path(tmp)))
    est = estimate(rows, args.fleet, QueueSettings.result_expires)
    print_report(rows, est)
    if args.json:
        print(json.dumps({"rows": rows, "estimate": est, "bundle": args.bundle, "cpu": cpu_model(),
                          "cores": os.cpu_count()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
