"""Putting masked spans back into a translation, and moving its word alignment along.

The translation of a masked sentence holds stand-ins where the spans go. Each span replaces its
stand-in (copied); a stand-in the model changed is found through the alignment: the target words
aligned to the stand-in's source word and to nothing else (aligned); a dropped one is inserted
after the translation of the source word before it, or before that of the word after it
(inserted). Extra copies of stand-ins and spans the model invented (a number made up from a masked
one) are deleted, so the output never holds a span the source did not.

Glossary terms are kept slots: the term stayed in the decoded text, and its target term
(``Span.replacement``) goes where the model wrote it already (copied), else in place of the model's
translation of the term, found through the alignment (aligned), else it is inserted as above.
"""
from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter, defaultdict
from dataclasses import dataclass, field, replace
from difflib import SequenceMatcher
from typing import Any, Collection, Iterable, Sequence

from .masking import Masked, Placement, Slot, slot_source_words, slot_words, source_word_map, stand_in_pattern
from .names import KEPT_NAME
from .segment import word_at, word_spans
from .spans import KINDS, LONG, PLACEHOLDER, RUN, find_spans

# The kinds of span ``reinserted(..., made_up=True)`` deletes from a translation without masked
# spans where the source lacks them (a sentence flagged span_mismatch: ``Translator._consistent``):
# every kind ``find_spans`` reads but numbers, which may translate a word ("two hyphens" -> "2 Bindestriche").
MADE_UP = frozenset(KINDS + (RUN, LONG)) - {"number"}
_GAP = re.compile(r"(?<=[^\s.!?:;]) {2,}(?=\S)")  # two spaces or more inside a sentence (``_gaps``)

_CLOSING = ".,;:!?\"')]»”’"
_OPENING = "\"'([«„“‘"
_FINAL = ".!?"
_QUOTED_BEFORE = "\"'`([{«»„“‘‚‹›"  # what may stand between a span and the gap before it
_QUOTED_AFTER = "\"'`)]}»«“”’‘‹›,"  # ... and after it
_SENTENCE_END = ".!?:;"
_GAP_BEFORE = re.compile(r"(?<=[^\s.!?:;]) {2,}")
_GAP_AFTER = re.compile(r" {2,}(?=\S)")
_GAP_ENDING = re.compile(r"(?<=[^\s.!?:;]) {2,}\Z")
# an opening quote or bracket and the one that closes it (German, English, French and straight ones)
_PAIRS = {"»": "«", "«": "»", "„": "“", "“": "”", "‚": "‘", "‘": "’", "'": "'", '"': '"', "(": ")", "[": "]"}
# an empty pair in the source: the place of a code the model is not shown (a DOCX run, an HTML <code>)
# in the source's quotes, whose translation quotes it again (``»%s« kann`` for ``‘’ does``)
_EMPTY_PAIR = re.compile("|".join(re.escape(opening + closing) for opening, closing in _PAIRS.items()))


@dataclass(frozen=True)
class Restored:
    translation: str
    pairs: tuple[tuple[int, int], ...]  # (source word, target word) over the original source
    placements: tuple[Placement, ...]
    removed: tuple[str, ...]  # texts deleted from the model's output (leaked stand-ins, invented spans)


@dataclass(frozen=True)
class _Edit:
    start: int  # old [start, end) replaced by ``text``
    end: int
    text: str
    slot: Slot | None = None
    method: str = ""


@dataclass(frozen=True)
class Reinserted:
    """What the spans' pass of ``worker.text.pipeline.restore`` hands on."""

    translation: str
    pairs: tuple[tuple[int, int], ...]  # (source word, target word) over the original source
    n_best: tuple[str, ...]  # the n-best list's translations, spans back (placed without an alignment)
    placements: tuple[Placement, ...] = ()  # every slot's, glossary terms' (kept slots) too
    details: dict[str, Any] = field(default_factory=dict)  # "spans", "names", "removed" of a SegmentResult
    restored: bool = False  # a span or name placed otherwise than copied, or text removed: RESTORED_SPAN


