"""One run of inline content (text and its inline markup, from any markup format) made into a
``TextUnit``: the text as shown, whitespace collapsed, and the markup as ``Tag`` spans of it."""
from __future__ import annotations

from .model import Tag, TextUnit, collapsed


def inline_unit(items: list[tuple[str, str, str, str]], where: str) -> tuple[TextUnit | None, str, str]:
    """The unit of one run of inline content, and the whitespace before and after it (verbatim);
    None if it has no text to translate. ``items``: (kind, tag name, raw source, decoded text) in
    source order, kind one of "data" (text), "start"/"end" (a paired tag, matched by name),
    "point" (a tag that is one position: ``br`` also separates words) and "atom-start"/"atom"/
    "atom-end" (an inline element kept whole, as one point)."""
    text, tags, stack = "", [], []  # stack: (tag name, raw start tag, text offset)
    atom: list[str] | None = None  # the raw text of an inline element kept whole
    atom_from = 0

    def spaced(first: int, last: int) -> tuple[bool, bool]:
        """Whitespace right before items[first] and right after items[last], in the source."""
        before = first > 0 and items[first - 1][0] == "data" and items[first - 1][2][-1:].isspace()
        after = last + 1 < len(items) and items[last + 1][0] == "data" and items[last + 1][2][:1].isspace()
        return before, after

    for number, (kind, tag, raw, data) in enumerate(items):
        if kind == "atom-start":
            atom, atom_from = [raw], number
        elif kind == "atom" and atom is not None:
            atom.append(raw)
        elif kind == "atom-end" and atom is not None:
            tags.append(Tag("".join(atom + [raw]), "", len(text), len(text), spaced(atom_from, number)))
            atom = None
        elif kind == "data":
            text = collapsed(text, data)
        elif kind == "start":
            stack.append((tag, raw, len(text)))
        elif kind == "end":
            match = next((i for i in range(len(stack) - 1, -1, -1) if stack[i][0] == tag), None)
            if match is None:
                tags.append(Tag(raw, "", len(text), len(text), spaced(number, number)))
                continue
            for name, opened, at in stack[match + 1:]:  # opened inside and never closed
                tags.append(Tag(opened, "", at, at))
            name, opened, at = stack[match]
            del stack[match:]
            tags.append(Tag(opened, raw, at, len(text), exclusive=name == "a"))
        else:  # point
            tags.append(Tag(raw, "", len(text), len(text), spaced(number, number)))
            if tag == "br" and text and not text.endswith(" "):  # a line break separates words
                text += " "
    if atom is not None:  # never closed before the unit ended
        tags.append(Tag("".join(atom), "", len(text), len(text)))
    for name, opened, at in stack:
        tags.append(Tag(opened, "", at, at))
    if not any(ch.isalpha() for ch in text):
        return None, "", ""
    stripped = text.rstrip(" ")
    tags = [_clamped(tag, len(stripped)) for tag in sorted(tags, key=lambda t: (t.start, -(t.end - t.start)))]
    first, last = items[0][2], items[-1][2]
    lead = first[:len(first) - len(first.lstrip())] if items[0][0] == "data" else ""
    trail = last[len(last.rstrip()):] if items[-1][0] == "data" else ""
    return TextUnit(stripped, where, tags=tuple(tags)), lead, trail


def _clamped(tag: Tag, length: int) -> Tag:
    start, end = min(tag.start, length), min(tag.end, length)
    if tag.close and start == end:  # a pair around no text (an anchor, an icon): one point
        return Tag(tag.open + tag.close, "", start, start, (True, True))
    return Tag(tag.open, tag.close, start, end, tag.space, tag.exclusive)
