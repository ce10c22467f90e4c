"""Names, numbers and code through translation: the share of must-keep tokens that come out verbatim.

Each line of the probe (``bench/data/names_probe.jsonl``) is an English sentence and the tokens a
German translation must carry unchanged: people, companies, places, products, phone numbers with
spaces, IBANs and other grouped numbers, file names, inline commands, versions, printf directives
and whole segments that are not prose (identifier lists, command lines, code). A place with a German
form (Munich) lists it (``accept``: München): either spelling counts. A token listed k times must
appear k times. Sentences go through ``Translator.translate_sentences`` with the default text
options, the path ``nmt translate`` takes. Also counted: placeholders (printf directives and the
like) in a translation that its source does not hold, or holds fewer times (goal: none).

    python bench/names_probe.py [--bundle models/en-de] [--threads 1] [--show] [--json]
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))
sys.path.insert(0, str(REPO_ROOT / "bench"))

PROBE = REPO_ROOT / "bench" / "data" / "names_probe.jsonl"
_DIRECTIVE = re.compile(r"%(?:\d+\$)?[-+#0']*(?:\d+|\*)?(?:\.(?:\d+|\*))?(?:hh|h|ll|l|L|z|j|t|q)?[diouxXeEfFgGaAcspnm]"
                        r"|%\(\w+\)[-+#0]*\d*(?:\.\d+)?[diouxXeEfFgGcrs]|%%|%\d\b|%\{\w+\}|\$\{\w+\}|\{[\w.]*(?:![rsa])?(?::[^{}\s]*)?\}")


def load_probe(path: Path = PROBE) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def occurrences(token: str, text: str) -> int:
    """How often ``token`` stands in ``text`` as itself: not inside a longer word (a German
    genitive s after a name is allowed: "Lisas")."""
    left = r"(?<![\w])" if token[:1].isalnum() else ""
    right = r"(?:s)?(?![\w])" if token[-1:].isalnum() else ""
    return len(re.findall(left + re.escape(token) + right, text))


def score(probe: list[dict], translations: list[str]) -> dict:
    """Kept tokens per kind and overall, and invented placeholders."""
    kept: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    misses, invented = [], []
    for row, out in zip(probe, translations):
        seen: Counter = Counter()
        for item in row["keep"]:
            seen[item["text"]] += 1
            forms = [item["text"]] + item.get("accept", [])
            ok = max(occurrences(f, out) for f in forms) >= seen[item["text"]]
            kept[item["kind"]][0] += ok
            kept[item["kind"]][1] += 1
            if not ok:
                misses.append({"kind": item["kind"], "token": item["text"], "en": row["en"], "de": out})
        source = Counter(m.group() for m in _DIRECTIVE.finditer(row["en"]))
        extra = Counter(m.group() for m in _DIRECTIVE.finditer(out)) - source
        if extra:
            invented.append({"en": row["en"], "de": out, "extra": sorted(extra.elements())})
    total = [sum(k for k, _ in kept.values()), sum(n for _, n in kept.values())]
    per_kind = {kind: {"kept": k, "tokens": n, "pct": round(100 * k / n, 1)} for kind, (k, n) in sorted(kept.items())}
    return {"overall": {"kept": total[0], "tokens": total[1], "pct": round(100 * total[0] / max(1, total[1]), 1)},
            "per_kind": per_kind, "invented_placeholders": len(invented), "misses": misses, "invented": invented}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", default=str(REPO_ROOT / "models" / "en-de"))
    parser.add_argument("--probe", default=str(PROBE))
    parser.add_argument("--threads", type=int, default=1, help="ONNX Runtime intra-op threads")
    parser.add_argument("--show", action="store_true", help="print every missed token and invented placeholder")
    parser.add_argument("--json", action="store_true", help="print a JSON object as the last line")
    args = parser.parse_args(argv)

    from span_fidelity import cpu_model

    from worker.engine.settings import EngineSettings
    from worker.engine.translator import Translator
    from worker.text.pipeline import TextOptions

    probe = load_probe(Path(args.probe))
    translator = Translator(args.bundle, EngineSettings(provider="cpu", intra_op_threads=args.threads))
    started = time.perf_counter()
    results = translator.translate_sentences([row["en"] for row in probe], text_options=TextOptions())
    seconds = time.perf_counter() - started
    report = score(probe, [r.translation for r in results])
    flagged = Counter(f for r in results for f in r.flags)
    print(f"{len(probe)} probe sentences, {report['overall']['tokens']} must-keep tokens; bundle "
          f"{translator.bundle.signature}, beam {translator.default_options.beam}; CPU {cpu_model()}; {seconds:.1f} s")
    print(f"  {'kind':12} {'tokens':>6} {'kept':>6} {'%':>6}")
    for kind, c in report["per_kind"].items():
        print(f"  {kind:12} {c['tokens']:6d} {c['kept']:6d} {c['pct']:6.1f}")
    o = report["overall"]
    print(f"  {'overall':12} {o['tokens']:6d} {o['kept']:6d} {o['pct']:6.1f}")
    print(f"  translations with an invented or extra placeholder: {report['invented_placeholders']}")
    print(f"  flags: {dict(sorted(flagged.items()))}")
    if args.show:
        for miss in report["misses"]:
            print(f"  MISS {miss['kind']:11} {miss['token']!r}: {miss['en']} -> {miss['de']}")
        for inv in report["invented"]:
            print(f"  EXTRA {inv['extra']}: {inv['en']} -> {inv['de']}")
    if args.json:
        print(json.dumps({"bundle": translator.bundle.signature, "cpu": cpu_model(), "sentences": len(probe),
                          "seconds": round(seconds, 1), "flags": dict(flagged),
                          **{k: v for k, v in report.items() if k not in ("misses", "invented")}}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
