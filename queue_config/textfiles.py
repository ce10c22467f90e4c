"""Reading the plain-text documents users hand in, for the local CLI, the client and the workers.

Documents are UTF-8 (a leading byte-order mark is dropped). Anything else is a ``DocumentError``
that says what the file is and where: invalid UTF-8 names the line and byte offset, UTF-16/32
(recognised by its byte-order mark) and NUL bytes (binary data, or UTF-16 without a mark) are
refused rather than translated into garbage, and unreadable files give the operating system's reason.
"""
from __future__ import annotations

import codecs
from collections import defaultdict
from pathlib import Path
from typing import Iterable

_WIDE_BOMS = (
    (codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"),
    (codecs.BOM_UTF16_LE, "UTF-16"), (codecs.BOM_UTF16_BE, "UTF-16"),
)


class DocumentError(ValueError):
    """A document cannot be read as UTF-8 text; the message says why and where."""


def _where(data: bytes | str, offset: int) -> str:
    """``line N, byte offset M`` (``character offset`` in text) of ``offset`` in ``data``."""
    newline, unit = (b"\n", "byte") if isinstance(data, bytes) else ("\n", "character")
    return f"line {data.count(newline, 0, offset) + 1}, {unit} offset {offset}"


def decode_text(data: bytes) -> str:
    """UTF-8 bytes -> text, without a leading byte-order mark; ``DocumentError`` otherwise."""
    for bom, name in _WIDE_BOMS:  # UTF-32 LE starts with the UTF-16 LE mark: test it first
        if data.startswith(bom):
            raise DocumentError(f"is {name} text (byte-order mark); convert it to UTF-8")
    nul = data.find(b"\x00")
    if nul >= 0:
        raise DocumentError(f"contains NUL bytes ({_where(data, nul)}): binary data or UTF-16 "
                            "without a byte-order mark, not UTF-8 text")
    skip = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
    try:
        return data[skip:].decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DocumentError(f"not valid UTF-8 ({_where(data, exc.start + skip)})") from None


def check_text(text: str) -> str:
    """Text handed in as a string (a job message): NUL characters are refused as in files, and so
    are lone surrogates (``"\\udcff"``), which no UTF-8 file can hold."""
    nul = text.find("\x00")
    if nul >= 0:
        raise DocumentError(f"contains NUL characters ({_where(text, nul)}): binary data, not text")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise DocumentError(f"contains a lone surrogate U+{ord(text[exc.start]):04X} ({_where(text, exc.start)}): "
                            "not valid Unicode text") from None
    return text


def read_file_bytes(path: Path) -> bytes:
    """A file's bytes; ``DocumentError`` with the reason when it cannot be read."""
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise DocumentError("file not found") from None
    except IsADirectoryError:
        raise DocumentError("is a directory, not a file") from None
    except OSError as exc:  # permissions, symlink loops, I/O errors, over-long names
        raise DocumentError(f"cannot read: {exc.strerror or exc}") from None


def read_text_file(path: Path) -> str:
    """A document file's text; ``DocumentError`` for unreadable files and non-UTF-8 content."""
    return decode_text(read_file_bytes(path))


def output_collisions(paths: Iterable[Path], stem_of) -> dict[str, list[Path]]:
    """Output stems that two or more inputs would share (``stem_of(path) -> str``): their results
    would overwrite each other in one output directory."""
    by_stem: dict[str, list[Path]] = defaultdict(list)
    for path in paths:
        by_stem[stem_of(Path(path))].append(Path(path))
    return {stem: group for stem, group in by_stem.items() if len(group) > 1}


def collision_message(collisions: dict[str, list[Path]]) -> str:
    return "; ".join(f"{', '.join(map(str, group))} would all be written as '{stem}'"
                     for stem, group in collisions.items())
