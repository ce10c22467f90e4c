"""How ``nmt train-aligner`` trains the alignment head: its options and their defaults, kept free of
torch so the command's parser builds on any install."""
from __future__ import annotations

from dataclasses import dataclass

# What the head's query may read of the rest of the target (``training.aligner``): nothing
# (heads trained before the option existed), a bidirectional GRU over it, or one self-attention layer.
TARGET_CONTEXTS = ("none", "bigru", "attention")
# What ``nmt train-aligner`` trains unless told otherwise; a head checkpoint without the key is "none".
DEFAULT_TARGET_CONTEXT = "bigru"
DEFAULT_CONTEXT_HIDDEN = 128  # per direction (bigru), or the self-attention width
# What each direction of the head learns from eflomal: the links joined with grow-diag-final-and
# (both directions the same links), or eflomal's own links of that direction.
SILVER_KINDS = ("joined", "directional")


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
    lower_share: float = 0.5  # of the pairs, shown lower-cased (training.aligner_views)
    spaced_share: float = 0.5  # shown tokenized: punctuation spaced apart (drawn apart from lower_share)
    silver: str = "directional"  # one of SILVER_KINDS
    bf16: bool = True  # autocast the frozen model where the CPU runs bf16 natively
    threads: int = 0  # torch intra-op threads (0: torch's default, one per core)

    def __post_init__(self) -> None:
        if self.threads < 0:
            raise ValueError(f"threads must be 0 (torch's default) or more, got {self.threads}")
        if self.silver not in SILVER_KINDS:
            raise ValueError(f"silver must be one of {', '.join(SILVER_KINDS)}, got {self.silver!r}")
