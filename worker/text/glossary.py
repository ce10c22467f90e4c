"""Glossaries (forced terminology): which terms of a glossary occur in a sentence.

A term matches case-insensitively, as whole words (any whitespace between its words); where
matches overlap the longest wins, then the earliest; verbatim spans keep their text. The pipeline
masks each match like a verbatim span, ``worker.text.reinsert`` puts the term's target back, and
``applied`` says for each term where its target went (a restoring pass of worker.text.pipeline).
The file format and its checks live in queue_config.glossary, shared with the client.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from queue_config.glossary import GlossaryError, check_terms, read_glossary

from . import casing
from .segment import GLOSSARY_MISS, SegmentResult

if TYPE_CHECKING:
    from .masking import Placement
    from .spans import Span

__all__ = ["Glossary", "GlossaryError", "TermMatch", "applied", "find_terms", "load_glossary"]

_TOKEN = re.compile(r"\w+|[^\w\s]")


@dataclass(frozen=True)
class Glossary:
    terms: tuple[tuple[str, str], ...] = ()  # (source term, target term), sources distinct ignoring case
    # first token of a source term (lower case) -> [(pattern, source, target)], longest term first
    _index: dict = field(default_factory=dict, init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        index: dict[str, list[tuple[re.Pattern, str, str]]] = {}
        for source, target in sorted(self.terms, key=lambda t: -len(t[0])):
            words = source.split()
            pattern = re.compile(r"(?<!\w)" + r"\s+".join(map(re.escape, words)) + r"(?!\w)", re.IGNORECASE)
            index.setdefault(_TOKEN.match(source).group().lower(), []).append((pattern, source, target))
        object.__setattr__(self, "_index", index)

    @classmethod
    def from_pairs(cls, pairs: Any) -> "Glossary":
        """From [source, target] pairs or a {source: target} mapping; ``GlossaryError`` names a bad term."""
        return cls(check_terms(pairs, "glossary", max_terms=None))

    def __len__(self) -> int:
        return len(self.terms)


def load_glossary(path: str | Path) -> Glossary:
    """A glossary file (UTF-8, one ``source<TAB>target`` a line, ``#`` comments); ``GlossaryError``
    names the file and line of a problem."""
    return Glossary(read_glossary(path))


@dataclass(frozen=True)
class TermMatch:
    start: int  # character [start, end) in the sentence
    end: int
    term: str  # the glossary's source term (the sentence may spell it in another case)
    target: str  # the glossary's target term


def find_terms(sentence: str, glossary: Glossary | None,
               taken: Sequence[tuple[int, int]] = ()) -> list[TermMatch]:
    """The glossary's terms in ``sentence``, non-overlapping, in order; none overlaps a ``taken``
    range (the verbatim spans)."""
    if not glossary:
        return []
    candidates = []
    for token in _TOKEN.finditer(sentence):
        for pattern, source, target in glossary._index.get(token.group().lower(), ()):
            match = pattern.match(sentence, token.start())
            if match:
                candidates.append(TermMatch(match.start(), match.end(), source, target))
    chosen: list[TermMatch] = []
    occupied = list(taken)
    for match in sorted(candidates, key=lambda m: (m.start - m.end, m.start)):
        if not any(match.start < b and a < match.end for a, b in occupied):
            chosen.append(match)
            occupied.append((match.start, match.end))
    return sorted(chosen, key=lambda m: m.start)


def applied(terms: Sequence[Span], placements: Sequence[Placement], result: SegmentResult) -> SegmentResult:
    """``result`` (restored) with ``details["glossary"]`` (one entry per term of the source) and the
    flag GLOSSARY_MISS when a term's target is not in the translation. ``method``: where the model
    wrote the target term itself (copied), in place of the model's translation of the term
    (aligned), next to its neighbours' (inserted); None for a term that could not be placed (its
    place taken by a span's), applied only if its target term is in the translation anyway."""
    if not terms:
        return result
    translation = result.translation
    placed = {p.slot.span: p for p in placements if p.slot.kept}
    if result.source[:1].isupper() and any(p.start == 0 for p in placed.values()):
        translation = casing.restore(translation, casing.TITLE)  # a lower-case target term now opens it
    entries = []
    for term in terms:
        entry = {"source": [term.start, term.end], "term": term.text, "target_term": term.replacement}
        placement = placed.get(term)
        if placement is not None:
            entry |= {"target": [placement.start, placement.end], "method": placement.method, "applied": True}
        else:
            found = re.search(r"(?<!\w)" + re.escape(term.replacement) + r"(?!\w)", translation, re.IGNORECASE)
            entry |= {"target": list(found.span()) if found else None, "method": None, "applied": found is not None}
        entries.append(entry)
    flags = result.flags + ((GLOSSARY_MISS,) if not all(e["applied"] for e in entries) else ())
    return replace(result, translation=translation, flags=flags, details=dict(result.details) | {"glossary": entries})
