"""XLIFF 1.2 and 2.0: units without a target get one, with the source's inline codes placed by the
alignment; translate="no" units, existing targets and every other byte are kept."""
from __future__ import annotations

import html
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest

from worker.formats import FormatError, format_of, parse

from .conftest import REPO_ROOT, run_nmt

XLIFF12 = '''<?xml version="1.0" encoding="UTF-8"?>
<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2">
  <file source-language="en" target-language="de" datatype="plaintext" original="app">
    <header><note>Build 12 &amp; more</note></header>
    <body>
      <trans-unit id="greet">
        <source>A man sees <g id="1">a big</g> dog, %s!</source>
        <note from="dev">Shown at start</note>
      </trans-unit>
      <trans-unit id="done">
        <source>The cat sleeps.</source>
        <target state="translated">Die Katze schläft.</target>
      </trans-unit>
      <trans-unit id="brand" translate="no">
        <source>ACME Cloud</source>
      </trans-unit>
      <trans-unit id="save">
        <source>Click <x id="2"/> to see the {name} &amp; the red ball.</source>
        <target/>
      </trans-unit>
      <group restype="x-gettext-plurals">
        <trans-unit id="dogs[0]"><source>One dog runs.</source><target></target></trans-unit>
        <trans-unit id="dogs[1]"><source>%d dogs run.</source></trans-unit>
      </group>
    </body>
  </file>
</xliff>
'''

XLIFF20 = '''<?xml version="1.0" encoding="UTF-8"?>
<xliff xmlns="urn:oasis:names:tc:xliff:document:2.0" version="2.0" srcLang="en" trgLang="de">
 <file id="f1">
  <unit id="u1">
   <segment>
    <source>A dog sees <pc id="1">the red</pc> ball.</source>
   </segment>
  </unit>
  <unit id="u2" translate="no"><segment><source>ACME</source></segment></unit>
  <unit id="u3"><segment state="final"><source>A cat.</source><target>Eine Katze.</target></segment></unit>
 </file>
</xliff>
'''


def words(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in re.finditer(r"\S+", text)]


def identity(parsed):
    words = [[(m.span(), m.span()) for m in re.finditer(r"\S+", u.text)] for u in parsed.units]
    return parsed.render([u.text for u in parsed.units], words)


def test_xliff12_units_targets_and_everything_else_kept():
    parsed = parse("xliff", XLIFF12)
    assert [(u.where, u.text) for u in parsed.units] == [
        ("trans-unit greet", "A man sees a big dog, %s!"), ("trans-unit save", "Click to see the {name} & the red ball."),
        ("trans-unit dogs[0]", "One dog runs."), ("trans-unit dogs[1]", "%d dogs run.")]
    out = identity(parsed)
    assert ('<source>A man sees <g id="1">a big</g> dog, %s!</source>\n        '
            '<target state="needs-review-translation">A man sees <g id="1">a big</g> dog, %s!</target>\n') in out
    assert '<target state="needs-review-translation">Click <x id="2"/> to see the {name} &amp; the red ball.</target>' in out
    assert '<source>One dog runs.</source><target state="needs-review-translation">One dog runs.</target>' in out
    assert '<source>%d dogs run.</source><target state="needs-review-translation">%d dogs run.</target>' in out
    # What was not a missing target is unchanged: remove the new targets and the file is the input.
    restored = re.sub(r'\n? *<target state="needs-review-translation">.*?</target>', "", out)
    assert restored == XLIFF12.replace("\n        <target/>", "").replace("<target></target>", "")
    ET.fromstring(out.encode("utf-8"))  # well-formed XML


def test_xliff20_segments_get_targets_and_translate_no_units_are_skipped():
    parsed = parse("xliff", XLIFF20)
    assert [u.text for u in parsed.units] == ["A dog sees the red ball."]
    out = identity(parsed)
    assert '<source>A dog sees <pc id="1">the red</pc> ball.</source>\n    <target>A dog sees <pc id="1">the red</pc> ball.</target>' in out
    assert "<source>ACME</source></segment>" in out and "<target>Eine Katze.</target>" in out
    ET.fromstring(out.encode("utf-8"))


