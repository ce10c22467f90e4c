"""Confidence across domains: the log-probability per output character (``CHAR_FEATURES``), fits
that name it beside fits that do not, and the bench's cache of decoded units, from which the
features are computed again without decoding (bench/confidence.py), checked against what the
engine computes with ONNX Runtime and models/en-de."""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from worker.engine.settings import EngineSettings
from worker.engine.translator import Translator
from worker.local.calibrate import Sample, fit
from worker.text.quality import (
    BASE_FEATURES,
    CHAR_FEATURES,
    COMPUTED,
    FEATURES,
    ConfidenceModel,
    DecodedChunk,
    decoder_facts,
    model_for,
)

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

M = "\u2581"


def _unit(source_pieces, target_pieces, log_probs, text):
    s, t = len(source_pieces), len(target_pieces)
    attention = np.full((t + 1, s + 1), 1.0 / (s + 1), dtype=np.float32)
    return DecodedChunk(source_pieces, list(range(4, 4 + s)), target_pieces, np.asarray(log_probs, dtype=np.float32),
                        attention, 0, text)


def test_the_log_probability_per_character_sums_the_tokens_over_the_letters_without_word_markers():
    # "Das Haus." (8 characters without the word markers), 3 tokens and eos
    lps = [-0.5, -1.0, -0.25, -0.05]
    facts = decoder_facts([_unit([M + "The", M + "house", "."], [M + "Das", M + "Haus", "."], lps, "The house.")])
    assert set(CHAR_FEATURES) <= set(COMPUTED) and not set(CHAR_FEATURES) & set(FEATURES)
    assert facts.features["log_prob_per_char"] == pytest.approx(sum(lps) / 8, rel=1e-6)
    assert facts.features["mean_log_prob"] == pytest.approx(sum(lps) / 4, rel=1e-6)


def test_per_character_long_pieces_and_short_ones_of_equal_probability_score_alike():
    # The same probability for the same text: one sure piece per word, or a word split into pieces
    # that each carry part of its log-probability. Per piece the split one looks surer; per
    # character they are equal.
    whole = _unit([M + "Layer"], [M + "Ebene"], [-1.2, -0.1], "Layer")
    split = _unit([M + "Layer"], [M + "E", "be", "ne"], [-0.4, -0.4, -0.4, -0.1], "Layer")
    a, b = decoder_facts([whole]).features, decoder_facts([split]).features
    assert b["mean_log_prob"] > a["mean_log_prob"] + 0.3
    assert a["log_prob_per_char"] == pytest.approx(b["log_prob_per_char"], rel=1e-6)


def test_units_of_one_sentence_are_counted_together_and_an_empty_output_does_not_divide_by_zero():
    a = _unit([M + "big"], [M + "groß"], [-0.2, -0.1], "big")
    b = _unit([M + "house"], [M + "Haus"], [-0.3, -0.1], "house")
    assert decoder_facts([a, b]).features["log_prob_per_char"] == pytest.approx(-0.7 / 8, rel=1e-6)
    empty = decoder_facts([_unit([M + "Hi"], [], [-2.0], "Hi")]).features
    assert empty["log_prob_per_char"] == pytest.approx(-2.0)


def test_fits_naming_the_new_feature_and_fits_of_the_eleven_and_eighteen_load_and_score():
    rng = np.random.default_rng(0)
    data = []
    for _ in range(60):
        features = {name: float(rng.normal()) for name in COMPUTED}
        chrf = 100 / (1 + math.exp(-2 * features["log_prob_per_char"]))
        data.append(Sample(features, chrf))
    for names in (CHAR_FEATURES, CHAR_FEATURES + ("char_length_ratio",), FEATURES, BASE_FEATURES):
        model = fit(data, features=names)
        assert model.features == tuple(names)
        stored = model_for({"quality": json.loads(json.dumps(model.to_json()))})
        for sample in data[:5]:
            assert stored.confidence(sample.features) == pytest.approx(model.confidence(sample.features), abs=1e-4)
        # a sample that holds only the names the fit weighs is scored: old fits need nothing new
        only = {name: data[0].features[name] for name in names}
        assert stored.confidence(only) == pytest.approx(stored.confidence(data[0].features))
    assert fit(data, features=CHAR_FEATURES).weights[0] > 0  # higher per-character log-probability, higher chrF
    with pytest.raises(ValueError, match="not among"):
        ConfidenceModel.from_json({"features": ["log_prob_per_word"], "weights": [1.0], "bias": 0.0, "mean": [0.0],
                                   "scale": [1.0]}, "bundle")


@pytest.fixture(scope="module")
def general():
    return Translator("models/en-de", EngineSettings(provider="cpu", intra_op_threads=1))


def test_the_bench_cache_gives_back_the_engines_features_exactly(general, tmp_path):
    # Decoded through the engine with the bench's clock on, stored as the cache stores units (JSON),
    # read back, the features ``decoder_facts`` computes are the engine's, to the bit.
    import bench.confidence as bench

    clock = bench.FeatureClock()
    try:
        sentences = ["Where is the train station?", "Hello.",
                     "Click Tools - Options - LibreOffice Writer - Print to change the printer settings.",
                     "The committee postponed its decision until the next meeting, which is set for May 3."]
        results = general.translate_sentences(sentences)
        assert all(r.facts is not None for r in results)
        for result in results:
            units = clock.units[id(result.facts)][1]
            stored = json.loads(json.dumps([bench.unit_json(u) for u in units]))
            again = decoder_facts([bench.unit_from_json(u) for u in stored], piece=general.target_sp.id_to_piece)
            assert again.features == result.facts.features
            assert set(again.features) == set(COMPUTED)
    finally:
        clock._engine.decoder_facts = clock._facts
        import worker.text.quality as quality

        quality.agreement_features = clock._agreement


def test_the_engine_ranks_a_plain_sentence_above_a_mangled_one_per_character(general):
    plain, mangled = general.translate_sentences(["The house is red.", "Xqz vrrt plmn okkd."])
    assert plain.facts.features["log_prob_per_char"] > mangled.facts.features["log_prob_per_char"]
    for r in (plain, mangled):
        f = r.facts.features
        assert f["log_prob_per_char"] < 0 and math.isfinite(f["log_prob_per_char"])
