"""Markdown as people write it: reference links (full, collapsed, shortcut) with their
definitions, footnotes, links whose text is code, code spans joined by punctuation. Checked on
the Markdown files this machine's Debian packages install (READMEs, NEWS, the Node.js docs):
markdown-it-py reads the same blocks, links, code spans and references in every output."""
from __future__ import annotations

import gzip
import re
from collections import Counter
from pathlib import Path

import pytest

from worker.formats import parse
from worker.formats.markdown import _parser

REFERENCES = '''# Links

See [the guide][guide], the [Manual][] and [usage] for details,
or [`nmt translate`](https://example.com/t), [`docs`][guide] and [`x`].
Run `a`/`b`/`c`, then **[`ci`](https://ci.example.com/)**
before the release.

[guide]: https://example.com/guide "The Guide"
[manual]: https://example.com/manual
[usage]: #usage
[`x`]: https://example.com/x
'''
FOOTNOTES = '''A note here[^note] and a second one[^2] in the text.

[^note]: The footnote text is long
    and goes on.

    A second paragraph of it.
[^2]: A short one.
'''


def words(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]


def render(parsed, translate) -> str:
    return parsed.render([translate(u.text) for u in parsed.units],
                         [list(zip(words(u.text), words(u.text))) for u in parsed.units])


def inline_shape(text: str) -> tuple[list[str], Counter, int, int]:
    """Block token types, inline token types (text aside), empty links and references."""
    env: dict = {}
    tokens = _parser().parse(text, env)
    inline, empty = Counter(), 0
    for token in tokens:
        children = token.children or []
        for index, child in enumerate(children):
            if child.type not in ("text", "softbreak"):
                inline[child.type] += 1
            if child.type == "link_open" and index + 1 < len(children) and children[index + 1].type == "link_close":
                empty += 1
    return [t.type for t in tokens], inline, empty, len(env.get("references", {}))


def test_reference_links_keep_their_definitions_and_are_written_in_full_when_their_text_changes():
    parsed = parse("markdown", REFERENCES)
    same = render(parsed, lambda text: text)  # unchanged text: the same words and markup (lines may break elsewhere)
    assert same.split() == REFERENCES.split() and same.count("\n") == REFERENCES.count("\n")
    out = render(parsed, str.upper)
    assert "[THE GUIDE][guide]" in out and "[MANUAL][Manual]" in out and "[USAGE][usage]" in out
    assert "[`nmt translate`](https://example.com/t)" in out and "[`docs`][guide]" in out and "[`x`]" in out
    assert "`a`/`b`/`c`, THEN" in out and "**[`ci`](https://ci.example.com/)**\nBEFORE" in out
    assert out.endswith(REFERENCES[REFERENCES.index("[guide]:"):])  # the definitions, byte for byte
    assert inline_shape(out) == inline_shape(REFERENCES)


def test_footnotes_keep_their_labels_and_their_text_is_translated_in_place():
    parsed = parse("markdown", FOOTNOTES)
    assert [u.where for u in parsed.units] == ["paragraph (line 1)", "footnote (line 3)", "footnote (line 6)",
                                               "footnote (line 7)"]
    assert parsed.units[0].text == "A note here and a second one in the text."
    out = render(parsed, str.upper)
    assert out == ("A NOTE HERE[^note] AND A SECOND ONE[^2] IN THE TEXT.\n\n"
                   "[^note]: THE FOOTNOTE TEXT IS LONG\n    AND GOES ON.\n\n    A SECOND PARAGRAPH OF IT.\n"
                   "[^2]: A SHORT ONE.\n")
    assert inline_shape(out) == inline_shape(FOOTNOTES)


def _markdown_files() -> list[Path]:
    return sorted(p for p in Path("/usr/share/doc").rglob("*.md*")
                  if p.name.endswith((".md", ".md.gz")) and p.stat().st_size < 60_000)


def test_real_markdown_files_keep_their_links_code_and_references():
    files = _markdown_files()
    if len(files) < 5:
        pytest.skip("fewer than 5 Markdown files under /usr/share/doc")
    changed, units = [], 0
    for path in files[::4]:  # a quarter of them, spread over the packages
        data = path.read_bytes()
        text = (gzip.decompress(data) if path.suffix == ".gz" else data).decode("utf-8", "replace")
        parsed = parse("markdown", text)
        units += len(parsed.units)
        before, after = inline_shape(text), inline_shape(render(parsed, str.upper))
        kept = {kind: n for kind, n in before[1].items() if not kind.startswith(("em_", "strong_"))}
        if before[0] != after[0] or before[2:] != after[2:] or \
                {kind: after[1][kind] for kind in kept} != kept:
            changed.append(str(path))
    assert units > 500 and not changed, changed
