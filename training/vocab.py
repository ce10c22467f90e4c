"""SentencePiece subword vocabularies: training from the corpus, serialisation, special ids.

Every model uses the same special ids (pad 0, unk 1, bos 2, eos 3) so the model, the checkpoint
and the exported bundle agree without extra bookkeeping.
"""
from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import sentencepiece as spm

PAD_ID, UNK_ID, BOS_ID, EOS_ID = 0, 1, 2, 3


@dataclass(frozen=True)
class Vocab:
    """A SentencePiece model plus its serialized bytes (what checkpoints and bundles store)."""

    proto: bytes

    @property
    def processor(self) -> spm.SentencePieceProcessor:
        # Built on first use and cached on the instance (the dataclass is frozen, hence __dict__).
        sp = self.__dict__.get("_sp")
        if sp is None:
            sp = spm.SentencePieceProcessor(model_proto=self.proto)
            self.__dict__["_sp"] = sp
        return sp

    def __len__(self) -> int:
        return self.processor.get_piece_size()

    def encode(self, text: str) -> list[int]:
        return self.processor.encode(text, out_type=int)

    def encode_many(self, texts: Sequence[str]) -> list[list[int]]:
        return self.processor.encode(list(texts), out_type=int)

    def pieces(self, text: str) -> list[str]:
        return self.processor.encode(text, out_type=str)

    def decode(self, ids: Sequence[int]) -> str:
        return self.processor.decode([int(i) for i in ids if i > EOS_ID])

    def save(self, path: Path) -> None:
        Path(path).write_bytes(self.proto)

    @classmethod
    def load(cls, path: Path) -> "Vocab":
        return cls(Path(path).read_bytes())


def train_vocab(
    sentences: Iterable[str],
    size: int,
    model_type: str = "unigram",
    character_coverage: float = 1.0,
    seed_sentences: int = 2_000_000,
) -> Vocab:
    """Train a SentencePiece model on ``sentences``.

    ``size`` is a soft limit (``hard_vocab_limit=False``) so a small corpus yields a smaller
    vocabulary instead of failing.
    """
    writer = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(sentences),
        model_writer=writer,
        vocab_size=size,
        model_type=model_type,
        character_coverage=character_coverage,
        pad_id=PAD_ID,
        unk_id=UNK_ID,
        bos_id=BOS_ID,
        eos_id=EOS_ID,
        hard_vocab_limit=False,
        input_sentence_size=seed_sentences,
        shuffle_input_sentence=True,
        num_threads=2,
        minloglevel=2,
    )
    return Vocab(writer.getvalue())
