"""The placement layer on the cases real files break it with: empty codes at a unit's ends, siblings kept siblings,
nesting kept, a unit with no words left keeps its source, and a writer refuses ill-formed output."""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from worker.formats import KEPT_SOURCE, OutputError, parse, translate_parsed
from worker.formats.markup import transfer
from worker.formats.model import Tag
from worker.text.segment import Alignment, DocumentResult, SegmentResult

HEAD = ('<?xml version="1.0" encoding="UTF-8"?>\n<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2">'
        '<file source-language="en" target-language="de" datatype="plaintext" original="a"><body>\n')


def words(text):
    return [m.span() for m in re.finditer(r"\S+", text)]


def xliff(*sources: str) -> str:
    return HEAD + "".join(f'<trans-unit id="{k}"><source>{s}</source></trans-unit>\n' for k, s in enumerate(sources)) + \
        "</body></file></xliff>\n"


def targets(out: str) -> list[str]:
    return re.findall(r'<target state="needs-review-translation">(.*?)</target>', out)


def test_an_empty_code_at_the_end_stays_inside_the_target():
    parsed = parse("xliff", xliff('Das Programme<x id="7"/>', '<g id="1">Up: <g id="2">Using libffi</g><x id="3"/></g>'))
    out = parsed.render(["Das Programm", "Hoch: Mit libffi"], [[], []])
    ET.fromstring(out.encode("utf-8"))
    assert targets(out) == ['Das Programm<x id="7"/>', '<g id="1">Hoch: <g id="2">Mit libffi</g><x id="3"/></g>']


def test_siblings_stay_siblings_when_the_alignment_would_nest_them():
    parsed = parse("xliff", xliff('Up: <g id="2">Using libffi</g> [<g id="3">Index</g>]'))
    translation = "Hoch: Mit libffi [Index]"
    s, t = words(parsed.units[0].text), words(translation)
    # Using -> Mit and [Index] : the hull of <g id="2"> would swallow <g id="3">
    links = [(s[0], t[0]), (s[1], t[1]), (s[2], t[3]), (s[3], t[2])]
    out = parsed.render([translation], [links])
    target = ET.fromstring(out.encode("utf-8")).find(".//{*}target")
    assert sorted(child.get("id") for child in target) == ["2", "3"] and not list(target[0]) and not list(target[1])


def test_nesting_is_kept_and_pairs_left_without_words_hold_nothing():
    source = "A B C"
    tags = [Tag("<g1>", "</g1>", 0, 5), Tag("<g2>", "</g2>", 0, 1, parent=0), Tag("<g3>", "</g3>", 4, 5, parent=0)]
    pieces, notes = transfer(source, tags, "x", [])
    assert "".join(p.text for p in pieces) == "<g1><g2>x</g2><g3></g3></g1>" and "no word left" in notes[-1]


def test_markdown_nests_a_pair_left_without_words_instead_of_writing_it_empty():
    parsed = parse("markdown", "*one* **two**\n")
    assert parsed.render(["eins"], [[]]) in ("***eins***\n", "***eins** *\n".replace(" ", ""), "***eins***\n")
    assert any("placed inside" in note for note in parsed.notes[0])


def test_html_tags_never_cross():
    source = "The quick brown fox"
    tags = [Tag("<a>", "</a>", 0, 9), Tag("<var>", "</var>", 4, 19)]  # siblings in the source would cross
    translation = "Der schnelle braune Fuchs"
    s, t = words(source), words(translation)
    pieces, _ = transfer(source, [tags[0], Tag("<var>", "</var>", 10, 19)], translation, [(a, b) for a, b in zip(s, t)])
    out = "".join(p.text for p in pieces)
    assert out == "<a>Der schnelle</a> <var>braune Fuchs</var>"


def result(source: str, translation: str) -> DocumentResult:
    return DocumentResult(source, translation, (SegmentResult(source, translation, 0.0, Alignment((), (), ())),), {})


@pytest.mark.parametrize("fmt, text, expected", [
    ("markdown", "## Usage\n\n| allow | Name |\n|---|---|\n", "## Usage\n\n| allow | Name |\n|---|---|\n"),
    ("xliff", xliff("irc"), 'state="needs-review-translation">irc</target>'),
])
def test_a_unit_the_model_gives_no_words_keeps_its_source_flagged(fmt, text, expected):
    parsed = parse(fmt, text)
    rendered, record = translate_parsed(parsed, [result(u.text, ". ") for u in parsed.units], lambda segments: [])
    assert expected in rendered
    assert all(KEPT_SOURCE in segment["flags"] for segment in record["segments"])
    assert all(any("source text is kept" in w for w in unit["warnings"]) for unit in record["units"])


def test_a_writer_refuses_a_target_that_is_not_xml():
    parsed = parse("xliff", xliff("A <g id='1'>b</g> c"))
    broken = [Tag("<g id='1'>", "</x>", 2, 3)]  # a tag whose close does not match: the writer must notice
    parsed.units[0] = type(parsed.units[0])(parsed.units[0].text, parsed.units[0].where, tags=tuple(broken))
    with pytest.raises(OutputError, match="trans-unit 0: the target would not be well-formed XML"):
        parsed.render(["A b c"], [[]])


def test_a_tag_around_punctuation_between_two_links_leaves_both_links_their_words():
    # LibreOffice gives the ", " between two links a run of its own: that run holds no word.
    parsed = parse("html", '<p><a href="1">Tutorial</a><span>, </span><a href="2">Tutorial2</a></p>')
    translation = "Tutorial, Tutorial2."
    out = parsed.render([translation], [list(zip(words(parsed.units[0].text), words(translation)))])
    assert '<a href="1">Tutorial</a>' in out and '<a href="2">Tutorial2</a>' in out


@pytest.mark.parametrize("preserve", [False, True])
@pytest.mark.parametrize("between", ['<g id="57"/>', '<x id="57"/>'])
def test_a_code_between_two_links_parts_their_words(between, preserve):
    # odf2xliff writes a line break between two links as an empty <g/> (in xml:space="preserve"
    # units): no space in the text, yet two words.
    source = f'Up: <g id="1">Using libffi</g>{between}<g id="2">Index</g>'
    parsed = parse("xliff", xliff(source).replace("<trans-unit ", '<trans-unit xml:space="preserve" ') if preserve
                   else xliff(source))
    assert parsed.units[0].text == "Up: Using libffi Index"
    translation = "Hoch: Mit libffi Verzeichnis"
    out = parsed.render([translation], [list(zip(words(parsed.units[0].text), words(translation)))])
    ET.fromstring(out.encode("utf-8"))
    assert targets(out) == [f'Hoch: <g id="1">Mit libffi</g>{between}<g id="2">Verzeichnis</g>']


def test_a_code_inside_a_word_does_not_part_it():
    parsed = parse("xliff", xliff('Das Pro<x id="7"/>gramm and <g id="1">Hal</g><g id="2">lo</g>'))
    assert parsed.units[0].text == "Das Programm and Hallo"
