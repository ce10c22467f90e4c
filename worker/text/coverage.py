"""How much of its source a translation carries: the share of the source's visible characters
(not spaces, control or format characters) that reappear in the translation or are aligned to
its words. A translation that carries less than ``DROPPED_BELOW`` of them is flagged
``dropped_text`` (worker.text.quality): "Einnamen" for 20,000 braces and a name, emoji gone.

A source word counts in full when it reappears as a word of the translation (a span, a number, a
name); else for up to ``ALIGNED_RATIO`` characters per visible character of the target words
aligned to it, so a 20,000-character word aligned to one short word counts for little; a word of
symbols alone (emoji, arrows) counts only where it reappears: thirty emoji aligned to
"Beschreibung" were not translated. Attention
alignments skip words ("are", "the"): an unaligned word of at most ``GAP_WORD`` characters in a
gap of at most ``GAP_WORDS`` words between aligned ones counts in full.

``too_short``: a word or two come back as under half their letters (``Aug`` -> ``A``).

``halved``: a sentence of ``HALVED_WORDS`` words or more comes back with under half of its letters
outside its spans: ``With only 80,000 lines of /usr/share/dict/linux.words, the following`` ->
``Mit 80,000 nur aus /usr/share/dict/linux.words,`` (German takes more letters than English, not half).

``words_lost``: the words around what is copied are gone. ``%(value)s million`` -> ``%(value)s``
carries 9 of 16 characters, yet its only word to translate is lost.
"""
from __future__ import annotations

import re
import unicodedata
from collections import defaultdict

from .segment import Alignment
from .spans import find_spans

ALIGNED_RATIO = 2
HALVED_WORDS = 5  # words of two letters or more, outside spans, that a sentence needs for ``halved``
DROPPED_BELOW = 0.5
GAP_WORDS = 3
GAP_WORD = 12
_PUNCTUATION = ".,;:!?\"'()[]{}<>«»„“”‘’-"


def visible(text: str) -> int:
    """Characters of ``text`` that are neither space nor control or format characters."""
    return sum(1 for c in text if not c.isspace() and unicodedata.category(c) not in ("Cc", "Cf"))


def coverage(source: str, translation: str, alignment: Alignment) -> float:
    """The share in [0, 1] of ``source``'s visible characters the translation carries (1 for a
    source with none). ``alignment``: word pairs and character spans of both, in their offsets."""
    total = visible(source)
    if not total:
        return 1.0
    target_words = [translation[a:b] for a, b in alignment.target_spans]
    present = set(target_words) | {w.strip(_PUNCTUATION) for w in target_words}
    aligned: dict[int, int] = defaultdict(int)
    for i, j in alignment.pairs:
        if j < len(target_words):
            aligned[i] += visible(target_words[j])
    spans = alignment.source_spans
    gap = _in_short_gaps([i in aligned for i in range(len(spans))])
    covered = 0
    for i, (a, b) in enumerate(spans):
        word = source[a:b]
        n = visible(word)
        core = word.strip(_PUNCTUATION)
        if word in present or (core and core in present) or (gap[i] and n <= GAP_WORD):
            covered += n
        elif any(c.isalnum() for c in word):
            covered += min(n, ALIGNED_RATIO * aligned[i])
        # else a word of symbols alone (emoji, arrows, dashes): no translation carries it but itself
    return min(1.0, covered / total)


def _in_short_gaps(aligned: list[bool]) -> list[bool]:
    """For each word, whether it is unaligned in a run of at most GAP_WORDS such words with an
    aligned word on both sides."""
    out = [False] * len(aligned)
    i = 0
    while i < len(aligned):
        if aligned[i]:
            i += 1
            continue
        j = i
        while j < len(aligned) and not aligned[j]:
            j += 1
        if i > 0 and j < len(aligned) and j - i <= GAP_WORDS:
            out[i:j] = [True] * (j - i)
        i = j
    return out


def words_lost(source: str, translation: str, alignment: Alignment) -> bool:
    """Whether the source has a word to translate (two letters or more, not copied as it is) and
    the translation has no word of its own: only what it copied from the source (placeholders,
    names, numbers) or nothing with letters at all."""
    source_words = {source[a:b].strip(_PUNCTUATION) for a, b in alignment.source_spans}
    target_words = [translation[a:b].strip(_PUNCTUATION) for a, b in alignment.target_spans]
    copied = set(target_words)
    to_translate = [w for w in source_words if w not in copied and sum(c.isalpha() for c in w) >= 2]
    if not to_translate:
        return False
    return not any(w not in source_words and any(c.isalpha() for c in w) for w in target_words)


def too_short(source: str, translation: str) -> bool:
    """Whether a source of one or two words (three letters or more) has a translation with under
    half its letters: ``Aug`` -> ``A``, ``nov`` -> ``v`` (the characters a one-letter word aligned
    to a short one carries are too few to tell)."""
    words = [w for w in source.split() if any(c.isalpha() for c in w)]
    letters = sum(c.isalpha() for c in source)
    return 1 <= len(words) <= 2 and letters >= 3 and 2 * sum(c.isalpha() for c in translation) < letters


def halved(source: str, translation: str) -> bool:
    """Whether ``source``, of ``HALVED_WORDS`` words (two letters or more) or more outside its
    spans, comes back with under half of those letters outside the translation's spans."""
    words = re.findall(r"[^\W\d_]{2,}", _outside_spans(source))
    if len(words) < HALVED_WORDS:
        return False
    return 2 * sum(map(str.isalpha, _outside_spans(translation))) < sum(map(len, words))


def _outside_spans(text: str) -> str:
    parts, cursor = [], 0
    for span in find_spans(text):
        parts.append(text[cursor:span.start])
        cursor = span.end
    return " ".join(parts + [text[cursor:]])
