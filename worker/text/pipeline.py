"""What the Translator runs around decoding, per sentence: ``prepare`` (find verbatim spans; copy
a segment that is not prose through; find glossary terms and names, put the sentence in ordinary
case, mask spans, keep terms and names as slots) -> the engine decodes ``Prepared.text`` ->
``restore`` (a fixed sequence of passes, each module entered once: case back (``casing``), the
names the translation carries (``names``), spans, target terms and lost names back, made-up spans
out, alignment moved to the original words (``reinsert``), the glossary's terms checked
(``glossary``); flags and details).

Flags name what a reader of the translation should check; later steps (language check, quality
estimate, glossary) add theirs to ``FLAGS`` and to a result's ``flags`` the same way.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any, Callable, Sequence

from . import casing
from .glossary import Glossary, applied, find_terms
from .keynames import localise_keys
from .language import LanguageCheck, LanguageVerdict
from .masking import STAND_INS, Masked, mask
from .names import KEPT_NAME, carried_names, find_names
from .products import find_products
from .reinsert import Reinserted, reinserted, reinserted_texts
from .segment import LANGUAGE, NOT_PROSE, RESTORED_SPAN, Alignment, SegmentResult, word_spans
from .spans import GLOSSARY, PROGRAM_NAMES, Span, find_spans
from .verbatim import not_prose

_NOTHING_ELSE = re.compile(r"[\W_]*")
_WORD_CHAR = re.compile(r"\w")
_ASCII_DASH = re.compile(r"(?<=\s)--(?=\s)")


@dataclass(frozen=True)
class TextOptions:
    protect_spans: bool = True  # mask verbatim spans and restore them unchanged
    restore_case: bool = True  # translate ALL-CAPS and Title Case sentences in sentence case
    check_language: bool = True  # copy segments in another language through untranslated, flagged
    glossary: Glossary | None = None  # force these translations of terms (worker.text.glossary)
    keep_names: bool = True  # carry names through (worker.text.names); with protect_spans only
    # decode a dropped_text segment again, and keep its source if it is short again; with
    # protect_spans only (off, the model's own output comes back: the parity tests compare it)
    retry_dropped: bool = True
    # prefer, among the beam's finished hypotheses, the best one that keeps every masked span once
    # and makes up no span-like word, and carries its source (worker.text.consistency); with
    # protect_spans only
    pick_consistent: bool = True
    # keep the product names of worker.text.products (LibreOffice Draw, GNOME, Debian) as names;
    # with protect_spans only
    product_names: bool = True
    # write the named keys of key spans as the target language's manuals do (German: Ctrl+F6 ->
    # Strg+F6, worker.text.keynames); with protect_spans only, for a target language with a table
    key_names: bool = True


@dataclass(frozen=True)
class Prepared:
    source: str  # the sentence as given
    text: str  # what the engine decodes
    decode: bool  # False: the sentence is verbatim spans and punctuation only; it is its own translation
    spans: tuple[Span, ...]
    masked: Masked | None  # None with span protection off
    case: str | None  # casing.UPPER, casing.TITLE or None
    language: LanguageVerdict | None = None  # set when the segment is in another language
    terms: tuple[Span, ...] = ()  # glossary terms found in the source (kind GLOSSARY), masked or not
    not_prose: str | None = None  # why the segment is copied through as it is (worker.text.verbatim)
    names: tuple[Span, ...] = ()  # names found in the source (kind KEPT_NAME), kept in the text
    dashes: bool = False  # the source's spaced ASCII dashes (" -- ") were decoded as single hyphens


def prepare(sentence: str, options: TextOptions = TextOptions(), source_language: str | None = None,
            stand_ins: Sequence[str] = STAND_INS, capitalised: Callable[[str], bool] | None = None,
            represented: Callable[[str], bool] | None = None, target_language: str | None = None) -> Prepared:
    """The text to decode for ``sentence`` (in ``source_language``, when known, for the language check;
    into ``target_language``, when known, for the key names of key spans).
    ``stand_ins``: the words that mask spans, best copied first (a bundle's own, else ``STAND_INS``);
    ``capitalised``: which words keep a capital when an ALL-CAPS or Title Case sentence is put in
    sentence case (``casing.vocabulary_capitals`` of the bundle's vocabulary); ``represented``:
    whether the bundle's vocabularies carry a character (others are masked as ``symbol`` spans)."""
    spans = tuple(find_spans(sentence, represented))
    reason = not_prose(sentence, spans, PROGRAM_NAMES) if options.protect_spans else None
    if reason is not None:
        return Prepared(sentence, sentence, False, spans, None, None, not_prose=reason)
    if options.protect_spans and options.key_names:
        spans = localise_keys(sentence, spans, target_language)
    if options.check_language and source_language:
        verdict = _language_check(source_language).check_segment(sentence)
        if verdict.mismatch:
            return Prepared(sentence, sentence, False, (), None, None, verdict)
    ranges = [(s.start, s.end) for s in spans]
    products = tuple(find_products(sentence, ranges)) if options.protect_spans and options.product_names else ()
    case = casing.detect(sentence, ranges) if options.restore_case else None
    full_names = _full_names(sentence, spans, (), options) if case == casing.TITLE else ()
    kept_case = sorted(ranges + [(s.start, s.end) for s in products + full_names])  # names keep their case
    text = casing.normalise(sentence, case, kept_case, capitalised)
    text, dashes = _ascii_dashes(text, ranges) if options.protect_spans else (text, False)
    terms = _glossary_terms(sentence, options, ranges, case)
    if not options.protect_spans and not terms:
        return Prepared(sentence, text, True, spans, None, case)
    if spans and not terms and _NOTHING_ELSE.fullmatch(_outside(sentence, spans)):
        return Prepared(sentence, sentence, False, spans, None, None)
    products = tuple(p for p in products if not any(p.start < t.end and t.start < p.end for t in terms))
    names = tuple(sorted(_names(sentence, spans, terms + products, options, case) + products, key=lambda s: s.start))
    masked = mask(text, _to_mask(spans, terms + names, options), stand_ins)
    return Prepared(sentence, masked.text, True, spans, replace(masked, source=sentence), case, terms=terms,
                    names=names, dashes=dashes)


def _ascii_dashes(text: str, ranges: Sequence[tuple[int, int]]) -> tuple[str, bool]:
    """``text`` with each spaced ASCII dash outside the spans (GNU's ``a filter -- deleting``) as a
    hyphen and a space (same length): before a word, the model reads ``--`` as an option's and
    makes one up (``--filterle``); an en dash it reads alike (``Filter - -l``). ``_dashes_back`` puts
    them back."""
    found = [m.start() for m in _ASCII_DASH.finditer(text) if not any(a <= m.start() < b for a, b in ranges)]
    for start in found:
        text = text[:start] + "- " + text[start + 2:]
    return text, bool(found)


def restore(prepared: Prepared, result: SegmentResult, made_up: bool = False) -> SegmentResult:
    """``result`` (the engine's, for ``prepared.text``) as the translation of ``prepared.source``:
    a fixed sequence of passes, each module entered once, in the order the data needs. The
    hypotheses (the best and its n-best list) get the source's dashes back, then its case
    (``casing``); the names the best carries are found (``names``) and kept out of the spans' way;
    the spans go back in and the made-up ones out, with the alignment moved to the original words
    (``reinsert``; ``made_up``: see ``reinsert.reinserted``); the glossary's terms are checked
    (``glossary``). Nothing here returns to a pass already left (``bench/restore_rooms.py``)."""
    if prepared.language is not None:
        return _foreign(prepared, result)
    if not prepared.decode:
        return _verbatim(prepared, result)
    masked = prepared.masked
    translation, *n_best = _recased(prepared, [result.translation, *(t for t, _ in result.n_best)])
    details: dict[str, Any] = {"case": prepared.case} if prepared.case else {}
    flags = result.flags
    if masked is None:
        back = Reinserted(translation, result.alignment.pairs, tuple(n_best))
    else:
        name_slots = [s for s in masked.slots if s.span.kind == KEPT_NAME]
        protected, found = carried_names([s.span for s in name_slots], translation) if name_slots else ([], set())
        back = reinserted(masked, translation, n_best, result.alignment.pairs,
                          {s for s in name_slots if s.span in found}, protected, made_up)
        details |= back.details
        flags += (RESTORED_SPAN,) if back.restored else ()
    alignment = Alignment(back.pairs, tuple(word_spans(prepared.source)), tuple(word_spans(back.translation)))
    return applied(prepared.terms, back.placements, replace(
        result, source=prepared.source, translation=back.translation, alignment=alignment,
        n_best=tuple(zip(back.n_best, (s for _, s in result.n_best))), flags=flags, details=details))


def restored_texts(prepared: Prepared, decoded: Sequence[str]) -> list[str]:
    """Each of ``decoded`` (hypotheses for ``prepared.text``) with its case and spans back, placed
    as ``restore`` places them without an alignment; the same passes, once for all."""
    texts = _recased(prepared, decoded)
    return texts if prepared.masked is None else reinserted_texts(prepared.masked, texts)


def _recased(prepared: Prepared, texts: Sequence[str]) -> list[str]:
    """The dashes and case pass: each of ``texts`` with the source's dashes (``_dashes_back``),
    then in its case, the stand-ins of its masked spans left alone."""
    masked = prepared.masked
    stand_ins = [s.stand_in for s in masked.slots if not s.kept] if masked is not None else []
    return casing.recased([_dashes_back(t, prepared) for t in texts], prepared.case, stand_ins)


# -- names -------------------------------------------------------------------------------------------
def _names(sentence: str, spans: tuple[Span, ...], terms: tuple[Span, ...], options: TextOptions,
           case: str | None) -> tuple[Span, ...]:
    """The source's names, kept in the text (none in an ALL-CAPS or Title Case sentence, where
    every word looks like one). Masking them with stand-ins as well was measured and not chosen
    (docs/quality.md, Names, numbers and code)."""
    if case == casing.TITLE:
        return _full_names(sentence, spans, terms, options)
    if not (options.protect_spans and options.keep_names) or case is not None:
        return ()
    return tuple(_standalone_names(sentence, spans + terms))


def _standalone_names(sentence: str, taken: Sequence[Span]) -> list[Span]:
    """The names of ``sentence`` outside ``taken``. A "name" inside a longer word ("0À",
    "x86Linux", "_Vh") is not one: the word around it is the model's."""
    return [n for n in find_names(sentence, [(s.start, s.end) for s in taken])
            if not (_WORD_CHAR.match(sentence[n.start - 1:n.start]) or _WORD_CHAR.match(sentence[n.end:n.end + 1]))]


def _full_names(sentence: str, spans: tuple[Span, ...], terms: tuple[Span, ...], options: TextOptions) -> tuple[Span, ...]:
    """The names of a Title Case sentence that holds a name of two words or more (``By Raphaël
    Hertzog``, ``Photo by Dave Hoefler on Unsplash``, ``LibreOffice Calc``): that name and the
    sentence's other names (``Unsplash``); none in one without (``Using The Wizard For Macros``).
    There one capitalised word that is no common English word is as often a title's word
    (``Wizard``, ``Macros``) as a name, a run of them seldom (``Pivot Charts``). They keep their case
    and are kept slots; sentence-cased, the models spelt them anew (``raphaël Hetzog``,
    ``Hove-Fehrler``). All-capitals words keep their case anyway (acronyms)."""
    if not (options.protect_spans and options.keep_names):
        return ()
    names = [n for n in _standalone_names(sentence, spans + terms) if not n.text.isupper()]
    return tuple(names) if any(" " in n.text for n in names) else ()


# -- glossary ----------------------------------------------------------------------------------------
def _glossary_terms(sentence: str, options: TextOptions, span_ranges: list[tuple[int, int]],
                    case: str | None) -> tuple[Span, ...]:
    """The glossary's terms in ``sentence`` as spans of kind GLOSSARY, clear of the verbatim spans
    (when those are protected); an ALL-CAPS sentence gets its target terms in capitals."""
    taken = span_ranges if options.protect_spans else ()
    return tuple(Span(GLOSSARY, m.start, m.end, sentence[m.start:m.end],
                      m.target.upper() if case == casing.UPPER else m.target)
                 for m in find_terms(sentence, options.glossary, taken))


def _to_mask(spans: tuple[Span, ...], terms: tuple[Span, ...], options: TextOptions) -> list[Span]:
    """The slots to make, in text order: glossary terms, and verbatim spans when protected."""
    return sorted((spans if options.protect_spans else ()) + terms, key=lambda s: s.start)


def _dashes_back(translation: str, prepared: Prepared) -> str:
    """The translation with the source's ASCII dashes where it has spaced hyphens
    (``_ascii_dashes``), or spaced en dashes that a source without them did not have (the
    documentation model writes ``Filter – Löschen`` for ``filter - deleting``)."""
    if prepared.dashes:
        translation = translation.replace(" - ", " -- ")
        if "\u2013" not in prepared.source:
            translation = translation.replace(" \u2013 ", " -- ")
    return translation


def _verbatim(prepared: Prepared, result: SegmentResult) -> SegmentResult:
    """A sentence made of spans only, or not prose: its translation is the sentence itself."""
    source = prepared.source
    words = word_spans(source)
    if prepared.not_prose is None and any(s.target is not None for s in prepared.spans):
        return _replaced(prepared, result)  # key spans in the target language's names
    details: dict[str, Any] = {"spans": [s.to_json() | {"target": [s.start, s.end], "method": "verbatim"}
                                         for s in prepared.spans]}
    flags = result.flags
    if prepared.not_prose is not None:
        details["not_prose"] = prepared.not_prose
        flags += (NOT_PROSE,)
    return replace(result, source=source, translation=source, score=0.0,
                   alignment=Alignment(tuple((i, i) for i in range(len(words))), tuple(words), tuple(words)),
                   flags=flags, details=details)


def _replaced(prepared: Prepared, result: SegmentResult) -> SegmentResult:
    """A sentence of spans only whose spans have a target (``Ctrl+F6`` -> ``Strg+F6``): its
    translation is the sentence with each span's replacement; a word outside the spans is aligned
    to itself, a span's words to its replacement's."""
    source = prepared.source
    pieces: list[str] = []
    chunks: list[tuple[int, int, int, int]] = []  # (source start, end, translation start, end)
    cursor = length = 0
    for span in prepared.spans:
        for a, b, text in ((cursor, span.start, source[cursor:span.start]), (span.start, span.end, span.replacement)):
            pieces.append(text)
            chunks.append((a, b, length, length + len(text)))
            length += len(text)
        cursor = span.end
    pieces.append(source[cursor:])
    chunks.append((cursor, len(source), length, length + len(source) - cursor))
    translation = "".join(pieces)
    words, target = word_spans(source), word_spans(translation)
    pairs = []
    for i, (a, _) in enumerate(words):
        for sa, sb, ta, tb in chunks:
            if sa <= a < sb:
                same = source[sa:sb] == translation[ta:tb]  # outside the spans: the word where it moved
                pairs += [(i, j) for j, (c, _) in enumerate(target) if (c == ta + a - sa if same else ta <= c < tb)]
                break
    placed = {(sa, sb): (ta, tb) for sa, sb, ta, tb in chunks}
    details: dict[str, Any] = {"spans": [s.to_json() | {"target": list(placed[s.start, s.end]), "method": "verbatim"}
                                         for s in prepared.spans]}
    return replace(result, source=source, translation=translation, score=0.0,
                   alignment=Alignment(tuple(pairs), tuple(words), tuple(target)), details=details)


def _language_check(language: str) -> LanguageCheck:
    check = _CHECKS.get(language)
    if check is None:
        check = _CHECKS[language] = LanguageCheck(expected=language)
    return check


_CHECKS: dict[str, LanguageCheck] = {}


def _foreign(prepared: Prepared, result: SegmentResult) -> SegmentResult:
    """A segment in another language: copied through untranslated, flagged ``language``."""
    source, verdict = prepared.source, prepared.language
    words = word_spans(source)
    details = {"language": {"detected": verdict.language, "confidence": round(verdict.confidence, 4)}}
    return replace(result, source=source, translation=source, score=0.0,
                   alignment=Alignment(tuple((i, i) for i in range(len(words))), tuple(words), tuple(words)),
                   flags=result.flags + (LANGUAGE,), details=details)


def _outside(sentence: str, spans: tuple[Span, ...]) -> str:
    """The sentence without its spans."""
    parts, cursor = [], 0
    for span in spans:
        parts.append(sentence[cursor:span.start])
        cursor = span.end
    return "".join(parts) + sentence[cursor:]
