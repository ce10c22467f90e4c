"""From corpus files to id sequences: vocabulary training, encoding and length filtering."""
from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from .config import Config
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