def reinserted(masked: Masked, translation: str, n_best: Sequence[str], pairs: Sequence[tuple[int, int]],
               carried: Collection[Slot] = (), protected: Sequence[tuple[int, int]] = (),
               made_up: bool = False) -> Reinserted:
    """The spans' pass: ``translation`` (the best hypothesis, in the source's case; ``pairs`` its
    alignment to the masked text) and its ``n_best`` list with every slot's span back, but for the
    names' slots the translation ``carried`` (``protected``: where it wrote them). A sentence with
    masked spans loses every span the model made up (one its source lacks); one without loses only
    made-up placeholders (its numbers are translations), or with ``made_up`` the spans of the
    kinds ``MADE_UP`` (the best of a beam none of whose hypotheses kept the source's spans: ``/d``
    made up for ``append / indicator``). A translation with nothing to put back or take out comes
    back as it is."""
    masked = replace(masked, slots=tuple(s for s in masked.slots if s not in carried))
    details: dict[str, Any] = {}
    if not (masked.slots or made_up or made_up_placeholders(masked.source, translation) or _GAP.search(masked.source)):
        if masked.unmasked:
            details["spans"] = _unprotected(masked)
        return Reinserted(translation, tuple(pairs), tuple(n_best), details=details)
    invented = _invented_kinds(masked, made_up)
    restored = restore_spans(masked, translation, pairs, invented, protected)
    placements = [p for p in restored.placements if not p.slot.kept]  # verbatim spans'
    named = [p for p in restored.placements if p.slot.span.kind == KEPT_NAME]
    if any(not s.kept for s in masked.slots) or masked.unmasked:
        details["spans"] = [p.slot.span.to_json() | {"target": [p.start, p.end], "method": p.method}
                            for p in placements]
        details["spans"] += _unprotected(masked)
        details["spans"].sort(key=lambda d: d["source"])
    if named:
        details["names"] = [p.slot.span.to_json() | {"target": [p.start, p.end], "method": p.method} for p in named]
    if restored.removed:
        details["removed"] = list(restored.removed)
    return Reinserted(restored.translation, restored.pairs,
                      tuple(restore_spans(masked, t, (), invented).translation for t in n_best),
                      restored.placements, details,
                      bool(restored.removed or any(p.method != "copied" for p in placements + named)))


def reinserted_texts(masked: Masked, texts: Sequence[str]) -> list[str]:
    """Each of ``texts`` (hypotheses for the masked text, in the source's case) with its spans back,
    placed without an alignment, and the placeholders it made up out where the sentence has no
    masked spans."""
    return [t if not (masked.slots or made_up_placeholders(masked.source, t))
            else restore_spans(masked, t, (), _invented_kinds(masked)).translation for t in texts]


def _invented_kinds(masked: Masked, made_up: bool = False) -> Collection[str] | None:
    """The kinds of made-up span deleted from a translation of ``masked``: every kind where it has
    slots (None); without, only placeholders (its numbers are translations), or with ``made_up``
    the kinds ``MADE_UP``."""
    return None if masked.slots else MADE_UP if made_up else (PLACEHOLDER,)


def _unprotected(masked: Masked) -> list[dict[str, Any]]:
    """The details of the spans left in the text (more spans than stand-ins): placed nowhere."""
    return [s.to_json() | {"target": None, "method": "unprotected"} for s in masked.unmasked]


def made_up_placeholders(source: str, translation: str) -> bool:
    """Whether the translation holds a placeholder more often than the source does."""
    def count(text: str) -> Counter:
        return Counter(s.text for s in find_spans(text) if s.kind == PLACEHOLDER)
    return bool(count(translation) - count(source))


