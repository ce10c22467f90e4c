"""IO binding of the Transformer step model (``worker.engine.transformer_step``), run here on the
CPU provider (CUDA binds the same way, on another device): the cache stays in OrtValues between
steps, where the step graph takes the rows the search keeps (or a reorder graph gathers them), and
beam search decodes token for token and score for score like the plain path, also when bad words
are dropped from a widened top-k."""
from __future__ import annotations

import numpy as np
import pytest

from .marian_models import sample_pairs, shared_model
from .search_check import assert_same_beams, record_asked

pytestmark = pytest.mark.slow
pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    from worker.engine.bundle import load_bundle

    _, path = shared_model(tmp_path_factory, "opus-tiny-en-de")
    return load_bundle(path)


def _sources(bundle, n: int) -> list[list[int]]:
    import sentencepiece as spm

    sp = spm.SentencePieceProcessor(model_file=str(bundle.vocab_path("source")))
    return [[*sp.encode(s), bundle.special_ids.eos] for s, _ in sample_pairs(n, offset=3)]


@pytest.mark.parametrize("fold", [True, False])
def test_bound_beam_search_equals_the_plain_run_token_for_token_and_score_for_score(bundle, fold):
    """Bound, with the reorder folded into the step graph (the default) or run as a Gather graph."""
    import onnxruntime as ort

    from worker.engine.ort_model import RowsToTake
    from worker.engine.search import SearchOptions, beam_search
    from worker.engine.transformer_step import OrtTransformerStepModel

    plain = OrtTransformerStepModel.from_bundle(bundle, "cpu", threads=1, io_binding=False)
    bound = OrtTransformerStepModel.from_bundle(bundle, "cpu", threads=1, io_binding=True,
                                                fold_reorder=None if fold else False)
    assert bound.io_binding and not plain.io_binding
    assert bound.fold_reorder is fold and (bound.reorderer is None) is fold
    sources = _sources(bundle, 40)
    options = SearchOptions(beam=4, max_len_a=1.5, max_len_b=10)
    expected = beam_search(plain, sources, options)
    # two of the words the model produces most, banned: the bound path widens its top-k and drops them
    common = np.bincount(np.concatenate([h[0].tokens for h in expected])).argsort()[-2:]
    full = OrtTransformerStepModel.from_bundle(bundle, "cpu", threads=1, io_binding=False)
    full.topk = 0  # the search then asks for the whole vocabulary every step: the reference for bad words
    for bad in (np.array([], dtype=np.int64), common.astype(np.int64)):
        plain.bad_words = bound.bad_words = full.bad_words = bad
        want = beam_search(plain, sources, options)
        assert [h[0].tokens for h in want] == [h[0].tokens for h in beam_search(full, sources, options)]
        found = beam_search(bound, sources, options)
        assert [[h.tokens for h in hyps] for hyps in found] == [[h.tokens for h in hyps] for hyps in want]
        for got, ref in zip(found, want):
            assert max(abs(g.score - w.score) for g, w in zip(got, ref)) < 1e-5
        assert not bad.size or not np.isin(np.concatenate([h[0].tokens for h in found]), bad).any()
    # between steps the cache is an OrtValue (device memory under CUDA), never a host array
    encoded = bound.expand(bound.encode(np.array([sources[0]], dtype=np.int64),
                                        np.array([len(sources[0])], dtype=np.int64)), 1)
    step = bound.step(np.array([bundle.special_ids.bos]), bound.initial_state(encoded), encoded, 12)
    assert step.log_probs.shape == (1, 12)
    assert all(isinstance(v, ort.OrtValue) for v in step.state.values())
    assert step.ids.shape == (1, 12) and not np.isin(step.ids, bound.bad_words).any()
    reordered = bound.reorder(step.state, np.array([0, 0, 0], dtype=np.int64))
    if fold:  # the rows the next step takes, of the cache as it is
        assert isinstance(reordered, RowsToTake) and reordered.state is step.state
    else:
        assert all(isinstance(v, ort.OrtValue) and v.shape()[0] == 3 for v in reordered.values())
    again = bound.step(np.array([5, 6, 7]), reordered, bound.expand(encoded, 3), 12)
    assert again.log_probs.shape == (3, 12)
    assert all(isinstance(v, ort.OrtValue) and v.shape()[:2] == [1, 3] for v in again.state.values())


def test_widened_top_k_without_bad_words_is_the_masked_full_vocabulary_top_k():
    from worker.engine.transformer_step import without_bad_words

    rng = np.random.default_rng(7)
    bad = np.array([0, 5, 9])
    for _ in range(50):
        full = rng.normal(size=(6, 40))
        full[rng.integers(0, 6), bad] = 10.0  # bad words at the very top of some rows
        wide = np.argsort(-full, axis=1, kind="stable")[:, :8 + len(bad)]
        values, ids = without_bad_words(np.take_along_axis(full, wide, 1), wide, bad, 8)
        masked = full.copy()
        masked[:, bad] = -np.inf
        want = np.argsort(-masked, axis=1, kind="stable")[:, :8]
        assert (ids == want).all() and np.array_equal(values, np.take_along_axis(full, want, 1))


