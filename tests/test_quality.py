"""The quality estimate: decoder features, flags, the confidence fit and its metrics, and
confidence on every segment of real bundles."""
from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest

from worker.engine.translator import Translator
from worker.local.calibrate import Sample, auroc, evaluate, fit, ranks, spearman
from worker.text.pipeline import TextOptions, prepare
from worker.text.quality import BASE_FEATURES, COMPUTED, DEFAULT_MODEL, FEATURES, ConfidenceModel, DecodedChunk, assess, decoder_facts, model_for
from worker.text.segment import DROPPED_TEXT, KEPT_SOURCE, LOW_CONFIDENCE, REPETITION, UNTRANSLATED_SPAN, Alignment, SegmentResult

M = "\u2581"


def _unit(text, source_pieces, target_pieces, attention, log_probs=None, start=0):
    attention = np.asarray(attention, dtype=np.float32)
    lps = np.full(len(target_pieces) + 1, -0.1, dtype=np.float32) if log_probs is None else np.asarray(log_probs)
    return DecodedChunk(source_pieces, list(range(4, 4 + len(source_pieces))), target_pieces, lps, attention, start, text)


def test_a_source_word_no_output_token_attends_to_is_reported_with_its_offsets():
    # source "red big house": pieces ▁red ▁big ▁house + eos; the output attends to red and house only.
    attention = [[0.9, 0.0, 0.1, 0.0], [0.1, 0.05, 0.85, 0.0], [0.0, 0.05, 0.0, 0.95]]
    facts = decoder_facts([_unit("red big house", [M + "red", M + "big", M + "house"], [M + "rot", M + "Haus"], attention)])
    assert facts.unattended_words == ((4, 7),)
    assert facts.features["unattended_source"] == pytest.approx(1 / 3)
    assert set(facts.features) == set(COMPUTED)


def test_punctuation_and_short_words_are_never_reported_untranslated():
    attention = [[0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]]
    facts = decoder_facts([_unit("a house .", [M + "a", M + "house", M + "."], [M + "Haus"], attention)])
    assert facts.unattended_words == ()


def test_a_loop_of_output_pieces_is_found_and_named():
    pieces = [M + "Die", M + "EU", "-", "P", "-", "P", "-", "P", "-", "Poli", M + "tik"]
    attention = np.full((len(pieces) + 1, 3), 1 / 3)
    facts = decoder_facts([_unit("The EU policy", [M + "The", M + "EU"], pieces, attention)])
    assert facts.loop == "-P"
    calm = decoder_facts([_unit("The EU", [M + "The", M + "EU"], [M + "Die", M + "EU", "..."], np.full((4, 3), 1 / 3))])
    assert calm.loop is None


def test_chunks_of_one_sentence_are_read_together():
    a = _unit("big house", [M + "big", M + "house"], [M + "Haus"], [[0.05, 0.95, 0.0], [0.0, 0.0, 1.0]])
    b = _unit("burns", [M + "burns"], [M + "brennt"], [[1.0, 0.0], [0.0, 1.0]], start=10)
    facts = decoder_facts([a, b])
    assert facts.unattended_words == ((0, 3),)
    assert facts.features["source_length"] == pytest.approx(math.log(4))


def test_cross_domain_features_read_lengths_coverage_copies_and_the_end():
    # source "red big house" (11 letters); output "rot Haus house" (12 letters), "house" copied.
    attention = [[0.9, 0.0, 0.1, 0.0], [0.1, 0.0, 0.8, 0.1], [0.0, 0.0, 0.5, 0.5], [0.0, 0.0, 0.0, 1.0]]
    lps = [-0.1, -0.2, -1.5, -0.4]
    facts = decoder_facts([_unit("red big house", [M + "red", M + "big", M + "house"], [M + "rot", M + "Haus", M + "house"],
                                 attention, lps)])
    f = facts.features
    assert f["char_length_ratio"] == pytest.approx(math.log(13 / 12))
    assert f["char_length_ratio_sq"] == pytest.approx(math.log(13 / 12) ** 2)
    # summed attention per source piece: red 1.0, big 0.0, house 1.4 -> deficits 0, 1, 0
    assert f["coverage_deficit"] == pytest.approx(1 / 3)
    assert f["attention_peak"] == pytest.approx((0.9 + 0.8 + 0.5) / 3)
    assert f["copied_pieces"] == pytest.approx(1 / 3)
    assert f["eos_log_prob"] == pytest.approx(-0.4) and f["log_prob_spread"] == pytest.approx(np.std(lps), rel=1e-5)
    # a translation half as long in letters has a negative ratio, and its square grows either way
    short = decoder_facts([_unit("red big house", [M + "red", M + "big", M + "house"], [M + "rot"], attention[:2])])
    assert short.features["char_length_ratio"] == pytest.approx(math.log(4 / 12))
    assert short.features["char_length_ratio_sq"] == pytest.approx(math.log(4 / 12) ** 2)


