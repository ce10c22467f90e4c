"""HTML pages: read into units with inline tags, every byte outside the translated text kept, and
inline markup carried to the translation by its alignment, always well nested."""
from __future__ import annotations

import json
import random
import re
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest

from worker.formats import Tag, parse
from worker.formats.markup import transfer

from .conftest import REPO_ROOT, run_nmt
from .test_queue_integration import client, redis_server, workers  # noqa: F401 (fixtures)
from .test_report import browser  # noqa: F401 (fixture: headless Chromium)

PAGE = """<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>A small shop</title>
<style>p { color: #333; } .x > b { font-weight: bold; }</style>
<script>var t = "<p>not text</p>"; if (a < b) {}</script></head>
<body>
  <!-- header -->
  <h1 class="title">Welcome to <em>our</em> shop</h1>
  <p>The <a href="https://example.com/x?a=1&amp;b=2" title="Go">big <b>red</b> dog</a> runs home.<br>A cat sleeps.</p>
  <p>Call <span translate="no">ACME&nbsp;Corp</span> today &amp; tomorrow.</p>
  <pre>  code   stays
    as it is</pre>
  <table><tr><th>Name</th><td><img src="dog.png" alt="a dog"> A dog</td></tr></table>
  <div class="notranslate">Keep this line</div>
</body>
</html>
"""


def words(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]


class Nesting(HTMLParser):
    """Fails on a closing tag that does not close the innermost open element."""

    VOID = {"br", "img", "meta", "wbr", "input", "link", "hr"}

    def __init__(self) -> None:
        super().__init__()
        self.stack, self.tags = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes {self.stack[-1:]}"
        self.stack.pop()


def well_nested(markup: str) -> list[str]:
    checker = Nesting()
    checker.feed(markup)
    checker.close()
    assert not checker.stack, f"never closed: {checker.stack}"
    return checker.tags


def test_units_keep_inline_tags_and_an_identity_render_keeps_every_byte():
    parsed = parse("html", PAGE)
    assert [u.text for u in parsed.units] == [
        "A small shop", "Welcome to our shop", "Go", "The big red dog runs home. A cat sleeps.",
        "Call today & tomorrow.", "Name", "a dog", "A dog"]
    assert [u.where for u in parsed.units][2::4] == ["a title", "img alt"]  # title and alt are translated too
    fourth = parsed.units[3]
    assert [(t.open, t.close, fourth.text[t.start:t.end]) for t in fourth.tags] == [
        ('<a href="https://example.com/x?a=1&amp;b=2" title="\ue0000\ue001">', "</a>", "big red dog"),
        ("<b>", "</b>", "red"), ("<br>", "", "")]
    links = [[(w, w) for w in words(u.text)] for u in parsed.units]
    assert parsed.render([u.text for u in parsed.units], links) == PAGE
    assert parsed.notes == {}


@pytest.mark.parametrize("code, text", [
    ("<code>nmt serve --port 8080</code>", "Run before you go."),  # kept whole, as one point
    ("<kbd>Ctrl</kbd>", "Run before you go."),
    ("<tt>configure</tt>", "Run before you go."),  # texinfo's and old manuals' code
    ("<var>file</var>", "Run before you go."),
    ('<code translate="yes">the server</code>', "Run the server before you go."),
])
def test_inline_code_is_kept_whole_unless_marked_translate_yes(code, text):
    page = f"<p>Run {code} before you go.</p>"
    [unit] = parse("html", page).units
    assert unit.text == text
    if "translate=" not in code:
        assert [t.open for t in unit.tags] == [code]


