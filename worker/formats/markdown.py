"""Markdown (``.md``, ``.markdown``), read with ``markdown-it-py``: CommonMark, plus tables,
strikethrough and YAML/TOML front matter.

Each paragraph, heading and table cell is one unit. Its inline markup (emphasis, strong,
strikethrough, links: inline, full ``[text][label]``, collapsed ``[text][]`` and shortcut
``[text]`` references) becomes ``Tag`` spans that come back around the aligned target words
(``formats.markup``); code spans, images, autolinks, inline HTML and hard line breaks are point
tags, kept verbatim, and so are footnote references (``[^note]``) and a link whose text is
only code (``[`nmt translate`](url)``, ``[`x`]``). A reference link whose text changes is written
in the full form, naming its label (``[Text][label]``); one whose text stays is written as it was.
Footnotes (``[^note]: text``, mdit-py-plugins' footnote syntax) are translated like paragraphs,
their labels kept. Everything else is copied byte for byte: front matter, fenced and indented
code, HTML blocks, link reference definitions, thematic breaks, list and quote markers, the
indentation of continuation lines and the line endings. A paragraph keeps its number of source
lines (the translation is broken again at spaces, never inside markup), and translated text is
escaped where it would otherwise read as Markdown (``*``, ``_``, ``[``, a ``#`` or ``-`` at the
start of a line...).

markdown-it gives block tokens line numbers but inline tokens no offsets, so each inline token is
found in the block's source text in order: text through its backslash escapes and entities, link
tails with markdown-it's own destination and title parsers. A block whose inline source cannot be
matched that way is left untranslated rather than risk its markup.
"""
from __future__ import annotations

import html
import re
from typing import Sequence

from markdown_it import MarkdownIt
from markdown_it.common.utils import normalizeReference
from markdown_it.helpers import parseLinkDestination, parseLinkTitle
from mdit_py_plugins.footnote import footnote_plugin
from mdit_py_plugins.front_matter import front_matter_plugin

from .inline import inline_unit
from .markup import Link, transfer
from .model import FormatError, Parsed, Skeleton, Tag, TextUnit, rebreak

