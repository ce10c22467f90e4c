"""Training corpora streamed from disk (the ``data.corpora`` layout): a start-up scan, then one
deterministic pass per epoch with per-corpus length filters, exact-duplicate removal, weighted
mixing, and batches cut from a bounded shuffle buffer.

Memory does not grow with the corpora except through the duplicate scan: the scan keeps one
64-bit hash per pair (8 bytes, in an ``array``) until it has sorted them, then only a keep mask
of one byte per pair (5 MB for 5 M pairs). The vocabulary sample is a reservoir of at most
``vocab.input_sentence_size`` sentences; the shuffle buffer holds ``train.shuffle_buffer`` pairs
of int32 id arrays.
"""
from __future__ import annotations

import hashlib
import heapq
import itertools
import math
import random
from array import array
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import numpy as np

from .batching import Pair, buffered_batches
from .config import Config, CorpusSpec
from .corpora import describe_corpus, iter_corpus

ENCODE_CHUNK = 1024  # pairs encoded by one SentencePiece call


def pair_hash(src: str, tgt: str) -> int:
    """A stable 64-bit hash of a sentence pair (Python's ``hash`` changes between processes)."""
    digest = hashlib.blake2b(src.encode("utf-8") + b"\t" + tgt.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "little")


class Reservoir:
    """A uniform random sample of at most ``size`` items of a stream of unknown length
    (Li 1994, "Algorithm L": random numbers are drawn only for the items that enter)."""

    def __init__(self, size: int, seed: int | str) -> None:
        self.size = size
        self.items: list[Any] = []
        self.seen = 0
        self._rng = random.Random(seed)
        self._w = 1.0
        self._next = 0

    def add(self, item: Any) -> None:
        index, self.seen = self.seen, self.seen + 1
        if index < self.size:
            self.items.append(item)
            if index == self.size - 1:
                self._skip(index)
        elif index == self._next:
            self.items[self._rng.randrange(self.size)] = item
            self._skip(index)

    def _skip(self, index: int) -> None:
        self._w *= math.exp(math.log(1.0 - self._rng.random()) / self.size)
        gap = math.log(1.0 - self._rng.random()) / math.log1p(-self._w) if self._w < 1.0 else 0.0
        self._next = index + 1 + int(gap)


@dataclass
class CorpusCount:
    """What one pass did with one corpus: pairs read, dropped by each filter, kept, and the
    copies its weight produced."""

    pairs: int = 0
    duplicates: int = 0
    too_short: int = 0
    too_long: int = 0
    bad_ratio: int = 0
    kept: int = 0
    copies: int = 0

    def line(self, weight: float) -> str:
        return (f"kept {self.kept} of {self.pairs} sentence pairs (dropped: {self.too_short} too short, "
                f"{self.too_long} too long, {self.bad_ratio} length ratio, {self.duplicates} duplicates); "
                f"weight {weight:g}: {self.copies} pairs this epoch")


@dataclass(frozen=True)
class CorpusScan:
    """The start-up pass over every training corpus: pair counts, and for each pair (numbered
    across corpora in config order) whether it is the first occurrence of its text."""

    pairs: tuple[int, ...]  # per corpus
    duplicates: tuple[int, ...]  # per corpus: exact repeats of an earlier pair (any corpus)
    unique: np.ndarray  # bool [N]: False for a pair seen before (all True without dedup)
    sample_src: list[str] = field(default_factory=list)  # vocabulary sample (joint: both sides)
    sample_tgt: list[str] = field(default_factory=list)  # (separate vocabularies only)


def scan_corpora(config: Config, sample_size: int = 0, hash_pair: Callable[[str, str], int] | None = None) -> CorpusScan:
    """Read every training corpus once: check it, count it, find exact duplicates by a stable
    64-bit hash of the pair, and reservoir-sample ``sample_size`` sentences for SentencePiece
    (0: no sample). Files that are misaligned or unreadable fail here, before training starts."""
    hash_pair = hash_pair or pair_hash
    d = config.data
    hashes = array("Q")
    joint = config.vocab.joint
    seed = config.train.seed
    sample_src = Reservoir(sample_size, f"{seed}:vocab:src")
    sample_tgt = Reservoir(sample_size if not joint else 0, f"{seed}:vocab:tgt")
    counts = []
    for spec in d.corpora:
        n = 0
        for src, tgt in iter_corpus(spec, config):
            n += 1
            if d.dedup:
                hashes.append(hash_pair(src, tgt))
            if sample_size:
                sample_src.add(src)
                (sample_src if joint else sample_tgt).add(tgt)
        counts.append(n)
    total = sum(counts)
    unique = np.ones(total, dtype=bool)
    if d.dedup and total:
        values = np.frombuffer(hashes, dtype=np.uint64)
        _, first = np.unique(values, return_index=True)  # index of each hash's first occurrence
        del values, hashes
        unique[:] = False
        unique[first] = True
    offsets = np.cumsum([0, *counts])
    duplicates = tuple(int(total_c - unique[offsets[i]:offsets[i + 1]].sum()) for i, total_c in enumerate(counts))
    return CorpusScan(tuple(counts), duplicates, unique, sample_src.items, sample_tgt.items)


