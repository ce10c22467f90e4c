"""From corpus files to id sequences: vocabulary training, encoding and length filtering."""
from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from pathlib import Path

from .config import Config
from .corpora import read_corpora, read_corpus
from .corpus import FilterReport, ParallelCorpus, filter_by_length, find_corpus_file, read_parallel
from .vocab import EOS_ID, Vocab, train_vocab

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Vocabs:
    src: Vocab
    tgt: Vocab
    joint: bool

    def encode_source(self, text: str) -> list[int]:
        """Source subword ids followed by eos (the encoder always sees an end marker)."""
        return [*self.src.encode(text), EOS_ID]

    def encode_sources(self, texts: list[str]) -> list[list[int]]:
        return [[*ids, EOS_ID] for ids in self.src.encode_many(texts)]


@dataclass(frozen=True)
class TrainingData:
    vocabs: Vocabs
    train_src: list[list[int]]
    train_tgt: list[list[int]]
    valid_src: list[list[int]]
    valid_tgt: list[list[int]]
    valid_refs: list[str]  # raw target sentences, for sacreBLEU
    filter_report: FilterReport
    # (start, end, weight) per training corpus: train_src[start:end] came from it
    corpus_ranges: tuple[tuple[int, int, float], ...] = ()
    corpus_reports: tuple[tuple[str, str], ...] = ()  # (corpus label, what its filters kept and dropped)

    def epoch_indices(self, seed: int) -> list[int] | None:
        """Training pair indices for one epoch under the corpus weights (None: each pair once).

        A weight w gives every pair of its corpus floor(w) copies plus one more with probability
        w - floor(w), drawn afresh each epoch from ``seed``.
        """
        if not self.corpus_ranges or all(w == 1.0 for _, _, w in self.corpus_ranges):
            return None
        import random

        rng = random.Random(seed)
        indices: list[int] = []
        for start, end, weight in self.corpus_ranges:
            whole, fraction = int(weight), weight - int(weight)
            for index in range(start, end):
                copies = whole + (1 if fraction and rng.random() < fraction else 0)
                indices.extend([index] * copies)
        return indices


def read_split(data_dir: Path, prefix: str, config: Config) -> ParallelCorpus:
    return read_parallel(
        find_corpus_file(data_dir, prefix, config.data.src_lang),
        find_corpus_file(data_dir, prefix, config.data.tgt_lang),
    )


def build_vocabs(corpus: ParallelCorpus, config: Config) -> Vocabs:
    v = config.vocab
    if v.joint:
        joint = train_vocab([*corpus.src, *corpus.tgt], v.size, v.model_type, v.character_coverage)
        return Vocabs(joint, joint, joint=True)
    return Vocabs(
        train_vocab(corpus.src, v.size, v.model_type, v.character_coverage),
        train_vocab(corpus.tgt, v.size, v.model_type, v.character_coverage),
        joint=False,
    )


def prepare_data(data_dir: Path, config: Config, vocabs: Vocabs | None = None) -> TrainingData:
    """Read train and validation splits, train vocabularies unless given, encode and filter."""
    if config.data.corpora:
        return _prepare_corpora(config, vocabs)
    train = read_split(data_dir, config.data.train_prefix, config)
    valid = read_split(data_dir, config.data.valid_prefix, config)
    if vocabs is None:
        vocabs = build_vocabs(train, config)
    src_ids = vocabs.encode_sources(train.src)
    tgt_ids = vocabs.tgt.encode_many(train.tgt)
    keep, report = filter_by_length(src_ids, tgt_ids, config.data.min_len, config.data.max_len, config.data.max_ratio)
    log.info("training data %s: %s", train.src_path.parent, report)
    return TrainingData(
        vocabs=vocabs,
        train_src=[src_ids[i] for i in keep],
        train_tgt=[tgt_ids[i] for i in keep],
        valid_src=vocabs.encode_sources(valid.src),
        valid_tgt=vocabs.tgt.encode_many(valid.tgt),
        valid_refs=list(valid.tgt),
        filter_report=report,
    )


def pair_hash(src: str, tgt: str) -> int:
    """A stable 64-bit hash of a sentence pair (Python's ``hash`` changes between processes)."""
    digest = hashlib.blake2b(src.encode("utf-8") + b"\t" + tgt.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "little")


def _prepare_corpora(config: Config, vocabs: Vocabs | None) -> TrainingData:
    """The ``data.corpora`` layout: several corpora, each filtered and reported on its own,
    exact duplicate pairs dropped across all of them (first occurrence kept), weights kept."""
    d = config.data
    corpora = [(spec, read_corpus(spec, config)) for spec in d.corpora]
    if vocabs is None:
        sample = ParallelCorpus([s for _, c in corpora for s in c.src], [t for _, c in corpora for t in c.tgt],
                                corpora[0][1].src_path, corpora[0][1].tgt_path)
        vocabs = build_vocabs(sample, config)
    seen: set[int] = set()
    train_src: list[list[int]] = []
    train_tgt: list[list[int]] = []
    ranges: list[tuple[int, int, float]] = []
    reports: list[tuple[str, str]] = []
    totals = [0, 0, 0, 0]
    for spec, corpus in corpora:
        src_ids = vocabs.encode_sources(corpus.src)
        tgt_ids = vocabs.tgt.encode_many(corpus.tgt)
        keep, report = filter_by_length(src_ids, tgt_ids, d.min_len, d.max_len, d.max_ratio)
        duplicates = 0
        start = len(train_src)
        for index in keep:
            if d.dedup:
                key = pair_hash(corpus.src[index], corpus.tgt[index])
                if key in seen:
                    duplicates += 1
                    continue
                seen.add(key)
            train_src.append(src_ids[index])
            train_tgt.append(tgt_ids[index])
        ranges.append((start, len(train_src), spec.weight))
        kept = len(train_src) - start
        line = (f"kept {kept} of {report.total} sentence pairs (dropped: {report.too_short} too short, "
                f"{report.too_long} too long, {report.bad_ratio} length ratio, {duplicates} duplicates); weight {spec.weight:g}")
        reports.append((spec.label, line))
        log.info("corpus %s: %s", spec.label, line)
        totals = [totals[0] + kept, totals[1] + report.too_short, totals[2] + report.too_long, totals[3] + report.bad_ratio]
    valid = read_corpora(d.valid, config) if d.valid else read_corpus(d.corpora[0], config)
    return TrainingData(
        vocabs=vocabs,
        train_src=train_src,
        train_tgt=train_tgt,
        valid_src=vocabs.encode_sources(valid.src),
        valid_tgt=vocabs.tgt.encode_many(valid.tgt),
        valid_refs=list(valid.tgt),
        filter_report=FilterReport(*totals),
        corpus_ranges=tuple(ranges),
        corpus_reports=tuple(reports),
    )
