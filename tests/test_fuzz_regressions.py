"""Pathological one-line documents (issue table and what fuzzing found): each gives an output
within seconds, no internal exception, and no segment loses most of its text without the flag
``dropped_text``. Real SentencePiece and ONNX Runtime with the shipped ``models/en-de``."""
from __future__ import annotations

import json
import time

import pytest

from worker.engine.settings import EngineSettings
from worker.engine.translator import Translator
from worker.text.coverage import coverage
from worker.text.masking import STAND_INS, mask
from worker.text.reinsert import restore_spans
from worker.text.layout import split_document
from worker.text.pipeline import TextOptions, prepare, restore
from worker.text.segment import DROPPED_TEXT, KEPT_SOURCE, LOW_CONFIDENCE, REPETITION, TIME_BUDGET, Alignment, SegmentResult, word_spans
from worker.text.spans import LONG, MAX_WORD, RUN, RUN_LENGTH, find_spans

from .conftest import REPO_ROOT, run_nmt

BUNDLE = REPO_ROOT / "models" / "en-de"
UNPROTECTED = TextOptions(protect_spans=False)

# (name, line, what the translation must hold)
TABLE = [
    ("dashes", "a" + "-" * 40_000 + "b", "-" * 40_000),
    ("ones", "Call " + "1 " * 20_000, "1 " * 19_999 + "1"),
    ("dots", "a" + "." * 40_000 + "b", "." * 40_000),
    ("word", "x" * 100_000, "x" * 100_000),
    ("braces", "{" * 20_000 + "name", "{" * 20_000 + "name"),
    ("emoji", "I like " + "\U0001F600\U0001F44D" * 5_000 + " very much.", "\U0001F600\U0001F44D" * 5_000),
    ("percent", "%" * 30_000 + "d", "%" * 30_000 + "d"),
]


@pytest.fixture(scope="module")
def translator():
    return Translator(BUNDLE, EngineSettings(provider="cpu", intra_op_threads=1))


def _no_silent_loss(result) -> None:
    covered = coverage(result.source, result.translation, result.alignment)
    assert covered >= 0.5 or DROPPED_TEXT in result.flags, (result.source[:60], result.translation[:60], covered)
    if DROPPED_TEXT in result.flags:
        assert result.confidence <= 0.1 and LOW_CONFIDENCE in result.flags


@pytest.mark.parametrize("name, line, kept", TABLE, ids=[t[0] for t in TABLE])
def test_issue_table_lines_translate_quickly_and_keep_their_text(translator, name, line, kept):
    started = time.perf_counter()
    [result] = translator.translate_sentences([line])
    assert time.perf_counter() - started < 30
    assert kept in result.translation
    _no_silent_loss(result)


