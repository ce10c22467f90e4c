"""Markdown: paragraphs, headings and table cells read into units with their inline markup; code,
front matter, HTML blocks and every marker outside the text kept byte for byte; translated text
escaped so that the output parses to the same document structure with the translation's words.
MkDocs pages: admonitions keep their keyword and classes (title and body translated), code spans
keep the punctuation around them, footnote labels stay; checked with fixed translations and
through the shipped ``models/en-de`` bundle."""
from __future__ import annotations

import json
import random
import re

import pytest
from markdown_it import MarkdownIt

from worker.formats import FormatError, Tag, format_of, parse
from worker.formats.markdown import _parser
from worker.formats.markup import transfer

from .conftest import REPO_ROOT, run_nmt

SHIPPED = REPO_ROOT / "models" / "en-de"

README = """---
title: Demo
tags: [a, b]
---
# Getting *started* #

Install the **command line [tool](https://example.com/docs "The docs")** first and run `nmt translate  --help`
to see the options.\\
Then read the <b>guide</b> at <https://example.com> and the [FAQ][faq] or [notes].

![Logo](img/logo.png)

> Quoted text that goes
> over two lines.

- A list item with _emphasis_
  continued here.
- Second ~~old~~ item and more \\*stars\\*.

1. First step.
2. Second step with `code`.

```bash
pip install nmt   # not translated
```

    indented code stays

<div align="center">
  <img src="x.png">
</div>

| Name | Meaning |
|------|---------|
| beam | The beam size |

Setext heading
==============

***

[faq]: https://example.com/faq "FAQ"
[notes]: https://example.com/notes
"""


def words(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]


def in_order(parsed, translations):
    """Each unit's words aligned to the translation's words one to one, in order."""
    return [list(zip(words(u.text), words(t))) for u, t in zip(parsed.units, translations)]


def structure(text: str):
    """The document as markdown-it sees it: block tokens, and per inline run its markup tokens and
    the words of its text."""
    md = MarkdownIt("commonmark").enable(["table", "strikethrough"])
    from mdit_py_plugins.front_matter import front_matter_plugin
    blocks, inline = [], []
    for token in md.use(front_matter_plugin).parse(text):
        blocks.append((token.type, token.content if token.type in ("fence", "code_block", "html_block", "front_matter")
                       else token.tag))
        if token.type == "inline":
            kids, shown, autolink = token.children or [], [], False
            for kid in kids:  # an autolink's text is its URL, markup rather than text
                autolink = (autolink or (kid.type == "link_open" and kid.markup == "autolink")) and kid.type != "link_close"
                if kid.type in ("text", "softbreak", "hardbreak") and not autolink:
                    shown.append(kid.content if kid.type == "text" else " ")
            inline.append(([(k.type, k.attrs.get("href"), k.content if k.type == "code_inline" else "") for k in kids
                            if k.type not in ("text", "softbreak")], "".join(shown).split()))
    return blocks, inline


def test_units_and_an_identity_render_keeps_every_byte():
    parsed = parse("markdown", README)
    assert [u.text for u in parsed.units] == [
        "Getting started",
        "Install the command line tool first and run to see the options. Then read the guide at and the FAQ or notes.",
        "Quoted text that goes over two lines.", "A list item with emphasis continued here.",
        "Second old item and more *stars*.", "First step.", "Second step with.", "Name", "Meaning", "beam",
        "The beam size", "Setext heading"]
    assert [u.where for u in parsed.units][:3] == ["heading 1 (line 5)", "paragraph (line 7)", "paragraph (line 13)"]
    second = parsed.units[1]
    assert [(t.open, t.close, second.text[t.start:t.end]) for t in second.tags] == [
        ("**", "**", "command line tool"), ("[", '](https://example.com/docs "The docs")', "tool"),
        ("`nmt translate  --help`", "", ""), ("\\\n", "", ""), ("<b>", "", ""), ("</b>", "", ""),
        ("<https://example.com>", "", ""), ("[", "][faq]", "FAQ"), ("[", "][notes]", "notes")]
    translations = [u.text for u in parsed.units]
    assert parsed.render(translations, in_order(parsed, translations)) == README
    assert parsed.notes == {}


