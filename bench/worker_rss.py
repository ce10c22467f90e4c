"""Worker memory over many jobs: the resident memory (RSS) of a ``celery -A worker worker`` (parent
and pool children together) sampled every 100 jobs over 2,000 small jobs on a loopback Redis, with
children recycled by the default settings (NMT_MAX_TASKS_PER_CHILD 1000, NMT_MAX_MEMORY_PER_CHILD
3000 MiB) and, as the baseline in the same run, with recycling off.

Jobs are 1-4 sentences of the held-out Tatoeba dev slice and newstest2013, each sent with its own
text, 100 at a time (``submit_many``), each batch waited for before the next is sampled.

    python bench/worker_rss.py [--jobs 2000] [--bundle models/en-de-int8] [--json]

One worker with one pool child (``-c 1``, as ``bench/chaos.py`` starts them).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from alignment_aer import SETS, head  # noqa: E402
from chaos import Fleet  # noqa: E402
from span_fidelity import cpu_model  # noqa: E402

from client.client import TranslationClient  # noqa: E402


def rss_mib(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total / 1024


def run(label: str, env: dict[str, str], args, documents: list[str]) -> dict:
    os.environ.update(env)
    fleet = Fleet(Path(tempfile.mkdtemp(prefix=f"nmt-rss-{label}.")), args.bundle)
    fleet.start_redis()
    fleet.start_worker("w1")
    client = TranslationClient(broker_url=fleet.url)
    samples, started = [], time.perf_counter()
    try:
        while not fleet.children("w1"):
            time.sleep(0.2)
        for start in range(0, args.jobs, 100):
            batch = documents[start:start + 100]
            jobs = client.submit_many({"text": text, "src": "en", "tgt": "de"} for text in batch)
            for job in jobs:
                job.wait(timeout=600)
            deadline = time.monotonic() + 30
            while not fleet.children("w1") and time.monotonic() < deadline:  # a child being replaced
                time.sleep(0.2)
            pids = [fleet.workers["w1"].pid, *fleet.children("w1")]
            samples.append({"jobs": start + len(batch), "rss_mib": round(rss_mib(pids), 1),
                            "children": sorted(fleet.children("w1"))})
            print(f"{label:10} {start + len(batch):5d} jobs: RSS {samples[-1]['rss_mib']:7.1f} MiB "
                  f"(parent + {len(pids) - 1} children)")
    finally:
        fleet.stop()
    first, last = samples[0]["rss_mib"], samples[-1]["rss_mib"]
    peak = max(s["rss_mib"] for s in samples)
    replaced = len({pid for s in samples for pid in s["children"]}) - len(samples[0]["children"])
    # growth: the peak over the first sample (a sample just after a child was replaced is lower).
    return {"samples": samples, "rss_first_mib": first, "rss_last_mib": last, "rss_peak_mib": peak,
            "growth": round(peak / first, 3), "children_replaced": replaced,
            "seconds": round(time.perf_counter() - started, 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=2000)
    parser.add_argument("--bundle", default=str(REPO / "models" / "en-de-int8"))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rng = random.Random(5)
    sentences = [s for src, _ in SETS.values() for s in head(src, 1000)]
    documents = [" ".join(rng.choice(sentences) for _ in range(rng.randint(1, 4))) for _ in range(args.jobs)]
    print(f"command: python {' '.join(sys.argv)}")
    print(f"CPU: {cpu_model()}, {os.cpu_count()} cores; bundle {args.bundle}")
    report = {"cpu": cpu_model(), "jobs": args.jobs, "bundle": args.bundle,
              "recycled": run("recycled", {"NMT_MAX_TASKS_PER_CHILD": "1000", "NMT_MAX_MEMORY_PER_CHILD": "3000"},
                              args, documents),
              "baseline": run("baseline", {"NMT_MAX_TASKS_PER_CHILD": "0", "NMT_MAX_MEMORY_PER_CHILD": "0"},
                              args, documents)}
    for name in ("recycled", "baseline"):
        r = report[name]
        print(f"{name:10} RSS after 100 jobs {r['rss_first_mib']:.0f} MiB, after {args.jobs} {r['rss_last_mib']:.0f} MiB "
              f"(x{r['growth']}), peak {r['rss_peak_mib']:.0f} MiB, children replaced {r['children_replaced']}, "
              f"{r['seconds']:.0f} s")
    if args.json:
        print(json.dumps({k: v if k not in ("recycled", "baseline") else {kk: vv for kk, vv in v.items() if kk != "samples"}
                          for k, v in report.items()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
