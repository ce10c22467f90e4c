"""Lexical shortlist: decode onto a batch's likely target pieces instead of the whole vocabulary.

A bundle may hold ``shortlist.npz`` (written by ``export.shortlist``, or ``nmt import
--shortlist-corpus`` for an imported model): for every source piece the
target pieces it is most often aligned to in the training data, and the most frequent target
pieces (older files also hold a float16 copy of the projection, ``weight`` and ``bias``, which is
not read). A sentence's candidates are the frequent pieces (the special ids among them) plus those
of each of its source pieces; a batch is projected onto the union of its sentences' candidates,
each sentence scored over its own only. Each decoder step then runs a step graph that projects its
``readout`` (the GRU family's deep output before the projection; the Transformer family's final
decoder state, ``hidden``) onto those rows only, with the step graph's
own weights (``worker.shortlist_graph``): log-softmax and top-k over V' candidates instead of V
(Marian and Bergamot do the same). Scores are normalised over the candidates, so they are
slightly higher than over the full vocabulary; a token outside the candidates can never be
produced.

Shapes: V target vocabulary, V' candidates of a batch.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .bundle import BundleError

# Arrays of shortlist.npz (the file format's one home, with export.shortlist the writer).
ARRAYS = ("offsets", "targets", "frequent")
# A bundle's shortlist is on by default only if it costs at most this much BLEU (export, bench/shortlist.py).
MAX_BLEU_DROP = 0.2


@dataclass(frozen=True)
class Shortlist:
    """A bundle's translation table."""

    offsets: np.ndarray  # int64 [Vs + 1]: source piece s's candidates are targets[offsets[s]:offsets[s + 1]]
    targets: np.ndarray  # int64 [nnz]: target piece ids
    frequent: np.ndarray  # int64 [F]: always candidates (the most frequent target pieces and the special ids)

    @classmethod
    def load(cls, path: Path) -> "Shortlist":
        """Read ``shortlist.npz``; a missing, corrupt or inconsistent file is a ``BundleError``."""
        try:
            with np.load(path, allow_pickle=False) as data:
                arrays = {name: data[name].astype(np.int64) for name in ARRAYS}
        except (OSError, KeyError, ValueError) as exc:
            raise BundleError(f"cannot read shortlist {Path(path).name}: {exc}") from None
        shortlist = cls(**arrays)
        if (shortlist.offsets.ndim != 1 or len(shortlist.offsets) < 1 or shortlist.offsets[0] != 0
                or shortlist.offsets[-1] != len(shortlist.targets) or np.any(np.diff(shortlist.offsets) < 0)
                or any(len(a) and a.min() < 0 for a in (shortlist.targets, shortlist.frequent))):
            raise BundleError(f"shortlist {Path(path).name} is inconsistent (offsets or ids)")
        return shortlist

    @property
    def source_size(self) -> int:
        return len(self.offsets) - 1

    @property
    def largest_id(self) -> int:
        """The largest target id the table names (-1 if none): it must be below V."""
        return int(max((a.max() for a in (self.targets, self.frequent) if len(a)), default=-1))

    def candidates(self, src_ids: np.ndarray) -> np.ndarray:
        """Sorted distinct target ids for source ids (int, any shape: every id adds its list; a
        sentence's own candidates come from its ids without padding) -> int64 [V']."""
        pieces = np.unique(src_ids)
        pieces = pieces[(pieces >= 0) & (pieces < self.source_size)]
        starts, ends = self.offsets[pieces], self.offsets[pieces + 1]
        lists = [self.targets[a:b] for a, b in zip(starts, ends) if b > a]
        return np.unique(np.concatenate([self.frequent, *lists]))
