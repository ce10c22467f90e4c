"""Markdown: paragraphs, headings and table cells read into units with their inline markup; code,
front matter, HTML blocks and every marker outside the text kept byte for byte; translated text
escaped so that the output parses to the same document structure with the translation's words."""
from __future__ import annotations

import json
import random
import re

import pytest
from markdown_it import MarkdownIt

from worker.formats import FormatError, Tag, format_of, parse
from worker.formats.markup import transfer

from .conftest import run_nmt

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
        "Second old item and more *stars*.", "First step.", "Second step with .", "Name", "Meaning", "beam",
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
    out = parsed.render(translations, in_order(parsed, translations))
    source_blocks, source_inline = structure(README)
    out_blocks, out_inline = structure(out)
    assert out_blocks == source_blocks  # same blocks; code, HTML blocks and front matter byte for byte
    translated = [i for i, (_, text_words) in enumerate(source_inline) if text_words]  # not the image's paragraph
    assert len(translated) == len(translations)
    for i, translation in zip(translated, translations):
        (source_markup, _), (markup, text_words) = source_inline[i], out_inline[i]
        assert markup == source_markup  # every link (same URL), emphasis, code span, break, in the same order
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