def test_translated_text_is_escaped_and_the_document_keeps_its_structure():
    parsed = parse("markdown", README)
    # text that would be markup if written as it is: emphasis, links, headings, list items, pipes
    tricky = ["# 1. *not* a [link] - _x_ | y ~~z~~ <b> &amp; \\", "- 2) + > = ~ ` #tag"]
    translations = [f"{tricky[i % 2]} {u.text}" if i % 3 else f"{u.text} {tricky[i % 2]}" for i, u in enumerate(parsed.units)]
    # each unit's words aligned to their own copy in the translation, past the tricky prefix if any
    links = [list(zip(words(u.text), words(t)[len(words(t)) - len(words(u.text)):] if t.endswith(u.text) else words(t)))
             for u, t in zip(parsed.units, translations)]
    out = parsed.render(translations, links)
    source_blocks, source_inline = structure(README)
    out_blocks, out_inline = structure(out)
    assert out_blocks == source_blocks  # same blocks; code, HTML blocks and front matter byte for byte
    translated = [i for i, (_, text_words) in enumerate(source_inline) if text_words]  # not the image's paragraph
    assert len(translated) == len(translations)
    for i, translation in zip(translated, translations):
        (source_markup, _), (markup, text_words) = source_inline[i], out_inline[i]
        assert markup == source_markup  # every link (same URL), emphasis, code span, break, in the same order
        if translation.startswith("Second step with."):  # "with `code`.": the code span, last, brings its period
            translation += " ."
        assert " ".join(text_words) == " ".join(translation.split())
    for verbatim in ("---\ntitle: Demo\ntags: [a, b]\n---\n", "```bash\npip install nmt   # not translated\n```",
                     "    indented code stays", '<div align="center">\n  <img src="x.png">\n</div>',
                     '[faq]: https://example.com/faq "FAQ"', "|------|---------|", "\n***\n"):
        assert verbatim in out
    # a paragraph keeps its number of lines, continuation markers included
    assert re.search(r"\n> .+\n> .+\n", out)


def test_markup_follows_aligned_words_and_punctuation_stays_outside_as_in_the_source():
    source = "Read the notes."
    tags = [Tag("[", "](https://x.org)", 9, 14)]  # [notes](https://x.org).
    translation = "Lies die Hinweise."
    s, t = words(source), words(translation)
    pieces, notes = transfer(source, tags, translation, [(s[0], t[0]), (s[1], t[1]), (s[2], t[2])])
    assert "".join(p.text for p in pieces) == "Lies die [Hinweise](https://x.org)." and notes == []
    parsed = parse("markdown", "Some **bold** and [a link](u) here.\n")
    translation = "Hier ein Link und etwas Fettes."
    s, t = words(parsed.units[0].text), words(translation)
    # Some -> etwas, bold -> Fettes., and -> und, a -> ein, link -> Link, here. -> Hier
    links = [(s[0], t[4]), (s[1], t[5]), (s[2], t[3]), (s[3], t[1]), (s[4], t[2]), (s[5], t[0])]
    assert parsed.render([translation], [links]) == "Hier [ein Link](u) und etwas **Fettes**.\n"


