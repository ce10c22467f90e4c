"""Documents in the encodings they declare: a byte-order mark (UTF-8/16/32) in every format, an
XML declaration, a PO header's charset, HTML's <meta> charset and http-equiv Content-Type; files
that declare nothing and are not UTF-8 are refused with a clear error unless --encoding names
their encoding. Outputs are UTF-8 and their declarations say so. XML entity references stay inline
codes, never expanded or loaded. Real files come from this machine's Debian packages: German
catalogues (msgunfmt, msgconv) and valgrind's HTML manual."""
from __future__ import annotations

import codecs
import re
import shutil
import subprocess
from pathlib import Path

import polib
import pytest

from queue_config.textfiles import DocumentError, decode_document, encoding_of, read_text_file
from worker.formats import FormatError, parse

from .conftest import run_nmt

LOCALE = Path("/usr/share/locale/de/LC_MESSAGES")
MANUAL = Path("/usr/share/doc/valgrind/html/QuickStart.html")

XLIFF = ('<?xml version="1.0" encoding="{encoding}"?>\n'
         '<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2">\n'
         ' <file source-language="en" target-language="de" datatype="plaintext" original="café.txt">\n'
         '  <body>\n   <trans-unit id="1">\n    <source>The café is open.</source>\n   </trans-unit>\n'
         '  </body>\n </file>\n</xliff>\n')
PO = ('msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset={encoding}\\n"\n\n'
      'msgid "The café is open."\nmsgstr ""\n\nmsgid "A red ball."\nmsgstr "Ein roter Ball für Jürgen."\n')
HTML_META = ('<!DOCTYPE html>\n<html><head><meta charset="{encoding}"><title>Café</title></head>'
             '<body><p>The café is open.</p></body></html>\n')
HTML_EQUIV = ('<html><head><meta http-equiv="Content-Type" content="text/html; charset={encoding}">'
              '<meta name="description" content="charset=koi8-r is not a declaration"></head>'
              '<body><p>The café is open.</p></body></html>\n')
SRT = ("1\r\n00:00:01,000 --> 00:00:02,500\r\nThe café is open.\r\n\r\n"
       "2\r\n00:00:03,000 --> 00:00:04,000\r\nA dog runs.\r\n")
MARKDOWN = "# The café\n\nThe café is open.\n"
TEXT = "The café is open.\nA dog runs.\n"


def words(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]


def shouted(parsed) -> str:
    """The file written with every unit "translated" into capitals, word for word."""
    translations = [unit.text.upper() for unit in parsed.units]
    return parsed.render(translations, [list(zip(words(u.text), words(u.text))) for u in parsed.units])


@pytest.mark.parametrize("fmt, document, declared", [
    ("xliff", XLIFF, "ISO-8859-1"),
    ("po", PO, "ISO-8859-1"),
    ("html", HTML_META, "iso-8859-1"),
    ("html", HTML_EQUIV, "ISO-8859-1"),
])
def test_a_declared_encoding_is_honoured_and_the_output_declares_utf8(fmt, document, declared):
    data = document.format(encoding=declared).encode("latin-1")
    with pytest.raises(DocumentError, match="not valid UTF-8"):
        decode_document(data, "txt")  # as plain text, which declares nothing, the same bytes are refused
    text = decode_document(data, fmt)
    assert "The café is open." in text
    out = shouted(parse(fmt, text))
    assert "THE CAFÉ IS OPEN." in out
    assert declared not in out and re.search(r"(?i)utf-8", out)
    assert encoding_of(out.encode("utf-8"), fmt)[0] == "utf-8"  # read back, the output says what it is
    if document is HTML_EQUIV:
        assert "charset=koi8-r is not a declaration" in out  # a <meta name=...> is not touched


def test_html_reads_latin1_labels_as_windows_1252_as_browsers_do():
    data = HTML_META.format(encoding="iso-8859-1").replace("open.", "open € 5.").encode("cp1252")
    assert encoding_of(data, "html") == ("cp1252", "meta charset")
    assert "open € 5." in decode_document(data, "html")


@pytest.mark.parametrize("fmt, document", [
    ("srt", SRT), ("vtt", "WEBVTT\r\n\r\n" + SRT.split("\r\n", 1)[1].replace(",", ".")), ("markdown", MARKDOWN),
    ("txt", TEXT), ("po", PO.format(encoding="UTF-8")), ("xliff", XLIFF.format(encoding="UTF-16")),
    ("html", HTML_META.format(encoding="utf-16"))])
