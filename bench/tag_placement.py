"""Inline tag placement by word alignment (``worker/formats/markup.py``), against a naive baseline.

Each dev pair (newstest2013 and the held-out Tatoeba dev slice, with their reference
translations) gets one ``<b>`` around a random run of 1-3 source words. The expected target span
is the hull of the reference words that silver alignments (eflomal, both directions,
grow-diag-final-and; see ``bench/alignment_aer.py``) link to those source words. Placement is
measured on the reference translation itself, so that it is independent of translation quality:

- ours: the tag goes where ``formats.markup.transfer`` puts it, given the model's forced-decoding
  alignment of the source to the reference (``nmt align``), for each extraction method and span
  rule (``grow`` + ``hull`` is what the format writers use);
- baseline: the tag keeps its relative position and length (source word i of n -> target word
  round(i * m / n)).

Reported: exact-span F1 over tagged target words (micro: summed over all tags), exact-span
accuracy, and, from translating every tagged source as an HTML paragraph end to end with the
default decoding: the share of outputs that are well nested with every tag kept, and BLEU of the
outputs with their tags removed against BLEU of translating the plain sentences.

    python bench/tag_placement.py [--bundle models/en-de] [--lines 500] [--train-lines 100000] [--json]
"""
from __future__ import annotations

import argparse
import html
import json
import os
import random
import re
import sys
import time
from html.parser import HTMLParser
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))
sys.path.insert(0, str(REPO_ROOT / "bench"))

from alignment_aer import SETS, head, silver_links, training_corpora  # noqa: E402
from span_fidelity import cpu_model  # noqa: E402


def words(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]


def tagged_words(pieces) -> set[int]:
    """Target word indexes inside the <b>...</b> of transferred pieces."""
    inside, index, out, in_word = False, -1, set(), False
    for piece in pieces:
        if piece.markup:
            inside = {"<b>": True, "</b>": False}.get(piece.text, inside)
            continue
        for ch in piece.text:
            if ch.isspace():
                in_word = False
            elif not in_word:
                in_word, index = True, index + 1
                if inside:
                    out.add(index)
            elif inside:
                out.add(index)
    return out


def baseline(first: int, last: int, n: int, m: int) -> set[int]:
    start = min(m - 1, round(first * m / n))
    end = max(start, min(m - 1, round((last + 1) * m / n) - 1))
    return set(range(start, end + 1))


def score(predicted: list[set[int]], expected: list[set[int]]) -> dict:
    tp = sum(len(p & e) for p, e in zip(predicted, expected))
    precision = tp / max(1, sum(map(len, predicted)))
    recall = tp / max(1, sum(map(len, expected)))
    f1 = 2 * precision * recall / max(1e-9, precision + recall)
    exact = sum(p == e for p, e in zip(predicted, expected)) / max(1, len(expected))
    return {"f1": round(100 * f1, 1), "precision": round(100 * precision, 1), "recall": round(100 * recall, 1),
            "exact": round(100 * exact, 1), "tags": len(expected)}


