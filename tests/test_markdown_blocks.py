"""Markdown: pymdown-extensions blocks (``/// details | Summary``, indented YAML options, a Markdown
body, a closing ``///``). The slashes, the block's name, its options and its closing line are copied
byte for byte; the text after ``|`` is a unit (``block title``) unless it is no text (an ``html``
block's tag, a caption's number); the body is read as Markdown, nested blocks included (with more
slashes, or with as many). Checked on the parsed units (what goes to the model, what is copied),
with fixed translations, and through ``nmt translate`` with the shipped ``models/en-de`` bundle,
whose output must render (Python-Markdown with pymdownx, where installed) to the same elements."""
from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from worker.formats import parse
from worker.formats.markdown import _parser

from .conftest import REPO_ROOT, run_nmt
from .test_markdown_format import ADMONITIONS, MKDOCS_PAGE, README

SHIPPED = REPO_ROOT / "models" / "en-de"

BLOCKS = """# Settings

/// details | Why is the option needed?
    type: warning
    open: true

Set the option before the first run.

- Keep the value short.
- Restart the server afterwards.

```yaml
/// note | not a block in code
retries: 3
```
///

/// tab | First tab
/// note | Inner note
Read this first.
///
The first tab ends here.
///

//// admonition | Outer box
    type: tip

/// html | div.box
Text inside the box.
///
////

/// html | pre
raw text that stays
///

Read the table below.

/// caption | < ^1
The results of the test.
///

/// define
Apple

- A fruit that grows on trees.
///
"""
# the lines that stay as they are: (line number, text), an opening line up to its title
KEPT = [(3, "/// details | "), (4, "    type: warning"), (5, "    open: true"), (13, "/// note | not a block in code"),
        (16, "///"), (18, "/// tab | "), (19, "/// note | "), (21, "///"), (23, "///"),
        (25, "//// admonition | "), (26, "    type: tip"), (28, "/// html | div.box"), (30, "///"), (31, "////"),
        (33, "/// html | pre"), (34, "raw text that stays"), (35, "///"), (39, "/// caption | < ^1"), (41, "///"),
        (43, "/// define"), (47, "///")]
UNITS = [("heading 1 (line 1)", "Settings"), ("block title (line 3)", "Why is the option needed?"),
         ("paragraph (line 7)", "Set the option before the first run."),
         ("paragraph (line 9)", "Keep the value short."),
         ("paragraph (line 10)", "Restart the server afterwards."), ("block title (line 18)", "First tab"),
         ("block title (line 19)", "Inner note"), ("paragraph (line 20)", "Read this first."),
         ("paragraph (line 22)", "The first tab ends here."), ("block title (line 25)", "Outer box"),
         ("paragraph (line 29)", "Text inside the box."), ("paragraph (line 37)", "Read the table below."),
         ("paragraph (line 40)", "The results of the test."), ("paragraph (line 44)", "Apple"),
         ("paragraph (line 46)", "A fruit that grows on trees.")]
_OPENING = re.compile(r"^([ >]*)(/{3,}) *([\w-]+) *(?:\| *(.*?) *)?$")


def words(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]


def upper_render(parsed) -> str:
    """The file with each unit's text in capitals, each word aligned to itself."""
    return parsed.render([u.text.upper() for u in parsed.units],
                         [list(zip(words(u.text), words(u.text))) for u in parsed.units])


def kept_lines(text: str) -> list[tuple[int, str]]:
    """The lines of the source's ``KEPT`` numbers in ``text``, an opening line with a title cut after its ``|``."""
    lines = text.split("\n")
    out = []
    for number, kept in KEPT:
        line = lines[number - 1]
        out.append((number, line[:len(kept)] if kept.endswith("| ") else line))
    return out


def block_tree(text: str) -> list[tuple]:
    """The document's block tokens as the reader sees them: type and nesting, a block's slashes,
    name, options and (where it is no text) argument, a fence's content."""
    out = []
    for token in _parser().parse(text):
        if token.type == "inline":
            continue
        kept = token.content if token.type in ("fence", "code_block") else ""
        if token.type == "pymdown_block_open":
            meta = token.meta
            kept = (token.markup, meta["name"], tuple(meta["options"]),
                    meta["argument"] if meta["name"] in ("html", "caption") else "")
        out.append((token.type, token.level, kept))
    return out


