"""Sentences in ALL CAPS or Title Case (headlines) are translated in ordinary sentence case, and
the translation is given the input's case back.

Models trained on ordinary text break words they have only seen in lower case into letters when
they arrive in capitals ("A DOG RUNS" -> "Ein DOP-RINSENDERAK"). ``normalise`` lower-cases such a
sentence (outside verbatim spans, keeping acronyms of a Title Case sentence) and capitalises its
first letter; ``restore`` upper-cases the whole translation (ALL CAPS) or capitalises its first
letter (Title Case: German nouns come capitalised from the model anyway). Every change keeps
the length of the text, so character offsets stay valid.
"""
from __future__ import annotations

import re
from typing import Callable, Sequence

from .masking import stand_in_pattern

UPPER, TITLE = "upper", "title"

_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")
# Words a headline may leave in lower case.
_MINOR = frozenset("a an the and or nor but of in on at to for with by from as per via vs into onto off up "
                   "out over than is are be".split())


def detect(text: str, protected: Sequence[tuple[int, int]] = ()) -> str | None:
    """UPPER, TITLE or None for ordinary text; ``protected`` ranges (verbatim spans) are ignored."""
    words = [m.group() for m in _WORD.finditer(_blank(text, protected))]
    letters = [c for w in words for c in w if c.isalpha()]
    cased = [c for c in letters if c.isupper() or c.islower()]
    if len(words) >= 2 and len(cased) >= 4 and sum(c.isupper() for c in cased) >= 0.9 * len(cased):
        return UPPER
    content = [w for w in words if w.lower() not in _MINOR or w is words[0]]
    if len(words) >= 3 and len(content) >= 3 and all(w[0].isupper() for w in content):
        return TITLE
    return None


def normalise(text: str, case: str | None, protected: Sequence[tuple[int, int]] = (),
              capitalised: Callable[[str], bool] | None = None) -> str:
    """``text`` in sentence case (same length); ALL-CAPS words of a Title Case sentence are kept
    as acronyms. Protected ranges are left as they are. ``capitalised(word)``: whether a word (in
    lower case) is usually written with a capital ("i", "tom", "paris"), so it gets one back."""
    if case is None:
        return text
    chars = list(text)
    keep = [False] * len(text)
    for a, b in protected:
        keep[a:b] = [True] * (b - a)
    for m in _WORD.finditer(text):
        word = m.group()
        if case == TITLE and len(word) > 1 and word.isupper():
            continue  # an acronym (NASA, USB) in a headline
        for k in range(m.start(), m.end()):
            if not keep[k]:
                chars[k] = _lower(chars[k])
        if capitalised is not None and not keep[m.start()] and capitalised("".join(chars[m.start():m.end()])):
            chars[m.start()] = upper_char(chars[m.start()])
    first = next((k for k, c in enumerate(chars) if c.isalpha()), None)
    if first is not None and not keep[first]:
        chars[first] = upper_char(chars[first])
    return "".join(chars)


def restore(text: str, case: str | None, protected: Sequence[tuple[int, int]] = ()) -> str:
    """The translation ``text`` in the source's case; protected ranges (stand-ins, spans) stay."""
    if case is None:
        return text
    keep = [False] * len(text)
    for a, b in protected:
        keep[a:b] = [True] * (b - a)
    if case == UPPER:
        return "".join(c if keep[k] else upper_char(c) for k, c in enumerate(text))
    first = next((k for k, c in enumerate(text) if c.isalpha()), None)
    if first is None or keep[first]:
        return text
    return text[:first] + upper_char(text[first]) + text[first + 1:]


def recased(texts: Sequence[str], case: str | None, stand_ins: Sequence[str] = ()) -> list[str]:
    """Each translation of ``texts`` (the best hypothesis, then its n-best list) in the source's
    ``case``; the ``stand_ins`` of masked spans stay as they are (they are matched exactly)."""
    if case is None:
        return list(texts)
    pattern = stand_in_pattern(stand_ins) if stand_ins else None
    return [restore(text, case, [m.span() for m in pattern.finditer(text)] if pattern else []) for text in texts]


def upper_char(c: str) -> str:
    """Upper case of one character, kept to one character (ß -> ẞ, not SS)."""
    u = c.upper()
    return u if len(u) == 1 else ("\u1e9e" if c == "ß" else c)


def _lower(c: str) -> str:
    low = c.lower()
    return low if len(low) == 1 else c


def _blank(text: str, protected: Sequence[tuple[int, int]]) -> str:
    chars = list(text)
    for a, b in protected:
        chars[a:b] = " " * (b - a)
    return "".join(chars)


# A capitalised piece must be this much more likely (log-probability) than the lower-case one:
# words that open many sentences ("A man ...", "Two dogs ...") are capitalised there only.
CAPITAL_MARGIN = 1.5


def vocabulary_capitals(pieces: Sequence[tuple[str, float]], marker: str = "\u2581") -> Callable[[str], bool]:
    """``capitalised`` from a SentencePiece vocabulary's (piece, log-probability) pairs: a word is
    written with a capital when its capitalised whole-word piece is clearly the more likely one
    (or the only one): "▁I" over "▁i", "▁Tom" with no "▁tom"; never a headline's minor word."""
    scores = {piece: score for piece, score in pieces if piece.startswith(marker)}

    def capitalised(word: str) -> bool:
        if word in _MINOR:
            return False
        upper = scores.get(marker + upper_char(word[:1]) + word[1:])
        return upper is not None and upper > scores.get(marker + word, float("-inf")) + CAPITAL_MARGIN

    return capitalised
