"""Build a bundle's lexical shortlist (``shortlist.npz``, read by ``worker.shortlist``).

From a sample of the training pairs, encoded into the bundle's subword pieces: eflomal (Östling
and Tiedemann 2016, a Bayesian IBM-style aligner on PyPI) aligns them in both directions; every
link of either direction counts once for its (source piece, target piece). A source piece's
candidates are the ``per_source`` target pieces it is linked to most often (at least
``min_count`` times), plus, with a joint vocabulary, the piece itself (names and numbers are
copied). The ``frequent`` most frequent target pieces of the sample and the special ids are
candidates for every batch. The engine projects onto them with the step graph's own weights
(``worker.shortlist_graph``), so the file holds the table only.
"""
from __future__ import annotations

import os
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from worker.engine.shortlist import ARRAYS

SHORTLIST_FILE = "shortlist.npz"


@dataclass(frozen=True)
class ShortlistOptions:
    pairs: int = 100_000  # training pairs sampled for the alignment counts
    per_source: int = 50  # target candidates kept per source piece
    frequent: int = 300  # most frequent target pieces, candidates for every batch
    min_count: int = 2  # a (source, target) link seen fewer times is noise
    seed: int = 20261124


@dataclass(frozen=True)
class ShortlistTable:
    offsets: np.ndarray  # int64 [Vs + 1]
    targets: np.ndarray  # int32 [nnz]
    frequent: np.ndarray  # int32 [F]
    stats: dict


def count_links(src_ids: Sequence[Sequence[int]], tgt_ids: Sequence[Sequence[int]], tgt_vocab: int,
                quiet: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """eflomal in both directions over piece-id sentences -> (keys int64 [M] = s * V + t, counts
    int64 [M]) of the union of both directions' links, summed over the sample."""
    import eflomal

    keep = [i for i, (s, t) in enumerate(zip(src_ids, tgt_ids)) if len(s) and len(t)]
    src_lines = [" ".join(map(str, src_ids[i])) for i in keep]
    tgt_lines = [" ".join(map(str, tgt_ids[i])) for i in keep]
    keys: list[np.ndarray] = []
    with tempfile.TemporaryDirectory() as tmp:
        fwd, rev = os.path.join(tmp, "fwd"), os.path.join(tmp, "rev")
        eflomal.Aligner().align(src_lines, tgt_lines, links_filename_fwd=fwd, links_filename_rev=rev, quiet=quiet)
        with open(fwd, encoding="utf-8") as f_links, open(rev, encoding="utf-8") as r_links:
            for index, forward, backward in zip(keep, f_links, r_links):
                links = {tuple(map(int, p.split("-"))) for p in (forward.split() + backward.split())}
                if not links:
                    continue
                s, t = np.asarray(src_ids[index], dtype=np.int64), np.asarray(tgt_ids[index], dtype=np.int64)
                pairs = np.asarray(sorted(links), dtype=np.int64)
                keys.append(s[pairs[:, 0]] * tgt_vocab + t[pairs[:, 1]])
    if not keys:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.unique(np.concatenate(keys), return_counts=True)


def build_table(src_ids: Sequence[Sequence[int]], tgt_ids: Sequence[Sequence[int]], src_vocab: int, tgt_vocab: int,
                special_ids: Iterable[int], options: ShortlistOptions = ShortlistOptions(), joint: bool = False,
                quiet: bool = True) -> ShortlistTable:
    """The translation table of piece-id sentence pairs (see the module docstring)."""
    started = time.perf_counter()
    keys, counts = count_links(src_ids, tgt_ids, tgt_vocab, quiet)
    keep = counts >= options.min_count
    keys, counts = keys[keep], counts[keep]
    sources, targets = keys // tgt_vocab, keys % tgt_vocab
    # Per source piece: most frequent links first (ties: lower id), at most per_source of them.
    order = np.lexsort((targets, -counts, sources))
    sources, targets = sources[order], targets[order]
    starts = np.searchsorted(sources, np.arange(src_vocab))
    rank = np.arange(len(sources)) - starts[sources]
    sources, targets = sources[rank < options.per_source], targets[rank < options.per_source]
    if joint:  # a piece may be copied: the same id on the target side
        copies = np.arange(min(src_vocab, tgt_vocab), dtype=np.int64)
        both = np.unique(np.concatenate([sources * tgt_vocab + targets, copies * tgt_vocab + copies]))
        sources, targets = both // tgt_vocab, both % tgt_vocab
    offsets = np.zeros(src_vocab + 1, dtype=np.int64)
    np.add.at(offsets, sources + 1, 1)
    offsets = np.cumsum(offsets)
    frequency = np.bincount(np.concatenate([np.asarray(t, dtype=np.int64) for t in tgt_ids if len(t)] or
                                           [np.zeros(0, np.int64)]), minlength=tgt_vocab)
    frequent = np.argsort(-frequency, kind="stable")[: options.frequent]
    frequent = np.unique(np.concatenate([frequent, np.asarray(list(special_ids), dtype=np.int64)]))
    lengths = np.diff(offsets)
    stats = {"pairs": len(src_ids), "links": int(counts.sum()), "entries": int(len(targets)),
             "mean_per_source": round(float(lengths[lengths > 0].mean()) if lengths.any() else 0.0, 1),
             "frequent": int(len(frequent)), "seconds": round(time.perf_counter() - started, 1),
             "options": asdict(options)}  # nested: its pairs and frequent are requests, the counts above are what was used
    return ShortlistTable(offsets, targets.astype(np.int32), frequent.astype(np.int32), stats)


def write_shortlist(path: Path, table: ShortlistTable) -> None:
    """``shortlist.npz``: the table."""
    arrays = {"offsets": table.offsets, "targets": table.targets, "frequent": table.frequent}
    assert set(arrays) == set(ARRAYS)
    with open(path, "wb") as out:
        np.savez(out, **arrays)


def sample_pairs(pairs: Iterable[tuple[str, str]], size: int, seed: int) -> list[tuple[str, str]]:
    """A uniform, seeded sample of at most ``size`` pairs from a stream (memory bounded by ``size``)."""
    from training.stream import Reservoir

    reservoir = Reservoir(size, f"{seed}:shortlist")
    for pair in pairs:
        reservoir.add(pair)
    return list(reservoir.items)

