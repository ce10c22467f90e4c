"""Inline markup placed as translators place it: ``formats.markup.transfer`` against the human
translators' own placement, on the tagged copy of the held-out documentation sets (``nmt
build-data``: ``docs/{test,dev}.tagged.{en,de}.gz``; LibreOffice Draw and Chart help and GNOME's
system administrator guide, never trained on; tags ``link``, ``em``, ``menu``, ``key``, ``code``,
see training/docs/markup.py).

A pair is kept where both sides are well nested, carry the same multiset of tag names and at least
one tag holds words on both sides; the k-th tag of a name in the English goes with the k-th of that
name in the German. The translator's placement of a tag is the set of reference words it overlaps
(by their letters and digits). Placement is measured on the reference itself, so that it does not
depend on translation quality (as ``bench/tag_placement.py`` does with synthetic tags):

- ours: every tag of the pair (links as ``<a>``, so that they are placed as links are) goes where
  ``transfer`` puts it in the untagged reference, given the model's forced-decoding alignment of
  the untagged source to it (``nmt align``) and the bundle's word table (``forced.word_table``, as
  ``segment_links`` hands it to the format writers), for each extraction method and span rule
  (``guided`` + ``hull`` is what the format writers use with a bundle that has an alignment head;
  also without the word table, as with a bundle that has no lexical shortlist);
- baseline: the tag keeps its relative position and length;
- ``--eflomal``: eflomal's links (trained on the documentation training pairs and the evaluated
  ones), each span rule;
- ``--alternatives``: changes to the placement, simulated on the links or the placed spans
  (``alternatives``: same-spelled words linked to each other, a tag's edge words that the bundle's
  lexical shortlist gives to a neighbour outside it dropped, a tag around the whole unit around the
  whole translation), each against the shipped placement by a paired bootstrap over the pairs.
  markup.py makes all three since they were measured here; the simulation, on top of the shipped
  placement without its word table, now checks it: ``+same+lexicon+whole`` should equal the
  shipped row.

``--synthetic LINKS.json`` scores the same placements on bench/tag_placement.py's synthetic set
instead (one ``<b>`` per pair, expected spans from eflomal's links: that bench's ``--cache`` file,
same ``--lines`` and ``--seed``), to see whether an alternative costs anything there.

Reported: F1 over the target words each tag covers (micro: summed over tags), precision, recall,
exact-span accuracy; per tag name, for tags that cover the whole English sentence and for those
that do not; the errors of one placement (the shipped one unless ``--errors-of``) by kind.

    python bench/tag_placement_human.py [--bundle models/en-de] [--set test] [--threads 1]
        [--eflomal [--cache LINKS.json]] [--alternatives] [--synthetic LINKS.json] [--out DIR] [--json]
"""
from __future__ import annotations

import argparse
import collections
import gzip
import html
import json
import os
import random
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))
sys.path.insert(0, str(REPO_ROOT / "bench"))

from bench.test_sets import BUILT  # noqa: E402
from span_fidelity import cpu_model  # noqa: E402
from worker.formats.model import Tag  # noqa: E402
from worker.text.segment import word_spans  # noqa: E402

_TOKEN = re.compile(r"<(/?)(\w+)>|([^<]+)")
_MARK = re.compile(r'<(/?)\w+ i="(\d+)">')  # how the bench writes tag k, so that its placement can be read back
_ALNUM = re.compile(r"\w")


@dataclass(frozen=True)
class Span:
    name: str
    start: int  # characters [start, end) of the untagged text
    end: int
    parent: int | None  # index of the tag it sits in


@dataclass(frozen=True)
class Case:
    """One kept pair: untagged source and reference, their tags, and the human placement."""

    line: int
    source: str
    reference: str
    tags: tuple[Span, ...]  # the English tags, in source order
    expected: tuple[frozenset[int], ...]  # per English tag: the reference words its German twin covers
    scored: tuple[int, ...]  # the tags that hold words on both sides


