"""Word documents (``.docx``), read and written with ``python-docx`` at the level of its XML.

Every paragraph with text is one unit: of the body, of tables (nested ones too), of text boxes, of
headers and footers. Its runs become text and markup: the formatting most of its text has is the
paragraph's own, and each stretch of runs formatted otherwise (bold, italic, another font, a
character style) is a ``Tag`` that comes back around the aligned target words, as does each
hyperlink (``formats.markup``). Tabs, breaks, drawings, fields, bookmarks, footnote references and
anything else that is not text are point tags: the same XML elements, put back where the alignment
says. Tracked insertions and content controls are kept whole, untranslated, and the unit says so.

Computed fields (PAGE, NUMPAGES, DATE, REF, TOC...: a ``w:fldSimple``, or the runs from a
``w:fldChar`` begin through its field code and result to its end, across paragraphs too) are
never written into: they are kept whole as one point, as the application recomputes their result.
A HYPERLINK field is a link: its code is kept, and its result (the text shown) is translated
inside it like a ``w:hyperlink``'s. Paragraph properties, styles, numbering, tables, sections, headers and footers and
every other part of the package are left as they are. Proofing marks and Word's cached page-break
hints are dropped (Word recomputes them).

The file is read again for each render, so a ``Parsed`` can render any number of times.
"""
from __future__ import annotations

import copy
import io
import logging
import re
import zipfile
from collections import Counter
from typing import Sequence

import docx
from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.oxml.ns import qn
from lxml import etree

from .inline import inline_unit
from .markup import Link, transfer
from .model import FormatError, Parsed

log = logging.getLogger(__name__)
_SENTINEL = re.compile("\ue010(o|c|p)(\\d+)\ue011")  # open / close / point tag number, in markup pieces
_DROPPED = {"proofErr", "lastRenderedPageBreak"}
_KEPT_WHOLE = {"ins", "sdt", "smartTag", "customXml", "del", "moveFrom", "moveTo"}


def _is_hyperlink(instruction: str) -> bool:
    return instruction.strip().upper().startswith("HYPERLINK")


class _Fields:
    """The complex fields open at a point of a story (``w:fldChar`` begin ... end), innermost last,
    each [field code, in its result]: text is computed while any open field is in its code, or in
    the result of a field that is not a HYPERLINK. Carried from paragraph to paragraph."""

    def __init__(self) -> None:
        self.open: list[list] = []

    def computed(self) -> bool:
        return any(not in_result or not _is_hyperlink(code) for code, in_result in self.open)


def _w(name: str) -> str:
    return qn(f"w:{name}")


def _local(element) -> str:
    tag = element.tag
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


_INVALID = "not a valid DOCX file"
_MISSING_PART = re.compile(r"no item named '([^']+)'")


