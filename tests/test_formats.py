"""File formats: subtitles (SRT) and gettext catalogues (PO) read into units and written back with
every byte outside the translated text kept."""
from __future__ import annotations

import json
import re

import polib
import pytest

from worker.formats import FormatError, format_of, parse, rebreak

from .conftest import run_nmt, zip_of

SRT = ("1\r\n00:00:01,000 --> 00:00:02,500\r\nA man sees\r\na dog.\r\n\r\n"
       "2\r\n00:00:03,000 --> 00:00:04,000 X1:10 X2:20\r\n<i>The cat runs home.</i>\r\n\r\n"
       "3\r\n00:00:05,000 --> 00:00:06,000\r\nA <b>big</b> red ball.\r\n")

PO = '''# Translations of the toy program.
msgid ""
msgstr ""
"Content-Type: text/plain; charset=UTF-8\\n"
"Plural-Forms: nplurals=2; plural=(n != 1);\\n"

#: src/main.c:10
#, c-format
msgid "A man sees %s."
msgstr ""

msgctxt "menu"
msgid ""
"The cat "
"runs home."
msgstr ""

#, fuzzy
msgid "A dog."
msgstr "Ein Hund?"

msgid "A red ball."
msgstr "Ein roter Ball."

msgid "A big dog."
msgid_plural "%d big dogs."
msgstr[0] ""
msgstr[1] ""

#~ msgid "A ball."
#~ msgstr ""
'''


def test_rebreak_balances_lines_and_keeps_every_word():
    assert rebreak("one two three four", 2) == ["one two", "three four"]
    assert rebreak("one", 2) == ["one", ""]
    assert rebreak("a bb ccc dddd eeeee", 3) == ["a bb ccc", "dddd", "eeeee"]
    assert " ".join(rebreak("a b c d e f g", 3)).split() == list("abcdefg")


def test_srt_units_and_an_identity_render_keeps_every_byte():
    parsed = parse("srt", SRT)
    assert [(u.text, u.where, u.lines) for u in parsed.units] == [
        ("A man sees a dog.", "cue 1", 2), ("The cat runs home.", "cue 2", 1), ("A big red ball.", "cue 3", 1)]
    # Inline markup inside a cue is an inline code, placed by the alignment like any format's.
    assert parsed.units[2].warnings == ()
    assert [(t.open, t.close, parsed.units[2].text[t.start:t.end]) for t in parsed.units[2].tags] == [
        ("<b>", "</b>", "big")]
    assert parsed.render([u.text for u in parsed.units]).replace("A man sees a dog.", "") == SRT.replace(
        "A man sees\r\na dog.", "A man sees\r\na dog.").replace("A man sees a dog.", "")
    out = parsed.render(["Ein Mann sieht einen Hund.", "Die Katze rennt.", "Ein Ball."])
    assert out == SRT.replace("A man sees\r\na dog.", "Ein Mann sieht\r\neinen Hund.").replace(
        "<i>The cat runs home.</i>", "<i>Die Katze rennt.</i>").replace("A <b>big</b> red ball.", "<b>Ein</b> Ball.")


VTT = ("WEBVTT - toy\n\nSTYLE\n::cue { color: yellow }\n\nNOTE reviewed --- keep\n\n"
       "intro\n00:01.000 --> 00:02.500 align:start line:0\n<v Bob>A man sees\na dog.\n\n"
       "00:03.000 --> 00:04.000\n<i>The cat runs home.</i>\n")


def test_vtt_keeps_header_blocks_identifiers_settings_and_voice_tags():
    parsed = parse("vtt", VTT)
    assert [(u.text, u.where, u.lines) for u in parsed.units] == [
        ("A man sees a dog.", "cue intro", 2), ("The cat runs home.", "cue 2", 1)]
    assert parsed.render([u.text for u in parsed.units]) == VTT
    out = parsed.render(["Ein Mann sieht einen Hund.", "Die Katze rennt."])
    assert out == VTT.replace("<v Bob>A man sees\na dog.", "<v Bob>Ein Mann sieht\neinen Hund.").replace(
        "The cat runs home.", "Die Katze rennt.")
    with pytest.raises(FormatError, match="not a valid WebVTT file"):
        parse("vtt", "no header\n00:01.000 --> 00:02.000\nText\n")


TURNS_AND_TAGS = ("1\n00:00:01,000 --> 00:00:02,000\n- How are you?\n- He did it.\n\n"
                  "2\n00:00:03,000 --> 00:00:04,000\nThis is <s>wrong</s> now.\n\n"
                  "3\n00:00:05,000 --> 00:00:06,000\n<font color=\"red\">Red</font> <blink>alert</blink> here.\n")


