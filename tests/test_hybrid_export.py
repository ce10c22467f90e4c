"""The RNMT+ hybrid (Transformer encoder, GRU decoder) through the whole chain, on a tiny model trained
under bf16 autocast (``tiny_hybrid_checkpoint``): export under the same two-graph contract with
symbolic shapes and parity with torch (fp32 graphs and ids; int8 statistically), the worker's
Translator, forced decoding, an alignment head with ``nmt align``, and recovery to a checkpoint."""
from __future__ import annotations

import json
from collections import Counter

import numpy as np
import onnx
import pytest
import torch

from export.exporter import ExportOptions, export_bundle
from export.graphs import EXAMPLE_BEAM, EXAMPLE_LENGTHS, declared_dims
from export.parity import graph_parity, search_parity
from export.recover import recover_model, write_checkpoint
from export.shortlist import ShortlistOptions
from training.loading import load_model
from training.data import read_split
from training.greedy import pad_batch
from worker.engine.bundle import load_bundle, verify_graphs
from worker.engine.ort_model import OrtStepModel

from .conftest import make_toy_pairs

pytestmark = pytest.mark.slow


def encoder_ops(path) -> Counter:
    return Counter(node.op_type for node in onnx.load(str(path)).graph.node)


def test_the_bundle_keeps_the_two_graph_contract_and_records_its_encoder(tiny_hybrid_bundle):
    bundle = load_bundle(tiny_hybrid_bundle)
    verify_graphs(bundle)
    m = bundle.manifest
    assert m["model_config"]["encoder"] == "transformer" and m["model_config"]["enc_layers"] == 2
    assert set(m["files"]) == {"encoder.onnx", "decoder_step.onnx", "spm.model", "casing.json.gz"}
    assert [o["name"] for o in m["graphs"]["encoder"]["outputs"]] == ["annotations", "keys", "init_state"]
    assert [i["name"] for i in m["graphs"]["decoder_step"]["inputs"]] == ["prev_ids", "state", "annotations", "keys", "src_mask"]
    annotations = m["graphs"]["encoder"]["outputs"][0]
    assert annotations["shape"] == ["batch", "src_len", m["model_config"]["enc_model_dim"]]
    ops = encoder_ops(bundle.graph_path("encoder"))
    assert "GRU" not in ops and ops["Softmax"] == 2 and ops["LayerNormalization"] == 5  # 2 per layer + final
    # The decoder step is the GRU decoder's, as in a GRU-encoder bundle.
    assert encoder_ops(bundle.graph_path("decoder_step"))["Softmax"] == 1
    parity = m["verification"]["search_parity"]
    assert parity["sentences"] == parity["greedy_equal"] == parity["beam_equal"] == 200


def test_declared_output_shapes_are_symbolic(tiny_hybrid_bundle):
    bundle = load_bundle(tiny_hybrid_bundle)
    enc, step = declared_dims(bundle.graph_path("encoder")), declared_dims(bundle.graph_path("decoder_step"))
    assert enc["annotations"][:2] == enc["keys"][:2] == ["batch", "src_len"] and enc["init_state"][1] == "batch"
    assert step["attention"] == ["rows", "src_len"] and step["topk_ids"] == ["rows", "candidates"]
    for dims in [*enc.values(), *step.values()]:
        assert max(EXAMPLE_LENGTHS) not in dims and len(EXAMPLE_LENGTHS) * EXAMPLE_BEAM not in dims


def test_graph_outputs_match_torch_at_lengths_never_exported(tiny_hybrid_bundle, tiny_hybrid_checkpoint):
    model = load_model(tiny_hybrid_checkpoint).model
    ort_model = OrtStepModel.from_bundle(load_bundle(tiny_hybrid_bundle), "cpu", threads=1)
    diffs = graph_parity(model, ort_model, tolerance=1e-4)
    assert max(diffs.values()) <= 1e-4 and "encoder.annotations" in diffs
    # Far past the export example's 11 tokens and the parity batches' 30: positions are computed.
    src, lengths = pad_batch([list(range(4, 60)) * 3, [5, 6, 3]])
    with torch.no_grad():
        expected = model.encode(src, lengths)
    got = ort_model.encode(src.numpy(), lengths.numpy())
    np.testing.assert_allclose(got.annotations, expected.annotations.numpy(), atol=1e-4)
    np.testing.assert_allclose(got.init_state, expected.state.numpy(), atol=1e-4)


def test_greedy_and_beam_ids_equal_torch(tiny_hybrid_bundle, tiny_hybrid_checkpoint, toy_corpus):
    loaded = load_model(tiny_hybrid_checkpoint)
    sources = loaded.vocabs.encode_sources(read_split(toy_corpus, "val", loaded.config).src)[:100]
    parity = search_parity(loaded.model, OrtStepModel.from_bundle(load_bundle(tiny_hybrid_bundle)), sources, beam=4)
    assert parity.greedy_equal == parity.beam_equal == parity.sentences == 100


