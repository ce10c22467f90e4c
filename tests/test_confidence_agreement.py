"""Agreement within the beam's n-best list (worker.text.agreement): chrF as sacreBLEU computes it,
the features from finished hypotheses, and the features the engine computes with ONNX Runtime
and models/en-de for every segment."""
from __future__ import annotations

import math
from dataclasses import dataclass

import pytest
from sacrebleu.metrics import CHRF

from worker.engine.settings import EngineSettings
from worker.engine.translator import Translator
from worker.text.agreement import AGREEMENT_FEATURES, GAP_CAP, agreement_features, chrf
from worker.text.quality import COMPUTED, FEATURES, ConfidenceModel, model_for

M = "\u2581"


@dataclass(frozen=True)
class Ended:
    """A finished hypothesis as the search gives it: target ids and the ranking score."""

    tokens: tuple[int, ...]
    score: float


# target ids of a toy vocabulary: 0 ▁Das 1 ▁Haus 2 ▁ist 3 ▁rot 4 ▁Gebäude 5 ▁blau 6 .
PIECES = [M + "Das", M + "Haus", M + "ist", M + "rot", M + "Gebäude", M + "blau", "."]


def _pieces(hypothesis):
    return [PIECES[t] for t in hypothesis.tokens]


@pytest.mark.parametrize("hypothesis, reference", [
    ("Das Haus ist rot.", "Das Haus ist rot."),
    ("Das Haus ist rot.", "Das Gebäude ist blau."),
    ("Die Katze saß auf der Matte.", "Die Katze sitzt auf dem Teppich."),
    ("Hallo.", "Guten Tag, wie geht es Ihnen?"),
    ("a", "Das Haus ist rot."),
])
def test_chrf_is_sacrebleus_sentence_chrf(hypothesis, reference):
    expected = CHRF().sentence_score(hypothesis, [reference]).score / 100
    a, b = _bare(hypothesis), _bare(reference)
    assert chrf(a, b) == pytest.approx(expected, abs=1e-12)
    # told of a shared start and end (as the beam's token prefix and suffix tell), the same
    start = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    end = next((i for i, (x, y) in enumerate(zip(a[::-1], b[::-1])) if x != y), min(len(a), len(b)))
    assert chrf(a, b, start, min(end, min(len(a), len(b)) - start)) == pytest.approx(expected, abs=1e-12)


def _bare(text):
    return "".join(text.split())


def test_alternatives_that_repeat_the_best_agree_and_others_do_not():
    same = [Ended((0, 1, 2, 3, 6), -0.2), Ended((0, 1, 2, 3, 6), -0.9)]  # one text spelt by two hypotheses
    other = [Ended((0, 1, 2, 3, 6), -0.2), Ended((0, 4, 2, 5, 6), -0.9)]
    agree, differ = (agreement_features([(_pieces(hyps[0]), hyps)], PIECES.__getitem__) for hyps in (same, other))
    assert agree["nbest_agreement"] == pytest.approx(1.0) and agree["nbest_distinct"] == 1.0
    assert differ["nbest_agreement"] == pytest.approx(CHRF().sentence_score("Das Haus ist rot.", ["Das Gebäude ist blau."]).score / 100)
    assert differ["nbest_distinct"] == 2.0
    for features in (agree, differ):
        assert features["nbest_mass"] == pytest.approx(1 / (1 + math.exp(-0.7)))
        assert features["nbest_gap"] == pytest.approx(0.7)


