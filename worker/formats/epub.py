"""E-books (``.epub``, EPUB 2 and 3): each XHTML content document, the navigation document among
them, read as a page by the HTML reader (``formats.html``), the book's titles and description of
the package document (``dc:title``, ``dc:description``), and the labels of an EPUB 2 table of
contents (``toc.ncx``).

A content document keeps everything but its text byte for byte (markup, code, ``id`` and ``href``
attributes), so the navigation document's and the NCX's links still point at the same chapters
and anchors; the labels are translated, the targets never. Every document written is checked to
be well-formed XML, as XHTML must be (a translation that is not is never written). The package is
written again entry by entry, with the ``mimetype`` entry first and stored (OCF 3.3, 4.3); every
entry without units is copied byte for byte. A book whose content is encrypted (DRM: an
``encryption.xml`` entry for anything but obfuscated fonts) cannot be read.
"""
from __future__ import annotations

import posixpath
import re
from dataclasses import replace
from typing import Sequence
from urllib.parse import unquote

from lxml import etree

from .html import parse_html
from .markup import Link
from .model import FormatError, OutputError, Parsed, TextUnit
from .odf import read_package, write_package
from .ooxml import serialized

_INVALID = "not a valid EPUB file"
_MIMETYPE = "application/epub+zip"
_NS = {"c": "urn:oasis:names:tc:opendocument:xmlns:container", "opf": "http://www.idpf.org/2007/opf",
       "dc": "http://purl.org/dc/elements/1.1/", "ncx": "http://www.daisy.org/z3986/2005/ncx/",
       "enc": "http://www.w3.org/2001/04/xmlenc#"}
# font obfuscation (IDPF, Adobe): fonts mangled with the book's identifier, the text left readable
_FONT_OBFUSCATION = frozenset({"http://www.idpf.org/2008/embedding", "http://ns.adobe.com/pdf/enc#RC"})
_PARSER = etree.XMLParser(resolve_entities=False, load_dtd=False, no_network=True, huge_tree=True)
_XML_DECLARATION = re.compile(r"\s*<\?xml\s")
_PACKAGE_TEXTS = ("dc:title", "dc:description")
_NCX_TEXTS = "//ncx:docTitle/ncx:text | //ncx:navLabel/ncx:text"


def _xml(entries: dict[str, bytes], name: str):
    try:
        return etree.fromstring(entries[name], _PARSER)
    except KeyError:
        raise FormatError(f"{_INVALID}: the package has no {name}") from None
    except etree.XMLSyntaxError as exc:
        raise FormatError(f"{_INVALID}: {name} is not well-formed XML ({exc.msg})") from None


def _decoded(data: bytes, name: str) -> str:
    """An XHTML or XML document's text: UTF-8 or UTF-16 (EPUB allows no other), its mark dropped."""
    try:
        if data.startswith((b"\xff\xfe", b"\xfe\xff")):
            return data.decode("utf-16")
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise FormatError(f"{_INVALID}: {name} is neither UTF-8 nor UTF-16 ({exc.reason} at byte {exc.start})"
                          ) from None


class _Book:
    """The package: its entries, the package document (OPF) and where each document lies."""

    def __init__(self, data: bytes) -> None:
        self.infos, self.entries = read_package(data, "EPUB", "EPUB")
        mimetype = self.entries.get("mimetype", b"").decode("ascii", "replace").strip()
        if mimetype != _MIMETYPE:
            raise FormatError(f"{_INVALID}: its mimetype entry says {mimetype[:80]!r}, not {_MIMETYPE!r}" if mimetype
                              else f"{_INVALID}: the package has no mimetype entry")
        container = _xml(self.entries, "META-INF/container.xml")
        rootfile = next((r.get("full-path") for r in container.iterfind(".//c:rootfile", _NS)
                         if r.get("media-type") in (None, "application/oebps-package+xml")), None)
        if not rootfile or rootfile not in self.entries:
            raise FormatError(f"{_INVALID}: META-INF/container.xml names no package document in the book")
        self._refuse_encrypted()
        self.opf_name = rootfile
        self.opf = _xml(self.entries, rootfile)
        folder = posixpath.dirname(rootfile)
        self.items: dict[str, tuple[str, str]] = {}  # id -> (entry name, media type)
        for item in self.opf.iterfind(".//opf:manifest/opf:item", _NS):
            href = item.get("href", "")
            if "://" in href:  # a remote resource is no entry of the package
                continue
            name = posixpath.normpath(posixpath.join(folder, unquote(href.split("#")[0])))
            self.items[item.get("id", "")] = (name, item.get("media-type", ""))

    def _refuse_encrypted(self) -> None:
        if "META-INF/encryption.xml" not in self.entries:
            return
        root = _xml(self.entries, "META-INF/encryption.xml")
        for encrypted in root.iterfind(".//enc:EncryptedData", _NS):
            method = encrypted.find("enc:EncryptionMethod", _NS)
            if method is None or method.get("Algorithm") not in _FONT_OBFUSCATION:
                reference = encrypted.find(".//enc:CipherReference", _NS)
                where = reference.get("URI", "") if reference is not None else "its content"
                raise FormatError(f"cannot read this EPUB file: it is encrypted (DRM: {where[:80]} is encrypted); "
                                  "translate a copy without DRM")

    def documents(self) -> list[str]:
        """The XHTML documents in spine order, then the others of the manifest (the navigation
        document, say), each once."""
        spine = [self.items[ref.get("idref", "")][0] for ref in self.opf.iterfind(".//opf:spine/opf:itemref", _NS)
                 if ref.get("idref", "") in self.items]
        xhtml = [name for name, kind in self.items.values() if kind == "application/xhtml+xml"]
        ordered = [name for name in dict.fromkeys(spine + xhtml) if name in xhtml and name in self.entries]
        return ordered

    def ncx(self) -> str | None:
        return next((name for name, kind in self.items.values()
                     if kind == "application/x-dtbncx+xml" and name in self.entries), None)

    def write(self, replaced: dict[str, bytes]) -> bytes:
        return write_package(self.infos, self.entries, replaced)


