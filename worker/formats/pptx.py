"""PowerPoint presentations (``.pptx``, and ``.pptm`` with its macros), read and written at the level
of their XML parts; also the OOXML package and the paragraph of runs the XLSX reader shares.

Every paragraph with words (DrawingML ``a:p``) is one unit: in shapes and placeholders, tables,
grouped shapes at any depth, speaker notes, SmartArt (the diagram's data part and the drawing part
PowerPoint caches its layout in, which LibreOffice shows), and charts (titles, axis titles and rich
data labels, plus the series names and category labels of the chart's string caches). Slide
layouts and masters give only the text of shapes that are not placeholders (a logo's words): their
placeholders hold "Click to edit" prompts that no slide shows.

A paragraph's runs become text and markup, as in a Word document (``formats.docx``): the run
formatting most of its text outside links has is the paragraph's own, each stretch formatted
otherwise is a tag placed on the aligned target words, and each hyperlink (runs sharing one
``a:hlinkClick``: DrawingML puts a link on its runs' properties) is a tag whose runs keep the link's
relationship, so its target. Fields (slide number, date: ``a:fld``), line breaks, tabs, runs in a
monospace font (code) and anything else that is not text are points put back whole where the
alignment says; a field's text is never written into, as the application recomputes it.
Spelling marks on runs (``err``, ``dirty``) are dropped.

Text that grows is allowed to: the boxes keep their size and each text body its autofit setting
(``a:normAutofit``: the application shrinks the text when it next lays it out, as LibreOffice does
on opening; ``a:spAutoFit``: the shape grows to the text; none: longer text may overflow the box).
The chart's embedded workbook keeps its source labels (editing the chart's data brings them back).

Every part that holds no translated text is written back byte for byte: media, themes, the
presentation part, a ``.pptm``'s ``vbaProject.bin`` (macros are kept, not run and not changed).
An encrypted file, a legacy binary ``.ppt``, a damaged package and a file with no text are each a
``FormatError`` that says so. The file is read again for each render, so a ``Parsed`` renders any
number of times.
"""
from __future__ import annotations

import copy
import io
import posixpath
import re
import zipfile
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

from lxml import etree

from .inline import inline_unit
from .markup import Link, Piece, transfer
from .model import FormatError, Parsed

A = "http://schemas.openxmlformats.org/drawingml/2006/main"
P = "http://schemas.openxmlformats.org/presentationml/2006/main"
R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
C = "http://schemas.openxmlformats.org/drawingml/2006/chart"
DGM = "http://schemas.openxmlformats.org/drawingml/2006/diagram"
_RELS = "{http://schemas.openxmlformats.org/package/2006/relationships}"
_TYPES = "{http://schemas.openxmlformats.org/package/2006/content-types}"
_SENTINEL = re.compile("\ue010(o|c|p)(\\d+)\ue011")  # open / close / point tag number, in markup pieces
_LAYOUT = re.compile(r"([\t\n\v]|_x000[bB]_)")  # characters of a run's text that are layout, not words
_CFB = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # an OLE compound file: a legacy binary file, or an encrypted OOXML one
MAX_UNPACKED = 512 * 1024 * 1024  # a package that unpacks to more is refused (a ZIP bomb)
# entities are never resolved and nothing is fetched: a part's XML is data from the client
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)
_MONOSPACE = frozenset("courier|courier new|consolas|liberation mono|dejavu sans mono|source code pro|menlo|monaco|"
                       "lucida console|noto mono|inconsolata".split("|"))


def _q(namespace: str, name: str) -> str:
    return f"{{{namespace}}}{name}"


