"""Repeated n-gram blocking in beam search: BLEU and the share of translations flagged
``repetition``, for each n (0: off, the baseline), on dev sets, in one run.

The search option ``no_repeat_ngram`` is on by default in a bundle only where it does not cost BLEU.

    python bench/repeat_blocking.py [--bundle models/en-de] [--sets newstest2013 tatoeba-dev multi30k-val]
                                    [--n 0 3 4 5] [--lines 1000] [--json]
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))


def main(argv: list[str] | None = None) -> int:
    from confidence import SETS, SHARED, _path

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", default=str(REPO_ROOT / "models" / "en-de"))
    parser.add_argument("--sets", nargs="+", default=["newstest2013", "tatoeba-dev", "multi30k-val"], choices=sorted(SETS))
    parser.add_argument("--n", nargs="+", type=int, default=[0, 3, 4, 5])
    parser.add_argument("--lines", type=int, default=1000)
    parser.add_argument("--data", default=str(SHARED))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    import sacrebleu
    from span_fidelity import cpu_model

    from worker.engine.evaluation import read_lines
    from worker.engine.settings import EngineSettings, local_cpu_settings
    from worker.engine.translator import Translator

    translator = Translator(args.bundle, local_cpu_settings(EngineSettings(provider="cpu")))
    base = replace(translator.default_options, no_repeat_ngram=0)
    print(f"bundle {translator.bundle.signature}; CPU {cpu_model()}; beam {base.beam}, first {args.lines} lines")
    rows = []
    for name in args.sets:
        src, ref = (_path(p, Path(args.data)) for p in SETS[name])
        sources, references = read_lines(src)[:args.lines], read_lines(ref)[:args.lines]
        baseline = None
        for n in args.n:
            results = translator.translate_sentences([s.strip() for s in sources], replace(base, no_repeat_ngram=n))
            bleu = sacrebleu.corpus_bleu([r.translation for r in results], [references]).score
            loops = sum("repetition" in r.flags for r in results) / len(results)
            baseline = bleu if baseline is None else baseline
            rows.append({"set": name, "n": n, "bleu": round(bleu, 2), "delta": round(bleu - baseline, 2),
                         "repetition_flagged": round(loops, 4)})
            print(f"{name:14} n={n}  BLEU {bleu:6.2f}  (delta {bleu - baseline:+.2f})  repetition flagged {100 * loops:5.2f}%")
    if args.json:
        print(json.dumps({"bundle": translator.bundle.signature, "rows": rows}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
