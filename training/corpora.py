"""Reading the corpora a config lists (``data.corpora``, ``data.valid``, ``data.test``).

Each ``CorpusSpec`` names a directory and prefix, a pair of files, or a TSV file; this module turns
one into line-aligned sentences with errors that name the file and line.
"""
from __future__ import annotations

from pathlib import Path

from .config import Config, CorpusSpec
from .corpus import CorpusError, ParallelCorpus, find_corpus_file, read_lines, read_parallel


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


def read_tsv(path: Path) -> ParallelCorpus:
    """``source<TAB>target`` per line; blank lines are skipped, any other line needs exactly one tab."""
    src: list[str] = []
    tgt: list[str] = []
    for number, line in enumerate(read_lines(path), start=1):
        if not line:
            continue
        parts = line.split("\t")
        if len(parts) != 2 or not parts[0].strip() or not parts[1].strip():
            raise CorpusError(f"{path}: line {number} is not 'source<TAB>target' ({len(parts) - 1} tabs)")
        src.append(parts[0].strip())
        tgt.append(parts[1].strip())
    if not src:
        raise CorpusError(f"empty corpus: {path} has no pairs")
    return ParallelCorpus(src, tgt, path, path)


def read_corpus(spec: CorpusSpec, config: Config) -> ParallelCorpus:
    """All pairs of one corpus (the first ``max_sentences`` when that is set)."""
    first, second = corpus_files(spec, config.data.src_lang, config.data.tgt_lang)
    corpus = read_tsv(first) if second is None else read_parallel(first, second)
    if spec.max_sentences and len(corpus) > spec.max_sentences:
        n = spec.max_sentences
        corpus = ParallelCorpus(corpus.src[:n], corpus.tgt[:n], corpus.src_path, corpus.tgt_path)
    return corpus


def read_corpora(specs: tuple[CorpusSpec, ...], config: Config) -> ParallelCorpus:
    """Several corpora concatenated in order (validation and test sets)."""
    src: list[str] = []
    tgt: list[str] = []
    first = None
    for spec in specs:
        corpus = read_corpus(spec, config)
        first = first or corpus
        src.extend(corpus.src)
        tgt.extend(corpus.tgt)
    if first is None:
        raise CorpusError("no corpora listed")
    return ParallelCorpus(src, tgt, first.src_path, first.tgt_path)
