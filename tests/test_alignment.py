"""Hard word alignments from attention, mapped from SentencePiece pieces to whitespace words."""
from __future__ import annotations

import numpy as np

from worker.engine.alignment import align
from worker.text.segment import piece_words, word_spans

M = "\u2581"


def test_piece_words_follow_the_word_marker():
    assert piece_words([f"{M}The", f"{M}dog", "s", f"{M}", "(", "run", f"{M}."]) == [0, 1, 1, 2, 2, 2, 3]
    assert piece_words(["s", f"{M}a"]) == [0, 1]  # a first piece without marker still opens word 0


def test_word_spans_with_offset():
    assert word_spans("  ab  c ", 10) == [(12, 14), (16, 17)]


def test_alignment_lifts_piece_argmax_to_word_pairs():
    # source "The dogs run" -> pieces The | dog s | run (+ eos column)
    # target "Die Hunde laufen" -> pieces Die | Hund e | laufen (+ eos row)
    source_pieces = [f"{M}The", f"{M}dog", "s", f"{M}run"]
    target_pieces = [f"{M}Die", f"{M}Hund", "e", f"{M}laufen"]
    attention = np.array([
        [0.7, 0.1, 0.1, 0.05, 0.05],   # Die    -> The
        [0.1, 0.6, 0.2, 0.05, 0.05],   # Hund   -> dog
        [0.1, 0.2, 0.6, 0.05, 0.05],   # e      -> s (same word as dog)
        [0.05, 0.05, 0.1, 0.3, 0.5],   # laufen -> run (the eos column is ignored)
        [0.0, 0.0, 0.0, 0.1, 0.9],     # eos row: ignored
    ])
    result = align(source_pieces, target_pieces, attention, "The dogs run", "Die Hunde laufen", 100, 200)
    assert result.pharaoh == "0-0 1-1 2-2"
    assert result.source_spans == ((100, 103), (104, 108), (109, 112))
    assert result.target_spans == ((200, 203), (204, 209), (210, 216))


def test_alignment_indices_stay_in_range_when_words_disagree():
    result = align([f"{M}a", f"{M}b", f"{M}c"], [f"{M}x", f"{M}y"], np.eye(3)[:2], "a b", "x")
    assert all(i < 2 and j < 1 for i, j in result.pairs)


def test_empty_translation_has_no_pairs():
    result = align([f"{M}a"], [], np.zeros((1, 2)), "a", "")
    assert result.pairs == () and result.target_spans == ()