@pytest.mark.parametrize("text, error", [("<xliff version='1.2'><file>", "not a valid XLIFF file"),
                                         ("<html><body>x</body></html>", "not an XLIFF file")])
def test_malformed_xliff_is_a_format_error(text, error):
    with pytest.raises(FormatError, match=error):
        parse("xliff", text)


def test_nmt_translate_fills_an_xliff_file(tiny_bundle, tmp_path):
    assert format_of("app.xlf") == format_of("app.XLIFF") == "xliff"
    (tmp_path / "app.xlf").write_text(XLIFF12, encoding="utf-8")
    done = run_nmt("translate", "--bundle", str(tiny_bundle), "--device", "cpu", str(tmp_path / "app.xlf"),
                   "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    root = ET.fromstring((tmp_path / "out" / "app.de.xlf").read_bytes())
    ns = {"x": "urn:oasis:names:tc:xliff:document:1.2"}
    targets = {u.get("id"): u.find("x:target", ns) for u in root.iter("{urn:oasis:names:tc:xliff:document:1.2}trans-unit")}
    assert targets["done"].text == "Die Katze schläft." and targets["brand"] is None
    for unit in ("greet", "save", "dogs[0]", "dogs[1]"):
        assert targets[unit].get("state") == "needs-review-translation" and "".join(targets[unit].itertext()).strip()
    assert targets["greet"].find("x:g", ns) is not None and targets["save"].find("x:x", ns) is not None


def test_the_translation_languages_are_written_where_the_file_names_none():
    bare20 = XLIFF20.replace(' srcLang="en" trgLang="de"', "")
    out = identity(parse("xliff", bare20, ("en", "de")))
    root = ET.fromstring(out.encode("utf-8"))
    assert (root.get("srcLang"), root.get("trgLang")) == ("en", "de")
    assert out.replace(' srcLang="en" trgLang="de"', "") == identity(parse("xliff", bare20))  # nothing else moves
    bare12 = XLIFF12.replace(' target-language="de"', "")
    file = ET.fromstring(identity(parse("xliff", bare12, ("en", "de"))).encode("utf-8")).find(
        "{urn:oasis:names:tc:xliff:document:1.2}file")
    assert (file.get("source-language"), file.get("target-language")) == ("en", "de")
    # A region or script subtag is the same language; the file's own spelling is kept.
    regional = identity(parse("xliff", XLIFF20.replace('srcLang="en"', 'srcLang="en-US"'), ("en", "de")))
    assert 'srcLang="en-US" trgLang="de"' in regional


@pytest.mark.parametrize("text, named", [
    (XLIFF20.replace('trgLang="de"', 'trgLang="fr"'), 'trgLang="fr"'),
    (XLIFF12.replace('source-language="en"', 'source-language="de-DE"'), 'source-language="de-DE"'),
])
def test_a_file_for_other_languages_is_refused_with_them_named(text, named):
    with pytest.raises(FormatError, match=f"{named}, but this translation is en->de"):
        parse("xliff", text, ("en", "de"))


def test_nmt_translate_names_the_target_language_of_a_file_without_one(tiny_bundle, tmp_path):
    (tmp_path / "bare.xlf").write_text(XLIFF20.replace(' srcLang="en" trgLang="de"', ' srcLang="en"'), encoding="utf-8")
    (tmp_path / "french.xlf").write_text(XLIFF20.replace('trgLang="de"', 'trgLang="fr"'), encoding="utf-8")
    done = run_nmt("translate", "--bundle", str(tiny_bundle), "--device", "cpu", str(tmp_path / "bare.xlf"),
                   str(tmp_path / "french.xlf"), "--out", str(tmp_path / "out"))
    assert done.returncode != 0 and 'trgLang="fr"' in done.stderr
    root = ET.fromstring((tmp_path / "out" / "bare.de.xlf").read_bytes())
    assert root.get("trgLang") == "de" and not (tmp_path / "out" / "french.de.xlf").exists()


WORDLESS = '''<?xml version="1.0" encoding="UTF-8"?>
<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2">
 <file original="t" source-language="en" target-language="de" datatype="plaintext">
  <body>
   <trans-unit id="n"><source>42</source></trans-unit>
   <trans-unit id="cell"><source>1.234,56 <x id="1"/></source><target/></trans-unit>
   <trans-unit id="text"><source>Hi <x id="1"/></source><target/></trans-unit>
   <trans-unit id="empty"><source/></trans-unit>
  </body>
 </file>
</xliff>'''


def test_every_unit_with_a_source_gets_a_target_a_wordless_one_a_copy_marked_final():
    parsed = parse("xliff", WORDLESS)
    assert [u.text for u in parsed.units] == ["Hi"]  # only the unit with words goes to the model
    out = parsed.render(["Hallo"], [[((0, 2), (0, 5))]])
    units = {u.get("id"): u for u in ET.fromstring(out).iter("{urn:oasis:names:tc:xliff:document:1.2}trans-unit")}
    target = "{urn:oasis:names:tc:xliff:document:1.2}target"
    assert units["n"].find(target).text == "42" and units["n"].find(target).get("state") == "final"
    assert '<target state="final">1.234,56 <x id="1"/></target>' in out  # an empty <target/> filled with the copy
    assert '<target state="needs-review-translation">Hallo <x id="1"/></target>' in out
    assert units["empty"].find(target) is None


# -- HTML escaped in the text (html2po -> po2xliff) -----------------------------------------------
ESCAPED = '''<?xml version="1.0" encoding="UTF-8"?>
<xliff xmlns="urn:oasis:names:tc:xliff:document:1.1" version="1.1">
  <file original="faq.po" source-language="en-US" datatype="po">
    <body>
      <trans-unit xml:space="preserve" id="1">
        <source>1.1. &lt;a href="faq.html#faq.pronounce"&gt;How do you say it?&lt;/a&gt;&lt;br&gt;1.2. &lt;a href="faq.html#faq.whence"&gt;Where is the name from?&lt;/a&gt;</source>
        <target></target>
      </trans-unit>
      <trans-unit xml:space="preserve" id="2">
        <source>Read &lt;b&gt;the guide <x id="1"/> first&lt;/b&gt; &amp;amp; the FAQ.</source>
      </trans-unit>
      <trans-unit xml:space="preserve" id="3"><source>Usage: %s &lt;file&gt; [options]</source></trans-unit>
      <trans-unit id="4"><source>Copyright © 2008–2019 Anthony&#160;Green.</source></trans-unit>
    </body>
  </file>
</xliff>
'''


def test_escaped_html_in_a_unit_is_inline_codes_the_model_never_sees():
    parsed = parse("xliff", ESCAPED)
    assert [u.text for u in parsed.units] == [
        "1.1. How do you say it? 1.2. Where is the name from?",  # the <br> parts the words, as a page shows them
        "Read the guide  first & the FAQ.", "Usage: %s <file> [options]",  # <file> is no HTML: text
        "Copyright 2008 2019 Anthony Green."]  # ©, – and the no-break space are fixed points
    first, second = parsed.units[:2]
    assert [(t.open, t.close) for t in first.tags] == [
        ('&lt;a href="faq.html#faq.pronounce"&gt;', "&lt;/a&gt;"), ("&lt;br&gt;", ""),
        ('&lt;a href="faq.html#faq.whence"&gt;', "&lt;/a&gt;")]
    # the HTML <b> pairs across the file's own <x/>
    assert [(t.open, t.close) for t in second.tags] == [("&lt;b&gt;", "&lt;/b&gt;"), ('<x id="1"/>', "")]
    translations = ["1.1. Wie sagt man es? 1.2. Woher kommt der Name?", "Lies zuerst die Anleitung & das FAQ.",
                    "Aufruf: %s <file> [Optionen]", "Copyright 2008 2019 Anthony Green."]
    pairs = [[(0, 0), (1, 1), (3, 3), (4, 2), (5, 4), (6, 5), (7, 6), (8, 7), (9, 8), (10, 9), (11, 6)],
             [(0, 0), (1, 2), (2, 3), (3, 1), (4, 4), (5, 5), (6, 6)], [(0, 0), (1, 1), (2, 2), (3, 3)],
             [(0, 0), (1, 1), (2, 2), (3, 3), (4, 4)]]
    links = [[(words(u.text)[i], words(tr)[j]) for i, j in p] for u, tr, p in zip(parsed.units, translations, pairs)]
    out = parsed.render(translations, links)
    assert ('1.1. &lt;a href="faq.html#faq.pronounce"&gt;Wie sagt man es?&lt;/a&gt;&lt;br&gt;1.2. '
            '&lt;a href="faq.html#faq.whence"&gt;Woher kommt der Name?&lt;/a&gt;</target>') in out
    assert re.search(r'>Lies &lt;b&gt;[^<&]*<x id="1"/>[^<&]*&lt;/b&gt; &amp;amp; das FAQ\.</target>', out)
    assert ">Aufruf: %s &lt;file&gt; [Optionen]</target>" in out  # text, escaped once
    assert ">Copyright © 2008–2019 Anthony\xa0Green.</target>" in out
    ET.fromstring(out.encode("utf-8"))


EDGES = '''<?xml version="1.0" encoding="UTF-8"?>
<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2">
 <file source-language="en" target-language="de" datatype="plaintext" original="edges">
  <body>
   <trans-unit id="code-last" xml:space="preserve"><source>Open the menu <g id="1">File</g> <x id="2"/></source>
   </trans-unit>
   <trans-unit id="space-after-code" xml:space="preserve"><source>Save the file <x id="1"/> </source></trans-unit>
   <trans-unit id="lines" xml:space="preserve"><source>
  The dog runs home. <x id="1"/>
</source></trans-unit>
   <trans-unit id="html" xml:space="preserve"><source>  Read &lt;a href="a.html"&gt;the guide&lt;/a&gt;
</source></trans-unit>
   <trans-unit id="collapsed"><source>  The cat sleeps. <x id="1"/>  </source></trans-unit>
  </body>
 </file>
</xliff>
'''


def edges(text: str) -> tuple[str, str]:
    return text[:len(text) - len(text.lstrip())], text[len(text.rstrip()):]


def source_and_target(xliff: str) -> list[tuple[str, str, str]]:
    """(id, source content, target content) of each unit with a target, as written."""
    return re.findall(r'<trans-unit[^>]*?\sid="([^"]*)"[^>]*>\s*<source>(.*?)</source>\s*<target[^>]*>(.*?)</target>',
                      xliff, re.S)


@pytest.mark.parametrize("pad", [None, "", " ", "\n", " \n "])
def test_preserved_targets_have_the_sources_edge_whitespace_and_no_more(pad):
    """The engine hands back a unit's translation with the whitespace its text had at its edges
    (pad None: ``Save the file `` -> ``Speichern Sie die Datei ``), which came after the last code:
    one space too many. Other whitespace at a translation's edges is not the source's either."""
    parsed = parse("xliff", EDGES)
    translations = [(edges(u.text)[0] if pad is None else pad) + " ".join(w.upper() for w in u.text.split())
                    + (edges(u.text)[1] if pad is None else pad) for u in parsed.units]
    out = parsed.render(translations, [list(zip(words(u.text), words(t))) for u, t in zip(parsed.units, translations)])
    found = source_and_target(out)
    assert len(found) == 5
    for unit, source, target in found:
        assert edges(target) == (edges(source) if unit != "collapsed" else ("", "")), (unit, source, target)


def converter(name: str) -> str:
    """A translate-toolkit converter installed beside this Python."""
    path = shutil.which(name, path=str(Path(sys.executable).parent))
    if path is None:
        pytest.skip(f"{name} is not installed (translate-toolkit)")
    return path


def converted(*args: str) -> None:
    done = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]


