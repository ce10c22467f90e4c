"""Lexical shortlist: decoding speed and BLEU with the bundle's shortlist against the full
vocabulary projection, in the same run, for each bundle (default: the general model in int8 and
fp32, ``models/en-de-int8`` and ``models/en-de``).

Each bundle decodes each test set twice, as ``nmt translate`` does on CPU (one batch per core with
one ONNX Runtime thread each; the bundle's decoding defaults; span protection, case handling and
the language check on): with ``shortlist="off"`` (the baseline: every step projects onto all V
target pieces) and ``shortlist="on"`` (the batch's candidates only, ``worker.shortlist``). The
two runs of a pair are interleaved ``--repeats`` times and the fastest of each counts. Reported per
bundle and set: sentences/s both ways, the speed-up, BLEU and chrF (sacreBLEU, cased, 13a) both
ways and the BLEU delta (goal: the shortlist ships on only if BLEU drops by at most 0.2), the
share of identical outputs and the mean candidate count per batch.

With ``--write`` each bundle's manifest entry records the measurement and turns the shortlist on
by default (``shortlist.default``) only if it was faster on every set and cost at most 0.2 BLEU on
each (the shortlist file, part of the signature, is unchanged).

    python bench/shortlist.py [--bundle DIR ...] [--lines 1000] [--repeats 2] [--write] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from bench.test_sets import files  # noqa: E402

SETS = {name: files(name) for name in ("newstest2014", "tatoeba-test", "software-test")}


def decode(translator, sources: list[str]) -> tuple[list[str], float]:
    started = time.perf_counter()
    results = translator.translate_sentences(sources)
    return [r.translation for r in results], time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    import numpy as np
    import sacrebleu
    from span_fidelity import cpu_model

    from worker.engine.evaluation import read_lines
    from worker.engine.settings import EngineSettings, local_cpu_settings
    from worker.engine.translator import Translator

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bundle", action="append", help="bundle with a shortlist (repeatable; default: en-de-int8, en-de)")
    parser.add_argument("--sets", nargs="+", default=list(SETS), choices=list(SETS), help="test sets")
    parser.add_argument("--lines", type=int, default=1000, help="first N lines of each set (0: all)")
    parser.add_argument("--repeats", type=int, default=2, help="timed runs of each configuration; the fastest counts")
    parser.add_argument("--write", action="store_true",
                        help="record the figures in each bundle's manifest and set its shortlist default from them")
    parser.add_argument("--json", action="store_true", help="print a JSON summary as the last line")
    args = parser.parse_args(argv)
    bundles = args.bundle or [str(REPO_ROOT / "models" / "en-de-int8"), str(REPO_ROOT / "models" / "en-de")]

    rows = []
    for bundle in bundles:
        translators = {mode: Translator(bundle, local_cpu_settings(EngineSettings(provider="cpu", shortlist=mode)))
                       for mode in ("off", "on")}
        model = translators["on"].model
        for name in args.sets:
            src_path, ref_path = SETS[name]
            sources, references = read_lines(src_path), read_lines(ref_path)
            if args.lines:
                sources, references = sources[: args.lines], references[: args.lines]
            translators["off"].translate_sentences(sources[:16])  # warm-up
            translators["on"].translate_sentences(sources[:16])
            best = {"off": float("inf"), "on": float("inf")}
            outputs = {}
            for _ in range(args.repeats):
                for mode in ("off", "on"):
                    outputs[mode], seconds = decode(translators[mode], sources)
                    best[mode] = min(best[mode], seconds)
            bleu = {m: sacrebleu.corpus_bleu(outputs[m], [references]).score for m in outputs}
            chrf = {m: sacrebleu.corpus_chrf(outputs[m], [references]).score for m in outputs}
            encoded = [translators["on"].source_sp.encode(s) for s in sources]
            sizes = [len(model.shortlist.candidates(np.array([ids]))) for ids in encoded[:200]]
            batch_sizes = [len(model.shortlist.candidates(np.concatenate([np.array(ids) for ids in encoded[i:i + 64]])))
                           for i in range(0, len(encoded), 64)]  # batches of 64 as they come, not length-sorted
            row = {"bundle": Path(bundle).name, "set": name, "sentences": len(sources),
                   "full_sent_per_s": len(sources) / best["off"], "shortlist_sent_per_s": len(sources) / best["on"],
                   "speedup": best["off"] / best["on"], "bleu_full": bleu["off"], "bleu_shortlist": bleu["on"],
                   "bleu_delta": bleu["on"] - bleu["off"], "chrf_full": chrf["off"], "chrf_shortlist": chrf["on"],
                   "identical": sum(a == b for a, b in zip(outputs["off"], outputs["on"])) / len(sources),
                   "mean_candidates_per_sentence": float(np.mean(sizes)),
                   "mean_candidates_per_64_sentences": float(np.mean(batch_sizes)),
                   "vocabulary": model.shortlist_step.vocab}
            rows.append(row)
            print(f"{row['bundle']:<12} {name:<13} {row['full_sent_per_s']:7.1f} -> {row['shortlist_sent_per_s']:7.1f} sent/s "
                  f"({row['speedup']:.2f}x)  BLEU {row['bleu_full']:.2f} -> {row['bleu_shortlist']:.2f} "
                  f"({row['bleu_delta']:+.2f})  identical {100 * row['identical']:.1f}%  "
                  f"candidates/sentence {row['mean_candidates_per_sentence']:.0f}, per 64 sentences "
                  f"{row['mean_candidates_per_64_sentences']:.0f} of {row['vocabulary']}", flush=True)
        if args.write:
            from worker.engine.bundle import SHORTLIST, load_bundle, update_manifest
            from worker.engine.shortlist import MAX_BLEU_DROP

            own = [r for r in rows if r["bundle"] == Path(bundle).name]
            entry = dict(load_bundle(bundle).manifest[SHORTLIST])
            entry["measured"] = {"cpu": cpu_model(), "command": " ".join(["python bench/shortlist.py", *(argv if argv is not None else sys.argv[1:])]),
                                 "sets": {r["set"]: {k: round(v, 3) if isinstance(v, float) else v for k, v in r.items()
                                                     if k not in ("bundle", "set")} for r in own}}
            entry["default"] = all(r["speedup"] > 1.0 and r["bleu_delta"] >= -MAX_BLEU_DROP for r in own)
            update_manifest(bundle, shortlist=entry)
            print(f"{Path(bundle).name}: shortlist {'on' if entry['default'] else 'off'} by default", flush=True)
    print(f"CPU: {cpu_model()}, {os.cpu_count()} cores")
    if args.json:
        print(json.dumps({"rows": rows, "cpu": cpu_model(), "cores": os.cpu_count()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
