"""Paragraphs of runs, as Word, PowerPoint, Excel and OpenDocument write them: the tag sentinels
their ``inline_unit`` items carry, which fonts and styles are code, the formatting that is a
paragraph's own and the stretches formatted otherwise (tags), and the replay of a placed
translation into a writer; and the paragraph of runs of DrawingML and SpreadsheetML
(``RunParagraph``), which presentations and workbooks share.

A paragraph's items stand for its tags by sentinels of private-use characters: ``\\ue010o7\\ue011``
opens tag 7, ``\\ue010c7\\ue011`` closes it, ``\\ue010p7\\ue011`` is point 7. Links are numbered
below 10 000 and formatting stretches from it, which is how ``markup.is_link`` knows a link.
"""
from __future__ import annotations

import copy
import re
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Iterable

from lxml import etree

from .markup import Piece

SENTINEL = re.compile("\ue010(o|c|p)(\\d+)\ue011")  # open / close / point tag number, in markup pieces
FIRST_FORMAT = 10_000  # tag numbers of formatting stretches start here; links' are below
_LAYOUT = re.compile(r"([\t\n\v]|_x000[bB]_)")  # characters of a run's text that are layout, not words
_MONOSPACE = frozenset("courier|courier new|consolas|liberation mono|dejavu sans mono|source code pro|menlo|monaco|"
                       "lucida console|noto mono|inconsolata".split("|"))


# -- code: fonts and styles ----------------------------------------------------------------------------
def style_key(name: str) -> str:
    """A style's name or id as compared: letters and digits, lower case, without Word's " Char"
    of a linked character style (``HTML Preformatted Char``)."""
    key = re.sub(r"[^0-9a-z]", "", name.lower())
    return key[:-4] if key.endswith("char") and len(key) > 4 else key


# "Variable" (LibreOffice, italic) and "HTML Variable" (Word) are what <var> becomes: an identifier,
# kept as the HTML reader keeps <var>
CODE_CHARACTER = frozenset(map(style_key, (
    "Source Text", "Quelltext", "HTML Code", "Code", "Verbatim", "Teletype", "Macro Text", "Preformatted Text",
    "HTML Keyboard", "HTML Typewriter", "HTML Sample", "Variable", "HTML Variable")))
CODE_PARAGRAPH = frozenset(map(style_key, (
    "Preformatted Text", "Vorformatierter Text", "HTML Preformatted", "Code", "Source Code", "Macro Text")))


