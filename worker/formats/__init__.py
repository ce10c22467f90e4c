"""File formats: a reader turns a file into translatable units and an untouched skeleton, and the
same object writes the translations back into that skeleton (``Parsed.render``).

Formats never import the engine: they hand unit texts over and take translations back.
Plain text keeps its own path (``worker.documents``); the formats here are chosen by file
extension or by name (``nmt translate --format``).
"""
from __future__ import annotations

import importlib
from pathlib import Path

from .model import FormatError, Parsed, Unit, rebreak

# format -> (module, reader); the parser libraries load only when a file of that format is read
READERS = {"srt": ("subtitles", "parse_srt"), "vtt": ("subtitles", "parse_vtt"), "po": ("po", "parse_po")}
EXTENSIONS = {".srt": "srt", ".vtt": "vtt", ".po": "po", ".pot": "po", ".txt": "txt", ".text": "txt"}
FORMATS = ("txt", *READERS)


def format_of(path: str | Path, name: str | None = None) -> str:
    """The format to read ``path`` as: ``name`` if given, else by extension; ``txt`` for any
    unknown extension (plain text is read as UTF-8 and refused if it is not)."""
    if name is not None:
        if name not in FORMATS:
            raise FormatError(f"unknown format {name!r}; choose one of {', '.join(FORMATS)}")
        return name
    return EXTENSIONS.get(Path(path).suffix.lower(), "txt")


def parse(fmt: str, text: str) -> Parsed:
    """``text`` (a decoded file) read as ``fmt``; ``FormatError`` names what is malformed."""
    module, reader = READERS[fmt]
    return getattr(importlib.import_module(f".{module}", __name__), reader)(text)


__all__ = ["EXTENSIONS", "FORMATS", "FormatError", "Parsed", "Unit", "format_of", "parse", "rebreak"]
