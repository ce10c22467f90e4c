"""The UI term miner (training.terms) on catalogues compiled by GNU msgfmt from small PO snippets
in the style of GTK's and coreutils' German catalogues, and on the machine's own where installed."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from queue_config.glossary import read_glossary
from training.corpus import CorpusError
from training.gettext_catalogues import DEFAULT_CATALOGUE_DIR
from training.terms import (KEYBOARD_LABEL, Message, MiningOptions, label, mine_catalogues, mine_terms,
                            training_catalogues, write_glossary)
from worker.text.glossary import Glossary, find_terms

pytestmark = pytest.mark.skipif(shutil.which("msgfmt") is None, reason="GNU gettext's msgfmt is not installed")

HEADER = '''msgid ""
msgstr ""
"Content-Type: text/plain; charset=UTF-8\\n"
"Plural-Forms: nplurals=2; plural=(n != 1);\\n"

'''
GTK = HEADER + '''msgid "_Save"
msgstr "_Speichern"

msgid "Save _As..."
msgstr "Speichern _unter …"

msgid "Page Set_up:"
msgstr "Seite _einrichten:"

msgid "_Format"
msgstr "_Format"

msgctxt "keyboard label"
msgid "Page_Up"
msgstr "Bild_auf"

msgctxt "keyboard label"
msgid "Ctrl"
msgstr "Strg"

msgid "or"
msgstr "oder"

msgid "Could not save the file %s."
msgstr "Die Datei %s konnte nicht gespeichert werden."

msgid "gtk_page_setup"
msgstr "gtk_page_setup"

msgid "This is far too long to be a label"
msgstr "Das ist viel zu lang für eine Beschriftung"
'''
COREUTILS = HEADER + '''msgid "Save"
msgstr "Speichern"

msgid "format"
msgstr "Formatieren"

msgid "Format"
msgstr "Format"

msgid "FORMAT"
msgstr "FORMAT"

msgid "Print"
msgstr "Drucken"
'''
# a held-out (software test) catalogue that would break "Save" -> "Speichern" if it were read
WGET = HEADER + '''msgid "Save"
msgstr "Sichern"

msgid "Print"
msgstr "Ausgeben"

msgid "Retry"
msgstr "Wiederholen"
'''


def compile_po(directory: Path, name: str, text: str) -> Path:
    po = directory / f"{name}.po"
    po.write_text(text, encoding="utf-8")
    mo = directory / f"{name}.mo"
    subprocess.run(["msgfmt", "-c", "-o", str(mo), str(po)], check=True)
    po.unlink()
    return mo


@pytest.fixture
def catalogues(tmp_path: Path) -> Path:
    compile_po(tmp_path, "gtk20", GTK)
    compile_po(tmp_path, "coreutils", COREUTILS)
    compile_po(tmp_path, "wget", WGET)
    return tmp_path


@pytest.mark.parametrize("message, context, expected", [
    ("_Save", None, "Save"),
    ("Save _As...", None, "Save As"),
    ("Speichern _unter …", None, "Speichern unter"),
    ("Page Set_up:", None, "Page Setup"),
    ("&Open", None, "Open"),
    ("Drag && Drop", None, "Drag & Drop"),
    ("Page_Up", KEYBOARD_LABEL, "Page Up"),
    ("gtk_page_setup", None, None),  # an identifier
    ("Could not save the file %s.", None, None),  # a placeholder, a sentence
    ("Done.", None, None),  # a sentence
    ("--verbose", None, None),  # an option
    ("/usr/share", None, None),  # a path
    ("_Save _All", None, None),  # two marks: not one accelerator
    ("...", None, None),
])
def test_label_strips_accelerators_colons_and_ellipses(message, context, expected):
    assert label(message, context) == expected


def test_mined_terms_are_short_consistent_labels(catalogues: Path):
    terms = {t.source: t for t in mine_catalogues(catalogues, ("gtk20", "coreutils"))}
    assert terms["Save"].target == "Speichern"
    assert terms["Save"].count == 2 and terms["Save"].catalogues == ("coreutils", "gtk20")
    assert terms["Save As"].target == "Speichern unter"
    assert terms["Page Setup"].target == "Seite einrichten"
    assert terms["Page Up"].target == "Bild auf"
    assert terms["Ctrl"].target == "Strg"
    # "format" is "Formatieren" once and "Format" twice: below the 0.75 share, no term
    assert "Format" not in terms and "format" not in terms
    for absent in ("or", "FORMAT", "gtk_page_setup", "This is far too long to be a label"):
        assert absent not in terms
    assert not any("%" in t.source for t in terms.values())


def test_share_threshold_decides_between_translations(catalogues: Path):
    lenient = {t.source: t for t in mine_catalogues(catalogues, ("gtk20", "coreutils"), MiningOptions(min_share=0.6))}
    assert lenient["Format"].target == "Format" and lenient["Format"].share == pytest.approx(2 / 3, abs=1e-3)
    strict = {t.source for t in mine_catalogues(catalogues, ("gtk20", "coreutils"), MiningOptions(min_count=2))}
    assert strict == {"Save"}  # "Format" is seen 3 times but split 2:1


def test_held_out_catalogues_are_never_mined(catalogues: Path):
    with pytest.raises(CorpusError, match="held-out catalogues must not be mined.*wget"):
        training_catalogues(catalogues, ("gtk20", "wget"))
    # the default list reads the training catalogues only, though wget.mo lies beside them
    assert set(training_catalogues(catalogues)) == {"gtk20", "coreutils"}
    terms = {t.source: t.target for t in mine_catalogues(catalogues)}
    assert terms["Save"] == "Speichern" and terms["Print"] == "Drucken" and "Retry" not in terms


def test_written_glossary_loads_and_matches(catalogues: Path, tmp_path: Path):
    terms = mine_catalogues(catalogues, ("gtk20", "coreutils"), MiningOptions(min_share=0.6))
    path = tmp_path / "out" / "ui-terms.tsv"
    assert write_glossary(terms, path, "mined in a test\nsecond line") == len(terms)
    pairs = read_glossary(path)  # the one parser: rejects a term given two targets
    assert len(pairs) == len(terms) and path.read_text(encoding="utf-8").startswith("# mined in a test\n# second line\n")
    found = find_terms("Choose File - Save As to keep a copy.", Glossary(pairs))
    assert [(m.term, m.target) for m in found] == [("Save As", "Speichern unter")]


def test_labels_differing_in_case_are_one_term():
    messages = [Message("a", None, "Save as", "Speichern unter"), Message("b", None, "Save As", "Speichern unter"),
                Message("c", None, "Save _As", "Speichern _unter"), Message("d", None, "Open", "Öffnen")]
    terms = mine_terms(messages)
    # one term, spelt as most catalogues spell it, counted over all three spellings
    assert [(t.source, t.target, t.count) for t in terms] == [("Open", "Öffnen", 1), ("Save As", "Speichern unter", 3)]
    capitalised = mine_terms([Message("a", None, "open", "öffnen"), Message("a", None, "Open", "Öffnen")],
                             MiningOptions(capitalised=True))
    assert [(t.source, t.target) for t in capitalised] == [("Open", "Öffnen")]


def test_options_out_of_range_are_refused():
    with pytest.raises(ValueError, match="out of range"):
        mine_terms([], MiningOptions(min_share=0.4))


@pytest.mark.skipif(not (DEFAULT_CATALOGUE_DIR / "gtk20.mo").exists(), reason="GTK 2's German catalogue is not installed")
def test_installed_catalogues_give_the_gtk_labels():
    terms = {t.source: t.target for t in mine_catalogues(names=("gtk20",))}
    assert terms["Save As"] == "Speichern unter"
    assert terms["Ctrl"] == "Strg" and terms["Shift"] == "Umschalt"
