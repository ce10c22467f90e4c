"""Glossaries (forced terminology): the TSV format and its errors, the job message, matching, and
the shipped bundles putting the target terms in (real SentencePiece and ONNX Runtime), with one
job through Redis and a Celery worker."""
from __future__ import annotations

import json
import re
from dataclasses import replace

import pytest

from client.client import TranslationClient
from queue_config.glossary import MAX_TERMS, GlossaryError, check_terms, read_glossary
from queue_config.messages import JobRequest, MessageError
from worker.engine.settings import EngineSettings
from worker.engine.translator import Translator
from worker.text.glossary import Glossary, find_terms, load_glossary
from worker.text.masking import STAND_INS, mask
from worker.text.pipeline import TextOptions, prepare, restore
from worker.text.segment import GLOSSARY_MISS, Alignment, SegmentResult, word_at, word_spans
from worker.text.spans import GLOSSARY, Span, find_spans

from .conftest import REPO_ROOT, run_nmt
from .queue_harness import CeleryWorker, RedisServer

BUNDLES = {"general": REPO_ROOT / "models" / "en-de", "multi30k": REPO_ROOT / "models" / "multi30k-en-de"}


@pytest.fixture(scope="module", params=sorted(BUNDLES))
def translator(request):
    return Translator(BUNDLES[request.param], EngineSettings(provider="cpu", intra_op_threads=1))


# -- the file format ----------------------------------------------------------------------------------
def test_a_glossary_file_is_read_with_comments_blank_lines_crlf_and_a_bom(tmp_path):
    path = tmp_path / "terms.tsv"
    path.write_bytes("\ufeff# product terms\r\nhouses\tHäuser\r\n\r\n  ice cream \t Speiseeis\r\nHouses\tHäuser\r\n"
                     .encode("utf-8"))
    assert read_glossary(path) == (("houses", "Häuser"), ("ice cream", "Speiseeis"))  # the repeat counts once
    assert load_glossary(path) == Glossary((("houses", "Häuser"), ("ice cream", "Speiseeis")))
    assert len(load_glossary(path)) == 2


@pytest.mark.parametrize("text, message", [
    ("houses Häuser\n", r"line 1: expected 'source<TAB>target', found no tab"),
    ("# ok\nhouses\tHäuser\tHaus\n", r"line 2: expected 'source<TAB>target', found 2 tabs"),
    ("\tHäuser\n", r"line 1: empty source term"),
    ("houses\t  \n", r"line 1: empty target term"),
    ("houses\tHäuser\n\nHOUSES\tGebäude\n", r"line 3: 'HOUSES' -> 'Gebäude', but line 1 gives it as 'Häuser'"),
])
def test_malformed_lines_name_the_file_and_line(tmp_path, text, message):
    path = tmp_path / "terms.tsv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(GlossaryError, match=f"^glossary {re.escape(str(path))}: {message}"):
        read_glossary(path)


def test_a_file_that_is_not_utf8_or_missing_is_a_glossary_error_naming_it(tmp_path):
    path = tmp_path / "latin1.tsv"
    path.write_bytes("house\tHaus\nhouses\tH\xe4user\n".encode("latin-1"))
    with pytest.raises(GlossaryError, match=rf"glossary {re.escape(str(path))}: not valid UTF-8 \(line 2"):
        load_glossary(path)
    with pytest.raises(GlossaryError, match="missing.tsv: file not found"):
        load_glossary(tmp_path / "missing.tsv")


@pytest.mark.parametrize("raw, message", [
    ("houses\tHäuser", r"must be a list of \[source, target\] pairs, got str"),
    ([["houses"]], r"term 1 must be a \[source, target\] pair"),
    ([["houses", "Häuser"], "ice cream"], r"term 2 must be a \[source, target\] pair"),
    ([["houses", 3]], r"term 1 must hold two strings"),
    ([["ice\tcream", "Eis"]], r"term 1 must not hold tabs or line breaks"),
    ([[" ", "Eis"]], r"term 1: empty source term"),
    ([["a", "b"], ["A", "c"]], r"term 2: 'A' -> 'c', but term 1 gives it as 'b'"),
    ([["w%d" % k, "x"] for k in range(MAX_TERMS + 1)], rf"has {MAX_TERMS + 1} terms; at most {MAX_TERMS}"),
])
def test_terms_given_as_data_are_checked(raw, message):
    with pytest.raises(GlossaryError, match=message):
        check_terms(raw)


