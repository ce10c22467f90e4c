"""The placement layer on the cases real files break it with: empty codes at a unit's ends, siblings kept siblings,
nesting kept, a unit with no words left keeps its source, and a writer refuses ill-formed output."""
from __future__ import annotations

import html
import random
import re
import xml.etree.ElementTree as ET

import pytest

from worker.formats import KEPT_SOURCE, OutputError, parse, translate_parsed
from worker.formats.markup import is_link, transfer
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


# -- links keep their targets and their texts ----------------------------------------------------------
# A texinfo manual's navigation line (makeinfo --html): the case. Source words: Next: | Resource |
# Measurement | [Contents][Index]; target words: Weiter: | Ressourcenmessung | [Inhalt][Index].
NAV = ('<p>Next: <a href="#Resource-Measurement">Resource Measurement</a> '
       '[<a href="#SEC_Contents">Contents</a>][<a href="#Concept-index">Index</a>]</p>')
NAV_DE = "Weiter: Ressourcenmessung [Inhalt][Index]"
NAV_OUT = ('<p>Weiter: <a href="#Resource-Measurement">Ressourcenmessung</a> '
           '[<a href="#SEC_Contents">Inhalt</a>][<a href="#Concept-index">Index</a>]</p>')
NAV_TARGETS = ["#Resource-Measurement", "#SEC_Contents", "#Concept-index"]


def anchors(html: str) -> list[tuple[str, str]]:
    """(href, text) of each link, in the order written."""
    return re.findall(r'<a href="([^"]*)"[^>]*>(.*?)</a>', html)


@pytest.mark.parametrize("pairs, warned, expected", [
    ([(0, 0), (1, 1), (2, 1), (3, 2)], False, NAV_OUT),  # as the model's aligner links it: glued word to glued word
    ([(0, 0), (1, 1), (2, 1)], False, NAV_OUT),  # the glued word unaligned: its twin of the same shape ([..][..])
    # crossing: Next: and Resource on [Inhalt][Index], the links' word on Weiter:
    ([(0, 2), (1, 2), (2, 1), (3, 0)], True, NAV_OUT),
    ([(3, 0), (0, 1)], True, NAV_OUT),  # the links' word on Weiter: and Next: on Ressourcenmessung (the issue's swap)
    ([], True, NAV_OUT.replace('Weiter: <a href="#Resource-Measurement">', '<a href="#Resource-Measurement">Weiter: ')),
    # nothing aligned: the first link by its share of the line (two words of three), the glued word by its shape
])
def test_a_texinfo_navigation_line_keeps_each_link_on_its_own_words(pairs, warned, expected):
    parsed = parse("html", NAV)
    s, t = words(parsed.units[0].text), words(NAV_DE)
    out = parsed.render([NAV_DE], [[(s[a], t[b]) for a, b in pairs]])
    assert out == expected
    notes = parsed.notes.get(0, [])
    assert bool(notes) == warned
    if warned:
        assert re.match(r'links placed in source order: "Resource Measurement" <a href="#Resource-Measurement"> \(',
                        notes[0])


def test_links_left_fewer_words_than_they_need_keep_source_order_and_a_link_left_none_keeps_its_source_text():
    # the glued word translated as one word of one run: it holds one link; the other is placed on no
    # word and keeps its source text, set apart from the bracket before it, warned
    parsed = parse("html", NAV)
    translation = "Weiter: Ressourcenmessung [Inhaltsverzeichnis]"
    s, t = words(parsed.units[0].text), words(translation)
    out = parsed.render([translation], [[(s[0], t[0]), (s[1], t[1]), (s[2], t[1]), (s[3], t[2])]])
    assert anchors(out) == [("#Resource-Measurement", "Ressourcenmessung"), ("#SEC_Contents", "Inhaltsverzeichnis"),
                            ("#Concept-index", "Index")]
    assert re.sub(r"<[^>]+>", "", out) == translation + " Index"  # no word of the translation lost
    assert any(n.startswith('link "Index" <a href="#Concept-index"> holds no word') for n in parsed.notes[0])
    assert any(n.startswith('link "Index" <a href="#Concept-index"> kept its source text') for n in parsed.notes[0])