class Checker(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.stack, self.count, self.ok = [], 0, True

    def handle_starttag(self, tag, attrs):
        self.stack.append(tag)
        self.count += 1

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.ok = False
        else:
            self.stack.pop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", default=str(REPO_ROOT / "models" / "en-de"))
    parser.add_argument("--lines", type=int, default=500, help="first N pairs of each dev set")
    parser.add_argument("--train-lines", type=int, default=100000, help="training pairs for eflomal's statistics")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cache", help="keep eflomal's links in this JSON file and reuse them")
    parser.add_argument("--placement-only", action="store_true", help="skip the end-to-end translation")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    import sacrebleu

    from worker.engine.forced import align_pairs, segment_links
    from worker.engine.settings import EngineSettings
    from worker.engine.translator import Translator
    from worker.formats import Tag, parse
    from worker.formats.markup import transfer
    from worker.text.layout import split_document

    print(f"command: python {' '.join(sys.argv)}")
    print(f"CPU: {cpu_model()}, {os.cpu_count()} cores")
    translator = Translator(args.bundle, EngineSettings(provider="cpu"))
    pairs = [p for src, tgt in SETS.values() for p in zip(head(src, args.lines), head(tgt, args.lines))]
    pairs = [(s, t) for s, t in pairs if len(s.split()) >= 3 and t.split()]
    started = time.perf_counter()
    train = [p for src, tgt in training_corpora() for p in zip(head(src, args.train_lines), head(tgt, args.train_lines))]
    if args.cache and Path(args.cache).exists():
        silver = [set(map(tuple, links)) for links in json.loads(Path(args.cache).read_text())]
    else:
        silver = silver_links(pairs, train)
        if args.cache:
            Path(args.cache).write_text(json.dumps([sorted(links) for links in silver]))
    print(f"eflomal: {len(pairs)} pairs + {len(train)} training pairs, {time.perf_counter() - started:.0f} s")

    rng = random.Random(args.seed)
    cases = []  # (pair index, first source word, last source word, expected target words)
    for k, ((source, reference), links) in enumerate(zip(pairs, silver)):
        n = len(source.split())
        first = rng.randrange(n)
        last = min(n - 1, first + rng.randrange(3))
        aligned = sorted(j for i, j in links if first <= i <= last)
        if aligned:
            cases.append((k, first, last, set(range(aligned[0], aligned[-1] + 1))))
    from worker.engine.forced import METHODS

    methods = [m for m in METHODS if m != "guided" or translator.model.aligner is not None]
    forced = align_pairs(translator, [pairs[k][0] for k, *_ in cases], [pairs[k][1] for k, *_ in cases], methods)
    placed = {f"{method}+{rule}": [] for method in methods for rule in ("cluster", "hull")}
    naive, expected = [], []
    for (k, first, last, want), found in zip(cases, forced):
        source, reference = pairs[k]
        s, t = words(source), words(reference)
        tag = Tag("<b>", "</b>", s[first][0], s[last][1])
        for name in placed:
            method, rule = name.split("+")
            links = [(s[i], t[j]) for i, j in found[method]]
            placed[name].append(tagged_words(transfer(source, [tag], reference, links, rule)[0]))
        naive.append(baseline(first, last, len(s), len(t)))
        expected.append(want)
    # The search's own links are attention argmax per target piece; format writers place markup by
    # worker.forced.segment_links (forced decoding of the translation, "guided" where the bundle has an
    # alignment head, else "grow"): "guided+hull" (or "grow+hull") is what users get.
    placement = {name: score(found, expected) for name, found in placed.items()} | {"baseline": score(naive, expected)}

    print(f"\n{'':16} {'F1':>6} {'prec':>6} {'recall':>6} {'exact':>6}  ({len(cases)} tags on reference translations)")
    for name, row in placement.items():
        print(f"{name:16} {row['f1']:6.1f} {row['precision']:6.1f} {row['recall']:6.1f} {row['exact']:6.1f}")
    report = {"bundle": translator.bundle.signature, "cpu": cpu_model(), "pairs": len(pairs), "tags": len(cases),
              "placement": placement}
    if args.placement_only:
        if args.json:
            print(json.dumps(report))
        return 0
    # End to end: every tagged source as an HTML paragraph, translated with the default decoding.
    documents, plain = [], []
    for k, first, last, _ in cases:
        source = pairs[k][0]
        s = words(source)
        documents.append(f"<p>{html.escape(source[:s[first][0]], quote=False)}<b>"
                         f"{html.escape(source[s[first][0]:s[last][1]], quote=False)}</b>"
                         f"{html.escape(source[s[last][1]:], quote=False)}</p>")
        plain.append(source)
    started = time.perf_counter()
    parsed = [parse("html", d) for d in documents]
    results = translator.translate_layouts([split_document(p.units[0].text, "en") for p in parsed])
    outputs = [p.render([r.translation], [segment_links(translator, r.segments)]) for p, r in zip(parsed, results)]
    plain_results = translator.translate_layouts([split_document(p, "en") for p in plain])
    seconds = time.perf_counter() - started
    nested = kept = 0
    for out in outputs:
        checker = Checker()
        checker.feed(out)
        nested += checker.ok and not checker.stack
        kept += checker.count == 2  # <p> and <b>
    references = [pairs[k][1] for k, *_ in cases]
    stripped = [html.unescape(re.sub(r"<[^>]+>", "", o)) for o in outputs]
    bleu_tags = sacrebleu.corpus_bleu(stripped, [references]).score
    bleu_plain = sacrebleu.corpus_bleu([r.translation for r in plain_results], [references]).score
    report |= {
        "well_nested_percent": round(100 * nested / len(outputs), 2), "tags_kept_percent": round(100 * kept / len(outputs), 2),
        "bleu_tags_removed": round(bleu_tags, 2), "bleu_plain": round(bleu_plain, 2),
        "bleu_delta": round(bleu_tags - bleu_plain, 2), "translate_seconds": round(seconds, 1),
    }
    print(f"\nend to end ({len(outputs)} tagged paragraphs): well nested {report['well_nested_percent']}%, "
          f"tags kept {report['tags_kept_percent']}%; BLEU tags removed {bleu_tags:.2f} vs plain {bleu_plain:.2f}")
    if args.json:
        print(json.dumps(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
