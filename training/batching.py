"""Length-bucketed training batches under a token budget, in a reproducible order per epoch."""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Sequence

import torch

from .greedy import pad_batch
from .vocab import BOS_ID, EOS_ID


@dataclass(frozen=True)
class Batch:
    src: torch.Tensor  # int64 [B, S]
    src_lengths: torch.Tensor  # int64 [B]
    prev_ids: torch.Tensor  # int64 [B, T]: bos y_1 .. y_{T-1}
    gold: torch.Tensor  # int64 [B, T]: y_1 .. y_{T-1} eos, padded
    target_tokens: int

    def to(self, device: torch.device) -> "Batch":
        return Batch(self.src.to(device), self.src_lengths.to(device), self.prev_ids.to(device), self.gold.to(device), self.target_tokens)


def make_batches(
    src_ids: Sequence[Sequence[int]],
    tgt_ids: Sequence[Sequence[int]],
    batch_tokens: int,
    max_sentences: int,
    seed: int,
    indices: Sequence[int] | None = None,
) -> list[list[int]]:
    """Index lists, one per batch, for one epoch.

    Pairs are sorted by (target, source) length after a seeded shuffle, so each batch holds
    sentences of nearly equal length (little padding, few wasted decoder steps); batches are
    cut when their padded target size would exceed ``batch_tokens``, then shuffled.
    ``indices`` (default: every pair once) may repeat or leave out pairs (corpus weights).
    """
    rng = random.Random(seed)
    order = list(range(len(src_ids))) if indices is None else list(indices)
    rng.shuffle(order)
    order.sort(key=lambda i: (len(tgt_ids[i]), len(src_ids[i])))
    batches: list[list[int]] = []
    current: list[int] = []
    longest = 0
    for index in order:
        length = len(tgt_ids[index]) + 1
        if current and (max(longest, length) * (len(current) + 1) > batch_tokens or len(current) >= max_sentences):
            batches.append(current)
            current, longest = [], 0
        current.append(index)
        longest = max(longest, length)
    if current:
        batches.append(current)
    rng.shuffle(batches)
    return batches


def collate(indices: Sequence[int], src_ids: Sequence[Sequence[int]], tgt_ids: Sequence[Sequence[int]]) -> Batch:
    src, lengths = pad_batch([src_ids[i] for i in indices])
    prev, _ = pad_batch([[BOS_ID, *tgt_ids[i]] for i in indices])
    gold, _ = pad_batch([[*tgt_ids[i], EOS_ID] for i in indices])
    return Batch(src, lengths, prev, gold, sum(len(tgt_ids[i]) + 1 for i in indices))
