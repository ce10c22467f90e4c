"""gettext catalogues as tools make them: without a header entry (gawk's example catalogue,
xgettext fragments), and made from web pages by html2po, whose messages hold HTML markup that
must come back as inline codes, never translated as text. Real files come from this machine's
Debian packages; msgfmt (gettext) checks the outputs."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import polib
import pytest

from worker.formats import parse

GAWK_EXAMPLE = Path("/usr/share/doc/gawk/examples/data/guide.po")
MANUAL = Path("/usr/share/doc/libffi8/html/The-Basics.html")
HEADERLESS = '''# A fragment, as xgettext writes one for a single file.
#: src/main.c:10
msgid "A man sees a dog."
msgstr ""

#: src/main.c:12
#, c-format
msgid "The cat runs home."
msgstr ""

#: src/main.c:20
msgid "A red ball."
msgstr "Ein roter Ball."
'''
MARKUP = '''msgid ""
msgstr ""
"Content-Type: text/plain; charset=UTF-8\\n"

#: guide.html+p[1]
msgid ""
"Read <a href=\\"guide.html\\">the <em>full</em> guide</a> &amp; the <code>ls</code> "
"page<br/>first."
msgstr ""

#: main.c:3
#, c-format
msgid "Usage: %s <file> [options]"
msgstr ""
'''


def words(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]


def shouted(parsed) -> str:
    translations = [unit.text.upper() for unit in parsed.units]
    if not parsed.marked:
        return parsed.render(translations)
    return parsed.render(translations, [list(zip(words(u.text), words(u.text))) for u in parsed.units])


def msgfmt(path: Path, check: bool = True) -> subprocess.CompletedProcess:
    tool = shutil.which("msgfmt")
    if tool is None:
        pytest.skip("msgfmt is not installed (Debian: gettext)")
    return subprocess.run([tool, *(["-c"] if check else []), "--use-fuzzy", "-o", "/dev/null", str(path)],
                          capture_output=True, text=True, timeout=60)


def test_a_catalogue_without_a_header_puts_each_translation_under_its_own_message(tmp_path):
    parsed = parse("po", HEADERLESS)
    assert [(u.text, u.where) for u in parsed.units] == [("A man sees a dog.", "line 1"),
                                                         ("The cat runs home.", "line 6")]
    out = parsed.render(["Ein Mann sieht einen Hund.", "Die Katze läuft heim."])
    entries = {e.msgid: (e.msgstr, e.flags, e.occurrences) for e in polib.pofile(out)}
    assert entries["A man sees a dog."] == ("Ein Mann sieht einen Hund.", ["fuzzy"], [("src/main.c", "10")])
    assert entries["The cat runs home."] == ("Die Katze läuft heim.", ["fuzzy", "c-format"], [("src/main.c", "12")])
    assert entries["A red ball."][0] == "Ein roter Ball."
    assert out.startswith("# A fragment, as xgettext writes one for a single file.\n#: src/main.c:10\n#, fuzzy\n")
    (tmp_path / "out.po").write_text(out, encoding="utf-8")
    assert msgfmt(tmp_path / "out.po", check=False).returncode == 0


def test_gawks_example_catalogue_is_translated_in_place(tmp_path):
    if not GAWK_EXAMPLE.exists():
        pytest.skip(f"no {GAWK_EXAMPLE} (Debian: gawk)")
    source = GAWK_EXAMPLE.read_text(encoding="utf-8")
    out = shouted(parse("po", source))
    catalogue = polib.pofile(out)
    assert [(e.msgid, e.msgstr) for e in catalogue] == [(e.msgid, e.msgid.upper()) for e in polib.pofile(source)]
    assert out.count("msgstr") == source.count("msgstr")  # no dangling msgstr
    (tmp_path / "guide.de.po").write_text(out, encoding="utf-8")
    assert msgfmt(tmp_path / "guide.de.po", check=False).returncode == 0


def test_html_markup_in_a_message_is_inline_codes_and_a_usage_placeholder_is_text():
    parsed = parse("po", MARKUP)
    page, usage = parsed.units
    # the code element is kept whole, one point of the sentence: the model never sees "ls"
    assert parsed.marked and page.text == "Read the full guide & the page first."
    assert [t.open for t in page.tags] == ['<a href="guide.html">', "<em>", "<code>ls</code>", "<br/>"]
    assert usage.text == "Usage: %s <file> [options]" and not usage.tags
    out = {e.msgid: e.msgstr for e in polib.pofile(shouted(parsed))}
    assert out[page_msgid()] == ('READ <a href="guide.html">THE <em>FULL</em> GUIDE</a> &amp; THE <code>ls</code> '
                                 'PAGE<br/>FIRST.')
    # the upper-cased "%S" reads no argument where the message's %s reads one: the source is kept
    assert out["Usage: %s <file> [options]"] == "Usage: %s <file> [options]"


def page_msgid() -> str:
    return ('Read <a href="guide.html">the <em>full</em> guide</a> &amp; the <code>ls</code> page<br/>first.')


def _tags(text: str) -> Counter:
    return Counter(m.group(1).lower() for m in re.finditer(r"<(/?[A-Za-z][\w-]*)", text))


def test_a_real_html2po_catalogue_keeps_every_tag_of_every_message(tmp_path):
    html2po = Path(sys.executable).parent / "html2po"
    if not html2po.exists() or not MANUAL.exists():
        pytest.skip("html2po (translate-toolkit) or the libffi manual is missing")
    subprocess.run([str(html2po), str(MANUAL), str(tmp_path / "page.po")], check=True, capture_output=True, timeout=120)
    source = (tmp_path / "page.po").read_text(encoding="utf-8")
    parsed = parse("po", source)
    assert sum(len(u.tags) for u in parsed.units) > 40
    catalogue = polib.pofile(shouted(parsed))
    marked = [e for e in catalogue if "<" in e.msgid]
    assert len(marked) > 10
    for entry in marked:
        assert _tags(entry.msgstr) == _tags(entry.msgid), entry.msgid
        assert entry.msgstr != entry.msgid


REORDERED = '''msgid ""
msgstr ""
"Project-Id-Version: opcodes\\n"
"Language: de\\n"
"MIME-Version: 1.0\\n"
"Content-Type: text/plain; charset=UTF-8\\n"
"Content-Transfer-Encoding: 8bit\\n"
"Plural-Forms: nplurals=2; plural=(n != 1);\\n"

#, c-format
msgid "bad case %d (%s) in %s:%d"
msgstr ""

#, c-format
msgid "Address 0x%<PRIx64> is out of bounds for %s.\\n"
msgid_plural "Addresses 0x%<PRIx64> are out of bounds for %s.\\n"
msgstr[0] ""
msgstr[1] ""

#, c-format
msgid "%s: %d%% done"
msgstr ""

msgid "%s then %d, not a format"
msgstr ""
'''


def test_a_c_format_translation_that_reorders_directives_numbers_them_and_passes_msgfmt_check(tmp_path):
    # binutils' opcodes catalogue: the model wrote "%s:%d" as "%d %s:", which printf would read as
    # an int where a string is (msgfmt -c: "format specifications ... for argument 3 are not the same")
    parsed = parse("po", REORDERED)
    out = parsed.render(["Fall %d (%s) in %d %s:", "Für %s ist 0x%<PRIx64> außerhalb.\n",
                         "Für %s sind 0x%<PRIx64> außerhalb.\n", "%d%% von %s fertig", "%d, dann %s"])
    entries = polib.pofile(out)
    assert [e.msgstr or e.msgstr_plural[1] for e in entries] == [
        "Fall %1$d (%2$s) in %4$d %3$s:", "Für %2$s sind 0x%1$<PRIx64> außerhalb.\n",
        "%2$d%% von %1$s fertig", "%d, dann %s"]  # the message without c-format is left as it is
    assert entries[1].msgstr_plural[0] == "Für %2$s ist 0x%1$<PRIx64> außerhalb.\n"
    (tmp_path / "de.po").write_text(out, encoding="utf-8")
    done = msgfmt(tmp_path / "de.po")
    assert done.returncode == 0, done.stderr
    (tmp_path / "unnumbered.po").write_text(out.replace("%1$d (%2$s) in %4$d %3$s:", "%d (%s) in %d %s:"), "utf-8")
    done = msgfmt(tmp_path / "unnumbered.po")  # as the model wrote it, the catalogue fails the check
    assert done.returncode != 0 and "format specifications in 'msgid' and 'msgstr' for argument 3" in done.stderr


def test_a_markup_message_without_words_is_copied_whatever_the_model_writes(tmp_path):
    import subprocess

    catalogue = 'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n\nmsgid "<img src=\\"a.png\\"/>"\nmsgstr ""\n'
    parsed = parse("po", catalogue)
    assert parsed.units[0].warnings == ("line 5: markup without words, copied as it is",)
    out = parsed.render(["<b> -"], [[]])
    assert 'msgstr "<img src=\\"a.png\\"/>"' in out and "<b>" not in out
    (tmp_path / "out.po").write_text(out, encoding="utf-8")
    subprocess.run(["msgfmt", "-c", "--use-fuzzy", "-o", "/dev/null", str(tmp_path / "out.po")], check=True)


DJANGOJS_LIKE = '''# Django's djangojs.po as makemessages writes it for a new language: plurals, no Plural-Forms.
msgid ""
msgstr ""
"Content-Type: text/plain; charset=UTF-8\\n"

#: static/admin/js/calendar.js:10
#, javascript-format
msgid "%(num)s minute ago"
msgid_plural "%(num)s minutes ago"
msgstr[0] ""
msgstr[1] ""
'''
TEMPLATE_FORMS = DJANGOJS_LIKE.replace('charset=UTF-8\\n"\n', 'charset=UTF-8\\n"\n"Plural-Forms: nplurals=INTEGER; plural=EXPRESSION;\\n"\n')
PLURAL_ONLY = 'msgid "one file"\nmsgid_plural "%d files"\nmsgstr[0] ""\nmsgstr[1] ""\n'


@pytest.mark.parametrize("source, target, forms", [
    (DJANGOJS_LIKE, "de", "nplurals=2; plural=(n != 1);"),
    (TEMPLATE_FORMS, "de", "nplurals=2; plural=(n != 1);"),  # a template's placeholder replaced
    (PLURAL_ONLY, "de", "nplurals=2; plural=(n != 1);"),  # no header entry at all: one is added
    (DJANGOJS_LIKE, "cs", "nplurals=3; plural=(n==1) ? 0 : (n>=2 && n<=4) ? 1 : 2;"),
])
def test_plural_messages_get_the_target_languages_plural_forms_and_pass_msgfmt_check(source, target, forms, tmp_path):
    out = shouted(parse("po", source, ("en", target)))
    catalogue = polib.pofile(out)
    assert catalogue.metadata["Plural-Forms"] == forms
    [entry] = [e for e in catalogue if e.msgid_plural]
    assert len(entry.msgstr_plural) == int(forms.split(";")[0].split("=")[1])
    assert entry.msgstr_plural[0] == entry.msgid.upper()
    (tmp_path / "out.po").write_text(out, encoding="utf-8")
    checked = msgfmt(tmp_path / "out.po")
    assert checked.returncode == 0, checked.stderr


def test_a_catalogue_that_states_its_plural_forms_keeps_them():
    source = DJANGOJS_LIKE.replace('charset=UTF-8\\n"\n', 'charset=UTF-8\\n"\n"Plural-Forms: nplurals=3; plural=(n%10==1 ? 0 : n ? 1 : 2);\\n"\n')
    out = shouted(parse("po", source, ("en", "de")))
    assert out.count("\"Plural-Forms:") == 1 and polib.pofile(out).metadata["Plural-Forms"].startswith("nplurals=3;")


# Two messages of the content sweep (tests/content_sweep.py) as the documentation model's candidate
# translated them: tar's, the directives reordered around a '*' precision (which cannot be numbered),
# and coreutils' stty help, the '%s' glued to '-isig' lost. Either would fail msgfmt -c.
MISREAD = r'''msgid ""
msgstr ""
"Content-Type: text/plain; charset=UTF-8\n"
"Plural-Forms: nplurals=2; plural=(n != 1);\n"

#, c-format
msgid "%s: byte %s: %s %.*s... too long"
msgstr ""

#, c-format
msgid ""
"   raw           same as -ignbrk -brkint -ignpar -parmrk -inpck -istrip\n"
"                 -isig%s min 1 time 0\n"
msgstr ""

#, c-format
msgid "%s: byte %s: %s"
msgstr ""

#, c-format
msgid "%d file"
msgid_plural "%d files"
msgstr[0] ""
msgstr[1] ""

#, c-format
msgid "%lu byte"
msgid_plural "%lu bytes"
msgstr[0] ""
msgstr[1] ""
'''


def test_a_c_format_translation_that_reads_other_arguments_keeps_the_source_text_with_a_note(tmp_path):
    parsed = parse("po", MISREAD)
    out = parsed.render(["%s: Byte %s: %.*s. %s.",
                         "   raw           same as -ignbrk -brkint -ignpar -parmrk -inpck -istrip\n"
                         "                 -isig minmal 1 in 0\n",
                         "%s: Byte %s: %s",
                         "eine Datei", "%d Dateien",  # a singular may spell its number out
                         "%d Byte", "%d Bytes"])  # %lu read as an int: printf would misread it
    notes = parsed.notes
    entries = polib.pofile(out)
    assert [e.msgstr or e.msgstr_plural[1] for e in entries] == [
        entries[0].msgid, entries[1].msgid, "%s: Byte %s: %s", "%d Dateien", "%lu bytes"]  # the source kept
    assert entries[3].msgstr_plural[0] == "eine Datei" and entries[4].msgstr_plural[0] == "%lu byte"
    assert all("fuzzy" in e.flags for e in entries)  # machine output for review, the kept ones too
    assert sorted(notes) == [0, 1, 5]
    assert notes[0] == ["source text kept: the translation's printf directives are not the message's "
                        "(%s %s %s %.*s -> %s %s %.*s %s)"]
    assert notes[1][0].endswith("(%s -> none)")
    (tmp_path / "out.po").write_text(out, encoding="utf-8")
    done = msgfmt(tmp_path / "out.po")
    assert done.returncode == 0, done.stderr
    # as the model wrote them, msgfmt -c refuses them
    for msgid, msgstr in (("%s: byte %s: %s %.*s... too long", "%s: Byte %s: %.*s. %s."), ("-isig%s min", "-isig min")):
        (tmp_path / "one.po").write_text(f'#, c-format\nmsgid "{msgid}"\nmsgstr "{msgstr}"\n', encoding="utf-8")
        assert msgfmt(tmp_path / "one.po").returncode != 0


def test_a_stray_percent_sign_in_a_c_format_translation_keeps_the_source_text(tmp_path):
    # PostgreSQL's pg_checksums catalogue: the documentation model wrote "Block % %u"
    catalogue = ('msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n\n'
                 '#, c-format\nmsgid "could not write block %u in file \\"%s\\": wrote %d of %d"\nmsgstr ""\n\n'
                 '#, c-format\nmsgid "%d%% done in %s"\nmsgstr ""\n')
    parsed = parse("po", catalogue)
    out = parsed.render(['konnte Block % %u in der Datei "%s": Schreiben von %d in %d schreiben',
                         "%d%% erledigt in %s"])
    entries = polib.pofile(out)
    assert [e.msgstr for e in entries] == [entries[0].msgid, "%d%% erledigt in %s"]
    assert parsed.notes[0][0].startswith("source text kept")
    (tmp_path / "out.po").write_text(out, encoding="utf-8")
    assert msgfmt(tmp_path / "out.po").returncode == 0
    (tmp_path / "raw.po").write_text(catalogue.replace('msgstr ""\n\n#', 'msgstr "konnte Block % %u in der Datei '
                                                       '\\"%s\\": Schreiben von %d in %d"\n\n#', 1), encoding="utf-8")
    assert msgfmt(tmp_path / "raw.po").returncode != 0  # as the model wrote it, msgfmt -c refuses it
