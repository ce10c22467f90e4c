"""How often restoring one segment returns to a module it already left.

Each probe sentence is translated on its own; from the first ``Translator._finished`` of its
decoded sentence until ``Translator._translate`` returns (restoring case, spans, names and
glossary terms, for the best hypothesis and its n-best list; the quality assessment; the choice
among the beam's hypotheses; a retry), a profile hook follows which module the restoring's driver
hands the segment to. The driver is the corridor: the engine (``worker.engine``) and
``worker.text.pipeline``, which holds ``restore`` (with ``worker.text.segment``, the leaf of data
types). A room is any other module of ``worker.text`` called from the corridor; what a room calls
in turn (``reinsert`` reads slots with ``masking``'s helpers) is its own tool, as a library would be.
A stay is a run of calls into one room (consecutive calls to the same room are one stay); a
return is a stay in a room already left.

    python bench/restore_rooms.py [--bundle models/en-de] [--probe bench/data/span_probe.en]
                                  [--lines 120] [--n-best 1] [--threads 1] [--json]

The probe: the first ``--lines`` sentences of the span probe, and sentences with what it lacks
(ALL CAPS, Title Case, names, glossary terms, spaced ASCII dashes, numbers), translated with a
three-term glossary and an n-best list of ``--n-best``. Prints, over the probe sentences: stays
and returns per segment (mean, max), how many segments return at all, entries per room (mean), the
commonest room sequence, and the room sequence of the segment with the most returns.
"""
from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
from collections import Counter
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

CORRIDOR = ("worker.text.pipeline", "worker.text.segment")
EXTRA = [  # what the span probe lacks: case, names, glossary terms, dashes, numbers, dropped text
    "PRESS THE START BUTTON TO OPEN THE MENU.",
    "Using The Wizard For Macros In LibreOffice Calc",
    "By Raphaël Hertzog and Roland Mas",
    "Choose Tools - Options - LibreOffice Writer - Print, then press Ctrl+P.",
    "Run grep --no-messages -r pattern . -- and read the output.",
    "The printer prints 12 pages per minute and 1,500 pages a day.",
    "Open the Navigator with F5 and drag the heading to the new place.",
    "GNOME Files shows 3 items; right-click one to rename it.",
    "Set the %(value)s million limit in the file /etc/default/grub.",
    "Mark Shuttleworth founded Canonical in 2004 in London.",
]


def rooms_of(translator, sentence: str, options, text_options) -> list[str]:
    """The rooms whose code ran, in order (consecutive repeats kept), while ``sentence`` was restored."""
    from worker.engine import translator as translator_module

    finished = translator_module.Translator._finished.__code__
    translate = translator_module.Translator._translate.__code__
    stack: list[str | None] = []
    seen: list[str] = []
    state = {"on": False}

    def room(frame, caller: str | None) -> str | None:
        """The room of a frame called from ``caller``'s (None: the corridor)."""
        if caller is not None:
            return caller  # what a room calls is its own tool
        name = frame.f_globals.get("__name__", "")
        if frame.f_code.co_name.startswith("__") or name in CORRIDOR or not name.startswith("worker.text."):
            return None
        return name.removeprefix("worker.text.")

    def hook(frame, event, arg):
        if event not in ("call", "return"):
            return
        if not state["on"]:
            if event == "call" and frame.f_code is finished:
                state["on"] = True
            else:
                return
        if event == "call":
            stack.append(room(frame, stack[-1] if stack else None))
        else:
            if frame.f_code is translate:
                state["on"] = False
                return
            if stack:
                stack.pop()
        if stack and stack[-1] is not None:
            seen.append(stack[-1])

    sys.setprofile(hook)
    try:
        translator.translate_sentences([sentence], options, text_options=text_options)
    finally:
        sys.setprofile(None)
    return seen


def stays(seen: list[str]) -> list[str]:
    out: list[str] = []
    for r in seen:
        if not out or out[-1] != r:
            out.append(r)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", default=str(REPO_ROOT / "models" / "en-de"))
    parser.add_argument("--probe", default=str(REPO_ROOT / "bench" / "data" / "span_probe.en"))
    parser.add_argument("--lines", type=int, default=120)
    parser.add_argument("--n-best", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    from worker.engine import EngineSettings, Translator
    from worker.text.glossary import Glossary
    from worker.text.pipeline import TextOptions

    translator = Translator(args.bundle, EngineSettings(provider="cpu", intra_op_threads=args.threads))
    sentences = [s.strip() for s in Path(args.probe).read_text(encoding="utf-8").splitlines() if s.strip()]
    sentences = sentences[: args.lines] + EXTRA
    glossary = TextOptions(glossary=Glossary((("printer", "Drucker"), ("menu", "Menü"), ("heading", "Überschrift"))))
    options = translator.search_options(n_best=args.n_best)
    per, entries, worst, trails = [], Counter(), (-1, "", []), Counter()
    for sentence in sentences:
        trail = stays(rooms_of(translator, sentence, options, glossary))
        trails[" > ".join(trail)] += 1
        returns = sum(1 for i, r in enumerate(trail) if r in trail[:i])
        per.append((len(trail), returns))
        entries.update(trail)
        if returns > worst[0]:
            worst = (returns, sentence, trail)
    n = len(per)
    report = {
        "cpu": platform.processor() or platform.machine(), "segments": n, "n_best": args.n_best,
        "stays_mean": round(statistics.mean(s for s, _ in per), 1), "stays_max": max(s for s, _ in per),
        "returns_mean": round(statistics.mean(r for _, r in per), 1), "returns_max": max(r for _, r in per),
        "segments_with_returns": sum(1 for _, r in per if r),
        "entries_per_segment": {k: round(v / n, 2) for k, v in entries.most_common()},
        "commonest": {"rooms": trails.most_common(1)[0][0], "segments": trails.most_common(1)[0][1]},
        "worst": {"sentence": worst[1], "returns": worst[0], "rooms": worst[2]},
    }
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=1))
        return
    print(f"{n} segments: stays {report['stays_mean']} (max {report['stays_max']}), returns "
          f"{report['returns_mean']} (max {report['returns_max']}); {report['segments_with_returns']} with a return")
    print("entries per segment:", ", ".join(f"{k} {v}" for k, v in report["entries_per_segment"].items()))
    print(f"commonest ({report['commonest']['segments']} segments): {report['commonest']['rooms']}")
    print(f"most returns ({worst[0]}): {worst[1]!r}")
    print("  " + " > ".join(worst[2]))


if __name__ == "__main__":
    main()
