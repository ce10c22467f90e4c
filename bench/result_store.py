"""Bytes per job Redis keeps, and the time of a result write and read, with results in Redis (the
baseline), in files and in PostgreSQL (``NMT_RESULT_STORE``).

(1) Memory: for each store, a fresh redis-server on a loopback port and one ``celery -A worker
worker`` (one pool child, the shipped multi30k-en-de bundle); N one-sentence jobs and D documents of
S sentences are submitted through ``TranslationClient`` and waited for, then ``MEMORY USAGE`` of
every key Redis holds for each job (``nmt:job:<id>*``, and Celery's ``celery-task-meta-<id>`` if
any) is summed per job. Also reported: the stored result's size.
(2) Time: R results of each kind (a one-sentence job's, a document's) written through
``JobStore.put_result`` (the job's end included) and read back through ``JobStore.result``, per store,
on the same redis-server, the stores taking turns in blocks of 25: the median of the blocks' mean
milliseconds per write and per read.

PostgreSQL: the machine's server (``--postgres``, default 127.0.0.1:5432 as user postgres), in a
database created for the run and dropped after it; skipped with a note if it does not answer.

    python bench/result_store.py [--jobs 200] [--docs 5] [--doc-sentences 20] [--repeat 300] [--json]
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from tests.queue_harness import CeleryWorker, RedisServer  # noqa: E402  (one harness for tests and bench)

BUNDLE = REPO_ROOT / "models" / "multi30k-en-de"
SOURCE = REPO_ROOT.parent / "shared" / "data" / "multi30k" / "val.en.gz"


def sentences(count: int) -> list[str]:
    from worker.engine.evaluation import read_lines

    lines = [line.strip() for line in read_lines(SOURCE) if line.strip()]
    return [lines[i % len(lines)] for i in range(count)]


def job_bytes(redis, job_id: str) -> int:
    """``MEMORY USAGE`` summed over every key Redis holds for the job."""
    keys = list(redis.scan_iter(f"nmt:job:{job_id}*")) + list(redis.scan_iter(f"celery-task-meta-{job_id}"))
    return sum(redis.memory_usage(key) or 0 for key in keys)


def fleet_memory(kind: str, url: str, args: argparse.Namespace, root: Path) -> dict:
    """(1): jobs through a real worker with results kept in ``url`` ("" = Redis)."""
    from client.client import TranslationClient
    from queue_config.settings import QueueSettings

    server = RedisServer(root / f"redis-{kind}").start()
    env = {"NMT_BROKER_URL": server.url, "NMT_BUNDLES": str(BUNDLE), "NMT_RESULT_STORE": url, "NMT_THREADS": "1"}
    worker = CeleryWorker(f"bench-{kind}", env, root)
    try:
        worker.start()
        client = TranslationClient(settings=QueueSettings(broker_url=server.url, result_store=url))
        lines = sentences(args.jobs + args.docs * args.doc_sentences)
        short = [client.submit(text=line, src="en", tgt="de") for line in lines[:args.jobs]]
        rest = lines[args.jobs:]
        docs = [client.submit(text="\n\n".join(rest[d * args.doc_sentences:(d + 1) * args.doc_sentences]),
                              src="en", tgt="de", name=f"doc{d}") for d in range(args.docs)]
        for job in short + docs:
            job.wait(timeout=1800, poll=0.05)
        redis = server.client()
        out = {}
        for name, jobs in (("sentence", short), ("document", docs)):
            held = [job_bytes(redis, job.id) for job in jobs]
            result_key = [redis.memory_usage(client.store.key(job.id, "result")) for job in jobs]
            stored = [len(client.store.results.get(job.id) or b"") for job in jobs]
            out[name] = {"jobs": len(jobs), "redis_bytes_per_job": statistics.mean(held),
                         "result_key_bytes": statistics.mean(result_key), "stored_result_bytes": statistics.mean(stored)}
        out["redis_used_memory"] = redis.info("memory")["used_memory"]
        first = short[0].id  # what each key of one one-sentence job costs
        out["keys_of_one_sentence_job"] = {key.replace(first, "<id>"): redis.memory_usage(key) for key in
                                           [*redis.scan_iter(f"nmt:job:{first}*"), *redis.scan_iter(f"celery-task-meta-{first}")]}
        args.sample = {"sentence": dict(short[0].result().raw), "document": dict(docs[0].result().raw)}
        return out
    finally:
        worker.stop()
        server.stop()


BLOCK = 25  # writes (then reads) timed together; the stores take turns block by block


def write_read_times(stores: dict[str, str], server: RedisServer, args: argparse.Namespace) -> dict:
    """(2): ``put_result`` and ``result`` of each payload kind, ``args.repeat`` times each per
    store, the stores taking turns in blocks of ``BLOCK`` so that a busy machine slows them alike;
    the median of the blocks' means."""
    from queue_config.jobstore import JobStore
    from queue_config.result_store import result_store
    from queue_config.settings import QueueSettings

    jobs = {}
    for kind, url in stores.items():
        jobs[kind] = JobStore(server.client(), ttl=3600)
        jobs[kind].results = result_store(QueueSettings(result_store=url, result_expires=3600), jobs[kind].redis)
        jobs[kind].put_result(f"warm-{kind}", args.sample["sentence"])  # opens the store's connection
    times = {kind: {name: {"write": [], "read": []} for name in args.sample} for kind in stores}
    for _ in range(max(1, args.repeat // BLOCK)):
        for name, payload in args.sample.items():
            for kind, store in jobs.items():
                ids = [f"bench-{uuid.uuid4().hex}" for _ in range(BLOCK)]
                for job_id in ids:
                    store.create(job_id, "en", "de", "bench")
                started = time.perf_counter()
                for job_id in ids:
                    store.put_result(job_id, payload)
                times[kind][name]["write"].append((time.perf_counter() - started) / BLOCK)
                started = time.perf_counter()
                for job_id in ids:
                    assert store.result(job_id) is not None
                times[kind][name]["read"].append((time.perf_counter() - started) / BLOCK)
    return {kind: {name: {"bytes": len(json.dumps(args.sample[name], ensure_ascii=False).encode()),
                          "write_ms": 1000 * statistics.median(t["write"]), "read_ms": 1000 * statistics.median(t["read"])}
                   for name, t in rows.items()} for kind, rows in times.items()}


def postgres_database(admin_url: str):
    """A fresh database on the server (its URL and a function dropping it), or (None, reason)."""
    try:
        import psycopg

        admin = psycopg.connect(admin_url, autocommit=True, connect_timeout=3)
    except Exception as exc:  # noqa: BLE001 - no server, or no psycopg: the PostgreSQL rows are skipped
        return None, f"PostgreSQL skipped: {str(exc).strip()[:160]}"
    name = f"nmt_bench_{uuid.uuid4().hex[:10]}"
    admin.execute(f"CREATE DATABASE {name}")
    base = admin_url.rsplit("/", 1)[0]

    def drop() -> None:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        admin.close()
    return (f"{base}/{name}", drop), ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=200, help="one-sentence jobs per store")
    parser.add_argument("--docs", type=int, default=5, help="document jobs per store")
    parser.add_argument("--doc-sentences", type=int, default=20, help="sentences per document (one paragraph each)")
    parser.add_argument("--repeat", type=int, default=300, help="result writes and reads timed per store and kind")
    parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1:5432/postgres",
                        help="a PostgreSQL server where this run may create and drop a database")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    created, note = postgres_database(args.postgres)
    report: dict = {"memory": {}, "time": {}, "note": note}
    with tempfile.TemporaryDirectory(prefix="nmt-bench-results-") as tmp:
        root = Path(tmp)
        (root / "files").mkdir(mode=0o700)
        stores = {"redis": "", "file": f"file://{root / 'files'}"}
        if created:
            stores["postgresql"] = created[0]
        try:
            for kind, url in stores.items():
                report["memory"][kind] = fleet_memory(kind, url, args, root)
                print(f"memory {kind}: {report['memory'][kind]}", file=sys.stderr)
            # (2) times real results: the last run's first one-sentence job's and first document's
            server = RedisServer(root / "redis-times").start()
            try:
                report["time"] = write_read_times(stores, server, args)
            finally:
                server.stop()
        finally:
            if created:
                created[1]()
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        print_report(report)
    return 0


