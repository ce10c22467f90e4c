"""A vocabulary side as the engine uses it: SentencePiece cuts text into pieces, and pieces map to
the model's ids. Bundles from ``nmt export`` use SentencePiece's own ids; imported Marian models
have a piece -> id table of their own (``vocab.json``), where a piece SentencePiece knows but the
table does not is unk, and decoding drops special tokens before SentencePiece joins the pieces
(as transformers' ``MarianTokenizer.decode(skip_special_tokens=True)`` does)."""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import sentencepiece as spm

SPECIAL_PIECES = ("</s>", "<unk>", "<pad>", "<s>")


class Vocabulary:
    """``encode``/``decode``/``piece_to_id``/``id_to_piece`` over a SentencePiece model and, where the
    model has one, its own piece -> id table."""

    def __init__(self, sp: spm.SentencePieceProcessor, ids: Mapping[str, int] | None = None) -> None:
        self.sp = sp
        self.ids = dict(ids) if ids is not None else None
        if self.ids is not None:
            self.pieces = {i: p for p, i in self.ids.items()}
            self._unk = self.ids["<unk>"]
            self.special = {i for p, i in self.ids.items() if p in SPECIAL_PIECES}
            # target-language tokens (>>deu<<) of multilingual models are whole pieces, never cut
            self.whole = {p for p in self.ids if p.startswith(">>") and p.endswith("<<")}

    @classmethod
    def load(cls, model: Path, ids: Path | None = None) -> Vocabulary:
        sp = spm.SentencePieceProcessor(model_file=str(model))
        return cls(sp, json.loads(ids.read_text(encoding="utf-8")) if ids is not None else None)

    def encode(self, text: str | Sequence[str], out_type: type = int):
        """Pieces (``out_type=str``) or ids of a text, or of each of a list of texts."""
        if not isinstance(text, str):
            return [self.encode(t, out_type) for t in text]
        if self.ids is None:
            return self.sp.encode(text, out_type=out_type)
        pieces = self.sp.encode(text, out_type=str)
        return pieces if out_type is str else [self.piece_to_id(p) for p in pieces]

    def piece_to_id(self, piece: str) -> int:
        if self.ids is None:
            return self.sp.piece_to_id(piece)
        return self.ids.get(piece, self._unk)

    def id_to_piece(self, index: int) -> str:
        if self.ids is None:
            return self.sp.id_to_piece(index)
        return self.pieces.get(index, "<unk>")

    def unk_id(self) -> int:
        return self.sp.unk_id() if self.ids is None else self._unk

    def decode(self, ids: Sequence[int]) -> str:
        if self.ids is None:
            return self.sp.decode(list(ids))
        pieces = [self.pieces[i] for i in ids if i not in self.special and i in self.pieces]
        return self.sp.decode_pieces(pieces).replace("\u2581", " ").strip()

    def scored_pieces(self) -> list[tuple[str, float]]:
        """(piece, SentencePiece score) of every piece the SentencePiece model has."""
        return [(self.sp.id_to_piece(i), self.sp.get_score(i)) for i in range(self.sp.get_piece_size())]
