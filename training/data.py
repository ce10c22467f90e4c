"""From corpus files to training batches and a validation set: vocabulary training, encoding and
length filtering (in memory for the single-directory layout, streamed for ``data.corpora``)."""
from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Protocol

from .batching import Pair, make_batches
from .config import Config
from .corpora import read_corpora, read_corpora_parts, read_corpus
from .corpus import ParallelCorpus, filter_by_length, find_corpus_file, read_parallel
from .stream import CorpusStream, pair_hash, scan_corpora  # noqa: F401  (pair_hash: public here too)
from .vocab import EOS_ID, Vocab, train_vocab

DEFAULT_VALID_SENTENCES = 1000  # validation pairs taken from the first corpus when no data.valid

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
class InMemoryBatches:
    """The single-directory layout: the whole (small) training split held as id lists, batched
    by ``make_batches`` over the full epoch."""

    train_src: list[list[int]]
    train_tgt: list[list[int]]
    config: Config

    def epoch_batches(self, epoch: int) -> Iterator[list[Pair]]:
        t = self.config.train
        seed = t.seed + epoch
        for indices in make_batches(self.train_src, self.train_tgt, t.batch_tokens, t.max_batch_sentences, seed):
            yield [(self.train_src[i], self.train_tgt[i]) for i in indices]


class BatchSource(Protocol):
    """Where an epoch's training batches come from (in memory or streamed from disk)."""

    def epoch_batches(self, epoch: int) -> Iterator[list[Pair]]: ...


@dataclass(frozen=True)
class TrainingData:
    vocabs: Vocabs
    source: BatchSource  # the epoch's batches, in their global order
    valid_src: list[list[int]]
    valid_tgt: list[list[int]]
    valid_texts: list[str]  # raw source sentences of the validation set
    valid_refs: list[str]  # raw target sentences, for sacreBLEU
    summary: str  # one line on the training data as a whole
    corpus_info: Callable[[], list[dict[str, Any]]]  # per corpus, what a checkpoint records
    corpus_reports: Callable[[], list[tuple[str, str]]]  # (corpus label, what its filters kept and dropped)
    valid_parts: tuple[tuple[str, int], ...] = ()  # data.valid's sets in order: (label, pairs), when several

    @property
    def train_src(self) -> list[list[int]]:
        return self.source.train_src  # type: ignore[attr-defined]  (in-memory layout only)

    @property
    def train_tgt(self) -> list[list[int]]:
        return self.source.train_tgt  # type: ignore[attr-defined]


def read_split(data_dir: Path, prefix: str, config: Config) -> ParallelCorpus:
    return read_parallel(
        find_corpus_file(data_dir, prefix, config.data.src_lang),
        find_corpus_file(data_dir, prefix, config.data.tgt_lang),
    )


def build_vocabs(src: list[str], tgt: list[str], config: Config) -> Vocabs:
    """SentencePiece models: one on ``src + tgt`` (joint), or one per side. SentencePiece itself
    keeps a random ``vocab.input_sentence_size`` of the sentences given."""
    v = config.vocab
    if v.joint:
        joint = train_vocab([*src, *tgt], v.size, v.model_type, v.character_coverage, v.input_sentence_size)
        return Vocabs(joint, joint, joint=True)
    return Vocabs(
        train_vocab(src, v.size, v.model_type, v.character_coverage, v.input_sentence_size),
        train_vocab(tgt, v.size, v.model_type, v.character_coverage, v.input_sentence_size),
        joint=False,
    )


def prepare_data(data_dir: Path, config: Config, vocabs: Vocabs | None = None) -> TrainingData:
    """Train vocabularies unless given, and set up the training batches and the validation set
    (the first ``train.valid_max_sentences`` pairs when that is set)."""
    if config.data.corpora:
        return _prepare_corpora(config, vocabs)
    train = read_split(data_dir, config.data.train_prefix, config)
    valid = read_split(data_dir, config.data.valid_prefix, config)
    if vocabs is None:
        vocabs = build_vocabs(train.src, train.tgt, config)
    src_ids = vocabs.encode_sources(train.src)
    tgt_ids = vocabs.tgt.encode_many(train.tgt)
    keep, report = filter_by_length(src_ids, tgt_ids, config.data.min_len, config.data.max_len, config.data.max_ratio)
    log.info("training data %s: %s", train.src_path.parent, report)
    source = InMemoryBatches([src_ids[i] for i in keep], [tgt_ids[i] for i in keep], config)
    info = [{"name": config.data.train_prefix, "files": [str(train.src_path.resolve()), str(train.tgt_path.resolve())],
             "bytes": [train.src_path.stat().st_size, train.tgt_path.stat().st_size], "weight": 1.0,
             "pairs": report.total, "last_pass": {"kept": report.kept, "too_short": report.too_short,
                                                  "too_long": report.too_long, "bad_ratio": report.bad_ratio}}]
    return _with_valid(vocabs, source, valid.src, valid.tgt, config, str(report), lambda: info, lambda: [])


def _with_valid(vocabs: Vocabs, source: BatchSource, src: list[str], tgt: list[str], config: Config, summary: str,
                info: Callable[[], list[dict[str, Any]]], reports: Callable[[], list[tuple[str, str]]],
                parts: tuple[tuple[str, int], ...] = ()) -> TrainingData:
    limit = config.train.valid_max_sentences
    if limit:
        src, tgt = src[:limit], tgt[:limit]
    return TrainingData(vocabs=vocabs, source=source, valid_src=vocabs.encode_sources(src),
                        valid_tgt=vocabs.tgt.encode_many(tgt), valid_texts=list(src), valid_refs=list(tgt),
                        summary=summary, corpus_info=info, corpus_reports=reports,
                        valid_parts=parts if len(parts) > 1 else ())


def _prepare_corpora(config: Config, vocabs: Vocabs | None) -> TrainingData:
    """The ``data.corpora`` layout, streamed (``training.stream``): a scan that counts the pairs,
    finds exact duplicates (first occurrence kept, across corpora) and samples sentences for the
    vocabulary; then each epoch reads the files again."""
    d = config.data
    scan = scan_corpora(config, config.vocab.input_sentence_size if vocabs is None else 0)
    if vocabs is None:
        vocabs = build_vocabs(scan.sample_src, scan.sample_tgt, config)
        scan.sample_src.clear()
        scan.sample_tgt.clear()
    stream = CorpusStream(config, scan, vocabs.encode_sources, vocabs.tgt.encode_many)
    summary = (f"{sum(scan.pairs)} sentence pairs in {len(scan.pairs)} corpora, {sum(scan.duplicates)} exact duplicates"
               f"{'' if d.dedup else ' (kept: data.dedup is off)'}, streamed from disk")
    parts: tuple[tuple[str, int], ...] = ()
    if d.valid:
        valid, parts = read_corpora_parts(d.valid, config, config.train.valid_max_sentences)
    else:  # no held-out set given: a bounded slice of the first corpus (training data!)
        log.warning("no data.valid: validating on the first pairs of %s, which are training data", d.corpora[0].label)
        valid = read_corpus(d.corpora[0], config, config.train.valid_max_sentences or DEFAULT_VALID_SENTENCES)
    return _with_valid(vocabs, stream, valid.src, valid.tgt, config, summary, stream.records, stream.describe, parts)