_BLOCKS = {"paragraph_open": "paragraph", "th_open": "table header", "td_open": "table cell"}
_PAIRED = {"em": "em", "strong": "strong", "s": "s"}  # token type prefix -> tag name
_ENTITY = re.compile(r"&(#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_KEEP_SPACE = "\ue002"  # stands for a space inside markup while a paragraph is broken into lines
# a line of a paragraph that would start a block: ATX heading, quote, list item, setext underline, fence
# (a "~" of translated text is always escaped: a line starting with one is strikethrough markup)
_LINE_START = re.compile(r"^(?:#{1,6}(?=\s|$)|[>+=-])")
_ORDERED = re.compile(r"^(\d{1,9})([.)])(?=\s|$)")


class _Unmatched(Exception):
    """The inline source of a block could not be lined up with markdown-it's tokens."""


def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark").enable(["table", "strikethrough"]).use(front_matter_plugin).use(footnote_plugin)


def parse_markdown(text: str) -> Parsed:
    if "\x00" in text:
        raise FormatError("not a Markdown file: it contains NUL bytes")
    md, env = _parser(), {}
    try:
        tokens = md.parse(text, env)
    except Exception as exc:  # markdown-it accepts any text; this is a safety net, not a syntax check
        raise FormatError(f"not readable as Markdown: {exc}") from None
    line_starts = [0]
    for line in text.splitlines(keepends=True):
        line_starts.append(line_starts[-1] + len(line))
    skeleton, units, layouts = Skeleton(), [], []
    cursor, block, inlines, footnote = 0, "paragraph", [], False
    for token in tokens:
        if token.type in ("footnote_open", "footnote_close"):
            footnote = token.type == "footnote_open"
        if token.type in _BLOCKS or token.type == "heading_open":
            block = _BLOCKS.get(token.type) or f"heading {len(token.markup) if token.markup[0] == '#' else ''}".strip()
            block = "footnote" if footnote and block == "paragraph" else block
        if token.type == "inline" and token.map is not None and token.content.strip():
            inlines.append((token, block))
    for token, block in sorted(inlines, key=lambda pair: pair[0].map[0]):  # footnotes come last: file order
        found = _source_lines(text, token, line_starts, cursor)
        if found is None:
            continue
        pieces, start, end = found
        try:
            unit, layout = _unit(md, env, text, pieces, f"{block} (line {token.map[0] + 1})", block)
        except _Unmatched:
            continue
        if unit is None:
            continue
        skeleton.text(text[cursor:start])
        skeleton.slot()
        units.append(unit)
        layouts.append(layout)
        cursor = end
    skeleton.text(text[cursor:])

    def render(translations: Sequence[str], links: Sequence[Sequence[Link]], notes: dict[int, list[str]]) -> str:
        values = []
        for index, (unit, layout, translation) in enumerate(zip(units, layouts, translations)):
            pieces, unit_notes = transfer(unit.text, unit.tags, translation, links[index], empty_pairs=_is_link,
                                          nests=_nests, respell=_respelled)
            if unit_notes:
                notes[index] = unit_notes
            values.append(layout.lay_out(pieces))
        return skeleton.fill(values)

    return Parsed(units, render, marked=True)


_RESPELLED = {"*": "_", "_": "*", "**": "__", "__": "**", "~~": "<s>"}


def _is_link(tag: Tag) -> bool:
    """A link can hold no text (``[](url)``); emphasis around nothing is not Markdown."""
    return tag.open == "["


def _nests(outer: Tag, inner: Tag) -> bool:
    """Whether ``inner`` reads as its own markup written right inside ``outer`` (around the same
    words): not a link in a link, not a delimiter in the same delimiter (``*`` in ``*`` reads as
    ``**``, and ``~~~~`` at a line's start opens a code fence)."""
    if _is_link(outer) and _is_link(inner):
        return False
    return not (outer.open == inner.open and outer.open in _RESPELLED)


def _respelled(tag: Tag) -> Tag | None:
    """The same markup written another way (``_`` for ``*``, ``<s>`` for ``~~``), for a tag that
    must nest in one spelled as it is; None for a link."""
    other = _RESPELLED.get(tag.open)
    if other is None or tag.close != tag.open:
        return None
    close = "</s>" if other == "<s>" else other
    return Tag(other, close, tag.start, tag.end, tag.space, tag.parent)


def _source_lines(text: str, token, line_starts: list[int], cursor: int):
    """The pieces of ``text`` that hold each line of an inline token's content (content lines are
    source lines less their block markers and indentation), with the offsets of the first piece's
    start and the last one's end; None if a line is not where its block says."""
    pieces, first = [], token.map[0]
    for number, line in enumerate(token.content.split("\n")):
        line = line.lstrip(" \t")
        row = first + number
        if row + 1 >= len(line_starts):
            return None
        at = text.find(line, max(cursor, line_starts[row]), line_starts[row + 1])
        if at < 0:
            return None
        pieces.append((at, line))
        cursor = at + len(line)
    return pieces, pieces[0][0], cursor


class _Layout:
    """How a unit's rendered translation goes back into its block. ``parts``: per run of lines
    between hard breaks, the text between its source lines (a newline and the next line's quote
    markers or indentation: the translation is broken again at spaces there), then the hard break's
    marker (two spaces or a backslash), the text after its newline ("" for the last run) and the
    lengths of its source lines, which the translation's lines follow."""

    def __init__(self, lead: str, trail: str, parts: list[tuple[list[str], str, str, list[int]]],
                 shortcuts: dict[str, str], table: bool, heading: bool):
        self.lead, self.trail, self.parts, self.table, self.heading = lead, trail, parts, table, heading
        self.shortcuts = shortcuts  # a reference link as written ("[label]") for its full form, if its text is kept

    def lay_out(self, pieces) -> str:
        rendered = "".join(_kept_whole(p.text) if p.markup else _escaped(p.text, self.table, self.heading) for p in pieces)
        runs = []  # [text, hard break marker, separator after it] of the runs that have text
        for chunk, (soft, marker, separator, shares) in zip(rendered.split("\n"), self.parts):
            kept = marker.replace(" ", _KEEP_SPACE)  # a hard break's markup ends its run, before its newline
            body = chunk[:len(chunk) - len(kept)] if marker and chunk.endswith(kept) else chunk
            lines = [line for line in rebreak(body, len(soft) + 1, shares) if line] or [""]
            text = _line_start_escaped(lines[0]) + "".join(sep + _line_start_escaped(line) for sep, line in zip(soft, lines[1:]))
            if body.strip() or not runs:
                runs.append([text, marker, separator])
        runs[-1][1:] = ["", ""]  # a hard break at the end of a paragraph is none
        out = "".join(text + marker + separator for text, marker, separator in runs).replace(_KEEP_SPACE, " ")
        for full, written in self.shortcuts.items():
            out = out.replace(full, written)
        return self.lead + out + self.trail


def _kept_whole(markup: str) -> str:
    """Markup as one word while lines are broken: its inner spaces stand in for (the spaces that
    a point tag has around it stay spaces)."""
    inner = markup.strip(" ")
    if not inner:
        return markup
    at = markup.index(inner)
    return markup[:at] + inner.replace(" ", _KEEP_SPACE) + markup[at + len(inner):]


def _unit(md: MarkdownIt, env: dict, text: str, pieces: list[tuple[int, str]], where: str, block: str):
    """The unit of one block's inline content (``pieces``: the offset in ``text`` and the text of
    each content line) and its ``_Layout``; (None, None) if it has nothing to translate."""
    raw = "\n".join(line for _, line in pieces)
    between = [text[at + len(line):following] for (at, line), (following, _) in zip(pieces, pieces[1:])]
    newlines = [i for i, ch in enumerate(raw) if ch == "\n"]  # the k-th lies between source lines k and k + 1
    items, breaks, shortcuts = _items(raw, md.parseInline(raw, env)[0].children or [], env)
    unit, lead, trail = inline_unit(items, where)
    if unit is None:
        return None, None
    parts, soft, shares, previous = [], [], [], 0
    for offset, marker in breaks:  # a newline inside markup (a code span, a link title) is no break
        separator = between[newlines.index(offset)]
        shares.append(offset - previous + 1)  # the source line's length, to break the translation alike
        previous = offset + 1
        if marker is None:
            soft.append(separator)
        else:
            parts.append((soft, marker, separator, shares))
            soft, shares = [], []
    parts.append((soft, "", "", shares + [len(raw) - previous + 1]))
    return unit, _Layout(lead, trail, parts, shortcuts, block.startswith("table"), block.startswith("heading"))


def _items(raw: str, children, env: dict):
    """``inline_unit`` items for markdown-it's inline tokens, each with its verbatim source, and the
    line breaks: (raw offset of the newline, hard break marker or None for a soft break)."""
    items, breaks, p, index = [], [], 0, 0
    opened: list[int] = []  # where the text of each open link starts
    shortcuts: dict[str, str] = {}
    while index < len(children):
        token = children[index]
        kind = token.type
        if kind == "text":
            end = _match_text(raw, p, token.content)
            if end > p:  # markdown-it leaves empty text tokens where delimiters were
                items.append(("data", "", raw[p:end], token.content))
        elif kind == "softbreak":
            m = re.compile(r"[ \t]*\n[ \t]*").match(raw, p)
            if not m:
                raise _Unmatched
            breaks.append((raw.index("\n", p), None))
            end = m.end()
            items.append(("data", "", raw[p:end], " "))
        elif kind == "hardbreak":
            m = re.compile(r"( {2,}|\\)\n[ \t]*").match(raw, p)
            if not m:
                raise _Unmatched
            breaks.append((raw.index("\n", p), m.group(1)))
            end = m.end()
            items.append(("point", "br", m.group(1) + "\n", ""))
        elif kind == "code_inline":
            if not raw.startswith(token.markup, p):
                raise _Unmatched
            closing = re.compile(r"(?<!`)" + token.markup + r"(?!`)").search(raw, p + len(token.markup))
            if not closing:
                raise _Unmatched
            end = closing.end()
            items.append(("point", "code", raw[p:end].replace("\n", " "), ""))
        elif kind == "html_inline":
            if not raw.startswith(token.content, p):
                raise _Unmatched
            end = p + len(token.content)
            items.append(("point", "html", raw[p:end].replace("\n", " "), ""))
        elif kind == "footnote_ref":
            if not raw.startswith("[^", p):
                raise _Unmatched
            end = raw.index("]", p) + 1
            items.append(("point", "footnote", raw[p:end], ""))
        elif kind == "image":
            if not raw.startswith("![", p):
                raise _Unmatched
            end = _link_tail(raw, _closing_bracket(raw, p + 1), env)
            items.append(("point", "img", raw[p:end].replace("\n", " "), ""))
        elif kind == "link_open" and token.markup == "autolink":
            end = raw.find(">", p) + 1
            if not raw.startswith("<", p) or end <= 0:
                raise _Unmatched
            while index < len(children) and children[index].type != "link_close":
                index += 1
            items.append(("point", "autolink", raw[p:end], ""))
        elif kind == "link_open":
            if not raw.startswith("[", p):
                raise _Unmatched
            end = p + 1
            opened.append(end)
            items.append(("start", "a", "[", ""))
        elif kind == "link_close":
            if not raw.startswith("]", p) or not opened:
                raise _Unmatched
            end = _link_tail(raw, p, env)
            tail = raw[p:end]
            if tail in ("]", "][]"):  # the link text is the reference label: name the label, as the text changes
                label = raw[opened[-1]:p]
                shortcuts[f"[{label}][{label}]"] = f"[{label}{tail}"  # written as it was if the text stays
                tail = f"][{label}]"
            opened.pop()
            items.append(("end", "a", tail.replace("\n", " "), ""))
        elif kind.endswith(("_open", "_close")) and kind.rsplit("_", 1)[0] in _PAIRED:
            if not token.markup or not raw.startswith(token.markup, p):
                raise _Unmatched
            end = p + len(token.markup)
            items.append(("start" if kind.endswith("_open") else "end", _PAIRED[kind.rsplit("_", 1)[0]], token.markup, ""))
        else:
            raise _Unmatched
        # a newline inside markup (a code span, a link title) joins its lines: no break there
        p = end
        index += 1
    if raw[p:].strip():
        raise _Unmatched
    return items, breaks, shortcuts


def _match_text(raw: str, p: int, text: str) -> int:
    """Where the source of ``text`` (markdown-it's decoded text) ends, if it starts at ``raw[p]``:
    backslash escapes and character references are matched to the characters they stand for."""
    i = 0
    while i < len(text):
        ch = text[i]
        entity = _ENTITY.match(raw, p) if raw.startswith("&", p) else None
        if raw.startswith("\\", p) and p + 1 < len(raw) and raw[p + 1] == ch and ch in _PUNCTUATION:
            p, i = p + 2, i + 1
        elif entity and html.unescape(entity.group()) != entity.group() and text.startswith(html.unescape(entity.group()), i):
            i += len(html.unescape(entity.group()))
            p = entity.end()
        elif raw.startswith(ch, p):
            p, i = p + 1, i + 1
        else:
            raise _Unmatched
    return p


def _closing_bracket(raw: str, p: int) -> int:
    """The offset of the ``]`` that closes the ``[`` at ``raw[p]`` (nested brackets and backslash
    escapes skipped)."""
    depth, q = 0, p
    while q < len(raw):
        if raw[q] == "\\":
            q += 2
            continue
        if raw[q] == "[":
            depth += 1
        elif raw[q] == "]":
            depth -= 1
            if depth == 0:
                return q
        q += 1
    raise _Unmatched


def _link_tail(raw: str, q: int, env: dict) -> int:
    """The end of a link's source after its text: ``](destination "title")``, ``][label]``, ``][]``
    or a lone ``]`` (a shortcut reference). ``raw[q]`` is the ``]``."""
    r = q + 1
    if raw.startswith("(", r):
        pos = _spaces(raw, r + 1)
        if raw.startswith(")", pos):
            return pos + 1
        destination = parseLinkDestination(raw, pos, len(raw))
        if destination.ok:
            pos = _spaces(raw, destination.pos)
            if pos > destination.pos:
                title = parseLinkTitle(raw, pos, len(raw))
                if title.ok:
                    pos = _spaces(raw, title.pos)
            if raw.startswith(")", pos):
                return pos + 1
    if raw.startswith("[", r):
        if raw.startswith("[]", r):
            return r + 2
        try:
            close = _closing_bracket(raw, r)
        except _Unmatched:
            return r
        if normalizeReference(raw[r + 1:close]) in env.get("references", {}):
            return close + 1
    return r


def _spaces(raw: str, pos: int) -> int:
    while pos < len(raw) and raw[pos] in " \t\n":
        pos += 1
    return pos


def _escaped(text: str, table: bool, heading: bool) -> str:
    """Translated text as Markdown that shows it: characters that would start markup get a
    backslash (``_`` only where it could, ``|`` in tables, ``#`` in headings)."""
    out = []
    for i, ch in enumerate(text):
        before, after = text[i - 1:i], text[i + 1:i + 2]
        if ch in "\\`*[]<" or (ch == "|" and table) or (ch == "#" and heading and (not before or before.isspace())) \
                or (ch == "_" and not (before.isalnum() and after.isalnum())) or ch == "~" \
                or (ch == "&" and _ENTITY.match(text, i)) or (ch == "!" and after == "["):
            out.append("\\" + ch)
        elif ch == "\n":
            out.append(" ")
        else:
            out.append(ch)
    return "".join(out)


def _line_start_escaped(line: str) -> str:
    """A line of a paragraph with a backslash where its start would begin another block."""
    ordered = _ORDERED.match(line)
    if ordered:
        return ordered.group(1) + "\\" + line[ordered.end(1):]
    return "\\" + line if _LINE_START.match(line) else line


__all__ = ["parse_markdown", "FormatError", "TextUnit"]