def _open(data: bytes):
    """The python-docx document of ``data``. A file that is not a Word package is a ``FormatError``
    that says what is wrong in words: the client sent it, and a library's internal exception
    (an ``AttributeError`` on an XML element of the wrong kind) tells it nothing."""
    try:
        document = docx.Document(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise FormatError(f"{_INVALID}: it is not a ZIP package (a DOCX file is one): damaged, cut short, "
                          "or another kind of file") from None
    except KeyError as exc:  # zipfile's "There is no item named ..." or python-docx's missing relationship
        missing = _MISSING_PART.search(str(exc))
        raise FormatError(f"{_INVALID}: the package has no {missing.group(1) if missing else 'main document part'}"
                          ) from None
    except etree.XMLSyntaxError as exc:
        raise FormatError(f"{_INVALID}: a part of the package is not well-formed XML ({exc.msg})") from None
    except ValueError as exc:  # python-docx: "file '...' is not a Word file, content type is '...'"
        raise FormatError(f"{_INVALID}: {exc}") from None
    except Exception:  # noqa: BLE001 - any other part python-docx cannot make sense of
        log.debug("DOCX package refused", exc_info=True)
        raise FormatError(f"{_INVALID}: its parts are not those of a Word document") from None
    if getattr(document.element, "body", None) is None:
        raise FormatError(f"{_INVALID}: its main part is not a Word document (no <w:document> with a <w:body>)")
    return document


def _stories(document) -> list[tuple[str, object]]:
    """(name, root element) of the body, then of each header and footer part, in a fixed order."""
    stories = [("body", document.element.body)]
    for rel in sorted(document.part.rels.values(), key=lambda r: r.rId):
        if rel.reltype in (RT.HEADER, RT.FOOTER) and not rel.is_external:
            stories.append((str(rel.target_part.partname).rsplit("/", 1)[-1].split(".")[0], rel.target_part.element))
    return stories


class _Paragraph:
    """One paragraph read into ``inline_unit`` items, with what its tags stand for: ``formats``
    (tag number -> run properties), ``links`` (tag number -> hyperlink element) and ``points``
    (tag number -> (run properties or None, element))."""

    def __init__(self, p, fields: _Fields | None = None) -> None:
        self.p, self.formats, self.links, self.points, self.warnings = p, {}, {}, {}, []
        self.fields = fields or _Fields()
        # tag number -> (the runs opening a HYPERLINK field, those closing it)
        self.field_links: dict[int, tuple[list, list]] = {}
        self.kept: list = []  # runs of a computed field being gathered into one point
        self.segments: list[tuple] = []  # ("text", text, rPr key, link number) | ("point", number, link number)
        self.base_key, self.keys = b"", {}
        self._read(p, None)
        self._keep_gathered(None)
        counts = Counter()
        for segment in self.segments:
            if segment[0] == "text":
                counts[segment[2]] += len(segment[1])
        self.base_key = counts.most_common(1)[0][0] if counts else b""

    def _number(self) -> int:
        return len(self.links) + len(self.points) + len(self.formats) + len(self.field_links)

    def _read(self, parent, link: int | None) -> None:
        for child in parent:
            name = _local(child)
            if name in ("pPr", "rPr") or name in _DROPPED:
                continue
            if self.fields.computed() or (name == "r" and (child.find(_w("fldChar")) is not None
                                                           or child.find(_w("instrText")) is not None)):
                self._field_run(child, link)
            elif name == "r":
                self._run(child, link)
            elif link is None and (name == "hyperlink" or
                                   (name == "fldSimple" and _is_hyperlink(child.get(_w("instr"), "")))):
                number = self._number()
                self.links[number] = child
                self.segments.append(("link-open", number))
                self._read(child, number)
                self.segments.append(("link-close", number))
            else:
                if name in _KEPT_WHOLE and "".join(child.itertext()).strip():
                    self.warnings.append(f"{name} element kept untranslated")
                self._point(None, child, link, in_run=False)

    def _run(self, run, link: int | None) -> None:
        rpr = run.find(_w("rPr"))
        key = etree.tostring(rpr) if rpr is not None else b""
        self.keys.setdefault(key, rpr)
        for child in run:
            name = _local(child)
            if name == "rPr" or name in _DROPPED:
                continue
            if name == "t":
                self.segments.append(("text", child.text or "", key, link))
            else:
                self._point(rpr, child, link, in_run=True)

    def _point(self, rpr, element, link: int | None, in_run: bool) -> None:
        """A point tag: ``element`` as it is (a list: these elements), in a run of its own with the
        properties ``rpr`` if it stood in a run."""
        number = self._number()
        self.points[number] = (in_run, rpr, element)
        self.segments.append(("point", number, link))

    def _field_run(self, run, link: int | None) -> None:
        """A run of a complex field's markup, or an element of its computed result. The elements
        from a field's begin to its end are gathered into one point, except those of a HYPERLINK
        field: its runs up to the separator open a link, its end run closes it, and its result is
        text in between."""
        closing = None
        for child in run.iter(_w("instrText"), _w("fldChar")):
            name = _local(child)
            if name == "instrText" and self.fields.open:
                self.fields.open[-1][0] += child.text or ""
            elif name == "fldChar":
                kind = child.get(_w("fldCharType"))
                if kind == "begin":
                    self.fields.open.append(["", False])
                elif kind == "separate" and self.fields.open:
                    self.fields.open[-1][1] = True
                elif kind == "end" and self.fields.open:
                    code, in_result = self.fields.open.pop()
                    if in_result and _is_hyperlink(code) and not self.kept and _local(run) == "r":
                        closing = code
        if closing is not None:
            opened = [n for n, (start, end) in self.field_links.items() if not end]
            if opened:
                self.field_links[opened[-1]][1].append(run)
                self.segments.append(("link-close", opened[-1]))
            else:  # opened in an earlier paragraph: its end is kept as it is
                self._point(None, [run], link, in_run=False)
            return
        self.kept.append(run)
        if not self.fields.computed():
            top = self.fields.open[-1] if self.fields.open else None
            self._keep_gathered(top is not None and top[1] and _is_hyperlink(top[0]))

    def _keep_gathered(self, opens_link: bool | None) -> None:
        """The gathered runs as one point, or as the opening of a HYPERLINK field's link."""
        if not self.kept:
            return
        if opens_link:
            number = self._number()
            self.field_links[number] = (self.kept, [])
            self.segments.append(("link-open", number))
        else:
            self._point(None, self.kept, None, in_run=False)
        self.kept = []

    def items(self) -> list[tuple[str, str, str, str]]:
        """``inline_unit`` items: text, a paired tag for each stretch of text formatted otherwise
        than the paragraph, one for each hyperlink, and the points."""
        items, current = [], None  # current: the tag number of the open format stretch
        numbers: dict[bytes, int] = {}

        def close() -> None:
            nonlocal current
            if current is not None:
                items.append(("end", f"f{current}", f"\ue010c{current}\ue011", ""))
                current = None

        for segment in self.segments:
            kind = segment[0]
            if kind == "text":
                _, text, key, _link = segment
                if key != self.base_key:
                    number = numbers.setdefault(key, 10_000 + len(numbers))
                    if current != number:
                        close()
                        self.formats[number] = self.keys[key]
                        items.append(("start", f"f{number}", f"\ue010o{number}\ue011", ""))
                        current = number
                else:
                    close()
                items.append(("data", "", text, text))
            elif kind == "point":  # a tab or a break also separates words
                element = self.points[segment[1]][2]
                spacing = not isinstance(element, list) and _local(element) in ("tab", "br", "cr", "ptab")
                items.append(("point", "br" if spacing else "", f"\ue010p{segment[1]}\ue011", ""))
            else:  # a hyperlink: format stretches never cross its ends
                close()
                opening = kind == "link-open"
                items.append(("start" if opening else "end", "a", f"\ue010{'o' if opening else 'c'}{segment[1]}\ue011", ""))
        close()
        return items

    def render(self, pieces, lead: str = "", trail: str = "") -> None:
        """Replace the paragraph's content by ``pieces`` (text and this paragraph's tags), with the
        whitespace ``lead`` and ``trail`` the source had around its text."""
        keep = [child for child in self.p if _local(child) == "pPr"]
        for child in list(self.p):
            if child not in keep:
                self.p.remove(child)
        containers, formats = [self.p], []
        base = self.keys.get(self.base_key)
        self._text(self.p, lead, base)
        for piece in pieces:
            if not piece.markup:
                self._text(containers[-1], piece.text, self.formats[formats[-1]] if formats else base)
                continue
            at = 0
            for match in _SENTINEL.finditer(piece.text):
                self._text(containers[-1], piece.text[at:match.start()], self.formats[formats[-1]] if formats else base)
                at = match.end()
                kind, number = match.group(1), int(match.group(2))
                if kind == "p":
                    in_run, rpr, element = self.points[number]
                    if isinstance(element, list):
                        containers[-1].extend(element)
                    elif in_run:
                        run = self.p.makeelement(_w("r"), {})
                        if rpr is not None:
                            run.append(copy.deepcopy(rpr))
                        run.append(element)
                        containers[-1].append(run)
                    else:
                        containers[-1].append(element)
                elif number in self.field_links:
                    containers[-1].extend(self.field_links[number][0 if kind == "o" else 1])
                elif number in self.links:
                    if kind == "o":
                        link = self.links[number]
                        fresh = self.p.makeelement(link.tag, dict(link.attrib))
                        containers[-1].append(fresh)
                        containers.append(fresh)
                    elif len(containers) > 1:
                        containers.pop()
                elif kind == "o":
                    formats.append(number)
                elif formats:
                    formats.pop()
            self._text(containers[-1], piece.text[at:], self.formats[formats[-1]] if formats else base)
        self._text(self.p, trail, base)

    def _text(self, container, text: str, rpr) -> None:
        if not text:
            return
        previous = container[-1] if len(container) else None
        if previous is not None and _local(previous) == "r" and len(previous) and _local(previous[-1]) == "t" and \
                _same(previous.find(_w("rPr")), rpr):
            previous[-1].text = (previous[-1].text or "") + text  # one run per stretch of one formatting
            return
        run = container.makeelement(_w("r"), {})
        if rpr is not None:
            run.append(copy.deepcopy(rpr))
        t = run.makeelement(_w("t"), {})
        t.text = text
        t.set("{http://www.w3.org/XML/1998/namespace}space", "preserve")
        run.append(t)
        container.append(run)


def _same(a, b) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and etree.tostring(a) == etree.tostring(b))


