"""OpenDocument files (``.odt``, ``.ods``, ``.odp``), read and written as the XML of their ZIP
package (OASIS ODF 1.3, part 3): ``content.xml``, the master pages of ``styles.xml`` (headers,
footers, text on every slide) and the title and description of ``meta.xml``.

Every ``text:p`` and ``text:h`` with words is a unit: of the body, of tables, lists, sections,
notes (``text:note``), frames and drawing shapes (``draw:text-box``, custom shapes, slide titles
and outlines, speaker notes), of headers and footers. Its ``text:span`` and ``text:a`` elements
are paired tags placed on the aligned target words (``formats.markup``), a link keeping its
target; ``text:s``, ``text:tab`` and ``text:line-break`` are points that part words; fields
(``text:page-number``, ``text:date``, ``text:time``, ``text:*-ref``, ``text:sequence``, user
fields, placeholders: any other element) are kept whole as points, never written into, as are
notes, frames, bookmarks and comments (``office:annotation``, never translated). Code is never
sent to the model: a paragraph in a code style (``Preformatted Text``...) or in a monospace font
is copied as it is, and a span in a code character style (``Source Text``, ``Teletype``...) or a
monospace font (by name, or a font face declared ``style:font-pitch="fixed"``) is kept whole, one
point (the names are ``formats.runs``'). Spreadsheet cells are text only when ``office:value-type`` is
``string`` and they hold no ``table:formula``: numbers, dates and formulas stay as they are.
The image titles and descriptions (``svg:title``, ``svg:desc``) and a presentation's footer and
header texts are units of their own.

The package is written again entry by entry, in its order, with the ``mimetype`` entry first and
stored, every entry other than the parts with units byte for byte (the manifest included); the
file is read again for each render.
"""
from __future__ import annotations

import io
import re
import zipfile
import zlib
from typing import Sequence

from lxml import etree

from .html import fixed_characters
from .inline import inline_unit
from .markup import Link, transfer
from .model import FormatError, Parsed, TextUnit
from .odf_language import retarget_languages
from .ooxml import serialized
from .runs import CODE_CHARACTER, CODE_PARAGRAPH, FIRST_FORMAT, monospace, replay, style_key

NS = {"office": "urn:oasis:names:tc:opendocument:xmlns:office:1.0",
      "text": "urn:oasis:names:tc:opendocument:xmlns:text:1.0",
      "table": "urn:oasis:names:tc:opendocument:xmlns:table:1.0",
      "draw": "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0",
      "style": "urn:oasis:names:tc:opendocument:xmlns:style:1.0",
      "fo": "urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0",
      "svg": "urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0",
      "presentation": "urn:oasis:names:tc:opendocument:xmlns:presentation:1.0",
      "manifest": "urn:oasis:names:tc:opendocument:xmlns:manifest:1.0",
      "dc": "http://purl.org/dc/elements/1.1/"}


def _q(name: str) -> str:
    prefix, local = name.split(":")
    return f"{{{NS[prefix]}}}{local}"


KINDS = {"odt": ("application/vnd.oasis.opendocument.text", "application/vnd.oasis.opendocument.text-template",
                 "application/vnd.oasis.opendocument.text-master"),
         "ods": ("application/vnd.oasis.opendocument.spreadsheet",
                 "application/vnd.oasis.opendocument.spreadsheet-template"),
         "odp": ("application/vnd.oasis.opendocument.presentation",
                 "application/vnd.oasis.opendocument.presentation-template")}
_PARAGRAPHS = (_q("text:p"), _q("text:h"))
_PAIRED = {_q("text:span"), _q("text:meta")}  # inline containers of text, written again around the aligned words
_LINK = _q("text:a")
_SPACING = {_q("text:s"), _q("text:tab"), _q("text:line-break")}
_DROPPED = {_q("text:soft-page-break")}  # a layout hint the application recomputes
# paragraphs inside these are not the document's visible text: comments, deleted text of tracked changes
_NOT_TEXT = {_q("office:annotation"), _q("text:tracked-changes")}
_CELLS = {_q("table:table-cell"), _q("table:covered-table-cell")}
_PLAIN = {_q("svg:title"), _q("svg:desc"), _q("presentation:header-decl"), _q("presentation:footer-decl")}
_META = (_q("dc:title"), _q("dc:description"), _q("dc:subject"))
MAX_UNPACKED = 1 << 30  # bytes a package may unpack to: a ZIP bomb is refused before it is read
_PARSER = etree.XMLParser(resolve_entities=False, load_dtd=False, no_network=True, huge_tree=True)


def _style_name(style) -> str:
    """A style's name as shown (``style:display-name``, or its name with ODF's ``_20_`` escapes
    decoded): ``Source_20_Text`` is "Source Text"."""
    shown = style.get(_q("style:display-name"))
    if shown:
        return shown
    return re.sub(r"_([0-9A-Fa-f]{2})_", lambda m: chr(int(m.group(1), 16)), style.get(_q("style:name"), ""))


