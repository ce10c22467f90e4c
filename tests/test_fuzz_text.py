"""Property-based fuzzing of the text pipeline with what users' files hold: long runs of one
character or token, very long words, every Unicode category (right-to-left text, combining marks
stacked deep, zero-width characters, emoji with modifiers, private use, form feed and vertical
tab, a BOM inside a line), mixed scripts, and near-URLs, e-mails, paths, numbers, placeholders
and markup. Invariants: nothing raises; every stage stays fast on long lines; protecting spans
and restoring them gives the text back.

The default run is short and seeded (``derandomize``); ``NMT_FUZZ_EXAMPLES=N`` runs N random
examples per property (docs/quality.md, Pathological input, has the long campaign's figures).
"""
from __future__ import annotations

import os
import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from worker.text import casing
from worker.text.glossary import Glossary, find_terms
from worker.text.layout import split_document
from worker.text.masking import STAND_INS, mask
from worker.text.pipeline import TextOptions, prepare, restore
from worker.text.reinsert import restore_spans
from worker.text.segment import Alignment, SegmentResult, word_spans
from worker.text.spans import find_spans

EXAMPLES = int(os.environ.get("NMT_FUZZ_EXAMPLES", "0"))
FUZZ = settings(max_examples=EXAMPLES or 25, derandomize=not EXAMPLES, deadline=None, database=None,
                suppress_health_check=list(HealthCheck))
SECONDS = 5.0  # the most one stage may spend on one generated line (up to ~12,000 characters)

# -- what users' files hold ------------------------------------------------------------------------
SPECIAL = [
    "\u05e9\u05dc\u05d5\u05dd", "\u0645\u0631\u062d\u0628\u0627", "\u202e", "\u202d", "\u200f",  # RTL text and marks
    "e" + "\u0301" * 40, "a\u0308\u0323\u0301\u0300",  # combining marks stacked deep
    "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff",  # zero-width characters, a BOM inside a line
    "\U0001F44D\U0001F3FD", "\U0001F468\u200d\U0001F469\u200d\U0001F467", "\u2764\ufe0f", "\U0001F1E9\U0001F1EA",
    "\ue000", "\U000F0000",  # private use
    "\x0c", "\x0b", "\x00", "\x85", "\u2028", "\t",  # form feed, vertical tab, NUL, NEL, line separator
    "\u4f60\u597d", "\u041f\u0440\u0438\u0432\u0435\u0442", "\u3053\u3093\u306b\u3061\u306f", "\uff21\uff22",
    "\ufdfd", "\u00bd", "\ufb01",  # characters NFKC expands
]
NEAR = [
    "http:/", "https://", "www.", "htp://x.y", "http://[::1]:80/a?b=(c", "a@b", "a@b.c", "@", "@@x", "x@.com",
    "/", "//", "/usr/", "./", "../..", "~/", "C:\\", "C:\\\\x\\", "a/b/c/", "file.", ".", "..", "...",
    "1.2.3.", "1.2.3.4.5", "::", ":::1", "1,2,,3", "1.234,5.6", "+49 (0", "+", "0800 ", "DE89 3704",
    "{", "}", "{{", "{{x}", "{x", "{0:", "%", "%(", "%(x", "%1$", "%-*.*s", "${", "${X:-", "$", ":x", "#", "#1",
    "<b>", "</", "<a href=\"", "&amp;", "&#", "`", "``", "`git", "git -", "pip install", "--", "-", "_", "__init__",
    "v1.", "v", "x86_64", "A4-", "1st", "12%", "-1e10", "0x", "NaN", "'", "\"", "(", ")", "[", "]", "\\",
]
WORDS = ["the", "dog", "runs", "home", "Tom", "Mary", "Paris", "Server", "NASA", "USB", "I", "a", "and",
         "install", "restart", "files", "of", "in", "Hello", "WORLD", "ÄÖÜ", "straße"]

runs = st.builds(lambda c, n: c * n, st.sampled_from(list("-.=_*#~+/\\%{}<>|1 0xa") + ["ab", "1 ", "- ", "😀"]),
                 st.integers(1, 3000))
long_words = st.text(st.characters(categories=["Ll", "Lu", "Nd"]), min_size=90, max_size=4000)
any_text = st.text(st.characters(exclude_categories=["Cs"]), max_size=60)
piece = st.one_of(st.sampled_from(SPECIAL), st.sampled_from(NEAR), st.sampled_from(WORDS), runs, long_words, any_text)
separator = st.sampled_from([" ", " ", " ", "", "  ", "\t", ", ", ". "])
lines = st.builds(lambda parts, seps: "".join(p + s for p, s in zip(parts, seps)),
                  st.lists(piece, min_size=1, max_size=12), st.lists(separator, min_size=12, max_size=12))
documents = st.lists(lines, min_size=1, max_size=4).map("\n".join)

