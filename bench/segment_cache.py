"""The segment cache: a document in which 30% of the segments repeat others, translated with the
cache off (the baseline) and on, in the same run, by the same loaded engine.

The document: ``--sentences`` segments, one a line; 70% distinct sentences from the head of a dev
set (default: the Tatoeba holdout dev set, English), the rest copies of them drawn at random
(seeded) and placed at random positions. Each configuration translates the whole document
(``Translator.translate_document``, as ``nmt translate`` and the workers do) ``--repeats`` times,
interleaved, with a fresh, empty cache on every run; the fastest run counts (noise on a shared
machine only ever slows a run down) and the median is reported too. Threads as ``nmt translate``
lays them out on CPU (one batch per core, one intra-op thread each) unless given.

Reported: segments, repeats, cache hits, sentences/s off and on, the speed-up (best over best;
medians), whether the outputs are identical (every segment's JSON but the ``cached`` flag and the
score) and the largest score difference: the cache changes which sentences share a batch, and a
sentence decoded in another batch composition can differ in the 7th digit of its score (float32).

    python bench/segment_cache.py [--bundle models/en-de] [--source ../data/general-v2/tatoeba/dev.en.gz]
                                  [--sentences 1000] [--repeat-share 0.3] [--repeats 3]
                                  [--threads 0] [--batch-workers 0] [--json]
"""
from __future__ import annotations

import argparse
import gzip
import json
import random
import statistics
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from bench.test_sets import BUILT  # noqa: E402

from span_fidelity import cpu_model  # noqa: E402  (bench/ is on sys.path when run as a script)


def build_document(source: Path, sentences: int, repeat_share: float, seed: int = 0) -> tuple[str, int]:
    """The document text (one segment a line) and how many of its segments are repeats."""
    opener = gzip.open if source.suffix == ".gz" else open
    with opener(source, "rt", encoding="utf-8") as handle:
        pool = list(dict.fromkeys(line.strip() for line in handle if line.strip()))
    repeats = round(sentences * repeat_share)
    distinct = pool[: sentences - repeats]
    if len(distinct) < sentences - repeats:
        raise SystemExit(f"{source}: only {len(pool)} distinct lines, {sentences - repeats} needed")
    rng = random.Random(seed)
    lines = list(distinct)
    for _ in range(repeats):
        lines.insert(rng.randrange(len(lines) + 1), rng.choice(distinct))
    return "\n".join(lines) + "\n", repeats


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", default=str(REPO_ROOT / "models" / "en-de"))
    parser.add_argument("--source", default=str(BUILT / "tatoeba" / "dev.en.gz"))
    parser.add_argument("--sentences", type=int, default=1000)
    parser.add_argument("--repeat-share", type=float, default=0.3)
    parser.add_argument("--repeats", type=int, default=3, help="runs per configuration; the fastest counts")
    parser.add_argument("--threads", type=int, default=0, help="intra-op threads (0: as nmt translate)")
    parser.add_argument("--batch-workers", type=int, default=0, help="batches at once (0: as nmt translate)")
    parser.add_argument("--json", action="store_true", help="print a JSON object as the last line")
    args = parser.parse_args(argv)

    from worker.engine.cache import SegmentCache
    from worker.engine.settings import EngineSettings, local_cpu_settings
    from worker.engine.translator import Translator

    text, repeats = build_document(Path(args.source), args.sentences, args.repeat_share)
    settings = EngineSettings(provider="cpu", intra_op_threads=args.threads, batch_workers=args.batch_workers or 1)
    translator = Translator(args.bundle, local_cpu_settings(settings))
    translator.translate_document(text.splitlines()[0])  # warm-up
    seconds: dict[str, list[float]] = {"off": [], "on": []}
    outputs: dict[str, list] = {}
    scores: dict[str, list[float]] = {}
    hits = 0
    for _ in range(args.repeats):
        for name in ("off", "on"):
            translator.cache = SegmentCache(size=100_000) if name == "on" else None
            started = time.perf_counter()
            document = translator.translate_document(text)
            seconds[name].append(time.perf_counter() - started)
            outputs[name] = [s.to_json() | {"cached": False} for s in document.segments]
            scores[name] = [s.pop("score") for s in outputs[name]]
            if name == "on":
                hits = document.provenance["timings"]["cache_hits"]
    segments = len(outputs["off"])
    report = {
        "cpu": cpu_model(), "bundle": Path(args.bundle).name, "segments": segments, "repeats_in_document": repeats,
        "cache_hits": hits, "runs": args.repeats,
        "threads": translator.settings.intra_op_threads, "batch_workers": translator.settings.batch_workers,
        "sentences_per_s_off": round(segments / min(seconds["off"]), 1),
        "sentences_per_s_on": round(segments / min(seconds["on"]), 1),
        "speedup": round(min(seconds["off"]) / min(seconds["on"]), 2),
        "speedup_median": round(statistics.median(seconds["off"]) / statistics.median(seconds["on"]), 2),
        "identical": outputs["off"] == outputs["on"],
        "max_score_difference": max(abs(a - b) for a, b in zip(scores["off"], scores["on"])),
        "seconds_off": [round(s, 2) for s in seconds["off"]], "seconds_on": [round(s, 2) for s in seconds["on"]],
    }
    print(f"CPU: {report['cpu']}")
    print(f"{segments} segments, {repeats} repeats, {hits} cache hits ({report['bundle']}, "
          f"{report['threads']} thread(s) x {report['batch_workers']} batch worker(s), best of {args.repeats})")
    print(f"cache off: {report['sentences_per_s_off']} sentences/s; on: {report['sentences_per_s_on']} sentences/s")
    print(f"speed-up: {report['speedup']}x (medians: {report['speedup_median']}x); "
          f"outputs identical: {report['identical']} "
          f"(scores within {report['max_score_difference']:.1e})")
    if args.json:
        print(json.dumps(report))
    return 0 if report["identical"] and report["max_score_difference"] < 1e-4 else 1


if __name__ == "__main__":
    raise SystemExit(main())