def test_a_job_request_carries_a_checked_glossary_and_omits_an_empty_one():
    base = {"job_id": "j1", "src": "en", "tgt": "de", "text": "A dog."}
    request = JobRequest.from_json(base | {"glossary": [["dog", "Hund"], ["ice cream", "Eis"]]})
    assert request.glossary == (("dog", "Hund"), ("ice cream", "Eis"))
    wire = json.loads(json.dumps(request.to_json()))
    assert wire["glossary"] == [["dog", "Hund"], ["ice cream", "Eis"]] and JobRequest.from_json(wire) == request
    assert "glossary" not in JobRequest.from_json(base).to_json()  # older workers still read it
    for bad, message in (({"dog": "Hund"}, "'glossary' must be a list"), ([["dog", ""]], "'glossary': term 1: empty"),
                         ([["dog"] * 3], r"'glossary': term 1 must be a \[source, target\] pair")):
        with pytest.raises(MessageError, match=message):
            JobRequest.from_json(base | {"glossary": bad})


def test_the_client_takes_a_glossary_as_a_file_a_mapping_or_pairs(tmp_path):
    path = tmp_path / "terms.tsv"
    path.write_text("dog\tHund\nice cream\tEis\n", encoding="utf-8")
    expected = (("dog", "Hund"), ("ice cream", "Eis"))
    for given in (path, str(path), {"dog": "Hund", "ice cream": "Eis"}, [("dog", "Hund"), ["ice cream", "Eis"]]):
        assert TranslationClient._request("en", "de", text="A dog.", glossary=given).glossary == expected
    with pytest.raises(ValueError, match="term 1 must hold two strings"):
        TranslationClient._request("en", "de", text="A dog.", glossary=[("dog", None)])


# -- matching -----------------------------------------------------------------------------------------
def _found(sentence: str, pairs, taken=()) -> list[tuple[str, str]]:
    return [(sentence[m.start:m.end], m.target) for m in find_terms(sentence, Glossary.from_pairs(pairs), taken)]


@pytest.mark.parametrize("sentence, pairs, expected", [
    ("Houses and a HOUSE.", {"house": "Haus", "houses": "Häuser"}, [("Houses", "Häuser"), ("HOUSE", "Haus")]),
    ("A greenhouse, housing, house-boat.", {"house": "Haus"}, [("house", "Haus")]),  # whole words only
    ("I love New York City.", {"new york": "NY", "york city": "YC", "new": "neu"}, [("New", "neu"), ("York City", "YC")]),
    ("The data  center failed.", {"data": "Daten", "data center": "Rechenzentrum"}, [("data  center", "Rechenzentrum")]),
    ("We use C++ and C.", {"c++": "C++", "c": "C-Sprache"}, [("C++", "C++"), ("C", "C-Sprache")]),
    ("A dog runs.", {"cat": "Katze"}, []),
])
def test_terms_match_case_insensitively_as_whole_words_longest_first(sentence, pairs, expected):
    assert _found(sentence, pairs) == expected


def test_terms_never_overlap_verbatim_spans_and_an_empty_glossary_matches_nothing():
    sentence = "Visit www.house.com or the house at house_id."
    spans = [(s.start, s.end) for s in find_spans(sentence)]
    assert _found(sentence, {"house": "Haus", "visit": "besuchen"}, spans) == [("Visit", "besuchen"), ("house", "Haus")]
    assert find_terms(sentence, Glossary()) == find_terms(sentence, None) == []


def test_terms_stay_in_the_text_and_take_no_stand_in():
    sentence = "Red, blue, green, yellow, black, white, pink, brown, gray, orange, purple, violet and gold flags at {url}."
    colours = sentence.split(" flags")[0].replace(" and", ",").split(", ")
    terms = [Span(GLOSSARY, sentence.index(c), sentence.index(c) + len(c), c, c.upper()) for c in colours]
    masked = mask(sentence, sorted(terms + find_spans(sentence), key=lambda s: s.start))
    assert len(terms) > len(STAND_INS)
    assert masked.text == sentence.replace("{url}", masked.slots[-1].stand_in)  # only the span was masked
    assert [s.kept for s in masked.slots] == [True] * len(terms) + [False] and masked.unmasked == ()


