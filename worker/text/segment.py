"""What a translated segment is, shared by every room: the result types (SegmentResult,
DocumentResult, Alignment), the word primitives they index by, and the names of the flags.
A leaf: it imports only the standard library and numpy."""
from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field, replace
from typing import Any, Mapping, Sequence

import numpy as np

from nmt.links import parse_pharaoh, pharaoh

WORD_MARKER = "\u2581"  # SentencePiece opens each word with it
_WORD = re.compile(r"\S+")  # a word: whitespace-separated, on both sides


@dataclass(frozen=True)
class Alignment:
    pairs: tuple[tuple[int, int], ...]  # (source word, target word), sorted
    source_spans: tuple[tuple[int, int], ...]  # character [start, end) of each source word
    target_spans: tuple[tuple[int, int], ...]  # character [start, end) of each target word

    @property
    def pharaoh(self) -> str:
        return pharaoh(self.pairs)


def piece_words(pieces: Sequence[str]) -> list[int]:
    """Word index of each piece: a piece starting with U+2581 opens the next word."""
    words, current = [], -1
    for piece in pieces:
        if piece.startswith(WORD_MARKER) or current < 0:
            current += 1
        words.append(current)
    return words


def word_spans(text: str, offset: int = 0) -> list[tuple[int, int]]:
    """[start, end) of each whitespace-separated word of ``text``, shifted by ``offset``."""
    return [(m.start() + offset, m.end() + offset) for m in _WORD.finditer(text)]


def word_at(starts: Sequence[int], position: int) -> int:
    """Index of the word (given by its sorted start offsets) that contains ``position``; a
    position between words counts for the word before it, one before every word for word 0."""
    return max(bisect_right(starts, position) - 1, 0)


# The flags: what a reader should check in a segment.
LOW_CONFIDENCE = "low_confidence"  # the quality estimate is below the bundle's threshold
UNTRANSLATED_SPAN = "untranslated_span"  # source words no output token attended to
REPETITION = "repetition"  # the output loops
RESTORED_SPAN = "restored_span"  # a span was put back by alignment or insertion, or an invented one deleted
LANGUAGE = "language"  # the segment is not in the source language: copied through untranslated
GLOSSARY_MISS = "glossary_miss"  # a glossary term of the source is not in the translation
NOT_PROSE = "not_prose"  # identifiers, a command line or code: copied through untranslated
KEPT_SOURCE = "kept_source"  # the model gave no words for a segment with words: its source text is kept
DROPPED_TEXT = "dropped_text"  # the translation covers less than half of the source's visible characters
TIME_BUDGET = "time_budget"  # decoding would take longer than the segment's time budget: its source is kept
# no hypothesis of the beam kept the masked spans once each and made up no span-like word (worker.text.consistency)
SPAN_MISMATCH = "span_mismatch"
FLAGS = (RESTORED_SPAN, LOW_CONFIDENCE, UNTRANSLATED_SPAN, REPETITION, LANGUAGE, GLOSSARY_MISS, NOT_PROSE, KEPT_SOURCE,
         DROPPED_TEXT, TIME_BUDGET, SPAN_MISMATCH)


@dataclass(frozen=True)
class DecoderFacts:
    features: Mapping[str, float]
    # character [start, end) in the decoded text of words no output token attended to
    unattended_words: tuple[tuple[int, int], ...] = ()
    loop: str | None = None  # the repeated output pieces of a loop, when the output has one


# details entries that hold "source" (and "target") character [start, end) offsets
_OFFSET_DETAILS = ("spans", "glossary", "untranslated")


def _moved(entry: Mapping[str, Any], source_offset: int, target_offset: int) -> dict[str, Any]:
    out = dict(entry)
    for side, by in (("source", source_offset), ("target", target_offset)):
        if out.get(side) is not None:
            out[side] = [out[side][0] + by, out[side][1] + by]
    return out