def restore_spans(masked: Masked, translation: str, pairs: Sequence[tuple[int, int]],
                  invented: Collection[str] | None = None, protected: Sequence[tuple[int, int]] = ()) -> Restored:
    """The translation with every slot's span back; ``pairs`` index the masked text's words and
    ``translation``'s words. ``invented``: the kinds of spans the model made up that are deleted
    (None: every kind); ``protected``: character ranges of the translation no slot may replace
    (names the model wrote itself)."""
    target = word_spans(translation)
    starts = [a for a, _ in target]
    words_of = {slot: slot_words(masked, slot) for slot in masked.slots}
    pairs = _anchored(masked, translation, target, pairs, set().union(*words_of.values()) if words_of else set())
    targets_of: dict[int, set[int]] = defaultdict(set)
    sources_of: dict[int, set[int]] = defaultdict(set)
    for i, j in pairs:
        targets_of[i].add(j)
        sources_of[j].add(i)
    edits = _copied(masked, translation, starts, {s: min(w) for s, w in words_of.items()}, targets_of)
    edits += _compounded(masked, translation, edits)
    edits += _misspelt(masked, translation, edits)
    edits += _stray_percent(masked, translation, edits)
    edits += _kept(masked, translation, starts, words_of, targets_of)
    found = {e.slot for e in edits if e.slot}
    claimed = {word_at(starts, e.start) for e in edits if e.slot}
    claimed |= {j for j, (a, b) in enumerate(target) if any(p < b and a < q for p, q in protected)}
    for slot in masked.slots:
        if slot in found:
            continue
        if slot.kept:
            edit = _kept_aligned(slot, words_of[slot], target, translation, targets_of, claimed)
            if edit is not None:  # a word it replaces in part (after an opening quote) is taken too
                claimed |= {j for j, (a, b) in enumerate(target) if a < edit.end and edit.start < b}
        else:
            edit = _aligned(slot, words_of[slot], target, translation, targets_of, sources_of, claimed,
                            {i for s in found for i in words_of[s]})
        if edit is None:
            edit = _inserted(slot, words_of[slot], target, translation, targets_of)
        else:
            claimed |= {j for j, (a, b) in enumerate(target) if edit.start <= a < edit.end}
        edits.append(edit)
    edits += _invented(masked, translation, target, edits, invented)
    edits += _gaps(masked, translation, target, edits, targets_of)
    edits = _quoted(masked, translation, _apart(masked, translation, _resolve(edits, translation)))
    return _apply(masked, translation, target, pairs, edits)


def _overlaps(start: int, end: int, edits: Iterable[_Edit]) -> bool:
    """Whether [start, end) of the translation overlaps one of ``edits``."""
    return any(e.start < end and start < e.end for e in edits)


def _source_words(masked: Masked) -> set[str]:
    """The source's words, lower-cased: a word of the translation that is one is no stand-in's."""
    return {w.lower() for w in re.findall(r"\w+", masked.source)}


_COMPOUND_REST = 3  # letters a compound's rest has at least (Maria + vorlagen)
_COMPOUND_STAND_IN = 4  # letters a stand-in has at least to be taken as a compound's first part


def _compounded(masked: Masked, translation: str, edits: list[_Edit]) -> list[_Edit]:
    """A stand-in not copied as a word of its own but as the first part of a German compound
    (``Mariavorlagen`` for ``OpenOffice.org template``): the span, a hyphen and the rest as German
    joins a name to a noun (``OpenOffice.org-Vorlagen``), when the word is no word of the source.
    Only stand-ins of four letters or more that the source does not hold itself: ``Tomaten`` is a
    word, and ``Pariser`` may translate the source's own ``Paris``."""
    found = {e.slot for e in edits if e.slot}
    source_words = _source_words(masked)
    out: list[_Edit] = []
    for slot in masked.slots:
        if slot.kept or slot in found or len(slot.stand_in) < _COMPOUND_STAND_IN or slot.stand_in.lower() in source_words:
            continue
        pattern = re.compile(r"(?<!\w)" + re.escape(slot.stand_in) + r"(?P<rest>[a-zäöüß]{%d,})(?!\w)" % _COMPOUND_REST)
        for match in pattern.finditer(translation):
            if match.group().lower() not in source_words and not _overlaps(*match.span(), edits + out):
                rest = match.group("rest")
                out.append(_Edit(match.start(), match.end(), f"{slot.span.replacement}-{rest[0].upper()}{rest[1:]}",
                                 slot, "copied"))
                break
    return out


_MISSPELT_TAIL = 4  # letters a stand-in's misspelling keeps of its end (Maria -> »araria«)


