"""What the Translator runs around decoding, per sentence: ``prepare`` (find verbatim spans, put
the sentence in ordinary case, mask the spans) -> the engine decodes ``Prepared.text`` ->
``restore`` (case back, spans back, alignment moved to the original words, flags and details).

Flags name what a reader of the translation should check; later steps (language check, quality
estimate, glossary) add theirs to ``FLAGS`` and to a result's ``flags`` the same way.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Mapping

from ..alignment import Alignment, word_spans
from . import casing
from .masking import STAND_INS, Masked, mask, stand_in_pattern
from .reinsert import restore_spans
from .language import LanguageCheck, LanguageVerdict
from .spans import Span, find_spans

if TYPE_CHECKING:
    from ..engine import SegmentResult

RESTORED_SPAN = "restored_span"  # a span was put back by alignment or insertion, or an invented one deleted
LANGUAGE = "language"  # the segment is not in the source language: copied through untranslated
FLAGS = (RESTORED_SPAN, "low_confidence", "untranslated_span", "repetition", "language", "glossary_miss")

_NOTHING_ELSE = re.compile(r"[\W_]*")


@dataclass(frozen=True)
class TextOptions:
    protect_spans: bool = True  # mask verbatim spans and restore them unchanged
    restore_case: bool = True  # translate ALL-CAPS and Title Case sentences in sentence case
    check_language: bool = True  # copy segments in another language through untranslated, flagged


@dataclass(frozen=True)
class Prepared:
    source: str  # the sentence as given
    text: str  # what the engine decodes
    decode: bool  # False: the sentence is verbatim spans and punctuation only; it is its own translation
    spans: tuple[Span, ...]
    masked: Masked | None  # None with span protection off
    case: str | None  # casing.UPPER, casing.TITLE or None
    language: LanguageVerdict | None = None  # set when the segment is in another language


def prepare(sentence: str, options: TextOptions = TextOptions(), source_language: str | None = None) -> Prepared:
    """The text to decode for ``sentence`` (in ``source_language``, when known, for the language check)."""
    if options.check_language and source_language:
        verdict = _language_check(source_language).check_segment(sentence)
        if verdict.mismatch:
            return Prepared(sentence, sentence, False, (), None, None, verdict)
    spans = tuple(find_spans(sentence))
    ranges = [(s.start, s.end) for s in spans]
    case = casing.detect(sentence, ranges) if options.restore_case else None
    text = casing.normalise(sentence, case, ranges)
    if not options.protect_spans:
        return Prepared(sentence, text, True, spans, None, case)
    if spans and _NOTHING_ELSE.fullmatch(_outside(sentence, spans)):
        return Prepared(sentence, sentence, False, spans, None, None)
    masked = mask(text, spans, STAND_INS)
    return Prepared(sentence, masked.text, True, spans, replace(masked, source=sentence), case)


def restore(prepared: Prepared, result: "SegmentResult") -> "SegmentResult":
    """``result`` (the engine's, for ``prepared.text``) as the translation of ``prepared.source``."""
    if prepared.language is not None:
        return _foreign(prepared, result)
    if not prepared.decode:
        return _verbatim(prepared, result)
    details: dict[str, Any] = {"case": prepared.case} if prepared.case else {}
    masked = prepared.masked
    if masked is None or not masked.slots:
        translation = _recase(result.translation, prepared)
        if masked is not None and masked.unmasked:
            details["spans"] = [s.to_json() | {"target": None, "method": "unprotected"} for s in masked.unmasked]
        alignment = Alignment(result.alignment.pairs, tuple(word_spans(prepared.source)), tuple(word_spans(translation)))
        return replace(result, source=prepared.source, translation=translation, alignment=alignment,
                       n_best=tuple((_recase(t, prepared), s) for t, s in result.n_best), details=details)
    restored = restore_spans(masked, _recase(result.translation, prepared), result.alignment.pairs)
    details["spans"] = [p.slot.span.to_json() | {"target": [p.start, p.end], "method": p.method}
                        for p in restored.placements]
    details["spans"] += [s.to_json() | {"target": None, "method": "unprotected"} for s in masked.unmasked]
    details["spans"].sort(key=lambda d: d["source"])
    if restored.removed:
        details["removed"] = list(restored.removed)
    flags = result.flags
    if restored.removed or any(p.method != "copied" for p in restored.placements):
        flags += (RESTORED_SPAN,)
    alignment = Alignment(restored.pairs, tuple(word_spans(prepared.source)), tuple(word_spans(restored.translation)))
    n_best = tuple((restore_spans(masked, _recase(t, prepared), ()).translation, s) for t, s in result.n_best)
    return replace(result, source=prepared.source, translation=restored.translation, alignment=alignment,
                   n_best=n_best, flags=flags, details=details)


def _recase(translation: str, prepared: Prepared) -> str:
    """The translation in the source's case, stand-ins left alone (they are matched exactly)."""
    if prepared.case is None:
        return translation
    protected = []
    if prepared.masked is not None and prepared.masked.slots:
        pattern = stand_in_pattern([s.stand_in for s in prepared.masked.slots])
        protected = [m.span() for m in pattern.finditer(translation)]
    return casing.restore(translation, prepared.case, protected)


def _verbatim(prepared: Prepared, result: "SegmentResult") -> "SegmentResult":
    """A sentence made of spans only: its translation is the sentence itself."""
    source = prepared.source
    words = word_spans(source)
    details = {"spans": [s.to_json() | {"target": [s.start, s.end], "method": "verbatim"} for s in prepared.spans]}
    return replace(result, source=source, translation=source, score=0.0,
                   alignment=Alignment(tuple((i, i) for i in range(len(words))), tuple(words), tuple(words)),
                   details=details)


def _language_check(language: str) -> LanguageCheck:
    check = _CHECKS.get(language)
    if check is None:
        check = _CHECKS[language] = LanguageCheck(expected=language)
    return check


_CHECKS: dict[str, LanguageCheck] = {}


def _foreign(prepared: Prepared, result: "SegmentResult") -> "SegmentResult":
    """A segment in another language: copied through untranslated, flagged ``language``."""
    source, verdict = prepared.source, prepared.language
    words = word_spans(source)
    details = {"language": {"detected": verdict.language, "confidence": round(verdict.confidence, 4)}}
    return replace(result, source=source, translation=source, score=0.0,
                   alignment=Alignment(tuple((i, i) for i in range(len(words))), tuple(words), tuple(words)),
                   flags=result.flags + (LANGUAGE,), details=details)


def _outside(sentence: str, spans: tuple[Span, ...]) -> str:
    """The sentence without its spans."""
    parts, cursor = [], 0
    for span in spans:
        parts.append(sentence[cursor:span.start])
        cursor = span.end
    return "".join(parts) + sentence[cursor:]


def shift_details(details: Mapping[str, Any], source_offset: int, target_offset: int) -> dict[str, Any]:
    """``details`` with span offsets moved from the sentence and its translation to the documents."""
    out = dict(details)
    if "spans" in details:
        out["spans"] = [d | {"source": [d["source"][0] + source_offset, d["source"][1] + source_offset],
                             "target": None if d["target"] is None else
                             [d["target"][0] + target_offset, d["target"][1] + target_offset]}
                        for d in details["spans"]]
    return out
