"""Word alignment quality of ``nmt align``: alignment error rate (AER) of the forced-decoding links,
per extraction method, against silver alignments from eflomal, a small hand-made gold set and the
Bicici Europarl gold set (100 pairs, lowercased and tokenized; ``align-bicici-deen`` in ``--data``).

Silver: eflomal (Östling and Tiedemann 2016; ``pip install eflomal``) run in both directions on
the evaluated pairs plus a chunk of the training corpora for statistics, symmetrised with
grow-diag-final-and. eflomal sees lower-cased words with their leading and trailing punctuation
stripped (a word of punctuation only is kept as it is), so word indices are the whitespace words
``nmt align`` prints. eflomal's own links are scored against both gold sets too (it learns from the
Bicici sentences as from the others: unsupervised, as it is used), as they are and with the rule
``guided`` applies (``eflomal+punct``: a word of punctuation only links only to another).
AER = 1 - (|A & S| + |A & P|) / (|A| + |S|) (Och and Ney 2003), S the sure and P the possible links
(P includes S); the silver and the hand-made gold have sure links only (P = S).

eflomal is a sampler: two runs on the same data differ by a point or more of AER on 100 pairs. It
runs ``--eflomal-runs`` times on the gold sets (the first run also gives the silver), and each
method is compared with the runs' mean by a paired bootstrap over the set's sentences (Koehn 2004):
the AER difference, its 95% interval and the share of resamples in which the method is better.

    python bench/alignment_aer.py [--bundle models/en-de] [--lines 1000] [--train-lines 100000]
                                  [--methods argmax,grow] [--eflomal-runs 3] [--data ../shared/data] [--json]
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

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from bench.test_sets import BUILT, SHARED as SHARED_DATA, files  # noqa: E402

GOLD = REPO_ROOT / "bench" / "data" / "alignment_gold.tsv"

from nmt.links import Links, parse_pharaoh  # noqa: E402
from training.silver import silver_links  # noqa: E402,F401 (silver_links: tag_placement)


def head(path: Path, n: int) -> list[str]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [line.rstrip("\n") for line in itertools.islice(f, n)]


def silver_sets(data: Path) -> dict[str, tuple[Path, Path]]:
    """The sets scored against eflomal: name -> (English, German) files; ``data``: the shared data."""
    return {name: files(name, data) for name in ("newstest2013", "tatoeba-dev")}


def training_corpora() -> list[tuple[Path, Path]]:
    """The corpora eflomal also learns from (their first --train-lines pairs each)."""
    return [(BUILT / corpus / "train.en.gz", BUILT / corpus / "train.de.gz") for corpus in ("tatoeba", "wmt-news")]


SETS = silver_sets(SHARED_DATA)  # with the default data (bench/worker_rss.py reads its sentences)


def aer(predicted: list[Links], sure: list[Links], possible: list[Links] | None = None) -> dict:
    """AER over a whole set, in %, with precision (against the possible links) and recall (of the
    sure ones); ``possible`` includes ``sure`` and defaults to it (every reference link sure)."""
    table = counts(predicted, sure, possible)
    sure_hits, possible_hits, n_a, n_s = (int(n) for n in table.sum(axis=0))
    return {"aer": float(aer_of(table)),
            "precision": 100.0 * possible_hits / max(n_a, 1), "recall": 100.0 * sure_hits / max(n_s, 1),
            "links": n_a, "reference_links": n_s}


def counts(predicted: list[Links], sure: list[Links], possible: list[Links] | None = None) -> np.ndarray:
    """int [pairs, 4]: per pair |A & S|, |A & P|, |A| and |S|, the terms of AER."""
    possible = sure if possible is None else possible
    return np.array([(len(a & s), len(a & p), len(a), len(s)) for a, s, p in zip(predicted, sure, possible)],
                    dtype=np.int64).reshape(-1, 4)


def aer_of(table: np.ndarray) -> np.ndarray:
    """AER in % of ``counts`` tables: [..., pairs, 4] -> [...] (Och and Ney 2003)."""
    total = table.sum(axis=-2)
    return 100.0 * (1 - (total[..., 0] + total[..., 1]) / np.maximum(total[..., 2] + total[..., 3], 1))


def paired_bootstrap(ours: np.ndarray, baselines: list[np.ndarray], samples: int = 2000, seed: int = 0) -> dict:
    """Paired bootstrap (Koehn 2004) of AER(ours) - mean AER(baselines) over the same pairs.

    ours, baselines: ``counts`` of one method and of each baseline run on the same pairs. Returns the
    difference on the whole set, its 2.5 and 97.5 percentiles over ``samples`` resamples of the
    pairs, and the share of resamples in which ``ours`` has the lower AER (all in AER points)."""
    rows = np.random.default_rng(seed).integers(0, len(ours), size=(samples, len(ours)))
    difference = aer_of(ours[rows]) - np.mean([aer_of(b[rows]) for b in baselines], axis=0)
    whole = float(aer_of(ours) - np.mean([aer_of(b) for b in baselines]))
    low, high = np.percentile(difference, [2.5, 97.5])
    return {"difference": whole, "low": float(low), "high": float(high), "better_share": float((difference < 0).mean())}


def punctuation_to_punctuation(links: Links, source: str, target: str) -> Links:
    """``links`` without those joining a word of punctuation only to a word with a letter or digit."""
    def punctuation(text: str) -> list[bool]:
        return [not any(c.isalnum() for c in word) for word in text.split()]

    src, tgt = punctuation(source), punctuation(target)
    return {(i, j) for i, j in links if i < len(src) and j < len(tgt) and src[i] == tgt[j]}


def read_gold(path: Path) -> tuple[list[tuple[str, str]], list[Links]]:
    pairs, links = [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#") or not line.strip():
            continue
        source, target, pharaoh = line.split("\t")
        pairs.append((source, target))
        links.append(set(parse_pharaoh(pharaoh)))
    return pairs, links


def read_bicici(directory: Path) -> tuple[list[tuple[str, str]], list[Links], list[Links]]:
    """The Bicici set: (English, German) pairs, sure and possible links (Pharaoh, English first)."""
    def links(name: str) -> list[Links]:
        return [set(parse_pharaoh(line)) for line in (directory / name).read_text(encoding="utf-8").splitlines()]

    pairs = list(zip(head(directory / "test.en.gz", 10**9), head(directory / "test.de.gz", 10**9)))
    sure, possible = links("sure.txt"), links("possible.txt")
    if not len(pairs) == len(sure) == len(possible):
        raise ValueError(f"{directory}: {len(pairs)} pairs, {len(sure)} sure and {len(possible)} possible lines")
    return pairs, sure, possible


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", default=str(REPO_ROOT / "models" / "en-de"))
    parser.add_argument("--lines", type=int, default=1000, help="first N pairs of each evaluation set")
    parser.add_argument("--train-lines", type=int, default=100000,
                        help="first N pairs of each training corpus, for eflomal's statistics")
    parser.add_argument("--methods", default=None, help="comma-separated extraction methods (default: all)")
    parser.add_argument("--eflomal-runs", type=int, default=3,
                        help="eflomal runs on the gold sets, to compare with their mean (default: %(default)s)")
    parser.add_argument("--threads", type=int, default=0, help="ONNX Runtime intra-op threads (0: its default)")
    parser.add_argument("--data", type=Path, default=SHARED_DATA,
                        help="the shared data: wmt-newstest-de-en and align-bicici-deen (default: %(default)s)")
    parser.add_argument("--json", action="store_true", help="print a JSON object as the last line")
    args = parser.parse_args(argv)
    if args.eflomal_runs < 1:
        parser.error("--eflomal-runs must be at least 1")
    wmt, bicici = args.data / "wmt-newstest-de-en", args.data / "align-bicici-deen"
    for directory in (wmt, bicici):
        if not directory.is_dir():
            parser.error(f"{directory} not found (--data: the directory holding the shared data sets)")

    from span_fidelity import cpu_model

    from worker.engine.forced import METHODS, align_pairs
    from worker.engine.settings import EngineSettings
    from worker.engine.translator import Translator

    print(f"command: python {' '.join(sys.argv)}")
    print(f"CPU: {cpu_model()}, {os.cpu_count()} cores")
    translator = Translator(args.bundle, EngineSettings(provider="cpu", intra_op_threads=args.threads))
    methods = args.methods.split(",") if args.methods else [
        m for m in METHODS if m != "guided" or translator.model.aligner is not None]
    sets = {name: list(zip(head(src, args.lines), head(tgt, args.lines)))
            for name, (src, tgt) in silver_sets(args.data).items()}
    gold_pairs, gold_links = read_gold(GOLD)
    bicici_pairs, bicici_sure, bicici_possible = read_bicici(bicici)

    started = time.perf_counter()
    train = [pair for src, tgt in training_corpora()
             for pair in zip(head(src, args.train_lines), head(tgt, args.train_lines))]
    evaluated = [p for pairs in sets.values() for p in pairs] + gold_pairs + bicici_pairs
    silver_all = silver_links(evaluated, train)
    silver_seconds = time.perf_counter() - started
    print(f"eflomal: {len(evaluated)} evaluated + {len(train)} training pairs, {silver_seconds:.0f} s")
    golds = gold_pairs + bicici_pairs
    # each run on the same pairs as the first; kept: the links of the gold sets' pairs (the last ones)
    runs = [silver_all[len(evaluated) - len(golds):]]
    runs += [silver_links(evaluated, train)[len(evaluated) - len(golds):] for _ in range(args.eflomal_runs - 1)]

    # name -> (kind, pairs, sure, possible, each eflomal run's links of the pairs; none for a silver set)
    references = {}
    offset = 0
    for name, pairs in sets.items():
        references[name] = ("silver", pairs, silver_all[offset: offset + len(pairs)], None, [])
        offset += len(pairs)
    offset = 0
    for name, pairs, sure, possible in (("gold", gold_pairs, gold_links, None),
                                        ("bicici", bicici_pairs, bicici_sure, bicici_possible)):
        references[name] = ("gold", pairs, sure, possible, [run[offset: offset + len(pairs)] for run in runs])
        offset += len(pairs)

    results: dict[str, dict] = {"bundle": str(translator.bundle.signature), "cpu": cpu_model(),
                                "lines": args.lines, "train_lines": args.train_lines,
                                "eflomal_runs": args.eflomal_runs, "sets": {}, "against_eflomal": {}}
    print(f"\n{'set':16} {'reference':8} {'method':14} {'AER':>6} {'prec':>6} {'recall':>6} {'links':>7} {'ref':>7}")
    comparisons = []
    for name, (kind, pairs, sure, possible, eflomal_runs) in references.items():
        started = time.perf_counter()
        predicted = align_pairs(translator, [s for s, _ in pairs], [t for _, t in pairs], methods)
        seconds = time.perf_counter() - started
        links = {method: [set(p[method]) for p in predicted] for method in methods}
        rows = {method: {**aer(links[method], sure, possible), "seconds": round(seconds, 1)} for method in methods}
        if eflomal_runs:  # how far the silver itself is from a gold set, run by run
            baselines = [counts(run, sure, possible) for run in eflomal_runs]
            for k, run in enumerate(eflomal_runs):
                suffix = f" {k + 1}" if len(eflomal_runs) > 1 else ""
                rows[f"eflomal{suffix}"] = aer(run, sure, possible)
                # with the rule `guided` applies: a word of punctuation only links only to another
                rows[f"eflomal+punct{suffix}"] = aer([punctuation_to_punctuation(run_links, s, t) for run_links, (s, t)
                                                      in zip(run, pairs)], sure, possible)
            for method in methods:
                test = paired_bootstrap(counts(links[method], sure, possible), baselines)
                results["against_eflomal"][f"{name}:{method}"] = test
                comparisons.append((name, method, test))
        for method, row in rows.items():
            results["sets"][f"{name}:{method}"] = row
            print(f"{name:16} {kind:8} {method:14} {row['aer']:6.1f} {row['precision']:6.1f} {row['recall']:6.1f} "
                  f"{row['links']:7d} {row['reference_links']:7d}")
        print(f"{'':16} forced decoding + extraction of {len(pairs)} pairs: {seconds:.1f} s")
    print(f"\nagainst the mean of {args.eflomal_runs} eflomal run(s), paired bootstrap over the pairs "
          "(2,000 resamples):")
    print(f"{'set':16} {'method':14} {'AER diff':>8} {'95% interval':>16} {'better in':>9}")
    for name, method, test in comparisons:
        print(f"{name:16} {method:14} {test['difference']:+8.2f} {test['low']:+7.2f} .. {test['high']:+6.2f} "
              f"{100 * test['better_share']:8.1f}%")
    if args.json:
        print(json.dumps(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