def parse_tagged(text: str) -> tuple[str, list[Span]] | None:
    """The untagged text and its tags (in opening order); None if the tags are not well nested."""
    plain, spans, stack = "", [], []
    for m in _TOKEN.finditer(text):
        closing, name, data = m.groups()
        if data is not None:
            plain += html.unescape(data)
        elif not closing:
            stack.append((name, len(plain), len(spans)))
            spans.append(None)
        elif not stack or stack[-1][0] != name:
            return None
        else:
            _, start, index = stack.pop()
            spans[index] = Span(name, start, len(plain), stack[-1][2] if stack else None)
    return (plain, spans) if not stack else None


def covered(text: str, start: int, end: int) -> frozenset[int]:
    """Indexes of the words of ``text`` whose letters and digits (all of a word without any) overlap
    characters [start, end)."""
    out = set()
    for k, (a, b) in enumerate(word_spans(text)):
        inner = [m.start() for m in _ALNUM.finditer(text, a, b)] or list(range(a, b))
        if any(start <= c < end for c in inner):
            out.add(k)
    return frozenset(out)


def read_cases(directory: Path, name: str) -> tuple[list[Case], collections.Counter]:
    """The kept pairs of set ``name`` and why the others were left out."""
    def lines(suffix: str) -> list[str]:
        with gzip.open(directory / f"{name}.{suffix}.gz", "rt", encoding="utf-8") as f:
            return f.read().split("\n")[:-1]

    english, german, plain_en, plain_de = lines("tagged.en"), lines("tagged.de"), lines("en"), lines("de")
    cases, dropped = [], collections.Counter()
    for line, (en, de) in enumerate(zip(english, german)):
        if "<" not in en and "<" not in de:
            continue
        src, tgt = parse_tagged(en), parse_tagged(de)
        if src is None or tgt is None:
            dropped["not well nested"] += 1
            continue
        if collections.Counter(s.name for s in src[1]) != collections.Counter(s.name for s in tgt[1]):
            dropped["different tags"] += 1
            continue
        assert (src[0], tgt[0]) == (plain_en[line], plain_de[line]), f"line {line}: tagged copy not parallel"
        twins = collections.defaultdict(list)
        for t in tgt[1]:
            twins[t.name].append(t)
        seen = collections.Counter()
        expected, scored = [], []
        for k, s in enumerate(src[1]):
            twin = twins[s.name][seen[s.name]]
            seen[s.name] += 1
            expected.append(covered(tgt[0], twin.start, twin.end))
            if covered(src[0], s.start, s.end) and expected[-1]:
                scored.append(k)
        if not scored:
            dropped["no tag with words on both sides"] += 1
            continue
        cases.append(Case(line, src[0], tgt[0], tuple(src[1]), tuple(expected), tuple(scored)))
    return cases, dropped


def tags_of(case: Case) -> list[Tag]:
    """The English tags as ``transfer`` takes them, each marked with its index; a link is an ``<a>``
    (placed as links are); a tag around no text is a point, as the format readers make it."""
    out = []
    for k, s in enumerate(case.tags):
        element = "a" if s.name == "link" else s.name
        open_, close = f'<{element} i="{k}">', f'</{element} i="{k}">'
        if s.start == s.end:
            out.append(Tag(open_ + close, "", s.start, s.end, parent=s.parent))
        else:
            out.append(Tag(open_, close, s.start, s.end, parent=s.parent))
    return out


def placed_words(pieces, translation: str) -> dict[int, frozenset[int]]:
    """Per tag index: the translation's words its placed span covers."""
    position, opened, spans = 0, {}, {}
    for piece in pieces:
        if not piece.markup:
            assert translation.startswith(piece.text, position), "transfer changed the translation"
            position += len(piece.text)
            continue
        for m in _MARK.finditer(piece.text):
            index = int(m.group(2))
            if m.group(1):
                spans[index] = covered(translation, opened.pop(index), position)
            else:
                opened[index] = position
    return spans