def test_an_undeclared_page_says_utf8_and_keeps_its_character_references():
    page = "<html><head><title>T</title></head><body><p>&copy; 2024 K&ouml;nig &mdash; Tom &amp; Bob</p></body></html>"
    parsed = parse("html", page)
    assert parsed.units[1].text == "2024 König Tom & Bob"  # © and — are fixed points, never translated
    translations = ["T", "2024 Königin Tom & Bob"]
    out = parsed.render(translations, [list(zip(words(u.text), words(t))) for u, t in zip(parsed.units, translations)])
    assert out == page.replace("<head>", '<head><meta charset="utf-8">').replace("K&ouml;nig", "K&ouml;nigin")
    declared = '<html><head><meta charset="iso-8859-1"><title>T</title></head><body><p>Hi</p></body></html>'
    assert parse("html", declared).render(["T", "Hi"], [[], []]).count("<meta") == 1  # made utf-8, not added
    fragment = "<p>Tom &amp; Bob</p>"
    assert parse("html", fragment).render(["Tom & Bob"], [[]]) == fragment  # no head: nothing added
    # ... and what the translation brings outside ASCII is written as references, which read the
    # same whatever encoding a browser guesses for an undeclared page (bash's examples INDEX.html)
    body = "<body><p>Tom &amp; Bob</p><script>var s = 'ä';</script></body>"
    out = parse("html", body).render(["Tom und Bob sind überall"], [[]])
    assert out == "<body><p>Tom und Bob sind &#252;berall</p><script>var s = 'ä';</script></body>"


def test_tags_follow_the_aligned_words_and_stay_nested_when_the_order_changes():
    source = "The big red dog runs home."
    tags = [Tag('<a href="x">', "</a>", 4, 15), Tag("<b>", "</b>", 8, 11)]
    translation = "Der Hund , rot und groß , rennt nach Hause."
    s, t = words(source), words(translation)
    # The -> Der, big -> groß, red -> rot, dog -> Hund, runs -> rennt, home. -> Hause.
    links = [(s[0], t[0]), (s[1], t[5]), (s[2], t[3]), (s[3], t[1]), (s[4], t[7]), (s[5], t[9])]
    pieces, notes = transfer(source, tags, translation, links)
    out = "".join(p.text for p in pieces)
    assert out == 'Der <a href="x">Hund , <b>rot</b> und groß</a> , rennt nach Hause.' and notes == []


PROJECTS = ('<p>It is used by <a href="https://example.org/sprits-it">sprits-it!</a>, '
            '<a href="https://example.org/fanfiction2ebook">fanfiction2ebook</a>, '
            '<a href="https://example.org/viserlalune">viserlalune</a> and '
            '<a href="https://example.org/Telemeta">Telemeta</a>.</p>')


def test_a_link_whose_words_the_model_left_out_keeps_its_source_text_set_apart_from_the_next_word():
    # EbookLib's README in an EPUB: the model left out "viserlalune and", so that link's neighbours
    # hold the words on both sides of it; it was written as <a href="..."></a>, its text lost
    parsed = parse("html", PROJECTS)
    (unit,) = parsed.units
    assert unit.text == "It is used by sprits-it!, fanfiction2ebook, viserlalune and Telemeta."
    translation = "Es wird von sprits-it!, fanfiction2ebook, Telemeta verwendet."
    s, t = words(unit.text), words(translation)
    # It -> Es, is -> wird, used -> verwendet, by -> von, the names to themselves; viserlalune and "and" to nothing
    out = parsed.render([translation], [[(s[0], t[0]), (s[1], t[1]), (s[2], t[6]), (s[3], t[2]), (s[4], t[3]),
                                         (s[5], t[4]), (s[8], t[5])]])
    found = re.findall(r'<a href="https://example.org/([^"]+)">([^<]*)</a>', out)
    assert [href for href, _ in found] == ["sprits-it", "fanfiction2ebook", "viserlalune", "Telemeta"]
    assert dict(found)["viserlalune"] == "viserlalune" and all(text.strip() for _, text in found)
    assert re.sub(r"<[^>]+>", "", out) == "Es wird von sprits-it!, fanfiction2ebook, viserlalune Telemeta verwendet."
    notes = parsed.notes[0]
    assert any(n.startswith('link "viserlalune"') and n.endswith("holds no word: no word is left for it between the "
                                                                 "links beside it") for n in notes), notes
    assert any(n.startswith('link "viserlalune"') and "kept its source text" in n for n in notes), notes


