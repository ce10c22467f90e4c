"""Lexical shortlist: decode onto a batch's likely target pieces instead of the whole vocabulary.

A bundle may hold ``shortlist.npz`` (written by ``export.shortlist``): for every source piece the
target pieces it is most often aligned to in the training data, the most frequent target pieces,
and the vocabulary projection (weight, bias). For a batch, the candidates are the frequent pieces
plus those of every source piece in the batch, and the special ids. Each decoder step then asks
the step graph for its ``readout`` (the deep output before the projection) and projects it onto
those rows only: log-softmax and top-k over V' candidates instead of V (Marian and Bergamot do
the same). Scores are normalised over the candidates, so they are slightly higher than over the
full vocabulary; a token outside the candidates can never be produced.

Shapes: V target vocabulary, V' candidates of a batch, R readout size, N decoder rows.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .bundle import BundleError

# Arrays of shortlist.npz (the file format's one home, with export.shortlist the writer).
ARRAYS = ("offsets", "targets", "frequent", "weight", "bias")
# A bundle's shortlist is on by default only if it costs at most this much BLEU (export, bench/shortlist.py).
MAX_BLEU_DROP = 0.2


@dataclass(frozen=True)
class Shortlist:
    """A bundle's translation table and projection."""

    offsets: np.ndarray  # int64 [Vs + 1]: source piece s's candidates are targets[offsets[s]:offsets[s + 1]]
    targets: np.ndarray  # int32 [nnz]: target piece ids
    frequent: np.ndarray  # int32 [F]: always candidates (the most frequent target pieces and the special ids)
    weight: np.ndarray  # float32 [V, R]: the vocabulary projection, rows by target id
    bias: np.ndarray  # float32 [V]

    @classmethod
    def load(cls, path: Path) -> "Shortlist":
        """Read ``shortlist.npz``; a missing, corrupt or inconsistent file is a ``BundleError``."""
        try:
            with np.load(path, allow_pickle=False) as data:
                arrays = {name: data[name] for name in ARRAYS}
        except (OSError, KeyError, ValueError) as exc:
            raise BundleError(f"cannot read shortlist {Path(path).name}: {exc}") from None
        shortlist = cls(arrays["offsets"].astype(np.int64), arrays["targets"].astype(np.int64),
                        arrays["frequent"].astype(np.int64), arrays["weight"].astype(np.float32),
                        arrays["bias"].astype(np.float32))
        vocab = shortlist.weight.shape[0]
        if (shortlist.offsets.ndim != 1 or shortlist.offsets[0] != 0 or shortlist.offsets[-1] != len(shortlist.targets)
                or np.any(np.diff(shortlist.offsets) < 0) or shortlist.bias.shape != (vocab,)
                or any(len(a) and (a.min() < 0 or a.max() >= vocab) for a in (shortlist.targets, shortlist.frequent))):
            raise BundleError(f"shortlist {Path(path).name} is inconsistent (offsets, ids or projection shapes)")
        return shortlist

    @property
    def source_size(self) -> int:
        return len(self.offsets) - 1

    def candidates(self, src_ids: np.ndarray) -> np.ndarray:
        """Sorted distinct target ids for a batch of source ids (int [B, S], padding included:
        every id of the batch adds its list) -> int64 [V']."""
        pieces = np.unique(src_ids)
        pieces = pieces[(pieces >= 0) & (pieces < self.source_size)]
        starts, ends = self.offsets[pieces], self.offsets[pieces + 1]
        lists = [self.targets[a:b] for a, b in zip(starts, ends) if b > a]
        return np.unique(np.concatenate([self.frequent, *lists]))

    def for_batch(self, src_ids: np.ndarray) -> "BatchVocabulary":
        ids = self.candidates(src_ids)
        return BatchVocabulary(ids, np.ascontiguousarray(self.weight[ids].T), self.bias[ids])


@dataclass(frozen=True)
class BatchVocabulary:
    """One batch's candidates with their slice of the projection."""

    ids: np.ndarray  # int64 [V'] sorted target ids
    weight_t: np.ndarray  # float32 [R, V']
    bias: np.ndarray  # float32 [V']

    def top(self, readout: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """readout float [N, R] -> (log-probs float [N, k'], target ids int64 [N, k']), best first,
        k' = min(k, V'); log-softmax over the candidates."""
        logits = readout.astype(np.float32, copy=False) @ self.weight_t + self.bias  # [N, V']
        logits -= logits.max(axis=1, keepdims=True)
        log_probs = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
        k = min(k, log_probs.shape[1])
        part = np.argpartition(-log_probs, k - 1, axis=1)[:, :k] if k < log_probs.shape[1] else \
            np.broadcast_to(np.arange(log_probs.shape[1]), log_probs.shape)
        values = np.take_along_axis(log_probs, part, axis=1)
        order = np.argsort(-values, axis=1, kind="stable")
        return np.take_along_axis(values, order, axis=1), self.ids[np.take_along_axis(part, order, axis=1)]