def monospace(font: str | None) -> bool:
    """Whether ``font`` is a monospace face: a known one, or one with "Mono" or "Code" as a word."""
    if not font:
        return False
    name = " ".join(font.lower().split())
    words = {word.lower() for word in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", font)}
    return name in _MONOSPACE or name.startswith("courier") or bool(words & {"mono", "monospace", "code"})


_OTHER_KINDS = {"wordprocessingml": "a Word document (.docx)", "ms-word": "a Word document (.docm)",
                "spreadsheetml": "an Excel workbook (.xlsx)", "ms-excel": "an Excel workbook (.xlsm)",
                "presentationml": "a PowerPoint presentation (.pptx)",
                "ms-powerpoint": "a PowerPoint presentation (.pptm)"}


# -- the package ---------------------------------------------------------------------------------------
class OfficePackage:
    """An OOXML package (a ZIP of parts) as read from ``data``: its parts' content types and
    relationships, their XML, and the package written again with some parts replaced, every other
    part as it was. ``kind`` names the format in messages ("PPTX"); ``main_types``: the content
    types its main part may have."""

    def __init__(self, data: bytes, kind: str, main_types: Iterable[str]) -> None:
        self.kind = kind
        self.invalid = f"not a valid {kind} file"
        if not isinstance(data, (bytes, bytearray)):
            raise FormatError(f"a {kind} file is binary: give its bytes")
        data = bytes(data)
        if data.startswith(_CFB):
            if "EncryptedPackage".encode("utf-16-le") in data:
                raise FormatError(f"the {kind} file is encrypted (password-protected): save it without a password "
                                  "to translate it")
            raise FormatError(f"{self.invalid}: it is a legacy binary Office file (97-2003 format), not an Office "
                              f"Open XML package: save it as .{kind.lower()}")
        try:
            self.archive = zipfile.ZipFile(io.BytesIO(data))
            self.infos = self.archive.infolist()
        except (zipfile.BadZipFile, ValueError, EOFError):
            raise FormatError(f"{self.invalid}: it is not a ZIP package (a {kind} file is one): damaged, cut short, "
                              "or another kind of file") from None
        if sum(info.file_size for info in self.infos) > MAX_UNPACKED:
            raise FormatError(f"{self.invalid}: it unpacks to more than {MAX_UNPACKED // 2**20} MB")
        self.names = {info.filename for info in self.infos}
        if "[Content_Types].xml" not in self.names and "mimetype" in self.names:
            kind_of = self.read("mimetype").decode("ascii", "replace").strip()[:80]
            raise FormatError(f"{self.invalid}: it is an OpenDocument or EPUB file ({kind_of}), not an Office Open "
                              "XML package")
        if "[Content_Types].xml" not in self.names:
            raise FormatError(f"{self.invalid}: the package has no [Content_Types].xml")
        self.types = self._content_types()
        wanted = set(main_types)
        if not any(kind in wanted for kind in self.types.values()):
            other = next((what for key, what in _OTHER_KINDS.items() for found in self.types.values()
                          if key in found and found.endswith("main+xml")), None)
            raise FormatError(f"{self.invalid}: " + (f"it is {other}, not a {kind} file" if other else
                                                     f"the package has no main part of a {kind} file"))

    def read(self, name: str) -> bytes:
        try:
            return self.archive.read(name)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError) as exc:
            raise FormatError(f"{self.invalid}: its part {name} cannot be unpacked ({exc})") from None
        except KeyError:
            raise FormatError(f"{self.invalid}: the package has no part {name}") from None

    def xml(self, name: str):
        """The root element of part ``name``."""
        try:
            return etree.fromstring(self.read(name), _PARSER)
        except etree.XMLSyntaxError as exc:
            raise FormatError(f"{self.invalid}: its part {name} is not well-formed XML ({exc.msg})") from None

    def _content_types(self) -> dict[str, str]:
        """Part name -> content type, for every part of the package."""
        root = self.xml("[Content_Types].xml")
        defaults = {d.get("Extension", "").lower(): d.get("ContentType", "") for d in root.iter(f"{_TYPES}Default")}
        overrides = {o.get("PartName", "").lstrip("/").lower(): o.get("ContentType", "")
                     for o in root.iter(f"{_TYPES}Override")}
        types = {}
        for name in self.names:
            if name.endswith("/"):
                continue
            types[name] = overrides.get(name.lower()) or defaults.get(name.rsplit(".", 1)[-1].lower(), "")
        return types

    def parts(self, *suffixes: str) -> list[str]:
        """The parts whose content type ends with one of ``suffixes`` (``slide+xml``), in package order."""
        return [info.filename for info in self.infos
                if any(self.types.get(info.filename, "").endswith(s) for s in suffixes)]

    def relationships(self, name: str) -> dict[str, tuple[str, str]]:
        """Relationship id -> (type's last word, target part name) of part ``name``'s internal
        relationships ("" for the package's own)."""
        folder, base = posixpath.split(name)
        rels = posixpath.join(folder, "_rels", f"{base}.rels")
        if rels not in self.names:
            return {}
        found = {}
        for rel in self.xml(rels).iter(f"{_RELS}Relationship"):
            if rel.get("TargetMode") == "External":
                continue
            target = rel.get("Target", "")
            if target.startswith("/"):
                target = target.lstrip("/")
            else:
                target = posixpath.normpath(posixpath.join(folder, target))
            found[rel.get("Id", "")] = (rel.get("Type", "").rsplit("/", 1)[-1], target)
        return found

    def related(self, name: str, kind: str) -> list[str]:
        """The parts ``name`` relates to by relationships of type ``kind`` (``notesSlide``), by id."""
        rels = self.relationships(name)
        return [target for _, (rel_type, target) in sorted(rels.items()) if rel_type == kind and target in self.names]

    def write(self, replaced: dict[str, bytes]) -> bytes:
        """The package with the parts in ``replaced`` given new bytes, all else as it was (order, names,
        compression, timestamps)."""
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", allowZip64=True) as archive:
            for info in self.infos:
                fresh = zipfile.ZipInfo(info.filename, info.date_time)
                fresh.compress_type, fresh.external_attr = info.compress_type, info.external_attr
                fresh.comment, fresh.create_system = info.comment, info.create_system
                body = replaced[info.filename] if info.filename in replaced else self.read(info.filename)
                archive.writestr(fresh, body)
        return out.getvalue()