# -- restoring, with crafted engine outputs ------------------------------------------------------------
def _engine_result(prepared, translation: str, pairs) -> SegmentResult:
    alignment = Alignment(tuple(pairs), tuple(word_spans(prepared.text)), tuple(word_spans(translation)))
    return SegmentResult(prepared.text, translation, -1.0, alignment)


def _with(pairs) -> TextOptions:
    return TextOptions(glossary=Glossary.from_pairs(pairs))


def test_a_term_the_model_wrote_itself_is_kept_where_it_is():
    prepared = prepare("The houses are old.", _with({"houses": "Häuser"}))
    assert prepared.text == "The houses are old."  # terms are not masked
    result = restore(prepared, _engine_result(prepared, "Die Häuser sind alt.", [(0, 0), (1, 1), (2, 2), (3, 3)]))
    assert result.translation == "Die Häuser sind alt." and result.flags == ()
    assert result.details == {"glossary": [{"source": [4, 10], "term": "houses", "target_term": "Häuser",
                                            "target": [4, 10], "method": "copied", "applied": True}]}


def test_the_models_own_translation_of_a_term_is_replaced_by_the_target_term():
    prepared = prepare("The houses are old.", _with({"houses": "Gebäude"}))
    # "Häuser" (word 1) and "die" (word 0) are aligned to "houses": the word most like the term goes.
    result = restore(prepared, _engine_result(prepared, "Die Häuser sind alt.", [(0, 0), (1, 0), (1, 1), (2, 2), (3, 3)]))
    assert result.translation == "Die Gebäude sind alt."
    [entry] = result.details["glossary"]
    assert entry["method"] == "aligned" and entry["target"] == [4, 11] and entry["applied"]
    assert (1, 1) in result.alignment.pairs and GLOSSARY_MISS not in result.flags


def test_a_term_with_no_translation_is_inserted_and_a_lower_case_one_at_the_start_is_capitalised():
    prepared = prepare("Today the houses are old.", _with({"today": "heute", "houses": "A4-Häuser"}))
    result = restore(prepared, _engine_result(prepared, "Die sind alt.", [(1, 0), (3, 1), (4, 2)]))
    assert result.translation == "Heute Die A4-Häuser sind alt."
    assert [(e["method"], e["applied"]) for e in result.details["glossary"]] == [("inserted", True)] * 2
    assert "removed" not in result.details  # a target term that looks like a code is not an invented span


def test_a_term_that_could_not_be_placed_is_reported_missed():
    prepared = prepare("The houses are old.", _with({"houses": "Häuser", "old": "alt"}))
    result = restore(replace(prepared, masked=None), _engine_result(prepared, "Die sind alt.", [(0, 0), (2, 1), (3, 2)]))
    assert result.flags == (GLOSSARY_MISS,)
    assert [(e["term"], e["target"], e["method"], e["applied"]) for e in result.details["glossary"]] == [
        ("houses", None, None, False), ("old", [9, 12], None, True)]


def test_glossary_offsets_move_into_the_documents():
    details = {"glossary": [{"source": [4, 10], "term": "houses", "target_term": "Häuser", "target": [4, 10],
                             "method": "copied", "applied": True},
                            {"source": [0, 3], "term": "the", "target_term": "x", "target": None, "method": None,
                             "applied": False}]}
    result = SegmentResult("s", "t", 0.0, Alignment((), (), ()), details=details)
    moved = result.shifted(100, 200).details["glossary"]
    assert [(e["source"], e["target"]) for e in moved] == [([104, 110], [204, 210]), ([100, 103], None)]


