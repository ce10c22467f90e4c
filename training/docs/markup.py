"""The translatable blocks of a help page (paragraphs, headings, list items, table cells) as runs
of text under a small set of inline tags, for three dialects: LibreOffice's XHTML help, Mallard
pages (GNOME help, projectmallard.org/1.0) and the HTML that DocBook and Sphinx write.

A block's plain text joins its runs with each run of whitespace made one space; its tagged text
writes the inline markup that matters to a translator as ``<link>``, ``<em>``, ``<menu>``,
``<key>`` and ``<code>`` (every other element is transparent) with ``&``, ``<`` and ``>`` of the
text escaped, so the tagged copy of a pair parses as XML.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator
from xml.sax.saxutils import escape

INLINE_TAGS = ("link", "em", "menu", "key", "code")
MALLARD_NS = "{http://projectmallard.org/1.0/}"


@dataclass(frozen=True)
class Run:
    """Text under the inline tags around it, outermost first."""

    text: str
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class Block:
    """One translatable block of a page: ``key`` is its id (LibreOffice) or its element path from
    the page root ("page/section/steps/item/p"), which pairs it with the German block."""

    key: str
    runs: tuple[Run, ...]

    @property
    def plain(self) -> str:
        return "".join(run.text for run in self.runs)

    @property
    def tagged(self) -> str:
        return render(self.runs)


@dataclass(frozen=True)
class Dialect:
    """How one markup language marks blocks, inline markup and what is not text."""

    name: str
    blocks: frozenset[str]  # local names of block elements
    inline: Callable[[object], str | None]  # element -> one of INLINE_TAGS, or None: transparent
    skip: Callable[[object], bool]  # element (with all it holds) is not translatable text
    keyed_by_id: bool = False  # blocks are paired by their id attribute, not by position
    block_classes: frozenset[str] = frozenset()  # classes that make any element a block (Publican's div.para)
    joiners: tuple[tuple[str, str], ...] = ()  # (element, text shown between its child elements)
    xml: bool = False  # parsed as XML (Mallard), not HTML


def _local(element) -> str:
    tag = element.tag if isinstance(element.tag, str) else ""
    return tag.rsplit("}", 1)[-1]


def _classes(element) -> set[str]:
    return set((element.get("class") or "").split())


# --- LibreOffice help (XHTML written by help2.xsl: every paragraph, heading and cell has an id) ---

_LIBREOFFICE_INLINE = {"menuitem": "menu", "keycode": "key", "emph": "em", "literal": "code", "input": "code"}


def _libreoffice_inline(element) -> str | None:
    if _local(element) == "a" and element.get("href"):
        return "link"
    return next((_LIBREOFFICE_INLINE[c] for c in _classes(element) if c in _LIBREOFFICE_INLINE), None)


def _libreoffice_skip(element) -> bool:
    # A switch holds hidden variants, one per system or module (class MAC: Command for Ctrl;
    # class CALC: ...) and a hidden default without a class, which is what the page shows.
    hidden_variant = element.get("hidden") is not None and bool(_classes(element))
    return (_local(element) in ("script", "style", "header", "aside", "pre") or hidden_variant
            or "debug" in _classes(element))


# --- Mallard (GNOME help) ---

_MALLARD_INLINE = {"link": "link", "em": "em", "gui": "menu", "guiseq": "menu", "key": "key", "keyseq": "key",
                   "code": "code", "cmd": "code", "file": "code", "sys": "code", "input": "code", "output": "code",
                   "var": "code"}
_MALLARD_SKIP = {"credit", "license", "revision", "link", "screen", "media", "comment", "include"}


def _mallard_inline(element) -> str | None:
    return _MALLARD_INLINE.get(_local(element))


def _mallard_skip(element) -> bool:
    name, parent = _local(element), element.getparent()
    in_info = parent is not None and _local(parent) == "info"
    if name in _MALLARD_SKIP and (in_info or name != "link"):  # info/link: topic links, not text
        return True
    if in_info and name == "title" and element.get("type") in ("sort", "link", "text"):
        return True
    # a code element that is a block of its own (not inside a paragraph) is a listing
    return name == "code" and parent is not None and _local(parent) not in MALLARD_BLOCKS


MALLARD_BLOCKS = frozenset({"title", "subtitle", "desc", "p", "td", "th", "cite"})

# --- HTML written by DocBook (Debian's guides) and Sphinx (developers-reference) ---

_HTML_INLINE_CLASSES = {
    "guimenu": "menu", "guimenuitem": "menu", "guisubmenu": "menu", "guilabel": "menu", "guibutton": "menu",
    "menuchoice": "menu", "keycap": "key", "keycombo": "key", "keysym": "key", "emphasis": "em",
    "command": "code", "filename": "code", "literal": "code", "package": "code", "systemitem": "code",
    "option": "code", "replaceable": "code", "userinput": "code", "computeroutput": "code", "pkg": "code",
}
_HTML_INLINE_TAGS = {"em": "em", "i": "em", "strong": "em", "b": "em", "kbd": "key", "code": "code", "tt": "code"}
_HTML_SKIP_CLASSES = {"toc", "navheader", "navfooter", "sphinxsidebar", "related", "footer", "headerlink",
                      "list-of-tables", "list-of-figures", "list-of-examples", "highlight", "sphinxsidebarwrapper",
                      "searchbox", "docnav"}


def _html_inline(element) -> str | None:
    name = _local(element)
    if name == "a" and element.get("href"):
        return "link"
    found = next((_HTML_INLINE_CLASSES[c] for c in sorted(_classes(element)) if c in _HTML_INLINE_CLASSES), None)
    return found or _HTML_INLINE_TAGS.get(name)


def _html_skip(element) -> bool:
    return (_local(element) in ("script", "style", "pre", "nav", "head") or element.get("hidden") is not None
            or bool(_classes(element) & _HTML_SKIP_CLASSES))


HTML_BLOCKS = frozenset({"p", "h1", "h2", "h3", "h4", "h5", "h6", "li", "td", "th", "dt", "dd", "caption",
                         "figcaption"})

LIBREOFFICE = Dialect("libreoffice", HTML_BLOCKS, _libreoffice_inline, _libreoffice_skip, keyed_by_id=True)
# Mallard shows <keyseq><key>Ctrl</key><key>S</key></keyseq> as Ctrl+S and a guiseq with arrows.
MALLARD = Dialect("mallard", MALLARD_BLOCKS, _mallard_inline, _mallard_skip, xml=True,
                  joiners=(("keyseq", "+"), ("guiseq", " ▸ ")))
GUIDE_HTML = Dialect("guide-html", HTML_BLOCKS, _html_inline, _html_skip, block_classes=frozenset({"para"}))


def parse_page(path: Path, dialect: Dialect):
    """The root element of a page file."""
    from lxml import etree, html  # the core install (worker, client) does without lxml

    if dialect.xml:
        parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True, remove_comments=True)
        return etree.parse(str(path), parser).getroot()
    return html.parse(str(path), html.HTMLParser(encoding="utf-8", remove_comments=True)).getroot()


def page_blocks(root, dialect: Dialect) -> list[Block]:
    """The blocks of a page in document order; a block nested in another (a paragraph in a table
    cell) is a block of its own and not part of the outer one's text. Blocks without a letter or
    digit are left out; by-id dialects keep only blocks with an id."""
    found: list[Block] = []
    _walk(root, dialect, (), found)
    return found


def _walk(element, dialect: Dialect, path: tuple[str, ...], found: list[Block]) -> None:
    for child in element:
        if not isinstance(child.tag, str) or dialect.skip(child):
            continue
        name = _local(child)
        child_path = (*path, name)
        if _is_block(child, dialect):
            runs = _runs(child, dialect)
            key = child.get("id", "") if dialect.keyed_by_id else "/".join(child_path)
            if key and any(ch.isalnum() for run in runs for ch in run.text):
                found.append(Block(key, runs))
        _walk(child, dialect, child_path, found)


def _is_block(element, dialect: Dialect) -> bool:
    return _local(element) in dialect.blocks or bool(_classes(element) & dialect.block_classes)


def _runs(block, dialect: Dialect) -> tuple[Run, ...]:
    """The runs of a block, each run of whitespace one space (kept in the run where it begins),
    the ends stripped and neighbours with the same tags merged."""
    raw: list[Run] = []
    _collect(block, dialect, (), raw, top=True)
    runs: list[Run] = []
    for run in raw:
        words = run.text.split()
        after_space = bool(runs) and runs[-1].text.endswith(" ")
        if not words:
            if run.text and runs and not after_space:
                runs[-1] = Run(runs[-1].text + " ", runs[-1].tags)
            continue
        text = (" " if run.text[0].isspace() and runs and not after_space else "") + " ".join(words)
        runs.append(Run(text + (" " if run.text[-1].isspace() else ""), run.tags))
    if runs:
        runs[-1] = Run(runs[-1].text.rstrip(), runs[-1].tags)
    return tuple(_merged(runs))


def _collect(element, dialect: Dialect, tags: tuple[str, ...], out: list[Run], top: bool = False) -> None:
    if not top:
        tag = dialect.inline(element)
        if tag is not None and tag not in tags:
            tags = (*tags, tag)
    joiner = dict(dialect.joiners).get(_local(element))
    if element.text and not (joiner and element.text.isspace()):
        out.append(Run(element.text, tags))
    first = True
    for child in element:
        if isinstance(child.tag, str) and not dialect.skip(child) and not _is_block(child, dialect):
            if joiner and not first:
                out.append(Run(joiner, tags))
            first = False
            _collect(child, dialect, tags, out)
        if child.tail and not (joiner and child.tail.isspace()):
            out.append(Run(child.tail, tags))


def _merged(runs: list[Run]) -> Iterator[Run]:
    previous: Run | None = None
    for run in runs:
        if previous is not None and previous.tags == run.tags:
            previous = Run(previous.text + run.text, run.tags)
            continue
        if previous is not None:
            yield previous
        previous = run
    if previous is not None:
        yield previous


def render(runs: tuple[Run, ...] | list[Run]) -> str:
    """Runs as tagged text: an inline tag opens where a run gains it and closes where one loses it
    (a tag closes and reopens around a change below it)."""
    out: list[str] = []
    open_tags: list[str] = []
    for run in runs:
        common = 0
        while common < min(len(open_tags), len(run.tags)) and open_tags[common] == run.tags[common]:
            common += 1
        while len(open_tags) > common:
            out.append(f"</{open_tags.pop()}>")
        for tag in run.tags[common:]:
            out.append(f"<{tag}>")
            open_tags.append(tag)
        out.append(escape(run.text))
    out.extend(f"</{tag}>" for tag in reversed(open_tags))
    return "".join(out)


def cut(runs: tuple[Run, ...], start: int, end: int) -> tuple[Run, ...]:
    """The runs covering plain-text characters ``start:end`` (a sentence of the block), with the
    ends stripped."""
    out: list[Run] = []
    position = 0
    for run in runs:
        lo, hi = max(start, position), min(end, position + len(run.text))
        if lo < hi:
            out.append(Run(run.text[lo - position:hi - position], run.tags))
        position += len(run.text)
    while out and not out[0].text.strip():
        out.pop(0)
    while out and not out[-1].text.strip():
        out.pop()
    if out:
        out[0] = Run(out[0].text.lstrip(), out[0].tags)
        out[-1] = Run(out[-1].text.rstrip(), out[-1].tags)
    return tuple(out)