def serialized(root, original: bytes) -> bytes:
    """``root`` as the bytes of its part, with the XML declaration the part had (and the line break after it)."""
    declaration = re.match(rb"<\?xml[^>]*\?>\s*", original)
    body = etree.tostring(root.getroottree(), encoding="UTF-8", xml_declaration=False)
    return (declaration.group(0) if declaration else b"") + body


# -- a paragraph of runs -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Dialect:
    """How a markup language writes a paragraph of runs: DrawingML's ``a:p`` or SpreadsheetML's
    rich text (``si``, ``is``, a comment's ``text``)."""

    run: str  # a run, holding properties and text
    props: str  # a run's properties
    text: str  # a run's text (or, in SpreadsheetML, a paragraph's text without runs)
    head: frozenset[str]  # children kept first as they are (paragraph properties)
    tail: frozenset[str]  # children kept last as they are (end-of-paragraph properties, phonetic runs)
    font: Callable[[object], str | None]  # the Latin font a run's properties set
    links: tuple[str, ...] = ()  # children of a run's properties that make it a link (a:hlinkClick)
    volatile: tuple[str, ...] = ()  # attributes of a run's properties that say nothing of its formatting
    before_links: tuple[str, ...] = ()  # children of a run's properties that come after its link ones
    spacing: tuple[str, ...] = ()  # point elements that part words (a:br)
    preserve: bool = False  # write xml:space="preserve" on text elements


DRAWING = Dialect(
    run=_q(A, "r"), props=_q(A, "rPr"), text=_q(A, "t"), head=frozenset({_q(A, "pPr")}),
    tail=frozenset({_q(A, "endParaRPr")}),
    font=lambda props: None if props is None else next((f.get("typeface") for f in props.iter(_q(A, "latin"))), None),
    links=(_q(A, "hlinkClick"), _q(A, "hlinkMouseOver")), volatile=("err", "dirty", "smtClean", "smtId"),
    before_links=(_q(A, "rtl"), _q(A, "extLst")), spacing=(_q(A, "br"),))


