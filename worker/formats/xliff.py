"""XLIFF 1.2 and 2.x (``.xlf``, ``.xliff``), read with the standard library's expat parser.

Each ``trans-unit`` (1.2) or ``segment`` (2.x) whose target is missing or empty is one unit: its
``source`` text, with inline codes as ``Tag`` spans (paired: ``g``, ``mrk``, ``pc``; points:
``x``, ``bx``, ``ex``, ``ph``, ``bpt``, ``ept``, ``it``, ``sc``, ``ec``, kept whole with their
native code). The translation goes into the target with the source's inline codes placed by the
alignment (``formats.markup``); a new 1.2 target gets ``state="needs-review-translation"``.
A unit whose source has no words (numbers, codes, spaces) gets a target that copies the source's
content as written, with ``state="final"`` in 1.2. Units marked ``translate="no"``, units that
already have a target, and every other byte of the file (header, notes, contexts, attributes,
whitespace) are kept as they are. A unit that translate-toolkit's html2po took from an element a
page never translates (its location ``getopt.html+html.body.div.pre:252-75``: a ``pre``, as
``formats.html.VERBATIM`` lists them) is code: its target copies its source, as a page keeps it.

A unit under ``xml:space="preserve"`` (on the unit, its source, or an element around them) keeps
its whitespace: line breaks and runs of spaces go to the translation as they are, and the
whitespace at the source's edges comes back at the target's. An entity reference declared in the
file's DTD (``&sec;``) is an inline code, kept as written and never expanded: external entities
are never loaded, and the file must still parse with expat's guard against entity expansion bombs.
The file is written as UTF-8, its XML declaration saying so (``formats.declared``).

A unit whose text holds HTML as escaped text (html2po -> po2xliff: ``&lt;a href="x.html"&gt;``)
has its HTML tags as inline codes too, as a catalogue's message does (``formats.po``): paired where
they pair, placed by the alignment, never translated; its text is HTML, so the translation is
escaped as HTML and then as XML. In every unit, no-break spaces and symbols (``©``, ``—``, ``€``)
are fixed points, as in a page (``formats.html.fixed_characters``): the model would drop or change
them. The target's whitespace before and after its content is the source's, as written under
``xml:space="preserve"``, and none otherwise.
"""
from __future__ import annotations

import re
from typing import Sequence
from xml.parsers import expat
from xml.sax.saxutils import escape

from .declared import utf8_xml
from .html import VERBATIM, apart, as_written, character_references, fixed_characters, markup_items
from .inline import inline_unit
from .markup import Link, Piece, transfer
from .model import FormatError, OutputError, Parsed, Skeleton, TextUnit
from .po import is_markup as is_html_markup  # the test po.py applies to a message made from a page

PAIRED = frozenset(("g", "mrk", "pc"))
POINTS = frozenset(("x", "bx", "ex", "ph", "bpt", "ept", "it", "sc", "ec"))


def _local(name: str) -> str:
    return name.rsplit(":", 1)[-1]


def _tag_end(data: bytes, start: int) -> int:
    """The offset just past the tag starting at ``start`` ('>' outside quoted attribute values)."""
    quote = None
    for i in range(start + 1, len(data)):
        ch = data[i:i + 1]
        if quote:
            if ch == quote:
                quote = None
        elif ch in (b'"', b"'"):
            quote = ch
        elif ch == b">":
            return i + 1
    raise FormatError("not a valid XLIFF file: a tag is never closed")