def test_two_links_of_two_source_words_glued_into_one_target_word_part_it():
    # DOCX parts [Contents][Index] into two words; the model may glue them again
    source, translation = "Next: Resource Measurement [Contents] [Index]", NAV_DE
    tags = [Tag(f'<a href="{k + 1}">', "</a>", a, b) for k, (a, b) in enumerate([(6, 26), (28, 36), (39, 44)])]
    s, t = words(source), words(translation)
    links = [(s[0], t[0]), (s[1], t[1]), (s[2], t[1]), (s[3], t[2]), (s[4], t[2])]
    pieces, notes = transfer(source, tags, translation, links)
    assert "".join(p.text for p in pieces) == \
        'Weiter: <a href="1">Ressourcenmessung</a> [<a href="2">Inhalt</a>][<a href="3">Index</a>]' and notes == []


@pytest.fixture(scope="module")
def translator():
    from worker.engine.settings import EngineSettings
    from worker.engine.translator import Translator

    from .conftest import REPO_ROOT
    bundle = REPO_ROOT / "models" / "en-de"
    if not (bundle / "manifest.json").exists():
        pytest.skip("models/en-de not present")
    return Translator(bundle, EngineSettings(provider="cpu", intra_op_threads=1))


@pytest.mark.parametrize("page, targets", [
    (NAV, NAV_TARGETS),
    ('<div class="nav-panel">\n<p>\nNext: <a href="#Resource-Measurement" accesskey="n" rel="next">'
     'Resource Measurement</a>, '
     'Previous: <a href="#Filesystem-Interface" accesskey="p" rel="prev">Filesystem Interface</a>, Up: <a href="#Top" '
     'accesskey="u" rel="up">The GNU C Library</a> &nbsp; [<a href="#SEC_Contents" title="Table of contents" '
     'rel="contents">Contents</a>][<a href="#Concept-Index" title="Index" rel="index">Index</a>]</p>\n</div>\n',
     ["#Resource-Measurement", "#Filesystem-Interface", "#Top", "#SEC_Contents", "#Concept-Index"]),
])
def test_texinfo_navigation_through_the_shipped_model_keeps_every_link_in_order_with_text(translator, page, targets):
    """The whole path of ``nmt translate``: the model's translation and its forced-alignment links."""
    from functools import partial

    from worker.engine.forced import segment_links
    from worker.formats import translate_parsed
    from worker.text.layout import split_document

    parsed = parse("html", page, ("en", "de"))
    results = translator.translate_layouts([split_document(u.text, "en") for u in parsed.units])
    out, record = translate_parsed(parsed, results, partial(segment_links, translator))
    found = anchors(out)
    assert [href for href, _ in found] == targets  # each link once, in source order: no target swapped
    assert all(re.search(r"\w", text) for _, text in found), found  # none empty
    line = re.search(r"<p>(.*)</p>", out, re.S).group(1)
    unit = next(u for u, r in zip(parsed.units, results) if "Next" in u.text)
    translation = next(r.translation for u, r in zip(parsed.units, results) if u is unit)
    assert " ".join(html.unescape(re.sub(r"<[^>]+>", "", line)).split()) == " ".join(translation.split())


def test_a_link_around_code_alone_is_kept_whole():
    page = '<p>See <a href="#f"><code>foo()</code></a> and <a href="#c">the first chapter</a> for help.</p>'
    parsed = parse("html", page)
    assert parsed.units[0].text == "See and the first chapter for help."
    translation = "Siehe und das erste Kapitel für Hilfe."
    out = parsed.render([translation], [[]])  # nothing aligned
    assert out.count('<a href="#f"><code>foo()</code></a>') == 1 and [h for h, _ in anchors(out)] == ["#f", "#c"]


@pytest.mark.parametrize("translation, expected, notes", [
    # once on each side, the word is linked to its twin before placing: nothing to note
    ("Für Hilfe siehe foo() und das erste Kapitel.",
     'Für Hilfe siehe <a href="#f"><code>foo()</code></a> und <a href="#c">das erste Kapitel</a>.', []),
    # twice in the translation it is no twin: unaligned, the link goes on the first word with its letters
    ("Für Hilfe siehe foo() und das erste Kapitel über foo().",
     'Für Hilfe siehe <a href="#f"><code>foo()</code></a> und <a href="#c">das erste Kapitel</a> über foo().',
     ['links placed in source order: "foo()" <a href="#f"> (no aligned words)',
      "tag <code> placed by position: no aligned words"]),
])
def test_a_link_whose_text_the_model_kept_goes_on_that_word_when_unaligned(translation, expected, notes):
    # PO catalogues of pages and DOCX keep a link's code as text: protected, it comes back as it was
    source = "See foo() and the first chapter for help."
    tags = [Tag('<a href="#f">', "</a>", 4, 9), Tag("<code>", "</code>", 4, 9, parent=0),
            Tag('<a href="#c">', "</a>", 14, 31)]
    s, t = words(source), words(translation)
    # See -> siehe, and -> und, the first chapter -> das erste Kapitel, for help. -> Für Hilfe; foo() unaligned
    links = [(s[0], t[2]), (s[2], t[4]), (s[3], t[5]), (s[4], t[6]), (s[5], t[7]), (s[6], t[0]), (s[7], t[1])]
    pieces, found = transfer(source, tags, translation, links)
    assert "".join(p.text for p in pieces) == expected and found == notes


