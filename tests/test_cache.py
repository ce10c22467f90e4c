"""The segment cache: repeats decoded once, hits equal to fresh results wherever they land, keys
that keep options, glossaries and bundles apart, LRU eviction, and the shared Redis layer with its TTL."""
from __future__ import annotations

import time
from dataclasses import replace

import pytest

from queue_config.settings import SettingsError, load_settings
from worker.cache_store import PREFIX as REDIS_PREFIX
from worker.cache_store import RedisStore
from worker.engine.cache import SegmentCache
from worker.engine.search import SearchOptions
from worker.engine.settings import EngineSettings
from worker.engine.translator import Translator
from worker.text.glossary import Glossary
from worker.text.pipeline import TextOptions
from worker.text.segment import SegmentResult

from .conftest import REPO_ROOT
from .queue_harness import RedisServer, wait_for

BUNDLE = REPO_ROOT / "models" / "multi30k-en-de"
SENTENCES = ["A man rides a bike.", "Two dogs play in the snow.", "A man rides a bike.", "A child eats."]
SETTINGS = EngineSettings(provider="cpu", intra_op_threads=1)


@pytest.fixture(scope="module")
def plain() -> Translator:
    return Translator(BUNDLE, SETTINGS)


def cached_translator(plain: Translator, cache: SegmentCache) -> Translator:
    """A second Translator over the same loaded bundle and sessions, with a cache."""
    other = object.__new__(Translator)
    other.__dict__ |= plain.__dict__ | {"cache": cache}
    return other


def count_decodes(translator: Translator, monkeypatch) -> list[str]:
    seen: list[str] = []
    decode = translator._decode

    def spy(sentences, *args):
        seen.extend(sentences)
        return decode(sentences, *args)

    monkeypatch.setattr(translator, "_decode", spy)
    return seen


def same(a: SegmentResult, b: SegmentResult) -> bool:
    """Equal in everything but the ``cached`` flag, scores to float32 rounding (a sentence decoded
    in another batch composition can differ in the 7th digit: bench/segment_cache.py)."""
    return a == replace(b, cached=a.cached, score=a.score) and a.score == pytest.approx(b.score, abs=1e-5)


def test_repeats_are_decoded_once_and_equal_uncached_results(plain, monkeypatch):
    translator = cached_translator(plain, SegmentCache(100))
    decoded = count_decodes(translator, monkeypatch)
    reference = plain.translate_sentences(SENTENCES)
    first = translator.translate_sentences(SENTENCES)
    assert len(decoded) == 3 and [r.cached for r in first] == [False, False, True, False]
    again = translator.translate_sentences(SENTENCES[::-1])
    assert len(decoded) == 3 and all(r.cached for r in again)
    for got in (first, again[::-1]):
        assert all(same(a, b) for a, b in zip(got, reference))
    assert [r.to_json().get("cached") for r in first] == [None, None, True, None]
    assert SegmentResult.from_json(first[2].to_json()).cached


def test_a_cached_sentence_lands_at_the_right_offsets_in_any_document(plain):
    translator = cached_translator(plain, SegmentCache(100))
    texts = ["A man rides a bike. Two dogs play in the snow.\n\nA man rides a bike.",
             "A child eats.  A man rides a bike."]
    fresh = plain.translate_documents(texts)
    hit = translator.translate_documents(texts)
    again = translator.translate_document(texts[1])
    assert [s.cached for s in hit[0].segments] == [False, False, True]
    assert [s.cached for s in again.segments] == [True, True]
    assert hit[0].provenance["timings"]["cache_hits"] == 1 and again.provenance["timings"]["cache_hits"] == 2
    for got, want in ((hit[0], fresh[0]), (hit[1], fresh[1]), (again, fresh[1])):
        assert got.translation == want.translation
        assert all(same(a, b) for a, b in zip(got.segments, want.segments))
        for segment in got.segments:
            assert [got.source[a:b] for a, b in segment.alignment.source_spans] == segment.source.split()
            assert [got.translation[a:b] for a, b in segment.alignment.target_spans] == segment.translation.split()


def test_options_glossary_attention_and_bundle_keep_entries_apart(plain, tmp_path, monkeypatch):
    cache = SegmentCache(100)
    translator = cached_translator(plain, cache)
    decoded = count_decodes(translator, monkeypatch)
    sentence = ["A man rides a bike."]
    translator.translate_sentences(sentence)
    translator.translate_sentences(sentence, SearchOptions(beam=2))
    glossary = TextOptions(glossary=Glossary((("bike", "Velo"),)))
    forced = translator.translate_sentences(sentence, text_options=glossary)
    translator.translate_sentences(sentence, text_options=TextOptions(restore_case=False))
    translator.translate_sentences(sentence, with_attention=True)
    assert len(decoded) == 5 and len(cache) == 5 and not forced[0].cached and "Velo" in forced[0].translation
    assert translator.translate_sentences(sentence, text_options=glossary)[0].cached
    other = cached_translator(plain, cache)
    other.bundle = replace(plain.bundle, manifest=plain.bundle.manifest | {"signature": "another"})
    assert not other.translate_sentences(sentence)[0].cached