class _Styles:
    """Which paragraph and text styles of one part are code: by name, or by the font a style sets
    itself or through its ``style:parent-style-name`` chain. The part's automatic styles are
    looked up before the document's common styles (``styles.xml``)."""

    def __init__(self, part, common) -> None:
        self.fonts: dict[str, tuple[str, str]] = {}  # font face name -> (family, pitch)
        self.styles: dict[tuple[str, str], object] = {}
        for root in (common, part):  # the part's own come last and win
            if root is None:
                continue
            for face in root.iter(_q("style:font-face")):
                family = (face.get(_q("svg:font-family")) or face.get(_q("style:name")) or "").strip("'\" ")
                self.fonts[face.get(_q("style:name"), "")] = (family, face.get(_q("style:font-pitch"), ""))
            for style in root.iter(_q("style:style")):
                self.styles[(style.get(_q("style:family"), ""), style.get(_q("style:name"), ""))] = style

    def _chain(self, family: str, name: str | None) -> list:
        chain, seen = [], set()
        while name and name not in seen and (family, name) in self.styles:
            seen.add(name)
            style = self.styles[(family, name)]
            chain.append(style)
            name = style.get(_q("style:parent-style-name"))
        return chain

    def _font_monospace(self, chain: list) -> bool:
        """Whether the nearest font set in ``chain`` is monospace."""
        for style in chain:
            properties = style.find(_q("style:text-properties"))
            if properties is None:
                continue
            face = properties.get(_q("style:font-name"))
            if face is not None:
                family, pitch = self.fonts.get(face, (face, ""))
                return pitch == "fixed" or monospace(family)
            family = properties.get(_q("fo:font-family"))
            if family is not None:
                return monospace(family.strip("'\" "))
        return False

    def code_paragraph(self, p) -> bool:
        """Whether ``p`` is code by its paragraph style; the default style ("Standard") is not
        code for its font alone: a document set in Courier is the document's face."""
        chain = self._chain("paragraph", p.get(_q("text:style-name")))
        if any(style_key(_style_name(s)) in CODE_PARAGRAPH for s in chain):
            return True
        below = next((i for i, s in enumerate(chain) if s.get(_q("style:name")) == "Standard"), len(chain))
        return self._font_monospace(chain[:below])

    def code_span(self, span) -> bool:
        chain = self._chain("text", span.get(_q("text:style-name")))
        return any(style_key(_style_name(s)) in CODE_CHARACTER for s in chain) or self._font_monospace(chain)


class _Paragraph:
    """One paragraph read into ``inline_unit`` items: ``paired`` (tag number -> the span or link
    element, written again as a shallow copy) and ``points`` (number -> the elements kept whole)."""

    def __init__(self, p, styles: _Styles) -> None:
        self.p, self.styles = p, styles
        self.code = styles.code_paragraph(p)
        self.items: list[tuple[str, str, str, str]] = []
        self.paired: dict[int, object] = {}
        self.points: dict[int, list] = {}
        self.code_points: set[int] = set()
        self.links = 0
        if not self.code:
            self._read(p)

    def _data(self, text: str | None) -> None:
        if text:
            self.items.append(("data", "", text, text))

    def _read(self, parent) -> None:
        self._data(parent.text)
        for child in parent:
            tag = child.tag if isinstance(child.tag, str) else ""
            if tag in _DROPPED:
                pass
            elif tag == _LINK or (tag in _PAIRED and not self._code(child)):
                if tag == _LINK:
                    number = self.links
                    self.links += 1
                else:
                    number = FIRST_FORMAT + len(self.paired) - self.links  # links below it
                self.paired[number] = child
                self.items.append(("start", f"t{number}", f"\ue010o{number}\ue011", ""))
                self._read(child)
                self.items.append(("end", f"t{number}", f"\ue010c{number}\ue011", ""))
            else:
                self._point(child, tag)
            self._data(child.tail)

    def _code(self, span) -> bool:
        return self.styles.code_span(span) and "".join(span.itertext()).strip() != ""

    def _point(self, element, tag: str) -> None:
        """``element`` kept whole: a code span joins the code span right before it."""
        code = tag in _PAIRED
        last = self.items[-1] if self.items else ("", "", "", "")
        previous = int(last[2][2:-1]) if last[0] == "point" else None  # its raw text is "\ue010p<number>\ue011"
        if code and previous in self.code_points:
            self.points[previous].append(element)
            return
        number = len(self.points)
        self.points[number] = [element]
        if code:
            self.code_points.add(number)
        self.items.append(("point", "br" if tag in _SPACING else "", f"\ue010p{number}\ue011", ""))

    def render(self, pieces, lead: str, trail: str) -> None:
        """Replace the paragraph's content by ``pieces`` (text and this paragraph's tags), with the
        whitespace the source had around its text."""
        p = self.p
        for child in list(p):
            p.remove(child)
        p.text = None
        containers = [p]

        def write(text: str) -> None:
            if not text:
                return
            container = containers[-1]
            if len(container):
                container[-1].tail = (container[-1].tail or "") + text
            else:
                container.text = (container.text or "") + text

        def mark(kind: str, number: int) -> None:
            if kind == "p":
                for element in self.points[number]:
                    element.tail = None
                    containers[-1].append(element)
            elif kind == "o":
                source = self.paired[number]
                fresh = p.makeelement(source.tag, dict(source.attrib))
                containers[-1].append(fresh)
                containers.append(fresh)
            elif len(containers) > 1:
                containers.pop()

        write(lead)
        replay(pieces, write, mark)
        write(trail)