def test_a_link_keeps_its_words_from_a_sibling_run_whose_alignment_covers_them():
    # LibreOffice's runs around a link are tags of their own; one aligned to more words, across the link,
    # took the link's words before (the link came out around another word, or none)
    page = ('<p><span class="T1">Read </span><a href="m.html">the manual</a>'
            '<span class="T1"> before you install it.</span></p>')
    parsed = parse("html", page)
    translation = "Lesen Sie das Handbuch, bevor Sie es installieren."
    s, t = words(parsed.units[0].text), words(translation)
    # Read -> Lesen, the manual -> das Handbuch, before -> bevor, you -> Sie (both), install -> installieren, it. -> es
    links = [(s[0], t[0]), (s[1], t[2]), (s[2], t[3]), (s[3], t[4]), (s[4], t[5]), (s[4], t[1]), (s[5], t[7]),
             (s[6], t[6])]
    out = parsed.render([translation], [links])
    assert anchors(out) == [("m.html", "das Handbuch")]


def test_links_the_translation_reorders_are_put_in_source_order_with_a_warning():
    # a trade-off: an order change cannot be told from an aligner's swap, and a swapped target is worse
    source = "Click here to read the manual."
    tags = [Tag('<a href="#click">', "</a>", 6, 10), Tag('<a href="#manual">', "</a>", 19, 29)]
    translation = "Lesen Sie das Handbuch, indem Sie hier klicken."
    s, t = words(source), words(translation)
    links = [(s[0], t[7]), (s[1], t[6]), (s[3], t[0]), (s[4], t[2]), (s[5], t[3])]
    pieces, notes = transfer(source, tags, translation, links)
    out = "".join(p.text for p in pieces)
    assert [h for h, _ in anchors(out)] == ["#click", "#manual"] and all(text for _, text in anchors(out))
    assert "order changed" in notes[0]


@pytest.mark.parametrize("tag, link", [
    (Tag('<a href="x">', "</a>", 0, 1), True), (Tag("<A HREF=x>", "</A>", 0, 1), True),
    (Tag('<a name="s">', "</a>", 0, 1), True),
    (Tag("<abbr>", "</abbr>", 0, 1), False), (Tag("<b>", "</b>", 0, 1), False),
    (Tag("[", "](https://e.x)", 0, 1), True), (Tag("**", "**", 0, 1), False),
    (Tag("\ue010o3\ue011", "\ue010c3\ue011", 0, 1), True),  # a DOCX hyperlink; its run formats count from 10 000
    (Tag("\ue010o10002\ue011", "\ue010c10002\ue011", 0, 1), False),
    (Tag('<g id="1" ctype="link">', "</g>", 0, 1), True), (Tag('<g id="1" ctype="x-html-a">', "</g>", 0, 1), True),
    (Tag('<g id="1" ctype="bold">', "</g>", 0, 1), False), (Tag('<g id="1">', "</g>", 0, 1), False),
    (Tag('<pc id="1" type="link">', "</pc>", 0, 1), True), (Tag('<pc id="1" type="fmt">', "</pc>", 0, 1), False),
    (Tag('<a href="x"><img src="i.png"></a>', "", 0, 0), False),  # a link around no text is one point
])
def test_what_counts_as_a_link(tag, link):
    assert is_link(tag) == link


def laid_out(out: str) -> list[tuple[str, list[str]]]:
    """The output as ("link", its words) and ("word", [word]) items, other markup left out."""
    items, current = [], None
    for token in re.findall(r'<a href="[^"]*">|</a>|[^\s<]+', re.sub(r"</?[bi]>", " ", out)):
        if token.startswith("<a"):
            current = []
        elif token == "</a>":
            items.append(("link", current))
            current = None
        elif current is not None:
            current.append(token)
        else:
            items.append(("word", [token]))
    return items


