"""Terms of documentation kept by default: product names (worker.text.products) kept as names, and
key spans written in German key names for a German target (worker.text.keynames); the table
against the documentation corpus's counts, and the shipped En->De bundle on real docs-test
sentences (real SentencePiece and ONNX Runtime)."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from worker.engine.bundle import signature_for
from worker.engine.settings import EngineSettings
from worker.engine.translator import Translator
from worker.text.keynames import GERMAN_KEYS, count_key_forms, key_table, localise_keys, localised, read_tagged
from worker.text.names import KEPT_NAME
from worker.text.pipeline import TextOptions, prepare
from worker.text.products import ENGLISH_WORD_NAMES, PRODUCTS, find_products
from worker.text.spans import find_spans

from .conftest import REPO_ROOT

BUNDLE = REPO_ROOT / "models" / "en-de"
TRAIN_TAGGED = Path("/work/data/general-v2/docs/train.tagged")  # the documentation corpus (nmt build-data)
OFF = TextOptions(product_names=False, key_names=False)


@pytest.fixture(scope="module")
def translator():
    return Translator(BUNDLE, EngineSettings(provider="cpu", intra_op_threads=1))


# -- the key table -------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, german", [
    ("Ctrl+F6", "Strg+F6"),
    ("Shift+F10", "Umschalt+F10"),
    ("Alt+F2", "Alt+F2"),  # Alt, F keys, letters and digits are the same in German
    ("Ctrl+Shift+F8", "Strg+Umschalt+F8"),
    ("Shift+Ctrl+Alt+A", "Strg+Alt+Umschalt+A"),  # the German manual's order (docs-test writes it so)
    ("Ctrl+Alt+Shift+K", "Strg+Alt+Umschalt+K"),
    ("Alt+Shift+End", "Alt+Umschalt+Ende"),
    ("Alt+Shift+Home", "Alt+Umschalt+Pos1"),
    ("Ctrl+Enter", "Strg+Eingabetaste"),
    ("Shift+Tab", "Umschalt+Tabulator"),
    ("Ctrl+Shift+Insert", "Strg+Umschalt+Einfg"),
    ("Ctrl+PgDn", "Strg+Bild nach unten"),
    ("Ctrl-D", "Strg-D"),  # separators as the source writes them
    ("Shift + Space", "Umschalt + Leertaste"),
    ("Ctrl+Shift+ +", "Strg+Umschalt+ +"),
    ("Super+Tab", "Super+Tabulator"),
    ("Esc", "Esc"),
])
def test_key_spans_in_german(text, german):
    assert localised(text, "de") == german
    assert localised(text, "de-AT") == german
    assert localised(text, "fr") == text and localised(text, None) == text


def test_only_german_has_a_table():
    assert key_table("de") is GERMAN_KEYS and key_table("DE") is GERMAN_KEYS
    assert key_table("fr") is None and key_table("en") is None and key_table(None) is None


def test_only_key_spans_are_localised_and_a_direction_takes_its_arrow():
    sentence = "Press Alt+Down Arrow or Ctrl+Left, then type Enter and Delete in file Home.txt."
    spans = find_spans(sentence)
    out = localise_keys(sentence, spans, "de")
    keys = [(s.text, s.target) for s in out if s.kind == "key"]
    assert keys == [("Alt+Down Arrow", "Alt+Pfeil nach unten"), ("Ctrl+Left", "Strg+Pfeil nach links")]
    assert [s for s in out if s.kind != "key"] == [s for s in spans if s.kind != "key"]  # the file name untouched
    assert localise_keys(sentence, spans, "fr") == tuple(spans)


def test_count_key_forms_pairs_key_elements_part_by_part():
    pairs = [("Press <key>Ctrl+Shift+F4</key> or <key>Esc</key>.",
              "Drücken Sie <key>Strg+Umschalt+F4</key> oder <key>Esc</key>."),
             ("<key>Alt+Down Arrow</key>", "<key>Alt+Pfeil nach unten</key>"),
             ("<key>Shift+Enter</key> and <key>Tab</key>",  # 2 elements against 1: skipped
              "<key>Umschalttaste+Eingabetaste</key>"),
             ("<key>Delete</key>", "<key>Entf</key>")]
    in_spans, anywhere = count_key_forms(pairs)
    assert in_spans["Ctrl"] == {"Strg": 1} and in_spans["Shift"] == {"Umschalt": 1}
    assert in_spans["Down"] == {"Pfeil nach unten": 1}  # " Arrow" taken in
    assert "Enter" not in anywhere and "Tab" not in anywhere
    assert "Delete" not in in_spans and anywhere["Delete"] == {"Entf": 1} and anywhere["Esc"] == {"Esc": 1}


@pytest.mark.skipif(not os.path.exists(str(TRAIN_TAGGED) + ".en.gz"),
                    reason="the documentation corpus is not built on this machine")
def test_the_table_follows_the_corpus_where_key_spans_say_enough():
    """Each English key name seen at least 4 times in key spans of the training split has the
    table's German form as its most frequent one (the counts the module's docstring cites)."""
    in_spans, _ = count_key_forms(read_tagged(str(TRAIN_TAGGED)))
    checked = 0
    for name, forms in in_spans.items():
        if sum(forms.values()) >= 4 and name[:1].isalpha() and len(name) > 1 and not name[1:].isdigit():
            assert forms.most_common(1)[0][0] == GERMAN_KEYS.get(name, name), (name, forms)
            checked += 1
    assert checked >= 8  # Ctrl, Shift, Alt, Super, Tab, Enter, Space, Home, End, Left, Right...
    assert in_spans["Ctrl"]["Strg"] >= 100 and in_spans["Shift"].most_common(1)[0][0] == "Umschalt"


# -- product names ----------------------------------------------------------------------------------
@pytest.mark.parametrize("sentence, found", [
    ("Instructions for Using LibreOffice Draw", ["LibreOffice Draw"]),
    ("Draw a line in a Draw document.", []),  # an English word alone is the model's
    ("Open the Navigator in OpenOffice Writer and Firefox.", ["OpenOffice Writer", "Firefox"]),
    ("GNOME Shell runs on Debian with systemd, not on Windows.", ["GNOME Shell", "Debian", "systemd"]),
    ("Install gnome, debian-goodies and GNOME-based LibreOfficeKit.", []),  # case-sensitive, whole words
    ("Fontwork in LibreOffice's Gallery", ["Fontwork", "LibreOffice"]),
])
def test_products_case_sensitive_whole_words(sentence, found):
    spans = find_products(sentence)
    assert [s.text for s in spans] == found
    assert all(s.kind == KEPT_NAME and s.replacement == s.text == sentence[s.start:s.end] for s in spans)


def test_product_inside_a_verbatim_span_is_the_span_s():
    sentence = "Open LibreOffice Draw at /usr/lib/Firefox/firefox now."
    spans = find_spans(sentence)
    assert [s.text for s in find_products(sentence, [(s.start, s.end) for s in spans])] == ["LibreOffice Draw"]


def test_english_word_names_are_in_the_list():
    assert ENGLISH_WORD_NAMES < set(PRODUCTS) and {"Draw", "Base", "Math", "Writer", "Impress"} <= ENGLISH_WORD_NAMES


def test_prepare_keeps_products_in_title_case_and_the_options_turn_them_off():
    sentence = "Instructions for Using LibreOffice Draw"
    on = prepare(sentence, TextOptions(), "en", target_language="de")
    assert on.case == "title" and on.text == "Instructions for using LibreOffice Draw"
    assert [n.text for n in on.names] == ["LibreOffice Draw"]
    off = prepare(sentence, TextOptions(product_names=False), "en", target_language="de")
    assert off.names == () and "libreoffice draw" in off.text
    assert prepare(sentence, TextOptions(protect_spans=False), "en", target_language="de").names == ()


def test_prepare_sets_german_key_targets_for_german_only():
    sentence = "To return to the document, press Ctrl+F6."
    def keys(**kw):
        options = kw.pop("options", TextOptions())
        return [(s.text, s.replacement) for s in prepare(sentence, options, "en", **kw).spans if s.kind == "key"]
    assert keys(target_language="de") == [("Ctrl+F6", "Strg+F6")]
    assert keys(target_language="fr") == [("Ctrl+F6", "Ctrl+F6")]
    assert keys() == [("Ctrl+F6", "Ctrl+F6")]  # target unknown
    assert keys(target_language="de", options=TextOptions(key_names=False)) == [("Ctrl+F6", "Ctrl+F6")]


# -- the shipped bundle on docs-test sentences ------------------------------------------------------------
KEY_SENTENCES = [  # docs-test (LibreOffice Draw's help) and the German manual's key names
    ("To return to the document, press Ctrl+F6.", "Strg+F6", "Ctrl+F6"),
    ("To choose a command from the context menu for the object, press Shift+F10.", "Umschalt+F10", "Shift+F10"),
    ("Press Ctrl+F3 to exit the group editing mode.", "Strg+F3", "Ctrl+F3"),
]


def test_key_names_in_german_through_the_translator(translator):
    sentences = [s for s, _, _ in KEY_SENTENCES]
    on = translator.translate_sentences(sentences)
    off = translator.translate_sentences(sentences, text_options=TextOptions(key_names=False))
    for (sentence, german, english), a, b in zip(KEY_SENTENCES, on, off):
        assert german in a.translation and english not in a.translation, a.translation
        assert english in b.translation and german not in b.translation, b.translation
        span = next(d for d in a.details.get("spans", [{"kind": "key", "target": None}]) if d["kind"] == "key")
        assert span["target"] is None or a.translation[slice(*span["target"])] == german


def test_a_line_of_keys_is_its_german_names_aligned(translator):
    """Shortcut tables: a cell that is one key combination is not decoded; its translation is the
    combination in German names (docs-test: "Shift+Ctrl+Alt+A" -> "Strg+Alt+Umschalt+A")."""
    results = translator.translate_sentences(["Ctrl+Shift+F8", "Shift+Ctrl+Alt+A", "Alt+Shift+End", "F5"])
    assert [r.translation for r in results] == ["Strg+Umschalt+F8", "Strg+Alt+Umschalt+A", "Alt+Umschalt+Ende", "F5"]
    first = results[0]
    assert first.details["spans"][0]["target"] == [0, len("Strg+Umschalt+F8")]
    assert {i for i, _ in first.alignment.pairs} == set(range(len(first.alignment.source_spans)))
    off = translator.translate_sentences(["Ctrl+Shift+F8"], text_options=TextOptions(key_names=False))
    assert off[0].translation == "Ctrl+Shift+F8"


PRODUCT_SENTENCES = [  # docs-test; the German manual keeps each name as it is
    ("Instructions for Using LibreOffice Draw", "LibreOffice Draw"),
    ("Press Alt+F2, type in lg and press Enter to open Looking Glass.", "Looking Glass"),
]


def test_product_names_kept_through_the_translator(translator):
    sentences = [s for s, _ in PRODUCT_SENTENCES]
    on = translator.translate_sentences(sentences)
    off = translator.translate_sentences(sentences, text_options=OFF)
    for (sentence, name), a, b in zip(PRODUCT_SENTENCES, on, off):
        assert name in a.translation, a.translation
        assert name not in b.translation, b.translation  # the model alone loses it (measured: docs/models.md)


def test_a_non_german_target_keeps_english_key_names(translator, tmp_path):
    """The same model files as a bundle into French (the manifest's target language, as a
    multilingual bundle's other target would have it): key spans keep their English names,
    product names are kept all the same."""
    manifest = json.loads((BUNDLE / "manifest.json").read_text(encoding="utf-8"))
    manifest["target_language"] = "fr"
    manifest["signature"] = signature_for(manifest)
    for name in manifest["files"]:
        (tmp_path / name).symlink_to(BUNDLE / name)
    (tmp_path / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    french = Translator(tmp_path, EngineSettings(provider="cpu", intra_op_threads=1))
    assert french.target_language == "fr"
    sentences = ["To return to the document, press Ctrl+F6.", "Ctrl+Shift+F8",
                 "Instructions for Using LibreOffice Draw"]
    results = french.translate_sentences(sentences)
    assert "Ctrl+F6" in results[0].translation and "Strg" not in results[0].translation
    assert results[1].translation == "Ctrl+Shift+F8"
    assert "LibreOffice Draw" in results[2].translation