@pytest.mark.parametrize("written", ["html", "runs"])
def test_html_and_the_run_formats_share_one_policy_for_a_link_left_no_word(written):
    # the same kept text, set apart the same way, whichever writer puts it in the link (formats.markup):
    # HTML's <a>, or the sentinels DOCX, PPTX and ODF paragraphs number their links with
    source = "Read the guide and the questions page now."
    tags = [Tag('<a href="g">', "</a>", 5, 14), Tag('<a href="q">', "</a>", 19, 37)]
    if written == "runs":  # a link of a paragraph of runs: a sentinel numbered below 10 000
        tags = [Tag(f"\ue010o{k}\ue011", f"\ue010c{k}\ue011", tag.start, tag.end) for k, tag in enumerate(tags)]
    translation = "Lies."  # one word for the sentence, every source word aligned to it: the first link takes it
    s, t = words(source), words(translation)
    pieces, notes = transfer(source, tags, translation, [(w, t[0]) for w in s], keep_link_text=True)
    assert [p.text for p in pieces if not p.markup] == ["Lies", ".", "the questions page"]
    assert "".join(p.text for p in pieces).endswith(f". {tags[1].open}the questions page{tags[1].close}")
    assert any(n.startswith('link "the questions page"') and "kept its source text" in n for n in notes)
    pieces, notes = transfer(source, tags, translation, [(w, t[0]) for w in s])  # without the policy: as placed
    assert "".join(p.text for p in pieces if not p.markup) == translation


def test_crossing_spans_are_repaired_and_unaligned_tags_are_placed_by_position_with_a_note():
    source = "A B C D"
    tags = [Tag("<i>", "</i>", 0, 3), Tag("<b>", "</b>", 4, 7)]
    translation = "w x y z"
    s, t = words(source), words(translation)
    links = [(s[0], t[0]), (s[1], t[2]), (s[2], t[1]), (s[3], t[3])]  # <i> -> w..y, <b> -> x..z: they cross
    pieces, notes = transfer(source, tags, translation, links)
    out = "".join(p.text for p in pieces)
    assert sorted(well_nested(out)) == ["b", "i"] and notes == []
    pieces, notes = transfer("A B", [Tag("<u>", "</u>", 2, 3)], "x y", [(s[0], t[0])])  # B is unaligned
    assert "".join(p.text for p in pieces) == "x <u>y</u>" and "no aligned words" in notes[0]


def test_random_markup_and_alignments_always_come_out_well_nested_with_every_tag():
    rng = random.Random(7)
    for trial in range(300):
        n = rng.randint(1, 8)
        source = " ".join(f"s{i}" for i in range(n))
        s = words(source)
        tags, names = [], []

        def nest(first: int, last: int, depth: int) -> None:  # random well-nested tags over words first..last
            i = first
            while i <= last and depth < 3:
                j = rng.randint(i, last)
                if rng.random() < 0.5:
                    name = rng.choice("abiuq")
                    tags.append(Tag(f"<{name}>", f"</{name}>", s[i][0], s[j][1]))
                    names.append(name)
                    nest(i, j, depth + 1)
                elif rng.random() < 0.3:
                    tags.append(Tag("<br>", "", s[i][0], s[i][0], (True, rng.random() < 0.5)))
                    names.append("br")
                i = j + 1

        nest(0, n - 1, 0)
        m = rng.randint(0, 9)
        translation = " ".join(f"t{j}" for j in range(m))
        t = words(translation)
        links = [(s[i], t[j]) for i in range(n) for j in range(m) if rng.random() < 0.3]
        pieces, _ = transfer(source, tags, translation, links)
        out = "".join(p.text for p in pieces)
        assert sorted(well_nested(out)) == sorted(names), (trial, source, tags, translation, links, out)
        assert re.sub(r"<[^>]+>", "", out).split() == translation.split()