def synthetic_cases(links_file: Path, lines: int, seed: int) -> list[Case]:
    """bench/tag_placement.py's cases, rebuilt as that bench builds them (same pairs, same random
    runs of 1-3 source words, expected span the hull of eflomal's links from its ``--cache`` file)."""
    from alignment_aer import SETS, head

    pairs = [p for src, tgt in SETS.values() for p in zip(head(src, lines), head(tgt, lines))]
    pairs = [(s, t) for s, t in pairs if len(s.split()) >= 3 and t.split()]
    silver = json.loads(links_file.read_text())
    if len(silver) != len(pairs):
        raise ValueError(f"{links_file}: links of {len(silver)} pairs, the set has {len(pairs)} (--lines?)")
    rng, cases = random.Random(seed), []
    for k, ((source, reference), links) in enumerate(zip(pairs, silver)):
        n = len(source.split())
        first = rng.randrange(n)
        last = min(n - 1, first + rng.randrange(3))
        aligned = sorted(j for i, j in links if first <= i <= last)
        if aligned:
            words = word_spans(source)
            cases.append(Case(k, source, reference, (Span("b", words[first][0], words[last][1], None),),
                              (frozenset(range(aligned[0], aligned[-1] + 1)),), (0,)))
    return cases


def place(case: Case, links, rule: str, translates=None) -> dict[int, frozenset[int]]:
    """Per tag: the reference words ``transfer`` covers with it, given word links (source i, target j)
    and a word table ``translates(source word, target word)`` (None: none)."""
    from worker.formats.markup import transfer

    s, t = word_spans(case.source), word_spans(case.reference)
    char_links = [(s[i], t[j]) for i, j in sorted(links) if i < len(s) and j < len(t)]
    pieces, _ = transfer(case.source, tags_of(case), case.reference, char_links, rule, translates=translates)
    return placed_words(pieces, case.reference)


def baseline(case: Case, k: int) -> frozenset[int]:
    """The tag's relative position and length: source word i of n -> target word round(i * m / n)."""
    words = covered(case.source, case.tags[k].start, case.tags[k].end)
    n, m = len(word_spans(case.source)), len(word_spans(case.reference))
    first, last = min(words), max(words)
    start = min(m - 1, round(first * m / n))
    end = max(start, min(m - 1, round((last + 1) * m / n) - 1))
    return frozenset(range(start, end + 1))


# --- Alternatives: what markup.py could do, simulated here (designed on docs-dev, checked on docs-test) ---

def _core(word: str) -> str:
    """A word without the punctuation at its edges (all of it if it has no letter or digit), case-folded."""
    inner = [k for k, ch in enumerate(word) if ch.isalnum()]
    return (word[inner[0]:inner[-1] + 1] if inner else word).casefold()


def same_words(case: Case, links) -> set[tuple[int, int]]:
    """``links`` with each word spelled the same on both sides (its core, case-folded; once in each
    sentence; two characters or more, or not letters only: ``dconf``, ``R2``, ``/etc/...``, ``Dialog``)
    linked to its twin alone: the model's head, unsure of names and codes it never saw, often links
    them to a neighbour (``dconf`` -> ``Befehlszeilenwerkzeug``)."""
    source = [_core(case.source[a:b]) for a, b in word_spans(case.source)]
    target = [_core(case.reference[a:b]) for a, b in word_spans(case.reference)]
    count_s, count_t = collections.Counter(source), collections.Counter(target)
    twins = {i: target.index(w) for i, w in enumerate(source)
             if count_s[w] == 1 and count_t[w] == 1 and (len(w) >= 2 or not w.isalpha())}
    taken = set(twins.values())
    return {(i, j) for i, j in links if i not in twins and j not in taken} | set(twins.items())


class Lexicon:
    """Whether a target word can translate a source word, by the bundle's lexical shortlist (per
    source piece, the target pieces eflomal most often linked to it in the training data): a piece
    of the target word, other than the most frequent ones, is among the source word's candidates."""

    def __init__(self, translator) -> None:
        from worker.engine.shortlist import Shortlist

        path = translator.bundle.shortlist_path
        if path is None:
            raise ValueError(f"{translator.bundle.path} has no lexical shortlist (the 'lexicon' alternative needs one)")
        self.table = Shortlist.load(path)
        self.frequent = set(self.table.frequent.tolist())
        self.source_sp, self.target_sp = translator.source_sp, translator.target_sp

    def translates(self, source_word: str, target_word: str) -> bool:
        ids = [i for i in self.source_sp.encode(source_word) if i < self.table.source_size]
        candidates = {int(t) for i in ids for t in self.table.targets[self.table.offsets[i]:self.table.offsets[i + 1]]}
        return bool((candidates - self.frequent) & set(self.target_sp.encode(target_word)))