class RunParagraph:
    """One paragraph of runs read into ``inline_unit`` items, with what its tags stand for: run
    properties per formatting key, the link properties of each link tag, and the points (elements
    kept whole, or a tab or line break inside a run's text). ``render`` writes a translation back."""

    def __init__(self, element, dialect: Dialect) -> None:
        self.element, self.dialect = element, dialect
        self.segments: list[tuple] = []  # ("text", text, key) | ("point", number) | ("link-open"|"link-close", number)
        self.points: dict[int, tuple] = {}  # number -> ("elements", [element, ...]) | ("char", character, key)
        self.props: dict[bytes, object] = {b"": None}  # formatting key -> run properties without link or marks
        self.link_props: dict[int, list] = {}  # link number -> its link elements
        self.formats: dict[int, bytes] = {}  # format tag number -> formatting key
        self.link_texts: dict[int, str] = {}
        self.code_points: set[int] = set()
        self._read()
        self.base_key, self.link_keys = self._bases()

    def _number(self) -> int:
        return len(self.points) + len(self.link_props)

    def _key(self, props) -> tuple[bytes, bytes | None, list]:
        """The formatting key of run properties ``props``, and their link's identity and elements."""
        if props is None:
            return b"", None, []
        clean = copy.deepcopy(props)
        links = [child for child in clean if child.tag in self.dialect.links]
        for child in links:
            clean.remove(child)
        for name in self.dialect.volatile:
            clean.attrib.pop(name, None)
        key = etree.tostring(clean, method="c14n", exclusive=True)
        self.props.setdefault(key, clean)
        identity = b"".join(etree.tostring(link, method="c14n", exclusive=True) for link in links) or None
        return key, identity, links

    def _read(self) -> None:
        d = self.dialect
        link: tuple[bytes, int] | None = None  # (identity, number) of the link open at this point

        def close() -> None:
            nonlocal link
            if link is not None:
                self.segments.append(("link-close", link[1]))
                link = None

        for child in self.element:
            if child.tag in d.head or child.tag in d.tail or not isinstance(child.tag, str):
                continue
            if child.tag == d.text:  # SpreadsheetML text without runs
                self._text(child.text or "", b"")
                continue
            if child.tag != d.run:
                self._point([child])
                continue
            props = child.find(d.props)
            text = "".join(t.text or "" for t in child.iter(d.text))
            key, identity, links = self._key(props)
            if text and identity != (link[0] if link else None):
                close()
                if identity is not None:
                    link = (identity, self._number())
                    self.link_props[link[1]] = links
                    self.segments.append(("link-open", link[1]))
            if text.strip() and monospace(d.font(props)):
                self._code(child)
            else:
                self._text(text, key)
        close()

    def _text(self, text: str, key: bytes) -> None:
        """Text of one formatting; a tab or line break in it is a point of its own (it is layout), as is
        a vertical tab escaped as OOXML escapes characters XML cannot hold (``_x000B_``)."""
        for part in _LAYOUT.split(text):
            if _LAYOUT.fullmatch(part):
                number = self._number()
                self.points[number] = ("char", part, key)
                self.segments.append(("point", number))
            elif part:
                self.segments.append(("text", part, key))

    def _point(self, elements: list) -> None:
        number = self._number()
        self.points[number] = ("elements", elements)
        self.segments.append(("point", number))

    def _code(self, run) -> None:
        """A run in a monospace font: kept whole, as one point with the code runs right before it."""
        last = self.segments[-1] if self.segments else None
        if last is not None and last[0] == "point" and last[1] in self.code_points:
            self.points[last[1]][1].append(run)
            return
        self.code_points.add(self._number())
        self._point([run])

    def _bases(self) -> tuple[bytes, dict[int, bytes]]:
        """The formatting most of the text outside links has (of all the text if none is outside), and
        per link the formatting most of its own text has: text formatted so is no tag."""
        outside, inside, every, link = Counter(), {}, Counter(), None
        for segment in self.segments:
            if segment[0] == "link-open":
                link = segment[1]
                inside.setdefault(link, Counter())
            elif segment[0] == "link-close":
                link = None
            elif segment[0] == "text":
                weight = len("".join(segment[1].split())) or len(segment[1])
                every[segment[2]] += weight
                (inside[link] if link is not None else outside)[segment[2]] += weight
        base = (outside or every).most_common(1)[0][0] if every else b""
        return base, {n: counts.most_common(1)[0][0] if counts else base for n, counts in inside.items()}

    def items(self) -> list[tuple[str, str, str, str]]:
        """``inline_unit`` items: text, a paired tag per stretch formatted otherwise than the paragraph
        (or, in a link, than the link), one per link, and the points."""
        items, current, link = [], None, None
        numbers: dict[bytes, int] = {}
        self.link_texts, self.formats = {}, {}

        def close() -> None:
            nonlocal current
            if current is not None:
                items.append(("end", f"f{current}", f"\ue010c{current}\ue011", ""))
                current = None

        for segment in self.segments:
            kind = segment[0]
            if kind == "text":
                _, text, key = segment
                if key != (self.link_keys.get(link, self.base_key) if link is not None else self.base_key):
                    number = numbers.setdefault(key, 10_000 + len(numbers))
                    if current != number:
                        close()
                        self.formats[number] = key
                        items.append(("start", f"f{number}", f"\ue010o{number}\ue011", ""))
                        current = number
                else:
                    close()
                items.append(("data", "", text, text))
                if link is not None:
                    self.link_texts[link] = self.link_texts.get(link, "") + text
            elif kind == "point":
                point = self.points[segment[1]]
                spacing = point[0] == "char" or point[1][0].tag in self.dialect.spacing
                items.append(("point", "br" if spacing else "", f"\ue010p{segment[1]}\ue011", ""))
            else:  # a link: format stretches never cross its ends
                close()
                opening = kind == "link-open"
                link = segment[1] if opening else None
                mark = f"\ue010{'o' if opening else 'c'}{segment[1]}\ue011"
                items.append(("start" if opening else "end", "a", mark, ""))
        close()
        return _spaces_outside(items)

    def render(self, pieces, lead: str = "", trail: str = "") -> list[str]:
        """Replace the paragraph's runs by ``pieces`` (text and this paragraph's tags), with the
        whitespace ``lead`` and ``trail`` the source had around its text; the notes (a link that had
        words and was given none keeps its source text)."""
        d, element = self.dialect, self.element
        head = [child for child in element if child.tag in d.head]
        tail = [child for child in element if child.tag in d.tail]
        for child in list(element):
            element.remove(child)
        element.extend(head)
        formats: list[int] = []
        opened: list[list] = []  # [link number, whether anything was written in it]
        notes: list[str] = []
        self._last = None  # (run written last, its key) while it is the element's last child

        def key_now() -> tuple[bytes, int | None]:
            link = opened[-1][0] if opened else None
            if formats:
                return self.formats[formats[-1]], link
            return (self.link_keys.get(link, self.base_key) if link is not None else self.base_key), link

        def write(text: str, key: tuple[bytes, int | None] | None = None) -> None:
            self._write(text, key or key_now())
            for link in opened if text.strip() else ():
                link[1] = True

        def closing(number: int) -> None:
            while opened and opened[-1][0] != number:
                opened.pop()
            if not opened:
                return
            source = " ".join(self.link_texts.get(number, "").split())
            if not opened[-1][1] and any(ch.isalnum() for ch in source):
                write(source)
                notes.append(f"link {source[:40]!r} kept its source text: the translation left it no word")
            opened.pop()

        write(lead)
        for piece in pieces:
            if not piece.markup:
                write(piece.text)
                continue
            at = 0
            for match in _SENTINEL.finditer(piece.text):
                write(piece.text[at:match.start()])
                at = match.end()
                kind, number = match.group(1), int(match.group(2))
                if kind == "p":
                    point = self.points[number]
                    if point[0] == "char":  # a tab or a line break, in its own run's formatting
                        write(point[1], (point[2], opened[-1][0] if opened else None))
                    else:  # a field or a break holds no word: a link around it alone would be lost
                        element.extend(point[1])
                        self._last = None
                elif number in self.link_props:
                    if kind == "o":
                        opened.append([number, False])
                    else:
                        closing(number)
                elif kind == "o":
                    formats.append(number)
                elif formats:
                    formats.pop()
            write(piece.text[at:])
        write(trail)
        element.extend(tail)
        return notes

    def _write(self, text: str, key: tuple[bytes, int | None]) -> None:
        """``text`` in a run of formatting ``key`` (formatting, link), joined to the run written last
        if it has the same."""
        if not text:
            return
        d = self.dialect
        if self._last is not None and self._last[1] == key and len(self.element) and self.element[-1] is self._last[0]:
            t = self._last[0].find(d.text)
            t.text = (t.text or "") + text
            return
        run = self.element.makeelement(d.run, {})
        props = self.props.get(key[0])
        if props is not None or key[1] is not None:
            props = copy.deepcopy(props) if props is not None else run.makeelement(d.props, {})
            for link in self.link_props.get(key[1], []) if key[1] is not None else ():
                later = next((c for c in props if c.tag in d.before_links), None)
                (later.addprevious if later is not None else props.append)(copy.deepcopy(link))
            run.append(props)
        t = run.makeelement(d.text, {})
        t.text = text
        if d.preserve:
            t.set("{http://www.w3.org/XML/1998/namespace}space", "preserve")
        run.append(t)
        self.element.append(run)
        self._last = (run, key)