def test_random_links_keep_their_targets_in_order_and_hold_words_while_any_can_be_had():
    rng = random.Random(11)
    for trial in range(400):
        n = rng.randint(1, 9)
        source = " ".join(f"s{i}" for i in range(n))
        s = words(source)
        tags, i = [], 0
        while i < n:  # top-level links and emphasis, some with a child
            j = rng.randint(i, min(n - 1, i + 2))
            if rng.random() < 0.7:
                link = rng.random() < 0.6
                opened, closed = (f'<a href="#{len(tags)}">', "</a>") if link else ("<b>", "</b>")
                tags.append(Tag(opened, closed, s[i][0], s[j][1]))
                if j > i and rng.random() < 0.3:
                    tags.append(Tag("<i>", "</i>", s[j][0], s[j][1], parent=len(tags) - 1))
            i = j + 1 + (rng.random() < 0.4)
        m = rng.randint(0, 10)
        translation = " ".join(f"t{k}" for k in range(m))
        t = words(translation)
        links = [(s[a], t[b]) for a in range(n) for b in range(m) if rng.random() < 0.25]
        pieces, notes = transfer(source, tags, translation, links)
        out = "".join(p.text for p in pieces)
        case = (trial, source, tags, translation, links, out, notes)
        hrefs = re.findall(r'<a href="([^"]*)">', out)
        sources = [f"#{k}" for k, tag in enumerate(tags) if is_link(tag)]
        assert sorted(hrefs) == sorted(sources), case  # each link once: never split, never merged
        assert re.sub(r"<[^>]+>", "", out) == translation, case
        if any(note.startswith("links placed in source order") for note in notes):
            assert hrefs == sources, case  # moved at all: then in source order
        items = laid_out(out)
        for k, (kind, held) in enumerate(items):
            if kind == "link" and not held:  # empty only where no word is free and no neighbour can spare one
                before = next((item for item in reversed(items[:k]) if item[1]), None)
                after = next((item for item in items[k + 1:] if item[1]), None)
                assert all(item is None or item[0] == "link" and len(item[1]) == 1 for item in (before, after)), case


# -- a code kept whole keeps its quotes, and its spaces ------------------------------------------------
# Texinfo manuals (makeinfo, texi2html) quote a code: ‘<tt>po/</tt>’. The model saw the quotes as words of their
# own ("Extending ‘’ in ‘’"), which no alignment places, and a code that had a space or punctuation then a space on a
# side came back glued to a word there: "erweitert<tt>Makefile</tt>in »'«<tt>po/</tt>", "<code>CultureInfo</code>die".
@pytest.mark.parametrize("opened, closed", [
    ("&lsquo;", "&rsquo;"), ("\u2018", "\u2019"), ("\u201c", "\u201d"), ("&quot;", "&quot;"), ('"', '"'), ("'", "'"),
    ("`", "'"), ("\u00ab", "\u00bb"), ("\u201e", "\u201c"), ("(", ")"), ("[", "]"), ("&#8216;", "&#x2019;"),
    ("(&lsquo;", "&rsquo;)"),  # as many pairs as enclose it
])
def test_quotes_and_brackets_around_a_code_alone_are_part_of_it(opened, closed):
    [unit] = parse("html", f"<p>Run {opened}<tt>make install</tt>{closed} first.</p>").units
    assert unit.text == "Run first."  # no lone quote for the model
    assert [(t.open, t.space) for t in unit.tags] == [(f"{opened}<tt>make install</tt>{closed}", (True, True))]


@pytest.mark.parametrize("paragraph, text, points", [
    # makeinfo's definition line: the brackets and the emphasis around them
    ("Builtin: <strong>esyscmd</strong> <em>(<var>shell-command</var>)</em>", "Builtin: esyscmd",
     ["<em>(<var>shell-command</var>)</em>"]),
    ("Call f(<var>x</var>) now.", "Call f now.", ["(<var>x</var>)"]),  # brackets may be glued to a word outside
    # texi2html's javadoc: codes joined by "_" are one, a file name's extension and the quotes go with it
    ('called "<VAR>Resource</VAR>_<VAR>locale</VAR>.properties" and', "called and",
     ['"<VAR>Resource</VAR>_<VAR>locale</VAR>.properties"']),
    # not enclosed by one pair: left as they were
    ("the quotes (<code>`</code> and <code>'</code>) are used", "the quotes ( and ) are used",
     ["<code>`</code>", "<code>'</code>"]),
    ("a (<code>x</code>] b &lsquo;<code>y</code>.&rsquo; c", "a (] b ‘.’ c", ["<code>x</code>", "<code>y</code>"]),
    ("rock'<code>n</code>'roll", "rock''roll", ["<code>n</code>"]),  # apostrophes, glued to the words outside
])
def test_what_encloses_a_code_and_what_does_not(paragraph, text, points):
    [unit] = parse("html", f"<p>{paragraph}</p>").units
    assert unit.text == text
    assert [t.open for t in unit.tags if not t.close] == points


