"""Inline markup carried across a translation by its word alignment.

A unit's inline tags (``Tag``: a link, a bold run, a ``<br>``) are taken out before translation,
as character spans of the unit's plain text. After translation each paired tag goes around the
target words aligned to the source words it covered (their hull), and a point tag goes before the
target word aligned to the source word that followed it. The result is always well nested:

- tags are placed outer first, in source order, and a tag nested in another in the source is
  kept inside that tag's target span;
- a span that would cross one already placed is cut back to the larger of its parts inside or
  outside that span (paired tags never cross);
- a tag whose source words have no aligned target word, or whose span is cut to nothing, goes to
  the same relative position in the translation (around the word there), and the unit gets a
  note saying so.

Offsets are characters. Links come from the engine's alignment: (source word span, target word
span) pairs, spans as [start, end) in the unit's text and in its translation.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Sequence

from worker.text.segment import word_spans

from .model import Tag

CharRange = tuple[int, int]
Link = tuple[CharRange, CharRange]


@dataclass(frozen=True)
class Piece:
    text: str
    markup: bool  # True: verbatim markup; False: translated text, to be escaped by the writer


def transfer(source: str, tags: Sequence[Tag], translation: str, links: Sequence[Link],
             rule: str = "hull") -> tuple[list[Piece], list[str]]:
    """The translation with ``tags`` placed in it, as pieces of text and markup, and notes about
    tags placed without alignment. Tags are given on ``source`` character offsets. ``rule``: a
    paired tag spans all its aligned target words ("hull"), or only their largest run ("cluster":
    runs may skip one word), which bench/tag_placement.py measured as no better with the "grow"
    links the format writers use."""
    words = word_spans(translation)
    notes: list[str] = []
    if not words:  # nothing to hang tags on: all of them before the (empty) text, in source order
        return [Piece(t.open, True) for t in tags] + [Piece(t.close, True) for t in reversed(tags) if t.close] + \
            [Piece(translation, False)], (["markup kept without a translation to place it in"] if tags else [])
    starts = [w[0] for w in words]
    aligned: dict[int, set[int]] = {}  # source character start of a word -> target word indexes
    for (s0, _), (t0, _) in links:
        target = bisect.bisect_right(starts, t0) - 1
        if target >= 0:
            aligned.setdefault(s0, set()).add(target)
    source_words = sorted({(s0, s1) for (s0, s1), _ in links})
    placed: list[tuple[int, int, int]] = []  # (first word, last word, tag index) of paired tags
    points: list[tuple[int, int]] = []  # (gap, tag index): gap g lies before target word g; len(words): the end
    order = sorted(range(len(tags)), key=lambda i: (tags[i].start, -(tags[i].end - tags[i].start), i))
    for index in order:
        tag = tags[index]
        if not tag.close:  # a point tag: where it stood, by the words next to it
            points.append((_gap(tag, source, source_words, aligned, len(words)), index))
            continue
        targets = [t for (s0, s1) in source_words if s0 < tag.end and s1 > tag.start for t in aligned.get(s0, ())]
        span = (_cluster(targets) if rule == "cluster" else (min(targets), max(targets))) if targets else None
        containers = [(first, last) for first, last, other in placed
                      if tags[other].start <= tag.start and tag.end <= tags[other].end]
        parent = containers[-1] if containers else None  # the innermost: placed last
        if span is not None and parent is not None:
            span = _inside(span, parent)
        links_placed = [(first, last) for first, last, other in placed if tags[other].exclusive] if tag.exclusive else []
        span = _apart(_laminar(span, [(first, last) for first, last, _ in placed]), links_placed, placed)
        if span is None:
            span = _relative(tag.start, len(source), len(words), parent)
            span = _free(span[0], links_placed, len(words)) if links_placed else span
            notes.append(f"tag {tag.open.strip()[:40]} placed by position: no aligned words")
        placed.append((span[0], span[1], index))
    return _pieces(translation, words, tags, placed, points, _punctuation_outside(source, tags)), notes


def _punctuation_outside(source: str, tags: Sequence[Tag]) -> dict[int, tuple[bool, bool]]:
    """Per paired tag: whether punctuation glued to the first and to the last of its target words
    stays outside it (``**Haus**.``, ``„<a>Haus</a>``): yes, unless the tag's source text itself
    starts (ends) with punctuation."""
    out = {}
    for index, tag in enumerate(tags):
        inside = source[tag.start:tag.end].strip()
        if tag.close and inside:
            out[index] = (inside[0].isalnum(), inside[-1].isalnum())
    return out


def _trimmed(translation: str, span: CharRange, lead: bool, trail: bool) -> CharRange:
    """A word's [start, end) without its leading and/or trailing punctuation (never to nothing)."""
    start, end = span
    while trail and end - start > 1 and not translation[end - 1].isalnum():
        end -= 1
    while lead and end - start > 1 and not translation[start].isalnum():
        start += 1
    return start, end


def _gap(tag: Tag, source: str, source_words: list[CharRange], aligned: dict[int, set[int]], count: int) -> int:
    """The target gap for a point tag: the start or the end if it stood there in the source; else
    after the target of the word it is glued to, or before the target of the next aligned word."""
    if not source[:tag.start].strip():
        return 0
    if not source[tag.start:].strip():
        return count
    glued = [t for (s0, s1) in source_words if s1 == tag.start for t in aligned.get(s0, ())]
    if glued and not tag.space[0]:
        return max(glued) + 1
    for s0, _ in source_words:
        if s0 >= tag.start and aligned.get(s0):
            return min(aligned[s0])
    return count


