"""An imported Marian bundle (the 'transformer' family) wherever a user runs one: documents through
``nmt translate``, a real queue serving it beside the shipped en-de bundle, the gateway with the
official ``deepl`` library, and the engine's features on it (n-best, the segment cache, glossaries,
span protection, confidence and flags, the time budget, ``nmt calibrate``). One tiny model, trained
and imported once for the module (tests/marian_models.py)."""
from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest
import requests

from .conftest import REPO_ROOT, run_nmt
from .marian_models import sample_pairs, shared_model
from .queue_harness import CeleryWorker, RedisServer, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.slow]
transformers = pytest.importorskip("transformers")

NAME = "opus-tiny-en-de"  # the imported bundle's manifest name (its directory's)
SHIPPED = REPO_ROOT / "models" / "en-de"  # a GRU bundle of the same pair, served beside it
KEY = "key-fleet-3b7d"
TEXT_OFF = {"protect_spans": False, "restore_case": False, "check_language": False}


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    _, imported = shared_model(tmp_path_factory, NAME)
    assert json.loads((imported / "manifest.json").read_text())["family"] == "transformer"
    return imported


def local(bundle: Path, cache=None, **settings):
    from worker.engine import EngineSettings, Translator

    return Translator(bundle, EngineSettings(provider="cpu", intra_op_threads=1, **settings), cache)


@pytest.fixture(scope="module")
def translator(bundle):
    return local(bundle)


class Fleet:
    """A redis-server and one worker serving the imported bundle (listed first: the pair's default,
    so the DeepL endpoint, which names no model, reaches it) and the shipped en-de bundle. The worker
    starts on first use, so that jobs can be queued before it and taken in batches."""

    def __init__(self, bundle: Path, root: Path) -> None:
        self.redis = RedisServer(root / "redis").start()
        self.worker = CeleryWorker("fleet", {
            "NMT_BROKER_URL": self.redis.url, "NMT_BUNDLES": f"{bundle},{SHIPPED}", "NMT_THREADS": "1",
            "NMT_OUTPUT_DIR": str(root / "out"), "NMT_BATCH_WAIT_MS": "500", "NMT_BATCH_JOBS": "8"}, root)
        self.root = root

    def started(self) -> Fleet:
        if self.worker.process is None:
            self.worker.start()
        return self

    def client(self):
        from client.client import TranslationClient

        return TranslationClient(broker_url=self.redis.url)


@pytest.fixture(scope="module")
def fleet(bundle, tmp_path_factory):
    fleet = Fleet(bundle, tmp_path_factory.mktemp("fleet"))
    try:
        yield fleet
    finally:
        fleet.worker.stop()
        fleet.redis.stop()


# -- documents ------------------------------------------------------------------------------------
PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Trains</title></head>
<body>
<h1>Where is the station?</h1>
<p>Tom is my <b>friend</b>. Read <a href="https://example.org/guide">the guide</a>
before you run <code>nmt serve --port 8080</code>.</p>
<p>I do not know what you mean.</p>
</body></html>
"""
NOTES = """# Where is the station

Tom is my friend. See https://example.org/docs for the 42 trains.

