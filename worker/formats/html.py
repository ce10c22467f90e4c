"""HTML pages (``.html``, ``.htm``), read with the standard library's ``html.parser``.

Every element that is not inline markup (``p``, ``li``, ``h1``, ``td``, ``title``, ``div``...)
ends a unit; the text between such boundaries, with its inline markup (``a``, ``b``, ``em``,
``span``, ``code``, ``br``, ``img``...), is one unit. Inline tags become ``Tag`` spans of the unit's
text, whitespace collapsed as a browser shows it, and come back around the aligned target words
(``formats.markup``). Everything else is copied byte for byte: the doctype, comments, every tag as
written (attributes included), the whitespace around units, and whole elements that are not
text to translate (``script``, ``style``, ``pre``, ``textarea``, ``svg``, ``math``, ``template``,
and any element with ``translate="no"`` or class ``notranslate``); inline code (``code``, ``kbd``,
``samp``, ``tt``, ``var``) is kept whole, as written, inside its sentence unless it says
``translate="yes"``. A link the translation leaves no word keeps its source text
(``markup.transfer``'s ``keep_link_text``). The page is written as UTF-8, its ``<meta>`` charset and
XML declaration saying so, and a page that declared no charset gets ``<meta charset="utf-8">``
(``formats.declared``). A character the page wrote as a reference (``&copy;``, ``&ouml;``,
``&#8212;``) is written the same way in the translation. No-break spaces, symbols (``©``, ``®``,
``™``, ``€``), dashes and marks such as ``¶`` and ``…`` are fixed points of their unit, as written
(a reference or the character): the model never sees them, since it drops or changes them (``©``
became a word, ``—`` a ``–``, a no-break space a space), and each comes back beside the aligned word
it stood by (``fixed_characters``).
"""
from __future__ import annotations

import html
import re
import unicodedata
from html.parser import HTMLParser
from typing import Sequence

from .declared import ascii_html, declared_utf8_html, undeclared_without_head
from .inline import inline_unit
from .markup import Link, transfer
from .model import FormatError, OutputError, Parsed, Skeleton, TextUnit

INLINE = frozenset("a abbr b bdi bdo cite code data del dfn em font i ins kbd mark q s samp small span strong sub "
                   "sup time tt u var".split())
POINT = frozenset("br img wbr".split())
VERBATIM = frozenset("script style pre textarea svg math template noscript".split())
CODE = frozenset("code kbd samp tt var".split())  # commands and identifiers: translated, they no longer work
TRANSLATED_ATTRIBUTES = ("title", "alt")
_MARK = "\ue000{}\ue001"  # stands for a translated attribute value until the page is rendered


def _attribute_values(raw: str) -> list[tuple[str, int, int]]:
    """(name, start, end) of each attribute value inside one start tag as written (quotes excluded)."""
    out, i, n = [], 1, len(raw)
    while i < n and not (raw[i].isspace() or raw[i] in "/>"):
        i += 1  # the tag name
    while i < n:
        while i < n and (raw[i].isspace() or raw[i] == "/"):
            i += 1
        start = i
        while i < n and not (raw[i].isspace() or raw[i] in "=>/"):
            i += 1
        name = raw[start:i].lower()
        if not name:
            break
        while i < n and raw[i].isspace():
            i += 1
        if i < n and raw[i] == "=":
            i += 1
            while i < n and raw[i].isspace():
                i += 1
            if i < n and raw[i] in "\"'":
                end = raw.find(raw[i], i + 1)
                end = n if end < 0 else end
                out.append((name, i + 1, end))
                i = end + 1
            else:
                start = i
                while i < n and not (raw[i].isspace() or raw[i] == ">"):
                    i += 1
                out.append((name, start, i))
    return out