def _cluster(targets: list[int]) -> CharRange:
    """The run of aligned target words (gaps of at most one word) holding the most links; the
    first such run on ties."""
    runs: list[list[int]] = []
    for word in sorted(targets):
        if runs and word - runs[-1][-1] <= 2:
            runs[-1].append(word)
        else:
            runs.append([word])
    best = max(runs, key=len)
    return best[0], best[-1]


def _laminar(span: CharRange | None, placed: list[CharRange]) -> CharRange | None:
    """``span`` cut until it crosses none of ``placed`` (cutting only shrinks it, so repeat)."""
    while span is not None:
        cut = span
        for other in placed:
            cut = _uncrossed(cut, other) if cut is not None else None
        if cut == span:
            return span
        span = cut
    return None


def _apart(span: CharRange | None, links: list[CharRange], placed) -> CharRange | None:
    """``span`` (already crossing nothing placed) cut until it neither holds nor lies in any of
    ``links`` (a link in a link is no markup), to the larger part beside each; cutting can make it
    cross other placed tags, so both cuts repeat until nothing changes."""
    while span is not None and links:
        cut = span
        for a0, a1 in links:
            if cut is not None and not (cut[1] < a0 or a1 < cut[0]):
                parts = [part for part in ((cut[0], a0 - 1), (a1 + 1, cut[1])) if part[0] <= part[1]]
                cut = max(parts, key=lambda s: s[1] - s[0]) if parts else None
        cut = _laminar(cut, [(first, last) for first, last, _ in placed])
        if cut == span:
            return span
        span = cut
    return span


def _free(word: int, links: list[CharRange], count: int) -> CharRange:
    """The word nearest ``word`` that no link covers (``word`` itself if every word is covered)."""
    free = [w for w in range(count) if not any(a0 <= w <= a1 for a0, a1 in links)]
    best = min(free, key=lambda w: abs(w - word)) if free else word
    return (best, best)


def _inside(span: CharRange, parent: CharRange) -> CharRange | None:
    first, last = max(span[0], parent[0]), min(span[1], parent[1])
    return (first, last) if first <= last else None


def _uncrossed(span: CharRange, other: CharRange) -> CharRange | None:
    """``span`` unchanged if it and ``other`` are disjoint or nested, else the larger of its part
    inside ``other`` and its part outside."""
    (a0, a1), (b0, b1) = span, other
    if a1 < b0 or b1 < a0 or (b0 <= a0 and a1 <= b1) or (a0 <= b0 and b1 <= a1):
        return span
    if a0 < b0:  # starts before, ends inside
        outside, inside = (a0, b0 - 1), (b0, a1)
    else:  # starts inside, ends after
        inside, outside = (a0, b1), (b1 + 1, a1)
    return max((outside, inside), key=lambda s: s[1] - s[0])


def _relative(position: int, length: int, words: int, parent: CharRange | None) -> CharRange:
    lo, hi = parent if parent is not None else (0, words - 1)
    word = lo + round((hi - lo) * position / max(length, 1))
    return (word, word)


def _pieces(translation: str, words: list[CharRange], tags: Sequence[Tag], placed, points,
            outside: dict[int, tuple[bool, bool]]) -> list[Piece]:
    """Insert the markup at word boundaries: at one position, closing tags first (inner first),
    then opening tags (outer first). Point tags replace the whitespace of the gap they sit in,
    with whitespace before and after them as they had in the source."""
    inserts: dict[int, list[tuple[tuple, str]]] = {}
    for first, last, index in placed:
        size = last - first
        lead, trail = outside.get(index, (False, False))
        start = _trimmed(translation, words[first], lead, False)[0]
        end = _trimmed(translation, words[last], False, trail)[1]
        inserts.setdefault(start, []).append(((2, -size, index), tags[index].open))
        inserts.setdefault(end, []).append(((0, size, -index), tags[index].close))
    gaps: dict[int, list[int]] = {}
    for gap, index in points:
        gaps.setdefault(gap, []).append(index)
    replaced: dict[int, tuple[int, str]] = {}  # gap start -> (gap end, markup with its whitespace)
    for gap, indexes in gaps.items():
        start = words[gap - 1][1] if gap > 0 else 0
        end = words[gap][0] if gap < len(words) else len(translation)
        first, last = tags[indexes[0]], tags[indexes[-1]]
        inner = "".join(tags[i].open for i in sorted(indexes))
        before = " " if first.space[0] and gap > 0 else ""
        after = " " if last.space[1] and gap < len(words) else ""
        replaced[start] = (end, before + inner + after)
    pieces, cursor = [], 0
    for position in sorted(set(inserts) | set(replaced)):
        if position > cursor:
            pieces.append(Piece(translation[cursor:position], False))
            cursor = position
        marks = sorted(inserts.get(position, ()))
        pieces += [Piece(markup, True) for key, markup in marks if key[0] == 0]  # closing
        if position in replaced:
            end, markup = replaced[position]
            pieces.append(Piece(markup, True))
            cursor = max(cursor, end)
        pieces += [Piece(markup, True) for key, markup in marks if key[0] == 2]  # opening
    if cursor < len(translation):
        pieces.append(Piece(translation[cursor:], False))
    return pieces