class _Reader:
    """Offsets of each translatable container's source and target, and its source as
    ``inline_unit`` items: paired codes as start/end tags, every other element inside the source
    (point codes, unknown elements) as one point, verbatim with its content."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.parser = expat.ParserCreate(encoding="UTF-8")
        self.parser.StartElementHandler = self.start
        self.parser.EndElementHandler = self.end
        self.parser.CharacterDataHandler = self.chars
        # reported, not expanded: an entity reference is kept as an inline code
        self.parser.DefaultHandler = self.default
        self.parser.SkippedEntityHandler = self.skipped
        self.entities: set[str] = set()  # names of the entity references kept
        self.space: list[str] = ["default"]  # xml:space in force, per open element
        self.version = ""
        self.units: list[dict] = []  # per translatable container: offsets and source items
        self.container: dict | None = None  # the trans-unit / segment being read
        self.skip = 0  # depth inside a unit marked translate="no"
        self.in_source = 0  # element depth inside <source>
        self.point: list = []  # [start offset, depth, empty] of the point code being read whole
        self.stack: list[bool] = []  # per open element inside <source>: written as an empty element

    def at(self) -> int:
        return self.parser.CurrentByteIndex

    def start(self, name: str, attrs: dict) -> None:
        local, at = _local(name), self.at()
        self.space.append(attrs.get("xml:space", self.space[-1]))
        if local == "xliff":
            self.version = attrs.get("version", "")
        if self.skip:
            self.skip += 1
            return
        if local in ("trans-unit", "unit") and attrs.get("translate") == "no":
            self.skip = 1
            return
        if local in ("trans-unit", "segment"):
            self.container = {"where": f"{local} {attrs.get('id', len(self.units) + 1)}", "items": [],
                              "source_end": None, "target": None, "source_start": None}
        elif self.container is None:
            return
        elif local == "source" and not self.in_source:
            self.in_source = 1
            self.container["source_start"] = at
            self.container["preserve"] = self.space[-1] == "preserve"
        elif self.in_source:
            self.in_source += 1
            end = _tag_end(self.data, at)
            empty = self.data[end - 2:end] == b"/>"
            self.stack.append(empty)
            if self.point:
                return
            if local in PAIRED and not empty:
                self.container["items"].append(("start", name, self.data[at:end].decode("utf-8"), ""))
            else:
                self.point = [at, self.in_source]
        elif local == "target":
            self.container["target"] = [at, None]
        elif local == "context" and attrs.get("context-type") == "sourcefile":
            self.container["location"] = ""
            self.container["in_location"] = True

    def end(self, name: str) -> None:
        local, at = _local(name), self.at()
        self.space.pop()
        if self.skip:
            self.skip -= 1
            return
        if self.container is None:
            return
        if self.in_source:
            self.in_source -= 1
            if self.in_source == 0:  # </source>
                self.container["source_end"] = _tag_end(self.data, at)
                return
            empty = self.stack.pop()
            if self.point:
                if self.in_source + 1 == self.point[1]:  # the point code itself ends
                    first = self.point[0]
                    finish = _tag_end(self.data, first if empty else at)
                    self.container["items"].append(("point", name, self.data[first:finish].decode("utf-8"), ""))
                    self.point = []
                return
            self.container["items"].append(("end", name, self.data[at:_tag_end(self.data, at)].decode("utf-8"), ""))
        elif local == "target" and self.container.get("target"):
            opened = _tag_end(self.data, self.container["target"][0])  # an empty <target/> is its start tag alone
            empty = self.data[opened - 2:opened] == b"/>"
            self.container["target"][1] = opened if empty else _tag_end(self.data, at)
            self.container["target_empty_tag"] = empty
        elif local == "context":
            self.container["in_location"] = False
        elif local in ("trans-unit", "segment"):
            self.units.append(self.container)
            self.container = None

    def chars(self, text: str) -> None:
        if self.container is not None and self.in_source and not self.skip and not self.point:
            self.container["items"].append(("data", "", _escaped(text), text))
        elif self.container is not None and self.container.get("in_location"):
            self.container["location"] += text

    def default(self, data: str) -> None:
        if data.startswith("&") and data.endswith(";"):  # an external entity's reference
            self.skipped(data[1:-1], False)

    def skipped(self, name: str, is_parameter: bool) -> None:
        if self.container is not None and self.in_source and not self.skip and not self.point and not is_parameter:
            self.entities.add(name)
            self.container["items"].append(("point", "entity", f"&{name};", ""))


def parse_xliff(text: str, languages: tuple[str, str] | None = None) -> Parsed:
    """``languages``: the (source, target) language of the translation. A file that names other
    languages is refused; one that names none gets them (1.2: ``source-language`` and
    ``target-language`` on each ``<file>``; 2.x: ``srcLang`` and ``trgLang`` on the root), since
    a target in a file without a target language breaks the standard."""
    data = utf8_xml(text).encode("utf-8")
    try:
        if languages is not None:  # its parse expands entities, as the one below: bombs are refused
            data = _declare_languages(data, *languages)
        else:
            expat.ParserCreate(encoding="UTF-8").Parse(data, True)  # expanding entities: bombs are refused
        reader = _Reader(data)
        reader.parser.Parse(data, True)
    except expat.ExpatError as exc:
        raise FormatError(f"not a valid XLIFF file: {exc}") from None
    if not reader.version:
        raise FormatError("not an XLIFF file: no <xliff version=...> root")
    skeleton, units, cursor = Skeleton(), [], 0
    around: list[tuple[str, str]] = []  # per unit: the whitespace its target keeps at its edges (preserve)
    references: list[dict[str, str] | None] = []  # per unit holding escaped HTML: its character references
    for container in reader.units:
        target = container["target"]
        if container["source_end"] is None or (target and not _target_is_empty(data, target, container)):
            continue
        unit, edges, html_references = _unit(container)
        if _VERBATIM_LOCATION.search(container.get("location", "")):
            unit = None  # code a page never translates: copied as it is
        copied = _source_content(data, container) if unit is None else None
        if unit is None and not (copied or "").strip():
            continue  # an empty source: nothing to put in a target
        if target:  # an empty <target/> or <target ...></target>: its content goes in
            open_end = target[1] if container.get("target_empty_tag") else _tag_end(data, target[0])
            open_tag = data[target[0]:open_end].decode("utf-8")
            if container.get("target_empty_tag"):
                open_tag = open_tag[:-2].rstrip() + ">"
            skeleton.text(data[cursor:target[0]].decode("utf-8"))
            skeleton.text(_with_state(open_tag, reader.version, copied is not None))
            close = "</target>" if container.get("target_empty_tag") else ""
            cursor = open_end if container.get("target_empty_tag") else data.rfind(b"</", 0, target[1])
        else:  # a new <target> after </source>, indented as <source> is
            end = container["source_end"]
            line_start = data.rfind(b"\n", 0, container["source_start"]) + 1
            indent = data[line_start:container["source_start"]].decode("utf-8")
            skeleton.text(data[cursor:end].decode("utf-8"))
            newline = "\n" + indent if not indent.strip() else ""
            skeleton.text(newline + _with_state("<target>", reader.version, copied is not None))
            close = "</target>"
            cursor = end
        if copied is not None:  # no words (numbers, codes, spaces): the source's content, as written
            skeleton.text(copied + close)
            continue
        skeleton.slot()
        skeleton.text(close)
        units.append(unit)
        around.append(edges)
        references.append(html_references)
    skeleton.text(data[cursor:].decode("utf-8"))

    def render(translations: Sequence[str], links: Sequence[Sequence[Link]], notes: dict[int, list[str]]) -> str:
        values = []
        for index, (unit, translation) in enumerate(zip(units, translations)):
            pieces, unit_notes = transfer(unit.text, unit.tags, translation, links[index])
            if unit_notes:
                notes[index] = unit_notes
            lead, trail = around[index]
            text_of = _escaped if references[index] is None else \
                lambda text, written=references[index]: _escaped(as_written(text, written))
            values.append(_escaped(lead) + "".join(p.text if p.markup else text_of(p.text) for p in _inner(pieces))
                          + _escaped(trail))
            _check_fragment(values[-1], unit.where, reader.entities)
        out = skeleton.fill(values)
        try:
            expat.ParserCreate(encoding="UTF-8").Parse(out.encode("utf-8"), True)
        except expat.ExpatError as exc:
            raise OutputError(f"the translated XLIFF file is not well-formed XML: {exc}") from None
        return out

    return Parsed(units, render, marked=True)


# Where each version names the languages: the element and its (source, target) attributes.
_LANGUAGE_ATTRIBUTES = {"1": ("file", ("source-language", "target-language")), "2": ("xliff", ("srcLang", "trgLang"))}


# html2po's location of a unit: the page, "+", the element path, and its line and column
_VERBATIM_LOCATION = re.compile(r"\+(?:[\w-]+\.)*(?:" + "|".join(sorted(VERBATIM)) + r")(?::\d+-\d+)?\s*$")


def _primary(tag: str) -> str:
    """A BCP 47 tag's language subtag, lower-cased ("en-US" -> "en", "de_DE" -> "de")."""
    return re.split(r"[-_]", tag.strip(), 1)[0].lower()