def lexical_trim(case: Case, links, lexicon: Lexicon, reach: int = 2) -> set[tuple[int, int]]:
    """``links`` without those of a tag's words to the first or last of its target words where the
    lexicon says that word translates none of the tag's words but one of the ``reach`` words on
    either side outside it (``the <em>Data Series</em> dialog`` -> ``den Dialog Datenreihe``: the head
    links ``Data`` to ``Dialog``); repeated while the tag keeps two target words or more."""
    links = set(links)
    source = [case.source[a:b] for a, b in word_spans(case.source)]
    target = [case.reference[a:b] for a, b in word_spans(case.reference)]
    for tag in case.tags:
        inside = covered(case.source, tag.start, tag.end)
        if not inside:
            continue
        outside = [i for i in range(min(inside) - reach, max(inside) + reach + 1)
                   if 0 <= i < len(source) and i not in inside]
        while len(mine := sorted({j for i, j in links if i in inside})) >= 2:
            foreign = [j for j in (mine[0], mine[-1])
                       if not any(lexicon.translates(source[i], target[j]) for i in inside)
                       and any(lexicon.translates(source[i], target[j]) for i in outside)]
            if not foreign:
                break
            links -= {(i, foreign[0]) for i in inside}
    return links


def whole_unit(case: Case, placed: dict[int, frozenset[int]]) -> dict[int, frozenset[int]]:
    """A tag around every word of the source goes around every word of the translation."""
    every = frozenset(range(len(word_spans(case.reference))))
    return {k: every if whole(case, k) else words for k, words in placed.items()}


def alternatives(method: str, lexicon: Lexicon | None) -> dict:
    """name -> function(case, links of ``method``) -> placed words per tag."""
    def lexical(case, links):
        return lexical_trim(case, links, lexicon) if lexicon is not None else set(links)

    def proposed(rule):
        return lambda c, links: whole_unit(c, place(c, lexical(c, same_words(c, links)), rule))

    return {
        f"{method}+hull+same": lambda c, links: place(c, same_words(c, links), "hull"),
        f"{method}+hull+lexicon": lambda c, links: place(c, lexical(c, links), "hull"),
        f"{method}+hull+whole": lambda c, links: whole_unit(c, place(c, links, "hull")),
        f"{method}+hull+same+lexicon+whole": proposed("hull"),
        f"{method}+cluster+same+lexicon+whole": proposed("cluster"),
    }


# --- Scores ---

def score(predicted: list[frozenset[int]], expected: list[frozenset[int]]) -> dict:
    """Micro F1 over the covered target words (summed over tags), precision, recall, exact-span share."""
    tp = sum(len(p & e) for p, e in zip(predicted, expected))
    precision = tp / max(1, sum(map(len, predicted)))
    recall = tp / max(1, sum(map(len, expected)))
    f1 = 2 * precision * recall / max(1e-9, precision + recall)
    exact = sum(p == e for p, e in zip(predicted, expected)) / max(1, len(expected))
    return {"f1": round(100 * f1, 1), "precision": round(100 * precision, 1), "recall": round(100 * recall, 1),
            "exact": round(100 * exact, 1), "tags": len(expected)}


def whole(case: Case, k: int) -> bool:
    """Whether tag k covers every word of the English sentence."""
    return len(covered(case.source, case.tags[k].start, case.tags[k].end)) == len(word_spans(case.source))


def groups_of(case: Case, k: int) -> list[str]:
    name = case.tags[k].name
    return ["all", f"name:{name}", "whole sentence" if whole(case, k) else "part of sentence",
            *(["without code"] if name != "code" else [])]


