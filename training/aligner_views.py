"""The forms a training pair takes for the alignment head, and which of its tokens each piece is in.

Users align text as they have it: natural text, and the classic form of word-alignment data,
lower-cased and tokenized (punctuation spaced apart from words, as Europarl gold sets are). The
frozen translation model only ever saw natural text, so the head is shown each silver-aligned pair
in one of four forms, drawn per pair: as it is, lower-cased, spaced (its ``silver.tokens`` joined
by single spaces), or both. The links are over alignment tokens, which every form keeps, so one
eflomal run serves all four.
"""
from __future__ import annotations

import random
from bisect import bisect_right
from dataclasses import dataclass
from typing import Callable, Sequence

from .silver import tokens


@dataclass(frozen=True)
class View:
    """How a pair is shown: lower-cased, spaced, both or neither (``natural``)."""

    lower: bool = False
    spaced: bool = False


NATURAL = View()


def draw_view(rng: random.Random, lower_share: float, spaced_share: float) -> View:
    """Lower-cased with probability ``lower_share``, spaced with ``spaced_share``, independently."""
    return View(lower=rng.random() < lower_share, spaced=rng.random() < spaced_share)


def render(line: str, view: View) -> tuple[str, list[tuple[int, int]]]:
    """``line`` in ``view``, and [start, end) of each of its alignment tokens in the result."""
    spans = tokens(line)
    if view.spaced:
        text, shown = "", []
        for start, end in spans:
            text += " " if text else ""
            shown.append((len(text), len(text) + end - start))
            text += line[start:end]
        line, spans = text, shown
    if view.lower:  # token by token: lower() may change a token's length ("İ" -> "i̇")
        text, shown, done = "", [], 0
        for start, end in spans:
            text += line[done:start]
            token = line[start:end].lower()
            shown.append((len(text), len(text) + len(token)))
            text += token
            done = end
        line, spans = text + line[done:], shown
    return line, spans


def piece_tokens(processor, text: str, spans: Sequence[tuple[int, int]],
                 piece_id: Callable[[str], int] | None = None) -> tuple[list[int], list[int]]:
    """SentencePiece ids of ``text`` and the token (index into ``spans``) each piece is in: the one
    holding the piece's first character that is not a space. ``processor``: a SentencePieceProcessor;
    ``piece_id``: the model's id of a piece, for models whose ids are not SentencePiece's own
    (imported Marian models' vocab.json)."""
    starts = [start for start, _ in spans]
    ids, owners = [], []
    for piece in processor.encode(text, return_type="proto").pieces:
        position = piece.begin + len(piece.surface) - len(piece.surface.lstrip(" "))
        ids.append(piece.id if piece_id is None else piece_id(piece.piece))
        owners.append(max(bisect_right(starts, position) - 1, 0))
    return ids, owners
