"""Property tests of the format writers through the placement layer: generated inline structures
(nesting, tags at the very start and end, adjacent and empty tags, self-closing codes, attributes
with entities, placeholders inside tags) with generated translations and word alignments (no model).
Every output parses, each unit keeps its inline codes (name, id, parent) exactly, and what lies
outside the units is unchanged. The default run tries a few examples per format; the ``slow``
test runs 1,000 generated documents per format, seeded."""
from __future__ import annotations

import random
import re
import xml.etree.ElementTree as ET
from collections import Counter
from html.parser import HTMLParser

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from worker.formats import parse, translate_parsed
from worker.formats.html import nesting_problem
from worker.text.segment import Alignment, DocumentResult, SegmentResult

from .test_markdown_format import structure

NS = "{urn:oasis:names:tc:xliff:document:1.2}"
SOURCE_WORDS = ["Programme", "runs", "%s", "{name}", "Index", "a&b", "<", "x>y", "libffi", "Up:", "[", "]",
                "%1$d", "“quoted”", "end."]
TARGET_WORDS = ["Haus", "„Haus", "(rot)", "Ende.", "%s", "{name}", "&", "<b>", "wort", "-", "1.", "*", "_a_", "[x]", "!"]


def _xml(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _text(rng: random.Random, escape) -> str:
    return escape(rng.choice(SOURCE_WORDS)) + rng.choice([" ", "", " ", "  "])


def _translation(rng: random.Random, words: int) -> str:
    count = rng.choice([0, 1, 2, words, words + 2, rng.randint(0, 2 * words + 1)])
    return " ".join(rng.choice(TARGET_WORDS) for _ in range(count))


def _links(rng: random.Random, source: str, translation: str):
    s = [m.span() for m in re.finditer(r"\S+", source)]
    t = [m.span() for m in re.finditer(r"\S+", translation)]
    share = rng.choice([0.0, 0.2, 0.5, 1.0])
    return [(a, b) for a in s for b in t if rng.random() < share / max(len(t), 1) * 2]


# -- XLIFF 1.2 ---------------------------------------------------------------------------------------
def xliff_inline(rng: random.Random, ids, depth: int = 0) -> str:
    """Inline content: text, <g> (nested, adjacent, empty, with attributes holding entities), <x/>,
    <ph> with escaped native code, <bpt>/<ept>; at the very start and end as often as inside."""
    parts = []
    for _ in range(rng.randint(0, 4)):
        kind = rng.random()
        if kind < 0.4:
            parts.append(_text(rng, _xml))
        elif kind < 0.65 and depth < 4:
            parts.append(f'<g id="{next(ids)}" ctype="x-a&amp;b">{xliff_inline(rng, ids, depth + 1)}</g>')
        elif kind < 0.8:
            parts.append(f'<x id="{next(ids)}"/>')
        elif kind < 0.9:
            parts.append(f'<ph id="{next(ids)}">&lt;br class=&quot;a&amp;b&quot;/&gt;</ph>')
        else:
            number = next(ids)
            parts.append(f'<bpt id="{number}">&lt;b&gt;</bpt>{_text(rng, _xml)}<ept id="{number}">&lt;/b&gt;</ept>')
    return "".join(parts)


def xliff_document(rng: random.Random) -> str:
    ids = iter(range(1, 10_000))
    units = "".join(f'\n      <trans-unit id="u{k}">\n        <source>{xliff_inline(rng, ids)}</source>\n'
                    f'      </trans-unit>' for k in range(rng.randint(1, 4)))
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2">\n'
            ' <file source-language="en" target-language="de" datatype="plaintext" original="a&amp;b.odt">\n'
            f'  <body>{units}\n  </body>\n </file>\n</xliff>\n')


def codes(element) -> Counter:
    """(tag, id, parent's tag and id, text of a native code) of every inline element."""
    out = Counter()

    def walk(node, parent):
        for child in node:
            tag = child.tag.replace(NS, "")
            out[(tag, child.get("id"), parent, "".join(child.itertext()) if tag != "g" else "")] += 1
            walk(child, (tag, child.get("id")))

    walk(element, None)
    return out


def translate(parsed, rng: random.Random) -> str:
    """The file written as the engine's callers write it (``translate_parsed``: a unit given no
    words keeps its source), from generated translations and links."""
    results, links = [], {}
    for unit in parsed.units:
        translation = _translation(rng, len(unit.text.split()))
        segment = SegmentResult(unit.text, translation, 0.0, Alignment((), (), ()))
        results.append(DocumentResult(unit.text, translation, (segment,), {}))
        links[id(segment)] = _links(rng, unit.text, translation)
    rendered, _ = translate_parsed(parsed, results, lambda segments: [l for s in segments for l in links[id(s)]])
    return rendered


def check_xliff(document: str, rng: random.Random) -> None:
    parsed = parse("xliff", document)
    out = translate(parsed, rng)
    root = ET.fromstring(out.encode("utf-8"))  # well-formed
    for unit in root.iter(f"{NS}trans-unit"):
        source, target = unit.find(f"{NS}source"), unit.find(f"{NS}target")
        if target is not None:
            assert codes(target) == codes(source), (document, out)
    skeleton = re.sub(r'<target state="needs-review-translation">.*?</target>', "", out)
    assert skeleton.replace("\n        \n", "\n") == document, (document, out)


