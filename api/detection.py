"""Language identification for LibreTranslate's ``/detect`` and ``source=auto``: CLD2, Google's
Compact Language Detector 2 (pycld2), the detector LibreTranslate itself uses. The workers' own
check (py3langid) needs numpy, which the gateway never imports; CLD2 is a C++ extension with its
tables compiled in, so it costs the gateway no load time and about 4 MiB."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

import pycld2

# CLD2 still names a few languages by withdrawn ISO 639 codes
RENAMED = {"iw": "he", "jw": "jv", "in": "id"}
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")  # CLD2 refuses control characters as bad UTF-8


@dataclass(frozen=True)
class Guess:
    language: str  # ISO 639-1 where there is one ("en", "he", "zh-Hant"), else 639-2
    confidence: float  # the share of the text's letters CLD2 gives the language, 0 to 100


@dataclass(frozen=True)
class Detection:
    guesses: tuple[Guess, ...]  # best first; empty when nothing could be told (digits, symbols)
    reliable: bool  # CLD2's own verdict; False for short or mixed texts, whose guesses are best effort

    @property
    def best(self) -> Guess | None:
        return self.guesses[0] if self.guesses else None

    def confidence_of(self, language: str) -> float:
        return next((g.confidence for g in self.guesses if g.language.split("-")[0] == language), 0.0)


def _one(text: str, markup: bool) -> tuple[bool, list[tuple[str, int]]]:
    """(reliable, [(language, percent)]) of one text; markup: skip HTML/XML tags, expand entities."""
    data = _CONTROL.sub(" ", text).encode("utf-8", "replace")  # lone surrogates become '?'
    try:
        reliable, _, details = pycld2.detect(data, isPlainText=not markup)
        if not reliable:
            _, _, details = pycld2.detect(data, isPlainText=not markup, bestEffort=True)
    except pycld2.error:
        return False, []
    found = [(RENAMED.get(code, code), percent) for _, code, percent, _ in details
             if percent > 0 and code != "un" and not code.startswith("xx")]
    return reliable and bool(found), found


def detect(texts: Sequence[str], markup: bool = False) -> Detection:
    """The languages of ``texts`` taken together: each text's guesses weighted by its length,
    over the texts in which any language was found."""
    scores: dict[str, float] = {}
    weight = 0
    reliable = True
    for text in texts:
        sure, found = _one(text, markup)
        if not found:
            continue
        weight += len(text)
        reliable = reliable and sure
        for language, percent in found:
            scores[language] = scores.get(language, 0.0) + percent * len(text)
    if not weight:
        return Detection((), False)
    ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
    return Detection(tuple(Guess(language, round(score / weight, 2)) for language, score in ranked), reliable)