# -- what the model gets and what is copied ---------------------------------------------------------------
def test_block_keywords_and_options_are_copied_and_titles_and_bodies_are_units():
    parsed = parse("markdown", BLOCKS)
    assert [(u.where, u.text) for u in parsed.units] == UNITS
    for unit in parsed.units:  # no slashes, block names or options go to the model
        assert "///" not in unit.text and not re.search(r"\b(type|open|details|html|define|caption)\b", unit.text)
    out = upper_render(parsed)
    expected = BLOCKS
    for _, text in UNITS:
        expected = expected.replace(text, text.upper())
    assert out == expected
    assert kept_lines(out) == KEPT
    assert block_tree(out) == block_tree(BLOCKS)


def test_blocks_nest_with_more_slashes_and_with_as_many():
    opened = [(t.map, t.markup, t.info, t.level) for t in _parser().parse(BLOCKS) if t.type == "pymdown_block_open"]
    assert opened == [([2, 16], "///", "details", 0), ([17, 23], "///", "tab", 0), ([18, 21], "///", "note", 1),
                      ([24, 31], "////", "admonition", 0), ([27, 30], "///", "html", 1), ([32, 35], "///", "html", 0),
                      ([38, 41], "///", "caption", 0), ([42, 47], "///", "define", 0)]
    details = next(t for t in _parser().parse(BLOCKS) if t.type == "pymdown_block_open")
    assert details.meta == {"name": "details", "argument": "Why is the option needed?",
                            "options": ["    type: warning", "    open: true"]}
    # a closing line closes the innermost open block with as many slashes, and the blocks opened in it
    source = "//// tab | A\n/// note | B\nText.\n////\n\nAfter.\n"
    parsed = parse("markdown", source)
    assert [(u.where, u.text) for u in parsed.units] == [
        ("block title (line 1)", "A"), ("block title (line 2)", "B"), ("paragraph (line 3)", "Text."),
        ("paragraph (line 6)", "After.")]
    assert [(t.type, t.level) for t in _parser().parse(source)][-5:-2] == [
        ("pymdown_block_close", 1), ("pymdown_block_close", 0), ("paragraph_open", 0)]


@pytest.mark.parametrize("source, units, expected", [
    # inside a list item, an admonition and a quote, with CRLF line endings
    ("- Item one\n\n    /// note | In a list\n    Text in the note.\n    ///\n\n- Item two\n",
     ["Item one", "In a list", "Text in the note.", "Item two"],
     "- ITEM ONE\n\n    /// note | IN A LIST\n    TEXT IN THE NOTE.\n    ///\n\n- ITEM TWO\n"),
    ('!!! info "Note"\n    /// details | More\n        open: true\n\n    Hidden text.\n    ///\n',
     ["Note", "More", "Hidden text."],
     '!!! info "NOTE"\n    /// details | MORE\n        open: true\n\n    HIDDEN TEXT.\n    ///\n'),
    ("> /// warning | Careful\n> Quoted body.\n> ///\n", ["Careful", "Quoted body."],
     "> /// warning | CAREFUL\n> QUOTED BODY.\n> ///\n"),
    ("/// tip | Hint\r\n    open: true\r\n\r\nBody.\r\n///\r\n", ["Hint", "Body."],
     "/// tip | HINT\r\n    open: true\r\n\r\nBODY.\r\n///\r\n"),
    # options right before the body; no title, an empty one; a block that opens in a paragraph; one never closed
    ("/// note\n    type: x\nBody.\n///\n", ["Body."], "/// note\n    type: x\nBODY.\n///\n"),
    ("///note|\nBody.\n///\n", ["Body."], "///note|\nBODY.\n///\n"),
    ("A paragraph\n/// note | Title\nBody.\n///\nmore\n", ["A paragraph", "Title", "Body.", "more"],
     "A PARAGRAPH\n/// note | TITLE\nBODY.\n///\nMORE\n"),
    ("/// note | Open\nNever closed.\n\nMore text.\n", ["Open", "Never closed.", "More text."],
     "/// note | OPEN\nNEVER CLOSED.\n\nMORE TEXT.\n"),
    # a raw html body (by its tag or its markdown option) is copied
    ("/// html | div\n    markdown: raw\n\n<b>kept</b> text\n///\n", [],
     "/// html | div\n    markdown: raw\n\n<b>kept</b> text\n///\n"),
    ("/// html | script\nlet text = 1;\n///\n", [], "/// html | script\nlet text = 1;\n///\n"),
])
def test_blocks_anywhere_keep_their_lines(source, units, expected):
    parsed = parse("markdown", source)
    assert [u.text for u in parsed.units] == units
    assert upper_render(parsed) == expected