# -- the shipped bundles ------------------------------------------------------------------------------
def _assert_applied(result: SegmentResult, pairs: dict[str, str]) -> None:
    """Every entry applied, at the offsets it names, spelt as given (a capital at the start allowed),
    with the target's words aligned to the term's source words; no stand-in leaked."""
    entries = result.details["glossary"]
    assert sorted(e["term"].lower() for e in entries) == sorted(pairs)
    source_starts = [a for a, _ in result.alignment.source_spans]
    target_starts = [a for a, _ in result.alignment.target_spans]
    for e in entries:
        assert e["applied"] and e["method"] in ("copied", "aligned", "inserted")
        a, b = e["target"]
        placed = result.translation[a:b]
        assert placed == e["target_term"] or (a == 0 and placed == e["target_term"][0].upper() + e["target_term"][1:])
        assert e["target_term"] == pairs[e["term"].lower()]
        assert result.source[e["source"][0]:e["source"][1]] == e["term"]
        assert (word_at(source_starts, e["source"][0]), word_at(target_starts, a)) in result.alignment.pairs
    assert GLOSSARY_MISS not in result.flags
    assert not any(re.search(rf"\b{s}\b", result.translation) for s in STAND_INS)


CASES = [  # (sentence, glossary)
    ("Houses line the quiet street.", {"houses": "Häuser"}),  # at the start
    ("A man paints the houses", {"houses": "Häuser"}),  # at the end, no full stop
    ("A woman looks at the old houses.", {"houses": "Häuser"}),  # at the end
    ("The red houses are old.", {"red": "roten", "houses": "Häuser"}),  # adjacent terms
    ("A girl eats ice cream in the park.", {"ice cream": "Speiseeis", "park": "Grünanlage"}),  # a term of two words
    ("The website https://example.com/docs is new.", {"website": "Webseite"}),  # next to a URL span
    ("Quickly, a dog runs.", {"quickly": "schnell", "dog": "Köter"}),  # lower-case target at the start
]


@pytest.mark.parametrize("sentence, pairs", CASES)
def test_terms_are_applied_where_they_stand(translator, sentence, pairs):
    [result] = translator.translate_sentences([sentence], text_options=_with(pairs))
    _assert_applied(result, pairs)
    for span in find_spans(sentence):  # verbatim spans are still verbatim
        assert span.text in result.translation


def test_an_inflected_german_form_is_kept_verbatim(translator):
    sentences = ["The houses are old.", "Two houses stand by the river."]
    results = translator.translate_sentences(sentences, text_options=_with({"houses": "Häuser"}))
    assert all(re.search(r"\bHäuser\b", r.translation) for r in results)
    assert not any(re.search(r"\b(Haus|Hause|Häusern)\b", r.translation) for r in results)


def test_a_term_inside_a_verbatim_span_is_left_to_the_span(translator):
    [result] = translator.translate_sentences(["Visit https://example.com/docs for more information."],
                                              text_options=_with({"example": "Beispiel", "information": "Auskunft"}))
    assert "https://example.com/docs" in result.translation and "Beispiel" not in result.translation
    assert [d["text"] for d in result.details["spans"]] == ["https://example.com/docs"]
    _assert_applied(result, {"information": "Auskunft"})


def test_more_terms_than_stand_ins_are_all_applied_and_spans_keep_theirs(translator):
    sentence = ("Red, blue, green, yellow, black, white, pink, brown, gray, orange, purple, violet and gold flags "
                "hang at 10:30 by the XJ-4000.")
    colours = dict(zip("red blue green yellow black white pink brown gray orange purple violet gold".split(),
                       "Rot Blau Grün Gelb Schwarz Weiß Rosa Braun Grau Orange Lila Violett Gold".split()))
    [result] = translator.translate_sentences([sentence], text_options=_with(colours))
    assert len(colours) > len(STAND_INS)
    _assert_applied(result, colours)
    assert "10:30" in result.translation and "XJ-4000" in result.translation


def test_an_all_caps_sentence_gets_its_target_terms_in_capitals(translator):
    [result] = translator.translate_sentences(["THE OLD HOUSES ARE EMPTY."], text_options=_with({"houses": "Häuser"}))
    assert re.search(r"\bHÄUSER\b", result.translation) and result.details["glossary"][0]["target_term"] == "HÄUSER"


def test_an_empty_glossary_or_absent_terms_change_nothing(translator):
    sentences = ["A dog runs in the park.", "Visit https://example.com/docs for more information.", "THE CAT SLEEPS."]
    plain = translator.translate_sentences(sentences)
    for options in (TextOptions(glossary=Glossary()), _with({"bicycle": "Fahrrad", "mountain": "Berg"})):
        same = translator.translate_sentences(sentences, text_options=options)
        assert [(r.translation, r.alignment, r.flags, r.details) for r in same] == \
            [(r.translation, r.alignment, r.flags, r.details) for r in plain]
        assert all("glossary" not in r.details for r in same)


