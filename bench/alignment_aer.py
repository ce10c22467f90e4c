"""Word alignment quality of ``nmt align``: alignment error rate (AER) of the forced-decoding links,
per extraction method, against silver alignments from eflomal and against a small hand-made gold set.

Silver: eflomal (Östling and Tiedemann 2016; ``pip install eflomal``) run in both directions on
the evaluated pairs plus a chunk of the training corpora for statistics, symmetrised with
grow-diag-final-and. eflomal sees lower-cased words with their leading and trailing punctuation
stripped (a word of punctuation only is kept as it is), so word indices are the whitespace words
``nmt align`` prints. All links count as sure: AER = 1 - 2|A & S| / (|A| + |S|).

    python bench/alignment_aer.py [--bundle models/en-de] [--lines 1000] [--train-lines 100000]
                                  [--methods argmax,grow] [--json]
"""
from __future__ import annotations

import argparse
import gzip
import itertools
import json
import os
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

WMT = REPO_ROOT.parent / "shared" / "data" / "wmt-newstest-de-en"
TATOEBA = REPO_ROOT / "data" / "tatoeba-holdout"
GOLD = REPO_ROOT / "bench" / "data" / "alignment_gold.tsv"
SETS = {"newstest2013": (WMT / "newstest2013.en.gz", WMT / "newstest2013.de.gz"),
        "tatoeba-dev": (TATOEBA / "dev.en.gz", TATOEBA / "dev.de.gz")}
TRAIN = [(TATOEBA / "train.en.gz", TATOEBA / "train.de.gz"), (WMT / "train.en.gz", WMT / "train.de.gz")]

from nmt.links import Links, parse_pharaoh  # noqa: E402
from training.silver import silver_links  # noqa: E402,F401 (silver_links: tag_placement)


def head(path: Path, n: int) -> list[str]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [line.rstrip("\n") for line in itertools.islice(f, n)]


def aer(predicted: list[Links], reference: list[Links]) -> dict:
    """AER with every reference link sure, plus precision and recall, over a whole set."""
    hits = sum(len(a & s) for a, s in zip(predicted, reference))
    n_a, n_s = sum(map(len, predicted)), sum(map(len, reference))
    return {"aer": 100.0 * (1 - 2 * hits / max(n_a + n_s, 1)),
            "precision": 100.0 * hits / max(n_a, 1), "recall": 100.0 * hits / max(n_s, 1),
            "links": n_a, "reference_links": n_s}


def read_gold(path: Path) -> tuple[list[tuple[str, str]], list[Links]]:
    pairs, links = [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#") or not line.strip():
            continue
        source, target, pharaoh = line.split("\t")
        pairs.append((source, target))
        links.append(set(parse_pharaoh(pharaoh)))
    return pairs, links


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", default=str(REPO_ROOT / "models" / "en-de"))
    parser.add_argument("--lines", type=int, default=1000, help="first N pairs of each evaluation set")
    parser.add_argument("--train-lines", type=int, default=100000,
                        help="first N pairs of each training corpus, for eflomal's statistics")
    parser.add_argument("--methods", default=None, help="comma-separated extraction methods (default: all)")
    parser.add_argument("--threads", type=int, default=0, help="ONNX Runtime intra-op threads (0: its default)")
    parser.add_argument("--json", action="store_true", help="print a JSON object as the last line")
    args = parser.parse_args(argv)

    from span_fidelity import cpu_model

    from worker.engine.forced import METHODS, align_pairs
    from worker.engine.settings import EngineSettings
    from worker.engine.translator import Translator

    print(f"command: python {' '.join(sys.argv)}")
    print(f"CPU: {cpu_model()}, {os.cpu_count()} cores")
    translator = Translator(args.bundle, EngineSettings(provider="cpu", intra_op_threads=args.threads))
    methods = args.methods.split(",") if args.methods else [
        m for m in METHODS if m != "guided" or translator.model.aligner is not None]
    sets = {name: list(zip(head(src, args.lines), head(tgt, args.lines))) for name, (src, tgt) in SETS.items()}
    gold_pairs, gold_links = read_gold(GOLD)

    started = time.perf_counter()
    train = [pair for src, tgt in TRAIN for pair in zip(head(src, args.train_lines), head(tgt, args.train_lines))]
    evaluated = [p for pairs in sets.values() for p in pairs] + gold_pairs
    silver_all = silver_links(evaluated, train)
    silver_seconds = time.perf_counter() - started
    print(f"eflomal: {len(evaluated)} evaluated + {len(train)} training pairs, {silver_seconds:.0f} s")

    references = {}
    offset = 0
    for name, pairs in sets.items():
        references[name] = ("silver", pairs, silver_all[offset: offset + len(pairs)])
        offset += len(pairs)
    references["hand-made gold"] = ("gold", gold_pairs, gold_links)
    references["eflomal vs gold"] = None  # how far the silver itself is from the gold

    results: dict[str, dict] = {"bundle": str(translator.bundle.signature), "cpu": cpu_model(),
                                "lines": args.lines, "train_lines": args.train_lines, "sets": {}}
    print(f"\n{'set':16} {'reference':8} {'method':12} {'AER':>6} {'prec':>6} {'recall':>6} {'links':>7} {'ref':>7}")
    for name, entry in references.items():
        if entry is None:
            row = aer(silver_all[-len(gold_pairs):], gold_links)
            results["sets"]["gold:eflomal"] = row
            print(f"{'hand-made gold':16} {'gold':8} {'eflomal':12} {row['aer']:6.1f} {row['precision']:6.1f} "
                  f"{row['recall']:6.1f} {row['links']:7d} {row['reference_links']:7d}")
            continue
        kind, pairs, reference = entry
        started = time.perf_counter()
        predicted = align_pairs(translator, [s for s, _ in pairs], [t for _, t in pairs], methods)
        seconds = time.perf_counter() - started
        for method in methods:
            row = aer([set(p[method]) for p in predicted], reference)
            results["sets"][f"{name}:{method}"] = {**row, "seconds": round(seconds, 1)}
            print(f"{name:16} {kind:8} {method:12} {row['aer']:6.1f} {row['precision']:6.1f} {row['recall']:6.1f} "
                  f"{row['links']:7d} {row['reference_links']:7d}")
        print(f"{'':16} forced decoding + extraction of {len(pairs)} pairs: {seconds:.1f} s")
    if args.json:
        print(json.dumps(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
