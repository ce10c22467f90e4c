"""Verbatim spans: how many come through unchanged with span protection on and off, in one run,
and what protection costs on ordinary text (BLEU on dev sets, on vs off).

Probe set: bench/data/span_probe.en (English sentences holding URLs, e-mail addresses, paths,
numbers, codes, versions, hashtags, @handles, IP addresses and placeholders at the start, middle
and end, adjacent, and alone). The spans are those ``worker.text.spans.find_spans`` finds in each
source sentence. Per kind and overall:

- verbatim: % of source spans found character for character in the translation (a span that occurs
  twice in a source must occur twice in the translation);
- restored: spans put back by alignment or insertion because the model did not copy their stand-in
  (protection on only; those sentences carry the ``restored_span`` flag);
- gained: spans in the translation that no source span contains or is part of (invented numbers,
  mangled URLs), counted by the kind they are detected as.

Dev sets: the first ``--dev-lines`` (500) lines of Multi30k val and, when present, WMT newstest2013,
translated with protection on and off; sacreBLEU (default: cased, 13a) of each, the difference,
and how many translations differ.

    python bench/span_fidelity.py [--bundle models/multi30k-en-de] [--probe FILE] [--dev-lines 500]
                                  [--beam N] [--threads 1] [--no-bleu] [--json]
"""
from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from collections import Counter
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

DATA = REPO_ROOT.parent / "shared" / "data"
DEV_SETS = {
    "multi30k-val": (DATA / "multi30k" / "val.en.gz", DATA / "multi30k" / "val.de.gz"),
    "newstest2013": (DATA / "wmt-newstest-de-en" / "newstest2013.en.gz", DATA / "wmt-newstest-de-en" / "newstest2013.de.gz"),
}


def span_counts(results) -> dict:
    """Per kind: spans in the sources, spans verbatim in the translations, restored, gained."""
    from worker.text.segment import RESTORED_SPAN
    from worker.text.spans import find_spans

    total, verbatim, restored, gained = Counter(), Counter(), Counter(), Counter()
    flagged = 0
    for r in results:
        spans = find_spans(r.source)
        texts = Counter(s.text for s in spans)
        for span in spans:
            total[span.kind] += 1
            verbatim[span.kind] += r.translation.count(span.text) >= texts[span.text]
        for detail in r.details.get("spans", ()):
            restored[detail["kind"]] += detail["method"] in ("aligned", "inserted")
        for span in find_spans(r.translation):
            if not any(span.text in t or t in span.text for t in texts):
                gained[span.kind] += 1
        flagged += RESTORED_SPAN in r.flags
    kinds = sorted(total, key=lambda k: -total[k])
    per_kind = {k: {"spans": total[k], "verbatim": verbatim[k], "verbatim_pct": 100 * verbatim[k] / total[k],
                    "restored": restored[k], "gained": gained[k]} for k in kinds}
    overall = {"spans": sum(total.values()), "verbatim": sum(verbatim.values()),
               "verbatim_pct": 100 * sum(verbatim.values()) / max(1, sum(total.values())),
               "restored": sum(restored.values()), "gained": sum(gained.values()), "flagged_sentences": flagged}
    return {"per_kind": per_kind, "overall": overall, "gained_by_kind": dict(gained)}