def test_a_fit_over_the_earlier_features_still_loads_and_scores_as_before():
    # A manifest written before the cross-domain features: it names the eleven BASE_FEATURES.
    rng = np.random.default_rng(3)
    raw = {"features": list(BASE_FEATURES), "weights": rng.normal(size=len(BASE_FEATURES)).tolist(), "bias": 0.2,
           "mean": rng.normal(size=len(BASE_FEATURES)).tolist(), "scale": [1.0] * len(BASE_FEATURES), "threshold": 0.4}
    model = model_for({"quality": raw})
    assert model.features == BASE_FEATURES and model.to_json()["features"] == list(BASE_FEATURES)
    features = {f: float(rng.normal()) for f in FEATURES}
    z = np.dot(raw["weights"], np.array([features[f] for f in BASE_FEATURES]) - np.array(raw["mean"])) + 0.2
    assert model.confidence(features) == pytest.approx(1 / (1 + math.exp(-z)))


def test_the_shipped_bundle_fit_loads_and_names_features_the_engine_computes():
    manifest = json.loads(open("models/en-de/manifest.json", encoding="utf-8").read())
    model = model_for(manifest)
    assert model.name == "bundle" and set(model.features) <= set(COMPUTED)


def test_ranks_spearman_and_auroc_match_hand_computed_values():
    assert ranks([10, 20, 20, 5]).tolist() == [2.0, 3.5, 3.5, 1.0]
    assert spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert spearman([1, 2, 3], [5, 5, 5]) == 0.0
    # positives scored 0.9, 0.4; negatives 0.5, 0.1: 3 of 4 pairs ordered right
    assert auroc([0.9, 0.4, 0.5, 0.1], [True, True, False, False]) == pytest.approx(0.75)
    assert math.isnan(auroc([0.1, 0.2], [True, True]))