def test_the_table_through_nmt_translate_gives_every_line_and_exit_status_0(tmp_path):
    source = tmp_path / "table.txt"
    source.write_text("".join(line + "\n" for _, line, _ in TABLE), encoding="utf-8")
    done = run_nmt("translate", "--bundle", str(BUNDLE), "--threads", "1", str(source), "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Error" not in done.stderr
    lines = (tmp_path / "out" / "table.de.txt").read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(TABLE)
    for (_, _, kept), line in zip(TABLE, lines):
        assert kept in line
    segments = json.loads((tmp_path / "out" / "table.de.json").read_text(encoding="utf-8"))["segments"]
    assert len(segments) == len(TABLE)


@pytest.mark.parametrize("line", [
    "a" + "-" * 2_000 + "b",  # every candidate of a part banned by n-gram blocking on the shortlist: IndexError
    "Call " + "1 " * 300,
], ids=["dashes", "ones"])
def test_parts_whose_candidates_are_all_banned_still_get_a_translation(translator, line):
    """Unprotected, the model meets the run itself: each part ends with its best hypothesis."""
    [result] = translator.translate_sentences([line], text_options=UNPROTECTED)
    assert result.translation and "exceeds the limit" in result.warnings[0]
    _no_silent_loss(result)


@pytest.mark.parametrize("line", [
    "{" * 2_000 + "name",  # "Einnamen": 2,000 characters gone, confidence 0.98
    "I like " + "\U0001F600\U0001F44D" * 200 + " very much.",  # the emoji vanish
    "\U0001F600" * 30,  # nothing the vocabulary knows: no subword tokens at all
], ids=["braces", "emoji", "emoji-only"])
def test_text_the_model_drops_or_loops_over_is_flagged_with_a_low_confidence(translator, line):
    """The model meets text it cannot translate: it drops it (flagged dropped_text, the coverage
    under half) or, without n-gram blocking (the general bundle's default), may loop over it
    (flagged repetition); either way the confidence is near zero and the segment low_confidence."""
    [result] = translator.translate_sentences([line], text_options=UNPROTECTED)
    assert LOW_CONFIDENCE in result.flags and result.confidence <= 0.1
    assert DROPPED_TEXT in result.flags or REPETITION in result.flags, result.flags
    if KEPT_SOURCE in result.flags:  # short again when decoded again: the source, whole, flagged
        assert DROPPED_TEXT in result.flags and result.translation == line
    elif DROPPED_TEXT in result.flags:  # under half the characters, or the words around what it copied lost
        from worker.text.coverage import words_lost

        assert result.details.get("coverage", 0.0) < 0.5 or words_lost(result.source, result.translation,
                                                                        result.alignment)


def test_characters_the_vocabulary_lacks_come_through_as_spans(translator):
    line = "I like \U0001F44D\U0001F3FD and \u2713 and \ue000 very much."
    [result] = translator.translate_sentences([line])
    for text in ("\U0001F44D\U0001F3FD", "\u2713", "\ue000"):
        assert text in result.translation
    assert {s["kind"] for s in result.details["spans"]} == {"symbol"}
    assert DROPPED_TEXT not in result.flags


def test_ordinary_sentences_are_not_flagged_dropped_text(translator):
    lines = ["3 dogs are playing in the snow.", "Please restart the server before 10:30 tomorrow.",
             "The meeting was moved to Friday because of the storm."]
    for result in translator.translate_sentences(lines):
        assert DROPPED_TEXT not in result.flags, result.translation


def test_runs_and_long_words_are_spans_before_the_model():
    line = "See " + "=" * RUN_LENGTH + " and " + "ab" * (MAX_WORD // 2 + 1) + " and " + "- " * RUN_LENGTH + "."
    spans = find_spans(line)
    assert [s.kind for s in spans] == [RUN, LONG, RUN]
    assert [s.kind for s in find_spans("x" + "-" * (RUN_LENGTH - 2) + "y")] == []


def test_spans_the_model_cannot_carry_get_stand_ins_before_numbers():
    line = " ".join(str(n) for n in range(1, 15)) + " and " + "\U0001F600" * 40
    masked = mask(line, find_spans(line, lambda c: c != "\U0001F600"))
    assert "\U0001F600" not in masked.text and len(masked.unmasked) == 15 - len(STAND_INS)


def test_a_segment_over_its_time_budget_is_kept_flagged_and_the_next_is_translated():
    """Parts of 8 tokens: the first slice of parts spends the budget of 10 ms."""
    translator = Translator(BUNDLE, EngineSettings(provider="cpu", intra_op_threads=1, max_sentence_tokens=8,
                                                   segment_seconds=0.01))
    long = " ".join(["The dog runs home."] * 40)
    over, short = translator.translate_sentences([long, "The dog runs home."], text_options=UNPROTECTED)
    assert over.translation == long and TIME_BUDGET in over.flags and over.confidence == 0.0
    assert over.details["time_budget"]["decoded_parts"] < over.details["time_budget"]["parts"]
    assert "budget" in over.warnings[-1]
    assert over.alignment.source_spans == over.alignment.target_spans
    assert short.translation != short.source and not short.flags


def test_segment_seconds_must_be_positive():
    with pytest.raises(ValueError, match="segment_seconds"):
        EngineSettings(segment_seconds=0).validate()


def test_coverage_counts_reappearing_and_aligned_characters():
    source, translation = "The " + "{" * 400 + "name", "Der Einnamen"
    words = ((0, 3), (4, len(source)))
    both_aligned = Alignment(((0, 0), (1, 1)), words, ((0, 3), (4, 12)))
    assert coverage(source, translation, both_aligned) < 0.2  # 8 letters cannot carry 404 characters
    same = Alignment((), words, words)
    assert coverage(source, source, same) == 1.0
    assert coverage("", "", Alignment((), (), ())) == 1.0
    # A word of symbols alone is carried only by itself: thirty emoji aligned to a German word are not.
    emoji = "\U0001F600" * 30
    assert coverage(emoji, "Beschreibung", Alignment(((0, 0),), ((0, 30),), ((0, 12),))) == 0.0
    assert coverage("I like \u2192 it", "Ich mag \u2192 es", Alignment(
        ((0, 0), (1, 1), (2, 2), (3, 3)), ((0, 1), (2, 6), (7, 8), (9, 11)), ((0, 3), (4, 7), (8, 9), (10, 12)))) == 1.0


# -- found by tests/test_fuzz_text.py ------------------------------------------------------------------
@pytest.mark.parametrize("text", ["I love it\u00a0!", "I \x85.", "Ende\u2028neu. Gut \u3000.",
                                  "in, \x9bI)ª á , I \x85. x"])
def test_whitespace_outside_ascii_before_a_full_stop_does_not_panic_the_segmenter(text):
    """sentencex raised a Rust panic (pyo3 PanicException, not an Exception) on these."""
    layout = split_document(text, "en")
    assert all(text[s.start:s.end] == s.text for s in layout.sentences)
    assert layout.reassemble([s.text for s in layout.sentences])[0] == text


@pytest.mark.parametrize("sentence", ["0À", "Call x86Linux now", "_Vh\thh"])
def test_a_name_inside_a_longer_word_is_not_restored_twice(sentence):
    prepared = prepare(sentence, TextOptions(restore_case=False, check_language=False), "en")
    words = tuple(word_spans(prepared.text))
    copied = SegmentResult(prepared.text, prepared.text, 0.0,
                           Alignment(tuple((i, i) for i in range(len(words))), words, words))
    assert restore(prepared, copied).translation == sentence


def test_text_glued_to_a_masked_span_is_not_deleted_as_invented():
    """"\u05e9\u05dc\u05d5\u05dd0800": the symbol span is masked ("Baby 0800"), and "0800" then looked like a number
    the model made up."""
    sentence = "\u05e9\u05dc\u05d5\u05dd0800"
    prepared = prepare(sentence, TextOptions(restore_case=False, check_language=False), "en",
                       represented=lambda c: c not in sentence[:4])
    words = tuple(word_spans(prepared.text))
    copied = SegmentResult(prepared.text, prepared.text, 0.0,
                           Alignment(tuple((i, i) for i in range(len(words))), words, words))
    assert "".join(restore(prepared, copied).translation.split()) == sentence


def test_a_span_is_placed_even_where_two_deletions_share_a_space():
    """The model dropped the stand-in and wrote a URL and a number the source lacks: both are
    deleted, and the span's insertion fell in the space both deletions took."""
    line = "\u05e9\u05dc\u05d5\u05dd "
    masked = mask(line, find_spans(line, lambda c: c not in line))
    restored = restore_spans(masked, "http://[::1]:80/a?b=(c " + "0" * 90, [])
    assert [p.slot for p in restored.placements] == list(masked.slots)
    assert "\u05e9\u05dc\u05d5\u05dd" in restored.translation


def test_a_letter_the_vocabulary_lacks_makes_its_whole_word_a_span():
    """"Gdańsk" with "ń" masked alone came back as "Gda ń Tomsk" (tests/test_names.py)."""
    assert [(s.kind, s.text) for s in find_spans("He lives in Gdańsk now.", lambda c: c != "ń")] == [("symbol", "Gdańsk")]
    assert [(s.kind, s.text) for s in find_spans("a great\U0001F600 day", lambda c: c != "\U0001F600")] == \
        [("symbol", "\U0001F600")]