def _skipped(p) -> bool:
    """Whether paragraph ``p`` is not text to translate: in a comment or deleted text, in an empty
    presentation placeholder, or in a cell whose value is a number, date or formula."""
    for above in p.iterancestors():
        if above.tag in _NOT_TEXT or above.get(_q("presentation:placeholder")) == "true":
            return True
        if above.tag in _CELLS and (above.get(_q("table:formula")) is not None or
                                    above.get(_q("office:value-type")) not in (None, "string")):
            return True
    return False


def read_package(data: bytes, label: str, kind: str) -> tuple[list[zipfile.ZipInfo], dict[str, bytes]]:
    """The entries of a ZIP package (OpenDocument, EPUB): its infos in order and each entry's bytes.
    ``label`` names the format in errors (``ODT``), ``kind`` the kind of package (``OpenDocument``)."""
    if not isinstance(data, (bytes, bytearray)):
        raise FormatError(f"an {label} file is binary: give its bytes")
    invalid = f"not a valid {label} file"
    try:
        archive = zipfile.ZipFile(io.BytesIO(bytes(data)))
        infos = archive.infolist()
        unpacked = sum(info.file_size for info in infos)
        if unpacked > MAX_UNPACKED:
            raise FormatError(f"{invalid}: its entries would take {unpacked} bytes unpacked, more than {MAX_UNPACKED}")
        return infos, {info.filename: archive.read(info) for info in infos}
    except (zipfile.BadZipFile, zlib.error, EOFError):
        raise FormatError(f"{invalid}: it is not a ZIP package (an {kind} file is one): damaged, cut short, "
                          "or another kind of file") from None
    except (NotImplementedError, RuntimeError) as exc:  # an unknown compression, a ZIP password
        raise FormatError(f"{invalid}: its ZIP entries cannot be read ({exc})") from None