def _declare_languages(data: bytes, source: str, target: str) -> bytes:
    """``data`` with the translation's languages named where the file's version names them;
    ``FormatError`` when the file names other ones."""
    found: list[tuple[int, str, dict]] = []  # (offset, local name, attributes) of the root and each <file>
    parser = expat.ParserCreate(encoding="UTF-8")

    def start(name: str, attrs: dict) -> None:
        if _local(name) in ("xliff", "file"):
            found.append((parser.CurrentByteIndex, _local(name), attrs))

    parser.StartElementHandler = start
    try:
        parser.Parse(data, True)
    except expat.ExpatError as exc:
        raise FormatError(f"not a valid XLIFF file: {exc}") from None
    if not found or found[0][1] != "xliff":
        raise FormatError("not an XLIFF file: no <xliff version=...> root")
    version = found[0][2].get("version", "")[:1]
    if version not in _LANGUAGE_ATTRIBUTES:
        return data
    element, names = _LANGUAGE_ATTRIBUTES[version]
    inserts = []
    for offset, local, attrs in found:
        if local != element:
            continue
        missing = []
        for name, wanted in zip(names, (source, target)):
            declared = attrs.get(name)
            if declared is None or not declared.strip():
                missing.append(f'{name}="{wanted}"')
            elif _primary(declared) != _primary(wanted):
                raise FormatError(f"the file's <{element}> has {name}=\"{declared}\", but this translation is "
                                  f"{source}->{target}: translate it with a model for its languages")
        if missing:
            end = _tag_end(data, offset)
            at = end - 2 if data[end - 2:end] == b"/>" else end - 1
            inserts.append((at, (" " + " ".join(missing)).encode("utf-8")))
    for at, text in reversed(inserts):
        data = data[:at] + text + data[at:]
    return data