def _synthetic(n, seed):
    """chrF driven by the mean log-probability, plus noise; other features are noise."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        features = {f: float(rng.normal()) for f in FEATURES}
        features["mean_log_prob"] = float(rng.uniform(-3.0, 0.0))
        chrf = float(np.clip(100 / (1 + math.exp(-(2.0 * features["mean_log_prob"] + 3.0))) + rng.normal(0, 5), 0, 100))
        out.append(Sample(features, chrf))
    return out


def test_the_fit_learns_which_feature_predicts_chrf_and_generalises():
    model = fit(_synthetic(400, 0))
    weights = dict(zip(FEATURES, model.weights))
    assert max(weights, key=lambda f: abs(weights[f])) == "mean_log_prob"
    assert weights["mean_log_prob"] > 0
    scores = evaluate(model, _synthetic(300, 1))
    assert scores["spearman"] > 0.8 and scores["auroc"] > 0.9
    restored = ConfidenceModel.from_json(json.loads(json.dumps(model.to_json())), "bundle")
    sample = _synthetic(1, 2)[0].features
    assert restored.confidence(sample) == pytest.approx(model.confidence(sample), abs=1e-4)


def test_a_fit_on_too_little_data_is_refused():
    with pytest.raises(ValueError, match="at least 20"):
        fit(_synthetic(5, 0))


@pytest.mark.parametrize("change, message", [
    ({"features": ["mean_log_prob", "bleurt"], "weights": [1.0, 1.0], "mean": [0.0, 0.0], "scale": [1.0, 1.0]},
     r"features \['bleurt'\] are not among"),
    ({"features": ["mean_log_prob", "min_log_prob"]}, "2 features has 1 weights"),
])
def test_a_quality_model_for_other_features_is_refused(change, message):
    raw = DEFAULT_MODEL.to_json() | change
    with pytest.raises(ValueError, match=message):
        model_for({"quality": raw})


def test_a_fit_over_chosen_features_weighs_only_those():
    model = fit(_synthetic(200, 0), features=BASE_FEATURES)
    assert model.features == BASE_FEATURES and len(model.weights) == len(BASE_FEATURES)
    restored = ConfidenceModel.from_json(json.loads(json.dumps(model.to_json())), "bundle")
    assert restored.features == BASE_FEATURES


@pytest.fixture(scope="module")
def general():
    return Translator("models/en-de")


def test_every_segment_carries_a_confidence_in_unit_range_and_it_survives_json(general):
    sentences = ["Where is the train station?", "I like tea.", "Le chat est assis sur le tapis dans la maison.",
                 "https://example.com/a", "The European Central Bank raised interest rates by a quarter point on "
                 "Thursday, citing persistent inflation in the services sector."]
    results = general.translate_sentences(sentences)
    for r in results:
        assert r.confidence is not None and 0.0 <= r.confidence <= 1.0
        payload = r.to_json()
        assert payload["confidence"] == pytest.approx(r.confidence, abs=1e-4)
        assert SegmentResult.from_json(json.loads(json.dumps(payload))).confidence == payload["confidence"]
        assert set(r.flags) <= {"restored_span", LOW_CONFIDENCE, UNTRANSLATED_SPAN, REPETITION, "language", "glossary_miss"}
    simple, foreign, verbatim = results[0], results[2], results[3]
    assert foreign.confidence == 0.0 and "language" in foreign.flags
    assert verbatim.confidence == 1.0
    assert simple.confidence > results[4].confidence  # a phrase-book question beats a long news sentence


def test_gibberish_is_flagged_low_confidence_and_an_easy_sentence_is_not(general):
    easy, hard = general.translate_sentences(["I like tea.", "Xylophonists gather quixotically amid zephyrs."])
    assert LOW_CONFIDENCE not in easy.flags
    assert LOW_CONFIDENCE in hard.flags and hard.confidence < easy.confidence


def test_untranslated_words_map_back_to_the_original_sentence_around_masked_spans(general):
    sentence = "Visit https://example.com/a today, wonderful people."
    prepared = prepare(sentence, TextOptions(check_language=False), "en")
    stand_in = prepared.masked.slots[0]
    # Pretend the decoder ignored the stand-in and "wonderful" (character offsets in the masked text).
    word = prepared.text.index("wonderful")
    facts = decoder_facts([_unit(prepared.text, [M + "x"], [M + "y"], [[1.0, 0.0], [0.0, 1.0]])])
    facts = type(facts)(facts.features, ((stand_in.start, stand_in.end), (word, word + len("wonderful"))))
    result = SegmentResult(sentence, "Besuchen", -0.1, general.translate_sentences(["x"])[0].alignment, facts=facts)
    assessed = assess(result, prepared, DEFAULT_MODEL)
    assert UNTRANSLATED_SPAN in assessed.flags
    start = sentence.index("wonderful")
    assert assessed.details["untranslated"] == [{"source": [start, start + 9], "text": "wonderful"}]


def test_the_summary_line_counts_segments_and_each_flag():
    from queue_config.summary import FlagSummary

    summary = FlagSummary().add([{"flags": ["low_confidence"], "confidence": 0.1}, {"flags": [], "confidence": 0.9},
                                 {"flags": ["language", "low_confidence"], "confidence": 0.0}])
    summary.add([{"flags": ["repetition"]}] * 1200)
    assert summary.line() == "1,203 segments, 2 flagged low_confidence, 1 language, 1,200 repetition; mean confidence 0.33"
    assert FlagSummary().add([{"flags": [], "confidence": 1.0}]).line() == "1 segment, none flagged; mean confidence 1.00"


def test_nmt_translate_prints_the_summary_line(tmp_path):
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "nmt", "translate", "--bundle", "models/en-de"],
                          input="Where is the train station?\nLe chat est assis sur le tapis dans la maison.\n",
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert re.search(r"nmt translate: 2 segments, .*\b1 (flagged )?language\b.*; mean confidence 0\.\d\d", done.stderr), done.stderr
    assert done.stdout.splitlines()[1] == "Le chat est assis sur le tapis dans la maison."


def test_nmt_calibrate_fits_and_writes_a_model_the_engine_then_uses(tmp_path):
    import shutil
    import subprocess
    import sys

    from .conftest import REPO_ROOT, make_toy_pairs

    bundle = tmp_path / "bundle"
    shutil.copytree(REPO_ROOT / "models" / "multi30k-en-de", bundle)
    manifest = json.loads((bundle / "manifest.json").read_text())
    manifest.pop("quality", None)
    (bundle / "manifest.json").write_text(json.dumps(manifest))
    assert "confidence_model" in Translator(bundle).translate_sentences(["A dog runs."])[0].details
    pairs = make_toy_pairs(60, seed=3)  # toy captions ("A man sees a dog."), translated well and badly
    (tmp_path / "dev.en").write_text("".join(f"{s}\n" for s, _ in pairs), encoding="utf-8")
    (tmp_path / "dev.de").write_text("".join(f"{t}\n" for _, t in pairs), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "nmt", "calibrate", "--bundle", str(bundle), "--lines", "60",
                           "--fit", str(tmp_path / "dev.en"), str(tmp_path / "dev.de"), "--write"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "Spearman" in done.stdout and "wrote the confidence model" in done.stdout
    quality = json.loads((bundle / "manifest.json").read_text())["quality"]
    assert quality["features"] == list(FEATURES) and quality["fit"]["checked_on"]["fit"]["sentences"] == 60
    translator = Translator(bundle)
    assert translator.bundle.signature == manifest["signature"]  # the manifest is not part of the signature
    result = translator.translate_sentences(["A dog runs."])[0]
    assert "confidence_model" not in result.details and 0.0 <= result.confidence <= 1.0


def test_refuse_foreign_refuses_a_french_file_and_translates_the_english_one(tmp_path):
    import subprocess
    import sys

    from queue_config.document_tree import STATE_FILE

    french = tmp_path / "lettre.txt"
    french.write_text("Le chat est assis sur le tapis dans la maison. Nous allons au marché demain matin avec "
                      "les enfants.\n", encoding="utf-8")
    english = tmp_path / "letter.txt"
    english.write_text("Where is the train station? I would like to buy a ticket to the city.\n", encoding="utf-8")
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "nmt", "translate", str(french), str(english), "--out", str(out),
                           "--refuse-foreign", "0.5"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stderr
    assert f"refused {french}: document is mostly not in 'en'" in done.stderr and "'fr'" in done.stderr
    assert sorted(p.name for p in out.iterdir() if p.name != STATE_FILE) == ["letter.de.json", "letter.de.txt"]
    bad = subprocess.run([sys.executable, "-m", "nmt", "translate", "--refuse-foreign", "1.5", str(english),
                          "--out", str(out)], capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "--refuse-foreign takes a share in [0, 1)" in bad.stderr
    # Without the option the French file is translated: copied through, every judged segment flagged.
    done = subprocess.run([sys.executable, "-m", "nmt", "translate", str(french), "--out", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    segments = json.loads((out / "lettre.de.json").read_text(encoding="utf-8"))["segments"]
    assert all("language" in s["flags"] for s in segments)


def test_job_options_for_repeat_blocking_and_refusal_are_validated():
    from queue_config.messages import JobOptions, MessageError

    assert JobOptions.from_json({"refuse_foreign": 0.5, "no_repeat_ngram": 4}).refuse_foreign == 0.5
    for bad in ({"refuse_foreign": 1.0}, {"refuse_foreign": "yes"}, {"no_repeat_ngram": 1}, {"no_repeat_ngram": -2}):
        with pytest.raises(MessageError):
            JobOptions.from_json(bad)


def test_words_lost_around_what_is_copied_are_found():
    from worker.text.coverage import words_lost
    from worker.text.segment import word_spans

    def lost(source, translation):
        return words_lost(source, translation, Alignment((), tuple(word_spans(source)), tuple(word_spans(translation))))

    assert lost("%(value)s million", "%(value)s")
    assert lost("Bluetooth settings", "Bluetooth")
    assert not lost("%(value)s million", "%(value)s Millionen")
    assert not lost("Linux", "Linux")  # nothing to translate: copied is right
    assert not lost("OK", "OK")
    assert not lost("Aug", "A")  # a word of its own, however short: not this check's business, but too_short's


def test_a_word_or_two_cut_to_under_half_their_letters_is_too_short():
    from worker.text.coverage import too_short

    assert too_short("Aug", "A") and too_short("nov", "v") and too_short("Information", "Info")
    assert not too_short("Yes", "Ja") and not too_short("OK", "O")  # two letters: too few to tell
    assert not too_short("The configuration file is read first.", "Zuerst.")  # longer: coverage's business


def test_words_around_a_placeholder_are_kept_and_a_retry_is_named(general):
    # The attention put "Million" on the stand-in of %(value)s, which then replaced it; the model
    # dropped "minutes" after %(num)d at first and keeps it when decoded again with a minimum length.
    value, num = general.translate_sentences(["%(value)s million", "%(num)d minutes"])
    for result, placeholder in ((value, "%(value)s"), (num, "%(num)d")):
        assert result.translation.startswith(placeholder)
        assert re.search(r"[^\W\d_]{2,}", result.translation.replace(placeholder, "")), result.translation
        assert DROPPED_TEXT not in result.flags
    # the remedy is named: another hypothesis of the beam (Translator._consistent), else the retry
    assert any("decoded again with beam 8" in w or "of the beam is taken" in w for w in num.warnings), num.warnings


def test_a_translation_short_even_when_decoded_again_keeps_its_source_flagged(general):
    # One target token at most by the length rule: every decoding drops text, the retry too.
    source = "The configuration file is read before the command line options are applied."
    short = general.search_options(max_len_a=0.0, max_len_b=1)
    result = general.translate_sentences([source], short)[0]
    assert result.translation == source
    assert DROPPED_TEXT in result.flags and KEPT_SOURCE in result.flags
    assert any("also when decoded again" in w for w in result.warnings)
    assert [result.translation[a:b] for a, b in result.alignment.target_spans] == source.split()


def test_calibrate_fits_the_named_features_and_offers_every_feature_set(tmp_path):
    import shutil
    import subprocess
    import sys

    import argparse

    from worker.local.cli import add_parser
    from worker.text.quality import FEATURE_SETS

    from .conftest import REPO_ROOT, make_toy_pairs

    subparsers = argparse.ArgumentParser().add_subparsers()
    add_parser(subparsers)
    action = next(a for a in subparsers.choices["calibrate"]._actions if a.dest == "features")
    assert tuple(action.choices) == tuple(FEATURE_SETS)
    bundle = tmp_path / "bundle"
    shutil.copytree(REPO_ROOT / "models" / "multi30k-en-de", bundle)
    pairs = make_toy_pairs(40, seed=5)
    (tmp_path / "dev.en").write_text("".join(f"{s}\n" for s, _ in pairs), encoding="utf-8")
    (tmp_path / "dev.de").write_text("".join(f"{t}\n" for _, t in pairs), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "nmt", "calibrate", "--bundle", str(bundle), "--lines", "40",
                           "--features", "char", "--fit", str(tmp_path / "dev.en"), str(tmp_path / "dev.de"),
                           "--write"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    quality = json.loads((bundle / "manifest.json").read_text())["quality"]
    assert quality["features"] == ["log_prob_per_char"] and len(quality["weights"]) == 1
    result = Translator(bundle).translate_sentences(["A dog runs."])[0]
    assert "confidence_model" not in result.details and 0.0 <= result.confidence <= 1.0