FAQ = Path("/usr/share/doc/valgrind/html/faq.html")  # 59 links, most in the questions' list
_TRANSLATED_ATTRIBUTE = re.compile(r'\s(?:title|alt|summary)="[^"]*"')  # html2po makes each a message of its own


def html_tags(html: str) -> Counter:
    return Counter(_TRANSLATED_ATTRIBUTE.sub("", tag) for tag in re.findall(r"<[^<>]+>", html))


@pytest.mark.slow
def test_html2po_po2xliff_nmt_xliff2po_po2html_keeps_every_link_of_a_real_page(tmp_path):
    """A real manual page through translate-toolkit and the shipped bundle: its units hold the
    page's HTML as escaped text, which the model never sees; every unit's links come back in their
    order and every tag as written, and so does the page after po2html; each target's edge
    whitespace is its source's (po2xliff sets xml:space="preserve"), on the page and on EDGES."""
    bundle = REPO_ROOT / "models" / "en-de"
    if not FAQ.exists() or not (bundle / "manifest.json").exists():
        pytest.skip(f"{FAQ} (Debian's valgrind) or models/en-de is missing")
    converted(converter("html2po"), str(FAQ), str(tmp_path / "faq.po"))
    converted(converter("po2xliff"), str(tmp_path / "faq.po"), str(tmp_path / "faq.xlf"))
    (tmp_path / "edges.xlf").write_text(EDGES, encoding="utf-8")
    xlf = (tmp_path / "faq.xlf").read_text(encoding="utf-8")
    units = parse("xliff", xlf).units
    assert sum(len(u.tags) for u in units) >= 100
    assert not any("href" in u.text or re.search(r"</?[a-z]+[ >]", u.text) for u in units)  # no tag reaches the model
    done = run_nmt("translate", "--bundle", str(bundle), "--device", "cpu", str(tmp_path / "faq.xlf"),
                   str(tmp_path / "edges.xlf"), "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr[-2000:]
    out = (tmp_path / "out" / "faq.de.xlf").read_text(encoding="utf-8")
    linked = 0
    for unit, source, target in source_and_target(out):
        old, new = html.unescape(source), html.unescape(target)
        assert re.findall(r'href="([^"]*)"', new) == re.findall(r'href="([^"]*)"', old), (unit, source, target)
        assert Counter(re.findall(r"<[^<>]+>", new)) == Counter(re.findall(r"<[^<>]+>", old)), (unit, source, target)
        assert edges(target) == edges(source), (unit, source, target)
        linked += "href" in old
    assert linked >= 20
    for unit, source, target in source_and_target((tmp_path / "out" / "edges.de.xlf").read_text(encoding="utf-8")):
        assert edges(target) == (edges(source) if unit != "collapsed" else ("", "")), (unit, source, target)
    converted(converter("xliff2po"), str(tmp_path / "out" / "faq.de.xlf"), str(tmp_path / "faq.de.po"))
    converted(converter("po2html"), "--fuzzy", "-t", str(FAQ), str(tmp_path / "faq.de.po"),
              str(tmp_path / "faq.de.html"))
    page, translated = FAQ.read_text(encoding="utf-8"), (tmp_path / "faq.de.html").read_text(encoding="utf-8")
    hrefs = re.findall(r'<a\s[^>]*href="([^"]*)"', page)
    assert len(hrefs) >= 50 and re.findall(r'<a\s[^>]*href="([^"]*)"', translated) == hrefs
    assert html_tags(translated) == html_tags(page) and translated != page
