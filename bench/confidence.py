"""Confidence per segment: fit each bundle's quality model on dev sets of some domains, and
measure it on a domain the fit did not see: Spearman correlation with sentence chrF (goal >= 0.6)
and AUROC for finding translations below chrF 30 (goal >= 0.80). Beside it, in the same run: the
fits over the other feature sets (``FEATURE_SETS``: ``all``, the default fit's ``FEATURES``;
``base``, the eleven of earlier fits; ``agreement``, ``FEATURES`` and the agreement within the
beam's n-best list, ``worker.text.agreement``; ``char``, the log-probability per output character
alone; ``char-ratio``, it and the character length ratio), the fit over the n-best agreement
alone, and the mean token log-probability alone.

Every set is decoded once per bundle (default decoding, spans, case and language check on, as
users get it) and what the engine decoded (each sentence's pieces, token log-probabilities,
attention and finished hypotheses) is cached in --cache with the sentence chrF, keyed by the
bundle's signature; the features are computed from the cache by the engine's ``decoder_facts``, so
fits, and features added later, are rerun without decoding again. The seconds spent computing the
features are timed apart from the decoding, and of them the n-best agreement's. --write stores
the fit (--features) in the bundle's manifest (``quality``).

    python bench/confidence.py --bundle models/en-de --fit newstest2013 software-dev docs-dev \
        --check tatoeba-test [--lines 500] [--features all|base|agreement|char|char-ratio] [--write] [--json]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from bench.test_sets import SETS, SHARED, path as _path  # noqa: E402
from worker.text.agreement import AGREEMENT_FEATURES  # noqa: E402
from worker.text.quality import FEATURE_SETS  # noqa: E402  (the fits, by --features name: the one chosen is
#                                                 reported first and --write stores it)


class FeatureClock:
    """Seconds spent in ``decoder_facts`` (the features) while the engine decodes, and of them in
    ``agreement_features`` (the n-best agreement): the engine's own functions, timed where they
    are called. It also keeps what each call was given (``units``, by the id of the facts it
    returned), so that the decoded units can be cached and their features computed again."""

    def __init__(self) -> None:
        import worker.engine.translator as engine
        import worker.text.quality as quality

        self.seconds = self.agreement_seconds = 0.0
        self.calls, self._engine, self._facts, self._agreement = 0, engine, engine.decoder_facts, quality.agreement_features
        self.units: dict[int, tuple[object, list]] = {}

        def timed(*args, **kwargs):
            started = time.perf_counter()
            try:
                facts = self._facts(*args, **kwargs)
                self.units[id(facts)] = (facts, list(args[0] if args else kwargs["units"]))
                return facts
            finally:
                self.seconds += time.perf_counter() - started
                self.calls += 1

        def timed_agreement(*args, **kwargs):
            started = time.perf_counter()
            try:
                return self._agreement(*args, **kwargs)
            finally:
                self.agreement_seconds += time.perf_counter() - started

        engine.decoder_facts, quality.agreement_features = timed, timed_agreement


@dataclass(frozen=True)
class Ended:
    """A finished hypothesis as the cache keeps it (``worker.text.agreement.Finished``)."""

    tokens: tuple[int, ...]
    score: float


def unit_json(unit) -> dict:
    """A decoded unit (``DecodedChunk``) as the cache stores it: its attention cut to the columns
    ``decoder_facts`` reads (source pieces and eos), float32 values kept exactly."""
    s = len(unit.source_pieces)
    return {"source_pieces": list(unit.source_pieces), "source_ids": [int(i) for i in unit.source_ids],
            "target_pieces": list(unit.target_pieces),
            "token_log_probs": [float(v) for v in np.asarray(unit.token_log_probs, dtype=np.float32)],
            "attention": np.asarray(unit.attention, dtype=np.float32)[:, : s + 1].tolist(),
            "start": unit.start, "text": unit.text,
            "alternatives": [[[int(t) for t in h.tokens], float(h.score)] for h in unit.alternatives]}


def unit_from_json(raw: dict):
    from worker.text.quality import DecodedChunk

    return DecodedChunk(tuple(raw["source_pieces"]), tuple(raw["source_ids"]), tuple(raw["target_pieces"]),
                        np.asarray(raw["token_log_probs"], dtype=np.float32),
                        np.asarray(raw["attention"], dtype=np.float32).reshape(len(raw["token_log_probs"]), -1),
                        raw["start"], raw["text"], tuple(Ended(tuple(t), s) for t, s in raw["alternatives"]))


def load_decoded(translator, name: str, data: Path, lines: int, cache: Path, clock: FeatureClock):
    """The set as this bundle decodes it, decoded now or read from the cache: per decoded sentence
    (copied-through ones are left out) its source, translation, reference, sentence chrF and
    decoded units (``unit_json``); and the seconds the decoding took and, of them, the features
    and the n-best agreement (0, 0, 0 from the cache). The cache holds what the engine decoded,
    not features, so features added later are computed from it without decoding again."""
    import gzip

    from sacrebleu.metrics import CHRF

    from worker.engine.evaluation import read_lines

    file = cache / f"{translator.bundle.signature}.{name}.{lines}.decoded.jsonl.gz"
    if file.exists():
        with gzip.open(file, "rt", encoding="utf-8") as f:
            return [json.loads(line) for line in f], 0.0, 0.0, 0.0
    src, ref = (_path(p, data) for p in SETS[name])
    sources, references = read_lines(src)[:lines], read_lines(ref)[:lines]
    clock.seconds = clock.agreement_seconds = 0.0
    clock.units.clear()
    started = time.perf_counter()
    results = translator.translate_sentences([s.strip() for s in sources])
    seconds = time.perf_counter() - started
    chrf = CHRF()
    out = [{"source": r.source, "translation": r.translation, "reference": ref,
            "chrf": float(chrf.sentence_score(r.translation, [ref]).score),
            "units": [unit_json(u) for u in clock.units[id(r.facts)][1]]}
           for r, ref in zip(results, references) if r.facts is not None]
    clock.units.clear()
    cache.mkdir(parents=True, exist_ok=True)
    partial = file.with_suffix(".part")
    with gzip.open(partial, "wt", encoding="utf-8") as f:
        f.writelines(json.dumps(d) + "\n" for d in out)
    partial.replace(file)
    return out, seconds, clock.seconds, clock.agreement_seconds


def samples_of(decoded: list[dict], piece) -> list:
    """Samples (``worker.local.calibrate.Sample``) with the features ``decoder_facts`` computes
    now from the decoded units. ``piece(id)``: a target id's piece."""
    from worker.local.calibrate import Sample
    from worker.text.quality import decoder_facts

    return [Sample(dict(decoder_facts([unit_from_json(u) for u in d["units"]], piece=piece).features), d["chrf"])
            for d in decoded]