@dataclass(frozen=True)
class SegmentResult:
    source: str
    translation: str
    score: float  # GNMT-normalised log-probability of the best hypothesis
    alignment: Alignment  # word pairs and character spans (document offsets)
    n_best: tuple[tuple[str, float], ...] = ()
    # float32 [target pieces+1, source pieces+1] (+1: the eos row and column). A sentence split into
    # C chunks gets the chunks' matrices on the diagonal of one [sum(T_c+1), sum(S_c+1)] matrix,
    # zeros elsewhere. None unless asked for, and for a sentence with no translatable content.
    attention: np.ndarray | None = field(default=None, repr=False)
    warnings: tuple[str, ...] = ()
    flags: tuple[str, ...] = ()  # what a reader should check (FLAGS)
    # JSON-ready facts behind the flags: "spans" (kind, text, source/target character offsets,
    # method), "removed", "case", "glossary", "untranslated", "loop". Offsets are those of ``alignment``.
    details: Mapping[str, Any] = field(default_factory=dict)
    confidence: float | None = None  # in [0, 1]: the quality estimate (worker.text.quality); None before it
    # What the decoder knew, read by the quality estimate; not serialised.
    facts: DecoderFacts | None = field(default=None, repr=False, compare=False)
    cached: bool = False  # a segment cache hit (worker.engine.cache), or a repeat of a sentence earlier in the call

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> SegmentResult:
        """Inverse of ``to_json`` (chunk results travel between workers as JSON)."""
        alignment = Alignment(
            tuple(parse_pharaoh(raw["alignment"])),
            tuple(tuple(w) for w in raw["source_words"]), tuple(tuple(w) for w in raw["target_words"]),
        )
        attention = np.asarray(raw["attention"], dtype=np.float32) if "attention" in raw else None
        n_best = tuple((n["translation"], n["score"]) for n in raw.get("n_best", ()))
        return cls(raw["source"], raw["translation"], raw["score"], alignment, n_best, attention,
                   tuple(raw.get("warnings", ())), tuple(raw.get("flags", ())), dict(raw.get("details", {})),
                   raw.get("confidence"), cached=bool(raw.get("cached", False)))

    def shifted(self, source_offset: int, target_offset: int) -> SegmentResult:
        """The result with every character offset (word spans, and the source / target offsets
        in ``details``) moved from the sentence and its translation into the documents."""
        if not source_offset and not target_offset:
            return self
        alignment = Alignment(self.alignment.pairs,
                              tuple((a + source_offset, b + source_offset) for a, b in self.alignment.source_spans),
                              tuple((a + target_offset, b + target_offset) for a, b in self.alignment.target_spans))
        details = {key: [_moved(entry, source_offset, target_offset) for entry in value] if key in _OFFSET_DETAILS
                   else value for key, value in self.details.items()}
        return replace(self, alignment=alignment, details=details)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "source": self.source,
            "translation": self.translation,
            "score": self.score,
            "alignment": self.alignment.pharaoh,
            "source_words": [list(span) for span in self.alignment.source_spans],
            "target_words": [list(span) for span in self.alignment.target_spans],
        }
        if self.n_best:
            out["n_best"] = [{"translation": t, "score": s} for t, s in self.n_best]
        if self.attention is not None:
            out["attention"] = np.round(self.attention.astype(np.float64), 5).tolist()
        if self.warnings:
            out["warnings"] = list(self.warnings)
        if self.confidence is not None:
            out["confidence"] = round(self.confidence, 4)
        out["flags"] = list(self.flags)
        out["details"] = dict(self.details)
        if self.cached:
            out["cached"] = True
        return out


@dataclass(frozen=True)
class DocumentResult:
    source: str
    translation: str
    segments: tuple[SegmentResult, ...]
    provenance: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        warnings = [w for s in self.segments for w in s.warnings]
        return {"segments": [s.to_json() for s in self.segments], "provenance": self.provenance,
                "warnings": warnings}
