"""File formats: a reader turns a file into translatable units and an untouched skeleton, and the
same object writes the translations back into that skeleton (``Parsed.render``).

Formats never import the engine: they hand unit texts over and take translations back.
Plain text keeps its own path (``worker.documents``); the formats here are chosen by file
extension or by name (``nmt translate --format``).
"""
from __future__ import annotations

import importlib
from pathlib import Path

from .model import FormatError, Parsed, Tag, Unit, rebreak

# format -> (module, reader); the parser libraries load only when a file of that format is read
READERS = {"srt": ("subtitles", "parse_srt"), "vtt": ("subtitles", "parse_vtt"), "po": ("po", "parse_po"),
           "html": ("html", "parse_html")}
EXTENSIONS = {".srt": "srt", ".vtt": "vtt", ".po": "po", ".pot": "po", ".html": "html", ".htm": "html",
              ".txt": "txt", ".text": "txt"}
FORMATS = ("txt", *READERS)


def format_of(path: str | Path, name: str | None = None) -> str:
    """The format to read ``path`` as: ``name`` if given, else by extension; ``txt`` for any
    unknown extension (plain text is read as UTF-8 and refused if it is not)."""
    if name is not None:
        if name not in FORMATS:
            raise FormatError(f"unknown format {name!r}; choose one of {', '.join(FORMATS)}")
        return name
    return EXTENSIONS.get(Path(path).suffix.lower(), "txt")


def document_links(segments) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """(source word span, target word span) character pairs of a translated unit, from its
    segments' alignments (``SegmentResult``; offsets are the unit's and its translation's)."""
    return [(tuple(s.alignment.source_spans[i]), tuple(s.alignment.target_spans[j]))
            for s in segments for i, j in s.alignment.pairs]


def parse(fmt: str, text: str) -> Parsed:
    """``text`` (a decoded file) read as ``fmt``; ``FormatError`` names what is malformed."""
    module, reader = READERS[fmt]
    return getattr(importlib.import_module(f".{module}", __name__), reader)(text)


__all__ = ["document_links", "EXTENSIONS", "FORMATS", "FormatError", "Parsed", "Tag", "Unit", "format_of", "parse", "rebreak"]
