"""Queue overhead: documents through Celery and Redis against the same documents translated in-process.

For each document size (sentences per document), N documents are translated (1) in-process by one
``worker.engine.Translator`` and (2) through a local redis-server and one ``celery -A worker worker``
process with one pool child, submitted and collected by ``client.TranslationClient``. Both use one
ONNX Runtime thread. Reported: documents/s each way, the per-document overhead in ms, and the
throughput ratio queue / in-process (goal: >= 0.9 for documents of 20 sentences or more).

    python bench/queue_overhead.py [--bundle models/multi30k-en-de] [--docs 100] [--sizes 1,20,50] [--json]
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from tests.queue_harness import CeleryWorker, RedisServer  # noqa: E402  (one harness for tests and bench)

DEFAULT_SRC = REPO_ROOT.parent / "shared" / "data" / "multi30k" / "val.en.gz"


def documents(source: Path, count: int, size: int) -> list[str]:
    from worker.engine.evaluation import read_lines

    lines = [line.strip() for line in read_lines(source) if line.strip()]
    return [" ".join(lines[(d * size + i) % len(lines)] for i in range(size)) for d in range(count)]


def in_process(bundle: Path, docs: list[str], beam: int) -> float:
    from worker.engine.search import SearchOptions
    from worker.engine.settings import EngineSettings
    from worker.engine.translator import Translator

    translator = Translator(bundle, EngineSettings(provider="cpu", intra_op_threads=1))
    options = SearchOptions(beam=beam, max_len_a=translator.default_options.max_len_a,
                            max_len_b=translator.default_options.max_len_b)
    translator.translate_document(docs[0], options)  # warm-up
    started = time.perf_counter()
    for doc in docs:
        translator.translate_document(doc, options)
    return time.perf_counter() - started


def through_queue(client, docs: list[str], beam: int) -> float:
    client.submit(text=docs[0], src="en", tgt="de", options={"beam": beam}).wait(timeout=600)  # warm-up
    started = time.perf_counter()
    jobs = [client.submit(text=doc, src="en", tgt="de", options={"beam": beam}) for doc in docs]
    for job in jobs:
        job.wait(timeout=3600, poll=0.01)
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bundle", default=str(REPO_ROOT / "models" / "multi30k-en-de"))
    parser.add_argument("--src", default=str(DEFAULT_SRC))
    parser.add_argument("--docs", type=int, default=100)
    parser.add_argument("--sizes", default="1,20,50")
    parser.add_argument("--beam", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    from client.client import TranslationClient

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        redis_server = RedisServer(Path(tmp) / "redis").start()
        worker = CeleryWorker("bench", {"NMT_BROKER_URL": redis_server.url, "NMT_BUNDLES": args.bundle,
                                        "NMT_THREADS": "1", "NMT_PROVIDER": "cpu"}, Path(tmp), concurrency=1)
        try:
            worker.start()
            client = TranslationClient(broker_url=redis_server.url)
            for size in (int(s) for s in args.sizes.split(",")):
                docs = documents(Path(args.src), args.docs, size)
                local = in_process(Path(args.bundle), docs, args.beam)
                queued = through_queue(client, docs, args.beam)
                rows.append({"sentences_per_doc": size, "docs": len(docs), "in_process_docs_per_s": len(docs) / local,
                             "queue_docs_per_s": len(docs) / queued,
                             "overhead_ms_per_doc": 1000 * (queued - local) / len(docs),
                             "throughput_ratio": local / queued})
        finally:
            worker.stop()
            redis_server.stop()
    print(f"{'sent/doc':>9}{'docs':>6}{'in-proc doc/s':>15}{'queue doc/s':>13}{'overhead ms/doc':>17}{'ratio':>8}")
    for r in rows:
        print(f"{r['sentences_per_doc']:>9}{r['docs']:>6}{r['in_process_docs_per_s']:>15.2f}{r['queue_docs_per_s']:>13.2f}"
              f"{r['overhead_ms_per_doc']:>17.1f}{r['throughput_ratio']:>8.3f}")
    if args.json:
        print(json.dumps({"rows": rows, "beam": args.beam, "bundle": args.bundle}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
