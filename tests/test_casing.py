"""ALL-CAPS and Title Case sentences: detected, translated in sentence case, given their case back
(rules, and a round trip through the shipped En->De bundle)."""
from __future__ import annotations

import pytest

from worker.engine.settings import EngineSettings
from worker.engine.translator import Translator
from worker.text import casing
from worker.text.pipeline import TextOptions, prepare
from worker.text.spans import find_spans

from .conftest import REPO_ROOT

BUNDLE = REPO_ROOT / "models" / "multi30k-en-de"


@pytest.fixture(scope="module")
def translator():
    return Translator(BUNDLE, EngineSettings(provider="cpu", intra_op_threads=1))


@pytest.mark.parametrize("sentence, case", [
    ("A DOG RUNS IN THE PARK.", casing.UPPER),
    ("TWO MEN, ONE DOG!", casing.UPPER),
    ("A Dog Runs In The Park.", casing.TITLE),
    ("Man Bites Dog in the City of London", casing.TITLE),
    ("A dog runs in the park.", None),
    ("The NASA team visits London and Paris.", None),
    ("NASA", None),  # one word: an acronym, not a shouted sentence
    ("OK.", None),
    ("VISIT https://example.com/docs NOW!", casing.UPPER),  # spans do not count
])
def test_case_is_detected(sentence, case):
    assert casing.detect(sentence, [(s.start, s.end) for s in find_spans(sentence)]) == case


def test_normalise_keeps_length_spans_and_headline_acronyms():
    text = "NASA Sends New Photos To https://Example.com/X"
    spans = [(s.start, s.end) for s in find_spans(text)]
    out = casing.normalise(text, casing.TITLE, spans)
    assert out == "NASA sends new photos to https://Example.com/X" and len(out) == len(text)
    assert casing.normalise("A DOG RUNS AT STRAßE 5.", casing.UPPER) == "A dog runs at straße 5."


def test_restore_upper_case_keeps_length_and_protected_ranges():
    text = "Ein Hund läuft auf der Straße bei London."
    out = casing.restore(text, casing.UPPER, [(text.index("London"), text.index("London") + 6)])
    assert out == "EIN HUND LÄUFT AUF DER STRAẞE BEI London." and len(out) == len(text)
    assert casing.restore("ein hund.", casing.TITLE) == "Ein hund."
    assert casing.restore("ein hund.", None) == "ein hund."


def test_prepare_decodes_a_shouted_sentence_in_sentence_case():
    prepared = prepare("A DOG RUNS IN THE PARK.")
    assert prepared.text == "A dog runs in the park." and prepared.case == casing.UPPER
    assert prepare("A DOG RUNS IN THE PARK.", TextOptions(restore_case=False)).text == "A DOG RUNS IN THE PARK."


def test_all_caps_round_trip_through_the_model(translator):
    shouted, plain = translator.translate_sentences(["A MAN IS RIDING A BIKE ON THE STREET.",
                                                     "A man is riding a bike on the street."])
    assert shouted.translation == plain.translation.replace("ß", "\u1e9e").upper()
    assert shouted.details["case"] == "upper"
    assert shouted.alignment.pairs == plain.alignment.pairs
    [raw] = translator.translate_sentences(["A MAN IS RIDING A BIKE ON THE STREET."],
                                           text_options=TextOptions(restore_case=False))
    assert raw.translation.lower() != plain.translation.lower()  # the model alone mangles capitals


def test_title_case_round_trip_through_the_model(translator):
    title, plain = translator.translate_sentences(["A Dog Runs Through The Snow.", "A dog runs through the snow."])
    assert title.translation == plain.translation[0].upper() + plain.translation[1:]
    assert title.details["case"] == "title"


def test_all_caps_sentence_keeps_its_spans_verbatim(translator):
    [result] = translator.translate_sentences(["A MAN WITH A RED HAT SELLS XJ-4000 FOR $450."])
    assert "XJ-4000" in result.translation and "$450" in result.translation
    words = result.translation.replace("XJ-4000", "").replace("$450", "")
    assert words == words.upper() and any(c.isalpha() for c in words)


def test_sentence_case_keeps_the_capitals_the_vocabulary_prefers():
    from worker.text.casing import UPPER, normalise, vocabulary_capitals

    pieces = [("\u2581I", -3.0), ("\u2581i", -12.0), ("\u2581Tom", -8.0), ("\u2581A", -4.0), ("\u2581a", -4.5),
              ("\u2581Art", -9.0), ("\u2581art", -9.5), ("\u2581dog", -7.0), ("ing", -5.0)]
    capitalised = vocabulary_capitals(pieces)
    assert [capitalised(w) for w in ("i", "tom", "a", "art", "dog", "paris")] == [True, True, False, False, False, False]
    assert normalise("TOM AND I SAW A DOG.", UPPER, (), capitalised) == "Tom and I saw a dog."


def test_the_general_bundle_restores_names_and_i_in_all_caps_input():
    from worker.engine.translator import Translator
    from worker.text.casing import UPPER, normalise

    translator = Translator("models/en-de")
    assert normalise("TOM AND I WENT TO PARIS WITH MARY.", UPPER, (), translator.capitalised) == \
        "Tom and I went to Paris with Mary."