def _walk(document) -> list[tuple[str, _Paragraph]]:
    """(where, paragraph) for every paragraph of every story, in a fixed order."""
    found = []
    for story, root in _stories(document):
        fields = _Fields()
        for number, p in enumerate(root.iter(_w("p")), 1):
            found.append((f"{story} paragraph {number}", _Paragraph(p, fields)))
    return found


def parse_docx(data: bytes) -> Parsed:
    if not isinstance(data, (bytes, bytearray)):
        raise FormatError("a DOCX file is binary: give its bytes")
    units, chosen, around = [], [], []
    document = _open(bytes(data))
    try:
        paragraphs = _walk(document)
    except Exception:  # noqa: BLE001 - a header or footer part of the wrong kind, say
        log.warning("DOCX parts refused", exc_info=True)  # kept in the log: it may be a reader bug
        raise FormatError(f"{_INVALID}: its header, footer or body parts are not those of a Word document") from None
    for index, (where, paragraph) in enumerate(paragraphs):
        unit, lead, trail = inline_unit(paragraph.items(), where) if paragraph.segments else (None, "", "")
        if unit is None:
            continue
        around.append((lead, trail))
        if paragraph.warnings:
            unit = type(unit)(unit.text, unit.where, unit.lines, tuple(paragraph.warnings), unit.tags)
        units.append(unit)
        chosen.append(index)

    def render(translations: Sequence[str], links: Sequence[Sequence[Link]], notes: dict[int, list[str]]) -> bytes:
        document = _open(bytes(data))
        paragraphs = _walk(document)
        for number, (index, unit, translation) in enumerate(zip(chosen, units, translations)):
            paragraph = paragraphs[index][1]
            paragraph.items()  # numbers the format stretches as the parse did
            pieces, unit_notes = transfer(unit.text, unit.tags, translation, links[number])
            if unit_notes:
                notes[number] = unit_notes
            paragraph.render(pieces, *around[number])
        out = io.BytesIO()
        document.save(out)
        return out.getvalue()

    return Parsed(units, render, marked=True)


__all__ = ["parse_docx", "FormatError"]