def write_package(infos: list[zipfile.ZipInfo], entries: dict[str, bytes], replaced: dict[str, bytes]) -> bytes:
    """The package again with ``replaced`` entries: ``mimetype`` first and stored (ODF 1.3 part 2,
    3.3; OCF 3.3, 4.3), every other entry in its order, with its compression, date and mode."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for info in sorted(infos, key=lambda info: info.filename != "mimetype"):
            fresh = zipfile.ZipInfo(info.filename, info.date_time)
            fresh.external_attr, fresh.create_system = info.external_attr, info.create_system
            fresh.compress_type = zipfile.ZIP_STORED if info.filename == "mimetype" else info.compress_type
            archive.writestr(fresh, replaced.get(info.filename, entries[info.filename]))
    return out.getvalue()


class _Package:
    """The entries of an OpenDocument package and its XML parts, checked to be one of ``kind``."""

    def __init__(self, data: bytes, kind: str) -> None:
        label = kind.upper()
        invalid = f"not a valid {label} file"
        self.infos, self.entries = read_package(data, label, "OpenDocument")
        manifest = self.xml("META-INF/manifest.xml", invalid) if "META-INF/manifest.xml" in self.entries else None
        mimetype = self.entries.get("mimetype", b"").decode("ascii", "replace").strip()
        if not mimetype and manifest is not None:
            root = next((e for e in manifest.iter(_q("manifest:file-entry")) if e.get(_q("manifest:full-path")) == "/"),
                        None)
            mimetype = root.get(_q("manifest:media-type"), "") if root is not None else ""
        if mimetype not in KINDS[kind]:
            other = next((k for k, types in KINDS.items() if mimetype in types), None)
            said = f"an {other.upper()} file" if other else repr(mimetype[:80]) if mimetype else "no OpenDocument type"
            raise FormatError(f"{invalid}: its mimetype says {said}")
        if manifest is not None and next(manifest.iter(_q("manifest:encryption-data")), None) is not None:
            raise FormatError(f"cannot read this {label} file: it is encrypted (saved with a password); "
                              "save it without a password to translate it")
        if "content.xml" not in self.entries:
            raise FormatError(f"{invalid}: the package has no content.xml")
        self.invalid = invalid

    def xml(self, name: str, invalid: str | None = None):
        """The root element of XML entry ``name``, or None if the package has none."""
        if name not in self.entries:
            return None
        try:
            return etree.fromstring(self.entries[name], _PARSER)
        except etree.XMLSyntaxError as exc:
            raise FormatError(f"{invalid or self.invalid}: {name} is not well-formed XML ({exc.msg})") from None

    def write(self, replaced: dict[str, bytes]) -> bytes:
        return write_package(self.infos, self.entries, replaced)


def _walk(package: _Package) -> tuple[dict[str, object], list[tuple[str, str, object]]]:
    """The parsed parts, and (part, where, element) for every paragraph (``_Paragraph``) and
    plain text element of the document, in a fixed order."""
    roots = {name: package.xml(name) for name in ("content.xml", "styles.xml", "meta.xml")}
    found: list[tuple[str, str, object]] = []
    common = roots["styles.xml"]
    for name, scope in (("content.xml", roots["content.xml"]), ("styles.xml", None)):
        if name == "styles.xml":
            scope = next(common.iter(_q("office:master-styles")), None) if common is not None else None
        if scope is None:
            continue
        styles = _Styles(roots[name], common if name == "content.xml" else None)
        part, number, plain = name.split(".")[0], 0, 0
        for element in scope.iter(*_PARAGRAPHS, *_PLAIN):
            if element.tag in _PARAGRAPHS:
                number += 1
                if not _skipped(element):
                    found.append((name, f"{part} paragraph {number}", _Paragraph(element, styles)))
            elif not _skipped(element):
                plain += 1
                found.append((name, f"{part} {etree.QName(element).localname} {plain}", element))
    meta = roots["meta.xml"]
    for element in meta.iter(*_META) if meta is not None else ():
        found.append(("meta.xml", f"meta {etree.QName(element).localname}", element))
    return roots, found


def _plain_text(element) -> str | None:
    """The text of an element that holds text alone, whitespace collapsed; None if it holds
    elements or no letters."""
    if len(element) or not any(ch.isalpha() for ch in element.text or ""):
        return None
    return " ".join(element.text.split())


def parse_odf(data: bytes, kind: str, languages: tuple[str, str] | None = None) -> Parsed:
    """An OpenDocument package of ``kind`` (``odt``, ``ods``, ``odp``) read into units; with the
    translation's ``languages`` (source, target), its language attributes are set to the target's."""
    package = _Package(data, kind)
    _roots, found = _walk(package)
    units, chosen, around = [], [], []
    for index, (_part, where, item) in enumerate(found):
        if isinstance(item, _Paragraph):
            if item.code or not item.items:
                continue
            unit, lead, trail = inline_unit(fixed_characters(item.items), where)
        else:
            text = _plain_text(item)
            unit, lead, trail = (TextUnit(text, where), "", "") if text else (None, "", "")
        if unit is not None:
            units.append(unit)
            chosen.append(index)
            around.append((lead, trail))
    if not units:
        raise FormatError(f"this {kind.upper()} file has no text to translate: its paragraphs, cells and shapes "
                          "hold no words outside code, numbers, dates, formulas and fields")

    def render(translations: Sequence[str], links: Sequence[Sequence[Link]], notes: dict[int, list[str]]) -> bytes:
        fresh = _Package(data, kind)
        roots, items = _walk(fresh)
        changed = set()
        for number, (index, unit, translation) in enumerate(zip(chosen, units, translations)):
            part, _where, item = items[index]
            changed.add(part)
            if not isinstance(item, _Paragraph):
                item.text = translation
                continue
            pieces, unit_notes = transfer(unit.text, unit.tags, translation, links[number], keep_link_text=True)
            item.render(pieces, *around[number])
            if unit_notes:
                notes[number] = unit_notes
        if languages is not None:
            changed |= retarget_languages(roots, *languages)
        return fresh.write({part: serialized(roots[part], fresh.entries[part]) for part in changed})

    return Parsed(units, render, marked=True)


def parse_odt(data: bytes, languages: tuple[str, str] | None = None) -> Parsed:
    return parse_odf(data, "odt", languages)


def parse_ods(data: bytes, languages: tuple[str, str] | None = None) -> Parsed:
    return parse_odf(data, "ods", languages)


def parse_odp(data: bytes, languages: tuple[str, str] | None = None) -> Parsed:
    return parse_odf(data, "odp", languages)


__all__ = ["MAX_UNPACKED", "FormatError", "parse_odf", "parse_odp", "parse_ods", "parse_odt", "read_package",
           "write_package"]
