"""Stand-in words for span masking, per bundle: how often the model copies each candidate word
unchanged when it stands in for the first span of every probe sentence.

A span is masked by a plain word the model copies (worker/text/masking.py); which words a model
copies depends on its training data. The best 12 candidates, best first, can be stored in the
bundle's manifest (``stand_ins``) with --write; the engine then masks with them.

    python bench/stand_ins.py [--bundle models/en-de] [--probe bench/data/span_probe.en] [--write] [--json]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

# Words spelt alike in English and German: names, places, brands and loanwords.
CANDIDATES = (
    "Baby", "Frisbee", "Nike", "Texas", "Pizza", "Rodeo", "Starbucks", "Football", "Parade", "Baseball", "Cowboy",
    "Hockey", "Tom", "Maria", "Paris", "Berlin", "London", "Google", "Obama", "Microsoft", "Facebook", "Twitter",
    "Amazon", "Apple", "Sony", "Toyota", "Boston", "Chicago", "Peter", "Anna", "John", "Hamburg", "Madrid", "Sarah",
)
KEEP = 12


def copy_rates(translator, probe: list[str], candidates) -> dict[str, tuple[int, float]]:
    """For each single-piece candidate: (sentences, share whose translation holds it as a word)."""
    from worker.text.masking import STAND_INS, mask
    from worker.text.spans import find_spans

    rates = {}
    for word in candidates:
        if len(translator.source_sp.encode(word, out_type=str)) != 1:
            continue  # split into pieces, the model copies it less reliably
        texts = []
        for sentence in probe:
            spans = find_spans(sentence)
            masked = mask(sentence, spans, [word] + [s for s in STAND_INS if s != word]) if spans else None
            if masked is not None and masked.slots and masked.slots[0].stand_in == word:
                texts.append(masked.text)
        decoded = translator._decode(texts, translator.default_options, False, None)
        copied = sum(any(w.strip(".,;:!?\"'()«»„“") == word for w in r.translation.split()) for r in decoded)
        rates[word] = (len(texts), copied / max(1, len(texts)))
    return rates


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", default=str(REPO_ROOT / "models" / "en-de"))
    parser.add_argument("--probe", default=str(REPO_ROOT / "bench" / "data" / "span_probe.en"))
    parser.add_argument("--write", action="store_true", help=f"store the best {KEEP} in the bundle's manifest")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    from span_fidelity import cpu_model

    from worker.engine.bundle import update_manifest
    from worker.engine.settings import EngineSettings, local_cpu_settings
    from worker.engine.translator import Translator

    translator = Translator(args.bundle, local_cpu_settings(EngineSettings(provider="cpu")))
    probe = [line.strip() for line in Path(args.probe).read_text(encoding="utf-8").splitlines() if line.strip()]
    started = time.perf_counter()
    rates = copy_rates(translator, probe, CANDIDATES)
    ranked = sorted(rates, key=lambda w: -rates[w][1])
    print(f"bundle {translator.bundle.signature}; CPU {cpu_model()}; {time.perf_counter() - started:.0f} s")
    print(", ".join(f"{w} {100 * rates[w][1]:.0f}%" for w in ranked))
    best = ranked[:KEEP]
    if args.write:
        path = update_manifest(args.bundle, stand_ins=best)
        print(f"wrote stand_ins {best} to {path}")
    if args.json:
        print(json.dumps({"bundle": translator.bundle.signature, "rates": {w: rates[w][1] for w in ranked}, "best": best}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
