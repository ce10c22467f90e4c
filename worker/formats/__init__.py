"""File formats: a reader turns a file into translatable units and an untouched skeleton, and the
same object writes the translations back into that skeleton (``Parsed.render``).

Formats never import the engine: they hand unit texts over and take translations back.
Plain text keeps its own path (``worker.documents``); the formats here are chosen by file
extension or by name (``nmt translate --format``).
"""
from __future__ import annotations

import importlib
from pathlib import Path

from queue_config.names import FORMAT_EXTENSIONS, format_of_name

from .lost_text import KEPT_SOURCE, keep_source
from .markup import Links
from .model import FormatError, OutputError, Parsed, Tag, TextUnit, rebreak

# format -> (module, reader); the parser libraries load only when a file of that format is read
READERS = {"srt": ("subtitles", "parse_srt"), "vtt": ("subtitles", "parse_vtt"), "po": ("po", "parse_po"),
           "html": ("html", "parse_html"), "xliff": ("xliff", "parse_xliff"),
           "markdown": ("markdown", "parse_markdown"), "docx": ("docx", "parse_docx"),
           "odt": ("odf", "parse_odt"), "ods": ("odf", "parse_ods"), "odp": ("odf", "parse_odp"),
           "epub": ("epub", "parse_epub"), "pptx": ("pptx", "parse_pptx"), "pptm": ("pptx", "parse_pptx"),
           "xlsx": ("xlsx", "parse_xlsx"), "xlsm": ("xlsx", "parse_xlsx")}
# read as bytes and written as bytes; the others are text, written as UTF-8
BINARY = frozenset({"docx", "odt", "ods", "odp", "epub", "pptx", "pptm", "xlsx", "xlsm"})
EXTENSIONS = FORMAT_EXTENSIONS  # shared with clients (queue_config.names), which never import the worker
FORMATS = ("txt", *READERS)


def format_of(path: str | Path, name: str | None = None) -> str:
    """The format to read ``path`` as: ``name`` if given, else by extension; ``txt`` for any
    unknown extension (plain text: UTF-8, or as its byte-order mark or ``--encoding`` says)."""
    if name is not None:
        if name not in FORMATS:
            raise FormatError(f"unknown format {name!r}; choose one of {', '.join(FORMATS)}")
        return name
    return format_of_name(Path(path).name)


def translate_parsed(parsed: Parsed, results, links_of) -> tuple[str, dict]:
    """The translated file and its JSON record from the units' translations (``DocumentResult``s,
    one per unit): {"units": [where, source, translation, segments, warnings], "segments": all of
    them, "warnings": all of them}. ``links_of(segments)``: the (source word span, target word
    span) character links that place a unit's markup (``worker.forced.segment_links``), and with them,
    as their ``translates``, the word table that trims tags' edges, if any. A segment
    the model gave no words for keeps its source text, flagged (``lost_text``)."""
    kept = [keep_source(result) for result in results]
    results = [result for result, _ in kept]
    links = None
    if parsed.marked:
        links = []
        for result, lost in kept:
            own = [s for k, s in enumerate(result.segments) if k not in lost]
            found = links_of(own)
            links.append(Links(list(found) + [(s, t) for k in sorted(lost) for s, t in
                                              zip(result.segments[k].alignment.source_spans,
                                                  result.segments[k].alignment.target_spans)],
                               getattr(found, "translates", None)))
    rendered = parsed.render([r.translation for r in results], links)
    notes = parsed.notes
    units, segments, warnings = [], [], []
    for index, (unit, result) in enumerate(zip(parsed.units, results)):
        own = result.to_json()
        lost = [f"no translation for {unit.where}: its source text is kept"] if kept[index][1] else []
        units.append({"where": unit.where, "source": unit.text, "translation": result.translation,
                      "segments": own["segments"],
                      "warnings": list(unit.warnings) + notes.get(index, []) + own["warnings"] + lost})
        segments += own["segments"]
        warnings += units[-1]["warnings"]
    return rendered, {"units": units, "segments": segments, "warnings": warnings}


# readers that use the translation's languages (XLIFF's attributes, PO plural forms, OpenDocument's language attributes)
LANGUAGE_AWARE = frozenset({"xliff", "po", "odt", "ods", "odp"})
SHEET_NAMED = frozenset({"xlsx", "xlsm"})  # readers that translate sheet names on request


def parse(fmt: str, text: str | bytes, languages: tuple[str, str] | None = None,
          translate_sheet_names: bool = False) -> Parsed:
    """``text`` (a decoded file, or the bytes of a ``BINARY`` one) read as ``fmt``; ``FormatError``
    names what is malformed. ``languages``: the translation's (source, target) languages, which a
    format that names them (XLIFF) checks against the file's and writes where the file has none,
    a PO catalogue takes its target's plural forms from, and an OpenDocument file's language
    attributes are set to. ``translate_sheet_names``: a workbook's sheet names are units too."""
    module, reader = READERS[fmt]
    read = getattr(importlib.import_module(f".{module}", __name__), reader)
    if fmt in SHEET_NAMED and translate_sheet_names:
        return read(text, translate_sheet_names=True)
    return read(text, languages) if languages is not None and fmt in LANGUAGE_AWARE else read(text)


__all__ = ["translate_parsed", "BINARY", "EXTENSIONS", "FORMATS", "FormatError", "KEPT_SOURCE", "OutputError", "Parsed", "Tag", "TextUnit", "format_of", "parse", "rebreak"]