@pytest.mark.parametrize("translation, written", [
    ("/// Hinweis", "\\/// Hinweis"), ("//// tab | Zwei", "\\//// tab | Zwei"), ("///", "\\///"),
    ("/// Zeile eins.", "/// Zeile eins."), ("a /// b", "a /// b"),  # neither opens nor closes a block
])
def test_a_translated_line_that_would_open_or_close_a_block_is_escaped(translation, written):
    source = "/// note | Title\nA line of a paragraph.\n///\n"
    parsed = parse("markdown", source)
    out = parsed.render(["Titel", translation], [[], []])
    assert out == f"/// note | Titel\n{written}\n///\n"
    assert block_tree(out) == block_tree(source)


def test_a_file_without_blocks_is_read_as_before():
    plain = _parser()
    plain.block.ruler.disable("pymdown_block")
    slashes = "A C++ comment:\n/// Returns the value.\npath //server/share and a /// b\n\n/// Two words\n"
    for text in (README, ADMONITIONS, MKDOCS_PAGE, slashes):
        def seen(md):
            return [(t.type, t.map, t.content, t.info, t.markup, t.level) for t in md.parse(text)]
        assert seen(_parser()) == seen(plain)
    assert [u.text for u in parse("markdown", slashes).units] == [
        "A C++ comment: /// Returns the value. path //server/share and a /// b", "/// Two words"]


# -- through the shipped model --------------------------------------------------------------------------------
class _Elements(HTMLParser):
    """The block-level elements of rendered HTML, with their attributes, in order."""
    BLOCK = {"div", "details", "summary", "p", "ul", "ol", "li", "pre", "h1", "h2", "h3", "blockquote", "figure",
             "figcaption", "dl", "dt", "dd", "input", "label"}

    def __init__(self):
        super().__init__()
        self.seen = []

    def handle_starttag(self, tag, attrs):
        if tag in self.BLOCK:
            self.seen.append(("<", tag, tuple(sorted(attrs))))

    def handle_endtag(self, tag):
        if tag in self.BLOCK:
            self.seen.append((">", tag))


def rendered_elements(text: str) -> list[tuple]:
    import markdown
    html = markdown.markdown(text, extensions=["pymdownx.superfences", "pymdownx.blocks.details",
                                               "pymdownx.blocks.admonition", "pymdownx.blocks.tab",
                                               "pymdownx.blocks.html"])
    elements = _Elements()
    elements.feed(html)
    return elements.seen


@pytest.fixture(scope="module")
def translated(tmp_path_factory) -> str:
    if not (SHIPPED / "manifest.json").exists():
        pytest.skip("models/en-de not present")
    folder = tmp_path_factory.mktemp("blocks")
    (folder / "blocks.md").write_text(BLOCKS, encoding="utf-8")
    done = run_nmt("translate", "--bundle", str(SHIPPED), "--device", "cpu", str(folder / "blocks.md"),
                   "--out", str(folder / "out"))
    assert done.returncode == 0, done.stderr
    return (folder / "out" / "blocks.de.md").read_text(encoding="utf-8")


def test_nmt_translate_keeps_every_block_line_through_the_shipped_model(translated):
    assert translated != BLOCKS
    assert kept_lines(translated) == KEPT
    assert len(translated.split("\n")) == len(BLOCKS.split("\n"))
    assert block_tree(translated) == block_tree(BLOCKS)
    titles = [m.group(4) for m in map(_OPENING.match, translated.split("\n")) if m and m.group(4)]
    assert len(titles) == 8 and titles[0] != "Why is the option needed?"  # titles translated, html/caption kept


def test_nmt_translate_output_renders_to_the_same_elements(translated):
    try:
        import markdown  # noqa: F401
        import pymdownx  # noqa: F401
    except ImportError as missing:
        pytest.skip(f"Python-Markdown with pymdown-extensions is not installed in this venv ({missing.name})")
    source = rendered_elements(BLOCKS)
    assert ("<", "details", (("class", "warning"), ("open", "open"))) in source  # the blocks are read as blocks
    assert rendered_elements(translated) == source