def test_nmt_translate_writes_an_html_page_a_browser_renders(tiny_bundle, tmp_path, browser):
    (tmp_path / "page.html").write_text(PAGE, encoding="utf-8")
    done = run_nmt("translate", "--bundle", str(tiny_bundle), "--device", "cpu", str(tmp_path / "page.html"),
                   "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    out = (tmp_path / "out" / "page.de.html").read_text(encoding="utf-8")
    assert sorted(well_nested(out)) == sorted(well_nested(PAGE))  # every tag, well nested
    for verbatim in ('<script>var t = "<p>not text</p>"; if (a < b) {}</script>', "<pre>  code   stays\n    as it is</pre>",
                     "<!-- header -->", '<span translate="no">ACME&nbsp;Corp</span>', '<img src="dog.png" alt="',
                     '<div class="notranslate">Keep this line</div>', '<a href="https://example.com/x?a=1&amp;b=2" title="'):
        assert verbatim in out
    payload = json.loads((tmp_path / "out" / "page.de.json").read_text(encoding="utf-8"))
    assert payload["format"] == "html" and len(payload["units"]) == 8
    # the alt text is a unit of its own, written back as translated (the tiny model's translation,
    # or its source kept and flagged where that translation dropped text)
    alt = next(u for u in payload["units"] if u["where"] == "img alt")
    assert alt["source"] == "a dog" and f'<img src="dog.png" alt="{alt["translation"]}">' in out
    assert alt["translation"] != "a dog" or any("kept_source" in s["flags"] for s in alt["segments"])
    page = browser.new_page()
    page.goto((tmp_path / "out" / "page.de.html").as_uri())
    shot = page.screenshot(full_page=True)
    assert page.locator("pre").inner_text() == "  code   stays\n    as it is"
    assert page.locator("a").count() == 1 and page.locator("a b").count() == 1  # the bold run stays inside the link
    assert page.locator("h1").inner_text().strip() and page.title().strip()
    assert len(shot) > 5000  # a rendered page, not a blank one
    (tmp_path / "out" / "page.de.png").write_bytes(shot)
    page.close()


def test_queue_jobs_name_a_format_or_take_it_from_the_path(workers, client, tmp_path):
    """A job in a format comes back as that format's file (text and NMT_OUTPUT_DIR); a malformed
    one fails naming the problem; a job by path takes its format from the extension."""
    from queue_config.names import FORMATS as QUEUE_FORMATS
    from worker.formats import FORMATS

    assert set(QUEUE_FORMATS) == set(FORMATS)
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "movie.srt").write_text("1\n00:00:01,000 --> 00:00:02,000\nA man sees\na dog.\n", encoding="utf-8")
    workers("w1", input_root=str(tmp_path / "in"))
    page = client.submit(text=PAGE, src="en", tgt="de", format="html", name="page")
    result = page.wait(timeout=120)
    assert sorted(well_nested(result.text)) == sorted(well_nested(PAGE))
    assert "<pre>  code   stays\n    as it is</pre>" in result.text and result.raw["format"] == "html"
    assert len(result.raw["units"]) == 8 and result.provenance["format"] == "html"
    assert (tmp_path / "out" / page.id / "page.de.html").read_text(encoding="utf-8") == result.text
    movie = client.submit(path="movie.srt", src="en", tgt="de").wait(timeout=120)
    assert movie.text.startswith("1\n00:00:01,000 --> 00:00:02,000\n") and len(movie.text.split("\n")) == 5
    broken = client.submit(text="1\nnot a timing\nA dog.\n", src="en", tgt="de", format="srt", name="broken")
    with pytest.raises(Exception, match="broken: not a valid SRT file"):
        broken.wait(timeout=60)
    with pytest.raises(ValueError, match="'format' must be one of"):
        client.submit(text="A dog.", src="en", tgt="de", format="pdf")


