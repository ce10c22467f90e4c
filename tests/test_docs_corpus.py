"""The documentation corpus (training.docs) on tiny synthetic help pages written here: LibreOffice
XHTML paired by id, Mallard pages paired by element sequence, sentence splitting only where both
sides have as many sentences, untranslated German dropped, repeats and pairs near a held-out set
dropped with their tagged copies, inline markup kept in the tagged copy, excluded packages refused.
Nothing here touches the network: apt-get is never run (a fake stands in where its failure is
checked), and the end-to-end test builds its .deb files with dpkg-deb."""
from __future__ import annotations

import gzip
import json
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from training.build_data import drop_near_held_out
from training.docs import packages
from training.docs.collect import (CARD_JSON, CARD_MD, DocsCorpus, DocsOptions, build_docs, held_out_sections, kept_only,
                                   write_docs)
from training.docs.markup import LIBREOFFICE, MALLARD, Block, Run, page_blocks, parse_page
from training.docs.packages import DocsPackageError, ExcludedPackageError, fetch, license_of, unpack
from training.docs.pairing import DocsPair, distinct_pairs, looks_english, page_pairs, pair_blocks, split_sentences
from training.docs.sources import SOURCES, DocsSource

from .docs_fixtures import lo_page, make_deb

LO_EN = {
    "par_id1": 'Choose <span class="menuitem">File - Open</span>.',
    "par_id2": ('Press <span class="switchinline"><span hidden="true" class="MAC"><span class="keycode">Command</span>'
                '</span><span hidden="true"><span class="keycode">Ctrl</span></span></span><span class="keycode">+O</span>.'),
    "par_id3": 'Opens a file. See <a href="en-US/text/x.html">Save</a> for the <span class="emph">other</span> way.',
    "par_id4": "Only in English.",
    "par_id5": "The help for this dialog is shown in a window.",
}
LO_DE = {  # another order, par_id4 missing, par_id9 only in German, par_id5 left in English
    "par_id3": 'Öffnet eine Datei. Siehe <a href="de/text/x.html">Speichern</a> für den <span class="emph">anderen</span> Weg.',
    "par_id1": 'Wählen Sie <span class="menuitem">Datei - Öffnen</span>.',
    "par_id9": "Nur auf Deutsch.",
    "par_id2": ('Drücken Sie <span class="switchinline"><span hidden="true" class="MAC"><span class="keycode">Befehl'
                '</span></span><span hidden="true"><span class="keycode">Strg</span></span></span>'
                '<span class="keycode">+O</span>.'),
    "par_id5": "The help for this dialog is shown in a window.",
}

MALLARD_PAGE = """<?xml version="1.0" encoding="utf-8"?>
<page xmlns="http://projectmallard.org/1.0/" type="topic" id="keys">
  <info>
    <credit type="author"><name>Jane Doe</name></credit>{credit}
    <desc>{desc}</desc>
  </info>
  <title>{title}</title>
  {body}
</page>
"""
MALLARD_EN = dict(credit="", desc="Ignore quickly repeated key presses.", title="Turn on bounce keys", body="""
  <p>Turn on <em>bounce keys</em> to ignore repeated key presses. It helps with hand tremors.</p>
  <steps><item><p>Open the <gui xref="shell">Activities</gui> overview.</p></item>
         <item><p>Press <keyseq><key>Ctrl</key><key>S</key></keyseq> to save the file.</p></item></steps>
  <code>gsettings set x y</code>
  <note><p>See <link xref="a11y">the accessibility page</link> for more.</p></note>""")
MALLARD_DE = dict(credit='<credit type="translator"><name>Max Mustermann</name></credit>',
                  desc="Schnell wiederholtes Drücken von Tasten ignorieren.", title="Springende Tasten aktivieren",
                  body="""
  <p>Schalten Sie <em>springende Tasten</em> ein, um wiederholtes Drücken zu ignorieren. Das hilft bei Zittern.</p>
  <steps><item><p>Öffnen Sie die <gui xref="shell">Aktivitäten</gui>-Übersicht.</p></item>
         <item><p>Drücken Sie <keyseq><key>Strg</key><key>S</key></keyseq>, um die Datei zu speichern.</p></item></steps>
  <code>gsettings set x y</code>
  <note><p>Siehe <link xref="a11y">die Seite zur Barrierefreiheit</link> für mehr.</p></note>""")