def test_srt_speaker_turns_keep_their_lines_and_every_tag_is_an_inline_code():
    parsed = parse("srt", TURNS_AND_TAGS)
    assert [u.text for u in parsed.units] == ["- How are you?", "- He did it.", "This is wrong now.", "Red alert here."]
    assert [t.open for t in parsed.units[2].tags] == ["<s>"]  # SubRip's strike-through: never text for the model
    assert [t.open for t in parsed.units[3].tags] == ['<font color="red">', "<blink>"]  # an unknown tag too
    out = parsed.render(["- Wie geht es?", "- Er war es.", "Das ist jetzt falsch.", "Roter Alarm hier."],
                        [[], [], [((8, 13), (17, 23))], [((0, 3), (0, 5)), ((4, 9), (6, 11))]])
    assert "- Wie geht es?\n- Er war es.\n" in out  # each speaker keeps a line
    assert "Das ist jetzt <s>falsch</s>." in out and '<font color="red">Roter</font> <blink>Alarm</blink> hier.' in out


# pysrt 1.1.2's tests/static/capability_tester.srt: tags of no format (with an underscore, with
# attributes, never closed or never opened) and ASS override codes, which SubRip players honour.
CAPABILITY_TESTER = ("7\r\n00:00:14,501 --> 00:00:17,500\r\nIt would be a good thing to\r\n"
                     "<invalid_tag>hide invalid html tags that are closed and show the text in them</invalid_tag>\r\n"
                     "<invalid_tag_unclosed>but show un-closed invalid html tags\r\n"
                     "Show not opened tags</invalid_tag_not_opened>\r\n\r\n"
                     "14\r\n00:00:24,501 --> 00:00:26,500\r\nThis text should be at the\r\n"
                     "top and horizontally at the left{\\an7}\r\n\r\n"
                     "15\r\n00:00:24,501 --> 00:00:26,500\r\n{\\an4}This text should be at the\r\n"
                     "middle and horizontally at the left\r\n")


def test_srt_unknown_tags_and_ass_override_codes_are_inline_codes_never_text():
    parsed = parse("srt", CAPABILITY_TESTER)
    assert [u.text for u in parsed.units] == [
        "It would be a good thing to hide invalid html tags that are closed and show the text in them but show "
        "un-closed invalid html tags Show not opened tags",
        "This text should be at the top and horizontally at the left",
        "This text should be at the middle and horizontally at the left"]
    assert [(t.open, t.close) for t in parsed.units[0].tags] == [
        ("<invalid_tag>", "</invalid_tag>"), ("<invalid_tag_unclosed>", ""), ("</invalid_tag_not_opened>", "")]
    assert [t.open for t in parsed.units[1].tags] == ["{\\an7}"] and [t.open for t in parsed.units[2].tags] == ["{\\an4}"]
    assert parsed.render([u.text for u in parsed.units]).count("{\\an") == 2
    out = parsed.render(["Es wäre gut, versteckte Tags zu verbergen und nicht geöffnete Tags zu zeigen",
                         "Dieser Text sollte oben links stehen", "Dieser Text sollte in der Mitte links stehen"],
                        [[], [], [((0, 4), (0, 6))]])
    for tag in ("<invalid_tag>", "</invalid_tag>", "<invalid_tag_unclosed>", "</invalid_tag_not_opened>"):
        assert out.count(tag) == 1, tag
    assert "\r\n{\\an4}Dieser Text" in out and "links stehen{\\an7}\r\n" in out


def test_po_translates_only_untranslated_messages_and_marks_them_fuzzy():
    parsed = parse("po", PO)
    assert [u.text for u in parsed.units] == ["A man sees %s.", "The cat runs home.", "A big dog.", "%d big dogs."]
    out = parsed.render(["Ein Mann sieht %s.", "Die Katze \"rennt\".", "Ein großer Hund.", "%d große Hunde."])
    catalogue = polib.pofile(out)
    by_id = {e.msgid: e for e in catalogue}
    assert by_id["A man sees %s."].msgstr == "Ein Mann sieht %s." and by_id["A man sees %s."].flags == ["fuzzy", "c-format"]
    assert by_id["The cat runs home."].msgstr == 'Die Katze "rennt".' and by_id["The cat runs home."].msgctxt == "menu"
    assert by_id["A big dog."].msgstr_plural == {0: "Ein großer Hund.", 1: "%d große Hunde."}
    assert by_id["A dog."].msgstr == "Ein Hund?" and by_id["A red ball."].msgstr == "Ein roter Ball."
    assert catalogue.obsolete_entries()[0].msgid == "A ball."
    # Everything but the new msgstr lines and fuzzy flags is byte-identical, the header included.
    assert out.startswith(PO[:PO.index("#: src/main.c:10")])
    removed = [line for line in PO.splitlines() if line not in out.splitlines()]
    assert removed == ["#, c-format", 'msgstr[0] ""', 'msgstr[1] ""']  # "#, fuzzy, c-format"; filled plurals


@pytest.mark.parametrize("fmt, text, error", [
    ("srt", "1\n00:00:01,000 -> nonsense\nText\n", "not a valid SRT file"),
    ("po", 'msgid "a"\nmsgstr ""\nthis is not po\n', "not a valid gettext PO file.*line 3"),
])
def test_malformed_files_are_a_format_error(fmt, text, error):
    with pytest.raises(FormatError, match=error):
        parse(fmt, text)



