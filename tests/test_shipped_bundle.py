"""The shipped bundle is a valid, verified, self-describing bundle within its size budget.
(Structure and recorded figures only: tests never depend on the model's exact outputs.)"""
from __future__ import annotations

import pytest

from worker.engine.bundle import load_bundle, resolve_bundle_path, verify_graphs

from .conftest import REPO_ROOT

BUNDLE = REPO_ROOT / "models" / "multi30k-en-de"
INT8 = REPO_ROOT / "models" / "multi30k-en-de-int8"
GENERAL = REPO_ROOT / "models" / "en-de"
GENERAL_INT8 = REPO_ROOT / "models" / "en-de-int8"


def test_shipped_bundle_validates_and_fits_in_30_mb():
    bundle = load_bundle(BUNDLE)
    verify_graphs(bundle)
    assert sum(p.stat().st_size for p in BUNDLE.iterdir()) <= 30_000_000


def test_the_general_model_is_the_default_and_records_its_corpora_and_test_sets():
    assert resolve_bundle_path(None).resolve() == GENERAL.resolve()
    for path, precision in ((GENERAL, "fp32"), (GENERAL_INT8, "int8")):
        bundle = load_bundle(path)
        verify_graphs(bundle)
        m = bundle.manifest
        assert (m["name"], m["precision"], m["source_language"], m["target_language"]) == (path.name, precision, "en", "de")
        corpora = {c["name"] for c in m["training"]["config"]["data"]["corpora"]}
        assert {"tatoeba", "wmt-news", "multi30k", "software", "docs"} <= corpora
        assert set(m["scores"]["test"]) == {"newstest2014", "tatoeba-test", "software-test", "docs-test"}
        assert m["model_config"]["encoder"] == "transformer" and "aligner.onnx" in m["files"]
        assert all(0 < t["bleu"] < 100 and 0 < t["chrf"] < 100 for t in m["scores"]["test"].values())
        parity = m["verification"]["search_parity"]
        assert parity["greedy_equal"] == parity["beam_equal"] == parity["sentences"] >= 200
    assert load_bundle(GENERAL_INT8).manifest["scores"]["valid_bleu_delta"] >= -0.5


def test_shipped_manifest_records_recipe_scores_and_verification():
    m = load_bundle(BUNDLE).manifest
    assert (m["source_language"], m["target_language"], m["precision"]) == ("en", "de", "fp32")
    assert m["scores"]["test_set"] == "test_2016_flickr" and m["scores"]["test_bleu"] >= 35
    assert m["training"]["config"]["model"]["attention"] == "additive"
    parity = m["verification"]["search_parity"]
    assert parity["sentences"] >= 200 and parity["greedy_equal"] == parity["beam_equal"] == parity["sentences"]
    assert max(m["verification"]["graph_max_abs_diff"].values()) <= 1e-4
    assert m["decoding_defaults"]["beam"] == 5


def test_shipped_int8_bundle_is_the_same_model_within_half_a_bleu_point():
    bundle = load_bundle(INT8)
    verify_graphs(bundle)
    m, fp32 = bundle.manifest, load_bundle(BUNDLE).manifest
    assert m["precision"] == "int8" and m["model_config"] == fp32["model_config"]
    assert m["scores"]["valid_bleu_delta"] >= -0.5 and m["scores"]["test_bleu"] >= 35
    assert m["training"] == fp32["training"]


@pytest.mark.slow
@pytest.mark.parametrize("bundle", [GENERAL, BUNDLE], ids=["general", "captions"])
def test_shipped_model_translates_the_sample(tmp_path, bundle):
    from worker.engine.settings import EngineSettings
    from worker.engine.translator import Translator

    text = (REPO_ROOT / "examples" / "sample.en.txt").read_text(encoding="utf-8")
    result = Translator(bundle, EngineSettings(provider="cpu")).translate_document(text)
    assert result.translation.count("\n") == text.count("\n")
    assert all(s.translation for s in result.segments)
