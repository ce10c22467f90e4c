"""The language check with its real detector (py3langid's shipped model) on real sentences:
other languages are flagged, English in all its untidy forms is not, short text is not judged."""
from __future__ import annotations

import subprocess
import sys

import pytest

from worker.text.language import (
    DocumentLanguageError,
    LanguageCheck,
    LanguageVerdict,
    prose_of,
    refuse_foreign_document,
    summarize,
)

from .conftest import REPO_ROOT

CHECK = LanguageCheck(expected="en")


@pytest.mark.parametrize("text, language", [
    ("Ein Mann mit einem orangefarbenen Hut starrt auf etwas.", "de"),
    ("Die Bundesregierung will die Steuern im nächsten Jahr senken.", "de"),
    ("Une femme fait du vélo dans une rue de la ville.", "fr"),
    ("Mañana por la mañana voy a comprar pan en la panadería.", "es"),
    ("Вчера вечером мы смотрели очень интересный фильм.", "ru"),
    ("我明天早上要去超市买一些水果和牛奶。", "zh"),
    ("DER HUND LÄUFT JEDEN MORGEN DURCH DEN GROSSEN PARK.", "de"),
])
def test_other_languages_are_flagged(text, language):
    verdict = CHECK.check_segment(text)
    assert verdict.judged and verdict.mismatch
    assert verdict.language == language
    assert verdict.expected_confidence < CHECK.max_expected_confidence <= verdict.confidence


@pytest.mark.parametrize("text", [
    "A man in an orange hat starring at something.",
    "THE COMMITTEE WILL MEET AGAIN NEXT TUESDAY TO DISCUSS THE BUDGET.",
    "IN COLORADO, NO PLAYBOOK FOR NEW MARIJUANA LAW",
    "Jürgen Müller and Françoise Dubois met in Zürich last week.",
    "We stayed at the Hotel Bayerischer Hof near the Marienplatz in München.",
    "You can download the report from https://example.com/reports/2024/q3.pdf today.",
    "Run pip install numpy before you call np.load(path) in the tutorial.",
    "I loved the concert last night 🎉🎶 thanks for the tickets!",
    "We met Mr. 王 and Ms. Петрова at the station this morning.",
])
def test_english_is_not_flagged(text):
    verdict = CHECK.check_segment(text)
    assert verdict.judged
    assert not verdict.mismatch, verdict


@pytest.mark.parametrize("text", [
    "",
    "   \n\t ",
    "🎉🎶😊👍",
    "Guten Morgen, Herr Schmidt!",               # four words
    "我很累了",                                    # four Han characters: about two words
    "https://example.com/a https://example.org/b 12 34 56 see",
    "x = compute_total(items) + 1 ; return x",
    "2024-01-01 10:00 12.5% 4,200 EUR 17 Juni",
])
def test_short_or_non_prose_segments_are_not_judged(text):
    assert CHECK.check_segment(text) == LanguageVerdict("und", 0.0, 0.0, judged=False, mismatch=False)


def test_min_words_sets_what_is_judged():
    text = "Guten Morgen, Herr Schmidt!"
    assert not LanguageCheck(min_words=5).check_segment(text).judged
    assert LanguageCheck(min_words=4).check_segment(text).mismatch


def test_prose_drops_links_and_numbers_and_lowers_shouting():
    assert prose_of("SEE HTTPS://EXAMPLE.COM FOR THE 12 NEW RULES TODAY", 5) == "see for the new rules today"
    assert prose_of("Der Hund läuft über die Straße", 5) == "Der Hund läuft über die Straße"


def test_expected_language_is_a_parameter():
    german = LanguageCheck(expected="de")
    assert not german.check_segment("Ein Mann mit einem orangefarbenen Hut starrt auf etwas.").mismatch
    assert german.check_segment("A man in an orange hat is staring at something.").mismatch


@pytest.mark.parametrize("kwargs, match", [
    ({"expected": "English"}, "ISO 639"),
    ({"min_words": 0}, "min_words"),
    ({"max_expected_confidence": 0.0}, "max_expected_confidence"),
])
def test_invalid_settings_are_rejected(kwargs, match):
    with pytest.raises(ValueError, match=match):
        LanguageCheck(**kwargs)


def test_language_unknown_to_the_detector_is_an_error():
    with pytest.raises(ValueError, match="does not know 'xx'"):
        LanguageCheck(expected="xx").check_segment("A man in an orange hat is staring at something.")