class _Events(HTMLParser):
    """Records every parser event with its start offset in the text."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.lines = [0]
        for line in text.splitlines(keepends=True):
            self.lines.append(self.lines[-1] + len(line))
        self.events: list[tuple[int, str, str, dict, str]] = []  # (start, kind, tag, attributes, decoded data)

    def _at(self) -> int:
        line, column = self.getpos()
        return self.lines[line - 1] + column

    def handle_starttag(self, tag, attrs):
        self.events.append((self._at(), "start", tag, dict(attrs), ""))

    def handle_startendtag(self, tag, attrs):
        self.events.append((self._at(), "startend", tag, dict(attrs), ""))

    def handle_endtag(self, tag):
        self.events.append((self._at(), "end", tag, {}, ""))

    def handle_data(self, data):
        self.events.append((self._at(), "data", "", {}, data))

    def _other(self, *_):
        self.events.append((self._at(), "other", "", {}, ""))

    handle_comment = handle_decl = handle_pi = unknown_decl = _other


# A named or numeric character reference; the ones that must stay escaped anyway are left to html.escape.
_REFERENCE = re.compile(r"&(?:#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);")
_ESCAPED_ANYWAY = frozenset("&<>")


def _follow(open_elements: list[str], kind: str, tag: str) -> None:
    """Track the open elements named like the outermost one of ``open_elements`` (a code or
    verbatim element whose content is kept whole) through one parser event: the element ends when
    the list empties."""
    if kind == "start" and tag == open_elements[0]:
        open_elements.append(tag)
    elif kind == "end" and tag == open_elements[0]:
        open_elements.pop()


def character_references(text: str) -> dict[str, str]:
    """Each character the page writes as a character reference (``&copy;``, ``&#8212;``), other
    than ``& < >``, with the reference it first appears as: the translation writes it the same way."""
    found: dict[str, str] = {}
    for match in _REFERENCE.finditer(text):
        character = html.unescape(match.group())
        if len(character) == 1 and character not in _ESCAPED_ANYWAY and (not character.isspace() or character == "\xa0"):
            found.setdefault(character, match.group())
    return found


def as_written(text: str, references: dict[str, str]) -> str:
    """``text`` escaped as HTML text, with each of ``references``' characters written as the page wrote it."""
    escaped = html.escape(text, quote=False)
    return "".join(references.get(ch, ch) for ch in escaped) if references else escaped


NO_BREAK = frozenset("\xa0\u202f\u2007")  # no-break, narrow no-break and figure space
# One character reference as html.unescape reads one (``&copy`` without ';' too), or one character
_TOKEN = re.compile(r"&(?:#[0-9]+;?|#[xX][0-9a-fA-F]+;?|[^\t\n\f <&#;]{1,32};?)|.", re.S)


def is_fixed(character: str) -> bool:
    """Whether ``character`` is kept as written rather than translated: a no-break space, or a
    non-ASCII symbol (``©``, ``™``, ``€``, ``×``), dash (``—``) or mark (``¶``, ``§``, ``…``, ``•``);
    quotes and apostrophes are translated (``"`` becomes ``„``)."""
    if character in NO_BREAK:
        return True
    if character.isascii():
        return False
    category = unicodedata.category(character)
    return category in ("So", "Sc", "Sm", "Pd", "Po")


def fixed_characters(items: list[tuple[str, str, str, str]]) -> list[tuple[str, str, str, str]]:
    """``inline_unit`` items with each run of fixed characters (``is_fixed``) in their text made a
    point, as written (``&nbsp;``, ``&copy;``, ``&#8212;`` or the character itself), so that the
    model never sees it and the alignment puts it back beside its word. Where the run joined two
    words (``Section&nbsp;5``, ``dog&mdash;a``), a space stands for it in the text (``apart``)."""
    out: list[tuple[str, str, str, str]] = []
    for item in items:
        kind, _tag, raw, data = item
        if kind != "data" or not any(is_fixed(ch) for ch in data):
            out.append(item)
            continue
        tokens = [(m.group(), html.unescape(m.group())) for m in _TOKEN.finditer(raw)]
        if "".join(decoded for _, decoded in tokens) != data:  # not the parser's reading: left as it is
            out.append(item)
            continue
        runs: list[tuple[bool, str, str]] = []  # (fixed, raw, decoded), fixed and other text alternating
        for written, decoded in tokens:
            fixed = bool(decoded) and all(is_fixed(ch) for ch in decoded)
            if runs and runs[-1][0] == fixed:
                runs[-1] = (fixed, runs[-1][1] + written, runs[-1][2] + decoded)
            else:
                runs.append((fixed, written, decoded))
        out += [("point", "fixed", written, "") if fixed else ("data", "", written, decoded)
                for fixed, written, decoded in runs]
    return apart(out, _parts_words)


def _parts_words(item: tuple[str, str, str, str], before: str, after: str) -> bool:
    """Whether a fixed point between the characters ``before`` and ``after`` parts two words: a
    no-break space or a dash always does (``Time&nbsp;[Index]``, ``dog&mdash;a``), a symbol between
    letters or digits only (``ACME&reg;.`` is one word)."""
    if item[1] != "fixed":
        return False
    decoded = html.unescape(item[2])
    return any(ch in NO_BREAK or unicodedata.category(ch) == "Pd" for ch in decoded) or \
        before.isalnum() and after.isalnum()


def apart(items: list[tuple[str, str, str, str]], parts) -> list[tuple[str, str, str, str]]:
    """``items`` with a space after each point that stands between two characters of text that are
    not whitespace and that ``parts(item, before, after)`` says it parts: the space is text without
    raw text of its own, so the words stay two for the model and the point stays glued to the
    word before it."""
    out: list[tuple[str, str, str, str]] = []
    for number, item in enumerate(items):
        out.append(item)
        if item[0] == "point":
            before = next((d for kind, _, _, d in reversed(out) if kind == "data" and d), "")[-1:]
            after = next((d for kind, _, _, d in items[number + 1:] if kind == "data" and d), "")[:1]
            if before.strip() and after.strip() and parts(item, before, after):
                out.append(("data", "", "", " "))
    return out


def parse_html(text: str) -> Parsed:
    undeclared = undeclared_without_head(text)
    text = declared_utf8_html(text)
    references = character_references(text)
    parser = _Events(text)
    try:
        parser.feed(text)
        parser.close()
    except (AssertionError, ValueError) as exc:  # html.parser is lenient; what it refuses is broken
        raise FormatError(f"not readable as HTML: {exc}") from None
    events = parser.events
    skeleton, units = Skeleton(), []
    pending: list[tuple[str, str, str, str]] = []  # (kind, tag, raw, decoded data) of the unit being read
    verbatim: list[str] = []  # the verbatim element being copied (and nested ones of its name)
    atom: list[str] = []  # likewise, for an inline element kept whole inside a unit

    def flush() -> None:
        if not pending:
            return
        unit, lead, trail = inline_unit(fixed_characters(pending), f"text {len(units) + 1}")
        if unit is None:
            skeleton.text("".join(raw for _, _, raw, _ in pending))
        else:
            skeleton.text(lead)
            skeleton.slot()
            skeleton.text(trail)
            units.append(unit)
            if nesting_problem("".join(raw for _, _, raw, _ in pending)) is None:
                nested.add(len(units) - 1)
        pending.clear()

    attributes: dict[int, int] = {}  # mark number -> index of its unit
    nested: set[int] = set()  # units whose source markup is well nested: so must their translation's be

    def translated_attributes(raw: str) -> str:
        """``raw`` with its title/alt values replaced by marks, each value a unit of its own."""
        if "\ue000" in text:  # the page uses the marks' private-use characters: leave attributes alone
            return raw
        for name, start, end in reversed(_attribute_values(raw)):
            value = html.unescape(raw[start:end])
            if name in TRANSLATED_ATTRIBUTES and any(ch.isalpha() for ch in value):
                attributes[len(attributes)] = len(units)
                units.append(TextUnit(" ".join(value.split()), f"{tag} {name}"))
                quoted = start > 0 and raw[start - 1] in "\"'"
                mark = _MARK.format(len(attributes) - 1)
                raw = raw[:start] + (mark if quoted else f'"{mark}"') + raw[end:]  # a translation has spaces
        return raw

    for k, (start, kind, tag, attrs, data) in enumerate(events):
        raw = text[start:events[k + 1][0] if k + 1 < len(events) else len(text)]
        if kind in ("start", "startend") and not atom and not verbatim and \
                any(attrs.get(name) for name in TRANSLATED_ATTRIBUTES) and attrs.get("translate") != "no":
            raw = translated_attributes(raw)
        if atom:
            _follow(atom, kind, tag)
            pending.append(("atom" if atom else "atom-end", tag, raw, ""))
            continue
        if verbatim:
            _follow(verbatim, kind, tag)
            skeleton.text(raw)
            continue
        untranslatable = tag in VERBATIM or attrs.get("translate") == "no" or \
            "notranslate" in (attrs.get("class") or "").split() or (tag in CODE and attrs.get("translate") != "yes")
        if kind == "start" and untranslatable and tag not in POINT:
            if tag in INLINE:  # kept whole, as one point of the sentence around it
                pending.append(("atom-start", tag, raw, ""))
                atom.append(tag)
                continue
            flush()
            verbatim.append(tag)
            skeleton.text(raw)
            continue
        if kind == "data":
            pending.append(("data", "", raw, data))
        elif tag in INLINE and kind in ("start", "end"):
            pending.append((kind, tag, raw, ""))
        elif tag in POINT or (tag in INLINE and kind == "startend"):
            pending.append(("point", tag, raw, ""))
        else:
            flush()
            skeleton.text(raw)
    flush()

    attribute_units = set(attributes.values())

    def render(translations: Sequence[str], links: Sequence[Sequence[Link]], notes: dict[int, list[str]]) -> str:
        values = []
        for index, (unit, translation) in enumerate(zip(units, translations)):
            if index in attribute_units:
                continue
            pieces, unit_notes = transfer(unit.text, unit.tags, translation, links[index], keep_link_text=True)
            if unit_notes:
                notes[index] = unit_notes
            values.append("".join(p.text if p.markup else as_written(p.text, references) for p in pieces))
            problem = nesting_problem(values[-1]) if index in nested else None
            if problem is not None:
                raise OutputError(f"{unit.where}: the translation's markup would not be well nested ({problem}): "
                                  f"{values[-1][:200]!r}")
        page = skeleton.fill(values)
        for mark, index in attributes.items():
            page = page.replace(_MARK.format(mark), html.escape(translations[index], quote=True), 1)
        return ascii_html(page) if undeclared else page

    return Parsed(units, render, marked=True)


def markup_items(text: str) -> list[tuple[str, str, str, str]]:
    """``inline_unit`` items of a run of text with HTML or XML markup in it (a message of a catalogue
    made from a page, by html2po or po4a): every tag is inline, void elements and ``<x/>`` are
    points, comments and declarations are points too. A code element (``CODE``: ``code``, ``kbd``,
    ``samp``, ``tt``, ``var``, unless ``translate="yes"``) is kept whole, one point of the
    sentence, as in a page: the model never sees its text."""
    parser = _Events(text)
    parser.feed(text)
    parser.close()
    items, events = [], parser.events
    atom: list[str] = []  # the open code elements of the same name, outermost first
    for k, (start, kind, tag, attrs, data) in enumerate(events):
        raw = text[start:events[k + 1][0] if k + 1 < len(events) else len(text)]
        if atom:
            _follow(atom, kind, tag)
            items.append(("atom" if atom else "atom-end", tag, raw, ""))
            continue
        if kind == "start" and tag in CODE and attrs.get("translate") != "yes" and \
                any(e[1] == "end" and e[2] == tag for e in events[k + 1:]):
            items.append(("atom-start", tag, raw, ""))
            atom.append(tag)
        elif kind == "data":
            items.append(("data", "", raw, data))
        elif kind == "start" and tag not in _Nesting.VOID:
            items.append(("start", tag, raw, ""))
        elif kind == "end":
            items.append(("end", tag, raw, ""))
        else:
            items.append(("point", "br" if tag == "br" else tag, raw, ""))
    return items


class _Nesting(HTMLParser):
    """The first closing tag that does not close the innermost open element, or an element never closed."""

    VOID = frozenset("area base br col embed hr img input link meta source track wbr".split())

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.problem: str | None = None

    def handle_starttag(self, tag, attrs):
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if self.problem is None and (not self.stack or self.stack[-1] != tag):
            self.problem = f"</{tag}> closes {'<' + self.stack[-1] + '>' if self.stack else 'nothing'}"
        elif self.stack:
            self.stack.pop()


def nesting_problem(markup: str) -> str | None:
    """What makes the inline ``markup`` badly nested, or None if every element closes in order."""
    checker = _Nesting()
    checker.feed(markup)
    checker.close()
    if checker.problem is None and checker.stack:
        return f"<{checker.stack[-1]}> is never closed"
    return checker.problem


__all__ = ["parse_html", "markup_items", "fixed_characters", "apart", "character_references", "as_written",
           "nesting_problem", "FormatError"]