def _misspelt(masked: Masked, translation: str, edits: list[_Edit]) -> list[_Edit]:
    """A stand-in not copied but misspelt, its end kept (the documentation model writes
    ``»araria«`` for ``"Maria"``): a word no longer than the stand-in and two letters, that ends
    with all but the stand-in's first letter (four or more) and is no word of the source, is its
    place (copied). Only stand-ins of five letters or more: a shorter end matches German words."""
    found = {e.slot for e in edits if e.slot}
    source_words = _source_words(masked)
    out: list[_Edit] = []
    for slot in masked.slots:
        tail = slot.stand_in[1:].lower()
        if slot.kept or slot in found or len(tail) < _MISSPELT_TAIL:
            continue
        for match in re.finditer(r"\w+", translation):
            word = match.group().lower()
            if (word.endswith(tail) and word != slot.stand_in.lower() and len(word) <= len(slot.stand_in) + 2
                    and word not in source_words
                    and not _overlaps(*match.span(), edits + out)):
                out.append(_Edit(match.start(), match.end(), slot.span.replacement, slot, "copied"))
                break
    return out


_LONE_PERCENT = re.compile(r"(?<!\S)%(?:\s+|$)")


def _stray_percent(masked: Masked, translation: str, edits: list[_Edit]) -> list[_Edit]:
    """A lone "%" the model wrote before a masked printf directive's stand-in (the documentation
    model, trained on catalogues: ``Block % Maria`` for ``block %u``), where the source has no "%"
    outside its masked spans: deleted, with the space after it. Left in, it reads as a directive."""
    if not any(s.span.kind == PLACEHOLDER for s in masked.slots if not s.kept):
        return []
    masked_ranges = [(s.span.start, s.span.end) for s in masked.slots if not s.kept]
    if any(c == "%" and not any(a <= k < b for a, b in masked_ranges) for k, c in enumerate(masked.source)):
        return []
    return [_Edit(m.start(), m.end(), "") for m in _LONE_PERCENT.finditer(translation)
            if not _overlaps(*m.span(), edits)]


_QUOTES = "\"'»«„“”‚‘’"
_OPENING_OF = {closing: opening for opening, closing in _PAIRS.items() if opening in _QUOTES}  # a quote's opening one


def _quoted(masked: Masked, translation: str, edits: list[_Edit]) -> list[_Edit]:
    """A span the source quotes (``file "%s": %m``) keeps both quotes: where the model wrote the
    opening one before it and dropped the closing one (``Datei "%s nicht lesen``), or the reverse,
    the missing one is put in, of the kind the model opened or closed with."""
    source, out = masked.source, []
    for edit in edits:
        span = edit.slot.span if edit.slot and not edit.slot.kept else None
        if span is not None and edit.start < edit.end and span.start and source[span.start - 1] in _QUOTES \
                and source[span.end:span.end + 1] in tuple(_QUOTES):
            before, after = translation[edit.start - 1:edit.start], translation[edit.end:edit.end + 1]
            closing = _PAIRS.get(before) if before in _QUOTES else None
            if closing and after != closing and not (after and after in _QUOTES):
                out.append(_Edit(edit.end, edit.end, closing))
            elif after in _OPENING_OF and not (before and (before in _QUOTES or before.isalnum())):
                out.append(_Edit(edit.start, edit.start, _OPENING_OF[after]))
        out.append(edit)
    return out


def _apart(masked: Masked, translation: str, edits: list[_Edit]) -> list[_Edit]:
    """A span that opens the sentence set apart from the word after it (a section's number: ``5.1.4
    Input file interpretation``) stays apart: where the model joined the next word to it with a
    hyphen, as German joins a compound (``5.1.4-Input-Datei``), the hyphen becomes a space."""
    source, out = masked.source, []
    for edit in edits:
        span = edit.slot.span if edit.slot and not edit.slot.kept else None
        if (span is not None and edit.start < edit.end and not source[:span.start].strip() and source[span.end:span.end + 1].isspace()
                and translation[edit.end:edit.end + 1] == "-" and translation[edit.end + 1:edit.end + 2].isalpha()):
            edit = _Edit(edit.start, edit.end + 1, edit.text + " ", edit.slot, edit.method)
        out.append(edit)
    return out


