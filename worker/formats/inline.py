"""One run of inline content (text and its inline markup, from any markup format) made into a
``TextUnit``: the text as shown, whitespace collapsed, and the markup as ``Tag`` spans of it, in
source order, each with the paired tag it sits in."""
from __future__ import annotations

from .model import Tag, TextUnit, collapsed


def inline_unit(items: list[tuple[str, str, str, str]], where: str,
                preserve: bool = False) -> tuple[TextUnit | None, str, str]:
    """The unit of one run of inline content, and the whitespace before and after it (verbatim);
    None if it has no text to translate. ``preserve`` (XML's ``xml:space="preserve"``): the text
    keeps its whitespace as it is, line breaks included, and the whitespace returned before and
    after it is the decoded text's. ``items``: (kind, tag name, raw source, decoded text) in
    source order, kind one of "data" (text), "start"/"end" (a paired tag, matched by name),
    "point" (a tag that is one position: ``br`` also separates words) and "atom-start"/"atom"/
    "atom-end" (an inline element kept whole, as one point). A paired tag around no text (an icon
    link) is one point, its inner markup included; one never closed is a point where it opened."""
    items = _glued(items)
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