def test_lru_evicts_the_least_recently_used_and_entries_expire():
    cache = SegmentCache(2, ttl=0.2)
    result = SegmentResult("a", "b", 0.0, None)  # type: ignore[arg-type]
    cache.put_many({"k1": result, "k2": result})
    assert set(cache.get_many(["k1"])) == {"k1"}  # k1 is now the most recent
    cache.put_many({"k3": result})
    assert set(cache.get_many(["k1", "k2", "k3"])) == {"k1", "k3"}
    time.sleep(0.3)
    assert cache.get_many(["k1", "k3"]) == {}


@pytest.fixture
def redis_server(tmp_path):
    server = RedisServer(tmp_path / "redis").start()
    yield server
    server.stop()


@pytest.mark.integration
def test_redis_layer_shares_results_between_workers_with_a_ttl(plain, redis_server):
    client = redis_server.client()
    one = cached_translator(plain, SegmentCache(100, ttl=1, shared=RedisStore(redis_server.client())))
    two = cached_translator(plain, SegmentCache(0, ttl=1, shared=RedisStore(redis_server.client())))
    fresh = one.translate_sentences(SENTENCES, with_attention=True)
    assert len(client.keys(REDIS_PREFIX + "*")) == 3 and 0 < client.ttl(client.keys(REDIS_PREFIX + "*")[0]) <= 1
    shared = two.translate_sentences(SENTENCES, with_attention=True)
    assert all(r.cached for r in shared)
    assert [r.to_json() | {"cached": True} for r in fresh] == [r.to_json() for r in shared]
    wait_for(lambda: not client.keys(REDIS_PREFIX + "*"), 5, "cached segments to expire")
    assert [r.cached for r in two.translate_sentences(SENTENCES, with_attention=True)] == [False, False, True, False]


def test_a_redis_outage_is_a_miss_not_a_failure(plain):
    import redis

    down = redis.Redis(host="127.0.0.1", port=1, socket_connect_timeout=0.2)
    translator = cached_translator(plain, SegmentCache(0, shared=RedisStore(down)))
    assert [r.cached for r in translator.translate_sentences(SENTENCES)] == [False, False, True, False]


def test_cache_settings_are_parsed_and_checked():
    settings = load_settings({"NMT_CACHE_SIZE": "5", "NMT_CACHE_REDIS": "on", "NMT_CACHE_TTL": "60"})
    assert (settings.cache_size, settings.cache_redis, settings.cache_ttl) == (5, True, 60)
    assert load_settings({}).cache_redis is False and load_settings({"NMT_CACHE_REDIS": "0"}).cache_redis is False
    with pytest.raises(SettingsError, match="NMT_CACHE_REDIS='maybe' is not a valid on/off value"):
        load_settings({"NMT_CACHE_REDIS": "maybe"})
    with pytest.raises(SettingsError, match="NMT_CACHE_SIZE must be >= 0"):
        load_settings({"NMT_CACHE_SIZE": "-1"})
    with pytest.raises(SettingsError, match="NMT_CACHE_TTL must be >= 1"):
        load_settings({"NMT_CACHE_TTL": "0"})


@pytest.mark.integration
@pytest.mark.slow
def test_a_second_job_on_another_worker_gets_cached_segments_through_redis(redis_server, tmp_path):
    from client.client import TranslationClient

    from .queue_harness import CeleryWorker

    env = {"NMT_BROKER_URL": redis_server.url, "NMT_BUNDLES": str(BUNDLE), "NMT_CACHE_REDIS": "on",
           "NMT_LEASE_SECONDS": "3"}
    client = TranslationClient(broker_url=redis_server.url)
    text = "A man rides a bike. Two dogs play in the snow.\n\nA man rides a bike."
    workers = [CeleryWorker("w1", env, tmp_path).start()]
    try:
        first = client.submit(text=text, src="en", tgt="de").wait(timeout=60)
        workers.append(CeleryWorker("w2", env, tmp_path).start())
        workers[0].stop()  # the second job can only go to w2, whose own cache is empty
        second = client.submit(text=text, src="en", tgt="de").wait(timeout=60)
    finally:
        for worker in workers:
            worker.stop()
    assert [s.cached for s in first.segments] == [False, False, True]
    assert [s.cached for s in second.segments] == [True, True, True]
    assert first.provenance["timings"]["cache_hits"] == 1 and second.provenance["timings"]["cache_hits"] == 3
    assert second.text == first.text
    assert [s.target_words for s in second.segments] == [s.target_words for s in first.segments]
    assert "w2@" in (tmp_path / "w2.log").read_text() and "succeeded" in (tmp_path / "w2.log").read_text()