def load_samples(translator, name: str, data: Path, lines: int, cache: Path, clock: FeatureClock):
    """The set's samples for this bundle (features from the decoded units, decoded now or read from
    the cache); and the seconds the decoding took and, of them, the features and the n-best
    agreement (0, 0, 0 from the cache)."""
    decoded, *seconds = load_decoded(translator, name, data, lines, cache, clock)
    return (samples_of(decoded, translator.target_sp.id_to_piece), *seconds)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", default=str(REPO_ROOT / "models" / "en-de"))
    parser.add_argument("--fit", nargs="+", default=["newstest2013", "software-dev", "docs-dev"], choices=sorted(SETS))
    parser.add_argument("--check", nargs="+", default=["tatoeba-test"], choices=sorted(SETS))
    parser.add_argument("--lines", type=int, default=500, help="first N lines of each set")
    parser.add_argument("--l2", type=float, default=1.0)
    parser.add_argument("--data", default=str(SHARED), help="the shared data directory")
    parser.add_argument("--cache", default="/tmp/nmt-confidence-cache")
    parser.add_argument("--features", choices=tuple(FEATURE_SETS), default="all",
                        help="the fit to report first and --write: over FEATURES, the eleven of earlier fits, "
                             "FEATURES and the n-best agreement, the log-probability per output character "
                             "alone, or it and the character length ratio")
    parser.add_argument("--write", action="store_true", help="store the fit in the bundle's manifest")
    parser.add_argument("--json", action="store_true", help="print a JSON object as the last line")
    args = parser.parse_args(argv)
    overlap = set(args.fit) & set(args.check)
    if overlap:
        parser.error(f"sets both fitted and checked: {sorted(overlap)}")

    from dataclasses import replace

    from span_fidelity import cpu_model

    from worker.engine.settings import EngineSettings, local_cpu_settings
    from worker.engine.translator import Translator
    from worker.local.calibrate import evaluate, fit, write_to_bundle
    from worker.text.quality import DEFAULT_MODEL

    translator = Translator(args.bundle, local_cpu_settings(EngineSettings(provider="cpu")))
    data, cache, clock = Path(args.data), Path(args.cache), FeatureClock()
    loaded = {name: load_samples(translator, name, data, args.lines, cache, clock) for name in args.fit + args.check}
    fit_data = [s for name in args.fit for s in loaded[name][0]]
    info = {"sets": {name: len(loaded[name][0]) for name in args.fit}, "target": "sentence chrF / 100",
            "l2": args.l2, "command": "python bench/" + Path(__file__).name + " " + " ".join(argv or sys.argv[1:])}
    model = fit(fit_data, args.l2, fit_info=info, features=FEATURE_SETS[args.features])
    others = {f"{label} features": fit(fit_data, args.l2, features=FEATURE_SETS[label])
              for label in FEATURE_SETS if label != args.features}
    others["n-best agreement alone"] = fit(fit_data, args.l2, features=AGREEMENT_FEATURES)
    rows = {"fit (" + "+".join(args.fit) + ")": evaluate(model, fit_data)}
    for name in args.check:
        rows[name] = evaluate(model, loaded[name][0])
        for label, other in others.items():
            rows[f"{name} ({label})"] = evaluate(other, loaded[name][0])
        rows[name + " (mean log-prob alone)"] = evaluate(DEFAULT_MODEL, loaded[name][0])
    decoded = {n: loaded[n][1:] for n in loaded if loaded[n][1]}
    print(f"bundle {translator.bundle.signature}; CPU {cpu_model()}; decode seconds (of them features; of them "
          "n-best agreement) " + (", ".join(f"{n} {s:.1f} ({f:.2f}; {a:.2f})" for n, (s, f, a) in decoded.items())
                                  or "all from the cache"))
    print(f"{'set':45} {'n':>5} {'Spearman':>9} {'AUROC':>7} {'bad':>6} {'flagged':>8} {'precision':>9} {'recall':>7}")
    for name, row in rows.items():
        print(f"{name:45} {row['sentences']:5d} {row['spearman']:9.3f} {row['auroc']:7.3f} {row['bad_share']:6.2f} "
              f"{row['flagged_share']:8.2f} {row['flag_precision']:9.2f} {row['flag_recall']:7.2f}")
    if args.write:
        checks = {name: rows[name] for name in args.check}
        path = write_to_bundle(args.bundle, replace(model, fit=dict(model.fit) | {"checked_on": checks}))
        print(f"wrote the fit to {path}")
    if args.json:
        print(json.dumps({"bundle": translator.bundle.signature, "rows": rows, "model": model.to_json(),
                          "decode_seconds": decoded}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