class CorpusStream:
    """Epoch passes over the training corpora as batches of encoded pairs.

    One pass (``epoch_batches(epoch)``):

    (1) the corpora are read in parallel and interleaved in proportion to their sizes (pair k of
        a corpus of n pairs comes at position (k + 0.5) / n of the merged stream), so each
        shuffle buffer holds a mix of all corpora;
    (2) a pair that repeats an earlier one (``CorpusScan.unique``) is dropped;
    (3) a corpus of weight w gives each pair floor(w) copies plus one with probability
        w - floor(w), drawn from a generator seeded by (seed, epoch, corpus);
    (4) pairs are encoded (source + eos) and dropped unless both sides have ``min_len`` to
        ``max_len`` tokens and a length ratio <= ``max_ratio``;
    (5) ``buffered_batches`` cuts the copies into token-budget batches inside a bounded,
        seeded shuffle buffer.

    The batch sequence depends only on the files, the config and the epoch; ``counts`` holds
    the per-corpus ``CorpusCount`` of the last complete pass (None before one has ended).
    """

    def __init__(self, config: Config, scan: CorpusScan, encode_src: Callable[[list[str]], list[list[int]]],
                 encode_tgt: Callable[[list[str]], list[list[int]]]) -> None:
        self.config = config
        self.scan = scan
        self.encode_src = encode_src
        self.encode_tgt = encode_tgt
        self.counts: list[CorpusCount] | None = None

    def epoch_batches(self, epoch: int) -> Iterator[list[Pair]]:
        t = self.config.train
        seed = t.seed + epoch
        counts = [CorpusCount(pairs=n, duplicates=dup) for n, dup in zip(self.scan.pairs, self.scan.duplicates)]
        offsets = itertools.accumulate(self.scan.pairs, initial=0)
        streams = [self._corpus_pairs(spec, index, offset, seed, counts[index])
                   for index, (spec, offset) in enumerate(zip(self.config.data.corpora, offsets))]
        merged = (pair for _, _, pair in heapq.merge(*streams, key=lambda item: (item[0], item[1])))
        yield from buffered_batches(merged, t.shuffle_buffer, t.batch_tokens, t.max_batch_sentences, seed)
        self.counts = counts

    def _corpus_pairs(self, spec: CorpusSpec, index: int, offset: int, seed: int,
                      count: CorpusCount) -> Iterator[tuple[float, int, Pair]]:
        """(merge key, corpus index, pair) for every copy of every kept pair of one corpus."""
        d = self.config.data
        rng = random.Random(f"{seed}:{index}")
        whole, fraction = int(spec.weight), spec.weight - int(spec.weight)
        n = max(self.scan.pairs[index], 1)
        unique = self.scan.unique
        raw = enumerate(iter_corpus(spec, self.config))
        while True:
            block = list(itertools.islice(raw, ENCODE_CHUNK))
            if not block:
                return
            chunk = [(k, s, t) for k, (s, t) in block if unique[offset + k]]
            copies = [whole + (1 if fraction and rng.random() < fraction else 0) for _ in chunk]
            src_ids = self.encode_src([s for _, s, _ in chunk])
            tgt_ids = self.encode_tgt([t for _, _, t in chunk])
            for (k, _, _), c, s, t in zip(chunk, copies, src_ids, tgt_ids):
                ls, lt = len(s), len(t)
                if min(ls, lt) < d.min_len:
                    count.too_short += 1
                elif max(ls, lt) > d.max_len:
                    count.too_long += 1
                elif max(ls, lt) / min(ls, lt) > d.max_ratio:
                    count.bad_ratio += 1
                else:
                    count.kept += 1
                    count.copies += c
                    pair = (np.asarray(s, dtype=np.int32), np.asarray(t, dtype=np.int32))
                    for _ in range(c):
                        yield (k + 0.5) / n, index, pair

    def describe(self) -> list[tuple[str, str]]:
        """(corpus label, line) per corpus: the last pass's counts, or the scan's before one."""
        lines = []
        for index, spec in enumerate(self.config.data.corpora):
            if self.counts is not None:
                lines.append((spec.label, self.counts[index].line(spec.weight)))
            else:
                lines.append((spec.label, f"{self.scan.pairs[index]} sentence pairs, {self.scan.duplicates[index]} "
                                          f"duplicates; weight {spec.weight:g} (length filters are counted as the first epoch reads it)"))
        return lines

    def records(self) -> list[dict[str, Any]]:
        """Per corpus, what a checkpoint records: files, sizes, weight and the last full pass."""
        out = []
        for index, spec in enumerate(self.config.data.corpora):
            record = describe_corpus(spec, self.config)
            record["pairs"] = self.scan.pairs[index]
            record["duplicates"] = self.scan.duplicates[index]
            record["last_pass"] = vars(self.counts[index]).copy() if self.counts is not None else None
            out.append(record)
        return out
