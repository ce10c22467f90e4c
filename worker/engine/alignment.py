"""Hard word alignments from attention weights, mapped from SentencePiece pieces to words.

Words are whitespace-separated and counted from 0 on each side; a piece starting with the
SentencePiece word marker (U+2581) opens a new word. Each target piece is aligned to the source
piece with the largest attention weight (the source eos column excluded), and the piece pairs
are lifted to unique word pairs, written in Pharaoh ``i-j`` form (source i, target j).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from worker.text.segment import Alignment, piece_words, word_spans


def align(
    source_pieces: Sequence[str],
    target_pieces: Sequence[str],
    attention: np.ndarray,
    source_text: str,
    target_text: str,
    source_offset: int = 0,
    target_offset: int = 0,
) -> Alignment:
    """Word alignment for one sentence pair.

    attention: float [T', S'] with one row per target piece (an extra eos row may follow) and one
    column per source piece (an extra source-eos column may follow).
    """
    source_spans = word_spans(source_text, source_offset)
    target_spans = word_spans(target_text, target_offset)
    pairs: set[tuple[int, int]] = set()
    if source_pieces and target_pieces and source_spans and target_spans:
        src_words = piece_words(source_pieces)
        tgt_words = piece_words(target_pieces)
        weights = np.asarray(attention, dtype=np.float32)[: len(target_pieces), : len(source_pieces)]
        best = weights.argmax(axis=1)
        # Clamp: text normalisation can, rarely, make piece words and text words disagree.
        last_src, last_tgt = len(source_spans) - 1, len(target_spans) - 1
        for t, s in enumerate(best):
            pairs.add((min(src_words[int(s)], last_src), min(tgt_words[t], last_tgt)))
    return Alignment(tuple(sorted(pairs)), tuple(source_spans), tuple(target_spans))