def test_terms_apply_with_span_protection_off(translator):
    options = TextOptions(protect_spans=False, glossary=Glossary.from_pairs({"houses": "Häuser"}))
    [result] = translator.translate_sentences(["The houses cost $450."], text_options=options)
    _assert_applied(result, {"houses": "Häuser"})
    assert "spans" not in result.details


def test_glossary_details_survive_json_and_point_into_the_documents(translator):
    doc = "A dog runs.\n\nThe red houses at https://shop.example.com are old."
    pairs = {"red": "roten", "houses": "Häuser"}
    result = translator.translate_document(doc, text_options=_with(pairs))
    payload = json.loads(json.dumps(result.to_json()))
    assert "glossary" not in payload["segments"][0]["details"]
    entries = payload["segments"][1]["details"]["glossary"]
    assert [e["term"] for e in entries] == ["red", "houses"]
    for e in entries:
        assert doc[e["source"][0]:e["source"][1]] == e["term"]
        assert result.translation[e["target"][0]:e["target"][1]] == e["target_term"]
    assert SegmentResult.from_json(payload["segments"][1]).details == result.segments[1].details


# -- the CLI ------------------------------------------------------------------------------------------
def test_cli_translate_applies_a_glossary_file(tmp_path):
    terms = tmp_path / "terms.tsv"
    terms.write_text("# nouns\nhouses\tHäuser\n", encoding="utf-8")
    done = run_nmt("translate", "--bundle", str(BUNDLES["general"]), "--device", "cpu", "--beam", "2",
                   "--glossary", str(terms), stdin="The houses are old.\n")
    assert done.returncode == 0, done.stderr
    assert "Häuser" in done.stdout


@pytest.mark.parametrize("command", ["translate", "eval", "submit"])
def test_cli_refuses_a_malformed_glossary_in_one_line(tmp_path, command):
    terms = tmp_path / "terms.tsv"
    terms.write_text("houses\tHäuser\nice cream Eis\n", encoding="utf-8")
    src = tmp_path / "src.en"
    src.write_text("A dog.\n", encoding="utf-8")
    extra = {"translate": ["--bundle", str(BUNDLES["multi30k"]), "--device", "cpu"],
             "eval": ["--bundle", str(BUNDLES["multi30k"]), "--device", "cpu", "--src", str(src), "--ref", str(src)],
             "submit": [str(src), "--src", "en", "--tgt", "de", "--broker-url", "redis://127.0.0.1:1/0"]}[command]
    done = run_nmt(command, *extra, "--glossary", str(terms), stdin="A dog.\n")
    assert done.returncode == 2
    assert done.stderr.strip() == (f"nmt {command}: error: glossary {terms}: line 2: expected 'source<TAB>target', "
                                   "found no tab in 'ice cream Eis'")


# -- a job through Redis and a Celery worker ----------------------------------------------------------
@pytest.mark.integration
@pytest.mark.slow
def test_a_job_glossary_reaches_every_chunk_and_comes_back_in_the_details(tmp_path, tiny_bundle):
    server = RedisServer(tmp_path / "redis").start()
    worker = CeleryWorker("w1", {"NMT_BROKER_URL": server.url, "NMT_BUNDLES": str(tiny_bundle),
                                 "NMT_CHUNK_SENTENCES": "1"}, tmp_path)
    try:
        worker.start()
        client = TranslationClient(broker_url=server.url)
        text = "A man sees a dog.\n\nThe big dog runs home."
        result = client.submit(text=text, src="en", tgt="de", glossary={"dog": "Köter"}).wait(timeout=120)
        assert result.provenance["chunks"] == 2  # each sentence translated by a chunk task
        for segment in result.raw["segments"]:
            [entry] = segment["details"]["glossary"]
            assert entry["applied"] and text[entry["source"][0]:entry["source"][1]] == "dog"
            assert result.text[entry["target"][0]:entry["target"][1]] == "Köter"
    finally:
        worker.stop()
        server.stop()