def _escaped(text: str) -> str:
    """Text as XML character data; a carriage return as a reference, which a parser would
    otherwise read as a line feed."""
    return escape(text).replace("\r", "&#13;")


def _check_fragment(value: str, where: str, entities: set[str]) -> None:
    """``OutputError`` naming the unit unless its target content is well-formed XML (the entity
    references kept from the source declared)."""
    declared = "".join(f'<!ENTITY {name} "">' for name in sorted(entities))
    fragment = (f"<!DOCTYPE target [{declared}]>" if declared else "") + f"<target>{value}</target>"
    try:
        expat.ParserCreate(encoding="UTF-8").Parse(fragment.encode("utf-8"), True)
    except expat.ExpatError as exc:
        raise OutputError(f"{where}: the target would not be well-formed XML ({exc}): {value[:200]!r}") from None


def _target_is_empty(data: bytes, target: list, container: dict) -> bool:
    if container.get("target_empty_tag"):
        return True
    inner = data[_tag_end(data, target[0]):data.rfind(b"</", 0, target[1])]
    return not inner.strip()


def _with_state(open_tag: str, version: str, copied: bool = False) -> str:
    """A new 1.2 target says it needs review, or, copied from a source without words, that it is
    final as it is (XLIFF 2 keeps state on the segment, left as it is)."""
    if version.startswith("1") and " state=" not in open_tag:
        return open_tag[:-1] + (' state="final"' if copied else ' state="needs-review-translation"') + ">"
    return open_tag


def _source_content(data: bytes, container: dict) -> str | None:
    """What is inside a unit's ``<source>``, as written (None for ``<source/>``)."""
    start, end = container["source_start"], container["source_end"]
    open_end = _tag_end(data, start)
    if data[open_end - 2:open_end] == b"/>":
        return None
    return data[open_end:data.rfind(b"</", 0, end)].decode("utf-8")


_ID = re.compile(r"""\s(id|startRef)\s*=\s*(?:"([^"]*)"|'([^']*)')""")