@pytest.mark.parametrize("codec, bom", [("utf-8", codecs.BOM_UTF8), ("utf-16-le", codecs.BOM_UTF16_LE),
                                        ("utf-16-be", codecs.BOM_UTF16_BE), ("utf-32-le", codecs.BOM_UTF32_LE),
                                        ("utf-32-be", codecs.BOM_UTF32_BE)])
def test_a_byte_order_mark_is_honoured_in_every_format(fmt, document, codec, bom):
    data = bom + document.encode(codec)
    assert encoding_of(data, fmt) == (codec, "byte-order mark")
    text = decode_document(data, fmt)
    assert text == document  # the mark is dropped
    if fmt != "txt":
        out = shouted(parse(fmt, text))
        assert "THE CAFÉ IS OPEN." in out or "A DOG RUNS." in out
        assert "UTF-16" not in out and "utf-16" not in out  # the output (UTF-8) says UTF-8


def test_utf16_subtitles_with_a_byte_order_mark_keep_every_timing(tmp_path):
    path = tmp_path / "film.srt"
    path.write_bytes(SRT.encode("utf-16"))  # a mark, then little-endian on this machine
    parsed = parse("srt", read_text_file(path))
    assert [u.text for u in parsed.units] == ["The café is open.", "A dog runs."]
    out = shouted(parsed)
    assert out.split("\r\n")[1] == "00:00:01,000 --> 00:00:02,500" and "THE CAFÉ IS OPEN." in out


def test_undeclared_text_that_is_not_utf8_is_refused_clearly_and_read_with_an_encoding(tmp_path):
    path = tmp_path / "notes.md"
    path.write_bytes(MARKDOWN.encode("latin-1"))
    with pytest.raises(DocumentError, match=r"not valid UTF-8 \(line 1, byte offset 9\), and it declares no "
                                            r"encoding: name its encoding \(nmt translate --encoding"):
        read_text_file(path)
    assert read_text_file(path, "latin-1") == MARKDOWN
    with pytest.raises(DocumentError, match="--encoding names the encoding 'latin-42', which is not known"):
        read_text_file(path, "latin-42")
    with pytest.raises(DocumentError, match="its XML declaration names the encoding 'x-nonsense'"):
        decode_document(XLIFF.format(encoding="x-nonsense").encode(), "xliff")
    wrong = PO.format(encoding="UTF-8").encode("latin-1")  # says UTF-8, is not
    with pytest.raises(DocumentError, match=r"not valid UTF-8 \(line 5, .*the encoding its PO header names"):
        decode_document(wrong, "po")


def test_an_encoding_named_by_the_user_goes_over_a_declaration_and_a_mark_over_both():
    data = XLIFF.format(encoding="UTF-8").encode("cp1252")
    assert decode_document(data, "xliff", "cp1252").count("café") == 2
    marked = codecs.BOM_UTF8 + XLIFF.format(encoding="ISO-8859-1").encode("utf-8")
    assert encoding_of(marked, "xliff", "latin-1") == ("utf-8", "byte-order mark")


ENTITY_XLIFF = ('<?xml version="1.0"?>\n<!DOCTYPE xliff [\n<!ENTITY sec "section">\n'
                '<!ENTITY passwd SYSTEM "file:///etc/passwd">\n]>\n'
                '<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2"><file source-language="en" '
                'datatype="plaintext" original="x"><body>\n<trans-unit id="1"><source>Read &sec; 3 and '
                '&passwd; &amp; go home.</source></trans-unit>\n</body></file></xliff>\n')
BOMB = ('<?xml version="1.0"?>\n<!DOCTYPE xliff [<!ENTITY a "aaaaaaaaaa">'
        + "".join(f'<!ENTITY {chr(98 + k)} "{("&" + chr(97 + k) + ";") * 10}">' for k in range(8))
        + ']>\n<xliff version="1.2"><file><body><trans-unit id="1"><source>&i;</source></trans-unit>'
          '</body></file></xliff>')


