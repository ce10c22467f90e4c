"""The lexical shortlist of an imported model (``nmt import --shortlist-corpus SRC TGT``).

A seeded sample of the given sentence pairs (plain text or gzip, one sentence a line, line i of
one file the translation of line i of the other) is encoded with the model's own SentencePiece
models and piece -> id tables, as the worker encodes (``worker.engine.vocabulary``), and tabled by
``export.shortlist.build_table`` (eflomal links in both directions; copies only when the model
has one vocabulary for both sides). The engine decodes onto it with the step graph's own weights
(``worker.engine.shortlist_graph``), so ``shortlist.npz`` holds the table only.
"""
from __future__ import annotations

import gzip
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from worker.engine.bundle import BundleError

from ..shortlist import SHORTLIST_FILE, ShortlistOptions, ShortlistTable, build_table, sample_pairs, write_shortlist
from .source import ModelSource
from .spec import ImportModelError


@dataclass(frozen=True)
class ShortlistCorpus:
    """Where the shortlist's sentence pairs come from, and how the table is built."""

    source: Path  # source sentences, one a line (.gz: gzip)
    target: Path  # their translations, line for line
    options: ShortlistOptions = field(default_factory=ShortlistOptions)


def build_shortlist(source: ModelSource, corpus: ShortlistCorpus) -> ShortlistTable:
    """The translation table of a seeded sample of ``corpus`` in ``source``'s ids. A missing,
    unreadable or empty file, or files of different line counts, is an ``ImportModelError``
    naming the file."""
    import sentencepiece as spm

    from worker.engine.vocabulary import Vocabulary

    for path in (corpus.source, corpus.target):
        if not Path(path).is_file():
            raise ImportModelError(f"{path}: no such shortlist corpus file")
    sample = sample_pairs(_pairs(Path(corpus.source), Path(corpus.target)), corpus.options.pairs, corpus.options.seed)
    if not sample:
        raise ImportModelError(f"{corpus.source}: no sentence pair with text on both sides for the shortlist")
    src_ids, tgt_ids = (
        Vocabulary(spm.SentencePieceProcessor(model_file=str(model)), table).encode(texts)
        for model, table, texts in ((source.source_spm, source.vocabularies.source, [s for s, _ in sample]),
                                    (source.target_spm, source.vocabularies.target, [t for _, t in sample])))
    spec = source.spec
    return build_table(src_ids, tgt_ids, spec.source_vocab_size, spec.target_vocab_size, (spec.unk_id, spec.eos_id),
                       corpus.options, joint=source.vocabularies.shared)


def write_into(staging: Path, table: ShortlistTable, corpus: ShortlistCorpus) -> dict[str, Any]:
    """Write ``shortlist.npz`` into the bundle being built, check that the engine can derive its
    shortlist step graph from the bundle's step graph (fp32 or int8) and load it: the manifest's
    ``shortlist`` entry (on by default, as ``nmt export`` makes it when it costs no BLEU)."""
    import onnxruntime as ort

    from worker.engine.shortlist import Shortlist
    from worker.engine.shortlist_graph import ShortlistStep

    write_shortlist(staging / SHORTLIST_FILE, table)
    try:
        step = ShortlistStep.of(staging / "decoder_step.onnx")
        step.check(Shortlist.load(staging / SHORTLIST_FILE))
        options = ort.SessionOptions()
        options.log_severity_level = 3
        ort.InferenceSession(step.graph, options, providers=["CPUExecutionProvider"])
    except BundleError as exc:
        raise ImportModelError(f"lexical shortlist: {exc}") from None
    return {"file": SHORTLIST_FILE, "built": table.stats,
            "corpus": {"source": Path(corpus.source).name, "target": Path(corpus.target).name}, "default": True}


def _pairs(source: Path, target: Path) -> Iterator[tuple[str, str]]:
    """The stripped pairs with text on both sides; ``ImportModelError`` at the end when a file is
    empty or the two have different line counts."""
    counts = [0, 0]
    lines = [_lines(source), _lines(target)]
    while True:
        pair = [next(it, None) for it in lines]
        counts = [n + (line is not None) for n, line in zip(counts, pair)]
        if pair == [None, None]:
            break
        if None not in pair and pair[0].strip() and pair[1].strip():
            yield pair[0].strip(), pair[1].strip()
    for path, count in zip((source, target), counts):
        if count == 0:
            raise ImportModelError(f"{path}: the shortlist corpus file is empty")
    if counts[0] != counts[1]:
        raise ImportModelError(f"{target}: {counts[1]} lines, but {source} has {counts[0]}: the shortlist corpus "
                               "files must be parallel, line for line")


def _lines(path: Path) -> Iterator[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8") as lines:
            yield from lines
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise ImportModelError(f"{path}: cannot read the shortlist corpus file: {exc}") from None