def _attribute(raw: str, name: str) -> str | None:
    found = [m.group(2) if m.group(2) is not None else m.group(3) for m in _ID.finditer(raw) if m.group(1) == name]
    return found[0] if found else None


def _paired_codes(items: list[tuple[str, str, str, str]]) -> list[tuple[str, str, str, str]]:
    """``items`` with each 2.0 ``<sc id="n"/>`` and its ``<ec startRef="n"/>`` made one paired
    tag where the codes between them nest (they are placed as a pair then, the ``<ec>`` after its
    ``<sc>``); an isolated or crossing one stays a point."""
    out = list(items)
    for first, (kind, name, raw, _) in enumerate(items):
        if kind != "point" or _local(name) != "sc" or "isolated=" in raw or _attribute(raw, "id") is None:
            continue
        ref, depth = _attribute(raw, "id"), 0
        for last in range(first + 1, len(items)):
            other_kind, other_name, other_raw, _ = out[last]
            if other_kind == "start":
                depth += 1
            elif other_kind == "end":
                depth -= 1
                if depth < 0:
                    break
            elif other_kind == "point" and _local(other_name) == "ec" and _attribute(other_raw, "startRef") == ref:
                if depth == 0:
                    out[first] = ("start", f"sc#{ref}", raw, "")
                    out[last] = ("end", f"sc#{ref}", other_raw, "")
                break
    return out


def _unit(container: dict) -> tuple[TextUnit | None, tuple[str, str], dict[str, str] | None]:
    """A container's unit, the whitespace its target keeps before and after the translation
    (only under ``xml:space="preserve"``), and, if its text is escaped HTML, the characters that
    text writes as references (None if it is not HTML)."""
    if not container["items"]:
        return None, ("", ""), None
    preserve = container.get("preserve", False)
    items = _joined_text(container["items"])
    text = "".join(data for kind, _, _, data in items if kind == "data")
    references = None
    if is_html_markup(text):
        items, references = _html_codes(items, preserve), character_references(text)
    else:
        items = fixed_characters(items)  # the text as XML escapes it reads the same as HTML
    unit, lead, trail = inline_unit(_paired_codes(items), container["where"], preserve)
    return unit, ((lead, trail) if preserve else ("", "")), references


def _joined_text(items: list[tuple[str, str, str, str]]) -> list[tuple[str, str, str, str]]:
    """``items`` with each run of text (expat hands it over in pieces, one at each reference) one item."""
    out: list[tuple[str, str, str, str]] = []
    for item in items:
        if out and item[0] == "data" and out[-1][0] == "data":
            out[-1] = ("data", "", out[-1][2] + item[2], out[-1][3] + item[3])
        else:
            out.append(item)
    return out


def _html_codes(items: list[tuple[str, str, str, str]], preserve: bool) -> list[tuple[str, str, str, str]]:
    """``items`` with the HTML in each run of text as inline codes (``formats.html.markup_items``),
    written as the source escapes them (``&lt;b&gt;``), its text decoded as HTML, and its no-break
    spaces and symbols fixed points. An HTML start or end tag pairs with HTML tags only, across
    the file's own codes (``&lt;b&gt;Save <x id="1"/>&lt;/b&gt;``). A ``<br>`` parts the words
    around it, as in a page, also where the unit's whitespace is preserved."""
    out: list[tuple[str, str, str, str]] = []
    for item in items:
        if item[0] != "data":
            out.append(item)
            continue
        for kind, tag, raw, data in fixed_characters(markup_items(item[3])):
            out.append((kind, f"html:{tag}" if kind in ("start", "end") else tag, _escaped(raw), data))
    return apart(out, lambda item, _before, _after: item[1] == "br") if preserve else out


def _inner(pieces: list[Piece]) -> list[Piece]:
    """``pieces`` without whitespace at their edges outside every code: the source's own edges
    (``xml:space="preserve"``) are written around them, and there are none otherwise."""
    pieces = list(pieces)
    if pieces and not pieces[0].markup:
        pieces[0] = Piece(pieces[0].text.lstrip(), False)
    if pieces and not pieces[-1].markup:
        pieces[-1] = Piece(pieces[-1].text.rstrip(), False)
    return [p for p in pieces if p.text]