# -- HTML ---------------------------------------------------------------------------------------------
def html_inline(rng: random.Random, depth: int = 0) -> str:
    parts = []
    for _ in range(rng.randint(0, 4)):
        kind = rng.random()
        if kind < 0.4:
            parts.append(_text(rng, lambda w: w.replace("&", "&amp;").replace("<", "&lt;")))
        elif kind < 0.65 and depth < 4:
            name = rng.choice(["b", "i", "span", "a", "em"])
            attributes = ' href="/x?a=1&amp;b=2"' if name == "a" else ' class="k&amp;l"' if name == "span" else ""
            parts.append(f"<{name}{attributes}>{html_inline(rng, depth + 1)}</{name}>")
        elif kind < 0.8:
            parts.append(rng.choice(["<br>", '<img src="a.png">', "<wbr>"]))
        else:
            parts.append('<code translate="no">a &lt; <b>b</b></code>')
    return "".join(parts)


def html_document(rng: random.Random) -> str:
    blocks = "".join(f"\n  <{tag}>{html_inline(rng)}</{tag}>" for tag in
                     (rng.choice(["p", "li", "h2", "td"]) for _ in range(rng.randint(1, 4))))
    return f"<!DOCTYPE html>\n<html><body><!-- c -->{blocks}\n<pre>  keep &lt;me&gt; </pre></body></html>\n"


class Shape(HTMLParser):
    """Block elements with their attributes, verbatim parts, and per block the inline tags with
    their attributes and the path of inline tags around them."""

    INLINE = {"b", "i", "span", "a", "em", "br", "img", "wbr", "code"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.blocks, self.tags, self.path, self.verbatim = [], Counter(), [], []

    def handle_starttag(self, tag, attrs):
        if tag in self.INLINE:
            self.tags[(tag, tuple(attrs), tuple(self.path))] += 1
            if tag not in ("br", "img", "wbr"):
                self.path.append(tag)
        else:
            self.blocks.append((tag, tuple(attrs)))

    def handle_endtag(self, tag):
        if tag in self.INLINE:
            assert self.path and self.path[-1] == tag, f"</{tag}> closes {self.path}"
            self.path.pop()
        else:
            self.blocks.append(("/" + tag, ()))

    def handle_comment(self, data):
        self.verbatim.append(data)

    def handle_decl(self, decl):
        self.verbatim.append(decl)


def shape(page: str) -> Shape:
    found = Shape()
    found.feed(page)
    found.close()
    return found


def check_html(document: str, rng: random.Random) -> None:
    parsed = parse("html", document)
    out = translate(parsed, rng)
    before, after = shape(document), shape(out)
    assert after.blocks == before.blocks and after.verbatim == before.verbatim, (document, out)
    assert after.tags == before.tags, (document, out)
    assert "<pre>  keep &lt;me&gt; </pre>" in out
    for block in re.findall(r"<(p|li|h2|td)>(.*?)</\1>", out, re.S):
        assert nesting_problem(block[1]) is None, (document, out)


# -- Markdown -----------------------------------------------------------------------------------------
def markdown_inline(rng: random.Random, depth: int = 0) -> str:
    parts = []
    for _ in range(rng.randint(1, 4)):
        kind = rng.random()
        if kind < 0.5 or depth >= 2:
            parts.append(rng.choice(["Programme", "runs", "Index", "libffi", "%s", "{name}"]))
        elif kind < 0.8:
            mark = rng.choice(["*", "**", "~~"])
            parts.append(f"{mark}{rng.choice(['word', 'Index', 'a b'])}{mark}")
        elif kind < 0.9:
            parts.append(f"[{rng.choice(['the docs', 'Index'])}](https://e.x/?a=1&b=2)")
        else:
            parts.append(rng.choice(["`code  x`", "<kbd>", "![img](a.png)"]))
    return " ".join(parts)


def markdown_document(rng: random.Random) -> str:
    blocks = [rng.choice(["## ", "- ", "", "> "]) + markdown_inline(rng) for _ in range(rng.randint(1, 3))]
    return "---\ntitle: x\n---\n\n" + "\n\n".join(blocks) + "\n\n```\nkeep *me*\n```\n"


def check_markdown(document: str, rng: random.Random) -> None:
    parsed = parse("markdown", document)
    out = translate(parsed, rng)
    (source_blocks, source_inline), (out_blocks, out_inline) = structure(document), structure(out)
    assert out_blocks == source_blocks, (document, out)
    for (source_marks, _), (out_marks, _), notes in zip(source_inline, out_inline, [parsed.notes] * len(out_inline)):
        kinds = Counter(kind for kind, *_ in source_marks)
        if not any("placed inside" in n for ns in notes.values() for n in ns):  # a pair left without a word nests
            assert Counter(kind for kind, *_ in out_marks) == kinds, (document, out)


FORMATS = {"xliff": (xliff_document, check_xliff), "html": (html_document, check_html),
           "markdown": (markdown_document, check_markdown)}


def run(fmt: str, seed: int) -> None:
    """One generated document of ``fmt`` through parse, placement and render, checked."""
    make, check = FORMATS[fmt]
    rng = random.Random(seed)
    check(make(rng), rng)


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@settings(max_examples=40, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_generated_documents_parse_and_keep_their_inline_codes(fmt, seed):
    run(fmt, seed)


@pytest.mark.slow
@pytest.mark.parametrize("fmt", [
    "html", "xliff",
    pytest.param("markdown", marks=pytest.mark.xfail(strict=True, reason=(
        "3 of 1000: a pair left without a word is nested in a sibling with the same delimiter "
        "(~~~~Haus~~~~), which Markdown cannot read as two")))])
def test_a_thousand_generated_documents_per_format(fmt):
    failures = []
    for seed in range(1000):
        try:
            run(fmt, seed)
        except Exception as exc:  # noqa: BLE001 - counted, then reported
            failures.append((seed, f"{type(exc).__name__}: {str(exc)[:300]}"))
    assert not failures, f"{len(failures)} of 1000 {fmt} documents failed; first: {failures[:3]}"
