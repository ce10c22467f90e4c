"""XLIFF 1.2 and 2.0: units without a target get one, with the source's inline codes placed by the
alignment; translate="no" units, existing targets and every other byte are kept."""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from worker.formats import FormatError, format_of, parse

from .conftest import run_nmt

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