def monospace(font: str | None) -> bool:
    """Whether ``font`` is a monospace face: a known one, or one with "Mono" or "Code" as a word of
    its name (``Ubuntu Mono``, ``FreeMono``, ``Fira Code``; not ``Monotype Corsiva`` or ``Arial
    Unicode MS``)."""
    if not font:
        return False
    name = " ".join(font.lower().split())
    words = {word.lower() for word in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", font)}
    return name in _MONOSPACE or name.startswith("courier") or bool(words & {"mono", "monospace", "monospaced", "code"})


# -- formatting: the paragraph's own and the stretches that are tags -----------------------------------
def base_formats(segments: Iterable[tuple]) -> tuple[bytes, dict[int, bytes]]:
    """The formatting most of a paragraph's text outside links has (of all its text if none is
    outside), and per link the formatting most of its own text has: text formatted so is no tag.
    ``segments``: ("text", text, formatting key, ...), ("link-open", number), ("link-close", number)
    and others, in order. A link's runs carry the link style, and where links hold most of a
    paragraph's text, taking theirs as the paragraph's made every plain stretch a tag of its own,
    competing with the links for the words (``[Contents][Index]`` lost a link)."""
    outside, inside, every, stack = Counter(), {}, Counter(), []
    for segment in segments:
        if segment[0] == "link-open":
            stack.append(segment[1])
            inside.setdefault(segment[1], Counter())
        elif segment[0] == "link-close" and segment[1] in stack:
            stack.remove(segment[1])
        elif segment[0] == "text":
            weight = len("".join(segment[1].split())) or len(segment[1])
            every[segment[2]] += weight
            (inside[stack[-1]] if stack else outside)[segment[2]] += weight
    base = (outside or every).most_common(1)[0][0] if every else b""
    return base, {n: counts.most_common(1)[0][0] if counts else base for n, counts in inside.items()}


class Stretches:
    """The paired tags of a paragraph's formatting, appended to its ``items`` as they are read: each
    stretch of text formatted otherwise than the text around it is one, numbered by its formatting
    from ``FIRST_FORMAT``; a writer closes the open one at a link's ends, which a stretch never
    crosses. ``formats``: tag number -> formatting key."""

    def __init__(self, items: list[tuple[str, str, str, str]]) -> None:
        self.items = items
        self.formats: dict[int, bytes] = {}
        self._numbers: dict[bytes, int] = {}
        self._open: int | None = None

    def text(self, key: bytes, base: bytes) -> None:
        """Before text formatted ``key`` where text formatted ``base`` is no tag."""
        if key == base:
            self.close()
            return
        number = self._numbers.setdefault(key, FIRST_FORMAT + len(self._numbers))
        if self._open != number:
            self.close()
            self.formats[number] = key
            self.items.append(("start", f"f{number}", f"\ue010o{number}\ue011", ""))
            self._open = number

    def close(self) -> None:
        if self._open is not None:
            self.items.append(("end", f"f{self._open}", f"\ue010c{self._open}\ue011", ""))
            self._open = None


# -- writing a placed translation ----------------------------------------------------------------------
def replay(pieces: Iterable[Piece], write: Callable[[str], None], mark: Callable[[str, int], None]) -> None:
    """Walk a placed translation (``markup.transfer``'s pieces) in order: its text, and the
    whitespace between tags, to ``write``; each tag sentinel to ``mark(kind, number)``, kind "o"
    (the tag opens), "c" (it closes) or "p" (a point). A link the translation left no word holds
    its source text already (``transfer(keep_link_text=True)``)."""
    for piece in pieces:
        if not piece.markup:
            write(piece.text)
            continue
        at = 0
        for match in SENTINEL.finditer(piece.text):
            write(piece.text[at:match.start()])
            at = match.end()
            mark(match.group(1), int(match.group(2)))
        write(piece.text[at:])


def nest(opened: list[int], kind: str, number: int) -> None:
    """Link ``number`` opened ("o") or closed on ``opened``, the links open while a writer replays:
    closing one closes the links opened inside it too."""
    if kind == "o":
        opened.append(number)
        return
    while opened and opened[-1] != number:
        opened.pop()
    if opened:
        opened.pop()


# -- DrawingML and SpreadsheetML -----------------------------------------------------------------------
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
        self.formats: dict[int, bytes] = {}  # format tag number -> formatting key (set by ``items``)
        self.code_points: set[int] = set()
        self._read()
        self.base_key, self.link_keys = base_formats(self.segments)

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

    def items(self) -> list[tuple[str, str, str, str]]:
        """``inline_unit`` items: text, a paired tag per stretch formatted otherwise than the paragraph
        (or, in a link, than the link), one per link, and the points."""
        items: list[tuple[str, str, str, str]] = []
        stretches, link = Stretches(items), None
        for segment in self.segments:
            kind = segment[0]
            if kind == "text":
                stretches.text(segment[2], self.link_keys.get(link, self.base_key))
                items.append(("data", "", segment[1], segment[1]))
            elif kind == "point":
                point = self.points[segment[1]]
                spacing = point[0] == "char" or point[1][0].tag in self.dialect.spacing
                items.append(("point", "br" if spacing else "", f"\ue010p{segment[1]}\ue011", ""))
            else:  # a link: format stretches never cross its ends
                stretches.close()
                opening = kind == "link-open"
                link = segment[1] if opening else None
                mark = f"\ue010{'o' if opening else 'c'}{segment[1]}\ue011"
                items.append(("start" if opening else "end", "a", mark, ""))
        stretches.close()
        self.formats = stretches.formats
        return _spaces_outside(items)

    def render(self, pieces, lead: str = "", trail: str = "") -> None:
        """Replace the paragraph's runs by ``pieces`` (text and this paragraph's tags), with the
        whitespace ``lead`` and ``trail`` the source had around its text."""
        d, element = self.dialect, self.element
        head = [child for child in element if child.tag in d.head]
        tail = [child for child in element if child.tag in d.tail]
        for child in list(element):
            element.remove(child)
        element.extend(head)
        formats: list[int] = []
        opened: list[int] = []  # the links open
        self._last = None  # (run written last, its key) while it is the element's last child

        def key_now() -> tuple[bytes, int | None]:
            link = opened[-1] if opened else None
            if formats:
                return self.formats[formats[-1]], link
            return self.link_keys.get(link, self.base_key), link

        def mark(kind: str, number: int) -> None:
            if kind == "p":
                point = self.points[number]
                if point[0] == "char":  # a tab or a line break, in its own run's formatting
                    self._write(point[1], (point[2], opened[-1] if opened else None))
                else:  # a field or a break holds no word: a link around it alone would be lost
                    element.extend(point[1])
                    self._last = None
            elif number in self.link_props:
                nest(opened, kind, number)
            elif kind == "o":
                formats.append(number)
            elif formats:
                formats.pop()

        self._write(lead, key_now())
        replay(pieces, lambda text: self._write(text, key_now()), mark)
        self._write(trail, key_now())
        element.extend(tail)

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

    def render(self, pieces, lead: str = "", trail: str = "") -> None:
        self.element.text = lead + "".join(piece.text for piece in pieces) + trail