def report(cases: list[Case], found: list[dict[int, frozenset[int]]]) -> dict:
    """Scores of one placement over every scored tag, per group of ``groups_of``."""
    groups = collections.defaultdict(lambda: ([], []))
    for case, placed in zip(cases, found):
        for k in case.scored:
            for group in groups_of(case, k):
                groups[group][0].append(placed.get(k, frozenset()))
                groups[group][1].append(case.expected[k])
    return {group: score(*lists) for group, lists in sorted(groups.items())}


def bootstrap(cases: list[Case], ours: list[dict], theirs: list[dict], samples: int = 2000, seed: int = 0) -> dict:
    """Paired bootstrap over the pairs (Koehn 2004) of F1(ours) - F1(theirs), in points: the
    difference on the whole set, its 95% interval and the share of resamples where ours is better."""
    def table(found):  # float [pairs, 3]: true positive, predicted and expected words per pair
        return np.array([[sum(len(p.get(k, frozenset()) & c.expected[k]) for k in c.scored),
                          sum(len(p.get(k, frozenset())) for k in c.scored),
                          sum(len(c.expected[k]) for k in c.scored)] for c, p in zip(cases, found)], dtype=np.float64)

    def f1(t):  # [..., pairs, 3] -> [...]
        total = t.sum(axis=-2)
        precision, recall = total[..., 0] / np.maximum(total[..., 1], 1), total[..., 0] / np.maximum(total[..., 2], 1)
        return 100 * 2 * precision * recall / np.maximum(precision + recall, 1e-9)

    a, b = table(ours), table(theirs)
    rows = np.random.default_rng(seed).integers(0, len(cases), size=(samples, len(cases)))
    difference = f1(a[rows]) - f1(b[rows])
    low, high = np.percentile(difference, [2.5, 97.5])
    return {"difference": round(float(f1(a) - f1(b)), 2), "low": round(float(low), 2), "high": round(float(high), 2),
            "better_share": round(float((difference > 0).mean()), 3)}


def error_kind(predicted: frozenset[int], expected: frozenset[int]) -> str:
    if predicted == expected:
        return "exact"
    if not predicted & expected:
        return "missed"
    if predicted > expected:
        return "too wide"
    if predicted < expected:
        return "too narrow"
    return "shifted"


def errors(cases: list[Case], found: list[dict[int, frozenset[int]]]) -> tuple[dict, list[dict]]:
    """Error kinds per tag name and per the English tag's place (the whole sentence, nested in
    another tag, at the start, inside), and the tags placed wrongly: line, word indexes (no text:
    the documentation sets are built from packages, never committed)."""
    table, listing = collections.defaultdict(collections.Counter), []
    for case, placed in zip(cases, found):
        for k in case.scored:
            tag, want, got = case.tags[k], case.expected[k], placed.get(k, frozenset())
            kind = error_kind(got, want)
            where = "whole" if whole(case, k) else "nested" if tag.parent is not None else \
                "start" if 0 in covered(case.source, tag.start, tag.end) else "inside"
            table[tag.name][kind] += 1
            table[f"at:{where}"][kind] += 1
            if kind != "exact":
                listing.append({"line": case.line, "tag": tag.name, "error": kind, "where": where,
                                "source_words": sorted(covered(case.source, tag.start, tag.end)),
                                "human": sorted(want), "ours": sorted(got)})
    return {group: dict(counts) for group, counts in sorted(table.items())}, listing


def show(error: dict, case: Case) -> str:
    """One listed error with its words."""
    source, reference = word_spans(case.source), word_spans(case.reference)

    def marked(text, spans, words):
        return " ".join(f"[{text[a:b]}]" if j in words else text[a:b] for j, (a, b) in enumerate(spans))

    return (f"line {error['line']} {error['tag']} {error['error']} ({error['where']})\n  "
            f"{marked(case.source, source, error['source_words'])}\n  human: "
            f"{marked(case.reference, reference, error['human'])}\n  ours:  "
            f"{marked(case.reference, reference, error['ours'])}")


# --- The run ---

