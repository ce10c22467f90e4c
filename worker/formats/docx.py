"""Word documents (``.docx``), read and written with ``python-docx`` at the level of its XML.

Every paragraph with text is one unit: of the body, of tables (nested ones too), of text boxes, of
headers and footers. Its runs become text and markup: the formatting most of its text outside
hyperlinks has is the paragraph's own (a hyperlink's is the one most of its own text has: the link
style LibreOffice and Word put on its runs), and each stretch of runs formatted otherwise (bold,
italic, another font, a character style) is a ``Tag`` that comes back around the aligned target
words, as does each hyperlink (``formats.markup``). Two hyperlinks glued into one word
(``[Contents][Index]``) are parted by a space, which the translation keeps: one word cannot hold
both; a hyperlink that still gets no word keeps its source text, with a note, never none.

Code is never translated: a paragraph whose style is code (``Preformatted Text``, ``HTML
Preformatted``, ``Code``... or a style in a monospace font) is copied as it is and is no unit,
and a run in a monospace font (Courier, Consolas, Liberation Mono...) or with a code character
style (``Source Text``, ``HTML Code``, ``Teletype``..., resolved through ``word/styles.xml`` and its
``basedOn`` chains) is kept whole, its text out of the unit, as one point placed by the alignment.

Tabs, breaks, drawings, fields, bookmarks, footnote references and anything else that is not text
are point tags: the same XML elements, put back where the alignment says. Tracked insertions and
content controls are kept whole, untranslated, and the unit says so.

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
from typing import Sequence

import docx
from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.oxml.ns import qn
from lxml import etree

from .inline import inline_unit
from .markup import Link, transfer
from .model import FormatError, Parsed
from .runs import CODE_CHARACTER, CODE_PARAGRAPH, Stretches, base_formats, monospace, nest, replay, style_key

log = logging.getLogger(__name__)
_DROPPED = {"proofErr", "lastRenderedPageBreak"}
_KEPT_WHOLE = {"ins", "sdt", "smartTag", "customXml", "del", "moveFrom", "moveTo"}
_CLOSING = frozenset(")]}>»›\"'’”.,;:!?")  # punctuation that ends the word before it
_OPENING = frozenset("([{<«‹\"'‘“„¿¡")  # punctuation that starts the word after it


def _font(rpr) -> str | None:
    """The Latin font ``rpr`` sets (``w:rFonts`` ascii, else hAnsi), if any."""
    fonts = rpr.find(_w("rFonts")) if rpr is not None else None
    if fonts is None:
        return None
    return fonts.get(_w("ascii")) or fonts.get(_w("hAnsi"))


class _Styles:
    """Which paragraph and character styles of a document are code, read from its styles part:
    by name or id, or by the font the style sets itself or through its ``basedOn`` chain."""

    def __init__(self, document) -> None:
        self.by_id: dict[str, object] = {}
        self.default_paragraph: str | None = None
        root = next((rel.target_part.element for rel in document.part.rels.values()
                     if rel.reltype == RT.STYLES and not rel.is_external
                     and hasattr(rel.target_part, "element")), None)
        for style in root.iter(_w("style")) if root is not None else ():
            style_id = style.get(_w("styleId"))
            if style_id:
                self.by_id[style_id] = style
                if style.get(_w("type")) == "paragraph" and style.get(_w("default")) in ("1", "true", "on"):
                    self.default_paragraph = style_id

    def _named(self, style_id: str, names: frozenset[str]) -> bool:
        style = self.by_id.get(style_id)
        name = style.find(_w("name")) if style is not None else None
        return style_key(style_id) in names or (name is not None and style_key(name.get(_w("val"), "")) in names)

    def _style_font(self, style_id: str) -> str | None:
        """The font of a style, its own or the nearest in its ``basedOn`` chain."""
        seen: set[str] = set()
        while style_id and style_id not in seen and style_id in self.by_id:
            seen.add(style_id)
            style = self.by_id[style_id]
            font = _font(style.find(_w("rPr")))
            if font:
                return font
            based = style.find(_w("basedOn"))
            style_id = based.get(_w("val")) if based is not None else None
        return None

    def code_paragraph(self, p) -> bool:
        """Whether ``p`` is code by its paragraph style. The default style (Normal) is not code for
        its font alone: a document set in Courier is the document's face, not a listing."""
        found = p.find(f"{_w('pPr')}/{_w('pStyle')}")
        style_id = found.get(_w("val")) if found is not None else self.default_paragraph
        if not style_id:
            return False
        if self._named(style_id, CODE_PARAGRAPH):
            return True
        font = self._style_font(style_id) if style_id != self.default_paragraph else None
        return font is not None and monospace(font)

    def code_run(self, rpr) -> bool:
        """Whether a run with properties ``rpr`` is code: a code character style, or a monospace
        font of its own or of its character style."""
        if rpr is None:
            return False
        found = rpr.find(_w("rStyle"))
        style_id = found.get(_w("val")) if found is not None else None
        if style_id and self._named(style_id, CODE_CHARACTER):
            return True
        font = _font(rpr) or (self._style_font(style_id) if style_id else None)
        return font is not None and monospace(font)


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
    (tag number -> (run properties or None, element)). ``code``: the paragraph is code, no unit."""

    def __init__(self, p, fields: _Fields | None = None, styles: _Styles | None = None) -> None:
        self.p, self.formats, self.links, self.points, self.warnings = p, {}, {}, {}, []
        self.fields = fields or _Fields()
        self.styles = styles
        self.code = styles is not None and styles.code_paragraph(p)
        # tag number -> (the runs opening a HYPERLINK field, those closing it)
        self.field_links: dict[int, tuple[list, list]] = {}
        self.kept: list = []  # runs of a computed field being gathered into one point
        self.code_points: set[int] = set()  # points that are code runs (a list of adjacent ones)
        self.segments: list[tuple] = []  # ("text", text, rPr key, link number) | ("point", number, link number)
        self.keys: dict[bytes, object] = {}
        self.frozen: set[int] = set()  # ids of the code runs, which a render never writes into
        self._read(p, None)
        self._keep_gathered(None)
        self.base_key, self.link_keys = base_formats(self.segments)

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
        if self.styles is not None and self.styles.code_run(rpr) and \
                any((t.text or "").strip() for t in run.iter(_w("t"))):
            self._code(run, link)
            return
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

    def _code(self, run, link: int | None) -> None:
        """A code run: kept whole, as a point, with the code runs right before it."""
        last = self.segments[-1] if self.segments else None
        if last is not None and last[0] == "point" and last[1] in self.code_points:
            self.points[last[1]][2].append(run)
            return
        self.code_points.add(self._number())
        self._point(None, [run], link, in_run=False)

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
        than the paragraph (or, in a link, than the link), one for each hyperlink, and the points."""
        items: list[tuple[str, str, str, str]] = []
        stretches = Stretches(items)
        links: list[int] = []  # the links open at this point
        linked: dict[int, str] = {}  # link tag number -> its text
        glued: int | None = None  # the item after a link with words, while no whitespace followed it
        last = ""  # the last character of text so far
        for segment in self.segments:
            kind = segment[0]
            if kind == "text":
                _, text, key, _link = segment
                stretches.text(key, self.link_keys.get(links[-1], self.base_key) if links else self.base_key)
                items.append(("data", "", text, text))
                for number in links:
                    linked[number] = linked.get(number, "") + text
                last = text[-1:] or last
                if any(ch.isspace() for ch in text):
                    glued = None
            elif kind == "point":  # a tab or a break also separates words
                element = self.points[segment[1]][2]
                spacing = not isinstance(element, list) and _local(element) in ("tab", "br", "cr", "ptab")
                items.append(("point", "br" if spacing else "", f"\ue010p{segment[1]}\ue011", ""))
                if spacing:
                    glued = None
            else:  # a hyperlink: format stretches never cross its ends
                stretches.close()
                opening = kind == "link-open"
                if opening:
                    if glued is not None:
                        _part(items, glued)
                    links.append(segment[1])
                elif segment[1] in links:
                    links.remove(segment[1])
                items.append(("start" if opening else "end", "a", f"\ue010{'o' if opening else 'c'}{segment[1]}\ue011", ""))
                if not opening and any(ch.isalnum() for ch in linked.get(segment[1], "")) and \
                        last and not last.isspace():
                    glued = len(items)
                elif opening:
                    glued = None
        stretches.close()
        self.formats.update({number: self.keys[key] for number, key in stretches.formats.items()})
        return items

    def render(self, pieces, lead: str = "", trail: str = "") -> None:
        """Replace the paragraph's content by ``pieces`` (text and this paragraph's tags), with the
        whitespace ``lead`` and ``trail`` the source had around its text."""
        keep = [child for child in self.p if _local(child) == "pPr"]
        for child in list(self.p):
            if child not in keep:
                self.p.remove(child)
        containers, formats = [self.p], []
        self.frozen = {id(run) for n in self.code_points for run in self.points[n][2]}  # never written into
        opened: list[int] = []  # the links open

        def rpr():
            if formats:
                return self.formats[formats[-1]]
            return self.keys.get(self.link_keys.get(opened[-1], self.base_key) if opened else self.base_key)

        def mark(kind: str, number: int) -> None:
            if kind == "p":
                self._place(containers[-1], number)
            elif number in self.field_links or number in self.links:
                nest(opened, kind, number)
                if number in self.field_links:
                    containers[-1].extend(self.field_links[number][0 if kind == "o" else 1])
                elif kind == "o":
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

        self._text(self.p, lead, rpr())
        replay(pieces, lambda text: self._text(containers[-1], text, rpr()), mark)
        self._text(self.p, trail, rpr())

    def _place(self, container, number: int) -> None:
        """Point ``number`` put back at the end of ``container``: its elements as they were."""
        in_run, rpr, element = self.points[number]
        if isinstance(element, list):
            container.extend(element)
        elif in_run:
            run = self.p.makeelement(_w("r"), {})
            if rpr is not None:
                run.append(copy.deepcopy(rpr))
            run.append(element)
            container.append(run)
        else:
            container.append(element)

    def _text(self, container, text: str, rpr) -> None:
        if not text:
            return
        previous = container[-1] if len(container) else None
        if previous is not None and _local(previous) == "r" and len(previous) and _local(previous[-1]) == "t" and \
                id(previous) not in self.frozen and _same(previous.find(_w("rPr")), rpr):
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