def test_a_catalogue_and_xliff_take_the_quotes_into_their_codes_and_docx_runs_keep_theirs():
    po = ('msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n\n'
          'msgid "13.4.4 Extending \u2018<tt>Makefile</tt>\u2019 in \u2018<tt>po/</tt>\u2019"\nmsgstr ""\n')
    [unit] = parse("po", po).units
    assert unit.text == "13.4.4 Extending in"
    assert [t.open for t in unit.tags] == ["\u2018<tt>Makefile</tt>\u2019", "\u2018<tt>po/</tt>\u2019"]
    [unit] = parse("xliff", xliff('Press "<x id="1"/>" or (<ph id="2">%s</ph>) now')).units
    assert unit.text == "Press or now" and [t.open for t in unit.tags] == ['"<x id="1"/>"', '(<ph id="2">%s</ph>)']
    # a DOCX code run is a sentinel its writer reads, never text: the quotes stay text
    from worker.formats.inline import inline_unit
    docx, _, _ = inline_unit([("data", "", "Run \u2018", "Run \u2018"), ("point", "", "\ue010p3\ue011", ""),
                              ("data", "", "\u2019 first.", "\u2019 first.")], "p 1")
    assert docx.text == "Run \u2018\u2019 first." and [t.open for t in docx.tags] == ["\ue010p3\ue011"]


TEXINFO = [
    # 13.4.4 | Extending | in  ->  13.4.4 | Erweitern | in: the quotes come back around each code
    ("13.4.4 Extending &lsquo;<tt>Makefile</tt>&rsquo; in &lsquo;<tt>po/</tt>&rsquo;", "13.4.4 Erweitern in",
     [(0, 0), (1, 1), (2, 2)],
     "13.4.4 Erweitern &lsquo;<tt>Makefile</tt>&rsquo; in &lsquo;<tt>po/</tt>&rsquo;"),
    # The | gettext | approach | uses | the | , | not | the | resource | name.  ->  Der | gettext-Ansatz |
    # verwendet | die, | nicht | den | Ressourcennamen.; the lone comma unaligned: the code goes before "nicht",
    # which it was glued to before ("die, <CODE>CultureInfo</CODE>nicht")
    ("The gettext approach uses the <CODE>CultureInfo</CODE>, not the resource name.",
     "Der gettext-Ansatz verwendet die, nicht den Ressourcennamen.",
     [(0, 0), (1, 1), (2, 1), (3, 2), (4, 3), (6, 4), (7, 5), (8, 6), (9, 6)],
     "Der gettext-Ansatz verwendet die, <CODE>CultureInfo</CODE> nicht den Ressourcennamen."),
    # ... the comma aligned to "die,": the code goes before it
    ("The gettext approach uses the <CODE>CultureInfo</CODE>, not the resource name.",
     "Der gettext-Ansatz verwendet die, nicht den Ressourcennamen.",
     [(0, 0), (1, 1), (2, 1), (3, 2), (4, 3), (5, 3), (6, 4), (7, 5), (8, 6), (9, 6)],
     "Der gettext-Ansatz verwendet <CODE>CultureInfo</CODE> die, nicht den Ressourcennamen."),
    # If | is | , | the | function | is | identical | to | .  ->  Wenn | ist, | ist | die | Funktion | identisch | mit.
    ("If <var>point</var> is <code>NULL</code>, the function is identical to <code>gcry_mpi_point_new(0)</code>.",
     "Wenn ist, ist die Funktion identisch mit.",
     [(0, 0), (1, 1), (2, 1), (3, 3), (4, 4), (5, 2), (6, 5), (7, 6), (8, 6)],
     "Wenn <var>point</var> <code>NULL</code> ist, ist die Funktion identisch "
     "<code>gcry_mpi_point_new(0)</code> mit."),
    # If | both | are | missing, | the | default | quotes | ( | and | ) | are | used.  ->  Wenn | beide | fehlen, |
    # werden | die | Standardzeichen | und | verwendet.: the brackets lost, the code after "(" is not glued to the word
    # before it, nor the one before ")" to "werden", the target of the next aligned word
    ("If both are missing, the default quotes (<code>`</code> and <code>'</code>) are used.",
     "Wenn beide fehlen, werden die Standardzeichen und verwendet.",
     [(0, 0), (1, 1), (2, 2), (3, 2), (4, 4), (5, 5), (6, 5), (8, 6), (10, 3), (11, 7)],
     "Wenn beide fehlen, werden die Standardzeichen <code>`</code> und <code>'</code> verwendet."),
    # glued in the source, glued in the translation: Both | s | are | signed.  ->  Beide | s | sind | signiert.
    ("Both <code>int</code>s (<tt>-1</tt>) are signed.", "Beide s sind signiert.",
     [(0, 0), (1, 1), (2, 2), (3, 3)], "Beide <code>int</code>s (<tt>-1</tt>) sind signiert."),
]