def _spaces_outside(items: list[tuple[str, str, str, str]]) -> list[tuple[str, str, str, str]]:
    """``items`` with the whitespace at the edges of a tag's text moved out of it (``<b>big </b>`` is
    ``<b>big</b> ``): the space then parts the words around the tag, and a point right after it, for
    the placement, as it parts them on the slide."""
    out: list[tuple[str, str, str, str]] = []
    for item in items:
        if item[0] == "end" and out and out[-1][0] == "data" and out[-1][3][-1:].isspace():
            text = out.pop()[3]
            kept = text.rstrip()
            out += [("data", "", kept, kept)] if kept else []
            out += [item, ("data", "", text[len(kept):], text[len(kept):])]
        elif item[0] == "data" and item[3][:1].isspace() and out and out[-1][0] == "start":
            first = len(out)
            while first > 0 and out[first - 1][0] == "start":
                first -= 1
            text = item[3]
            rest = text.lstrip()
            out.insert(first, ("data", "", text[:len(text) - len(rest)], text[:len(text) - len(rest)]))
            if rest:
                out.append(("data", "", rest, rest))
        else:
            out.append(item)
    return out


class PlainText:
    """An element whose text is one unit without markup (a chart's cached category label)."""

    def __init__(self, element) -> None:
        self.element = element

    def items(self) -> list[tuple[str, str, str, str]]:
        text = self.element.text or ""
        return [("data", "", text, text)] if text else []

    def render(self, pieces, lead: str = "", trail: str = "") -> list[str]:
        self.element.text = lead + "".join(piece.text for piece in pieces) + trail
        return []