def _gaps(masked: Masked, translation: str, target: list[tuple[int, int]], edits: list[_Edit],
          targets_of: dict[int, set[int]]) -> list[_Edit]:
    """A run of two or more spaces between a span (with the quotes and brackets around it) and
    a word of the source comes back where the model wrote one space on that side of the copied
    span: ``or  '--test-label'``, stat's ``(%04a/%10.10A)  Uid:``; one between two words, before
    the translation of the word after it (else after that of the word before it), as the alignment
    has them: ``package name  followed by``. Two spaces after a sentence's end are a typing habit,
    not a gap."""
    source, out = masked.source, []
    slotted = {i for slot in masked.slots if not slot.kept for i in slot_words(masked, slot)}
    starts = [a for a, _ in word_spans(masked.text)]
    for gap in _GAP_BEFORE.finditer(masked.text):
        if not masked.text[gap.end():gap.end() + 1].strip():
            continue
        after = word_at(starts, gap.end())
        if after in slotted or after - 1 in slotted:
            continue  # beside a span: placed by the span, below
        if targets_of[after]:
            j = target[min(targets_of[after])][0]
            if j >= 2 and translation[j - 1] == " " and translation[j - 2].strip():
                out.append(_Edit(j - 1, j, gap.group()))
        elif after and targets_of[after - 1]:
            j = target[max(targets_of[after - 1])][1]
            if translation[j:j + 1] == " " and translation[j + 1:j + 2].strip():
                out.append(_Edit(j, j + 1, gap.group()))
    for edit in edits:
        if edit.slot is None or edit.slot.kept or edit.method != "copied":
            continue
        k, j = edit.slot.span.start, edit.start  # before the span, and before its stand-in
        while k and source[k - 1] in _QUOTED_BEFORE:
            k -= 1
        while j and translation[j - 1] in _QUOTED_BEFORE:
            j -= 1
        gap = _GAP_ENDING.search(source[:k])
        if gap and j >= 2 and translation[j - 1] == " " and not translation[j - 2].isspace():
            out.append(_Edit(j - 1, j, gap.group()))
        k, j = edit.slot.span.end, edit.end  # after them
        while k < len(source) and source[k] in _QUOTED_AFTER:
            k += 1
        while j < len(translation) and translation[j] in _QUOTED_AFTER:
            j += 1
        gap = _GAP_AFTER.match(source, k)
        if gap and source[k - 1] not in _SENTENCE_END and translation[j:j + 1] == " " \
                and translation[j + 1:j + 2].strip():
            out.append(_Edit(j, j + 1, gap.group()))
    return out


def _anchored(masked: Masked, translation: str, target: list[tuple[int, int]], pairs: Sequence[tuple[int, int]],
              slotted: set[int]) -> list[tuple[int, int]]:
    """``pairs`` with each target word that repeats a source word outside the slots (the same
    letters in any case: ``Million`` for ``million``) aligned to that word and no stand-in's. The
    attention may put such a word on a neighbouring stand-in; replacing it by the span would lose
    the word: ``%(value)s million`` -> ``%(value)s``."""
    source = [masked.text[a:b].strip(_OPENING + _CLOSING).casefold() for a, b in word_spans(masked.text)]
    where: dict[str, list[int]] = defaultdict(list)
    for i, word in enumerate(source):
        if i not in slotted and sum(c.isalpha() for c in word) >= 2:
            where[word].append(i)
    out = set(pairs)
    for j, (a, b) in enumerate(target):
        found = where.get(translation[a:b].strip(_OPENING + _CLOSING).casefold(), [])
        if len(found) == 1:
            out = {(i, k) for i, k in out if k != j or i not in slotted} | {(found[0], j)}
    return sorted(out)