Run `pip install -e .` before you go home.
"""


def html_shape(text: str) -> tuple[Counter, list[str], list[str], str]:
    """Elements by tag, link targets, code texts (libxml2's HTML parser), and the h1's text."""
    import lxml.html

    tree = lxml.html.document_fromstring(text.encode("utf-8"))
    return (Counter(e.tag for e in tree.iter() if isinstance(e.tag, str)), [a.get("href") for a in tree.iter("a")],
            [c.text_content() for c in tree.iter("code")], tree.find(".//h1").text_content())


def markdown_shape(text: str) -> tuple[list[str], list[str]]:
    """Block token types and inline code texts (markdown-it-py, CommonMark)."""
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").parse(text)
    codes = [c.content for t in tokens if t.type == "inline" for c in t.children or () if c.type == "code_inline"]
    return [t.type for t in tokens if t.type != "inline"], codes


def test_nmt_translate_keeps_html_markdown_and_docx_documents_whole(bundle, translator, tmp_path):
    import docx

    (tmp_path / "page.html").write_text(PAGE, encoding="utf-8")
    (tmp_path / "notes.md").write_text(NOTES, encoding="utf-8")
    letter = docx.Document()
    letter.add_heading("Where is the station?", 1)
    paragraph = letter.add_paragraph("Tom is my ")
    paragraph.add_run("friend").bold = True
    paragraph.add_run(". I do not know what you mean.")
    letter.save(tmp_path / "letter.docx")
    done = run_nmt("translate", *(str(tmp_path / f) for f in ("page.html", "notes.md", "letter.docx")),
                   "--bundle", str(bundle), "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    assert "3 done" in done.stderr and "0 failed" in done.stderr

    page = (tmp_path / "out" / "page.de.html").read_text(encoding="utf-8")
    (tags, links, codes, title), (new_tags, new_links, new_codes, new_title) = html_shape(PAGE), html_shape(page)
    assert new_tags == tags and new_links == links and new_codes == codes == ["nmt serve --port 8080"], page
    assert re.search(r"<b>[^<]*\w[^<]*</b>", page) and re.search(r'<a href="[^"]*">[^<]*\w[^<]*</a>', page), page
    # the heading, a unit without tags, is what the engine makes of the sentence alone
    [heading] = translator.translate_sentences([title])
    assert new_title == heading.translation != title
    assert json.loads((tmp_path / "out" / "page.de.json").read_text())["provenance"]["signature"] == \
        translator.bundle.signature

    notes = (tmp_path / "out" / "notes.de.md").read_text(encoding="utf-8")
    assert markdown_shape(notes) == markdown_shape(NOTES), notes
    assert "https://example.org/docs" in notes and re.search(r"(?<!\d)42(?!\d)", notes) and notes != NOTES

    out = docx.Document(str(tmp_path / "out" / "letter.de.docx"))
    texts = [p.text for p in out.paragraphs]
    assert len(texts) == 2 and texts[0] == heading.translation
    assert texts[1] != "Tom is my friend. I do not know what you mean."
    assert [p.style.name for p in out.paragraphs] == ["Heading 1", "Normal"]
    assert any(r.bold for r in out.paragraphs[1].runs) and any(not r.bold for r in out.paragraphs[1].runs)


# -- the queue ------------------------------------------------------------------------------------
def test_a_worker_serves_the_imported_bundle_beside_the_shipped_one_in_batches_across_jobs(fleet, translator):
    """Jobs queued before the worker starts are taken in batches of several jobs; each job's
    segments are the local Translator's for its text alone (the bundle's decoding defaults), whether
    it names the imported model or takes the pair's default, and a job naming en-de gets the GRU bundle."""
    texts = [" ".join(s for s, _ in sample_pairs(1 + i % 3, offset=20 + 3 * i)) for i in range(10)]
    client = fleet.client()
    jobs = client.submit_many([{"text": text, "src": "en", "tgt": "de", "name": f"j{i}",
                                "model": NAME if i % 2 else None} for i, text in enumerate(texts)]
                              + [{"text": texts[0], "src": "en", "tgt": "de", "model": "en-de"}])
    fleet.started()
    results = [job.wait(timeout=180) for job in jobs]
    assert client.store.served_models() == {NAME: "en-de", "en-de": "en-de"}

    for text, result in zip(texts, results):
        assert result.model == NAME and result.provenance["signature"] == translator.bundle.signature
        alone = translator.translate_sentences([s.source for s in result.segments], translator.search_options())
        assert " ".join(s.source for s in result.segments) == text
        assert [s.translation for s in result.segments] == [r.translation for r in alone]
        assert max(abs(s.score - r.score) for s, r in zip(result.segments, alone)) < 1e-4
    batched = [r.provenance["timings"].get("batched_jobs", 1) for r in results[:-1]]
    assert max(batched) > 1, batched  # jobs really shared the decoder
    gru = results[-1]
    assert gru.model == "en-de" and gru.provenance["signature"] != translator.bundle.signature
    assert gru.text != results[0].text


