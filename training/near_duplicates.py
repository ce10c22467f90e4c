"""Near-duplicate sentences across corpora: the one normalisation that decides when two sentences
count as the same (``normalise``), and an index of the normalised sides of a set of pairs
(``SideIndex``) that held-out slices and training corpora are checked against.

Tatoeba lists many variants of one sentence ("Tom's here." / "Tom is here!" / "tom's here"); an
exact-match split leaves such variants on both sides and a held-out score then measures recall
of memorised sentences. The normalisation folds case, compatibility forms, punctuation, symbols
and whitespace, so variants that differ only there match.
"""
from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from typing import Iterable

KEPT_CATEGORIES = frozenset("LMN")  # letters, combining marks, numbers; everything else is dropped


class _DropTable(dict):
    """``str.translate`` table built lazily: code point -> itself when its Unicode category is kept,
    None (delete) otherwise. Lookups are memoised, so a corpus costs one category call per
    distinct character."""

    def __missing__(self, code: int) -> int | None:
        value = code if unicodedata.category(chr(code))[0] in KEPT_CATEGORIES else None
        self[code] = value
        return value


_DROP = _DropTable()


def normalise(text: str) -> str:
    """``text`` as compared for near-duplicates: NFKC, case-folded (so "Straße" matches "STRASSE"),
    then without punctuation, symbols, whitespace and control characters.

    >>> normalise("Tom's  here!") == normalise("toms HERE")
    True
    """
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    return folded.translate(_DROP)


def key(src: str, tgt: str) -> tuple[str, str]:
    """Both sides of a pair, normalised."""
    return normalise(src), normalise(tgt)


@dataclass
class SideIndex:
    """The normalised source sides and target sides of a set of sentence pairs.

    A pair matches the index when its normalised source equals an indexed source or its
    normalised target equals an indexed target. A side that normalises to nothing ("?!", "…")
    is never indexed nor matched: it says nothing about which sentence it is.
    """

    src: set[str] = field(default_factory=set)
    tgt: set[str] = field(default_factory=set)

    @classmethod
    def of(cls, pairs: Iterable[tuple[str, str]]) -> "SideIndex":
        index = cls()
        for src, tgt in pairs:
            index.add(src, tgt)
        return index

    @classmethod
    def of_keys(cls, keys: Iterable[tuple[str, str]]) -> "SideIndex":
        """The index of pairs already normalised (``key``)."""
        index = cls()
        for s, t in keys:
            if s:
                index.src.add(s)
            if t:
                index.tgt.add(t)
        return index

    def add(self, src: str, tgt: str) -> None:
        s, t = key(src, tgt)
        if s:
            self.src.add(s)
        if t:
            self.tgt.add(t)

    def update(self, other: "SideIndex") -> None:
        self.src |= other.src
        self.tgt |= other.tgt

    def matches(self, src: str, tgt: str) -> bool:
        return self.hits(key(src, tgt))

    def hits(self, normalised: tuple[str, str]) -> bool:
        """``matches`` for a pair already normalised (``key``): one normalisation, many indexes."""
        s, t = normalised
        return bool(s) and s in self.src or bool(t) and t in self.tgt

    def __len__(self) -> int:
        return len(self.src) + len(self.tgt)


def split_by_match(pairs: Iterable[tuple[str, str]], index: SideIndex) -> tuple[list[tuple[str, str]], int]:
    """The pairs that do not match ``index`` (in order), and how many did."""
    kept, dropped = [], 0
    for pair in pairs:
        if index.matches(*pair):
            dropped += 1
        else:
            kept.append(pair)
    return kept, dropped


def distinct(pairs: Iterable[tuple[str, str]], taken: SideIndex) -> tuple[list[tuple[str, str]], int]:
    """The pairs sharing no normalised side with ``taken`` nor with an earlier kept pair (the first
    of near-duplicates wins); each kept pair is added to ``taken``. Returns them and the count
    dropped."""
    kept, dropped = [], 0
    for src, tgt in pairs:
        if taken.matches(src, tgt):
            dropped += 1
            continue
        kept.append((src, tgt))
        taken.add(src, tgt)
    return kept, dropped
