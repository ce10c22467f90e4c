"""Length-bucketed training batches under a token budget, in a reproducible order per epoch:
over a whole in-memory corpus (``make_batches``) or over a bounded shuffle buffer of a stream
(``buffered_batches``)."""
from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from typing import Iterable, Iterator, Sequence

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
) -> list[list[int]]:
    """Index lists, one per batch, for one epoch.

    Pairs are sorted by (target, source) length after a seeded shuffle, so each batch holds
    sentences of nearly equal length (little padding, few wasted decoder steps); batches are
    cut when their padded target size would exceed ``batch_tokens``, then shuffled.
    """
    rng = random.Random(seed)
    order = list(range(len(src_ids)))
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


Pair = tuple[Sequence[int], Sequence[int]]  # (source ids with eos, target ids without bos/eos)


def collate_pairs(pairs: Sequence[Pair]) -> Batch:
    """One padded batch from (source ids, target ids) pairs: src [B, S], prev_ids and gold [B, T]."""
    src = [p[0] for p in pairs]
    tgt = [p[1] for p in pairs]
    return collate(range(len(pairs)), src, tgt)


def target_tokens(pairs: Sequence[Pair]) -> int:
    """Real target tokens of a batch (eos included): what its loss is summed over."""
    return sum(len(t) + 1 for _, t in pairs)


def buffered_batches(pairs: Iterable[Pair], buffer_size: int, batch_tokens: int, max_sentences: int,
                     seed: int) -> Iterator[list[Pair]]:
    """Batches from a stream of pairs, holding at most ``buffer_size`` pairs at a time.

    The stream is cut into consecutive buffers; each is shuffled, sorted by length and cut into
    batches by ``make_batches`` (same token-budget rule), and its batches come out in a shuffled
    order. Buffer ``i`` is shuffled with seed ``(seed, i)``, so the sequence is a pure function
    of the stream and ``seed``.
    """
    iterator = iter(pairs)
    for number in itertools.count():
        buffer = list(itertools.islice(iterator, buffer_size))
        if not buffer:
            return
        src = [p[0] for p in buffer]
        tgt = [p[1] for p in buffer]
        for indices in make_batches(src, tgt, batch_tokens, max_sentences, seed * 1_000_003 + number):
            yield [buffer[i] for i in indices]
