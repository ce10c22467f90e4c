"""How ``nmt train-aligner`` trains the alignment head: its options and their defaults, kept free of
torch so the command's parser builds on any install."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AlignerTrainConfig:
    pairs: int = 120_000  # training pairs sampled over the corpora (by size x weight)
    valid_pairs: int = 500  # of them, held out for the validation loss
    max_len: int = 80  # pieces per side; longer pairs are skipped
    batch_tokens: int = 4000
    max_sentences: int = 128
    lr: float = 1e-3
    max_seconds: float = 1200.0
    max_epochs: int = 3
    seed: int = 1234
    bf16: bool = True  # autocast the frozen model where the CPU runs bf16 natively
