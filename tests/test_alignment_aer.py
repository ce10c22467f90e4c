"""bench/alignment_aer.py's scoring: AER with sure and possible links (Och and Ney 2003) on hand-made
links, and the reader of a gold set laid out like align-bicici-deen."""
from __future__ import annotations

import gzip
import importlib.util

import pytest

from .conftest import REPO_ROOT


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("alignment_aer", REPO_ROOT / "bench" / "alignment_aer.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_aer_counts_possible_links_for_precision_and_sure_links_for_recall(bench):
    # Two pairs. Predicted A: 4 links; sure S: 3 links; possible P = S + {(1, 2), (3, 3)}.
    predicted = [{(0, 0), (1, 2), (2, 1)}, {(0, 1)}]
    sure = [{(0, 0), (1, 1)}, {(0, 1)}]
    possible = [{(0, 0), (1, 1), (1, 2)}, {(0, 1), (3, 3)}]
    row = bench.aer(predicted, sure, possible)
    # A & S = {(0, 0)}, {(0, 1)}: 2. A & P = {(0, 0), (1, 2)}, {(0, 1)}: 3.
    # AER = 1 - (2 + 3) / (4 + 3) = 2/7; precision |A & P| / |A| = 3/4; recall |A & S| / |S| = 2/3.
    assert row["aer"] == pytest.approx(100 * 2 / 7)
    assert row["precision"] == pytest.approx(75.0)
    assert row["recall"] == pytest.approx(100 * 2 / 3)
    assert (row["links"], row["reference_links"]) == (4, 3)


def test_aer_without_possible_links_counts_every_link_sure(bench):
    predicted = [{(0, 0), (1, 2), (2, 1)}, {(0, 1)}]
    sure = [{(0, 0), (1, 1)}, {(0, 1)}]
    # 1 - 2|A & S| / (|A| + |S|) = 1 - 4/7
    assert bench.aer(predicted, sure)["aer"] == pytest.approx(100 * 3 / 7)
    assert bench.aer(predicted, sure) == bench.aer(predicted, sure, sure)


def test_read_bicici_reads_pairs_and_english_first_links(bench, tmp_path):
    for name, lines in (("test.en.gz", ["the house .", "yes"]), ("test.de.gz", ["das haus .", "ja"])):
        with gzip.open(tmp_path / name, "wt", encoding="utf-8") as f:
            f.write("".join(line + "\n" for line in lines))
    (tmp_path / "sure.txt").write_text("0-0 1-1\n0-0\n", encoding="utf-8")
    (tmp_path / "possible.txt").write_text("0-0 1-1 2-2\n0-0\n", encoding="utf-8")
    pairs, sure, possible = bench.read_bicici(tmp_path)
    assert pairs == [("the house .", "das haus ."), ("yes", "ja")]
    assert sure == [{(0, 0), (1, 1)}, {(0, 0)}]
    assert possible == [{(0, 0), (1, 1), (2, 2)}, {(0, 0)}]

    (tmp_path / "possible.txt").write_text("0-0 1-1 2-2\n", encoding="utf-8")
    with pytest.raises(ValueError, match="2 pairs, 2 sure and 1 possible"):
        bench.read_bicici(tmp_path)


def test_punctuation_links_only_to_punctuation_in_the_baselines_rule(bench):
    links = {(0, 0), (1, 1), (2, 1), (2, 2), (3, 3), (1, 2)}
    # "He said , yes ." / "Er sagte , ja" : the English comma (2) may link to the German one (2) only
    kept = bench.punctuation_to_punctuation(links, "He said , yes .", "Er sagte , ja")
    assert kept == {(0, 0), (1, 1), (2, 2), (3, 3)}


def test_counts_hold_the_terms_of_aer_per_pair(bench):
    predicted = [{(0, 0), (1, 2), (2, 1)}, {(0, 1)}]
    sure = [{(0, 0), (1, 1)}, {(0, 1)}]
    possible = [{(0, 0), (1, 1), (1, 2)}, {(0, 1), (3, 3)}]
    assert bench.counts(predicted, sure, possible).tolist() == [[1, 2, 3, 2], [1, 1, 1, 1]]
    assert bench.counts([], []).shape == (0, 4)


def test_paired_bootstrap_finds_the_better_aligner_and_brackets_the_difference(bench):
    # 50 pairs of 4 sure links each. Ours finds all 4 in 40 pairs and 2 in 10; the two baseline runs
    # find 3 in every pair. A tie with itself is never "better".
    sure = [{(k, k) for k in range(4)} for _ in range(50)]
    ours = [set(s) if n < 40 else {(0, 0), (1, 1)} for n, s in enumerate(sure)]
    baseline = [{(0, 0), (1, 1), (2, 2)} for _ in sure]
    table = bench.counts(ours, sure)
    runs = [bench.counts(baseline, sure)] * 2
    test = bench.paired_bootstrap(table, runs, samples=500)
    expected = bench.aer(ours, sure)["aer"] - bench.aer(baseline, sure)["aer"]
    assert test["difference"] == pytest.approx(expected)
    assert test["low"] <= expected <= test["high"] < 0
    assert test["better_share"] == 1.0
    worse = bench.paired_bootstrap(runs[0], [table], samples=500)
    assert worse["better_share"] == 0.0 and worse["low"] > 0
    tie = bench.paired_bootstrap(table, [table], samples=200)
    assert (tie["difference"], tie["better_share"]) == (0.0, 0.0)