def _copied(masked: Masked, translation: str, starts: list[int], slot_word: dict[Slot, int],
            targets_of: dict[int, set[int]]) -> list[_Edit]:
    """Each slot's stand-in occurrence (the one aligned to it, else the first); the other
    occurrences are deleted."""
    by_text = {slot.stand_in: slot for slot in masked.slots if not slot.kept}
    if not by_text:
        return []
    chosen: dict[Slot, tuple[int, int]] = {}
    extra: list[tuple[int, int]] = []
    for match in stand_in_pattern(list(by_text)).finditer(translation):
        slot = by_text[match.group("stand_in")]
        aligned = word_at(starts, match.start()) in targets_of[slot_word[slot]]
        if slot not in chosen:
            chosen[slot] = match.span()
        elif aligned and word_at(starts, chosen[slot][0]) not in targets_of[slot_word[slot]]:
            extra.append(chosen[slot])
            chosen[slot] = match.span()
        else:
            extra.append(match.span())
    edits = [_Edit(a, b, slot.span.replacement, slot, "copied") for slot, (a, b) in chosen.items()]
    quotes = not _EMPTY_PAIR.search(masked.source)
    return edits + [_deletion(translation, a, b, quotes) for a, b in extra]


def _kept(masked: Masked, translation: str, starts: list[int], words_of: dict[Slot, set[int]],
          targets_of: dict[int, set[int]]) -> list[_Edit]:
    """Kept glossary terms whose target term the model wrote itself (any case, whole words): the
    occurrence aligned to the term's words, else the first one no other term took. Nothing is deleted."""
    edits: list[_Edit] = []
    for slot in (s for s in masked.slots if s.kept):
        pattern = re.compile(r"(?<!\w)" + re.escape(slot.span.replacement) + r"(?!\w)", re.IGNORECASE)
        aligned = {j for i in words_of[slot] for j in targets_of[i]}
        free = [m.span() for m in pattern.finditer(translation)
                if not _overlaps(*m.span(), edits)]
        if free:
            a, b = next((m for m in free if word_at(starts, m[0]) in aligned), free[0])
            edits.append(_Edit(a, b, slot.span.replacement, slot, "copied"))
    return edits


def _aligned(slot: Slot, words: set[int], target: list[tuple[int, int]], translation: str,
             targets_of: dict[int, set[int]], sources_of: dict[int, set[int]], claimed: set[int],
             copied: set[int]) -> _Edit | None:
    """Replace the target words aligned to the slot's words alone (a contiguous run); being
    aligned to the word of a stand-in that was copied as well does not count."""
    run = sorted({j for i in words for j in targets_of[i]
                  if (sources_of[j] - copied) and sources_of[j] - copied <= words and j not in claimed})
    if not run or run[-1] - run[0] + 1 != len(run):
        return None
    return _replacing(slot, target[run[0]][0], target[run[-1]][1], translation)


def _kept_aligned(slot: Slot, words: set[int], target: list[tuple[int, int]], translation: str,
                  targets_of: dict[int, set[int]], claimed: set[int]) -> _Edit | None:
    """A kept term's target replaces the model's translation of it: of the target words aligned to
    the term's words, the run as long as the target term (in words) that looks most like it (first
    letters in the same case, then string similarity): the model's form of the same word, usually."""
    aligned = sorted({j for i in words for j in targets_of[i]} - claimed)
    term = slot.span.replacement
    runs = []  # runs of consecutive aligned target words, 1 to len(term words) long
    for k in range(len(aligned)):
        for n in range(1, len(term.split()) + 1):
            run = aligned[k:k + n]
            if len(run) == n and run[-1] - run[0] == n - 1:
                runs.append(run)
    if not runs:
        return None

    def likeness(run: list[int]) -> tuple[bool, float]:
        text = translation[target[run[0]][0]:target[run[-1]][1]].strip(_OPENING + _CLOSING)
        return text[:1].isupper() == term[:1].isupper(), SequenceMatcher(None, text.casefold(), term.casefold()).ratio()

    if slot.span.kind == KEPT_NAME:  # a name takes the place of a capitalised word only, never of "in"
        runs = [run for run in runs if likeness(run)[0]]
        if not runs:
            return None
    best = max(runs, key=likeness)  # of equals, max keeps the first
    return _replacing(slot, target[best[0]][0], target[best[-1]][1], translation)


def _replacing(slot: Slot, start: int, end: int, translation: str) -> _Edit | None:
    """The slot's replacement in place of translation[start:end] less the opening and closing
    punctuation around it (kept unless the replacement ends with it)."""
    while start < end and translation[start] in _OPENING:
        start += 1
    while end > start and translation[end - 1] in _CLOSING and not slot.span.replacement.endswith(translation[end - 1]):
        end -= 1
    return _Edit(start, end, slot.span.replacement, slot, "aligned") if end > start else None