def test_document_is_judged_as_a_whole_even_when_long():
    german = "Der Zug nach München hat heute leider zwanzig Minuten Verspätung. " * 2000
    english = "The train to Munich is unfortunately twenty minutes late today. " * 2000
    assert CHECK.check_document(german).mismatch
    assert CHECK.check_document(german).language == "de"
    assert not CHECK.check_document(english).mismatch


GERMAN = ["Ein Mann mit einem orangefarbenen Hut starrt auf etwas.",
          "Zwei junge Männer spielen im Park mit einem Ball.",
          "Eine Frau fährt mit dem Fahrrad durch die Stadt."]
ENGLISH = ["A man in an orange hat starring at something.",
           "Two young men are playing with a ball in the park.",
           "A woman rides her bicycle through the city."]
SHORT = ["Hello!", "Thanks.", "12:30"]


def test_document_summary_counts_judged_segments_only():
    verdicts = [CHECK.check_segment(s) for s in GERMAN[:2] + ENGLISH + SHORT]
    summary = summarize(verdicts, "en")
    assert (summary.judged, summary.mismatched, summary.others) == (5, 2, (("de", 2),))
    assert summary.share == pytest.approx(0.4)


def test_mostly_foreign_document_is_refused_with_language_and_share():
    verdicts = [CHECK.check_segment(s) for s in GERMAN + ENGLISH[:1] + SHORT]
    with pytest.raises(DocumentLanguageError, match=r"3 of 4 judged segments \(75%\).*mostly 'de'") as info:
        refuse_foreign_document(verdicts, "en", max_share=0.5)
    assert info.value.summary.share == pytest.approx(0.75)


def test_document_under_the_threshold_is_kept():
    verdicts = [CHECK.check_segment(s) for s in GERMAN[:1] + ENGLISH + SHORT]
    summary = refuse_foreign_document(verdicts, "en", max_share=0.5)
    assert (summary.mismatched, summary.judged) == (1, 4)


def test_document_of_short_segments_falls_back_on_the_whole_text():
    lines = ["Guten Morgen!", "Wie geht es dir?", "Danke, sehr gut.", "Bis morgen dann."]
    verdicts = [CHECK.check_segment(s) for s in lines]
    assert not any(v.judged for v in verdicts)
    assert refuse_foreign_document(verdicts, "en", max_share=0.5).judged == 0
    with pytest.raises(DocumentLanguageError, match="1 of 1 judged"):
        refuse_foreign_document(verdicts, "en", max_share=0.5, document=CHECK.check_document("\n".join(lines)))


def test_max_share_must_be_a_fraction_below_one():
    with pytest.raises(ValueError, match="max_share"):
        refuse_foreign_document([], "en", max_share=1.0)


def test_detector_loads_on_first_use_not_at_import():
    code = ("import sys, worker.text.language as m\n"
            "print('py3langid' in sys.modules)\n"
            "m.LanguageCheck().check_segment('A man in an orange hat starring at something.')\n"
            "print('py3langid' in sys.modules, m._identifier.cache_info().misses)\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "True", "1"]


def test_the_translator_copies_a_foreign_segment_through_untranslated_and_flags_it():
    """Through the real engine and shipped bundle: the German and French segments are not decoded
    (no invented German), they come back verbatim with the flag 'language'; English is translated."""
    from worker.engine.settings import EngineSettings
    from worker.engine.translator import Translator
    from worker.text.pipeline import TextOptions

    from .conftest import REPO_ROOT

    translator = Translator(REPO_ROOT / "models" / "multi30k-en-de", EngineSettings(provider="cpu"))
    sentences = ["A man in a blue shirt is riding a bike down the street.",
                 "Ein Mann mit einem blauen Hemd fährt mit dem Fahrrad die Straße entlang.",
                 "Un homme en chemise bleue fait du vélo dans la rue."]
    english, german, french = translator.translate_sentences(sentences)
    assert english.flags == () and english.translation and english.translation != sentences[0]
    for result, source, code in ((german, sentences[1], "de"), (french, sentences[2], "fr")):
        assert result.translation == source and "language" in result.flags
        assert result.details["language"]["detected"] == code
        assert result.to_json()["flags"] == ["language"]
    unchecked = translator.translate_sentences(sentences[1:2], text_options=TextOptions(check_language=False))[0]
    # Decoded: no language flag; the quality estimate sees the invented German for what it is.
    assert "language" not in unchecked.flags and unchecked.translation != sentences[1]
    assert "low_confidence" in unchecked.flags and unchecked.confidence < english.confidence
