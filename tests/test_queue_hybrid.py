"""A real ``celery -A worker worker`` serving a GRU-encoder and a Transformer-encoder (RNMT+ hybrid)
bundle side by side, through a real redis-server and the real client: the worker engine runs either
encoder's graphs unchanged, and a job's result is the local Translator's."""
from __future__ import annotations

import pytest

from client.client import TranslationClient
from worker.engine.bundle import load_bundle

from .conftest import make_toy_pairs
from .queue_harness import CeleryWorker, RedisServer

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture
def redis_server(tmp_path):
    server = RedisServer(tmp_path / "redis").start()
    yield server
    server.stop()


def test_a_worker_translates_with_a_transformer_encoder_bundle(tmp_path, redis_server, tiny_bundle, tiny_hybrid_bundle):
    from worker.engine.translator import Translator
    from worker.engine.settings import EngineSettings

    worker = CeleryWorker("hybrid", {"NMT_BROKER_URL": redis_server.url, "NMT_BUNDLES": f"{tiny_bundle},{tiny_hybrid_bundle}",
                                     "NMT_OUTPUT_DIR": str(tmp_path / "out"), "NMT_THREADS": "1"}, tmp_path)
    try:
        worker.start()
        client = TranslationClient(broker_url=redis_server.url)
        assert client.store.served_models() == {"toy-en-de": "en-de", "toy-hybrid-en-de": "en-de"}
        sentences = [s for s, _ in make_toy_pairs(8, seed=12)]
        hybrid = client.submit(text=" ".join(sentences), src="en", tgt="de", model="toy-hybrid-en-de",
                               options={"beam": 3}).wait(timeout=120)
        gru = client.submit(text=" ".join(sentences), src="en", tgt="de", options={"beam": 3}).wait(timeout=120)
    finally:
        worker.discard()  # at once: its warm shutdown is not what this test checks
    assert hybrid.model == "toy-hybrid-en-de" and gru.model == "toy-en-de"
    assert hybrid.provenance["signature"] == load_bundle(tiny_hybrid_bundle).signature
    assert [s.source for s in hybrid.segments] == sentences
    local = Translator(tiny_hybrid_bundle, EngineSettings(provider="cpu", intra_op_threads=1))
    expected = local.translate_sentences(sentences, local.search_options(beam=3))  # the bundle defaults, as a job
    assert [s.translation for s in hybrid.segments] == [r.translation for r in expected]
    assert [s.translation for s in hybrid.segments] != [s.translation for s in gru.segments]