def test_an_fp16_step_graph_decodes_through_the_binding_with_an_fp16_cache(bundle, tmp_path):
    """The GPU artifact's dtypes on the CPU: fp16 cross keys, values and cache (graph inputs and
    outputs too), bound and gathered as fp16; the output stays close to fp32's."""
    import json
    import shutil

    from export.quantize import convert_fp16
    from worker.engine.bundle import load_bundle, sha256_file, signature_for
    from worker.engine.search import SearchOptions, beam_search
    from worker.engine.transformer_step import OrtTransformerStepModel

    half = tmp_path / "fp16"
    shutil.copytree(bundle.path, half)
    manifest = json.loads((half / "manifest.json").read_text(encoding="utf-8"))
    for name in ("encoder", "decoder_step"):
        convert_fp16(bundle.graph_path(name), half / f"{name}.onnx")
        manifest["files"][f"{name}.onnx"] = sha256_file(half / f"{name}.onnx")
    manifest["precision"] = "fp16"
    manifest["signature"] = signature_for(manifest)
    (half / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    bound = OrtTransformerStepModel.from_bundle(load_bundle(half), "cpu", threads=1, io_binding=True)
    assert bound.cache_dtype == np.float16
    sources = _sources(bundle, 40)
    options = SearchOptions(beam=4, max_len_a=1.5, max_len_b=10)
    found = [h[0].tokens for h in beam_search(bound, sources, options)]
    plain = OrtTransformerStepModel.from_bundle(bundle, "cpu", threads=1, io_binding=False)
    expected = [h[0].tokens for h in beam_search(plain, sources, options)]
    assert sum(f == e for f, e in zip(found, expected)) >= 0.8 * len(sources)


@pytest.mark.parametrize("io_binding", [False, True])
def test_rows_at_their_length_limit_are_scored_from_eos_alone_as_over_the_whole_vocabulary(bundle, io_binding):
    """Where rows must end, the step returns each row's eos log-probability beside the usual top-k
    (``step(eos=True)``) instead of every row's whole vocabulary: the same hypotheses and scores."""
    from worker.engine.search import EVERY, SearchOptions, beam_search
    from worker.engine.transformer_step import OrtTransformerStepModel

    apart = OrtTransformerStepModel.from_bundle(bundle, "cpu", threads=1, io_binding=io_binding)
    whole = OrtTransformerStepModel.from_bundle(bundle, "cpu", threads=1, io_binding=io_binding)
    whole.eos_scores = False  # the reference: a step with a row at its limit scores every word
    asked_apart, asked_whole = record_asked(apart), record_asked(whole)
    sources = _sources(bundle, 24)
    for options in (SearchOptions(beam=4, n_best=2, max_len_a=0.5, max_len_b=2),
                    SearchOptions(beam=3, max_len_a=0.0, max_len_b=4, free_forced_eos=True, length_penalty=1.0,
                                  length_normalisation="length", stopping="best_k")):
        assert_same_beams(beam_search(apart, sources, options), beam_search(whole, sources, options),
                          log_prob_tol=1e-5)
    assert EVERY in asked_whole and EVERY not in asked_apart


def _random_feeds(session, vocab: int) -> dict:
    """Feeds for any of the bundle's graphs: 2 sentences of 5 source pieces, 3 rows each, a cache of
    4 steps; ids below ``vocab``, every source position valid, small random floats."""
    rng = np.random.default_rng(7)
    sizes = {"batch": 2, "beam": 3, "src_len": 5, "steps": 4}
    feeds = {}
    for value in session.get_inputs():
        shape = [d if isinstance(d, int) else sizes[d] for d in value.shape]
        if value.name == "src_lengths":
            feeds[value.name] = np.full(shape, sizes["src_len"], dtype=np.int64)
        elif value.type == "tensor(int64)":
            feeds[value.name] = rng.integers(3, vocab, shape)
        elif value.type == "tensor(bool)":
            feeds[value.name] = np.ones(shape, dtype=bool)
        else:
            dtype = np.float16 if value.type == "tensor(float16)" else np.float32
            feeds[value.name] = (rng.standard_normal(shape) * 0.5).astype(dtype)
    return feeds


@pytest.mark.parametrize("io_binding", [False, True])
def test_graphs_loaded_for_cuda_fuse_every_residual_norm_and_decode_as_the_files_do(bundle, io_binding, monkeypatch,
                                                                                     tmp_path):
    """On CUDA both graphs load with each residual add and LayerNorm as one SkipLayerNormalization
    (``ort_model.fuse_skip_layer_norms``). Loaded so here, on the CPU provider (which implements
    the operator too): every LayerNorm fused, fp32 and fp16 graphs computing what the files compute,
    and the same beams as the files give."""
    import onnx
    import onnxruntime as ort

    from export.quantize import convert_fp16
    from worker.engine import ort_model, transformer_step
    from worker.engine.search import SearchOptions, beam_search
    from worker.engine.transformer_step import OrtTransformerStepModel

    vocab = 20  # ids 3..19: real pieces of any vocabulary
    for name in ("encoder", "decoder_step"):
        half = tmp_path / f"{name}-fp16.onnx"  # the graph converted to fp16, as an fp16 bundle holds it
        convert_fp16(bundle.graph_path(name), half)
        for path, tolerance in ((bundle.graph_path(name), 1e-4), (half, 2e-2)):
            proto = onnx.load(str(path))
            norms = sum(node.op_type == "LayerNormalization" for node in proto.graph.node)
            assert norms >= 2 and ort_model.fuse_skip_layer_norms(proto) == norms
            assert not any(node.op_type == "LayerNormalization" for node in proto.graph.node)
            files = ort.InferenceSession(str(path), providers=[ort_model.CPU])
            rewritten = ort.InferenceSession(proto.SerializeToString(), providers=[ort_model.CPU])
            feeds = _random_feeds(files, vocab)
            for want, got in zip(files.run(None, feeds), rewritten.run(None, feeds)):
                assert want.shape == got.shape
                if want.dtype.kind == "f":
                    assert np.abs(want.astype(np.float64) - got).max() < tolerance, (name, path.name)
                elif path == bundle.graph_path(name):  # fp32: the same candidates (fp16 may swap near-ties)
                    assert (want == got).all(), (name, "ids")
    plain = OrtTransformerStepModel.from_bundle(bundle, "cpu", threads=1, io_binding=io_binding)
    fused_counts = []

    def recorded(proto):
        fused_counts.append(real(proto))
        return fused_counts[-1]

    real = ort_model.fuse_skip_layer_norms
    monkeypatch.setattr(ort_model, "fuse_skip_layer_norms", recorded)
    monkeypatch.setattr(transformer_step, "on_cuda", lambda providers: True)  # load as for CUDA, run on the CPU
    fused = OrtTransformerStepModel.from_bundle(bundle, "cpu", threads=1, io_binding=io_binding)
    assert len(fused_counts) == 2 and min(fused_counts) >= 2  # the encoder's and the step's
    sources = _sources(bundle, 24)
    options = SearchOptions(beam=4, n_best=2, max_len_a=1.5, max_len_b=10)
    assert_same_beams(beam_search(fused, sources, options), beam_search(plain, sources, options), score_tol=1e-4)


def test_the_new_position_enters_the_self_attention_cache_without_a_transpose(bundle):
    """The step's k and v reach the cache from their products through reshapes alone (the new
    position's size-1 axis moves without moving data): no Transpose, a kernel launch per layer on a
    GPU, and no copy."""
    import onnx

    proto = onnx.load(str(bundle.graph_path("decoder_step")), load_external_data=False)
    producer = {out: node for node in proto.graph.node for out in node.output}
    concats = [node for node in proto.graph.node if node.output[0].startswith("new_self_")]
    assert concats and all(node.op_type == "Concat" for node in concats)
    for concat in concats:
        seen, path = producer.get(concat.input[1]), []
        while seen is not None and seen.op_type not in ("MatMul", "Gemm"):
            path.append(seen.op_type)
            seen = producer.get(seen.input[0])
        assert seen is not None and set(path) <= {"Reshape", "Add"}, (concat.output[0], path)


def test_the_folded_reorder_regroups_the_flat_cache_rows_it_gathers(bundle):
    """The step graph with the reorder folded in passes ONNX's checker, and a step on a cache in
    flat rows with an index equals the plain step on that cache reordered and grouped [B, R]."""
    import onnx
    import onnxruntime as ort

    from worker.engine.ort_model import REORDER_INPUT, StateRows, bindable_step_graph

    path = bundle.graph_path("decoder_step")
    folded = bindable_step_graph(path, bundle.special_ids.eos, True, rows=StateRows("self", grouped_by="prev_ids"))
    onnx.checker.check_model(onnx.load_from_string(folded), full_check=True)
    plain = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    session = ort.InferenceSession(folded, providers=["CPUExecutionProvider"])
    feeds = _random_feeds(plain, 50)  # 2 sentences, 3 rows each, a cache of 4 steps
    caches = [i.name for i in plain.get_inputs() if i.name.startswith("self_")]
    index = np.array([5, 0, 0, 3, 2, 2], dtype=np.int64)  # 6 rows taken of the previous step's 7
    rng = np.random.default_rng(3)
    before = {name: rng.normal(size=(7, *feeds[name].shape[2:])).astype(np.float32) for name in caches}
    want = plain.run(["log_probs", "attention", "new_self_keys.0"],
                     {**feeds, **{n: v[index].reshape(feeds[n].shape) for n, v in before.items()}})
    got = session.run(["log_probs", "attention", "new_self_keys.0"],
                      {**feeds, **before, REORDER_INPUT: index, "topk": np.array([4], dtype=np.int64)})
    for a, b in zip(want, got, strict=True):
        np.testing.assert_array_equal(a, b)