# -- no-break spaces and symbols ------------------------------------------------------------------
UTF8 = '<meta charset="utf-8">'
# The shipped model writes "©" as a word, "—" as "–", drops "™" and "€" and makes a no-break space a
# space; the reader collapsed a no-break space with the spaces around it. So they are fixed points.
@pytest.mark.parametrize("paragraph, text, fixed", [
    ("See section&nbsp;5 of the guide.", "See section 5 of the guide.", ["&nbsp;"]),
    ("Copyright &copy; 2024 ACME&reg; and Widget&trade; too.", "Copyright 2024 ACME and Widget too.",
     ["&copy;", "&reg;", "&trade;"]),
    ("The dog&mdash;a big one&mdash;runs home.", "The dog a big one runs home.", ["&mdash;", "&mdash;"]),
    ("The dog&#8212;a big one&#x2014;runs&#160;home &#169; 2024.", "The dog a big one runs home 2024.",
     ["&#8212;", "&#x2014;", "&#160;", "&#169;"]),
    ("It costs 5\u00a0\u20ac \u2014 or less&hellip;", "It costs 5 or less", ["\u00a0\u20ac", "\u2014", "&hellip;"]),
    ('Next: <a href="#u">Usage</a> &nbsp; [<a href="#i">Index</a>]', "Next: Usage [Index]",
     ['<a href="#u">', "&nbsp;", '<a href="#i">']),
    ('Up: <a href="#t">Time</a>&nbsp;[<a href="#i">Index</a>]', "Up: Time [Index]",
     ['<a href="#t">', "&nbsp;", '<a href="#i">']),
])
def test_no_break_spaces_and_symbols_are_fixed_points_the_model_never_sees(paragraph, text, fixed):
    page = f"{UTF8}<p>{paragraph}</p>"  # declared: an undeclared page writes what is not ASCII as references
    [unit] = parse("html", page).units
    assert unit.text == text
    assert [t.open for t in unit.tags] == fixed
    identity = parse("html", page).render([unit.text], [[(w, w) for w in words(unit.text)]])
    assert identity == page  # each one back where it was, as it was written


@pytest.mark.parametrize("paragraph, translation, links, expected", [
    # See -> Siehe, section -> Abschnitt, 5 -> 5, of the -> der, guide. -> Anleitung.
    ("See section&nbsp;5 of the guide.", "Siehe Abschnitt 5 der Anleitung.",
     [(0, 0), (1, 1), (2, 2), (3, 3), (4, 3), (5, 4)], "Siehe Abschnitt&nbsp;5 der Anleitung."),
    # A dash follows the word it is glued to (dog: Hund; one: großer), wherever that goes
    ("The dog&mdash;a big one&mdash;runs home.", "Der Hund ein großer läuft nach Hause.",
     [(0, 0), (1, 1), (2, 2), (3, 3), (4, 3), (5, 4), (6, 6)], "Der Hund&mdash;ein großer&mdash;läuft nach Hause."),
    ("The big dog&mdash;it runs home.", "Er läuft, der große Hund, nach Hause.",
     [(0, 2), (1, 3), (2, 4), (3, 0), (4, 1), (5, 6)], "Er läuft, der große Hund,&mdash;nach Hause."),
    ("It costs 5&nbsp;&euro; a month.", "Es kostet 5 im Monat.",
     [(0, 0), (1, 1), (2, 2), (3, 3), (4, 4)], "Es kostet 5&nbsp;&euro; im Monat."),
    ("Copyright &copy; 2024 ACME&reg; Inc.", "Urheberrecht 2024 ACME Inc.",
     [(0, 0), (1, 1), (2, 2), (3, 3)], "Urheberrecht &copy; 2024 ACME&reg; Inc."),
])
def test_fixed_points_follow_the_aligned_words(paragraph, translation, links, expected):
    [unit] = parse("html", f"{UTF8}<p>{paragraph}</p>").units
    s, t = words(unit.text), words(translation)
    out = parse("html", f"{UTF8}<p>{paragraph}</p>").render([translation], [[(s[i], t[j]) for i, j in links]])
    assert out == f"{UTF8}<p>{expected}</p>"


SYMBOLS = "\xa0©®™—–€…¶§"  # what the model dropped or changed; a no-break space first


