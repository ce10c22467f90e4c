"""Batches across jobs: many small jobs through Celery and Redis against the same text translated
locally in one call.

Job sets: 1,000 one-sentence jobs and 100 ten-sentence jobs (multi30k validation sentences).
Each set is translated (1) locally by one ``worker.engine.Translator`` in one call
(``translate_documents``: all documents batched together), and through a local redis-server by
(2) one worker with batches across jobs off (``NMT_BATCH_JOBS=1``: the baseline), (3) one worker
with them on (the defaults: up to 256 jobs or 16,000 characters a batch; ``--batch-jobs 256,32``
measures other job caps too, each in a run of its own), and (4) two workers with them on. Every worker has one pool
child and one ONNX Runtime thread, as the local run has. All jobs are submitted at once
(``submit_many``) and the clock stops when the last result is in. Reported: jobs/s and the
throughput ratio queue / local (goal: >= 0.8 with one worker).

    python bench/queue_batching.py [--bundle models/multi30k-en-de] [--batch-jobs 256] [--sets 1000x1,100x10] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from span_fidelity import cpu_model  # noqa: E402  (bench/ is on sys.path when run as a script)

from tests.queue_harness import CeleryWorker, RedisServer  # noqa: E402  (one harness for tests and bench)

DEFAULT_SRC = REPO_ROOT.parent / "shared" / "data" / "multi30k" / "val.en.gz"


def job_texts(source: Path, jobs: int, size: int) -> list[str]:
    from worker.engine.evaluation import read_lines

    lines = [line.strip() for line in read_lines(source) if line.strip()]
    return [" ".join(lines[(j * size + i) % len(lines)] for i in range(size)) for j in range(jobs)]


def local(bundle: Path, texts: list[str]) -> float:
    from worker.engine.settings import EngineSettings
    from worker.engine.translator import Translator

    translator = Translator(bundle, EngineSettings(provider="cpu", intra_op_threads=1))
    translator.translate_documents(texts[:8])  # warm-up
    started = time.perf_counter()
    translator.translate_documents(texts)
    return time.perf_counter() - started


def queued(redis_url: str, bundle: str, tmp: Path, texts: list[str], workers: int, batch_jobs: int) -> float:
    from client.client import TranslationClient

    env = {"NMT_BROKER_URL": redis_url, "NMT_BUNDLES": bundle, "NMT_THREADS": "1", "NMT_PROVIDER": "cpu",
           "NMT_BATCH_JOBS": str(batch_jobs), "NMT_CACHE_SIZE": "0"}
    started_workers = [CeleryWorker(f"bench{i}", env, tmp, concurrency=1) for i in range(workers)]
    try:
        for worker in started_workers:
            worker.start()
        client = TranslationClient(broker_url=redis_url)
        client.submit(text=texts[0], src="en", tgt="de").wait(timeout=600)  # warm-up: each child loads its model
        for job in client.submit_many([{"text": texts[0], "src": "en", "tgt": "de"} for _ in range(4 * workers)]):
            job.wait(timeout=600)
        started = time.perf_counter()
        jobs = client.submit_many([{"text": text, "src": "en", "tgt": "de"} for text in texts])
        for job in jobs:
            job.wait(timeout=3600, poll=0.01)
        return time.perf_counter() - started
    finally:
        for worker in started_workers:
            worker.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bundle", default=str(REPO_ROOT / "models" / "multi30k-en-de"))
    parser.add_argument("--src", default=str(DEFAULT_SRC))
    parser.add_argument("--batch-jobs", default="256",
                        help="NMT_BATCH_JOBS values to measure with one worker, comma-separated; the first is also "
                             "used by two workers (default 256)")
    parser.add_argument("--sets", default="1000x1,100x10", help="job sets JOBSxSENTENCES, comma-separated")
    parser.add_argument("--no-baseline", action="store_true", help="skip the one worker, batching off run")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    sizes = [int(n) for n in args.batch_jobs.split(",")]
    sets = [tuple(int(n) for n in item.split("x")) for item in args.sets.split(",")]

    runs = ([] if args.no_baseline else [("one_worker_unbatched", 1, 1)])
    runs += [("one_worker" if n == sizes[0] else f"one_worker_{n}_jobs", 1, n) for n in sizes]
    runs += [("two_workers", 2, sizes[0])]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        redis_server = RedisServer(Path(tmp) / "redis").start()
        try:
            for jobs, size in sets:
                texts = job_texts(Path(args.src), jobs, size)
                row = {"jobs": jobs, "sentences_per_job": size, "local_s": local(Path(args.bundle), texts)}
                for name, workers, batch_jobs in runs:
                    seconds = queued(redis_server.url, args.bundle, Path(tmp), texts, workers, batch_jobs)
                    row[f"{name}_s"] = seconds
                    row[f"{name}_ratio"] = row["local_s"] / seconds
                rows.append(row)
        finally:
            redis_server.stop()
    print(f"CPU: {cpu_model()}, {os.cpu_count()} cores; bundle {args.bundle}; throughput ratio = local s / queue s")
    print("runs: " + "; ".join(f"{name} = {workers} worker(s), {n} job(s) per batch" for name, workers, n in runs))
    print(f"{'jobs':>6}{'sent/job':>9}{'local s':>9}" + "".join(f"{name + ' s':>24}{'ratio':>7}" for name, _, _ in runs))
    for r in rows:
        print(f"{r['jobs']:>6}{r['sentences_per_job']:>9}{r['local_s']:>9.2f}"
              + "".join(f"{r[name + '_s']:>24.2f}{r[name + '_ratio']:>7.2f}" for name, _, _ in runs))
    if args.json:
        print(json.dumps({"rows": rows, "runs": runs, "bundle": args.bundle, "cpu": cpu_model()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