def test_int8_bundle_quantizes_the_encoder_layers_and_translates_like_fp32(tiny_hybrid_checkpoint, tiny_hybrid_bundle,
                                                                            toy_corpus, tmp_path):
    from worker.engine.settings import EngineSettings
    from worker.engine.translator import Translator

    report = export_bundle(tiny_hybrid_checkpoint, tmp_path / "int8",
                           ExportOptions(precision="int8", data_dir=str(toy_corpus), parity_sentences=50,
                                         shortlist=ShortlistOptions()))
    bundle = load_bundle(tmp_path / "int8")
    verify_graphs(bundle)
    assert report.scores["valid_bleu_delta"] >= -0.5
    assert bundle.manifest["verification"]["int8_source_step_graph"]["graph_max_abs_diff"] <= 1e-4
    assert declared_dims(bundle.graph_path("encoder"))["annotations"][:2] == ["batch", "src_len"]
    before, after = encoder_ops(load_bundle(tiny_hybrid_bundle).graph_path("encoder")), encoder_ops(bundle.graph_path("encoder"))
    # Every Linear (4 per layer, the attention keys' U_a) is a MatMul with a constant weight, and the
    # initial state's W_s a Gemm: all int8 now. The products of two activations (Q K^T and the
    # weights times V, 2 per layer) stay fp32.
    assert after["MatMulInteger"] == 2 * 4 + 1 + 1 and after["MatMul"] == 2 * 2
    assert before["MatMul"] == after["MatMulInteger"] - 1 + after["MatMul"]
    # Translations: int8 is judged by agreement with fp32, not exact equality.
    sentences = [s for s, _ in make_toy_pairs(60, seed=31)]
    settings = EngineSettings(provider="cpu", intra_op_threads=1)
    fp32 = [r.translation for r in Translator(tiny_hybrid_bundle, settings).translate_sentences(sentences)]
    int8 = [r.translation for r in Translator(bundle, settings).translate_sentences(sentences)]
    assert sum(a == b for a, b in zip(fp32, int8)) >= 0.8 * len(sentences)


@pytest.fixture(scope="module")
def translator(tiny_hybrid_bundle):
    from worker.engine.settings import EngineSettings
    from worker.engine.translator import Translator

    # The full vocabulary: forced decoding scores over all of it, and the search must too.
    return Translator(tiny_hybrid_bundle, EngineSettings(provider="cpu", intra_op_threads=1, shortlist="off"))


def test_translator_gives_a_sentence_the_same_result_alone_and_in_a_batch(translator):
    """Batches pad shorter sentences; the key mask keeps them from changing any result."""
    sentences = [s for s, _ in make_toy_pairs(12, seed=8)]
    batched = translator.translate_sentences(sentences)
    alone = [translator.translate_sentences([s])[0] for s in sentences]
    assert [r.translation for r in batched] == [r.translation for r in alone]
    assert [r.score for r in batched] == pytest.approx([r.score for r in alone], abs=1e-4)
    for result in batched:
        assert result.translation and 0.0 <= result.confidence <= 1.0
        assert all(0 <= i < len(result.source.split()) and 0 <= j < len(result.translation.split())
                   for i, j in result.alignment.pairs)


def test_forcing_the_greedy_output_reproduces_greedy_decoding(translator):
    from worker.engine.forced import force_decode
    from worker.engine.search import SearchOptions, beam_search

    sources = [[*translator.source_sp.encode(s), translator.model.special.eos] for s, _ in make_toy_pairs(6, seed=3)]
    greedy = [beam_search(translator.model, [src], SearchOptions(beam=1, no_repeat_ngram=0))[0][0] for src in sources]
    forced = force_decode(translator.model, sources, [list(h.tokens) for h in greedy])
    for hyp, f, src in zip(greedy, forced, sources):
        assert f.attention.shape == (len(hyp.tokens) + 1, len(src))
        np.testing.assert_allclose(f.attention, hyp.attention, atol=1e-5)
        np.testing.assert_allclose(f.token_log_probs, hyp.token_log_probs, atol=1e-4)


def test_recovered_checkpoint_has_the_exported_weights_and_exports_the_same_bundle(tiny_hybrid_bundle,
                                                                                   tiny_hybrid_checkpoint, toy_corpus,
                                                                                   tmp_path):
    recovered, spec = recover_model(tiny_hybrid_bundle)  # also checks graph parity against the bundle
    original = load_model(tiny_hybrid_checkpoint)
    assert spec.config == original.spec.config and spec.config.encoder == "transformer"
    state = recovered.state_dict()
    assert state.keys() == original.model.state_dict().keys()
    for name, value in original.model.state_dict().items():
        assert torch.equal(state[name], value), name
    path = write_checkpoint(tiny_hybrid_bundle, tmp_path / "recovered.pt")
    again = export_bundle(path, tmp_path / "again", ExportOptions(data_dir=str(toy_corpus), parity_sentences=20))
    assert again.signature == load_bundle(tiny_hybrid_bundle).signature  # the same graph files
