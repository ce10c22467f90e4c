"""English/German pairs from the blocks of one page and its translation: blocks paired by id or
by the same element sequence, cut into sentences where both sides have as many, and pairs whose
German side is the English left untranslated dropped.

A German help page is the English page with its messages replaced (LibreOffice's help2.xsl,
itstool for Mallard, po4a and Sphinx for the guides): the structure is the same, and a message
nobody translated stays English. Pairing by position is therefore exact where the element
sequence is equal; where it differs (an outdated translation, a translator's note) only the
blocks before and after the difference that pair for certain are kept.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Iterable

from ..near_duplicates import normalise
from .markup import Block, Run, cut, render

# Function words that tell English from German in a block of help text; words both languages
# use ("in", "an", "also", "will", "was", "so", "die", "man") are in neither list.
ENGLISH_WORDS = frozenset("""the and of to is are with for this that you your on be by it from which can not or if
when these then there have has at as into only than its click select""".split())
GERMAN_WORDS = frozenset("""der das und ist sind mit für von zu den dem des ein eine einen einem einer nicht oder wenn
sie auf sich werden wird auch im zum zur können kann bei aus nach über durch wählen klicken""".split())


@dataclass(frozen=True)
class DocsPair:
    """One English/German pair, plain and tagged (``training.docs.markup``), and where it came from:
    ``section`` is the source and the part of the manual (a LibreOffice module, a GNOME
    application's help, a guide's chapter), the unit a held-out set is taken by."""

    en: str
    de: str
    en_tagged: str
    de_tagged: str
    source: str
    section: str

    @property
    def plain(self) -> tuple[str, str]:
        return self.en, self.de


def pair_blocks(english: list[Block], german: list[Block], by_id: bool) -> list[tuple[Block, Block]] | None:
    """The blocks of a page paired with its translation's: by id (an id found more than once on
    either side is left out), or by position where both pages have the same sequence of block
    keys; where the sequences differ, only the blocks before and after the difference that pair
    for certain (``_sure_ends``), and None when there are none."""
    if by_id:
        counts_en, counts_de = Counter(b.key for b in english), Counter(b.key for b in german)
        by_key = {b.key: b for b in german if counts_de[b.key] == 1}
        return [(b, by_key[b.key]) for b in english if counts_en[b.key] == 1 and b.key in by_key]
    keys_en, keys_de = [b.key for b in english], [b.key for b in german]
    if keys_en == keys_de:
        return list(zip(english, german))
    head, tail = _sure_ends(keys_en, keys_de)
    if not head and not tail:
        return None
    return [*zip(english[:head], german[:head]),
            *zip(english[len(english) - tail:], german[len(german) - tail:])]


def _sure_ends(a: list[str], b: list[str]) -> tuple[int, int]:
    """How many blocks at the start and at the end of two key sequences that differ pair for
    certain: the common prefix and suffix, each less its last run of the key where the sequences
    part (a block inserted into a run of equal keys could sit anywhere in it), and not overlapping.
    A translation with a paragraph of its own (a translator's note) then loses only the blocks
    around it with the same key."""
    shortest = min(len(a), len(b))
    ends = []
    for x, y in ((a, b), (a[::-1], b[::-1])):
        n = 0
        while n < shortest and x[n] == y[n]:
            n += 1
        parting = {x[n] if n < len(x) else None, y[n] if n < len(y) else None}
        while n and x[n - 1] in parting:
            n -= 1
        ends.append(n)
    head, tail = ends
    return head, max(0, min(tail, shortest - head))


def sentence_spans(text: str, language: str) -> list[tuple[int, int]]:
    """Start and end of each sentence of ``text`` (sentencex's rules for ``language``)."""
    from sentencex import segment  # the core install (worker, client) does without it

    spans: list[tuple[int, int]] = []
    position = 0
    for sentence in segment(language, text):
        stripped = sentence.strip()
        if not stripped:
            continue
        start = text.find(stripped, position)
        if start < 0:  # the segmenter changed the text: no reliable cut
            return [(0, len(text))]
        spans.append((start, start + len(stripped)))
        position = start + len(stripped)
    return spans or [(0, len(text))]


def split_sentences(english: Block, german: Block) -> list[tuple[tuple[Run, ...], tuple[Run, ...]]]:
    """The block pair as sentence pairs where both sides split into the same number of
    sentences, else as one pair."""
    spans_en, spans_de = sentence_spans(english.plain, "en"), sentence_spans(german.plain, "de")
    if len(spans_en) != len(spans_de) or len(spans_en) == 1:
        return [(english.runs, german.runs)]
    return [(cut(english.runs, *a), cut(german.runs, *b)) for a, b in zip(spans_en, spans_de)]


def looks_english(text: str) -> bool:
    """Whether a German side reads as English: at least two English function words and more of
    them than German ones."""
    words = [w.strip(".,:;!?()\"'“”„") for w in text.lower().split()]
    english = sum(w in ENGLISH_WORDS for w in words)
    return english >= 2 and english > sum(w in GERMAN_WORDS for w in words)


def rejection(en: str, de: str) -> str | None:
    """Why a sentence pair is not kept (``identical``: the same once case, punctuation and
    spacing are folded, nothing to learn but copying; ``untranslated``: the German side is
    English), or None."""
    if normalise(en) == normalise(de):
        return "identical"
    if looks_english(de):
        return "untranslated"
    return None


def page_pairs(english: list[Block], german: list[Block], by_id: bool, source: str, section: str,
               counts: Counter) -> list[DocsPair]:
    """The kept pairs of one page; ``counts`` gains pages, pages_unpaired, blocks, blocks_split and
    each rejection."""
    paired = pair_blocks(english, german, by_id)
    counts["pages"] += 1
    if paired is None:
        counts["pages_unpaired"] += 1
        return []
    if not by_id and len(paired) < max(len(english), len(german)):
        counts["pages_partly_paired"] += 1
    pairs: list[DocsPair] = []
    for block_en, block_de in paired:
        counts["blocks"] += 1
        sentences = split_sentences(block_en, block_de)
        counts["blocks_split"] += len(sentences) > 1
        for runs_en, runs_de in sentences:
            en, de = "".join(r.text for r in runs_en), "".join(r.text for r in runs_de)
            reason = rejection(en, de) if en and de else "empty"
            if reason:
                counts[reason] += 1
                continue
            pairs.append(DocsPair(en, de, render(runs_en), render(runs_de), source, section))
    return pairs


def distinct_pairs(pairs: Iterable[DocsPair], counts: dict[str, Counter]) -> list[DocsPair]:
    """The pairs without exact repeats of an earlier (English, German) pair (the first kept:
    LibreOffice embeds one paragraph in many pages); ``counts[source]["duplicates"]`` gains each."""
    seen: set[tuple[str, str]] = set()
    kept: list[DocsPair] = []
    for pair in pairs:
        if pair.plain in seen:
            counts[pair.source]["duplicates"] += 1
            continue
        seen.add(pair.plain)
        kept.append(pair)
    return kept