@pytest.mark.parametrize("paragraph, translation, pairs, expected", TEXINFO)
def test_a_code_set_apart_in_the_source_is_never_glued_to_a_word_of_the_translation(paragraph, translation, pairs,
                                                                                    expected):
    parsed = parse("html", f"<p>{paragraph}</p>")
    s, t = words(parsed.units[0].text), words(translation)
    out = parsed.render([translation], [[(s[a], t[b]) for a, b in pairs]])
    assert out == f"<p>{expected}</p>"


def test_a_point_set_apart_by_punctuation_gets_a_space_before_a_letter_or_a_digit():
    # <x/> stood between "is" and ", the"; each translation puts it right before the word after "ist"
    source, tag = "It is , the end.", Tag("<x/>", "", 6, 6, (True, False))
    for translation, expected in [("Es ist das Ende.", "Es ist <x/> das Ende."),
                                  ("Es ist 1 Ende.", "Es ist <x/> 1 Ende.")]:
        s, t = words(source), words(translation)
        pieces, _ = transfer(source, [tag], translation, [(s[0], t[0]), (s[1], t[1]), (s[3], t[2]), (s[4], t[3])])
        assert "".join(p.text for p in pieces) == expected
    # glued to the word after it in the source: glued in the translation
    s, t = words("It is s end."), words("Es ist s Ende.")
    pieces, _ = transfer("It is s end.", [tag], "Es ist s Ende.", [(s[0], t[0]), (s[1], t[1])])
    assert "".join(p.text for p in pieces) == "Es ist <x/>s Ende."


# --- Links corrected by the text before placing (bench/tag_placement_human.py measured each) ---

def placed(source: str, tagged: str, translation: str, pairs, translates=None) -> str:
    """``translation`` with an <em> around the source words ``tagged``, placed by word links
    ``pairs`` (source word, target word) and the word table ``translates``."""
    start = source.index(tagged)
    tag = Tag("<em>", "</em>", start, start + len(tagged))
    s, t = words(source), words(translation)
    pieces, _ = transfer(source, [tag], translation, [(s[a], t[b]) for a, b in pairs], translates=translates)
    return "".join(p.text for p in pieces)


@pytest.mark.parametrize("source, tagged, translation, pairs, expected", [
    # the head, unsure of a name it never saw, links it to the word before its twin
    ("Run dconf to edit the keys", "dconf", "Mit dem Befehlszeilenwerkzeug dconf die Schlüssel bearbeiten",
     [(0, 0), (1, 2), (3, 6), (4, 4), (5, 5)],
     "Mit dem Befehlszeilenwerkzeug <em>dconf</em> die Schlüssel bearbeiten"),
    # by its core, case-folded: punctuation and capitals around it do not matter
    ("Edit fstab, then reboot", "fstab", "Bearbeiten Sie (FSTAB) und starten Sie neu",
     [(0, 0), (1, 1), (2, 3), (3, 4)], "Bearbeiten Sie (<em>FSTAB</em>) und starten Sie neu"),
    # one character that is no letter is a twin: the key 1 goes on the 1
    ("Press 1 then Enter", "1", "Drücken Sie dann 1 und Eingabe", [(0, 0), (1, 2), (2, 2), (3, 5)],
     "Drücken Sie dann <em>1</em> und Eingabe"),
    # one letter is not: it stays where it is linked
    ("Press a then Enter", "a", "Drücken Sie dann a und Eingabe", [(0, 0), (1, 2), (2, 2), (3, 5)],
     "Drücken Sie <em>dann</em> a und Eingabe"),
    # twice in the translation: no twin, the links decide
    ("Run dconf to edit the keys", "dconf", "Mit dconf (Befehlszeilenwerkzeug dconf) die Schlüssel bearbeiten",
     [(0, 0), (1, 2), (3, 6), (4, 4), (5, 5)],
     "Mit dconf (<em>Befehlszeilenwerkzeug</em> dconf) die Schlüssel bearbeiten"),
])
def test_a_word_spelled_the_same_on_both_sides_once_links_only_to_its_twin(source, tagged, translation, pairs,
                                                                           expected):
    assert placed(source, tagged, translation, pairs) == expected