TYPES = ("[Content_Types].xml", b'<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
         b'<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
         b'<Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType='
         b'"application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>')
RELS = ("_rels/.rels", b'<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
        b'<Relationship Id="rId1" Target="word/document.xml" '
        b'Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument"/></Relationships>')
# Corrupt files a client may send, for every reader that can refuse one (HTML and Markdown read any
# text, as browsers and CommonMark do; Markdown refuses only NUL bytes). Each is a FormatError that
# says what is wrong in words, never a library's exception (issue 51: "AttributeError: 'lxml.etree.
# _Element' object has no attribute 'overrides'" for a zip without word/document.xml).
CORRUPT = [
    ("docx", b"", "it is not a ZIP package"),
    ("docx", b"PK\x03\x04 cut short", "it is not a ZIP package"),
    ("docx", zip_of({"[Content_Types].xml": b"<Types/>", "word/other.xml": b"<x/>"}),
     "its parts are not those of a Word document"),
    ("docx", zip_of(dict([TYPES])), "the package has no main document part"),
    ("docx", zip_of(dict([TYPES, RELS])), "the package has no word/document.xml"),
    ("docx", zip_of(dict([TYPES, RELS, ("word/document.xml", b"<w:doc")])),
     "a part of the package is not well-formed XML"),
    ("docx", zip_of(dict([TYPES, RELS, ("word/document.xml", b"<other/>")])),
     r"its main part is not a Word document \(no <w:document> with a <w:body>\)"),
    ("srt", "\x00\x01 not subtitles -->", "line 1 does not start a subtitle block"),
    ("vtt", "not a caption file\n", "it does not begin with a 'WEBVTT' line"),
    ("po", 'msgid "a\nmsgstr', r"Syntax error in po file \(line 2\)"),
    ("xliff", "<xliff version='1.2'><file><body><trans-unit", "unclosed token: line 1"),
    ("xliff", "<other/>", "no <xliff version=...> root"),
    ("markdown", "a\x00b", "it contains NUL bytes"),
]


@pytest.mark.parametrize("fmt, data, message", CORRUPT)
def test_every_reader_refuses_a_corrupt_file_in_words(fmt, data, message):
    with pytest.raises(FormatError, match=message) as refused:
        parse(fmt, data, ("en", "de"))
    assert re.match(r"not (a valid|an|a) \S+", str(refused.value))
    assert not re.search(r"\w+Error\b|object has no attribute|Traceback|File is not a zip file", str(refused.value))


def test_format_by_extension_or_name():
    assert format_of("a/movie.SRT") == "srt" and format_of("x.pot") == "po" and format_of("notes.rst") == "txt"
    assert format_of("x.txt", "po") == "po"
    with pytest.raises(FormatError, match="unknown format 'pdf'"):
        format_of("x.pdf", "pdf")


def test_nmt_translate_writes_subtitles_and_catalogues_back_in_their_format(tiny_bundle, tmp_path):
    (tmp_path / "movie.srt").write_bytes(SRT.encode("utf-8"))
    (tmp_path / "app.po").write_text(PO, encoding="utf-8")
    (tmp_path / "broken.srt").write_text("1\nnot a timing\nText\n", encoding="utf-8")
    done = run_nmt("translate", "--bundle", str(tiny_bundle), "--device", "cpu", str(tmp_path / "movie.srt"),
                   str(tmp_path / "app.po"), str(tmp_path / "broken.srt"), "--out", str(tmp_path / "out"))
    assert done.returncode == 1 and "skipped" in done.stderr and "broken.srt: not a valid SRT file" in done.stderr
    srt_out = (tmp_path / "out" / "movie.de.srt").read_bytes().decode("utf-8")
    source_lines, out_lines = SRT.split("\r\n"), srt_out.split("\r\n")
    assert len(out_lines) == len(source_lines)
    for before, after in zip(source_lines, out_lines):  # indices, timings and blank lines unchanged
        if "-->" in before or before.isdigit() or not before:
            assert after == before
    assert out_lines[7].startswith("<i>") and out_lines[7].endswith("</i>")
    payload = json.loads((tmp_path / "out" / "movie.de.json").read_text(encoding="utf-8"))
    assert payload["format"] == "srt" and [u["where"] for u in payload["units"]] == ["cue 1", "cue 2", "cue 3"]
    assert all(0.0 <= s["confidence"] <= 1.0 for s in payload["segments"])
    catalogue = polib.pofile((tmp_path / "out" / "app.de.po").read_text(encoding="utf-8"))
    # The three untranslated messages got a machine translation, marked fuzzy; the rest is as it was.
    assert sorted(e.msgid for e in catalogue if "fuzzy" in e.flags) == ["A big dog.", "A dog.", "A man sees %s.",
                                                                         "The cat runs home."]
    assert {e.msgid: e.msgstr for e in catalogue}["A red ball."] == "Ein roter Ball."