def print_report(report: dict) -> None:
    print("Redis memory per finished job (MEMORY USAGE of its keys), by where results are kept")
    print(f"{'store':<11} {'kind':<9} {'jobs':>5} {'Redis B/job':>12} {'result key B':>13} {'stored result B':>16}")
    for kind, rows in report["memory"].items():
        for name in ("sentence", "document"):
            row = rows[name]
            print(f"{kind:<11} {name:<9} {row['jobs']:>5} {row['redis_bytes_per_job']:>12.0f} "
                  f"{row['result_key_bytes']:>13.0f} {row['stored_result_bytes']:>16.0f}")
    for kind, rows in report["memory"].items():
        print(f"{kind}: keys of one one-sentence job: {rows['keys_of_one_sentence_job']}")
    base = report["memory"].get("redis")
    for kind, rows in report["memory"].items():
        if kind != "redis" and base:
            print(f"{kind}: Redis keeps {rows['sentence']['redis_bytes_per_job'] / base['sentence']['redis_bytes_per_job']:.2f}x "
                  f"the baseline's bytes per one-sentence job, "
                  f"{rows['document']['redis_bytes_per_job'] / base['document']['redis_bytes_per_job']:.2f}x per document")
    print("\nResult write (JobStore.put_result, the job's end included) and read (JobStore.result), ms per call")
    print(f"{'store':<11} {'kind':<9} {'bytes':>7} {'write ms':>9} {'read ms':>8}")
    for kind, rows in report["time"].items():
        for name, row in rows.items():
            print(f"{kind:<11} {name:<9} {row['bytes']:>7} {row['write_ms']:>9.2f} {row['read_ms']:>8.2f}")
    if report["note"]:
        print("\n" + report["note"])


if __name__ == "__main__":
    raise SystemExit(main())