class Blocks(HTMLParser):
    """The text of a page as a browser decodes it, per block (cut at every tag that is not inline),
    blocks of ordinary whitespace alone left out; and the links' targets in order."""

    INLINE = {"a", "abbr", "b", "cite", "code", "em", "i", "kbd", "samp", "span", "strong", "tt", "var", "br", "img"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks, self.hrefs = [""], []

    def handle_starttag(self, tag, attrs):
        if tag == "a" and dict(attrs).get("href"):
            self.hrefs.append(dict(attrs)["href"])
        if tag not in self.INLINE:
            self.blocks.append("")

    def handle_endtag(self, tag):
        if tag not in self.INLINE:
            self.blocks.append("")

    def handle_data(self, data):
        self.blocks[-1] += data


def blocks_of(page: str) -> Blocks:
    found = Blocks()
    found.feed(page)
    found.close()
    found.blocks = [b for b in found.blocks if b.strip(" \t\r\n\f")]
    return found


def test_random_paragraphs_keep_every_fixed_point_once_whatever_the_translation_and_links():
    rng = random.Random(11)
    pieces = ["dog", "runs", "&nbsp;", "&copy;", "\u2014", "ACME&reg;", "dog&mdash;cat", "5&nbsp;&euro;", "&#160;",
              "&#x2014;x", "<b>big&nbsp;red</b>", '<a href="#a">the&trade; index</a>', "<br>", "Inc.&hellip;"]
    for trial in range(300):
        paragraph = "".join(rng.choice(pieces) + rng.choice(["", " ", " ", "  "]) for _ in range(rng.randint(1, 8)))
        parsed = parse("html", f"<p>{paragraph}</p>")
        translations = [" ".join(rng.choice(["Haus", "rot", "läuft", "-", "1."]) for _ in range(rng.randint(0, 8)))
                        for _ in parsed.units]
        links = [[(a, b) for a in words(u.text) for b in words(t) if rng.random() < 0.3]
                 for u, t in zip(parsed.units, translations)]
        out = parsed.render(translations, links)
        assert sorted(well_nested(out)) == sorted(well_nested(f"<p>{paragraph}</p>")), (paragraph, out)
        before, after = blocks_of(f"<p>{paragraph}</p>").blocks, blocks_of(out).blocks
        for symbol in SYMBOLS:
            assert "".join(after).count(symbol) == "".join(before).count(symbol), (trial, paragraph, out)


MANUALS = [Path("/usr/share/doc/time/time.html"), Path("/usr/share/doc/libffi8/html/index.html")]
NUMERIC = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Prices</title></head><body>
<p>The basic plan costs 5&#160;&#8364; a month&#8212;the best offer in town.</p>
<p>Copyright &#169; 2024 ACME&#174; Cloud&#8482;. All rights reserved.</p>
<p>See section&#xA0;4 for the terms &#x2014; they apply to every user&#x2026;</p>
</body></html>
"""


@pytest.mark.slow
def test_real_pages_keep_every_no_break_space_symbol_and_link_through_the_shipped_model(tmp_path):
    """GNU time's manual (41 ``&nbsp;`` in navigation lines and index tables, ``&mdash;``,
    ``&hellip;``), libffi's index (``&copy;``, ``&ndash;``) and a page of numeric references, through
    ``nmt translate`` with the shipped bundle: per block of browser text, as many no-break spaces and
    each symbol as the source, and every link's target in order."""
    bundle = REPO_ROOT / "models" / "en-de"
    pages = [p for p in MANUALS if p.exists()]
    if not (bundle / "manifest.json").exists() or not pages:
        pytest.skip("models/en-de or the manual pages (Debian's time, libffi-dev) are missing")
    (tmp_path / "numeric.html").write_text(NUMERIC, encoding="utf-8")
    done = run_nmt("translate", "--bundle", str(bundle), "--device", "cpu", *map(str, pages),
                   str(tmp_path / "numeric.html"), "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr[-2000:]
    counted = Counter()
    for page in pages + [tmp_path / "numeric.html"]:
        source = page.read_text(encoding="utf-8")
        out = (tmp_path / "out" / page.name.replace(".html", ".de.html")).read_text(encoding="utf-8")
        before, after = blocks_of(source), blocks_of(out)
        assert len(after.blocks) == len(before.blocks), page
        for old, new in zip(before.blocks, after.blocks):
            for symbol in SYMBOLS:
                assert new.count(symbol) == old.count(symbol), (page.name, repr(symbol), old, new)
                counted[symbol] += old.count(symbol)
        assert after.hrefs == before.hrefs, page
        assert out != source
    assert counted["\xa0"] >= 10 and counted["©"] >= 2 and counted["—"] >= 2 and counted["€"] == 1
    out = (tmp_path / "out" / "numeric.de.html").read_text(encoding="utf-8")
    for reference in ("&#160;", "&#8364;", "&#8212;", "&#169;", "&#174;", "&#8482;", "&#xA0;", "&#x2014;", "&#x2026;"):
        assert out.count(reference) == NUMERIC.count(reference), reference  # written as the page wrote it


# -- codes keep their quotes and their spaces -----------------------------------------------------------------
# Paragraphs of the sweep's texinfo manuals (gettext's texi2html manual and javadoc pages, m4's and libgcrypt's
# makeinfo manuals), where the shipped model's translation came back with codes out of their quotes and glued to
# words: "erweitert<tt>Makefile</tt>in »'«<tt>po/</tt>", "<code>CultureInfo</code>die", "<code>NULL</code>die".
TEXINFO_PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Manual</title></head><body>
<h3>13.4.4 Extending &lsquo;<tt>Makefile</tt>&rsquo; in &lsquo;<tt>po/</tt>&rsquo;</h3>
<p>In the Sun approach, the translation files are called
       "<VAR>Resource</VAR>_<VAR>locale</VAR>.properties" and have non-ASCII characters.</p>
<blockquote>The gettext approach uses the <CODE>CultureInfo</CODE>, not the resource name.</blockquote>
<p>Allocate and return a new point object and initialize it with
<var>point</var>.  If <var>point</var> is <code>NULL</code>, the function is identical to
<code>gcry_mpi_point_new(0)</code>.</p>
<p>The quote delimiters can be changed with <code>changequote</code>, and the default end-quote delimiter
(<code>'</code>) is used when <var>end</var> is missing.</p>
<p>Calling <code>changequote</code> with &lsquo;<code>[</code>&rsquo; and &lsquo;<code>]</code>&rsquo; makes the
brackets quotes.</p>
</body></html>
"""
QUOTED = ["&lsquo;<tt>Makefile</tt>&rsquo;", "&lsquo;<tt>po/</tt>&rsquo;", "(<code>'</code>)",
          '"<VAR>Resource</VAR>_<VAR>locale</VAR>.properties"', "&lsquo;<code>[</code>&rsquo;",
          "&lsquo;<code>]</code>&rsquo;"]


@pytest.mark.slow
def test_texinfo_codes_keep_their_quotes_and_their_spaces_through_the_shipped_model(tmp_path):
    """``nmt translate`` with models/en-de: every quoted code comes back in its quotes, and the content checker
    (tests/content_check.py, reading the page as a browser does) finds no code glued to a word on a side where
    the source had a space or punctuation."""
    from .content_check import check_file

    bundle = REPO_ROOT / "models" / "en-de"
    if not (bundle / "manifest.json").exists():
        pytest.skip("models/en-de not present")
    (tmp_path / "manual.html").write_text(TEXINFO_PAGE, encoding="utf-8")
    done = run_nmt("translate", "--bundle", str(bundle), "--device", "cpu", str(tmp_path / "manual.html"),
                   "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr[-2000:]
    out = (tmp_path / "out" / "manual.de.html").read_text(encoding="utf-8")
    for code in QUOTED:
        assert out.count(code) == TEXINFO_PAGE.count(code), (code, out)
    assert sorted(well_nested(out)) == sorted(well_nested(TEXINFO_PAGE))
    findings = check_file("html", TEXINFO_PAGE.encode("utf-8"), out.encode("utf-8"))
    assert [f for f in findings if f.check == "code" and f.output.endswith("(glued)")] == [], out
