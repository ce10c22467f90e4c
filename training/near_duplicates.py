"""Near-duplicate sentences across corpora: the one rule that decides when two sentences count as
the same (``near_words``), and an index of the sides of a set of pairs (``SideIndex``) that finds
the indexed pairs near a given pair with about one hash lookup per word, however large the index.

Tatoeba lists many variants of one sentence ("Tom's here." / "Tom is here!" / "Tom was here.");
a split that separates only exact copies leaves such variants on both sides, and a held-out score
then measures recall of memorised sentences. Two sentences are near-duplicates when
(a) they are equal once case, compatibility forms, punctuation, symbols and whitespace are folded
    (``normalise``), or
(b) both have at least ``MIN_EDIT_WORDS`` normalised words (``words``) and the word sequences
    differ by one word substituted, inserted or deleted.
Shorter sentences get (a) only: one word of two ("Tom left." / "Tom came.") is another sentence.
Candidates are found with deletion keys (as in SymSpell, Garbe 2012): a sentence is keyed by its
normalised form, its word sequence and the sequence less each word in turn; sentences within one
word edit share a key, and ``near_words`` then rejects the few that share one otherwise
("a b c" / "b a c").
"""
from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from typing import Iterable

KEPT_CATEGORIES = frozenset("LMN")  # letters, combining marks, numbers; everything else is dropped
MIN_EDIT_WORDS = 3


class _DropTable(dict):
    """``str.translate`` table built lazily: code point -> itself when its Unicode category is kept,
    a space for whitespace (where ``str.split`` splits), None (delete) otherwise. Lookups are
    memoised, so a corpus costs one category call per distinct character."""

    def __missing__(self, code: int) -> int | None:
        char = chr(code)
        value = code if unicodedata.category(char)[0] in KEPT_CATEGORIES else 32 if char.isspace() else None
        self[code] = value
        return value


_DROP = _DropTable()


def words(text: str) -> tuple[str, ...]:
    """``text`` as compared for near-duplicates: NFKC, case-folded (so "Straße" matches "STRASSE"),
    split at whitespace, each word without punctuation, symbols and control characters, and words
    left empty dropped.

    >>> words("Tom's  here - now!")
    ('toms', 'here', 'now')
    """
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    return tuple(folded.translate(_DROP).split())


def normalise(text: str) -> str:
    """The words of ``text`` run together: equal for sentences differing only in case, forms,
    punctuation, symbols or spacing (rule (a)).

    >>> normalise("Tom's  here!") == normalise("toms HERE")
    True
    """
    return "".join(words(text))


def near(a: str, b: str) -> bool:
    """Whether sentences ``a`` and ``b`` are near-duplicates (rules (a) and (b) above)."""
    return near_words(words(a), words(b))


def near_words(wa: tuple[str, ...], wb: tuple[str, ...]) -> bool:
    """``near`` for sentences already split into normalised ``words``."""
    if not wa or not wb:
        return False
    if "".join(wa) == "".join(wb):
        return True
    shorter, longer = sorted((len(wa), len(wb)))
    if shorter < MIN_EDIT_WORDS or longer - shorter > 1:
        return False
    head = 0  # words equal from the start, then from the end: one edit leaves at most one word out
    while head < shorter and wa[head] == wb[head]:
        head += 1
    tail = 0
    while tail < shorter - head and wa[-1 - tail] == wb[-1 - tail]:
        tail += 1
    return head + tail >= longer - 1


def keys(ws: tuple[str, ...]) -> list[str]:
    """The keys of a sentence of words ``ws``: its normalised form (no space) and, from
    ``MIN_EDIT_WORDS`` words, its words joined by spaces and each deletion of one word (at least
    one space). Near-duplicates share a key: an edit at word i leaves the same sequence once word
    i is deleted from the one sentence (substitution: from both; insertion: from the longer)."""
    if not ws:
        return []
    found = ["".join(ws)]
    if len(ws) < MIN_EDIT_WORDS:
        return found
    # Slices of the joined words rather than joins of tuples: the same keys, faster.
    joined = " ".join(ws)
    found.append(joined)
    found.append(joined[len(ws[0]) + 1:])
    end = len(ws[0])  # where the word before the one deleted ends
    for word in ws[1:]:
        found.append(joined[:end] + joined[end + 1 + len(word):])
        end += 1 + len(word)
    return found


@dataclass
class _Side:
    """One side of the indexed pairs: pair numbers by key, and each pair's words for the check
    that turns sharing a key into being near."""

    by_key: dict[str, list[int]] = field(default_factory=dict)
    words: list[tuple[str, ...]] = field(default_factory=list)

    def add(self, ws: tuple[str, ...]) -> None:
        number = len(self.words)
        self.words.append(ws)
        for k in dict.fromkeys(keys(ws)):  # a repeated word gives a deletion twice
            self.by_key.setdefault(k, []).append(number)

    def candidates(self, ws: tuple[str, ...]) -> set[int]:
        found: set[int] = set()
        for numbers in filter(None, map(self.by_key.get, keys(ws))):
            found.update(numbers)
        return found

    def near(self, ws: tuple[str, ...]) -> set[int]:
        return {number for number in self.candidates(ws) if near_words(ws, self.words[number])}


@dataclass
class SideIndex:
    """The source sides and target sides of a set of pairs, numbered 0, 1, ... in the order added.

    A pair is near an indexed pair when its source is near the indexed source or its target is
    near the indexed target. A side with no words ("?!", "…") is never near anything: it says
    nothing about which sentence it is.
    """

    src: _Side = field(default_factory=_Side)
    tgt: _Side = field(default_factory=_Side)

    @classmethod
    def of(cls, pairs: Iterable[tuple[str, str]]) -> "SideIndex":
        index = cls()
        for src, tgt in pairs:
            index.add(src, tgt)
        return index

    def add(self, src: str, tgt: str) -> int:
        """Index a pair; returns its number."""
        self.src.add(words(src))
        self.tgt.add(words(tgt))
        return len(self) - 1

    def near(self, src: str, tgt: str) -> set[int]:
        """The numbers of the indexed pairs near (``src``, ``tgt``)."""
        return self.src.near(words(src)) | self.tgt.near(words(tgt))

    def matches(self, src: str, tgt: str) -> bool:
        """Whether any indexed pair is near (``src``, ``tgt``)."""
        return bool(self.src.near(words(src))) or bool(self.tgt.near(words(tgt)))

    def __len__(self) -> int:
        return len(self.src.words)


def near_indexed(index: SideIndex, pairs: Iterable[tuple[str, str]]) -> set[int]:
    """The numbers of the indexed pairs near any of ``pairs``: a large corpus is streamed past
    the index of a small set instead of being indexed itself."""
    found: set[int] = set()
    for src, tgt in pairs:
        found |= index.near(src, tgt)
    return found


def distinct(pairs: Iterable[tuple[str, str]], taken: SideIndex) -> tuple[list[tuple[str, str]], int]:
    """The pairs near neither ``taken`` nor an earlier kept pair (the first of near-duplicates
    wins); each kept pair is added to ``taken``. Returns them and the count dropped."""
    kept, dropped = [], 0
    for src, tgt in pairs:
        if taken.matches(src, tgt):
            dropped += 1
            continue
        kept.append((src, tgt))
        taken.add(src, tgt)
    return kept, dropped
