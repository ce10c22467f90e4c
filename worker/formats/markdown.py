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
their labels kept. A code span (or other point) is kept with the punctuation that binds it to its
place (``(`x`)``, ``**`NAME`**:``, ``in `x`.``), which the model can then neither drop nor move.
Admonitions of Python-Markdown and pymdown-extensions (``!!! note "Title"``, ``???+ tip``) keep
their marker and classes; a quoted title is a unit (``admonition title``) and the indented body is
read as Markdown blocks, as MkDocs reads it. Blocks of pymdown-extensions (``/// details | Summary``,
then indented YAML options, a Markdown body and a closing ``///``) keep their slashes, name, options
and closing line; the text after ``|`` is a unit (``block title``), except where it is no text (an
``html`` block's tag, a caption's number), and the body is read as Markdown blocks (a raw ``html``
body, ``pre``, ``script``... or ``markdown: raw``, is kept). Everything else is copied byte for
byte: front matter, fenced and indented code, HTML blocks, link reference definitions, thematic
breaks, list and quote markers, the indentation of continuation lines and the line endings. A
paragraph keeps its number of source lines (the translation is broken again at spaces, never inside
markup), and translated text is escaped where it would otherwise read as Markdown (``*``, ``_``,
``[``, a ``#`` or ``-`` at the start of a line, ``!!!``, ``///``...).

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
from mdit_py_plugins.admon import admon_plugin
from mdit_py_plugins.admon.index import admonition
from mdit_py_plugins.footnote import footnote_plugin
from mdit_py_plugins.front_matter import front_matter_plugin
from mdit_py_plugins.utils import is_code_block

from .inline import inline_unit
from .markup import Link, Piece, transfer
from .model import FormatError, Parsed, Skeleton, Tag, TextUnit, rebreak

_BLOCKS = {"paragraph_open": "paragraph", "th_open": "table header", "td_open": "table cell"}
_PAIRED = {"em": "em", "strong": "strong", "s": "s"}  # token type prefix -> tag name
_ENTITY = re.compile(r"&(#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_KEEP_SPACE = "\ue002"  # stands for a space inside markup while a paragraph is broken into lines
# a line of a paragraph that would start a block: ATX heading, quote, list item, setext underline, fence
# (or an admonition, ``_ADMONITION``)
# (a "~" of translated text is always escaped: a line starting with one is strikethrough markup)
_LINE_START = re.compile(r"^(?:#{1,6}(?=\s|$)|[>+=-])")
_ORDERED = re.compile(r"^(\d{1,9})([.)])(?=\s|$)")
# an admonition's first line as Python-Markdown (``!!!``) and pymdownx.details (``???``, ``???+``)
# accept it: classes, then a title only in double quotes (from the first to the last one)
_ADMONITION = re.compile(r'(?P<head>(?:!!!|\?\?\?\+?) ?[\w-]+(?: +[\w-]+)*)(?: +"(?P<title>.*)")? *$')
# a pymdown-extensions block's opening line (pymdownx.blocks' RE_START, after up to 3 spaces), and its closing line
_BLOCK_START = re.compile(r"(?P<fence>/{3,}) *(?P<name>[\w-]+) *(?:\| *(?P<argument>.*?) *)?$")
_BLOCK_END = re.compile(r"(?P<fence>/{3,}) *$")
# blocks whose argument is no text: an HTML tag and its selectors (``/// html | div.note``), a caption's
# place and number (``/// figure-caption | < ^1``), which pymdownx refuses when it is anything else
_ARGUMENT_KEPT = re.compile(r"html|caption|[\w-]+-caption", re.IGNORECASE)
# ``/// html | TAG`` bodies pymdownx keeps raw (``markdown: auto``), and the option that makes any body raw
_RAW_TAGS = frozenset("canvas math option pre script style textarea code".split())
_MARKDOWN_OPTION = re.compile(r" *markdown *: *['\"]?(?P<mode>\w+)['\"]? *$")
_FENCE = re.compile(r"(?P<fence>`{3,}(?=[^`]*$)|~{3,})")
# open a point that carries the punctuation after it in the source (``_with_punctuation``), and that punctuation
_CARRIED, _CARRIED_REST = "\ue003", "\ue004"
_STOPS = ".,:;!?\u2026"  # punctuation a translated word may end with, in place of which a code brings its own
_CLOSERS = ")]}\"'\u00bb\u00ab\u201c\u201d\u2019\u203a"
_OPENERS = {"(": ")", "[": "]", "{": "}", '"': '"', "'": "'", "\u201c": "\u201d", "\u2018": "\u2019",
            "\u201e": "\u201c", "\u00ab": "\u00bb"}


_Item = tuple[str, str, str, str]  # an ``inline_unit`` item: kind, tag name, source, text shown


class _Unmatched(Exception):
    """The inline source of a block could not be lined up with markdown-it's tokens."""


def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark").enable(["table", "strikethrough"]).use(front_matter_plugin).use(footnote_plugin)
    md.use(admon_plugin).block.ruler.at("admonition", _admonition,
                                         {"alt": ["paragraph", "reference", "blockquote", "list"]})
    md.block.ruler.after("admonition", "pymdown_block", _pymdown_block,
                         {"alt": ["paragraph", "reference", "blockquote", "list"]})
    return md


def _admonition(state, start: int, end: int, silent: bool) -> bool:
    """mdit-py-plugins' admonition rule, for a line that MkDocs also reads as one: the plugin takes
    any ``!!! words`` (``!!! WARNING !!! text`` would lose its text to a title)."""
    line = state.src[state.bMarks[start] + state.tShift[start]:state.eMarks[start]]
    return bool(_ADMONITION.match(line)) and admonition(state, start, end, silent)


def _pymdown_block(state, start: int, end: int, silent: bool) -> bool:
    """A pymdown-extensions block (``/// name | argument``): its options (the lines right after the
    opening one, indented 4 spaces more) are skipped, its body up to the closing line is read as
    Markdown blocks (or not at all, if pymdownx keeps it raw). Tokens: ``pymdown_block_open`` (meta:
    name, argument, options), the argument as a ``pymdown_block_title`` paragraph where it is text,
    the body, ``pymdown_block_close``."""
    if is_code_block(state, start):
        return False
    line = state.src[state.bMarks[start] + state.tShift[start]:state.eMarks[start]]
    match = _BLOCK_START.match(line) if line.startswith("///") else None
    if match is None:
        return False
    if silent:
        return True
    body = start + 1
    while body < end and not state.isEmpty(body) and state.sCount[body] - state.blkIndent >= 4:
        body += 1
    options = [state.src[state.bMarks[n]:state.eMarks[n]] for n in range(start + 1, body)]
    close, closed = _block_end(state, body, end, len(match["fence"]))
    name, argument = match["name"], match["argument"] or ""
    modes = [m["mode"].lower() for m in map(_MARKDOWN_OPTION.match, options) if m]
    mode = modes[-1] if modes else "auto"
    raw = mode == "raw" or (mode == "auto" and name.lower() == "html"
                            and re.match(r"[\w-]*", argument).group().lower() in _RAW_TAGS)

    token = state.push("pymdown_block_open", "div", 1)
    token.markup, token.info, token.block, token.map = match["fence"], name, True, [start, close + closed]
    token.meta = {"name": name, "argument": argument, "options": options}
    if argument and not _ARGUMENT_KEPT.fullmatch(name):
        state.push("pymdown_block_title_open", "p", 1).map = [start, start + 1]
        token = state.push("inline", "", 0)
        token.content, token.map, token.children = argument, [start, start + 1], []
        state.push("pymdown_block_title_close", "p", -1)
    if not raw and body < close:
        old_parent, old_max = state.parentType, state.lineMax
        state.parentType, state.lineMax = "pymdown_block", close  # no lazy continuation past the closing line
        state.md.block.tokenize(state, body, close)
        state.parentType, state.lineMax = old_parent, old_max
    token = state.push("pymdown_block_close", "div", -1)
    token.markup, token.block = match["fence"], True
    state.line = close + closed
    return True


def _block_end(state, first: int, end: int, fence: int) -> tuple[int, bool]:
    """The closing line of a block opened with ``fence`` slashes, looked for from line ``first``: a
    line of that many slashes that closes no block opened inside it (a closing line closes the
    innermost open block with as many slashes, and those opened in that one), outside fenced code;
    ``end`` or the first line indented less than the block (the end of its list item) if none, and
    whether it was found."""
    inner: list[int] = []  # the slashes of the blocks open inside, innermost last
    code = None  # the fence of the code block the line is in
    for row in range(first, end):
        line = state.src[state.bMarks[row] + state.tShift[row]:state.eMarks[row]]
        if line and state.sCount[row] < state.blkIndent:
            return row, False
        if code is not None:
            if line.startswith(code) and not line.lstrip(code[0]).strip():
                code = None
            continue
        if is_code_block(state, row):
            continue
        opened = _FENCE.match(line)
        if opened:
            code = opened["fence"]
        elif _BLOCK_START.match(line):
            inner.append(len(_BLOCK_START.match(line)["fence"]))
        elif _BLOCK_END.match(line):
            slashes = len(line.rstrip(" "))
            if slashes in inner:
                del inner[len(inner) - 1 - inner[::-1].index(slashes):]
            elif slashes == fence:
                return row, True
    return end, False


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
        if token.type == "admonition_title_open":
            block = "admonition title"
        if token.type == "pymdown_block_title_open":
            block = "block title"
        if token.type in _BLOCKS or token.type == "heading_open":
            block = _BLOCKS.get(token.type) or f"heading {len(token.markup) if token.markup[0] == '#' else ''}".strip()
            block = "footnote" if footnote and block == "paragraph" else block
        if token.type == "inline" and token.map is not None and token.content.strip():
            inlines.append((token, block))
    for token, block in sorted(inlines, key=lambda pair: pair[0].map[0]):  # footnotes come last: file order
        if block == "admonition title":
            found = _title(text, token.map[0], line_starts, cursor)
        elif block == "block title":
            found = _block_title(text, token.map[0], line_starts, cursor)
        else:
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
            pieces, unit_notes = transfer(unit.text, _uncarried(unit.tags, links[index]), translation, links[index],
                                          empty_pairs=_is_link, nests=_nests, respell=_respelled)
            if unit_notes:
                notes[index] = unit_notes
            values.append(layout.lay_out(_placed_with_punctuation(pieces)))
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


def _uncarried(tags: Sequence[Tag], links: Sequence[Link]) -> tuple[Tag, ...]:
    """``tags``, a code that carries its punctuation written as any other point where the word it
    follows has no aligned word: it goes before the next aligned word, with a space before it
    (glued to nothing, it could land at the start of a paired tag, its space inside the tag, or
    right after another code: ```a``b``` is one code span)."""
    ends = {s1 for (_, s1), _ in links}
    out = []
    for tag in tags:
        if tag.open.startswith(_CARRIED) and tag.start not in ends:
            plain = tag.open[len(_CARRIED):].lstrip(" \t").replace(_CARRIED_REST, "")
            tag = Tag(plain, "", tag.start, tag.end, (True, tag.space[1]), tag.parent)
        out.append(tag)
    return tuple(out)


def _placed_with_punctuation(pieces: list[Piece]) -> list[Piece]:
    """``pieces`` with each code that carries the punctuation after it (``_CARRIED``) written in
    place of the punctuation that ends the translated word right before it (the model saw the
    source's punctuation on that word: ``Lies in.`` + `` `x`.`` is ``Lies in `x`.``), and without
    the space before it where it starts its unit."""
    out: list[Piece] = []
    for piece in pieces:
        if not piece.markup or _CARRIED not in piece.text:
            out.append(piece)
            continue
        first, *carried = piece.text.split(_CARRIED)
        if not first and out and not out[-1].markup:  # closing brackets and quotes only if it brings its own
            rest = carried[0].partition(_CARRIED_REST)[2]
            out[-1] = Piece(out[-1].text.rstrip(_STOPS + "".join(ch for ch in _CLOSERS if ch in rest)), False)
        carried = [part.replace(_CARRIED_REST, "") for part in carried]
        if not first and not "".join(p.text for p in out).strip():
            carried[0] = carried[0].lstrip(" \t")
        for k, part in enumerate(carried):  # after other markup (`a``b` would be one code span): apart
            previous = carried[k - 1] if k else first
            if previous and not previous[-1].isspace() and not part[:1].isspace():
                carried[k] = " " + part
        out.append(Piece(first + "".join(carried), True))
    return [piece for piece in out if piece.text]


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


def _title(text: str, row: int, line_starts: list[int], cursor: int):
    """The piece of an admonition's first line that holds its quoted title, as ``_source_lines``
    gives pieces; None if the title is not written (``!!! note``: the plugin makes one of the
    class name, which stays as it is) or empty (``!!! note ""``)."""
    if row + 1 >= len(line_starts) or line_starts[row] < cursor:
        return None
    line = text[line_starts[row]:line_starts[row + 1]].rstrip("\r\n")
    match = _ADMONITION.search(line)  # after any indentation, list or quote markers
    if match is None or not match.group("title"):
        return None
    at = line_starts[row] + match.start("title")
    return [(at, match.group("title"))], at, at + len(match.group("title"))


def _block_title(text: str, row: int, line_starts: list[int], cursor: int):
    """The piece of a block's opening line after its ``|``, as ``_title`` gives an admonition's."""
    if row + 1 >= len(line_starts) or line_starts[row] < cursor:
        return None
    line = text[line_starts[row]:line_starts[row + 1]].rstrip("\r\n")
    match = _BLOCK_START.search(line)  # after any indentation, list or quote markers
    if match is None or not match["argument"]:
        return None
    at = line_starts[row] + match.start("argument")
    return [(at, match["argument"])], at, at + len(match["argument"])


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
    carry = _CARRIED not in raw and _CARRIED_REST not in raw
    unit, lead, trail = inline_unit(_with_punctuation(items, carry), where)
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


def _with_punctuation(items: list[_Item], carry: bool) -> list[_Item]:
    """``items`` with each code span (image, footnote reference, autolink) made one point with the
    punctuation that binds it to its place. The model would get that punctuation as a word of its
    own, which no alignment places: the code went before the next aligned word, out of its
    brackets and past the end of its sentence (``()`x`oder``, ``gelesen. `x`Dann``). So brackets
    and quotes around the code and nothing else, and punctuation before a unit's first word, are
    taken from the text; punctuation after the code (``.``, ``:``, ``),``) is carried by it and
    shown to the model on the word before, the code placed right after that word's target, in place
    of the punctuation the target ends with (``_placed_with_punctuation``). Points joined by
    punctuation alone (``x86``/``x64``) and paired markup around nothing else (``**`x`**``,
    ``[`x`](url)``) are one point with them. ``carry``: whether punctuation may be carried (not
    where the source holds the character that marks it)."""
    out = list(items)
    i = 0
    while i < len(out):
        if out[i][0] != "point" or out[i][1] in ("br", "html"):
            i += 1
            continue
        first, last = _cluster(out, i)
        before, after = _edge(out, first - 1, at_end=True), _edge(out, last + 1, at_end=False)
        pairs = 0  # brackets and quotes around the code and nothing else
        while pairs < min(len(before), len(after)) and _OPENERS.get(before[len(before) - 1 - pairs]) == after[pairs]:
            pairs += 1
        opened, closed, rest = before[len(before) - pairs:], after[:pairs], after[pairs:]
        head = [_cut(out[first - 1], len(opened), at_end=True)] if opened else []
        point, taken = opened + "".join(raw for _, _, raw, _ in out[first:last + 1]) + closed, pairs
        space = _word_end(out[:first - len(head)] + head)
        if rest and not any(kind == "data" and any(ch.isalnum() for ch in data) for kind, _, _, data in out[:first]):
            point, taken = point + rest, len(after)  # no word before it to go with: it goes with the code
        elif rest and space is not None and carry:
            if head or out[first - 1][0] == "data":
                kind, tag, raw, data = head[-1] if head else out[first - 1]
                head = [(kind, tag, raw[:len(raw) - len(space)], data[:len(data) - len(space)])]
            head.append(("data", "", "", rest))  # shown to the model on the word before, written by the code
            point, taken = _CARRIED + space + point + _CARRIED_REST + rest, len(after)
        replaced = first - 1 if first > 0 and out[first - 1][0] == "data" and (opened or point.startswith(_CARRIED)) \
            else first
        tail = [_cut(out[last + 1], taken, at_end=False)] if after else []
        middle = [item for item in [*head, ("point", "code", point, ""), *tail]
                  if item[0] != "data" or item[2] or item[3]]
        out[replaced:last + 1 + len(tail)] = middle
        i = replaced + next(k for k, item in enumerate(middle) if item[0] == "point") + 1
    return out


def _cluster(items: list[_Item], index: int) -> tuple[int, int]:
    """The items that are one point with the point at ``index``: points joined by punctuation
    alone, and paired markup around them and nothing else."""
    first = last = index
    while last + 2 < len(items) and items[last + 1][0] == "data" and items[last + 1][3] \
            and all(_glue(ch) for ch in items[last + 1][3]) and items[last + 1][2] == items[last + 1][3] \
            and items[last + 2][0] == "point" and items[last + 2][1] not in ("br", "html"):
        last += 2
    while first > 0 and last + 1 < len(items) and items[first - 1][0] == "start" and items[last + 1][0] == "end" \
            and items[first - 1][1] == items[last + 1][1]:
        first, last = first - 1, last + 1
    return first, last


def _cut(item: _Item, size: int, at_end: bool) -> _Item:
    """A text item less ``size`` characters (the same in its source and its text) at its end or start."""
    kind, tag, raw, data = item
    if at_end:
        return kind, tag, raw[:len(raw) - size], data[:len(data) - size]
    return kind, tag, raw[size:], data[size:]


def _word_end(items: list[_Item]) -> str | None:
    """The whitespace between the last word of ``items`` and what follows them (spaces and tabs of
    the source, "" for none), if they end with a word, or with paired markup closing right after
    one; None otherwise (a point, punctuation, a line break: nothing to show punctuation on)."""
    k, space = len(items) - 1, ""
    if k >= 0 and items[k][0] == "data":
        raw, data = items[k][2], items[k][3]
        space = raw[len(raw.rstrip(" \t")):]
        if "\n" in raw[len(raw.rstrip()):] or not data.endswith(space):
            return None
        word = data[:len(data) - len(space)]
        if word:
            return space if word[-1].isalnum() else None
        k -= 1
    closing = k
    while k >= 0 and items[k][0] == "end":
        k -= 1
    if k == closing or k < 0 or items[k][0] != "data":
        return None
    return space if items[k][3][-1:].isalnum() else None


def _edge(items: list[_Item], index: int, at_end: bool) -> str:
    """The punctuation at the end (``at_end``) or the start of the text ``items[index]``, where it
    is a word of its own up to the point beside it: whitespace or the unit's edge on its other
    side. "" if there is none, or if its source is not the text it shows (a backslash escape)."""
    if not 0 <= index < len(items) or items[index][0] != "data":
        return ""
    raw, data = items[index][2], items[index][3]
    size = 0
    while size < len(raw) and _glue(raw[-1 - size] if at_end else raw[size]):
        size += 1
    word = raw[len(raw) - size:] if at_end else raw[:size]
    shown = data[len(data) - size:] if at_end else data[:size]
    if not word or shown != word:
        return ""
    beyond = raw[:len(raw) - size] if at_end else raw[size:]
    if beyond:
        bounded = (beyond[-1] if at_end else beyond[0]).isspace()
    else:  # the text item ends there: past it, past paired markup, whitespace or the unit's edge
        step = -1 if at_end else 1
        k = index + step
        while 0 <= k < len(items) and items[k][0] == ("start" if at_end else "end"):
            k += step
        bounded = not 0 <= k < len(items) or \
            items[k][0] == "data" and (items[k][2][-1:] if at_end else items[k][2][:1]).isspace()
    return word if bounded else ""


def _glue(ch: str) -> bool:
    """Punctuation that can bind a code span to its place (not a backslash or an entity's ``&``,
    whose source is not what they show)."""
    return not (ch.isalnum() or ch.isspace() or ch in "\\&")


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
    if _LINE_START.match(line) or _ADMONITION.match(line) or _BLOCK_START.match(line) or _BLOCK_END.match(line):
        return "\\" + line  # pymdownx.blocks makes "/" escapable
    return line


__all__ = ["parse_markdown", "FormatError", "TextUnit"]