def dev_bleu(translator, options, lines: int) -> dict:
    """sacreBLEU with protection on and off on each dev set that exists."""
    import sacrebleu

    from worker.engine.evaluation import read_lines
    from worker.text.pipeline import TextOptions
    from worker.text.segment import RESTORED_SPAN

    out = {}
    for name, (src, ref) in DEV_SETS.items():
        if not src.exists():
            continue
        sources = [s.strip() for s in read_lines(src)[:lines]]
        references = read_lines(ref)[:lines]
        runs = {}
        for label, text in (("on", TextOptions()), ("off", TextOptions(protect_spans=False))):
            results = translator.translate_sentences(sources, options, text_options=text)
            runs[label] = [r.translation for r in results]
            if label == "on":
                flagged = sum(RESTORED_SPAN in r.flags for r in results)
                with_spans = sum(bool(r.details.get("spans")) for r in results)
        metric = sacrebleu.BLEU()
        bleu = {label: metric.corpus_score(h, [references]).score for label, h in runs.items()}
        out[name] = {"sentences": len(sources), "bleu_on": bleu["on"], "bleu_off": bleu["off"],
                     "delta": bleu["on"] - bleu["off"], "sentences_with_spans": with_spans,
                     "translations_changed": sum(a != b for a, b in zip(runs["on"], runs["off"])),
                     "flagged": flagged, "signature": str(metric.get_signature())}
    return out


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def print_table(title: str, counts: dict) -> None:
    print(f"\n{title}")
    print(f"  {'kind':12} {'spans':>6} {'verbatim':>9} {'restored':>9} {'gained':>7}")
    for kind, c in counts["per_kind"].items():
        print(f"  {kind:12} {c['spans']:6d} {c['verbatim_pct']:8.1f}% {c['restored']:9d} {c['gained']:7d}")
    o = counts["overall"]
    print(f"  {'overall':12} {o['spans']:6d} {o['verbatim_pct']:8.1f}% {o['restored']:9d} {o['gained']:7d}"
          f"   ({o['flagged_sentences']} sentences flagged restored_span)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", default=str(REPO_ROOT / "models" / "multi30k-en-de"))
    parser.add_argument("--probe", default=str(REPO_ROOT / "bench" / "data" / "span_probe.en"))
    parser.add_argument("--dev-lines", type=int, default=500)
    parser.add_argument("--beam", type=int, default=None, help="beam size (default: the bundle's)")
    parser.add_argument("--threads", type=int, default=1, help="ONNX Runtime intra-op threads")
    parser.add_argument("--no-bleu", action="store_true", help="skip the dev-set BLEU check")
    parser.add_argument("--json", action="store_true", help="print a JSON object as the last line")
    args = parser.parse_args(argv)

    from dataclasses import replace

    from worker.engine.settings import EngineSettings
    from worker.engine.translator import Translator
    from worker.text.pipeline import TextOptions

    translator = Translator(args.bundle, EngineSettings(provider="cpu", intra_op_threads=args.threads))
    options = translator.default_options if args.beam is None else replace(translator.default_options, beam=args.beam)
    probe = [line.strip() for line in Path(args.probe).read_text(encoding="utf-8").splitlines() if line.strip()]
    started = time.perf_counter()
    report: dict = {"bundle": translator.bundle.signature, "probe": str(Path(args.probe).name),
                    "sentences": len(probe), "beam": options.beam, "cpu": cpu_model()}
    for label, text in (("off", TextOptions(protect_spans=False)), ("on", TextOptions())):
        report[f"protection_{label}"] = span_counts(translator.translate_sentences(probe, options, text_options=text))
    print(f"{len(probe)} probe sentences, bundle {translator.bundle.manifest.get('name')}, beam {options.beam}, "
          f"CPU {report['cpu']}")
    print_table("protection off (the model alone)", report["protection_off"])
    print_table("protection on", report["protection_on"])
    if not args.no_bleu:
        report["dev_bleu"] = dev_bleu(translator, options, args.dev_lines)
        print("\ndev-set BLEU, protection on vs off (sacreBLEU, cased 13a)")
        for name, d in report["dev_bleu"].items():
            print(f"  {name:14} {d['sentences']} lines: on {d['bleu_on']:.2f}  off {d['bleu_off']:.2f}  "
                  f"delta {d['delta']:+.2f}  ({d['sentences_with_spans']} with spans, "
                  f"{d['translations_changed']} translations changed, {d['flagged']} flagged restored_span)")
    report["seconds"] = round(time.perf_counter() - started, 1)
    if args.json:
        print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
