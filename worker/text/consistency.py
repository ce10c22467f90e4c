"""Whether a hypothesis of the beam carries its source's spans as they are, so the engine can
prefer one that does to a better-scoring one that does not (``Translator``'s consistency pick).

A hypothesis is span-consistent when

- the stand-ins of the masked spans (worker.text.masking) stand in it exactly as often as in the
  decoded text, once each: none lost, none doubled, none added; and
- every span-like token of its restored text (``find_spans``, the detector the masking uses) is
  the source's: a text of the source, or one joined to a German word by a hyphen
  (``--filter-Option``), and no more often than the source has it. Words the model makes up that
  look like spans are not: ``--filterle`` from ``filter --``, ``geArchivt``, ``demSSQL``, a number
  the source never had or has once (``s 12 12,18d`` for ``sed 12,18d``).

Names and glossary terms (kept slots) are the glossary's and the names' business, not this check's.

A hypothesis keeps its numbers (``numbers_kept``) when its restored text has the source's digit runs,
no more and no fewer, as a reader compares them: ``10th`` -> ``10.``, ``1,500`` -> ``1.500`` and
``2.5`` -> ``2,5`` keep theirs; ``10th Edition`` -> ``10-Bedings`` (a made-up span, deleted) or a
year that the source never had do not. A number the source spells out (``the tenth argument`` ->
``das 10. Argument``) or the translation spells out (``2 dogs`` -> ``zwei Hunde``) is the
translation's choice.
"""
from __future__ import annotations

import re
from collections import Counter
from typing import Sequence

from .masking import Masked, stand_in_pattern
from .spans import find_spans

# A German word (or words) joined by a hyphen after a span: ``--filter-Option``, ``UTF-8-kodiert``
_COMPOUND_TAIL = re.compile(r"(?<=[^\W_]|[.)/])-[^\W\d_]+(?:-[^\W\d_]+)*$")
# ... or before it: ``Python-3.11``, ``GNU-grep``
_COMPOUND_HEAD = re.compile(r"^[^\W\d_]+-(?=[^\W_])")


def stand_ins_kept(masked: Masked, decoded: str) -> bool:
    """Whether ``decoded`` (the model's text, before restoring) holds each stand-in of ``masked``
    exactly once and no other one: the spans all come back copied, in no doubt."""
    stand_ins = [slot.stand_in for slot in masked.slots if not slot.kept]
    if not stand_ins:
        return True
    found = Counter(m.group("stand_in") for m in stand_in_pattern(stand_ins).finditer(decoded))
    return found == Counter(stand_ins)


def invented_spans(source: str, translation: str) -> list[str]:
    """The span-like tokens of ``translation`` that are not its source's (in text order): not in
    the source, or more often in the translation than in the source (``s 12 12,18d`` for
    ``sed 12,18d``)."""
    out = []
    for span in find_spans(translation):
        text = span.text
        if text not in source:
            tail, head = _COMPOUND_TAIL.search(text), _COMPOUND_HEAD.match(text)
            word, _, rest = text.partition(" ")
            if tail and text[:tail.start()] in source:
                text = text[:tail.start()]
            elif head and text[head.end():] in source:
                text = text[head.end():]
            elif span.kind == "option" and rest and rest in source and word not in source:
                text = rest  # an option read with the German word before it as its program (für -group)
            else:
                out.append(span.text)
                continue
        if translation.count(text) > source.count(text):
            out.append(span.text)
    return out


_DIGITS = re.compile(r"(?<!\d)\d{1,3}(?:[,.\u00a0\u202f]\d{3})+(?![\d])(?![.,]\d)|\d+")
_GROUPING = re.compile(r"[,.\u00a0\u202f]")
_WORD = re.compile(r"[^\W\d_]+")
_ENDINGS = ("", "e", "en", "er", "es", "em", "s", "th", "te", "ten", "ter", "tes", "tem", "mal")
# Number words from 0 to 12, cardinal and ordinal stems, by language: a stem with an ending of
# ``_ENDINGS`` writes that number (German ``eine``, ``ersten``, ``zweimal``; not ``einfach``).
NUMBER_WORDS = {
    "en": ("zero", "one first once", "two second twice", "three third", "four", "five fifth", "six", "seven",
           "eight eighth", "nine ninth", "ten tenth", "eleven", "twelve twelfth"),
    "de": ("null", "ein erst", "zwei", "drei dritt", "vier", "fünf", "sechs", "sieben siebt", "acht", "neun",
           "zehn", "elf", "zwölf"),
}


def _digit_runs(text: str) -> Counter:
    """The digit runs of ``text``, a grouped number as one (``1,500`` and ``1.500``: ``1500``)."""
    return Counter(_GROUPING.sub("", m.group()) for m in _DIGITS.finditer(text))


def _spelt(text: str, language: str | None) -> set[str]:
    """The numbers (as digit strings) that ``text`` writes as words of ``language``."""
    stems = NUMBER_WORDS.get(language or "")
    if not stems:
        return set()
    words = set(_WORD.findall(text.lower()))
    return {str(n) for n, forms in enumerate(stems) for stem in forms.split()
            if any(stem + ending in words for ending in _ENDINGS)}


def numbers_kept(source: str, translation: str, source_language: str | None = None,
                 target_language: str | None = None) -> bool:
    """Whether ``translation`` writes the digit runs of ``source``, none lost and none made up,
    less those one side spells out as a number word (``NUMBER_WORDS``) of its language."""
    have, want = _digit_runs(translation), _digit_runs(source)
    lost, extra = want - have, have - want
    return not (lost and set(lost) - _spelt(translation, target_language)) \
        and not (extra and set(extra) - _spelt(source, source_language))


def span_consistent(masked: Masked | None, decoded: str, translation: str) -> bool:
    """Whether a hypothesis (``decoded``, the model's text; ``translation``, it with case and spans
    restored) keeps every stand-in once and makes up no span-like token of its own: none in the
    model's text that the masked text lacks, none in the restored one that the source lacks.
    Without masking (span protection off) every hypothesis is."""
    if masked is None:
        return True
    # a span written in another form (a key span's German names: Strg+F6) is the source's too
    source = masked.source + "".join("\n" + s.span.replacement for s in masked.slots
                                     if not s.kept and s.span.replacement != s.span.text)
    return stand_ins_kept(masked, decoded) and not invented_spans(masked.text, decoded) \
        and not invented_spans(source, translation)


def consistent(masked: Masked | None, source: str, hypotheses: Sequence[tuple[str, str]],
               source_language: str | None = None, target_language: str | None = None) -> list[bool]:
    """For each hypothesis (the model's text, and it restored), whether it keeps its spans
    (``span_consistent``) and the numbers of ``source`` (``numbers_kept``): the consistency pass,
    once for all the hypotheses it is given."""
    return [span_consistent(masked, decoded, translation)
            and numbers_kept(source, translation, source_language, target_language)
            for decoded, translation in hypotheses]