def _inserted(slot: Slot, words: set[int], target: list[tuple[int, int]], translation: str,
              targets_of: dict[int, set[int]]) -> _Edit:
    """Insert the span after the translation of the nearest source word before the slot's words,
    else before that of the nearest word after them, else at the end (before final punctuation)."""
    for i in range(min(words) - 1, -1, -1):
        if targets_of[i]:
            j = max(targets_of[i])
            end = target[j][1]
            if j == len(target) - 1:
                while end > target[j][0] and translation[end - 1] in _FINAL:
                    end -= 1
            lead = " " if end and not translation[end - 1].isspace() else ""  # "..." alone: "%s..."
            return _Edit(end, end, lead + slot.span.replacement, slot, "inserted")
    for i in range(max(words) + 1, max(targets_of, default=-1) + 1):
        if targets_of[i]:
            start = target[min(targets_of[i])][0]
            return _Edit(start, start, slot.span.replacement + " ", slot, "inserted")
    end = len(translation.rstrip())
    while end and translation[end - 1] in _FINAL:
        end -= 1
    return _Edit(end, end, (" " if end else "") + slot.span.replacement, slot, "inserted")


def _invented(masked: Masked, translation: str, target: list[tuple[int, int]], edits: list[_Edit],
              kinds: Collection[str] | None = None) -> list[_Edit]:
    """Deletions of spans in the model's output that the source does not hold (of ``kinds``; None:
    every kind). A placeholder may stand as often as the decoded text holds it, no more: a
    translation never gains a ``%s``."""
    known = {t for s in masked.slots for t in (s.span.text, s.span.replacement)} | {s.text for s in masked.unmasked}
    # placeholders the model was shown (unmasked spans, or inside one: "{}" of an unmasked "\x7f{}")
    budget = Counter(s.text for s in find_spans(masked.text) if s.kind == PLACEHOLDER)
    out = []
    quotes = not _EMPTY_PAIR.search(masked.source)
    ours: dict[str, bool] = {}  # span text -> whether the source holds it (texts repeat)
    for span in find_spans(translation):
        if kinds is not None and span.kind not in kinds:
            continue
        if _overlaps(span.start, span.end, edits):
            continue
        if span.kind == PLACEHOLDER:
            if budget[span.text] > 0:
                budget[span.text] -= 1
                continue
        elif ours.setdefault(span.text, span.text in masked.source or _related(span.text, known)):
            continue  # the source's own text ("0800" glued to a masked word), or a known span's
        start = span.start
        if span.kind == "option" and span.text[:1].isalpha():  # the word before the options, read as their
            start = span.end - len(span.text.split(None, 1)[1])  # program ("ifconfig -a"): a word of the translation
        out.append(_deletion(translation, start, span.end, quotes))
    return out


def _related(text: str, known: set[str]) -> bool:
    """Whether ``text`` is in one of ``known`` or holds one; in time linear in ``text`` for short
    texts (a document may hold thousands of known numbers)."""
    if any(text in k for k in known if len(k) >= len(text)):
        return True
    lengths = {len(k) for k in known if len(k) <= len(text)}
    if len(text) > 64:
        return any(k in text for k in known if len(k) <= len(text))
    return any(text[i:i + n] in known for n in lengths for i in range(len(text) - n + 1))


def _deletion(translation: str, start: int, end: int, quotes: bool = True) -> _Edit:
    """Delete [start, end), with the quotes or brackets round it when they hold it alone (the model's
    ``die Option »-g«``) and ``quotes`` (False where the source holds an empty pair: a code's place,
    ``_EMPTY_PAIR``); a whole word goes with one neighbouring space."""
    if quotes and start and end < len(translation) and _PAIRS.get(translation[start - 1]) == translation[end]:
        start, end = start - 1, end + 1
    word_start = start == 0 or translation[start - 1].isspace()
    word_end = end == len(translation) or translation[end].isspace() or translation[end] in _CLOSING
    if word_start and word_end:
        if end < len(translation) and translation[end] == " ":
            end += 1
        elif start and translation[start - 1] == " ":
            start -= 1
    return _Edit(start, end, "")


