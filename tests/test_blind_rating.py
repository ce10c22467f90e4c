"""bench/blind_rating.py: the sheet a reviewer rates blind (two real bundles through ONNX Runtime
and the human reference, mixed, no system named), and the counts from the ratings, with clear
refusals of ratings that do not fit the sheet."""
from __future__ import annotations

import gzip
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SCRIPT = REPO_ROOT / "bench" / "blind_rating.py"
BUNDLES = [REPO_ROOT / "models" / "multi30k-en-de", REPO_ROOT / "models" / "multi30k-en-de-int8"]

SOURCES = ["A man is riding a bike down the street.", "Two dogs play in the snow.", "Hi.",
           "A woman in a red coat is reading a book on a bench.", "Children are playing soccer in a park.",
           "A chef cooks food in a busy kitchen."]
REFERENCES = ["Ein Mann fährt mit dem Fahrrad die Straße hinunter.", "Zwei Hunde spielen im Schnee.", "Hallo.",
              "Eine Frau in einem roten Mantel liest ein Buch auf einer Bank.",
              "Kinder spielen Fußball in einem Park.", "Ein Koch kocht Essen in einer belebten Küche."]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def sheet(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("blind")
    with gzip.open(base / "captions.en.gz", "wt") as handle:
        handle.write("\n".join(SOURCES) + "\n")
    with gzip.open(base / "captions.de.gz", "wt") as handle:
        handle.write("\n".join(REFERENCES) + "\n")
    out = base / "out"
    done = run("sheet", *[a for b in BUNDLES for a in ("--bundle", str(b))], "--src", str(base / "captions.en.gz"),
               "--ref", str(base / "captions.de.gz"), "--lines", "4", "--seed", "3", "--out", str(out))
    assert done.returncode == 0, done.stderr
    return out


def items(sheet: Path) -> list[dict]:
    return [json.loads(line) for line in (sheet / "sheet.jsonl").read_text().splitlines()]


def test_the_sheet_mixes_both_bundles_and_the_reference_without_naming_them(sheet):
    rows, key = items(sheet), json.loads((sheet / "key.json").read_text())
    assert len(rows) == 4 * 3 and set(key["items"]) == {r["item"] for r in rows}
    assert all(set(r) == {"item", "source", "translation"} for r in rows)  # nothing says whose
    assert "Hi." not in {r["source"] for r in rows}  # under 3 words: not drawn
    systems = [key["items"][r["item"]]["system"] for r in rows]
    assert sorted(Counter(systems).values()) == [4, 4, 4] and "human" in systems
    grouped = [s for _ in range(4) for s in [*key["systems"], "human"]]  # the order before the shuffle
    assert systems != grouped
    human = [r for r in rows if key["items"][r["item"]]["system"] == "human"]
    assert all(r["translation"] == REFERENCES[SOURCES.index(r["source"])] for r in human)
    machine = [r for r in rows if key["items"][r["item"]]["system"] != "human"]
    from worker.engine.settings import EngineSettings
    from worker.engine.translator import Translator

    translator = Translator(BUNDLES[0], EngineSettings(provider="cpu", intra_op_threads=1))
    own = [r for r in machine if key["items"][r["item"]]["system"] == translator.bundle.signature]
    expected = translator.translate_sentences([r["source"] for r in own])
    assert len(own) == 4 and [r["translation"] for r in own] == [e.translation for e in expected]


def test_scores_count_each_rating_per_set_and_system(sheet, tmp_path):
    key = json.loads((sheet / "key.json").read_text())["items"]
    ratings = tmp_path / "ratings.jsonl"
    ratings.write_text("\n".join(json.dumps({"item": i, "rating": "usable" if e["system"] == "human" else "edit"})
                                 for i, e in key.items()) + "\n")
    done = run("score", "--dir", str(sheet), "--ratings", str(ratings), "--json")
    assert done.returncode == 0, done.stderr
    table = json.loads(done.stdout)["captions"]
    assert table["human"] == {"usable": 4, "edit": 0, "retranslate": 0}
    assert sorted(s for s in table if s != "human") == sorted(json.loads((sheet / "key.json").read_text())["systems"])
    assert all(counts == {"usable": 0, "edit": 4, "retranslate": 0} for s, counts in table.items() if s != "human")


@pytest.mark.parametrize("break_it, message", [
    (lambda lines: lines[1:], "not rated"),
    (lambda lines: lines + lines[:1], "rated twice"),
    (lambda lines: [lines[0].replace('"edit"', '"fine"').replace('"usable"', '"fine"')] + lines[1:], "not one of"),
    (lambda lines: ['{"item": "0000000000", "rating": "edit"}'] + lines[1:], "not on the sheet"),
    (lambda lines: ["usable"] + lines[1:], "not a rating line"),
])
def test_ratings_that_do_not_fit_the_sheet_are_refused_with_the_reason(sheet, tmp_path, break_it, message):
    key = json.loads((sheet / "key.json").read_text())["items"]
    lines = [json.dumps({"item": i, "rating": "edit"}) for i in key]
    ratings = tmp_path / "ratings.jsonl"
    ratings.write_text("\n".join(break_it(lines)) + "\n")
    done = run("score", "--dir", str(sheet), "--ratings", str(ratings))
    assert done.returncode == 2 and message in done.stderr, done.stderr


def test_a_bundle_named_twice_or_too_few_lines_is_refused(tmp_path):
    source, reference = tmp_path / "s.en", tmp_path / "s.de"
    source.write_text("\n".join(SOURCES) + "\n")
    reference.write_text("\n".join(REFERENCES) + "\n")
    twice = run("sheet", "--bundle", str(BUNDLES[0]), "--bundle", str(BUNDLES[0]), "--src", str(source),
                "--ref", str(reference), "--lines", "2", "--out", str(tmp_path / "o"))
    assert twice.returncode == 2 and "the same bundle named twice" in twice.stderr
    few = run("sheet", "--bundle", str(BUNDLES[0]), "--src", str(source), "--ref", str(reference),
              "--lines", "9", "--out", str(tmp_path / "o"))
    assert few.returncode == 2 and "only 5 lines of 3-60 words, 9 asked for" in few.stderr
