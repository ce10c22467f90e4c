"""A Sentinel failover under load, and what WAIT costs per job-state write.

    python bench/sentinel_failover.py [--jobs 200] [--bundle models/multi30k-en-de] [--workers 2]
                                      [--writes 2000] [--json]

(1) failover: a master, a replica and three sentinels (down-after 1 s) on loopback ports, real
``celery -A worker worker`` processes over Sentinel, ``--jobs`` jobs submitted with the client,
the master SIGKILLed once a tenth of them are done. Reported: done, failed, lost, stuck, redone
(delivered more than once), seconds from the kill to the promotion and to the last job's end,
worker parents down. Targets: 0 lost, 0 stuck, 0 parents down, all ended within 60 s of the kill.
(2) WAIT: ``--writes`` job creations through the job store on the same group, with
NMT_REDIS_WAIT_REPLICAS 0 and 1, in the same run: milliseconds per write, and writes the replica
did not acknowledge within NMT_REDIS_WAIT_MS.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from client.client import TranslationClient  # noqa: E402
from queue_config.jobstore import JobStore  # noqa: E402
from queue_config.settings import load_settings  # noqa: E402
from tests.queue_harness import CeleryWorker  # noqa: E402
from tests.sentinel_harness import FAILOVER_WORKERS, SentinelGroup, failover_jobs, failover_run  # noqa: E402


def wait_cost(group: SentinelGroup, writes: int) -> dict[str, dict[str, float]]:
    figures = {}
    for replicas in (0, 1, 0, 1):  # interleaved: a busy machine's drift falls on both
        store = JobStore.for_settings(load_settings(group.settings_env() | {"NMT_REDIS_WAIT_REPLICAS": str(replicas)}))
        started = time.perf_counter()
        for _ in range(writes):
            store.create(uuid.uuid4().hex, "en", "de", "bench")
        ms = (time.perf_counter() - started) * 1000 / writes
        row = figures.setdefault(f"wait_{replicas}", {"ms_per_write": [], "unacknowledged": 0})
        row["ms_per_write"].append(round(ms, 3))
        row["unacknowledged"] += store.unreplicated
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=200)
    parser.add_argument("--bundle", default=str(REPO / "models" / "multi30k-en-de"))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--writes", type=int, default=2000)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--logs", metavar="DIR", help="copy the workers' and servers' logs here at the end")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        group = SentinelGroup(Path(tmp) / "sentinel").start()
        workers: list[CeleryWorker] = []
        try:
            costs = wait_cost(group, args.writes)
            env = group.settings_env() | FAILOVER_WORKERS | {"NMT_BUNDLES": args.bundle}
            workers = [CeleryWorker(f"bench{i}", env, Path(tmp), 1).start() for i in range(args.workers)]
            parents = [w.process.pid for w in workers]
            client = TranslationClient(settings=load_settings(group.settings_env()))
            jobs = failover_jobs(args.jobs)
            figures, _ = failover_run(group, client, jobs, kill_when_done=max(1, args.jobs // 10), deadline=60)
            figures["parents_down"] = sum(w.process.poll() is not None or w.process.pid not in parents for w in workers)
        finally:
            for worker in workers:
                worker.stop()
            group.stop()
            if args.logs:
                shutil.copytree(tmp, args.logs, dirs_exist_ok=True, ignore=shutil.ignore_patterns("*.rdb", "*.aof"))
    report = {"failover": figures, "wait": costs}
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print("failover:", ", ".join(f"{k} {v}" for k, v in figures.items()))
        for name, row in costs.items():
            print(f"{name}: {row['ms_per_write']} ms per job-state write, {row['unacknowledged']} not acknowledged in time")
    ok = figures["lost"] == figures["stuck"] == figures["parents_down"] == 0 and figures["kill_to_end_s"] < 60
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
