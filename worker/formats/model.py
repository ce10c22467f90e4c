"""The document model shared by the format readers: units to translate, and a skeleton that
holds everything else byte for byte.

A skeleton is a list of verbatim strings and slots; each unit owns one slot per line its
translation must fill (a subtitle cue of two lines owns two slots, and its translation is broken
into two lines again).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence


class FormatError(ValueError):
    """A file is malformed for its format; the message says what and where."""


class OutputError(RuntimeError):
    """A translated file would not parse as its format: it is never written. The message names
    the unit and what the parser refused."""


@dataclass(frozen=True)
class Tag:
    """Inline markup of a unit, verbatim: ``open`` before and ``close`` after the characters
    [start, end) of the unit's text; a point tag (``<br>``, ``<img>``, ``<x/>``) has no ``close``
    and start == end. A unit's tags are listed in source order (a tag before the tags inside it)."""

    open: str
    close: str
    start: int
    end: int
    space: tuple[bool, bool] = (False, False)  # a point tag: whitespace before it, after it in the source
    # the index (in the unit's tags) of the paired tag this one sits in; None: the innermost paired
    # tag whose span holds it (a point strictly inside), or none
    parent: int | None = None


@dataclass(frozen=True)
class TextUnit:
    text: str  # what is translated (a cue's lines joined by spaces, a message's msgid)
    where: str  # for messages: "cue 3", "line 12"
    lines: int = 1  # lines the translation is broken into
    warnings: tuple[str, ...] = ()
    tags: tuple[Tag, ...] = ()  # inline markup, carried to the translation by its alignment (formats.markup)


@dataclass
class Skeleton:
    """Verbatim text with numbered slots: ``parts`` holds strings and slot numbers (ints)."""

    parts: list[str | int] = field(default_factory=list)
    slots: int = 0

    def text(self, value: str) -> None:
        if value:
            self.parts.append(value)

    def slot(self) -> int:
        self.parts.append(self.slots)
        self.slots += 1
        return self.slots - 1

    def fill(self, values: Sequence[str]) -> str:
        if len(values) != self.slots:
            raise ValueError(f"{len(values)} values for {self.slots} slots")
        return "".join(values[p] if isinstance(p, int) else p for p in self.parts)


@dataclass
class Parsed:
    units: list[TextUnit]
    _render: Callable[..., str]
    marked: bool = False  # the render takes each unit's alignment links, to place its tags
    notes: dict[int, list[str]] = field(default_factory=dict)  # unit index -> notes of the last render

    def render(self, translations: Sequence[str], links: Sequence[Sequence] | None = None) -> str:
        """The file with each unit's translation in place (one translation per unit, in order).
        ``links``: per unit, (source word span, target word span) character pairs from the
        alignment, which formats with inline markup need (``marked``); their notes about tags
        placed without alignment, and any unit the writer kept as its source, land in ``notes``
        (unit index -> notes)."""
        if len(translations) != len(self.units):
            raise ValueError(f"{len(translations)} translations for {len(self.units)} units")
        self.notes.clear()
        if not self.marked:
            return self._render(translations, None, self.notes)
        return self._render(translations, links or [()] * len(self.units), self.notes)


def collapsed(text: str, data: str) -> str:
    """``text`` followed by ``data`` with each run of whitespace made one space (none at the start),
    as markup formats show their text."""
    for ch in data:
        if not ch.isspace():
            text += ch
        elif text and not text.endswith(" "):
            text += " "
    return text


def rebreak(text: str, lines: int, shares: Sequence[float] | None = None) -> list[str]:
    """``text`` broken at spaces into ``lines`` lines of about equal length, or of about the given
    ``shares`` of its length (the source lines' lengths, say); fewer words than lines leave the
    last lines empty."""
    words = text.split()
    if lines <= 1 or len(words) <= 1:
        return [" ".join(words)] + [""] * (lines - 1)
    ends, length = [], -1  # ends[i]: characters of words[: i + 1] joined by spaces
    for word in words:
        length += len(word) + 1
        ends.append(length)
    breaks, previous = [], -1  # the index of the last word on each line but the last
    bounds = [sum(shares[:k]) / sum(shares) for k in range(lines + 1)] if shares and sum(shares) > 0 else \
        [k / lines for k in range(lines + 1)]
    for k in range(1, min(lines, len(words))):
        target = ends[-1] * bounds[k]
        last_allowed = len(words) - (min(lines, len(words)) - k) - 1  # leave a word for each later line
        previous = min(range(previous + 1, last_allowed + 1), key=lambda i: abs(ends[i] - target))
        breaks.append(previous)
    out, start = [], 0
    for end in breaks + [len(words) - 1]:
        out.append(" ".join(words[start:end + 1]))
        start = end + 1
    return out + [""] * (lines - len(out))