def test_random_inline_markup_comes_back_whole_and_parses_the_same():
    rng = random.Random(11)
    markups = [("*", "*"), ("**", "**"), ("~~", "~~"), ("[", "](https://e.x/{})"), ("_", "_")]
    vocabulary = ["Haus", "*", "_a_", "#", "-", "1.", "[x]", "|", "<i>", "\\", "~", "wort", "&amp;", "!", "`"]
    for trial in range(400):
        n = rng.randint(2, 7)
        source_words = [f"w{i}" for i in range(n)]
        out_words = list(source_words)
        for _ in range(rng.randint(0, 2)):  # non-overlapping spans, one level deep
            i = rng.randrange(n)
            j = rng.randint(i, min(n - 1, i + 2))
            if any(not re.fullmatch(r"w\d+", w) for w in out_words[i:j + 1]):
                continue
            opening, closing = rng.choice(markups)
            out_words[i] = opening + out_words[i]
            out_words[j] = out_words[j] + closing.format(trial)
        if rng.random() < 0.3:
            out_words.insert(rng.randrange(len(out_words) + 1), "`code  x`")
        source = "## " + " ".join(out_words) + "\n" if rng.random() < 0.3 else \
            " ".join(out_words[:n // 2]) + "\n" + " ".join(out_words[n // 2:]) + "\n"  # a heading, or two lines
        parsed = parse("markdown", source)
        if not parsed.units:
            continue
        unit = parsed.units[0]
        translation = " ".join(rng.choice(vocabulary) for _ in range(rng.randint(1, 9)))
        links = [(s, t) for s in words(unit.text) for t in words(translation) if rng.random() < 0.3]
        out = parsed.render([translation], [links])
        (source_blocks, source_inline), (out_blocks, out_inline) = structure(source), structure(out)
        assert out_blocks == source_blocks, (source, translation, out)
        assert sorted(out_inline[0][0]) == sorted(source_inline[0][0]), (source, translation, out)
        shown = " ".join(out_inline[0][1])
        assert shown.split() == translation.split(), (source, translation, out)


def test_markdown_is_chosen_by_extension_and_bad_input_is_a_format_error(tmp_path):
    assert format_of("README.md") == format_of("notes.markdown") == "markdown"
    with pytest.raises(FormatError, match="NUL"):
        parse("markdown", "text\x00more")
    assert parse("markdown", "").units == [] and parse("markdown", "```\nonly code\n```\n").units == []


def test_nmt_translate_writes_a_markdown_file_that_parses_the_same(tiny_bundle, tmp_path):
    (tmp_path / "README.md").write_text(README, encoding="utf-8")
    done = run_nmt("translate", "--bundle", str(tiny_bundle), "--device", "cpu", str(tmp_path / "README.md"),
                   "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    out = (tmp_path / "out" / "README.de.md").read_text(encoding="utf-8")
    (source_blocks, source_inline), (out_blocks, out_inline) = structure(README), structure(out)
    assert out_blocks == source_blocks
    assert [sorted(m) for m, _ in out_inline] == [sorted(m) for m, _ in source_inline]  # links, code spans kept
    payload = json.loads((tmp_path / "out" / "README.de.json").read_text(encoding="utf-8"))
    assert payload["format"] == "markdown" and len(payload["units"]) == 12


# -- MkDocs pages: admonitions, code spans with their punctuation, footnotes ---------------------------
ADMONITIONS = """# Setup

!!! info "Note"
    Set the option first.

    - One item
    - Two items

    ```yaml
    nav: []
    ```

        indented code in the note

???+ tip
    Collapsible and open.

??? danger highlight "Do not do this"
    Closed by default.

!!! warning ""
    No title here.

!!! WARNING !!! Read this first.
"""
MKDOCS_PAGE = """# Configuration

The settings are read from `mkdocs.yml` when the site is built.

!!! info "Note"
    Footnotes are written as definitions (`[^1]: text`) or on the next line.

    - Keep each label short.
    - Use `[^label]` in the text.

    ```yaml
    markdown_extensions:
      - footnotes
    ```

???+ tip
    Collapsible blocks are open when they are written as `???+`.

!!! warning ""
    This section has no title.

## Options

**`UNIQUE_IDS`**: Sets the identifiers of every heading.

Run `mkdocs build`. Then open the page in a browser[^1].

[^1]: The notes are listed at the end of the page.
"""


def upper_render(parsed) -> str:
    """The file with each unit's text in capitals, each word aligned to itself."""
    return parsed.render([u.text.upper() for u in parsed.units],
                         [list(zip(words(u.text), words(u.text))) for u in parsed.units])


def blocks(text: str) -> list[tuple[str, str]]:
    """Block tokens as MkDocs' reading gives them (admonitions, footnotes): type, and what is kept
    verbatim: an admonition's marker and classes, a fence's or code block's content."""
    out = []
    for token in _parser().parse(text):
        kept = token.content if token.type in ("fence", "code_block") else ""
        if token.type == "admonition_open":
            kept = token.markup + token.info.split('"')[0]
        out.append((token.type, kept))
    return out


def code_spans(text: str) -> list[str]:
    return [child.content for token in _parser().parse(text) for child in token.children or []
            if child.type == "code_inline"]


def glued_code_spans(text: str) -> list[str]:
    """Each code span of ``text`` with the punctuation and markup glued to it (``(`x`)``, ``**`x`**:``)."""
    return [m.group() for m in re.finditer(r"\S*?`[^`\n]+`\S*", text) if not m.group().startswith("```")]


def assert_mkdocs_page_kept(source: str, out: str) -> None:
    assert blocks(out) == blocks(source)  # admonition keywords and classes, code blocks, lists, footnotes
    assert code_spans(out) == code_spans(source)  # the same code, in the same order
    for glued in glued_code_spans(source):  # brackets, colon, period around each code span; spaces outside
        assert re.search(r"(^|\s)" + re.escape(glued) + r"(\s|$)", out, re.M), (glued, out)
    assert [line[:line.index(" ") + 1] for line in out.splitlines() if line.startswith(("!!!", "???"))] == \
        [line[:line.index(" ") + 1] for line in source.splitlines() if line.startswith(("!!!", "???"))]
    assert re.findall(r"\[\^\w+\]:?", out) == re.findall(r"\[\^\w+\]:?", source)  # footnote labels


def test_plain_commonmark_would_read_an_admonition_body_as_code_mkdocs_reading_does_not():
    plain = [t.type for t in MarkdownIt("commonmark").parse(ADMONITIONS)]
    assert "code_block" in plain[:plain.index("heading_close") + 8]  # the list after the note's first paragraph
    kinds = [kind for kind, _ in blocks(ADMONITIONS)]
    assert kinds.count("admonition_open") == 4 and kinds.count("bullet_list_open") == 1
    assert [kept for kind, kept in blocks(ADMONITIONS) if kind == "code_block"] == ["indented code in the note\n"]


def test_admonitions_keep_keyword_and_classes_and_translate_a_quoted_title_and_the_body():
    parsed = parse("markdown", ADMONITIONS)
    assert [(u.where, u.text) for u in parsed.units] == [
        ("heading 1 (line 1)", "Setup"), ("admonition title (line 3)", "Note"),
        ("paragraph (line 4)", "Set the option first."), ("paragraph (line 6)", "One item"),
        ("paragraph (line 7)", "Two items"), ("paragraph (line 16)", "Collapsible and open."),
        ("admonition title (line 18)", "Do not do this"), ("paragraph (line 19)", "Closed by default."),
        ("paragraph (line 22)", "No title here."),
        ("paragraph (line 24)", "!!! WARNING !!! Read this first.")]  # not an admonition for MkDocs either
    out = upper_render(parsed)
    assert out == ADMONITIONS.replace("Setup", "SETUP").replace('"Note"', '"NOTE"') \
        .replace("Set the option first.", "SET THE OPTION FIRST.").replace("One item", "ONE ITEM") \
        .replace("Two items", "TWO ITEMS").replace("Collapsible and open.", "COLLAPSIBLE AND OPEN.") \
        .replace('"Do not do this"', '"DO NOT DO THIS"').replace("Closed by default.", "CLOSED BY DEFAULT.") \
        .replace("No title here.", "NO TITLE HERE.").replace("Read this first.", "READ THIS FIRST.")
    assert blocks(out) == blocks(ADMONITIONS)


@pytest.mark.parametrize("translation, written", [
    ('Hinweis: "wichtig"', '!!! info "Hinweis: "wichtig""'),  # the title ends at the last quote
    ("Ein *Stern* [x]", '!!! info "Ein \\*Stern\\* \\[x\\]"'),
])
def test_an_admonition_title_is_written_between_ascii_quotes_and_escaped(translation, written):
    source = '!!! info "Note"\n    Body text.\n'
    parsed = parse("markdown", source)
    out = parsed.render([translation, "Text."], [[], [((0, 5), (0, 5))]])
    assert out == written + "\n    Text.\n"
    assert blocks(out) == blocks(source)


@pytest.mark.parametrize("translation, escaped", [
    ("!!! tip Zeile eins", True), ("???+ note zwei", True), ('??? a b "c"', True),
    ("!!! tip Zeile eins.", False), ("!!! Achtung !!!", False),  # not admonitions for MkDocs: kept as they are
])
def test_a_translated_line_that_would_open_an_admonition_is_escaped(translation, escaped):
    source = "A line of a paragraph.\n"
    out = parse("markdown", source).render([translation], [[]])
    assert out == "\\" * escaped + translation + "\n" and blocks(out) == blocks(source)


@pytest.mark.parametrize("source, text, translation, pairs, expected", [
    # in its brackets (was "()`[^1]: text`oder": the brackets were words the model kept where it liked)
    ("Footnotes are written as definitions (`[^1]: text`) or on the next line.\n",
     "Footnotes are written as definitions or on the next line.",
     "Fußnoten werden als Definitionen oder in der nächsten Zeile geschrieben.",
     [(0, 0), (1, 1), (2, 9), (3, 2), (4, 3), (5, 4), (6, 5), (7, 6), (8, 7), (9, 8)],
     "Fußnoten werden als Definitionen (`[^1]: text`) oder in der nächsten Zeile geschrieben.\n"),
    # a term and its colon (was "**`UNIQUE_IDS`**Legt": the unit began ": Sets", and lost the colon)
    ("**`UNIQUE_IDS`**: Sets the identifiers of every heading.\n", "Sets the identifiers of every heading.",
     "Legt die Bezeichner jeder Überschrift fest.", [(0, 0), (0, 5), (1, 1), (2, 2), (4, 3), (5, 4)],
     "**`UNIQUE_IDS`**: Legt die Bezeichner jeder Überschrift fest.\n"),
    # the end of a sentence stays after its code: the model sees "Run." (was "aus. Öffnen Sie `x`dann")
    ("Run `mkdocs build`. Then open the page.\n", "Run. Then open the page.",
     "Führen Sie es aus. Öffnen Sie dann die Seite.", [(0, 0), (0, 3), (1, 6), (2, 4), (3, 7), (4, 8)],
     "Führen Sie es aus `mkdocs build`. Öffnen Sie dann die Seite.\n"),
    ("The settings live in `mkdocs.yml`.\n", "The settings live in.", "Die Einstellungen stehen in.",
     [(0, 0), (1, 1), (2, 2), (3, 3)], "Die Einstellungen stehen in `mkdocs.yml`.\n"),
    ("If you run `make`, the build starts.\n", "If you run, the build starts.",
     "Wenn Sie ausführen, startet der Build.", [(0, 0), (1, 1), (2, 2), (3, 4), (4, 5), (5, 3)],
     "Wenn Sie ausführen `make`, startet der Build.\n"),
    # a closing bracket after the code: the model's own is dropped for the one the code brings
    ("Use it (see `x`), then stop.\n", "Use it (see), then stop.", "Nutze es (siehe), dann halte an.",
     [(0, 0), (1, 1), (2, 2), (3, 3), (4, 4), (4, 5)], "Nutze es (siehe `x`), dann halte an.\n"),
    # code spans that begin a unit take the punctuation before its first word along
    ("`x`, `y` and more.\n", "and more.", "und mehr.", [(0, 0), (1, 1)], "`x`, `y` und mehr.\n"),
])
def test_code_spans_keep_the_punctuation_that_binds_them_to_their_place(source, text, translation, pairs, expected):
    parsed = parse("markdown", source)
    unit = parsed.units[0]
    assert unit.text == text and "`" not in unit.text  # code never reaches the model
    s, t = words(unit.text), words(translation)
    out = parsed.render([translation], [[(s[i], t[j]) for i, j in pairs]])
    assert out == expected
    assert code_spans(out) == code_spans(source) and blocks(out) == blocks(source)


def test_footnote_references_keep_their_label_and_definitions_are_translated():
    source = "Open the page in a browser[^1] or twice[^note].\n\n[^1]: The notes are listed.\n[^note]: Another one.\n"
    parsed = parse("markdown", source)
    assert [(u.where, u.text) for u in parsed.units] == [
        ("paragraph (line 1)", "Open the page in a browser or twice."), ("footnote (line 3)", "The notes are listed."),
        ("footnote (line 4)", "Another one.")]
    out = upper_render(parsed)
    assert out == ("OPEN THE PAGE IN A BROWSER[^1] OR TWICE[^note].\n\n[^1]: THE NOTES ARE LISTED.\n"
                   "[^note]: ANOTHER ONE.\n")
    assert blocks(out) == blocks(source)


def test_an_mkdocs_page_with_fixed_translations_keeps_its_markup():
    parsed = parse("markdown", MKDOCS_PAGE)
    assert not any("`" in u.text or "[^" in u.text for u in parsed.units)
    assert sum(u.where.startswith("admonition title") for u in parsed.units) == 1  # "Note"; "tip" is a class
    assert_mkdocs_page_kept(MKDOCS_PAGE, upper_render(parsed))


@pytest.mark.skipif(not (SHIPPED / "manifest.json").exists(), reason="models/en-de not present")
def test_nmt_translate_keeps_an_mkdocs_page_whole_through_the_shipped_model(tmp_path):
    (tmp_path / "index.md").write_text(MKDOCS_PAGE, encoding="utf-8")
    done = run_nmt("translate", "--bundle", str(SHIPPED), "--device", "cpu", str(tmp_path / "index.md"),
                   "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    out = (tmp_path / "out" / "index.de.md").read_text(encoding="utf-8")
    assert_mkdocs_page_kept(MKDOCS_PAGE, out)
    assert out.count('!!! info "') == 1 and '!!! warning ""\n' in out and "\n???+ tip\n" in out
    payload = json.loads((tmp_path / "out" / "index.de.json").read_text(encoding="utf-8"))
    sources = " ".join(unit["source"] for unit in payload["units"])
    assert not any(code in sources for code in code_spans(MKDOCS_PAGE))  # code never reaches the model
    translations = [unit["translation"] for unit in payload["units"]]
    assert translations[[u["source"] for u in payload["units"]].index("Note")] in out  # the title, translated