# -- units of a package, and their render --------------------------------------------------------------
Walk = Callable[[OfficePackage], tuple[dict[str, object], list[tuple[str, str, object]]]]
Serialize = Callable[[OfficePackage, str, object, list], bytes]


def whole_part(package: OfficePackage, part: str, root, _written: list) -> bytes:
    """A part written again whole from its XML tree."""
    return serialized(root, package.read(part))


def package_parsed(data: bytes, open_package: Callable[[bytes], OfficePackage], walk: Walk,
                   serialize: Serialize = whole_part) -> Parsed:
    """The units of a package's paragraphs and their render. ``walk(package)``: the roots of the parts
    it reads ({part name: root element}) and (part name, where, paragraph) for each paragraph, in a
    fixed order (the same for the same bytes: a render walks the package again).
    ``serialize(package, part, root, elements)``: the bytes of a part whose paragraph ``elements``
    were written into."""
    package = open_package(data)
    _roots, found = walk(package)
    units, chosen, around = [], [], []
    for index, (_part, where, paragraph) in enumerate(found):
        items = paragraph.items()
        unit, lead, trail = inline_unit(items, where) if items else (None, "", "")
        if unit is None:
            continue
        units.append(unit)
        chosen.append(index)
        around.append((lead, trail))
    if not units:
        raise FormatError(f"the {package.kind} file has no text to translate")

    def render(translations: Sequence[str], links: Sequence[Sequence[Link]], notes: dict[int, list[str]]) -> bytes:
        package = open_package(data)
        roots, found = walk(package)
        changed: dict[str, list] = {}
        for number, (index, unit, translation) in enumerate(zip(chosen, units, translations)):
            part, _where, paragraph = found[index]
            paragraph.items()  # numbers the format stretches as the parse did
            if unit.tags:
                pieces, unit_notes = transfer(unit.text, unit.tags, translation, links[number])
            else:  # most cells and many paragraphs: nothing to place
                pieces, unit_notes = [Piece(translation, False)], []
            unit_notes = unit_notes + paragraph.render(pieces, *around[number])
            if unit_notes:
                notes[number] = unit_notes
            changed.setdefault(part, []).append(paragraph.element)
        return package.write({part: serialize(package, part, roots[part], elements)
                              for part, elements in changed.items()})

    return Parsed(units, render, marked=True)


# -- presentations -------------------------------------------------------------------------------------
PRESENTATION_TYPES = ("application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml",
                      "application/vnd.ms-powerpoint.presentation.macroEnabled.main+xml",
                      "application/vnd.openxmlformats-officedocument.presentationml.slideshow.main+xml",
                      "application/vnd.ms-powerpoint.slideshow.macroEnabled.main+xml",
                      "application/vnd.openxmlformats-officedocument.presentationml.template.main+xml",
                      "application/vnd.ms-powerpoint.template.macroEnabled.main+xml")
