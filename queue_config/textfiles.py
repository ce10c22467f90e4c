"""Reading the text documents users hand in, for the local CLI, the client and the workers.

Line inputs (glossaries, test sets, standard input: ``decode_text``) are UTF-8, a leading UTF-8
byte-order mark dropped. Documents (``decode_document``) are decoded by what they say about
themselves: a byte-order mark (UTF-8, UTF-16, UTF-32) first, then an encoding the user names, then
the format's own declaration (the XML declaration of XLIFF and XHTML, a PO header's ``charset``,
HTML's ``<meta charset>`` and ``http-equiv`` Content-Type in its first 1,024 bytes, as the WHATWG
sniffing order has it), else UTF-8. Anything else is a ``DocumentError`` that says what the file is
and where: invalid UTF-8 names the line and byte offset, NUL bytes (binary data, or UTF-16 without
a mark) are refused rather than translated into garbage, and unreadable files give the operating
system's reason.
"""
from __future__ import annotations

import codecs
import re
from collections import defaultdict
from pathlib import Path
from typing import Iterable

from .names import format_of_name

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


_BOMS = (  # UTF-32 LE starts with the UTF-16 LE mark: test it first
    (codecs.BOM_UTF32_LE, "utf-32-le", "UTF-32"), (codecs.BOM_UTF32_BE, "utf-32-be", "UTF-32"),
    (codecs.BOM_UTF8, "utf-8", "UTF-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le", "UTF-16"), (codecs.BOM_UTF16_BE, "utf-16-be", "UTF-16"),
)
# XML without a byte-order mark: the declaration's first bytes tell a wide encoding (XML 1.0, appendix F)
_XML_WIDE = ((b"<\x00?\x00", "utf-16-le"), (b"\x00<\x00?", "utf-16-be"))
_XML_DECLARATION = re.compile(rb"""^\s*<\?xml\s[^>]*?\bencoding\s*=\s*["']([A-Za-z][A-Za-z0-9._-]*)["']""")
_META = re.compile(rb"<meta\b[^>]*>", re.I)
_META_CHARSET = re.compile(rb"""\bcharset\s*=\s*["']?\s*([A-Za-z0-9._:-]+)""", re.I)
_HTTP_EQUIV = re.compile(rb"""\bhttp-equiv\s*=\s*["']?\s*content-type""", re.I)
_PO_HEADER = re.compile(rb'(?m)^msgid\s+""\s*\r?\n(?:[ \t]*"[^\r\n]*\r?\n)*?msgstr\s+""\s*\r?\n'
                        rb'((?:[ \t]*"[^\r\n]*\r?\n?)*)')
_PO_CHARSET = re.compile(rb"charset=([A-Za-z0-9._:-]+)")
# HTML reads these labels as windows-1252 (WHATWG Encoding Standard)
_WINDOWS_1252 = frozenset({"latin_1", "ascii", "cp1252"})


def encoding_of(data: bytes, fmt: str = "txt", encoding: str | None = None) -> tuple[str, str]:
    """The Python codec a document is decoded with, and what chose it ("byte-order mark",
    "--encoding", "XML declaration", "meta charset", "PO header", "default"). ``fmt``: the
    document's format (``queue_config.names.FORMATS``); ``encoding``: what the user names for files
    that declare nothing. ``DocumentError`` for an encoding Python does not know."""
    for bom, codec, _name in _BOMS:
        if data.startswith(bom):
            return codec, "byte-order mark"
    if encoding:
        return _codec(encoding, "--encoding"), "--encoding"
    if fmt in ("xliff", "html"):
        for start, codec in _XML_WIDE:
            if data.startswith(start):
                return codec, "XML declaration"
        declared = _XML_DECLARATION.match(data[:1024])
        if fmt == "html":  # <meta> first, as browsers do; an XHTML file's XML declaration after it
            for meta in _META.finditer(data[:1024]):
                found = _META_CHARSET.search(meta.group())
                if found and (b"http-equiv" not in meta.group().lower() or _HTTP_EQUIV.search(meta.group())):
                    codec = _codec(found.group(1).decode("ascii"), "its <meta> charset")
                    return ("cp1252" if codec in _WINDOWS_1252 else codec), "meta charset"
        if declared:
            return _codec(declared.group(1).decode("ascii"), "its XML declaration"), "XML declaration"
    if fmt == "po":
        header = _PO_HEADER.search(data)
        charset = _PO_CHARSET.search(header.group(1)) if header else None
        if charset and charset.group(1) != b"CHARSET":  # a template's placeholder: no charset yet
            return _codec(charset.group(1).decode("ascii"), "its PO header"), "PO header"
    return "utf-8", "default"


def _codec(name: str, where: str) -> str:
    """The codec of an encoding's name. A declaration read as ASCII that names UTF-16 or UTF-32
    cannot be right (its own bytes say otherwise): such a file is read as UTF-8, as browsers do."""
    try:
        codec = codecs.lookup(name).name.replace("iso8859-1", "latin_1")
    except LookupError:
        raise DocumentError(f"{where} names the encoding {name!r}, which is not known") from None
    return "utf-8" if codec.startswith(("utf-16", "utf-32")) and where != "--encoding" else codec


def decode_document(data: bytes, fmt: str = "txt", encoding: str | None = None) -> str:
    """A document's bytes -> text, decoded as ``encoding_of`` says, without a byte-order mark;
    ``DocumentError`` otherwise. The text keeps its declaration as written: the format readers
    write their output as UTF-8 and say so in it."""
    codec, chosen = encoding_of(data, fmt, encoding)
    if chosen == "default":
        try:
            return decode_text(data)
        except DocumentError as exc:
            if str(exc).startswith("not valid UTF-8"):
                raise DocumentError(f"{exc}, and it declares no encoding: name its encoding "
                                    "(nmt translate --encoding, e.g. latin-1)") from None
            raise
    if codec == "cp1252" and chosen == "meta charset":
        try:
            return data.decode("cp1252")
        except UnicodeDecodeError:  # the five bytes windows-1252 leaves undefined stand for C1 controls
            return data.decode("latin-1")
    skip = next((len(bom) for bom, _codec, _name in _BOMS if data.startswith(bom)), 0)
    try:
        text = data[skip:].decode(codec)
    except UnicodeDecodeError as exc:
        raise DocumentError(f"not valid {codecs.lookup(codec).name.upper()} ({_where(data, exc.start + skip)}), "
                            f"the encoding {_CHOSEN[chosen]}") from None
    nul = text.find("\x00")
    if nul >= 0:
        raise DocumentError(f"contains NUL characters ({_where(text, nul)}): binary data, not text")
    return text


_CHOSEN = {"byte-order mark": "its byte-order mark names", "--encoding": "given with --encoding",
           "XML declaration": "its XML declaration names", "meta charset": "its <meta> charset names",
           "PO header": "its PO header names"}


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


def read_text_file(path: Path, encoding: str | None = None, fmt: str | None = None) -> str:
    """A document file's text, decoded by ``decode_document`` as the file's format (``fmt``, else
    its extension's) has it; ``DocumentError`` for unreadable files and undecodable content."""
    return decode_document(read_file_bytes(path), fmt or format_of_name(Path(path).name), encoding)


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