def test_xml_entity_references_are_inline_codes_never_expanded_or_loaded():
    parsed = parse("xliff", ENTITY_XLIFF)
    unit = parsed.units[0]
    assert unit.text == "Read 3 and & go home." and [t.open for t in unit.tags] == ["&sec;", "&passwd;"]
    out = shouted(parsed)
    target = re.search(r"<target[^>]*>(.*)</target>", out).group(1)
    assert target.count("&sec;") == 1 and target.count("&passwd;") == 1 and "&amp;" in target
    assert "root:" not in out and "section" not in target
    with pytest.raises(FormatError, match="amplification"):  # an entity expansion bomb is still refused
        parse("xliff", BOMB)


# -- real files ---------------------------------------------------------------------------------------
def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed (Debian: gettext)")
    return path


def test_a_real_catalogue_in_iso_8859_1_is_read_as_declared_and_written_as_utf8(tmp_path):
    source = LOCALE / "gettext-runtime.mo"
    if not source.exists():
        pytest.skip(f"no {source}")
    utf8, latin = tmp_path / "utf8.po", tmp_path / "latin.po"
    subprocess.run([_tool("msgunfmt"), str(source), "-o", str(utf8)], check=True, timeout=60)
    catalogue = polib.pofile(str(utf8))
    kept = {}
    catalogue.metadata["Last-Translator"] = "Mario"
    for number, entry in enumerate(catalogue):
        if number % 2 or not all(ord(ch) < 256 for ch in entry.msgstr):  # („German quotes“ are not Latin-1)
            entry.msgstr = ""
        elif entry.msgstr:
            kept[entry.msgid] = entry.msgstr
    catalogue.save(str(utf8))
    subprocess.run([_tool("msgconv"), "-t", "ISO-8859-1", str(utf8), "-o", str(latin)], check=True, timeout=60)
    assert b"charset=ISO-8859-1" in latin.read_bytes()
    assert any(ch in msgstr for msgstr in kept.values() for ch in "äöüß")  # a test that can see a bad decoding
    parsed = parse("po", read_text_file(latin))
    out = tmp_path / "out.po"
    out.write_text(shouted(parsed), encoding="utf-8")
    assert b"charset=UTF-8" in out.read_bytes()
    done = subprocess.run([_tool("msgfmt"), "-c", "--use-fuzzy", "-o", "/dev/null", str(out)], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    back = {e.msgid: e.msgstr for e in polib.pofile(str(out))}
    assert all(back[msgid] == msgstr for msgid, msgstr in kept.items())  # the German text came through intact


def test_a_real_manual_page_declaring_iso_8859_1_is_read_as_declared(tmp_path):
    if not MANUAL.exists():
        pytest.skip(f"no {MANUAL}")
    page = MANUAL.read_text(encoding="utf-8")
    assert "charset=UTF-8" in page and "©" in page and "\xa0" in page
    data = page.replace("charset=UTF-8", "charset=ISO-8859-1").encode("latin-1")
    text = decode_document(data, "html")
    assert text.count("©") == page.count("©") and text.count("\xa0") == page.count("\xa0")
    out = shouted(parse("html", text))
    assert "charset=utf-8" in out and "ISO-8859-1" not in out and out.count("©") == page.count("©")


@pytest.mark.slow
def test_nmt_translate_reads_declared_and_named_encodings(tmp_path):
    (tmp_path / "app.xlf").write_bytes(XLIFF.format(encoding="ISO-8859-1").encode("latin-1"))
    (tmp_path / "film.srt").write_bytes(SRT.encode("utf-16"))
    (tmp_path / "notes.txt").write_bytes(TEXT.encode("latin-1"))
    done = run_nmt("translate", "--device", "cpu", str(tmp_path / "app.xlf"), str(tmp_path / "film.srt"),
                   str(tmp_path / "notes.txt"), "--out", str(tmp_path / "out"))
    assert done.returncode == 1 and "notes.txt: not valid UTF-8 (line 1, byte offset 7), and it declares no " \
                                    "encoding" in done.stderr
    xliff = (tmp_path / "out" / "app.de.xlf").read_bytes().decode("utf-8")
    assert xliff.startswith('<?xml version="1.0" encoding="UTF-8"?>') and 'original="café.txt"' in xliff
    srt = (tmp_path / "out" / "film.de.srt").read_bytes().decode("utf-8")
    assert "00:00:03,000 --> 00:00:04,000" in srt and not srt.startswith("\ufeff")
    done = run_nmt("translate", "--device", "cpu", "--encoding", "latin-1", str(tmp_path / "notes.txt"),
                   "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out" / "notes.de.txt").read_bytes().decode("utf-8").count("\n") == 2