def _unquoted(text: str) -> str:
    """``text`` without the quotes or brackets round it that ``_deletion`` took along."""
    return text[1:-1] if len(text) > 2 and _PAIRS.get(text[0]) == text[-1] else text


def _resolve(edits: list[_Edit], translation: str) -> list[_Edit]:
    """Edits that do not overlap: a deletion under a span's replacement is dropped; a span
    inserted where a word is deleted (a number the model made up from it) takes that word's place."""
    slots = [e for e in edits if e.slot]
    deletions = [d for d in edits if not d.slot and not _overlaps(d.start, d.end, slots)]
    out = [e for e in slots if e.start < e.end]
    for insertion in (e for e in slots if e.start == e.end):
        host = next((d for d in deletions if d.start <= insertion.start <= d.end), None)
        if host is None:
            out.append(insertion)
            continue
        deletions.remove(host)
        removed = translation[host.start:host.end]
        text = (" " if removed[:1].isspace() else "") + insertion.text.strip() + (" " if removed[-1:].isspace() else "")
        out.append(_Edit(host.start, host.end, text, insertion.slot, "aligned"))
    return out + deletions


def _apply(masked: Masked, translation: str, target: list[tuple[int, int]], pairs: Sequence[tuple[int, int]],
           edits: list[_Edit]) -> Restored:
    """Apply non-overlapping edits; move word pairs from the old words to the new ones."""
    edits = sorted(edits, key=lambda e: (e.start, e.end, e.slot.start if e.slot else -1))
    parts, shifts, cursor = [], [], 0  # shifts: (old offset, new - old) from that offset on
    new_ranges: list[tuple[_Edit, int, int]] = []
    length = 0
    for edit in edits:
        if edit.start < cursor:  # overlaps an earlier edit: a span goes right after it, a deletion
            if edit.slot:  # keeps what lies beyond, other edits are skipped
                edit = _Edit(cursor, max(cursor, edit.end), edit.text, edit.slot, edit.method)
            elif edit.text or edit.end <= cursor:
                continue
            else:
                edit = _Edit(cursor, edit.end, "")
        parts.append(translation[cursor:edit.start])
        length += edit.start - cursor
        text = edit.text
        lead = len(text) - len(text.lstrip(" "))
        new_ranges.append((edit, length + lead, length + lead + len(text.strip(" "))))
        parts.append(text)
        length += len(text)
        cursor = edit.end
        shifts.append((edit.end, length - edit.end))
    parts.append(translation[cursor:])
    restored = "".join(parts)
    new_starts = [a for a, _ in word_spans(restored)]
    src_map = source_word_map(masked)
    keys = [k for k, _ in shifts]

    def moved(offset: int) -> int:
        k = bisect_right(keys, offset) - 1
        return offset + (shifts[k][1] if k >= 0 else 0)

    gone = [(e.start, e.end) for e, _, _ in new_ranges if not e.text or e.slot]
    span_words: dict[int, list[int]] = {}
    placements = []
    for edit, a, b in new_ranges:
        if edit.slot:
            placements.append(Placement(edit.slot, a, b, edit.method))
            for j in {word_at(new_starts, a), word_at(new_starts, max(a, b - 1))}:
                span_words.setdefault(j, []).extend(slot_source_words(masked, edit.slot))
    new_pairs: set[tuple[int, int]] = {(i, j) for j, sources in span_words.items() for i in sources}
    for i, j in pairs:
        a, b = target[j]
        if any(s <= a and b <= e for s, e in gone):
            continue  # the word was deleted or replaced by a span
        j_new = word_at(new_starts, moved(a))
        if j_new not in span_words and i < len(src_map):
            new_pairs.add((src_map[i], j_new))
    removed = tuple(_unquoted(translation[e.start:e.end].strip()) for e, _, _ in new_ranges if not e.text)
    placements.sort(key=lambda p: p.slot.start)
    return Restored(restored, tuple(sorted(new_pairs)), tuple(placements), removed)