def mallard_page(path: Path, parts: dict[str, str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(MALLARD_PAGE.format(**parts), encoding="utf-8")
    return path


def blocks_of(path: Path, dialect) -> list[Block]:
    return page_blocks(parse_page(path, dialect), dialect)


def pairs_of(english: Path, german: Path, dialect, counts: Counter | None = None) -> list[DocsPair]:
    return page_pairs(blocks_of(english, dialect), blocks_of(german, dialect), dialect.keyed_by_id, "test", "test:s",
                      Counter() if counts is None else counts)


@pytest.fixture
def libreoffice(tmp_path) -> tuple[Path, Path]:
    return (lo_page(tmp_path / "en-US/text/shared/x.html", "en-US", "Open", LO_EN),
            lo_page(tmp_path / "de/text/shared/x.html", "de", "Öffnen", LO_DE))


@pytest.fixture
def mallard(tmp_path) -> tuple[Path, Path]:
    return (mallard_page(tmp_path / "C/gnome-help/keys.page", MALLARD_EN),
            mallard_page(tmp_path / "de/gnome-help/keys.page", MALLARD_DE))


def test_libreoffice_blocks_pair_by_id_whatever_their_order(libreoffice):
    counts = Counter()
    pairs = {p.en: p.de for p in pairs_of(*libreoffice, LIBREOFFICE, counts)}
    assert pairs == {
        "Open": "Öffnen",
        "Choose File - Open.": "Wählen Sie Datei - Öffnen.",
        "Press Ctrl+O.": "Drücken Sie Strg+O.",  # the default variant of the switch, not the macOS one
        "Opens a file.": "Öffnet eine Datei.",
        "See Save for the other way.": "Siehe Speichern für den anderen Weg.",
    }  # par_id4 and par_id9 have no partner; the header, script and debug block are not text
    assert counts["blocks"] == 5 and counts["blocks_split"] == 1


def test_mallard_pages_pair_by_element_sequence(mallard):
    english, german = (blocks_of(path, MALLARD) for path in mallard)
    assert [b.key for b in english] == [b.key for b in german] == [
        "info/desc", "title", "p", "steps/item/p", "steps/item/p", "note/p"]  # credits and the code listing left out
    pairs = pairs_of(*mallard, MALLARD)
    assert ("Press Ctrl+S to save the file.", "Drücken Sie Strg+S, um die Datei zu speichern.") in [p.plain for p in pairs]
    assert ("Turn on bounce keys", "Springende Tasten aktivieren") in [p.plain for p in pairs]


@pytest.mark.parametrize("english, german, expected", [
    ("a b c", "a b c", [(0, 0), (1, 1), (2, 2)]),  # the same sequence: all, by position
    ("h p p x", "h p p y", [(0, 0), (1, 1), (2, 2)]),  # one differing block at the end
    ("h p q p", "h p q n p", [(0, 0), (1, 1), (2, 2), (3, 4)]),  # a German block of its own between other keys
    ("h p p p", "h p p p p", [(0, 0)]),  # a paragraph more in a run of paragraphs: which one is unknown
    ("p p", "q q q", None),  # nothing pairs for certain
])
def test_pages_whose_sequences_differ_keep_only_the_blocks_that_pair_for_certain(english, german, expected):
    def blocks(keys: str) -> list[Block]:
        return [Block(key, (Run(str(number)),)) for number, key in enumerate(keys.split())]
    paired = pair_blocks(blocks(english), blocks(german), by_id=False)
    assert (None if paired is None else [(int(a.plain), int(b.plain)) for a, b in paired]) == expected


def test_mallard_translation_with_a_note_of_its_own_keeps_the_blocks_around_it(tmp_path):
    note = '<note style="tip"><p>Hinweis des Übersetzers.</p></note>'
    english = mallard_page(tmp_path / "C/keys.page", MALLARD_EN)
    german = mallard_page(tmp_path / "de/keys.page", {**MALLARD_DE, "body": note + MALLARD_DE["body"]})
    counts = Counter()
    plain = [p.plain for p in pairs_of(english, german, MALLARD, counts)]
    assert ("Turn on bounce keys", "Springende Tasten aktivieren") in plain
    assert ("See the accessibility page for more.", "Siehe die Seite zur Barrierefreiheit für mehr.") in plain
    assert not any("Übersetzers" in de for _, de in plain)
    assert counts["pages_partly_paired"] == 1


@pytest.mark.parametrize("german, sentences", [
    ("Öffnet eine Datei. Sie wird gezeigt.", 2),  # two and two: split
    ("Öffnet eine Datei, die gezeigt wird.", 1),  # two against one: kept whole
    ("Öffnet eine Datei. Sie wird gezeigt. Fertig.", 1),  # two against three: kept whole
])
def test_sentences_are_split_only_where_both_sides_have_as_many(german, sentences):
    pieces = split_sentences(_block("Opens a file. It is shown."), _block(german))
    assert len(pieces) == sentences
    if sentences == 2:
        assert ["".join(r.text for r in en) for en, _ in pieces] == ["Opens a file.", "It is shown."]
        assert ["".join(r.text for r in de) for _, de in pieces] == ["Öffnet eine Datei.", "Sie wird gezeigt."]
    else:
        assert "".join(r.text for r in pieces[0][1]) == german


def _block(text: str, key: str = "p") -> Block:
    return Block(key, (Run(text),))


@pytest.mark.parametrize("german, kept", [
    ("Klicken Sie auf die Schaltfläche, um die Datei zu öffnen.", True),
    ("Click the button to open the file and then close it.", False),  # left in English
    ("Klicken Sie auf den Knopf, um the file zu öffnen.", True),  # one English word is not an English sentence
    ("click the button to open the file", False),  # identical but for case and punctuation
])
def test_pairs_whose_german_side_is_english_are_dropped(german, kept):
    counts = Counter()
    pairs = page_pairs([_block("Click the button to open the file.")], [_block(german)], False, "t", "t:s", counts)
    assert bool(pairs) == kept
    assert counts["untranslated"] + counts["identical"] == (not kept)
    assert looks_english("Click the button to open the file and then close it.")
    assert not looks_english("Wählen Sie die Datei und klicken Sie auf Öffnen.")


def test_repeats_and_pairs_near_a_held_out_set_are_dropped_with_their_tagged_copies():
    def pair(en: str, de: str) -> DocsPair:
        return DocsPair(en, de, f"<em>{en}</em>", f"<em>{de}</em>", "s", "s:x")
    pairs = [pair("Opens the file dialog now.", "Öffnet jetzt den Dateidialog."),
             pair("Opens the file dialog now.", "Öffnet jetzt den Dateidialog."),  # an exact repeat
             pair("Closes the open document window.", "Schließt das Dokumentfenster."),
             pair("Saves the current document.", "Speichert das aktuelle Dokument."),
             pair("Prints the whole document.", "Druckt das ganze Dokument.")]
    counts = {"s": Counter()}
    distinct = distinct_pairs(pairs, counts)
    assert len(distinct) == 4 and counts["s"]["duplicates"] == 1
    held = {"docs-test": [("Closes the open document window!", "x y z"),  # near on the English side (punctuation)
                          ("a b c d", "Speichert das aktuelle Textdokument.")]}  # near on the German side (one word)
    corpus = DocsCorpus(tuple(distinct), {}, {"s": dict(counts["s"])})
    kept, report, _ = drop_near_held_out({"docs": [p.plain for p in corpus.pairs]}, held)
    corpus = kept_only(corpus, kept["docs"])
    assert [p.en for p in corpus.pairs] == ["Opens the file dialog now.", "Prints the whole document."]
    assert [p.en_tagged for p in corpus.pairs] == ["<em>Opens the file dialog now.</em>", "<em>Prints the whole document.</em>"]
    assert report["docs"]["dropped"] == 2 and corpus.counts["s"]["near_held_out"] == 2


def test_the_tagged_copy_keeps_links_emphasis_menu_and_key_names(libreoffice, mallard):
    lo = {p.en_tagged: p.de_tagged for p in pairs_of(*libreoffice, LIBREOFFICE)}
    assert lo["Choose <menu>File - Open</menu>."] == "Wählen Sie <menu>Datei - Öffnen</menu>."
    assert lo["Press <key>Ctrl+O</key>."] == "Drücken Sie <key>Strg+O</key>."
    # the sentence cut leaves each sentence's markup whole
    assert lo["See <link>Save</link> for the <em>other</em> way."] == "Siehe <link>Speichern</link> für den <em>anderen</em> Weg."
    mal = {p.en_tagged: p.de_tagged for p in pairs_of(*mallard, MALLARD)}
    assert mal["Open the <menu>Activities</menu> overview."] == "Öffnen Sie die <menu>Aktivitäten</menu>-Übersicht."
    assert mal["Press <key>Ctrl+S</key> to save the file."] == "Drücken Sie <key>Strg+S</key>, um die Datei zu speichern."
    assert mal["See <link>the accessibility page</link> for more."].startswith("Siehe <link>")
    assert mal["Turn on <em>bounce keys</em> to ignore repeated key presses."].startswith("Schalten Sie <em>springende")


def test_tagged_text_escapes_angle_brackets_and_plain_text_has_no_markup(tmp_path):
    english = lo_page(tmp_path / "en.html", "en", "Title", {"p1": 'Type <span class="literal">a &lt; b</span> in the cell.'})
    german = lo_page(tmp_path / "de.html", "de", "Titel", {"p1": 'Geben Sie <span class="literal">a &lt; b</span> in die Zelle ein.'})
    pair = next(p for p in pairs_of(english, german, LIBREOFFICE) if p.en.startswith("Type"))
    assert pair.en == "Type a < b in the cell."
    assert pair.en_tagged == "Type <code>a &lt; b</code> in the cell."


@pytest.mark.parametrize("name", ["gimp-help-de", "gimp-help-en", "kicad-doc-de", "debian-faq", "debian-faq-de",
                                  "lilypond-doc", "lilypond-doc-html-de", "linuxcnc-doc-de"])
def test_excluded_packages_are_refused_before_anything_runs(name, tmp_path, monkeypatch):
    def no_subprocess(*args, **kwargs):
        raise AssertionError("a subprocess ran for an excluded package")
    monkeypatch.setattr(subprocess, "run", no_subprocess)
    with pytest.raises(ExcludedPackageError, match=f"{name}: excluded from the documentation corpus"):
        fetch(name, tmp_path)
    with pytest.raises(ExcludedPackageError, match="held back for outside checks"):
        DocsSource("bad", ("libreoffice-help-en-us", name), "usr", "usr/*.html", (), LIBREOFFICE)


def test_no_listed_source_reads_an_excluded_package():
    for source in SOURCES:
        for name in source.packages:
            packages.refuse_excluded(name)  # raises for an excluded one
    assert packages.EXCLUDED_PACKAGES == ("gimp-help-*", "kicad-doc-*", "debian-faq*", "lilypond-doc*", "linuxcnc-doc-*")


def test_a_package_apt_cannot_fetch_is_named_in_one_line(tmp_path, monkeypatch):
    def failing_apt(command, **kwargs):
        assert command == ["apt-get", "download", "libreoffice-help-xx"]
        return subprocess.CompletedProcess(command, 100, "", "Reading package lists...\nE: Unable to locate package "
                                                             "libreoffice-help-xx\n")
    monkeypatch.setattr(subprocess, "run", failing_apt)
    with pytest.raises(DocsPackageError) as raised:
        fetch("libreoffice-help-xx", tmp_path)
    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith("apt-get download libreoffice-help-xx failed: E: Unable to locate package libreoffice-help-xx")


@pytest.mark.parametrize("text, expected", [
    ("Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n\nFiles: *\nCopyright: x\n"
     "License: MPL-2.0\n text\n\nFiles: debian/*\nLicense: GPL-3+\n", "MPL-2.0"),
    ("Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n\nFiles: src/*\nLicense: GPL-2+\n\n"
     "Files: po/*\nLicense: GPL-3+\n\nFiles: debian/*\nLicense: MIT\n", "GPL-2+; GPL-3+"),
    ("This manual is under the GNU General Public License, version 2.\n", "GPL (free-text copyright file)"),
])
def test_license_is_read_from_the_copyright_file(text, expected):
    assert license_of(text) == expected


@pytest.mark.skipif(shutil.which("dpkg-deb") is None, reason="needs dpkg-deb (Debian)")
def test_a_source_builds_from_its_packages_with_a_data_card(tmp_path, libreoffice, monkeypatch):
    page = "usr/share/libreoffice/help/{}/text/shared/01/x.html"
    make_deb(tmp_path, "libreoffice-help-en-us", {page.format("en-US"): libreoffice[0].read_text()})
    make_deb(tmp_path, "libreoffice-help-de", {page.format("de"): libreoffice[1].read_text()})

    real_run = subprocess.run  # both .deb files are in the cache: apt-get must not run
    monkeypatch.setattr(subprocess, "run", lambda command, **kwargs: (
        pytest.fail(f"ran {command}") if command[0] == "apt-get" else real_run(command, **kwargs)))
    corpus = build_docs(DocsOptions(tmp_path / "packages", ("libreoffice-help",)))
    assert {p.section for p in corpus.pairs} == {"libreoffice-help:text/shared"}
    cards = write_docs(corpus, tmp_path / "out")
    lines = {name: gzip.open(tmp_path / "out" / name, "rt", encoding="utf-8").read().splitlines()
             for name in ("train.en.gz", "train.de.gz", "train.tagged.en.gz", "train.tagged.de.gz")}
    assert len({len(v) for v in lines.values()}) == 1 and len(lines["train.en.gz"]) == len(corpus.pairs) == 5
    assert lines["train.tagged.en.gz"][lines["train.en.gz"].index("Choose File - Open.")] == "Choose <menu>File - Open</menu>."
    card = json.loads((tmp_path / "out" / CARD_JSON).read_text())["sources"]
    assert card[0]["packages"] == [{"name": "libreoffice-help-en-us", "version": "1:7.4-1", "license": "MPL-2.0"},
                                   {"name": "libreoffice-help-de", "version": "1:7.4-1", "license": "MPL-2.0"}]
    assert card[0]["pairs"] == 5 and card[0]["words_en"] == sum(len(line.split()) for line in lines["train.en.gz"])
    assert "| libreoffice-help | libreoffice-help-en-us | 1:7.4-1 | MPL-2.0 | 5 |" in (tmp_path / "out" / CARD_MD).read_text()
    assert cards[0].pairs == 5
    assert unpack(next((tmp_path / "packages").glob("libreoffice-help-de_*.deb")), tmp_path / "packages" / "unpacked").root \
        .name == "libreoffice-help-de_1%3a7.4-1"  # unpacked once, found again


@pytest.mark.parametrize("source, english, german, section", [
    ("libreoffice-help", "usr/share/libreoffice/help/en-US/text/scalc/01/x.html",
     "usr/share/libreoffice/help/de/text/scalc/01/x.html", "libreoffice-help:text/scalc"),
    ("gnome-user-docs", "usr/share/help/C/system-admin-guide/dconf.page", "usr/share/help/de/system-admin-guide/dconf.page",
     "gnome-user-docs:system-admin-guide"),
    ("maint-guide", "usr/share/doc/maint-guide/html/dreq.en.html", "usr/share/doc/maint-guide-de/html/dreq.de.html",
     "maint-guide:dreq.en.html"),
])
def test_sources_find_the_german_page_and_name_the_section(source, english, german, section):
    found = next(s for s in SOURCES if s.name == source)
    assert found.german_path(english) == german
    assert found.section(english) == section


def test_whole_sections_are_held_out_and_a_section_held_out_twice_is_refused():
    sections = ["lo:text/shared", "lo:text/sdraw", "lo:text/schart", "lo:text/sdraw", "gnome:admin"]
    pairs = tuple(DocsPair(f"Line {i}.", f"Zeile {i}.", f"Line <em>{i}</em>.", f"Zeile <em>{i}</em>.", s.split(":")[0], s)
                  for i, s in enumerate(sections))
    rest, held = held_out_sections(DocsCorpus(pairs, {}, {}),
                                   {"docs-test": ("lo:text/sdraw", "gnome:admin"), "docs-dev": ("lo:text/schart", "lo:none")})
    assert [p.en for p in rest.pairs] == ["Line 0."]
    assert [p.en for p in held["docs-test"]] == ["Line 1.", "Line 3.", "Line 4."]
    assert [p.en_tagged for p in held["docs-dev"]] == ["Line <em>2</em>."]
    with pytest.raises(ValueError, match="lo:text/sdraw: held out for both docs-test and docs-dev"):
        held_out_sections(DocsCorpus(pairs, {}, {}), {"docs-test": ("lo:text/sdraw",), "docs-dev": ("lo:text/sdraw",)})
