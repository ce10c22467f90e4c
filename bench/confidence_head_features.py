"""Whether the alignment head's view of a translation ranks it better than the decoder's own
log-probability does (issue: confidence on a domain the fit never saw). For each cached decoded
sentence of ``bench/confidence.py`` (run it first with the same --cache and --lines), the source
and the model's translation are force-decoded (``worker.engine.forced.force_decode``) to get the
head's rows (``guided``, over the source) and its reverse direction's columns, and six features
are computed from them:

- ``head_unaligned``: share of source pieces whose summed head probability is under 0.3
- ``head_peak``: mean over target tokens of the largest head probability
- ``head_null``: mean head probability on the source's end (no source piece)
- ``head_entropy``: mean row entropy over log(source pieces + 1)
- ``head_agreement``: the forward-backward agreement, sum of guided x reverse per target token
- ``head_fb``: mean log of that agreement per target token

Each is fitted beside the log-probability per character (the shipped fit, ``CHAR_FEATURES``) on
the three fit sets and checked on the fourth, as ``bench/confidence.py`` does. The features are
not the engine's (``worker.text.quality.COMPUTED``): they are added to what the fits may name for
this run only.

    python bench/confidence.py --bundle models/en-de --lines 500 --features char \
        --fit newstest2013 tatoeba-dev software-dev --check docs-test --cache CACHE
    python bench/confidence_head_features.py --bundle models/en-de --cache CACHE \
        --fit newstest2013 tatoeba-dev software-dev --check docs-test
"""
from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from bench.confidence import unit_from_json  # noqa: E402

HEAD = ("head_unaligned", "head_peak", "head_null", "head_entropy", "head_agreement", "head_fb")


def head_features(translator, units: list[dict]) -> dict[str, float]:
    """The six head features of one sentence (its decoded units, as the cache keeps them)."""
    from worker.engine.forced import force_decode

    sources = [list(u["source_ids"]) for u in units]
    targets = [[translator.target_sp.piece_to_id(p) for p in u["target_pieces"]] for u in units]
    todo = [k for k in range(len(units)) if sources[k] and targets[k]]
    values: dict[str, list[float]] = {name: [] for name in HEAD}
    for forced in force_decode(translator.model, [sources[k] for k in todo], [targets[k] for k in todo]):
        guided, reverse = forced.guided, forced.reverse  # [T+1, S+1]
        t, s = guided.shape[0] - 1, guided.shape[1] - 1
        if t < 1 or s < 1:
            continue
        rows = guided[:t]
        p = np.clip(rows[:, :s], 1e-9, 1.0)
        both = (rows[:, :s] * reverse[:t, :s]).sum(1) if reverse is not None else np.zeros(t)
        values["head_unaligned"].append(float((rows[:, :s].sum(0) < 0.3).mean()))
        values["head_peak"].append(float(rows.max(1).mean()))
        values["head_null"].append(float(rows[:, s].mean()))
        values["head_entropy"].append(float((-(p * np.log(p)).sum(1)).mean() / np.log(s + 1)))
        values["head_agreement"].append(float(both.mean()))
        values["head_fb"].append(float(np.log(np.clip(both, 1e-6, 1.0)).mean()))
    return {name: float(np.mean(v)) if v else 0.0 for name, v in values.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", default="models/en-de")
    parser.add_argument("--cache", default="/tmp/nmt-confidence-cache")
    parser.add_argument("--lines", type=int, default=500)
    parser.add_argument("--fit", nargs="+", required=True)
    parser.add_argument("--check", required=True)
    args = parser.parse_args(argv)

    import worker.text.quality as quality
    from worker.engine import EngineSettings, Translator
    from worker.local.calibrate import Sample, evaluate, fit, spearman

    translator = Translator(args.bundle, EngineSettings(provider="cpu", intra_op_threads=1, batch_workers=1))
    if translator.model.aligner is None:
        parser.error(f"{args.bundle} has no alignment head")
    piece = translator.target_sp.id_to_piece

    def load(name: str) -> list:
        file = Path(args.cache) / f"{translator.bundle.signature}.{name}.{args.lines}.decoded.jsonl.gz"
        if not file.exists():
            parser.error(f"{file} is missing: run bench/confidence.py with this --cache and --lines first")
        out = []
        with gzip.open(file, "rt", encoding="utf-8") as f:
            for line in f:
                decoded = json.loads(line)
                units = [unit_from_json(u) for u in decoded["units"]]
                features = dict(quality.decoder_facts(units, piece=piece).features)
                out.append(Sample(features | head_features(translator, decoded["units"]), decoded["chrf"]))
        return out

    sets = {name: load(name) for name in [*args.fit, args.check]}
    quality.COMPUTED = quality.COMPUTED + HEAD  # for this run's fits only
    fit_data = [s for name in args.fit for s in sets[name]]
    char = quality.CHAR_FEATURES
    fits = {"char (shipped)": char, **{f"char + {h}": char + (h,) for h in HEAD}, "char + all six": char + HEAD}
    print(f"fit on {'+'.join(args.fit)}, checked on {args.check} ({len(sets[args.check])} sentences)")
    for label, features in fits.items():
        row = evaluate(fit(fit_data, 1.0, features=features), sets[args.check])
        print(f"  {label:24} Spearman {row['spearman']:.3f}  AUROC {row['auroc']:.3f}")
    for name in HEAD:
        rho = spearman([s.features[name] for s in sets[args.check]], [s.chrf for s in sets[args.check]])
        print(f"  {name} alone: Spearman {rho:.3f} with chrF")
    return 0


if __name__ == "__main__":
    sys.exit(main())
