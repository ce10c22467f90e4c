"""Case handling: BLEU on an ALL-CAPS (and a Title Case) copy of a dev set, with and without
case handling, against the original-case BLEU, in one run.

The copies' translations are scored case-insensitively against the original references (the
claim is that the words survive the capitals; their case is restored separately); the original
text is scored both cased and case-insensitively. Goal: ALL-CAPS with case handling within 3
BLEU points of the original (both case-insensitive).

    python bench/case_bleu.py [--bundle models/multi30k-en-de] [--src val.en.gz --ref val.de.gz]
                              [--lines 500] [--beam N] [--threads 1] [--json]
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

DATA = REPO_ROOT.parent / "shared" / "data" / "multi30k"


def title_case(sentence: str) -> str:
    """Every word's first letter in upper case, the rest as it was (a headline)."""
    return re.sub(r"(?<![\w'’])(\w)", lambda m: m.group(1).upper(), sentence)


def _signed(metric, hypotheses, references):
    """The metric's signature (sacreBLEU gives one only after a score)."""
    metric.corpus_score(hypotheses, [references])
    return metric.get_signature()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", default=str(REPO_ROOT / "models" / "multi30k-en-de"))
    parser.add_argument("--src", default=str(DATA / "val.en.gz"))
    parser.add_argument("--ref", default=str(DATA / "val.de.gz"))
    parser.add_argument("--lines", type=int, default=500, help="first N lines of the dev set")
    parser.add_argument("--beam", type=int, default=None, help="beam size (default: the bundle's)")
    parser.add_argument("--threads", type=int, default=1, help="ONNX Runtime intra-op threads")
    parser.add_argument("--json", action="store_true", help="print a JSON object as the last line")
    args = parser.parse_args(argv)

    from dataclasses import replace

    import sacrebleu
    from span_fidelity import cpu_model

    from worker.engine.evaluation import read_lines
    from worker.engine.settings import EngineSettings
    from worker.engine.translator import Translator
    from worker.text.pipeline import TextOptions

    translator = Translator(args.bundle, EngineSettings(provider="cpu", intra_op_threads=args.threads))
    options = translator.default_options if args.beam is None else replace(translator.default_options, beam=args.beam)
    sources = [s.strip() for s in read_lines(Path(args.src))[: args.lines]]
    references = read_lines(Path(args.ref))[: args.lines]
    started = time.perf_counter()
    on, off = TextOptions(), TextOptions(restore_case=False)

    def bleu(texts, text_options, lowercase: bool) -> float:
        results = translator.translate_sentences(texts, options, text_options=text_options)
        return sacrebleu.corpus_bleu([r.translation for r in results], [references], lowercase=lowercase).score

    original = translator.translate_sentences(sources, options, text_options=off)
    hyps = [r.translation for r in original]
    report = {
        "bundle": translator.bundle.signature, "src": Path(args.src).name, "lines": len(sources), "beam": options.beam,
        "cpu": cpu_model(),
        "original_cased": sacrebleu.corpus_bleu(hyps, [references]).score,
        "original_ci": sacrebleu.corpus_bleu(hyps, [references], lowercase=True).score,
        "original_with_case_handling_ci": bleu(sources, on, True),
        "upper_with_case_handling_ci": bleu([s.upper() for s in sources], on, True),
        "upper_without_case_handling_ci": bleu([s.upper() for s in sources], off, True),
        "title_with_case_handling_ci": bleu([title_case(s) for s in sources], on, True),
        "title_without_case_handling_ci": bleu([title_case(s) for s in sources], off, True),
        "signature_ci": str(_signed(sacrebleu.BLEU(lowercase=True), hyps, references)),
    }
    report["upper_gap"] = report["upper_with_case_handling_ci"] - report["original_ci"]
    report["title_gap"] = report["title_with_case_handling_ci"] - report["original_ci"]
    report["seconds"] = round(time.perf_counter() - started, 1)
    print(f"{len(sources)} lines of {Path(args.src).name}, bundle {translator.bundle.manifest.get('name')}, "
          f"beam {options.beam}, CPU {report['cpu']}")
    print(f"  original text           BLEU {report['original_cased']:.2f} cased, {report['original_ci']:.2f} "
          f"case-insensitive ({report['original_with_case_handling_ci']:.2f} with case handling on)")
    for copy in ("upper", "title"):
        print(f"  {copy:6} copy, handling on   BLEU {report[f'{copy}_with_case_handling_ci']:.2f} case-insensitive "
              f"(gap to original {report[f'{copy}_gap']:+.2f})")
        print(f"  {copy:6} copy, handling off  BLEU {report[f'{copy}_without_case_handling_ci']:.2f} case-insensitive")
    if args.json:
        print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
