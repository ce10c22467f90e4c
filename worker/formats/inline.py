"""One run of inline content (text and its inline markup, from any markup format) made into a
``TextUnit``: the text as shown, whitespace collapsed, and the markup as ``Tag`` spans of it, in
source order, each with the paired tag it sits in."""
from __future__ import annotations

import html
import re

from .model import Tag, TextUnit, collapsed

# quotes and brackets that enclose a code with nothing else between them: opening -> closing
_ENCLOSING = {"\u2018": "\u2019", "\u201c": "\u201d", '"': '"', "'": "'", "`": "'", "\u00ab": "\u00bb",
              "\u00bb": "\u00ab", "\u201e": "\u201c", "\u201a": "\u2018", "(": ")", "[": "]"}
_BRACKETS = "(["  # no apostrophe: they may touch a word outside them (``f(<var>x</var>)``)
# point tags that are no code: line breaks, WebVTT timestamps, HTML's fixed characters (``&nbsp;``), and
# Markdown's inline HTML, whose own reader takes what binds its codes (``markdown._with_punctuation``)
_NO_CODE = frozenset(("br", "wbr", "time", "fixed", "html"))
_EXTENSION = re.compile(r"(?:\.[^\W_]+)+(?!\w)")  # a file name's extension right after a code: ``.po``, ``.tar.gz``
_REFERENCE = "&(?:#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);"
_REFERENCE_AT_END, _REFERENCE_AT_START = re.compile(_REFERENCE + r"\Z"), re.compile(r"\A" + _REFERENCE)


def inline_unit(items: list[tuple[str, str, str, str]], where: str,
                preserve: bool = False) -> tuple[TextUnit | None, str, str]:
    """The unit of one run of inline content, and the whitespace before and after it (verbatim);
    None if it has no text to translate. ``preserve`` (XML's ``xml:space="preserve"``): the text
    keeps its whitespace as it is, line breaks included, and the whitespace returned before and
    after it is the decoded text's. ``items``: (kind, tag name, raw source, decoded text) in
    source order, kind one of "data" (text), "start"/"end" (a paired tag, matched by name),
    "point" (a tag that is one position: ``br`` also separates words) and "atom-start"/"atom"/
    "atom-end" (an inline element kept whole, as one point). A paired tag around no text (an icon
    link) is one point, its inner markup included; one never closed is a point where it opened.
    A code point takes the quotes and brackets that enclose it and nothing else (``_enclosed``)."""
    items = _enclosed(_glued(_whole(items)))
    text = ""
    tags: list[Tag | None] = []  # a paired tag's place is taken when it opens, filled when it closes
    stack: list[tuple[str, str, int, int, int]] = []  # (tag name, raw start tag, text offset, tag index, item)
    atom: list[str] | None = None  # the raw text of an inline element kept whole
    atom_from = 0

    def spaced(first: int, last: int) -> tuple[bool, bool]:
        """Whitespace before items[first] and after items[last] in the source, past the tags that
        open right before it and those that close right after it (``**`a`** b``: after)."""
        while first > 0 and items[first - 1][0] == "start":
            first -= 1
        while last + 1 < len(items) and items[last + 1][0] == "end":
            last += 1
        before = first > 0 and items[first - 1][0] == "data" and items[first - 1][2][-1:].isspace()
        after = last + 1 < len(items) and items[last + 1][0] == "data" and items[last + 1][2][:1].isspace()
        return before, after

    def parent() -> int | None:
        return stack[-1][3] if stack else None

    for number, (kind, tag, raw, data) in enumerate(items):
        if kind == "atom-start":
            atom, atom_from = [raw], number
        elif kind == "atom" and atom is not None:
            atom.append(raw)
        elif kind == "atom-end" and atom is not None:
            tags.append(Tag("".join(atom + [raw]), "", len(text), len(text), spaced(atom_from, number), parent()))
            atom = None
        elif kind == "data":
            text = text + data if preserve else collapsed(text, data)
        elif kind == "start":
            stack.append((tag, raw, len(text), len(tags), number))
            tags.append(None)
        elif kind == "end":
            match = next((i for i in range(len(stack) - 1, -1, -1) if stack[i][0] == tag), None)
            if match is None:
                tags.append(Tag(raw, "", len(text), len(text), spaced(number, number), parent()))
                continue
            for k in range(match + 1, len(stack)):  # opened inside and never closed
                _name, opened, at, index, _item = stack[k]
                tags[index] = Tag(opened, "", at, at, (False, False), stack[k - 1][3])
            _name, opened, at, index, item = stack[match]
            del stack[match:]
            if text[at:].strip():
                tags[index] = Tag(opened, raw, at, len(text), parent=parent())
            else:  # around no text: one point, with what it holds
                del tags[index:]
                whole = "".join(r for _, _, r, _ in items[item:number + 1])
                tags.append(Tag(whole, "", at, at, spaced(item, number), parent()))
                if _between_siblings(items, item, number) and text[-1:].isalnum():
                    text += " "
        else:  # point
            tags.append(Tag(raw, "", len(text), len(text), spaced(number, number), parent()))
            if tag == "br" and text and not text.endswith(" ") and not preserve or \
                    _between_siblings(items, number, number) and text[-1:].isalnum():
                text += " "  # a line break separates words, as does a code between two paired tags
    if atom is not None:  # never closed before the unit ended
        tags.append(Tag("".join(atom), "", len(text), len(text), (False, False), parent()))
    for index, (_name, opened, at, own, _item) in enumerate(stack):
        tags[own] = Tag(opened, "", at, at, (False, False), stack[index - 1][3] if index else None)
    if not any(ch.isalpha() for ch in text):
        return None, "", ""
    if preserve:
        return _preserved(text, [t for t in tags if t is not None], where)
    stripped = text.rstrip(" ")
    fixed = settled([t for t in tags if t is not None], len(stripped))  # every place is filled by now
    first, last = items[0][2], items[-1][2]
    lead = first[:len(first) - len(first.lstrip())] if items[0][0] == "data" else ""
    trail = last[len(last.rstrip()):] if items[-1][0] == "data" else ""
    return TextUnit(stripped, where, tags=tuple(fixed)), lead, trail