# -- the gateway ----------------------------------------------------------------------------------
def test_the_gateway_translates_with_the_imported_bundle_through_the_deepl_library(fleet, translator):
    deepl = pytest.importorskip("deepl")
    from .test_api_gateway import Gateway

    fleet.started()
    gateway = Gateway("gateway", {"NMT_BROKER_URL": fleet.redis.url, "NMT_API_KEYS": KEY}, fleet.root).start()
    try:
        api = deepl.Translator(KEY, server_url=gateway.url)
        texts = [s for s, _ in sample_pairs(3, offset=60)]
        results = api.translate_text(texts, source_lang="EN", target_lang="DE")
        expected = [translator.translate_document(t, translator.search_options()).translation for t in texts]
        assert [r.text for r in results] == expected and all(r.detected_source_lang == "EN" for r in results)
        assert [(lang.code, lang.name) for lang in api.get_source_languages()] == [("EN", "English")]
        assert [lang.code for lang in api.get_target_languages()] == ["DE"]
        # the jobs API names a model: the other bundle of the pair
        headers = {"Authorization": f"Bearer {KEY}"}
        posted = requests.post(gateway.url + "/v1/jobs", headers=headers, timeout=30,
                               data={"text": texts[0], "filename": "a.txt", "target_lang": "DE", "model": "en-de"})
        assert posted.status_code == 201, posted.text
        job = posted.json()["id"]
        wait_for(lambda: requests.get(f"{gateway.url}/v1/jobs/{job}", headers=headers, timeout=10).json()["status"]
                 in ("done", "failed"), 120, "the en-de job")
        raw = requests.get(f"{gateway.url}/v1/jobs/{job}/result", params={"format": "json"}, headers=headers,
                           timeout=10).json()
        assert raw["provenance"]["bundle"] == "en-de" and raw["text"] != expected[0]
    finally:
        gateway.stop()


# -- the engine's features ------------------------------------------------------------------------
def test_n_best_gives_distinct_hypotheses_best_first(translator):
    for result in translator.translate_sentences([s for s, _ in sample_pairs(4, offset=80)],
                                                 translator.search_options(beam=4, n_best=3)):
        texts, scores = [t for t, _ in result.n_best], [s for _, s in result.n_best]
        assert len(set(texts)) == 3 and scores == sorted(scores, reverse=True), result.n_best
        assert texts[0] == result.translation and abs(scores[0] - result.score) < 1e-6


def test_the_segment_cache_answers_a_sentence_seen_before(bundle):
    from worker.engine.cache import SegmentCache

    cached = local(bundle, SegmentCache(100))
    sentences = [s for s, _ in sample_pairs(3, offset=90)]
    first = cached.translate_sentences(sentences + sentences[:1])
    assert [r.cached for r in first] == [False, False, False, True]  # a repeat within the call, too
    again = cached.translate_sentences(sentences)
    assert all(r.cached for r in again) and [r.translation for r in again] == [r.translation for r in first[:3]]
    other = cached.translate_sentences(sentences[:1], cached.search_options(beam=2))
    assert not other[0].cached  # other decoding options are another entry


def test_a_glossary_term_is_forced(translator):
    from worker.text.glossary import Glossary
    from worker.text.pipeline import TextOptions

    text = TextOptions(glossary=Glossary.from_pairs({"station": "Hauptbahnhof"}))
    [result] = translator.translate_sentences(["Where is the station?"], text_options=text)
    [term] = result.details["glossary"]
    assert "Hauptbahnhof" in result.translation and term["applied"] and term["target_term"] == "Hauptbahnhof"
    a, b = term["target"]
    assert result.translation[a:b] == "Hauptbahnhof"


def test_urls_numbers_and_addresses_come_through_verbatim(translator):
    sentence = "Send 42 books to tom@example.com or see https://example.org/a?b=1 today."
    [result] = translator.translate_sentences([sentence])
    spans = {s["kind"]: s for s in result.details["spans"]}
    for kind, text in (("number", "42"), ("email", "tom@example.com"), ("url", "https://example.org/a?b=1")):
        a, b = spans[kind]["target"]
        assert spans[kind]["text"] == text and result.translation[a:b] == text, result.translation


