"""Reading the corpora a config lists (``data.corpora``, ``data.valid``, ``data.test``).

Each ``CorpusSpec`` names a directory and prefix, a pair of files, or a TSV file; this module turns
one into a stream of line-aligned sentence pairs with errors that name the file and line.
"""
from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any, Iterator

from .config import Config, CorpusSpec
from .corpus import CorpusError, ParallelCorpus, find_corpus_file, iter_lines, iter_parallel


def corpus_files(spec: CorpusSpec, src_lang: str, tgt_lang: str) -> tuple[Path, Path | None]:
    """The files behind a spec: (source, target), or (tsv, None) for a TSV corpus."""
    layout = spec.layout
    if layout == "pair":
        return Path(spec.src), Path(spec.tgt)
    if layout == "tsv":
        path = Path(spec.path)
        if not path.is_file():
            raise CorpusError(f"corpus file not found: {path}")
        return path, None
    directory = Path(spec.path)
    return find_corpus_file(directory, spec.prefix, src_lang), find_corpus_file(directory, spec.prefix, tgt_lang)


def iter_tsv(path: Path) -> Iterator[tuple[str, str]]:
    """``source<TAB>target`` per line, streamed; blank lines are skipped, any other line needs
    exactly one tab."""
    pairs = 0
    for number, line in enumerate(iter_lines(path), start=1):
        if not line:
            continue
        parts = line.split("\t")
        if len(parts) != 2 or not parts[0].strip() or not parts[1].strip():
            raise CorpusError(f"{path}: line {number} is not 'source<TAB>target' ({len(parts) - 1} tabs)")
        pairs += 1
        yield parts[0].strip(), parts[1].strip()
    if not pairs:
        raise CorpusError(f"empty corpus: {path} has no pairs")


def iter_corpus(spec: CorpusSpec, config: Config) -> Iterator[tuple[str, str]]:
    """The (source, target) pairs of one corpus, streamed from disk (the first ``max_sentences``
    when that is set)."""
    first, second = corpus_files(spec, config.data.src_lang, config.data.tgt_lang)
    pairs = iter_tsv(first) if second is None else iter_parallel(first, second)
    return itertools.islice(pairs, spec.max_sentences) if spec.max_sentences else pairs


def describe_corpus(spec: CorpusSpec, config: Config) -> dict[str, Any]:
    """What a checkpoint records of a corpus: its name, resolved absolute files and their sizes."""
    files = [p for p in corpus_files(spec, config.data.src_lang, config.data.tgt_lang) if p is not None]
    return {"name": spec.label, "files": [str(p.resolve()) for p in files],
            "bytes": [p.stat().st_size for p in files], "weight": spec.weight}


def read_corpus(spec: CorpusSpec, config: Config, limit: int = 0) -> ParallelCorpus:
    """The pairs of one corpus in memory: the first ``max_sentences`` (or ``limit``) when set.
    Only what is kept is read, so a bounded validation set costs bounded memory."""
    first, second = corpus_files(spec, config.data.src_lang, config.data.tgt_lang)
    pairs = iter_corpus(spec, config)
    if limit:
        pairs = itertools.islice(pairs, limit)
    src, tgt = [], []
    for s, t in pairs:
        src.append(s)
        tgt.append(t)
    return ParallelCorpus(src, tgt, first, second or first)


def read_corpora(specs: tuple[CorpusSpec, ...], config: Config, limit: int = 0) -> ParallelCorpus:
    """Several corpora concatenated in order (validation and test sets), at most ``limit`` pairs
    in all when it is set."""
    return read_corpora_parts(specs, config, limit)[0]


def read_corpora_parts(specs: tuple[CorpusSpec, ...], config: Config, limit: int = 0
                       ) -> tuple[ParallelCorpus, tuple[tuple[str, int], ...]]:
    """``read_corpora`` and, in order, each corpus's label and how many of the pairs are its own."""
    src: list[str] = []
    tgt: list[str] = []
    parts: list[tuple[str, int]] = []
    first = None
    for spec in specs:
        if limit and len(src) >= limit:
            break
        corpus = read_corpus(spec, config, limit - len(src) if limit else 0)
        first = first or corpus
        src.extend(corpus.src)
        tgt.extend(corpus.tgt)
        parts.append((spec.label, len(corpus.src)))
    if first is None:
        raise CorpusError("no corpora listed")
    return ParallelCorpus(src, tgt, first.src_path, first.tgt_path), tuple(parts)