def _between_siblings(items: list[tuple[str, str, str, str]], first: int, last: int) -> bool:
    """Whether items[first:last + 1] (a point) sits right after one paired tag closes and right
    before the next opens (``</g><g id="57"/><g>``: odf2xliff's line break between two links):
    the point parts two words, though no space does."""
    return first > 0 and items[first - 1][0] == "end" and last + 1 < len(items) and items[last + 1][0] == "start"


def _glued(items: list[tuple[str, str, str, str]]) -> list[tuple[str, str, str, str]]:
    """``items`` with point tags joined by punctuation alone (``x86``/``x64``) made one point, the
    punctuation in it: a point can only go between words, and the punctuation would be one word."""
    out: list[tuple[str, str, str, str]] = []
    for item in items:
        if len(out) >= 2 and item[0] == "point" and item[1] != "br" and out[-2][0] == "point" and \
                out[-2][1] != "br" and out[-1][0] == "data" and out[-1][3] and \
                not any(ch.isspace() or ch.isalnum() for ch in out[-1][3]):
            data = out.pop()
            first = out.pop()
            out.append(("point", first[1], first[2] + data[2] + item[2], ""))
        else:
            out.append(item)
    return out


def _whole(items: list[tuple[str, str, str, str]]) -> list[tuple[str, str, str, str]]:
    """``items`` with each inline element kept whole (``atom-start`` to ``atom-end``) made one point."""
    out: list[tuple[str, str, str, str]] = []
    start = None
    for item in items:
        if item[0] == "atom-start":
            start = len(out)
        out.append(item)
        if item[0] == "atom-end" and start is not None:
            out[start:] = [("point", out[start][1], "".join(raw for _, _, raw, _ in out[start:]), "")]
            start = None
    return out


def _is_code(item: tuple[str, str, str, str]) -> bool:
    """Whether ``item`` is a point that is code written as markup (an inline element kept whole, an
    XLIFF ``<x/>`` or ``<ph>``, an entity reference), which the writer copies as it is: not a line
    break, and not a DOCX run, whose markup is a sentinel the writer reads."""
    return item[0] == "point" and item[1] not in _NO_CODE and item[2][:1] in ("<", "&")