def test_a_point_glued_to_a_word_follows_its_twin():
    # <x/> glued to the end of "dconf", which the head links to "Werkzeug"
    source, translation = "Run dconf to edit", "Mit Werkzeug dconf bearbeiten"
    s, t = words(source), words(translation)
    point = Tag("<x/>", "", 9, 9, (False, True))
    pieces, _ = transfer(source, [point], translation, [(s[0], t[0]), (s[1], t[1]), (s[3], t[3])])
    assert "".join(p.text for p in pieces) == "Mit Werkzeug dconf<x/> bearbeiten"


WORD_TABLE = {("toolbar", "Symbolleiste"), ("Drawing", "Zeichnung"), ("bar", "Leiste")}


def translates(source_word: str, target_word: str) -> bool:
    return (source_word, target_word) in WORD_TABLE


@pytest.mark.parametrize("source, translation, pairs, table, expected", [
    # the head links "Drawing" to both; "Symbolleiste" translates "toolbar", the neighbour outside the tag
    ("Open the Drawing toolbar", "Öffnen Sie die Symbolleiste Zeichnung", [(0, 0), (1, 2), (2, 3), (2, 4), (3, 3)],
     translates, "Öffnen Sie die Symbolleiste <em>Zeichnung</em>"),
    # without a word table, the tag keeps every word linked to it
    ("Open the Drawing toolbar", "Öffnen Sie die Symbolleiste Zeichnung", [(0, 0), (1, 2), (2, 3), (2, 4), (3, 3)],
     None, "Öffnen Sie die <em>Symbolleiste Zeichnung</em>"),
    # a word that also translates one of the tag's own words stays
    ("Open the Drawing toolbar", "Öffnen Sie die Symbolleiste Zeichnung", [(0, 0), (1, 2), (2, 3), (2, 4), (3, 3)],
     lambda s, t: translates(s, t) or (s, t) == ("Drawing", "Symbolleiste"),
     "Öffnen Sie die <em>Symbolleiste Zeichnung</em>"),
    # a word that translates one more than two words away from the tag stays
    ("Drawing is the toolbar", "Zeichnung Symbolleiste ist die", [(0, 0), (0, 1), (1, 2), (2, 3)],
     translates, "<em>Zeichnung Symbolleiste</em> ist die"),
    # one word is never trimmed away: the tag keeps its only word, however foreign
    ("Open the Drawing toolbar", "Öffnen Sie die Symbolleiste Zeichnung", [(0, 0), (1, 2), (2, 3), (3, 3)],
     translates, "Öffnen Sie die <em>Symbolleiste</em> Zeichnung"),
])
def test_a_tag_drops_an_edge_word_that_translates_a_neighbour_outside_it(source, translation, pairs, table, expected):
    assert placed(source, "Drawing", translation, pairs, table) == expected


def test_a_tag_drops_foreign_words_at_both_its_edges():
    # <em>Drawing</em> linked to the words of both neighbours too: each edge goes, "Zeichnung" stays
    source, translation = "the bar Drawing toolbar", "die Leiste Zeichnung Symbolleiste"
    pairs = [(0, 0), (1, 1), (2, 1), (2, 2), (2, 3), (3, 3)]
    assert placed(source, "Drawing", translation, pairs, translates) == "die Leiste <em>Zeichnung</em> Symbolleiste"