def test_the_agreement_weighs_alternatives_by_their_probability_and_units_by_length():
    best, near, far = Ended((0, 1, 2, 3, 6), -0.1), Ended((0, 1, 2, 5, 6), -0.5), Ended((4, 5), -3.0)
    features = agreement_features([(_pieces(best), [best, near, far])], PIECES.__getitem__)
    sim_near, sim_far = chrf("DasHausistrot.", "DasHausistblau."), chrf("DasHausistrot.", "Gebäudeblau")
    w_near, w_far = math.exp(-0.5), math.exp(-3.0)
    assert features["nbest_agreement"] == pytest.approx((w_near * sim_near + w_far * sim_far) / (w_near + w_far))
    assert features["nbest_mass"] == pytest.approx(math.exp(-0.1) / (math.exp(-0.1) + w_near + w_far))
    alone = agreement_features([(_pieces(best), [best])], PIECES.__getitem__)
    assert alone == {"nbest_agreement": 1.0, "nbest_mass": 1.0, "nbest_gap": GAP_CAP, "nbest_distinct": 1.0}
    # two units: the 5-token unit weighs 6, the lone 2-token unit 3
    both = agreement_features([(_pieces(best), [best, near, far]), (PIECES[4:6], [Ended((4, 5), -0.3)])], PIECES.__getitem__)
    assert both["nbest_agreement"] == pytest.approx((6 * features["nbest_agreement"] + 3 * 1.0) / 9)


def test_a_fit_may_name_the_agreement_features_and_the_default_fit_does_not():
    assert set(AGREEMENT_FEATURES) <= set(COMPUTED) and not set(AGREEMENT_FEATURES) & set(FEATURES)
    raw = {"features": ["mean_log_prob", "nbest_agreement"], "weights": [1.0, 2.0], "bias": 0.0,
           "mean": [-0.5, 0.8], "scale": [1.0, 0.1], "threshold": 0.3}
    model = model_for({"quality": raw})
    assert model.confidence({"mean_log_prob": -0.5, "nbest_agreement": 0.9}) == pytest.approx(1 / (1 + math.exp(-2.0)))
    assert ConfidenceModel.from_json(model.to_json(), "bundle") == model


@pytest.fixture(scope="module")
def general():
    return Translator("models/en-de", EngineSettings(provider="cpu", intra_op_threads=1))


AGREE = "Tom is my friend."
DISAGREE = "Hello."


def test_a_sentence_whose_n_best_disagree_gets_a_lower_agreement(general):
    agree, disagree = (r.facts.features for r in general.translate_sentences([AGREE, DISAGREE]))
    assert set(agree) == set(COMPUTED)
    assert agree["nbest_agreement"] > disagree["nbest_agreement"] + 0.2
    assert 0.0 < disagree["nbest_agreement"] < agree["nbest_agreement"] <= 1.0
    assert 0.0 < agree["nbest_mass"] <= 1.0 and agree["nbest_distinct"] >= 2


def test_the_engines_features_are_those_of_the_n_best_list_it_shows(general):
    # Asked for one translation, the engine still reads every finished hypothesis; asked for all,
    # it shows them: the features come out of that list, and the best translation is the same.
    sentences = [AGREE, DISAGREE, "The committee postponed its decision until the next meeting."]
    one = general.translate_sentences(sentences)
    shown = general.translate_sentences(sentences, general.search_options(n_best=general.default_options.beam))
    for a, b in zip(one, shown):
        assert a.n_best == () and len(b.n_best) == general.default_options.beam
        assert a.translation == b.translation and a.facts.features == b.facts.features
        texts, scores = [t for t, _ in b.n_best], [s for _, s in b.n_best]
        p = [math.exp(s - max(scores)) for s in scores]
        assert a.facts.features["nbest_mass"] == pytest.approx(p[0] / sum(p))
        assert a.facts.features["nbest_gap"] == pytest.approx(min(GAP_CAP, scores[0] - scores[1]))
        expected = sum(w * chrf(_bare(texts[0]), _bare(t)) for w, t in zip(p[1:], texts[1:])) / sum(p[1:])
        assert a.facts.features["nbest_agreement"] == pytest.approx(expected)
        assert a.facts.features["nbest_distinct"] == len({_bare(t) for t in texts})


def test_the_features_are_the_same_alone_and_in_a_batch(general):
    batch = ["The weather is nice today.", DISAGREE, "Please restart the application after installing the update.",
             AGREE, "He said that he would come back tomorrow, but he never did."]
    together = general.translate_sentences(batch)
    for sentence, result in zip(batch, together):
        [alone] = general.translate_sentences([sentence])
        assert alone.translation == result.translation
        for name in AGREEMENT_FEATURES:
            assert alone.facts.features[name] == pytest.approx(result.facts.features[name], abs=1e-4), (sentence, name)