def _enclosed(items: list[tuple[str, str, str, str]]) -> list[tuple[str, str, str, str]]:
    """``items`` with quotes and brackets that enclose a code and nothing else (``‘<tt>po/</tt>’``,
    ``(<var>x</var>)``, paired markup around the code between them too) made part of its point,
    as many pairs as enclose it. The model saw them as a word of their own, which no alignment
    places: the code came back out of its quotes, glued to the words around it (``in »'«<tt>po/</tt>``).
    A quote glued to a letter or digit outside it is an apostrophe (``don'<tt>x</tt>'s``): left."""
    out = list(items)
    i = 0
    while i < len(out):
        if _is_code(out[i]):
            at: int | None = i
            while at is not None:  # paired markup and more quotes may enclose it now
                i, at = at, _enclose(out, at)
        i += 1
    return out


def _enclose(items: list[tuple[str, str, str, str]], index: int) -> int | None:
    """Make the quotes and brackets that enclose the point ``items[index]`` (with paired markup
    around it and nothing else) part of it, in place, and a file name's extension right after it
    (``"<var>Resource</var>.po"``): the point's index then; None if there are none."""
    first, last = index, index
    while first > 0 and last + 1 < len(items) and items[first - 1][0] == "start" and items[last + 1][0] == "end" \
            and items[first - 1][1] == items[last + 1][1]:
        first, last = first - 1, last + 1
    if not (last + 1 < len(items) and items[last + 1][0] == "data"):
        return None
    edge = first - 1 if first > 0 and items[first - 1][0] == "data" else first  # from the text before it, if any
    before, shown = (items[edge][2], items[edge][3]) if edge < first else ("", "")
    after, then = items[last + 1][2], items[last + 1][3]
    opened = closed = ""
    extension = _EXTENSION.match(then)
    if extension is not None and after.startswith(extension.group()):
        closed, after, then = extension.group(), after[extension.end():], then[extension.end():]
    while shown and then and _ENCLOSING.get(shown[-1]) == then[0]:
        ahead, behind = _written(before, shown[-1], at_end=True), _written(after, then[0], at_end=False)
        if not ahead or not behind or shown[-1] not in _BRACKETS and (shown[-2:-1].isalnum() or then[1:2].isalnum()):
            break
        opened, before, shown = before[len(before) - ahead:] + opened, before[:len(before) - ahead], shown[:-1]
        closed, after, then = closed + after[:behind], after[behind:], then[1:]
    if not opened and not closed:
        return None
    point = ("point", items[index][1], opened + "".join(raw for _, _, raw, _ in items[first:last + 1]) + closed, "")
    kept = [item for item in [("data", "", before, shown), point, ("data", "", after, then)] if item[2] or item[3]]
    items[edge:last + 2] = kept
    return edge + kept.index(point)


def _written(raw: str, character: str, at_end: bool) -> int:
    """How many characters at the end (start) of ``raw`` write ``character``: the character itself,
    or a character reference to it (``&lsquo;``, ``&#8217;``, ``&quot;``); 0 if neither does."""
    if raw.endswith(character) if at_end else raw.startswith(character):
        return len(character)
    match = (_REFERENCE_AT_END if at_end else _REFERENCE_AT_START).search(raw)
    return len(match.group()) if match is not None and html.unescape(match.group()) == character else 0


def _preserved(text: str, tags: list[Tag], where: str) -> tuple[TextUnit, str, str]:
    """The unit of text whose whitespace is kept: the whitespace at its edges (outside every tag)
    is handed back to stay where it is, the rest is the unit's text."""
    marks = [t.start for t in tags] + [t.end for t in tags]
    lead = min([len(text) - len(text.lstrip())] + [m for m in marks])
    trail = len(text) - max([len(text.rstrip())] + [m for m in marks])
    body = text[lead:len(text) - trail]
    shifted = [Tag(t.open, t.close, t.start - lead, t.end - lead, t.space, t.parent) for t in tags]
    return TextUnit(body, where, tags=tuple(settled(shifted, len(body)))), text[:lead], text[len(text) - trail:]


def settled(tags: list[Tag], length: int) -> list[Tag]:
    """``tags`` clamped to a text of ``length`` characters, a tag's parent moved up past paired
    tags that became points (a paired tag is never the parent of a point-shaped one)."""
    def up(parent: int | None) -> int | None:
        while parent is not None and not tags[parent].close:
            parent = tags[parent].parent
        return parent

    out = []
    for tag in tags:
        start, end = min(tag.start, length), min(tag.end, length)
        out.append(Tag(tag.open, tag.close, start, end, tag.space, up(tag.parent)))
    return out