def test_an_all_caps_sentence_is_translated_in_sentence_case_and_put_back(translator):
    shouted, plain = translator.translate_sentences(["WHERE IS THE STATION?", "Where is the station?"])
    assert shouted.details["case"] == "upper" and shouted.translation == plain.translation.upper() != plain.translation


def test_every_segment_has_a_confidence_and_consistent_flags(translator):
    from worker.text.quality import DROPPED_CONFIDENCE
    from worker.text.segment import DROPPED_TEXT, FLAGS, LOW_CONFIDENCE, REPETITION

    results = [r for r in translator.translate_sentences([s for s, _ in sample_pairs(30, offset=100)]) if r.facts]
    assert len(results) >= 25  # decoded, not copied through
    for r in results:
        assert 0.0 <= r.confidence <= 1.0 and set(r.flags) <= set(FLAGS), r
        assert r.details["confidence_model"] == "default"  # the bundle is not calibrated
        assert (LOW_CONFIDENCE in r.flags) == (r.confidence < translator.confidence_model.threshold)
        assert (REPETITION in r.flags) == ("loop" in r.details)
        if REPETITION in r.flags:
            assert r.translation.count(r.details["loop"]) >= 3
        if DROPPED_TEXT in r.flags:
            assert r.confidence <= DROPPED_CONFIDENCE
    assert len({r.confidence for r in results}) > 10  # the confidence follows the decoder, not a constant


def test_a_segment_over_its_time_budget_is_kept_and_flagged(bundle):
    from worker.text.pipeline import TextOptions
    from worker.text.segment import TIME_BUDGET

    slow = local(bundle, max_sentence_tokens=8, segment_seconds=0.01)
    long = " ".join(["Where is the station?"] * 40)
    over, short = slow.translate_sentences([long, "Where is the station?"], text_options=TextOptions(**TEXT_OFF))
    assert over.translation == long and TIME_BUDGET in over.flags and over.confidence == 0.0
    assert over.details["time_budget"]["decoded_parts"] < over.details["time_budget"]["parts"]
    assert short.translation != short.source and TIME_BUDGET not in short.flags


def test_nmt_calibrate_fits_the_confidence_of_an_imported_bundle(bundle, tmp_path):
    from worker.text.quality import ConfidenceModel

    own = tmp_path / NAME
    shutil.copytree(bundle, own)
    pairs = sample_pairs(40, offset=140)
    (tmp_path / "dev.en").write_text("".join(s + "\n" for s, _ in pairs), encoding="utf-8")
    (tmp_path / "dev.de").write_text("".join(t + "\n" for _, t in pairs), encoding="utf-8")
    done = run_nmt("calibrate", "--bundle", str(own), "--fit", str(tmp_path / "dev.en"), str(tmp_path / "dev.de"),
                   "--lines", "40", "--write")
    assert done.returncode == 0, done.stderr
    fitted = re.search(r"^fit: (\d+) sentences", done.stdout, re.MULTILINE)
    assert fitted and int(fitted.group(1)) >= 30 and "wrote the confidence model" in done.stdout, done.stdout
    quality = json.loads((own / "manifest.json").read_text())["quality"]
    assert quality["fit"]["checked_on"]["fit"]["sentences"] == int(fitted.group(1))
    model = ConfidenceModel.from_json(quality, "bundle")
    calibrated = local(own)
    results = [r for r in calibrated.translate_sentences([s for s, _ in sample_pairs(8, offset=200)]) if r.facts]
    assert results
    for r in results:
        assert "confidence_model" not in r.details  # the bundle's own fit, not the default
        assert r.confidence == pytest.approx(model.confidence(r.facts.features)) or "dropped_text" in r.flags
    assert "quality" not in json.loads((bundle / "manifest.json").read_text())  # the copy was calibrated