@pytest.mark.parametrize("source, tagged, translation, pairs, expected", [
    # nothing links "file": the tag around every word still goes around every word
    ("Open the file", "Open the file", "Öffnen Sie die Datei", [(0, 0), (1, 2)], "<em>Öffnen Sie die Datei</em>"),
    ("Open the file.", "Open the file", "Öffnen Sie die Datei.", [(0, 0), (1, 2)], "<em>Öffnen Sie die Datei</em>."),
    # around all but one word: where the links say
    ("Open the file", "Open the", "Öffnen Sie die Datei", [(0, 0), (1, 2)], "<em>Öffnen Sie die</em> Datei"),
])
def test_a_tag_around_the_whole_unit_goes_around_the_whole_translation(source, tagged, translation, pairs, expected):
    assert placed(source, tagged, translation, pairs) == expected


@pytest.mark.parametrize("fmt, document, expected", [
    ("html", "<p>Open the <em>Drawing</em> toolbar</p>\n", "<p>Öffnen Sie die Symbolleiste <em>Zeichnung</em></p>"),
    ("markdown", "Open the *Drawing* toolbar\n", "Öffnen Sie die Symbolleiste *Zeichnung*"),
    ("xliff", xliff('Open the <g id="1">Drawing</g> toolbar'),
     'Öffnen Sie die Symbolleiste <g id="1">Zeichnung</g>'),
])
def test_the_word_table_that_comes_with_the_links_reaches_the_writers(fmt, document, expected):
    """``translate_parsed`` hands each writer the word table the links came with (the engine's
    ``SegmentLinks``, as here); the writers pass it on to ``transfer``."""
    from worker.engine.forced import SegmentLinks

    translation = "Öffnen Sie die Symbolleiste Zeichnung"
    pairs = [(0, 0), (1, 2), (2, 3), (2, 4), (3, 3)]

    def links_of(table):
        def found(segments):
            s, t = words(segments[0].source), words(segments[0].translation)
            return SegmentLinks([(s[a], t[b]) for a, b in pairs], table)
        return found

    outputs = []
    for table in (translates, None):
        parsed = parse(fmt, document)
        source = parsed.units[0].text
        assert source == "Open the Drawing toolbar"
        out, _ = translate_parsed(parsed, [result(source, translation)], links_of(table))
        outputs.append(html.unescape(out))
    assert expected in outputs[0] and expected not in outputs[1]


def test_the_bundles_word_table_comes_with_the_segment_links(translator):
    from worker.engine.forced import segment_links, word_table

    table = word_table(translator)
    assert table is not None and word_table(translator) is table  # read once per translator
    # eflomal's links in the training data, by piece: the words the docs-test errors turned on
    assert table.translates("toolbar", "Symbolleiste") and table.translates("Drawing", "Zeichnung")
    # (the manuals' "Drawing toolbar" / "Symbolleiste Zeichnung" links Drawing to Symbolleiste as well)
    assert not table.translates("toolbar", "Zeichnung") and not table.translates("menu", "Einfügen")
    assert not table.translates("Insert", "Menü") and not table.translates("file", "Fenster")
    assert not table.translates("the", "die")  # the table's frequent pieces say nothing
    source, translation = "Open the Drawing toolbar.", "Öffnen Sie die Symbolleiste Zeichnung."
    segment = SegmentResult(source, translation, 0.0, Alignment((), tuple(words(source)), tuple(words(translation))))
    links = segment_links(translator, [segment])
    assert links.translates == table.translates and links
    assert all(s in words(source) and t in words(translation) for s, t in links)


def test_links_inside_spans_keep_their_source_order_across_the_spans():
    # an ODP credit from LibreOffice's templates: each link sits in its own text:span; the model
    # dropped "on Unsplash", and the span of the second link went by position to the word "von",
    # before the first: the two targets swapped
    source = "Photo by Dave Hoefler on Unsplash"
    tags = [Tag("<s1>", "</s1>", 0, 9), Tag("<s2>", "</s2>", 9, 21), Tag('<a href="#dave">', "</a>", 9, 21),
            Tag("<s3>", "</s3>", 21, 25), Tag("<s4>", "</s4>", 25, 33), Tag('<a href="#unsplash">', "</a>", 25, 33)]
    translation = "Photo von Dave Hoefler"
    s, t = words(source), words(translation)
    links = [(s[0], t[0]), (s[1], t[1]), (s[2], t[2]), (s[3], t[3])]
    pieces, notes = transfer(source, tags, translation, links)
    out = "".join(p.text for p in pieces)
    assert [h for h, _ in anchors(out)] == ["#dave", "#unsplash"], out
    assert all(text for _, text in anchors(out)), out
