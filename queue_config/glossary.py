"""Glossaries (forced terminology) as users hand them in: a UTF-8 file of ``source<TAB>target``
lines, or [source, target] pairs in a job request. The one parser and validation shared by the
CLI, the client and the workers; matching and applying terms is the worker's (worker.text.glossary).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Mapping

from .textfiles import DocumentError, decode_text, read_file_bytes

MAX_TERMS = 10_000  # in one job request
Terms = tuple[tuple[str, str], ...]


class GlossaryError(ValueError):
    """A glossary cannot be used as given; the message names the file and line, or the term."""


def read_glossary(path: str | Path) -> Terms:
    """The terms of a glossary file: one ``source<TAB>target`` a line; blank lines and lines
    starting with ``#`` are skipped; a term repeated with the same target counts once."""
    try:
        text = decode_text(read_file_bytes(Path(path)))
    except DocumentError as exc:
        raise GlossaryError(f"glossary {path}: {exc}") from None
    return parse_glossary(text, f"glossary {path}")


def parse_glossary(text: str, name: str = "glossary") -> Terms:
    """``read_glossary`` for text already read; ``name`` opens every error message."""
    terms = _Terms(name)
    for number, line in enumerate(text.split("\n"), 1):
        line = line.rstrip("\r")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line.count("\t") != 1:
            found = "no tab" if "\t" not in line else f"{line.count(chr(9))} tabs"
            raise GlossaryError(f"{name}: line {number}: expected 'source<TAB>target', found {found} in {line!r}")
        source, target = line.split("\t")
        terms.add(source, target, f"line {number}")
    return terms.pairs()


def check_terms(raw: Any, name: str = "'glossary'", max_terms: int | None = MAX_TERMS) -> Terms:
    """Terms given as data: a list of [source, target] pairs, or a {source: target} mapping."""
    if isinstance(raw, Mapping):
        raw = list(raw.items())
    if isinstance(raw, (str, bytes)) or not isinstance(raw, Iterable):
        raise GlossaryError(f"{name} must be a list of [source, target] pairs, got {type(raw).__name__}")
    raw = list(raw)
    if max_terms is not None and len(raw) > max_terms:
        raise GlossaryError(f"{name} has {len(raw)} terms; at most {max_terms} are allowed")
    terms = _Terms(name)
    for number, pair in enumerate(raw, 1):
        if isinstance(pair, (str, bytes)) or not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise GlossaryError(f"{name}: term {number} must be a [source, target] pair, got {pair!r}")
        if not all(isinstance(side, str) for side in pair):
            raise GlossaryError(f"{name}: term {number} must hold two strings, got {pair!r}")
        for side in pair:
            if "\t" in side or "\n" in side or "\r" in side:
                raise GlossaryError(f"{name}: term {number} must not hold tabs or line breaks, got {pair!r}")
        terms.add(pair[0], pair[1], f"term {number}")
    return terms.pairs()


class _Terms:
    """Terms as they are added, stripped, with the checks that need the ones before."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.targets: dict[str, tuple[str, str, str]] = {}  # key -> (source, target, where)

    def add(self, source: str, target: str, where: str) -> None:
        source, target = source.strip(), target.strip()
        for side, text in (("source", source), ("target", target)):
            if not text:
                raise GlossaryError(f"{self.name}: {where}: empty {side} term")
        key = " ".join(source.casefold().split())  # terms match case-insensitively, any spacing
        if key in self.targets:
            _, first_target, first_where = self.targets[key]
            if first_target != target:
                raise GlossaryError(f"{self.name}: {where}: {source!r} -> {target!r}, but {first_where} "
                                    f"gives it as {first_target!r}")
            return
        self.targets[key] = (source, target, where)

    def pairs(self) -> Terms:
        return tuple((source, target) for source, target, _ in self.targets.values())
