"""Request batching: sentences sorted by length and packed under a token budget; callers restore
the original order from the returned indices."""
from __future__ import annotations

from typing import Sequence


def pack_by_tokens(lengths: Sequence[int], max_tokens: int, max_sentences: int) -> list[list[int]]:
    """Indices grouped into batches, shortest sentences first.

    A batch's cost is its padded size, ``len(batch) * longest``; a batch is closed before that
    would exceed ``max_tokens`` or it would hold more than ``max_sentences``. A single sentence
    longer than ``max_tokens`` gets a batch of its own.
    """
    if max_tokens < 1 or max_sentences < 1:
        raise ValueError(f"max_tokens and max_sentences must be >= 1 (got {max_tokens}, {max_sentences})")
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], i))
    batches: list[list[int]] = []
    current: list[int] = []
    for index in order:
        longest = lengths[index]  # sorted ascending: the newcomer is the longest
        if current and ((len(current) + 1) * longest > max_tokens or len(current) >= max_sentences):
            batches.append(current)
            current = []
        current.append(index)
    if current:
        batches.append(current)
    return batches