def _plain(element) -> str | None:
    text = " ".join("".join(element.itertext()).split())
    return text if len(element) == 0 and any(ch.isalpha() for ch in text) else None


def _xml_elements(root, kind: str) -> list:
    if kind == "opf":
        metadata = root.find("opf:metadata", _NS)
        return [e for name in _PACKAGE_TEXTS for e in (metadata.iterfind(name, _NS) if metadata is not None else ())]
    return root.xpath(_NCX_TEXTS, namespaces=_NS)


def _well_formed(text: str) -> str | None:
    """Why ``text`` is not well-formed XML, or None."""
    try:
        etree.fromstring(text.encode("utf-8"), _PARSER)
    except etree.XMLSyntaxError as exc:
        return exc.msg
    return None


def parse_epub(data: bytes) -> Parsed:
    book = _Book(data)
    units: list[TextUnit] = []
    # (entry, Parsed of a page or the XML root of the OPF / NCX, first unit, units, document as read)
    parts: list[tuple[str, object, int, int, str]] = []
    for kind, name in (("opf", book.opf_name), ("ncx", book.ncx())):
        if name is None:
            continue
        elements = _xml_elements(_xml(book.entries, name), kind)
        texts = [(k, text) for k, text in enumerate(_plain(e) for e in elements) if text]
        for k, text in texts:
            where = f"package {etree.QName(elements[k]).localname}" if kind == "opf" else f"{name} label {k + 1}"
            units.append(TextUnit(text, where))
        if texts:
            parts.append((name, [k for k, _ in texts], len(units) - len(texts), len(texts), kind))
    for name in book.documents():
        text = _decoded(book.entries[name], name)
        if not _XML_DECLARATION.match(text):  # declared, it is read as UTF-8: no <meta charset> is added
            text = '<?xml version="1.0" encoding="UTF-8"?>\n' + text
        problem = _well_formed(text)
        if problem is not None:
            raise FormatError(f"{_INVALID}: {name} is not well-formed XHTML ({problem})")
        try:
            page = parse_html(text)
        except FormatError as exc:
            raise FormatError(f"{_INVALID}: {name}: {exc}") from None
        units += [replace(unit, where=f"{name} {unit.where}") for unit in page.units]
        if page.units:
            parts.append((name, page, len(units) - len(page.units), len(page.units), "xhtml"))
    if not units:
        raise FormatError("this EPUB file has no text to translate: its documents hold no words outside code")

    def render(translations: Sequence[str], links: Sequence[Sequence[Link]], notes: dict[int, list[str]]) -> bytes:
        fresh = _Book(data)
        replaced: dict[str, bytes] = {}
        for name, content, first, count, kind in parts:
            own = translations[first:first + count]
            if kind != "xhtml":
                root = _xml(fresh.entries, name)
                elements = _xml_elements(root, kind)
                for k, translation in zip(content, own):
                    elements[k].text = translation
                replaced[name] = serialized(root, fresh.entries[name])  # with its DOCTYPE
                continue
            page = content.render(own, links[first:first + count])
            notes.update({first + k: list(v) for k, v in content.notes.items()})
            problem = _well_formed(page)
            if problem is not None:
                raise OutputError(f"{name}: the translated document would not be well-formed XML ({problem})")
            replaced[name] = page.encode("utf-8")
        return fresh.write(replaced)

    return Parsed(units, render, marked=True)


__all__ = ["FormatError", "parse_epub"]