# The shipped vocabulary lacks emoji, most symbols, private use and RTL scripts; stands in for it here.
UNKNOWN = frozenset("\U0001F44D\U0001F3FD\U0001F468\U0001F469\U0001F467\u2764\ufe0f\U0001F1E9\U0001F1EA\ue000"
                    "\U000F0000\u202e\u202d\u200f\u200d\u05e9\u05dc\u05d5\u05dd\u0645\u0631\u062d\u0628\u0627{}😀")


def represented(c: str) -> bool:
    return c not in UNKNOWN and c.isprintable()


def _fast(started: float, what: str, text: str) -> None:
    spent = time.perf_counter() - started
    assert spent < SECONDS, f"{what} took {spent:.1f} s on {len(text)} characters: {text[:80]!r}"


def _identity(text: str) -> SegmentResult:
    """The engine result of a model that copies its input word for word."""
    words = tuple(word_spans(text))
    return SegmentResult(text, text, 0.0, Alignment(tuple((i, i) for i in range(len(words))), words, words))


def _visible(text: str) -> str:
    return "".join(text.split())


# -- properties --------------------------------------------------------------------------------------
@FUZZ
@given(documents)
def test_segmentation_keeps_every_character_in_place(text):
    started = time.perf_counter()
    layout = split_document(text, "en")
    _fast(started, "split_document", text)
    for sentence in layout.sentences:
        assert sentence.text and text[sentence.start:sentence.end] == sentence.text
    assert layout.reassemble([s.text for s in layout.sentences])[0] == text


@FUZZ
@given(lines)
def test_spans_are_ordered_disjoint_and_exact(line):
    started = time.perf_counter()
    spans = find_spans(line, represented)
    _fast(started, "find_spans", line)
    for span in spans:
        assert 0 <= span.start < span.end <= len(line) and line[span.start:span.end] == span.text
    assert all(a.end <= b.start for a, b in zip(spans, spans[1:]))


@FUZZ
@given(lines)
def test_protecting_and_restoring_spans_gives_the_text_back(line):
    """prepare -> a model that copies its input -> restore: the source's visible characters in order
    (masking may add a space beside a stand-in)."""
    sentence = line.strip()
    started = time.perf_counter()
    options = TextOptions(restore_case=False, check_language=False)
    prepared = prepare(sentence, options, "en", STAND_INS, None, represented)
    result = restore(prepared, _identity(prepared.text))
    _fast(started, "prepare + restore", sentence)
    assert _visible(result.translation) == _visible(sentence)
    if prepared.masked is not None:
        assert prepared.masked.origin[-1] == len(sentence)


@FUZZ
@given(lines, st.sampled_from([None, casing.UPPER, casing.TITLE]))
def test_casing_keeps_lengths_and_protected_ranges(line, case):
    protected = [(s.start, s.end) for s in find_spans(line)]
    started = time.perf_counter()
    detected = casing.detect(line, protected)
    normal = casing.normalise(line, case, protected, lambda w: w in {"i", "tom"})
    back = casing.restore(normal, case, protected)
    _fast(started, "casing", line)
    assert detected in (None, casing.UPPER, casing.TITLE)
    assert len(normal) == len(line) == len(back)
    assert all(normal[a:b] == line[a:b] == back[a:b] for a, b in protected)


@FUZZ
@given(lines, st.lists(st.tuples(st.sampled_from(WORDS + NEAR + SPECIAL), st.sampled_from(WORDS)), max_size=6))
def test_glossary_terms_are_found_disjoint_and_applied(line, pairs):
    terms = {}
    for source, target in pairs:
        if source.split() and source.split()[0][:1].strip() and source.lower() not in {t.lower() for t in terms}:
            terms[source] = target
    glossary = Glossary(tuple(terms.items()))
    started = time.perf_counter()
    matches = find_terms(line, glossary)
    prepared = prepare(line.strip(), TextOptions(check_language=False, glossary=glossary), "en", STAND_INS, None,
                       represented)
    result = restore(prepared, _identity(prepared.text))
    _fast(started, "glossary", line)
    assert all(a.end <= b.start for a, b in zip(matches, matches[1:]))
    for entry in result.details.get("glossary", []):
        assert not entry["applied"] or entry["target_term"].lower() in result.translation.lower()


@FUZZ
@given(lines, st.data())
def test_reinsertion_places_every_span_whatever_the_model_wrote(line, data):
    spans = find_spans(line, represented)
    masked = mask(line, spans)
    translation = data.draw(st.one_of(lines, st.just(masked.text), st.just("")), label="translation")
    source_words, target_words = len(word_spans(masked.text)), len(word_spans(translation))
    pairs = data.draw(st.lists(st.tuples(st.integers(0, max(0, source_words - 1)),
                                         st.integers(0, max(0, target_words - 1))), max_size=30)) \
        if source_words and target_words else []
    started = time.perf_counter()
    restored = restore_spans(masked, translation, sorted(set(pairs)))
    _fast(started, "restore_spans", line + translation)
    assert {p.slot for p in restored.placements} == set(masked.slots)
    for placement in restored.placements:
        if not placement.slot.kept:
            assert restored.translation[placement.start:placement.end] == placement.slot.span.replacement.strip()
    assert all(0 <= j < len(word_spans(restored.translation)) for _, j in restored.pairs)
