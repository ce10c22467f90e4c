"""Restoring a segment is a fixed sequence of passes, each module entered once, in the order the
data needs (``worker.text.pipeline.restore``): the dashes and case of every hypothesis
(``casing``), the names the best carries (``names``), the spans back (``reinsert``), the glossary's
terms (``glossary``); then the engine's quality assessment and consistency check. Followed with the
profile hook of ``bench/restore_rooms.py`` through the real engine and models/en-de."""
from __future__ import annotations

import sys

import pytest

from worker.text import casing
from worker.text.consistency import consistent, numbers_kept, span_consistent
from worker.text.glossary import Glossary
from worker.text.masking import mask
from worker.text.names import carried_names
from worker.text.pipeline import TextOptions, prepare, restored_texts
from worker.text.reinsert import reinserted, reinserted_texts
from worker.text.spans import find_spans

from .conftest import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "bench"))
from restore_rooms import rooms_of, stays  # noqa: E402

BUNDLE = REPO_ROOT / "models" / "en-de"
GLOSSARY = TextOptions(glossary=Glossary((("printer", "Drucker"), ("menu", "Menü"))))
ONE_TRIP = ["casing", "reinsert", "glossary", "quality", "consistency"]

needs_model = pytest.mark.skipif(not (BUNDLE / "manifest.json").exists(), reason="models/en-de not present")


@pytest.fixture(scope="module")
def translator():
    from worker.engine import EngineSettings, Translator

    return Translator(BUNDLE, EngineSettings(provider="cpu", intra_op_threads=1))


@needs_model
@pytest.mark.parametrize("sentence, rooms", [
    # ALL CAPS, a URL, a glossary term and an n-best list of 3: each hypothesis's case, then every
    # hypothesis's spans, in one visit each (the n-best list once went back to casing and reinsert)
    ("OPEN THE MENU AND VISIT HTTPS://EXAMPLE.COM TODAY.", ONE_TRIP),
    # a name the translation carries: found before the spans go back, so none takes its place
    ("Anna Schmidt opens the menu at https://example.com today.",
     ["casing", "names", "reinsert", "glossary", "quality", "consistency"]),
])
def test_a_segment_whose_best_hypothesis_keeps_its_spans_enters_each_room_once(translator, sentence, rooms):
    trail = stays(rooms_of(translator, sentence, translator.search_options(n_best=3), GLOSSARY))
    assert trail == rooms
    result = translator.translate_sentences([sentence], translator.search_options(n_best=3), text_options=GLOSSARY)[0]
    assert "https://example.com" in result.translation.lower() and len(result.n_best) == 3


@needs_model
def test_a_rejected_best_hypothesis_costs_one_more_trip_not_one_per_hypothesis(translator):
    """The best changes a span (``Bruch LH-400 Blätter``): the beam's other four hypotheses are
    restored together (casing, reinsert) and checked together (consistency); the one taken is
    aligned by the engine (whose decoder facts are the quality module's) and restored on its own
    trip. Hypothesis by hypothesis, the check once went back to reinsert and consistency 4 times."""
    sentence = "Flight LH-400 leaves from gate A12."
    trail = stays(rooms_of(translator, sentence, translator.search_options(), GLOSSARY))
    assert trail == ONE_TRIP + ["casing", "reinsert", "consistency", "quality"] + ONE_TRIP
    result = translator.translate_sentences([sentence], text_options=GLOSSARY)[0]
    assert "LH-400" in result.translation and "A12" in result.translation
    assert any("of the beam is taken" in w for w in result.warnings)


# -- the passes, one by one ------------------------------------------------------------------------
def test_casing_pass_puts_every_hypothesis_in_the_source_case_and_leaves_stand_ins_alone():
    texts = ["Öffnen Sie Baby heute.", "Baby öffnen."]
    assert casing.recased(texts, casing.UPPER, ["Baby"]) == ["ÖFFNEN SIE Baby HEUTE.", "Baby ÖFFNEN."]
    assert casing.recased(texts, None, ["Baby"]) == texts


def test_names_pass_finds_the_names_a_translation_carries_and_where():
    names = [s for s in prepare("Anna met Jürgen in Munich.").names]
    protected, found = carried_names(names, "Anna traf Jürgen in München.")
    assert {n.text for n in found} == {"Anna", "Jürgen", "Munich"}
    assert sorted(protected) == [(0, 4), (10, 16), (20, 27)]


def test_spans_pass_leaves_a_carried_name_where_the_model_wrote_it_and_restores_the_n_best_list():
    prepared = prepare("Anna reads https://example.com/a today.")
    masked = prepared.masked
    name = next(s for s in masked.slots if s.span.text == "Anna")
    stand_in = next(s.stand_in for s in masked.slots if not s.kept)
    back = reinserted(masked, f"Anna liest {stand_in} heute.", [f"Anna liest heute {stand_in}."], (),
                      {name}, [(0, 4)])
    assert back.translation == "Anna liest https://example.com/a heute."
    assert back.n_best == ("Anna liest heute https://example.com/a.",)
    assert "names" not in back.details and back.details["spans"][0]["method"] == "copied"


def test_spans_pass_of_a_sentence_without_slots_deletes_only_made_up_placeholders_unless_told():
    masked = mask("Add two hyphens here.", [])
    back = reinserted(masked, "Füge %s 2 Bindestriche hinzu.", [], ())
    assert back.translation == "Füge 2 Bindestriche hinzu." and back.restored and back.details["removed"] == ["%s"]
    assert reinserted_texts(masked, ["Füge %s 2 Bindestriche hinzu.", "Füge 2 Bindestriche hinzu."]) == [
        "Füge 2 Bindestriche hinzu.", "Füge 2 Bindestriche hinzu."]


def test_restored_texts_gives_each_hypothesis_its_case_and_spans_as_the_n_best_list_gets_them():
    prepared = prepare("COPY /ETC/HOSTS TO THE USB STICK.")
    stand_in = next(s.stand_in for s in prepared.masked.slots if not s.kept)
    assert restored_texts(prepared, [f"Kopieren Sie {stand_in} auf den USB-Stick.", f"{stand_in} kopieren."]) == [
        "KOPIEREN SIE /ETC/HOSTS AUF DEN USB-STICK.", "/ETC/HOSTS KOPIEREN."]


def test_consistency_pass_checks_every_hypothesis_it_is_given_as_the_two_checks_do():
    source = "Run grep --no-messages 3 times."
    masked = mask(source, find_spans(source))  # Baby for the command, Frisbee for the number
    hypotheses = [("Führen Sie Baby Frisbee Mal aus.", "Führen Sie grep --no-messages 3 Mal aus."),
                  ("Führen Sie Baby Frisbee 4 Mal aus.", "Führen Sie grep --no-messages 3 4 Mal aus."),
                  ("Führen Sie Baby Mal aus.", "Führen Sie grep --no-messages Mal aus.")]
    expected = [span_consistent(masked, d, t) and numbers_kept(source, t, "en", "de") for d, t in hypotheses]
    assert consistent(masked, source, hypotheses, "en", "de") == expected == [True, False, False]
