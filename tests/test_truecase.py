"""Words' usual case (worker/text/truecase.py): learnt from training text at export, signed into the
bundle (or grafted into one), and used by ``nmt align`` to read lower-cased text in its usual case."""
from __future__ import annotations

import gzip
import json
import shutil

import pytest

from worker.engine.bundle import load_bundle
from worker.text.truecase import CaseTable, FormCounts

from .conftest import REPO_ROOT


def test_the_usual_form_is_learnt_away_from_sentence_starts():
    counts = FormCounts()
    for line in ["Der Hund schläft im Garten.", "Im Garten spielt die EU-Kommission.", "Das ist die EU.",
                 "Ich sehe den Hund. Er schläft.", "Die Kommission tagt.", "Er kommt morgen.", "Sie kommt nicht."]:
        counts.add(line)
    forms = counts.forms()
    # Hund (2x inside), Garten, Kommission, EU; not "Er"/"Die"/"Im" (sentence starts only) nor
    # "schläft" (lower case inside, capitalised nowhere else)
    assert forms == sorted(["EU", "Garten", "Hund", "Kommission"])


def test_a_text_without_capitals_is_recased_keeping_its_length_and_others_are_left_alone():
    table = CaseTable.of([], ["EU", "Kommission", "Hund"])
    lower = "die eu-kommission lobt den hund . der hund schläft : er träumt"
    recased = table.recase(lower, "target")
    assert recased == "Die EU-Kommission lobt den Hund . Der Hund schläft : Er träumt"
    assert len(recased) == len(lower) and len(recased.split(" ")) == len(lower.split(" "))
    assert CaseTable.of([], ["İstanbul"]).target == {}  # its lower case is longer: offsets would move
    assert table.recase("der hund von Tom", "target") == "der hund von Tom"  # a capital: the writer's case
    assert table.recase("the hund", "source") == "The hund"  # the other side's words are not this side's
    assert table.recase("", "target") == "" and table.recase("« hund »", "target") == "« Hund »"


def test_the_table_file_is_byte_stable_and_round_trips(tmp_path):
    a, b = tmp_path / "a.json.gz", tmp_path / "b.json.gz"
    CaseTable.write(a, ["I", "Tom"], ["Haus", "EU"])
    CaseTable.write(b, ["Tom", "I"], ["EU", "Haus"])
    assert a.read_bytes() == b.read_bytes()
    with gzip.open(a, "rt", encoding="utf-8") as f:
        assert json.load(f) == {"source": ["I", "Tom"], "target": ["EU", "Haus"]}
    assert CaseTable.load(a) == CaseTable.of(["I", "Tom"], ["EU", "Haus"])


@pytest.mark.slow
def test_export_signs_a_case_table_of_the_training_pairs_into_the_bundle(tiny_bundle):
    from worker.engine.settings import EngineSettings
    from worker.engine.translator import Translator

    bundle = load_bundle(tiny_bundle)
    entry = bundle.manifest["casing"]
    assert entry["file"] == "casing.json.gz" and entry["file"] in bundle.manifest["files"]
    # The toy pairs ("The woman sees green cat woman a sees small.") capitalise only their first
    # word, which says nothing of a word's usual case: no word has a usual capital.
    assert entry["pairs"] == 400 and entry["source_words"] == entry["target_words"] == 0
    table = Translator(tiny_bundle, EngineSettings(provider="cpu")).case_table
    assert table == CaseTable.of([], [])


@pytest.mark.slow
def test_a_case_table_is_grafted_into_a_bundle_without_changing_its_graphs(tiny_checkpoint, tmp_path):
    from export.graft_casing import main

    target = tmp_path / "captions"
    shutil.copytree(REPO_ROOT / "models" / "multi30k-en-de", target)
    before = load_bundle(target)
    assert before.casing_path is None
    assert main(["--checkpoint", str(tiny_checkpoint), "--data-dir", str(tmp_path / "missing"), str(target)]) == 2
    assert load_bundle(target).signature == before.signature and not (target / "casing.json.gz").exists()

    corpus = tmp_path / "names"  # the checkpoint's train split, in a directory of other pairs
    corpus.mkdir()
    (corpus / "train.en").write_text("I saw Tom in Berlin.\nThen Tom and I left Berlin.\nTom and I sleep.\n")
    (corpus / "train.de").write_text(
        "Ich sah Tom in Berlin.\nDann verließen Tom und ich Berlin.\nTom und ich schlafen.\n")
    assert main(["--checkpoint", str(tiny_checkpoint), "--data-dir", str(corpus), str(target)]) == 0
    bundle = load_bundle(target)  # the signature and every sha256 check out
    assert bundle.signature != before.signature
    assert all(bundle.manifest["files"][name] == digest for name, digest in before.manifest["files"].items())
    assert bundle.manifest["casing"] == {"file": "casing.json.gz", "pairs": 3, "source_words": 3, "target_words": 2}
    assert CaseTable.load(bundle.casing_path) == CaseTable.of(["Berlin", "I", "Tom"], ["Berlin", "Tom"])
