"""Parallel corpus reading: plain or gzip, line-aligned files, in full or streamed, with errors
that name file and line.

Also length and length-ratio filtering (in subword tokens) that reports what it dropped.
"""
from __future__ import annotations

import gzip
import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence


class CorpusError(ValueError):
    """A corpus file is missing, undecodable, empty or misaligned; the message names the file."""


@dataclass(frozen=True)
class ParallelCorpus:
    """Line-aligned source and target sentences (whitespace-stripped)."""

    src: list[str]
    tgt: list[str]
    src_path: Path
    tgt_path: Path

    def __len__(self) -> int:
        return len(self.src)


@dataclass(frozen=True)
class FilterReport:
    kept: int
    too_short: int
    too_long: int
    bad_ratio: int

    @property
    def total(self) -> int:
        return self.kept + self.too_short + self.too_long + self.bad_ratio

    def __str__(self) -> str:
        return (
            f"kept {self.kept} of {self.total} sentence pairs "
            f"(dropped: {self.too_short} too short, {self.too_long} too long, {self.bad_ratio} length ratio)"
        )


def find_corpus_file(directory: Path, prefix: str, lang: str) -> Path:
    """``{directory}/{prefix}.{lang}`` or the same with ``.gz``; a clear error if neither exists."""
    plain = Path(directory) / f"{prefix}.{lang}"
    for candidate in (plain, plain.with_name(plain.name + ".gz")):
        if candidate.is_file():
            return candidate
    raise CorpusError(f"corpus file not found: {plain} (nor {plain.name}.gz) in {Path(directory).resolve()}")


def iter_lines(path: Path) -> Iterator[str]:
    """The lines of a UTF-8 text file, gzip or plain, stripped of surrounding whitespace, one at
    a time (memory does not grow with the file).

    Raises ``CorpusError`` naming the file and line number of the first undecodable line.
    """
    path = Path(path)
    opener = gzip.open if _is_gzip(path) else open
    try:
        with opener(path, "rb") as handle:
            for number, raw in enumerate(handle, start=1):
                try:
                    line = raw.decode("utf-8").strip()
                except UnicodeDecodeError as exc:
                    raise CorpusError(
                        f"{path}: line {number} is not valid UTF-8 (byte {exc.start}: {raw[exc.start:exc.start + 1]!r})"
                    ) from None
                yield line
    except FileNotFoundError:
        raise CorpusError(f"corpus file not found: {path}") from None
    except (OSError, EOFError) as exc:  # truncated or corrupt gzip
        raise CorpusError(f"{path}: cannot read: {exc}") from None


def read_lines(path: Path) -> list[str]:
    """All lines of a UTF-8 text file, gzip or plain, stripped (see ``iter_lines``)."""
    return list(iter_lines(path))


def iter_parallel(src_path: Path, tgt_path: Path) -> Iterator[tuple[str, str]]:
    """The non-blank (source, target) pairs of two line-aligned files, streamed.

    Errors name the file and line: a line blank on one side only, files of different lengths
    (found when the shorter one ends) and files with no pairs at all.
    """
    missing = object()
    pairs = 0
    number = 0
    for number, (s, t) in enumerate(itertools.zip_longest(iter_lines(src_path), iter_lines(tgt_path), fillvalue=missing), 1):
        if s is missing or t is missing:
            shorter, longer = (src_path, tgt_path) if s is missing else (tgt_path, src_path)
            raise CorpusError(f"line counts differ: {shorter} ends at line {number - 1}, {longer} goes on")
        if bool(s) != bool(t):
            raise CorpusError(f"{src_path if not s else tgt_path}: line {number} is empty but its translation is not "
                              "(misaligned corpus?)")
        if s:
            pairs += 1
            yield s, t
    if not pairs:
        raise CorpusError(f"empty corpus: {src_path} and {tgt_path} have no pairs ({number} lines)")


def read_parallel(src_path: Path, tgt_path: Path) -> ParallelCorpus:
    """Read two line-aligned files. Errors name the file and line for misalignment and emptiness."""
    src, tgt = read_lines(src_path), read_lines(tgt_path)
    if len(src) != len(tgt):
        shorter, longer = (src_path, tgt_path) if len(src) < len(tgt) else (tgt_path, src_path)
        raise CorpusError(
            f"line counts differ: {src_path} has {len(src)} lines, {tgt_path} has {len(tgt)}; "
            f"{shorter} ends at line {min(len(src), len(tgt))}, {longer} goes on"
        )
    if not src:
        raise CorpusError(f"empty corpus: {src_path} and {tgt_path} have no lines")
    for number, (s, t) in enumerate(zip(src, tgt), start=1):
        if bool(s) != bool(t):
            empty = src_path if not s else tgt_path
            raise CorpusError(f"{empty}: line {number} is empty but its translation is not (misaligned corpus?)")
    pairs = [(s, t) for s, t in zip(src, tgt) if s]
    if not pairs:
        raise CorpusError(f"empty corpus: every line of {src_path} and {tgt_path} is blank")
    return ParallelCorpus([s for s, _ in pairs], [t for _, t in pairs], Path(src_path), Path(tgt_path))


def filter_by_length(
    src_ids: Sequence[Sequence[int]],
    tgt_ids: Sequence[Sequence[int]],
    min_len: int,
    max_len: int,
    max_ratio: float,
) -> tuple[list[int], FilterReport]:
    """Indices of the pairs whose token lengths are in [min_len, max_len] with ratio <= max_ratio."""
    keep: list[int] = []
    short = long_ = ratio = 0
    for index, (s, t) in enumerate(zip(src_ids, tgt_ids)):
        ls, lt = len(s), len(t)
        if min(ls, lt) < min_len:
            short += 1
        elif max(ls, lt) > max_len:
            long_ += 1
        elif max(ls, lt) / min(ls, lt) > max_ratio:
            ratio += 1
        else:
            keep.append(index)
    return keep, FilterReport(len(keep), short, long_, ratio)


def _is_gzip(path: Path) -> bool:
    if path.suffix == ".gz":
        return True
    try:
        with open(path, "rb") as handle:
            return handle.read(2) == b"\x1f\x8b"
    except FileNotFoundError:
        raise CorpusError(f"corpus file not found: {path}") from None

