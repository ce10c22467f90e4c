"""Masking verbatim spans with stand-in words before decoding, and putting them back after.

The shipped models never saw placeholder tokens, so each span is replaced by a plain word the
model copies (``STAND_INS``, chosen by measurement: docs/quality.md). After decoding, each span
goes back in place of its stand-in; where the model dropped or changed the stand-in, in place of
the target words aligned to it alone, else next to the translation of its neighbouring source
words (``method``: copied, aligned, inserted). Alignment pairs follow the edits. Glossary terms and
names are slots too, kept in the text: their target (a term's translation, a name or its German
form) goes where the model wrote it, else in place of the model's translation of it
(worker.text.reinsert).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from .names import KEPT_NAME
from .segment import word_at, word_spans
from .spans import GLOSSARY, LONG, RUN, SYMBOL, Span

KEPT_KINDS = (GLOSSARY, KEPT_NAME)  # spans left in the text as kept slots
# Spans the model cannot carry at all (characters its vocabulary lacks, runs, over-long words):
# when a sentence has more spans than stand-ins, these get stand-ins first.
UNCARRIED = (SYMBOL, LONG, RUN)

# Single SentencePiece pieces of the shipped vocabulary, spelt alike in English and German, best
# copied first: as the first stand-in of each sentence of bench/data/span_probe.en the Multi30k
# model copied Baby 76%, Frisbee 73%, Nike 66%, Texas 63%, Pizza 62% ... Hockey 52% of the time
# (London 46%; Graffiti, Yoga, Laptop 0%: it translates them into other nouns). docs/quality.md.
STAND_INS = ("Baby", "Frisbee", "Nike", "Texas", "Pizza", "Rodeo", "Starbucks", "Football", "Parade", "Baseball",
             "Cowboy", "Hockey")


@dataclass(frozen=True)
class Slot:
    """One masked span, where its stand-in sits in the masked text; or a glossary term, kept."""

    span: Span
    stand_in: str  # "" for a kept slot
    start: int  # character [start, end) of the stand-in (a kept slot: the span itself) in the masked text
    end: int
    kept: bool = False  # a glossary term left in the text: found by its target term, else by alignment


@dataclass(frozen=True)
class Masked:
    source: str  # the original sentence
    text: str  # the sentence with every masked span replaced by its stand-in
    slots: tuple[Slot, ...]
    unmasked: tuple[Span, ...]  # spans left in the text (more spans than stand-ins)
    origin: tuple[int, ...]  # origin[k]: offset in ``source`` of character k of ``text`` (one extra at the end)


@dataclass(frozen=True)
class Placement:
    """Where a span ended up in the restored translation."""

    slot: Slot
    start: int  # character [start, end) in the restored translation
    end: int
    method: str  # copied | aligned | inserted


def free_stand_ins(source: str, spans: Sequence[Span], stand_ins: Sequence[str] = STAND_INS) -> list[str]:
    """The stand-ins ``mask`` may use for ``source``: not a word of it, nor of a kept slot's target."""
    present = {w.lower() for w in re.findall(r"\w+", source)}
    present |= {w.lower() for span in spans if span.kind in KEPT_KINDS for w in re.findall(r"\w+", span.replacement)}
    return [s for s in stand_ins if s.lower() not in present]


def mask(source: str, spans: Sequence[Span], stand_ins: Sequence[str] = STAND_INS) -> Masked:
    """Replace each span (in text order) by a distinct stand-in (one not already in the sentence); a
    stand-in that would touch a word or another stand-in gets a space on that side. Glossary terms
    stay in the text, as kept slots: masked, the models translate the sentence around a stand-in
    worse than they translate the term (docs/quality.md, Glossary); so do names left to the model
    (worker.text.names). No stand-in is a word of a kept slot's target (Mary -> Maria)."""
    free = free_stand_ins(source, spans, stand_ins)
    chosen = _to_stand_in([s for s in spans if s.kind not in KEPT_KINDS], len(free))
    parts: list[str] = []
    origin: list[int] = []
    slots: list[Slot] = []
    unmasked: list[Span] = []
    cursor = length = used = 0
    for span in spans:
        if span.kind in KEPT_KINDS:
            text = source[cursor:span.end]
            parts.append(text)
            origin += range(cursor, span.end)
            slots.append(Slot(span, "", length + span.start - cursor, length + len(text), kept=True))
            length += len(text)
            cursor = span.end
            continue
        if span not in chosen:
            unmasked.append(span)
            continue
        gap = source[cursor:span.start]
        parts.append(gap)
        origin += range(cursor, span.start)
        length += len(gap)
        if length and (_word_char(parts[-1][-1:]) or (not gap and slots and slots[-1].end == length)):
            parts.append(" ")
            origin.append(span.start)
            length += 1
        stand_in = free[used]
        used += 1
        slots.append(Slot(span, stand_in, length, length + len(stand_in)))
        parts.append(stand_in)
        origin += [span.start] * len(stand_in)
        length += len(stand_in)
        if _word_char(source[span.end:span.end + 1]):
            parts.append(" ")
            origin.append(span.end)
            length += 1
        cursor = span.end
    parts.append(source[cursor:])
    origin += range(cursor, len(source) + 1)
    return Masked(source, "".join(parts), tuple(slots), tuple(unmasked), tuple(origin))


def _word_char(c: str) -> bool:
    """Whether ``c`` is a word character as ``stand_in_pattern`` sees one (``\\w``: "_" too), so a
    stand-in next to it needs a space to be found again."""
    return c.isalnum() or c == "_"


def _to_stand_in(spans: Sequence[Span], stand_ins: int) -> set[Span]:
    """The spans that get one of ``stand_ins`` stand-ins: all, or UNCARRIED kinds first, then in text order."""
    if len(spans) <= stand_ins:
        return set(spans)
    ranked = sorted(range(len(spans)), key=lambda i: (spans[i].kind not in UNCARRIED, i))
    return {spans[i] for i in ranked[:stand_ins]}


def stand_in_pattern(stand_ins: Sequence[str]) -> re.Pattern:
    """Whole-word occurrences of any of ``stand_ins`` (group ``stand_in``), also with the endings
    German gives names (genitive "Toms", "Marias"; "Londoner"): the whole word is the stand-in's."""
    return re.compile(r"(?<!\w)(?P<stand_in>" + "|".join(re.escape(s) for s in stand_ins) + r")(?:s|er|ern)?(?!\w)")


def slot_words(masked: Masked, slot: Slot) -> set[int]:
    """Indices of the masked text's words that the slot's stand-in (a kept slot: its span) covers."""
    spans = word_spans(masked.text)
    return {i for i, (a, b) in enumerate(spans) if a < slot.end and b > slot.start} or \
        {word_at([a for a, _ in spans], slot.start)}


def source_word_map(masked: Masked) -> list[int]:
    """For each word of the masked text, the index of the source word it came from."""
    starts = [a for a, _ in word_spans(masked.source)]
    return [word_at(starts, masked.origin[a]) for a, _ in word_spans(masked.text)]


def slot_source_words(masked: Masked, slot: Slot) -> list[int]:
    """Indices of the source words the slot's span covers."""
    spans = word_spans(masked.source)
    return [i for i, (a, b) in enumerate(spans) if a < slot.span.end and b > slot.span.start] or \
        [word_at([a for a, _ in spans], slot.span.start)]