def _part(items: list[tuple[str, str, str, str]], after: int) -> None:
    """A space put into ``items`` past ``after`` (where a link with words closed), before a link
    that opens glued to the same word: after the closing punctuation that follows the first link
    and before the opening punctuation of the second (``[Contents] [Index]``); a separator between
    them gets a space on each side (``Contents / Index``)."""
    between = [at for at in range(after, len(items)) if items[at][0] == "data"]
    text = "".join(items[at][3] for at in between)
    lead = len(text) - len(text.lstrip("".join(_CLOSING)))
    tail = len(text.rstrip("".join(_OPENING)))
    cuts = sorted({lead, max(tail, lead)} if lead < tail else {lead})
    for cut in reversed(cuts):  # from the end, so that earlier offsets stay valid
        _insert_space(items, between, cut)


def _insert_space(items: list[tuple[str, str, str, str]], between: list[int], offset: int) -> None:
    """A space at ``offset`` characters into the text of the data items ``between``."""
    for at in between:
        text = items[at][3]
        if offset <= len(text):
            items[at:at + 1] = [("data", "", part, part) for part in (text[:offset], " ", text[offset:]) if part]
            return
        offset -= len(text)
    items.append(("data", "", " ", " "))


def _same(a, b) -> bool:
    """Whether two run properties are the same, whatever namespaces are declared around them."""
    return (a is None and b is None) or (a is not None and b is not None and _canonical(a) == _canonical(b))


def _canonical(element) -> bytes:
    return etree.tostring(element, method="c14n", exclusive=True)


def _walk(document) -> list[tuple[str, _Paragraph]]:
    """(where, paragraph) for every paragraph of every story, in a fixed order."""
    found, styles = [], _Styles(document)
    for story, root in _stories(document):
        fields = _Fields()
        for number, p in enumerate(root.iter(_w("p")), 1):
            found.append((f"{story} paragraph {number}", _Paragraph(p, fields, styles)))
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
        if paragraph.code:  # copied as it is: code never goes to the model
            continue
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
            pieces, unit_notes = transfer(unit.text, unit.tags, translation, links[number], keep_link_text=True)
            paragraph.render(pieces, *around[number])
            if unit_notes:
                notes[number] = unit_notes
        out = io.BytesIO()
        document.save(out)
        return out.getvalue()

    return Parsed(units, render, marked=True)


__all__ = ["parse_docx", "FormatError"]