_MASTERS = ("slideLayout+xml", "slideMaster+xml", "notesMaster+xml", "handoutMaster+xml")
_CHART = "drawingml.chart+xml"
_DIAGRAM_DATA, _DIAGRAM_DRAWING = "drawingml.diagramData+xml", "drawingml.diagramDrawing+xml"


def _open(data: bytes) -> OfficePackage:
    return OfficePackage(data, "PPTX", PRESENTATION_TYPES)


def _slides(package: OfficePackage) -> list[str]:
    """The slide parts in the presentation's order (those it does not list after them, in package order)."""
    main = next(name for name, kind in package.types.items() if kind in PRESENTATION_TYPES)
    rels = package.relationships(main)
    ordered = []
    for slide in package.xml(main).iter(_q(P, "sldId")):
        target = rels.get(slide.get(_q(R, "id"), ""), ("", ""))[1]
        if target in package.names and target not in ordered:
            ordered.append(target)
    return ordered + [name for name in package.parts("presentationml.slide+xml") if name not in ordered]


def _in_placeholder(p) -> bool:
    return bool(p.xpath("ancestor::p:sp[p:nvSpPr/p:nvPr/p:ph]", namespaces={"p": P}))


def _chart_texts(root) -> list:
    """A chart's DrawingML paragraphs (titles, axis titles, rich data labels) and the cached strings
    of its series names and category labels, in document order."""
    found = []
    for element in root.iter(_q(A, "p"), _q(C, "v")):
        if element.tag == _q(A, "p"):
            found.append(RunParagraph(element, DRAWING))
        elif element.getparent().tag == _q(C, "tx") or element.getparent().tag == _q(C, "pt") and \
                element.getparent().getparent().tag in (_q(C, "strCache"), _q(C, "strLit"), _q(C, "lvl")):
            found.append(PlainText(element))
    return found


def _walk(package: OfficePackage) -> tuple[dict[str, object], list[tuple[str, str, object]]]:
    """The roots of the parts read, and (part, where, paragraph) for every paragraph: each slide's,
    then its notes', charts' and SmartArt's, then the visible text of layouts and masters."""
    roots: dict[str, object] = {}
    found: list[tuple[str, str, object]] = []
    order: list[tuple[str, str, str]] = []  # (part, label, how: "all", "chart", "visible")
    seen: set[str] = set()

    def add(part: str, label: str, how: str) -> None:
        if part not in seen:
            seen.add(part)
            order.append((part, label, how))

    for number, slide in enumerate(_slides(package), 1):
        add(slide, f"slide {number}", "all")
        for part in package.related(slide, "notesSlide"):
            add(part, f"slide {number} notes", "all")
        for part in package.related(slide, "chart"):
            add(part, f"slide {number} chart {posixpath.basename(part)}", "chart")
        for kind in ("diagramData", "diagramDrawing"):
            for part in package.related(slide, kind):
                add(part, f"slide {number} SmartArt {posixpath.basename(part)}", "all")
    for part in package.parts(_CHART):
        add(part, posixpath.basename(part), "chart")
    for part in package.parts(_DIAGRAM_DATA, _DIAGRAM_DRAWING, "presentationml.notesSlide+xml"):
        add(part, posixpath.basename(part), "all")
    for part in package.parts(*_MASTERS):
        add(part, posixpath.basename(part).rsplit(".", 1)[0], "visible")
    for part, label, how in order:
        root = roots[part] = package.xml(part)
        if how == "chart":
            texts = _chart_texts(root)
        else:
            texts = [RunParagraph(p, DRAWING) for p in root.iter(_q(A, "p"))
                     if how == "all" or not _in_placeholder(p)]
        for k, paragraph in enumerate(texts, 1):
            found.append((part, f"{label} {'text' if how == 'chart' else 'paragraph'} {k}", paragraph))
    return roots, found


def parse_pptx(data: bytes) -> Parsed:
    return package_parsed(data, _open, _walk)


__all__ = ["parse_pptx", "FormatError", "OfficePackage", "RunParagraph", "PlainText", "Dialect", "package_parsed",
           "serialized"]