def eflomal_links(cases: list[Case], args) -> list[set[tuple[int, int]]]:
    """eflomal's links of the evaluated pairs, learnt with the documentation training pairs too (or
    read from ``--cache``)."""
    from alignment_aer import head
    from training.silver import silver_links

    if args.cache and args.cache.exists():
        print(f"eflomal: links read from {args.cache}")
        return [set(map(tuple, links)) for links in json.loads(args.cache.read_text())]
    train = list(zip(head(args.data / "train.en.gz", args.train_lines),
                     head(args.data / "train.de.gz", args.train_lines)))
    started = time.perf_counter()
    silver = silver_links([(c.source, c.reference) for c in cases], train)
    print(f"eflomal: {len(cases)} pairs + {len(train)} documentation training pairs, "
          f"{time.perf_counter() - started:.0f} s")
    if args.cache:
        args.cache.write_text(json.dumps([sorted(links) for links in silver]))
    return silver


def print_table(results: dict, against: dict, shipped: str, groups: list[str]) -> None:
    print(f"{'placement':36}" + "".join(f"{g.removeprefix('name:'):>18}" for g in groups)
          + ("   F1 vs shipped [95%]" if groups[0] == "all" else ""))
    print(f"{'(tags)':36}" + "".join(f"{results[shipped][g]['tags']:>18}" for g in groups))
    for name, rows in results.items():
        test = against.get(name)
        versus = "" if test is None or groups[0] != "all" else \
            f"   {test['difference']:+5.1f} [{test['low']:+.1f}, {test['high']:+.1f}]"
        print(f"{name + (' *' if name == shipped else ''):36}"
              + "".join(f"{rows[g]['f1']:>11.1f} /{rows[g]['exact']:>5.1f}" for g in groups) + versus)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", default=str(REPO_ROOT / "models" / "en-de"))
    parser.add_argument("--set", default="test", choices=("test", "dev"), help="docs-test (default) or docs-dev")
    parser.add_argument("--data", type=Path, default=BUILT / "docs",
                        help="the documentation corpus (default: %(default)s)")
    parser.add_argument("--threads", type=int, default=0, help="ONNX Runtime intra-op threads (0: its default)")
    parser.add_argument("--eflomal", action="store_true", help="also place by eflomal's links (needs eflomal)")
    parser.add_argument("--train-lines", type=int, default=100000, help="documentation training pairs for eflomal")
    parser.add_argument("--cache", type=Path, help="keep eflomal's links in this JSON file and reuse them")
    parser.add_argument("--alternatives", action="store_true", help="also the alternative placements (ALTERNATIVES)")
    parser.add_argument("--synthetic", type=Path, metavar="LINKS.json",
                        help="bench/tag_placement.py's synthetic set instead, its eflomal links from this --cache file")
    parser.add_argument("--lines", type=int, default=500, help="with --synthetic: bench/tag_placement.py's --lines")
    parser.add_argument("--seed", type=int, default=1, help="with --synthetic: bench/tag_placement.py's --seed")
    parser.add_argument("--errors-of", help="list the errors of this placement (default: the shipped one)")
    parser.add_argument("--show-errors", action="store_true", help="print the listed errors with their words")
    parser.add_argument("--out", type=Path, help="write the results and the listed errors as JSON in this directory")
    parser.add_argument("--json", action="store_true", help="print a JSON object as the last line")
    args = parser.parse_args(argv)
    if args.synthetic and args.eflomal:
        parser.error("--synthetic takes its expected spans from eflomal: --eflomal would score eflomal against itself")

    from worker.engine.forced import METHODS, align_pairs, default_method, word_table
    from worker.engine.settings import EngineSettings
    from worker.engine.translator import Translator

    command = f"python {' '.join(sys.argv)}"
    print(f"command: {command}")
    print(f"CPU: {cpu_model()}, {os.cpu_count()} cores")
    translator = Translator(args.bundle, EngineSettings(provider="cpu", intra_op_threads=args.threads))
    if args.synthetic:
        name, dropped = "synthetic", {}
        cases = synthetic_cases(args.synthetic, args.lines, args.seed)
    else:
        name = f"docs-{args.set}"
        cases, dropped = read_cases(args.data, args.set)
    n_tags = sum(len(c.scored) for c in cases)
    print(f"{name}: {len(cases)} pairs kept, {n_tags} tags scored; left out: {dict(dropped)}")

    # (1) the model's links of each pair, every extraction method, from one forced decoding
    methods = [m for m in METHODS if m != "guided" or translator.model.aligner is not None]
    started = time.perf_counter()
    forced = align_pairs(translator, [c.source for c in cases], [c.reference for c in cases], methods)
    align_seconds = time.perf_counter() - started
    # (2) placements: each method and span rule, with the bundle's word table as the format writers
    # get it (and the shipped one without); eflomal; the alternatives; the baseline
    table = word_table(translator)
    translates = table.translates if table is not None else None
    placements: dict[str, list[dict[int, frozenset[int]]]] = {
        f"{method}+{rule}": [place(c, f[method], rule, translates) for c, f in zip(cases, forced)]
        for method in methods for rule in ("hull", "cluster")}
    method = default_method(translator.model)
    shipped = f"{method}+hull"
    if table is not None:
        placements[f"{shipped} no word table"] = [place(c, f[method], "hull") for c, f in zip(cases, forced)]
    if args.eflomal:
        silver = eflomal_links(cases, args)
        for rule in ("hull", "cluster"):
            placements[f"eflomal+{rule}"] = [place(c, links, rule, translates) for c, links in zip(cases, silver)]
    if args.alternatives:
        lexicon = Lexicon(translator) if translator.bundle.shortlist_path is not None else None
        if lexicon is None:
            print("the bundle has no lexical shortlist: the +lexicon alternatives trim nothing")
        for alternative, placed in alternatives(method, lexicon).items():
            placements[alternative] = [placed(c, f[method]) for c, f in zip(cases, forced)]
    placements["baseline"] = [{k: baseline(c, k) for k in c.scored} for c in cases]

    # (3) scores, against the shipped placement
    results = {p: report(cases, found) for p, found in placements.items()}
    against = {p: bootstrap(cases, found, placements[shipped]) for p, found in placements.items() if p != shipped}
    print(f"\nF1 / exact %, {n_tags} tags on {len(cases)} reference translations "
          f"(forced alignment {align_seconds:.0f} s)")
    print_table(results, against, shipped, [g for g in ("all", "without code", "part of sentence", "whole sentence")
                                            if g in results[shipped]])
    print()
    print_table(results, against, shipped, sorted(g for g in results[shipped] if g.startswith("name:")))
    print("* what the format writers use with this bundle; F1 vs shipped: difference and 95% interval "
          "(paired bootstrap over the pairs)")
    listed = args.errors_of or shipped
    table, listing = errors(cases, placements[listed])
    kinds = ["exact", "missed", "too wide", "too narrow", "shifted"]
    print(f"\nerrors of {listed} (tags), by tag name and by the English tag's place:")
    print(f"{'':14}" + "".join(f"{k:>11}" for k in kinds))
    for group, counts in table.items():
        print(f"{group:14}" + "".join(f"{counts.get(k, 0):>11}" for k in kinds))
    if args.show_errors:
        by_line = {c.line: c for c in cases}
        print("\n".join(show(error, by_line[error["line"]]) for error in listing))

    report_json = {"bundle": translator.bundle.signature, "cpu": cpu_model(), "command": command, "set": name,
                   "pairs": len(cases), "tags": n_tags, "left_out": dict(dropped), "shipped": shipped,
                   "align_seconds": round(align_seconds, 1), "placement": results, "against_shipped": against,
                   "errors_of": listed, "errors": table}
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        stem = args.out / f"{name}.{translator.bundle.signature}"
        Path(f"{stem}.json").write_text(json.dumps(report_json, indent=1, ensure_ascii=False) + "\n")
        Path(f"{stem}.errors.{listed}.json").write_text(
            "[\n" + ",\n".join(json.dumps(error) for error in listing) + "\n]\n")  # one error a line
        print(f"written: {stem}.json, {stem}.errors.{listed}.json")
    if args.json:
        print(json.dumps(report_json, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
