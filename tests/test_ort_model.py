"""OrtStepModel over a tiny bundle: the state reordered where it lives under IO binding (by the step
graph itself, or by a Gather graph of its own), broken
graphs and silent CPU fallback as clear errors, thread counts reaching ONNX Runtime."""
from __future__ import annotations

import shutil
import warnings

import numpy as np
import onnxruntime as ort
import pytest

from worker.engine.bundle import BundleError, load_bundle
from worker.engine.ort_model import (CPU, CUDA, EOS_OUTPUT, OrtStepModel, ProviderError, RowsToTake,
                                     bindable_step_graph, check_provider, gather_graph)
from worker.engine.search import SearchOptions, search_in_batches

from .search_check import assert_same_beams, record_asked


@pytest.mark.parametrize("elem_type, dtype", [("tensor(float)", np.float32), ("tensor(float16)", np.float16)])
@pytest.mark.parametrize("count, axis", [(1, 1), (3, 0)])
def test_gather_graph_passes_the_checker_and_gathers_rows_of_every_tensor(elem_type, dtype, count, axis):
    import onnx

    model = gather_graph(elem_type, count, axis, ("a", "b", "c"))
    onnx.checker.check_model(onnx.load_from_string(model), full_check=True)
    session = ort.InferenceSession(model, providers=[CPU])
    states = [np.arange(2 * 5 * 3, dtype=dtype).reshape(2, 5, 3).swapaxes(0, axis).copy() + i for i in range(count)]
    index = np.array([1, 0, 0], dtype=np.int64)
    gathered = session.run(None, {**{f"state.{i}": s for i, s in enumerate(states)}, "index": index})
    for state, got in zip(states, gathered, strict=True):
        np.testing.assert_array_equal(got, np.take(state, index, axis=axis))


@pytest.mark.slow
def test_bindable_step_graph_returns_the_eos_column_beside_the_step_s_outputs(tiny_bundle):
    """The rewritten step graph: every output as before, plus log_probs' eos column."""
    bundle = load_bundle(tiny_bundle)
    eos = bundle.special_ids.eos
    plain = ort.InferenceSession(str(bundle.graph_path("decoder_step")), providers=[CPU])
    rewritten = ort.InferenceSession(bindable_step_graph(bundle.graph_path("decoder_step"), eos, topk_input=False),
                                     providers=[CPU])
    model = OrtStepModel.from_bundle(bundle, "cpu")
    encoded = model.encode(np.array([[5, 6, 7, 3], [8, 9, 3, 0]]), np.array([4, 3]))
    feeds = {"prev_ids": np.full(2, bundle.special_ids.bos), "state": model.initial_state(encoded),
             "annotations": encoded.annotations, "keys": encoded.keys, "src_mask": encoded.mask}
    names = [o.name for o in plain.get_outputs()]
    before = plain.run(names, feeds)
    after = rewritten.run([*names, EOS_OUTPUT], feeds)
    for a, b in zip(before, after[:-1], strict=True):
        np.testing.assert_array_equal(a, b)
    log_probs = before[names.index("log_probs")]
    np.testing.assert_array_equal(after[-1], log_probs[..., eos:eos + 1])


@pytest.mark.slow
@pytest.mark.parametrize("fold", [True, False])
def test_io_binding_decodes_token_for_token_and_score_for_score_like_a_plain_run(tiny_bundle, fold):
    bundle = load_bundle(tiny_bundle)
    plain = OrtStepModel.from_bundle(bundle, "cpu", io_binding=False)
    bound = OrtStepModel.from_bundle(bundle, "cpu", io_binding=True, fold_reorder=fold)
    assert bound.fold_reorder is fold and (bound.gather is None) is fold
    sources = [[5, 6, 7, 3], [8, 3], [9, 10, 11, 12, 13, 3], [14, 3], [15, 16, 17, 5, 6, 7, 8, 3]]
    options = SearchOptions(beam=4, n_best=4)
    for a, b in zip(search_in_batches(plain, sources, options), search_in_batches(bound, sources, options)):
        assert [h.tokens for h in a] == [h.tokens for h in b]
        assert [h.score for h in a] == pytest.approx([h.score for h in b], rel=0, abs=1e-6)


def _no_host_copy(patch, what: str) -> None:
    def refuse(*args, **kwargs):
        raise AssertionError(f"{what} copied the state through the host")

    patch.setattr(ort.OrtValue, "numpy", refuse)
    patch.setattr(ort.OrtValue, "ortvalue_from_numpy", refuse)


@pytest.mark.slow
def test_reorder_under_io_binding_gathers_the_state_without_a_host_copy(tiny_bundle, monkeypatch):
    """The reorder as a run of its own (``fold_reorder=False``): a Gather graph where the state lives."""
    model = OrtStepModel.from_bundle(load_bundle(tiny_bundle), "cpu", io_binding=True, fold_reorder=False)
    encoded = model.encode(np.array([[5, 6, 7, 3], [8, 9, 3, 0], [10, 3, 0, 0]]), np.array([4, 3, 2]))
    state = model.step(np.full(3, 2), model.initial_state(encoded), encoded).state  # float [L, 3, D]
    assert isinstance(state, ort.OrtValue)
    host_state = state.numpy()
    index = np.array([2, 0, 0, 1, 2], dtype=np.int64)
    with monkeypatch.context() as patch:
        _no_host_copy(patch, "reorder")
        reordered = model.reorder(state, index)
    assert isinstance(reordered, ort.OrtValue)
    assert reordered.device_name().lower() == "cpu"
    np.testing.assert_array_equal(reordered.numpy(), host_state[:, index])


@pytest.mark.slow
def test_a_folded_reorder_is_an_index_the_next_step_takes_its_rows_by(tiny_bundle, monkeypatch):
    """IO binding's default: ``reorder`` runs nothing and copies nothing (two reorders compose their
    indices), and the step that reads the rows computes what a plain step on the reordered state does."""
    bundle = load_bundle(tiny_bundle)
    model = OrtStepModel.from_bundle(bundle, "cpu", io_binding=True)
    plain = OrtStepModel.from_bundle(bundle, "cpu", io_binding=False)
    assert model.fold_reorder and model.gather is None
    src, lengths = np.array([[5, 6, 7, 3], [8, 9, 3, 0], [10, 3, 0, 0]]), np.array([4, 3, 2])
    encoded = model.encode(src, lengths)
    state = model.step(np.full(3, 2), model.initial_state(encoded), encoded).state  # float [L, 3, D]
    host_state = state.numpy()
    first, then = np.array([2, 0, 0, 1, 2], dtype=np.int64), np.array([4, 1, 3], dtype=np.int64)
    with monkeypatch.context() as patch:
        _no_host_copy(patch, "reorder")
        rows = model.reorder(model.reorder(state, first), then)
    assert isinstance(rows, RowsToTake) and rows.state is state
    np.testing.assert_array_equal(rows.index, first[then])
    np.testing.assert_array_equal(model.top_state(rows), host_state[-1, first[then]])
    prev = np.array([7, 8, 9])
    got = model.step(prev, rows, encoded, 0)
    want = plain.step(prev, host_state[:, first[then]], plain.encode(src, lengths), 0)
    np.testing.assert_allclose(got.log_probs, want.log_probs, rtol=0, atol=1e-6)
    np.testing.assert_allclose(got.state.numpy(), want.state, rtol=0, atol=1e-6)
    np.testing.assert_allclose(got.attention, want.attention, rtol=0, atol=1e-6)


@pytest.mark.slow
def test_forced_decoding_under_io_binding_takes_every_row_of_a_state_never_reordered(tiny_bundle):
    """Forced decoding steps without reordering: the folded step then takes each row as it is."""
    from worker.engine.forced import force_decode

    bundle = load_bundle(tiny_bundle)
    sources = [[5, 6, 7, 3], [8, 3], [9, 10, 11, 12, 13, 3]]
    targets = [[5, 6], [7, 8, 9, 10], [11]]
    plain = force_decode(OrtStepModel.from_bundle(bundle, "cpu", io_binding=False), sources, targets)
    bound = force_decode(OrtStepModel.from_bundle(bundle, "cpu", io_binding=True), sources, targets)
    for a, b in zip(plain, bound, strict=True):
        np.testing.assert_allclose(b.token_log_probs, a.token_log_probs, rtol=0, atol=1e-5)
        np.testing.assert_allclose(b.attention, a.attention, rtol=0, atol=1e-6)


def test_a_reorder_folded_without_io_binding_is_refused():
    from worker.engine.ort_model import fold_by_default

    assert fold_by_default(True, None) and not fold_by_default(False, None) and not fold_by_default(True, False)
    with pytest.raises(ValueError, match="needs IO binding"):
        fold_by_default(False, True)


@pytest.mark.slow
def test_folding_the_reorder_into_a_step_graph_keeps_it_valid_and_names_what_it_cannot_fold(tiny_bundle):
    import onnx

    from worker.engine.ort_model import REORDER_INPUT, StateRows, fold_reorder_into

    path = load_bundle(tiny_bundle).graph_path("decoder_step")
    folded = onnx.load_from_string(bindable_step_graph(path, 3, False, rows=StateRows("state", axis=1)))
    onnx.checker.check_model(folded, full_check=True)  # nodes still in topological order
    inputs = {i.name: [d.dim_param or d.dim_value for d in i.type.tensor_type.shape.dim] for i in folded.graph.input}
    assert inputs[REORDER_INPUT] == ["rows"] and inputs["state"][1] == "previous_rows"
    readers = [node for node in folded.graph.node if "state" in node.input]
    assert [(n.op_type, list(n.input), list(n.output)) for n in readers] == [
        ("Gather", ["state", REORDER_INPUT], ["state.taken"])]  # the fold's Gather, and nothing else
    with pytest.raises(BundleError, match="already has an input 'state_rows'"):
        fold_reorder_into(folded, StateRows("state", axis=1))
    with pytest.raises(BundleError, match="no 'self' input"):
        fold_reorder_into(onnx.load(str(path)), StateRows("self", grouped_by="prev_ids"))


@pytest.mark.slow
def test_under_io_binding_the_encoder_outputs_stay_where_written_and_select_gathers_them_there(tiny_bundle,
                                                                                              monkeypatch):
    """A step graph that groups beams: encode leaves annotations, keys and the first state in
    OrtValues (only the mask is uploaded) and select keeps sentences without a host copy."""
    bundle = load_bundle(tiny_bundle)
    assert bundle.grouped_beams
    model = OrtStepModel.from_bundle(bundle, "cpu", io_binding=True)
    plain = OrtStepModel.from_bundle(bundle, "cpu", io_binding=False)
    src, lengths = np.array([[5, 6, 7, 3], [8, 9, 3, 0], [10, 3, 0, 0]]), np.array([4, 3, 2])
    encoded, want = model.encode(src, lengths), plain.encode(src, lengths)
    assert encoded.host is None
    assert all(isinstance(v, ort.OrtValue) for v in (encoded.annotations, encoded.keys, encoded.mask,
                                                      encoded.init_state))
    keep = np.array([2, 0], dtype=np.int64)

    def no_host_copy(*args, **kwargs):
        raise AssertionError("select copied the encoder outputs through the host")

    with monkeypatch.context() as patch:
        patch.setattr(ort.OrtValue, "numpy", no_host_copy)
        patch.setattr(ort.OrtValue, "ortvalue_from_numpy", no_host_copy)
        kept = model.select(model.expand(encoded, 4), keep)
    expected = plain.select(plain.expand(want, 4), keep)
    assert kept.repeats == 4
    for name in ("annotations", "keys", "mask", "init_state"):
        np.testing.assert_array_equal(getattr(kept, name).numpy(), getattr(expected, name))


@pytest.mark.slow
def test_corrupt_graph_with_matching_hashes_is_a_bundle_error_naming_the_file(tiny_bundle, tmp_path):
    broken = shutil.copytree(tiny_bundle, tmp_path / "broken")
    (broken / "decoder_step.onnx").write_bytes(b"\x00not an onnx graph\xff" * 64)
    bundle = load_bundle(broken, verify_hashes=False)
    with pytest.raises(BundleError, match="cannot load graph decoder_step.onnx: "):
        OrtStepModel.from_bundle(bundle, "cpu")


@pytest.mark.slow
@pytest.mark.skipif(CUDA in ort.get_available_providers(), reason="this host has CUDA")
def test_cuda_silently_falling_back_to_cpu_is_a_provider_error(tiny_bundle):
    bundle = load_bundle(tiny_bundle)
    with warnings.catch_warnings():  # ONNX Runtime only warns that CUDA is not available
        warnings.simplefilter("ignore")
        session = ort.InferenceSession(str(bundle.graph_path("decoder_step")), providers=[CUDA, CPU])
    assert session.get_providers()[0] == CPU
    with pytest.raises(ProviderError, match="provider 'cuda' requested but ONNX Runtime runs CPUExecutionProvider"):
        check_provider("cuda", session)
    assert check_provider("auto", session) == CPU
    assert check_provider("cpu", session) == CPU
    with pytest.raises(ProviderError):  # refused before any session, not wrapped as a bundle error
        OrtStepModel.from_bundle(bundle, "cuda")


@pytest.mark.slow
def test_thread_counts_reach_onnx_runtime(tiny_bundle):
    bundle = load_bundle(tiny_bundle)
    three = OrtStepModel.from_bundle(bundle, "cpu", threads=3)
    assert [s.get_session_options().intra_op_num_threads for s in (three.encoder, three.decoder)] == [3, 3]
    default = OrtStepModel.from_bundle(bundle, "cpu", threads=0)
    assert [s.get_session_options().intra_op_num_threads for s in (default.encoder, default.decoder)] == [0, 0]


@pytest.mark.slow
@pytest.mark.parametrize("io_binding", [False, True])
def test_rows_at_their_length_limit_are_scored_from_eos_alone_as_over_the_whole_vocabulary(tiny_bundle, io_binding):
    """The GRU family: a step where rows must end returns each row's eos log-probability beside the
    top-k (``step(eos=True)``) rather than every row's whole vocabulary; the beams are the same."""
    from worker.engine.search import EVERY, SearchOptions, beam_search

    bundle = load_bundle(tiny_bundle)
    apart = OrtStepModel.from_bundle(bundle, "cpu", io_binding=io_binding)
    whole = OrtStepModel.from_bundle(bundle, "cpu", io_binding=io_binding)
    whole.eos_scores = False
    assert apart.topk >= 2 * 4 + 4, "the tiny bundle's step graph must offer a top-k for this test"
    asked_apart, asked_whole = record_asked(apart), record_asked(whole)
    sources = [[5, 6, 7, 3], [8, 3], [9, 10, 11, 12, 13, 3], [14, 3], [15, 16, 17, 5, 6, 7, 8, 3]]
    for options in (SearchOptions(beam=4, n_best=3, max_len_a=0.5, max_len_b=1),
                    SearchOptions(beam=4, max_len_a=0.0, max_len_b=3, free_forced_eos=True, min_len=5)):
        assert_same_beams(beam_search(apart, sources, options), beam_search(whole, sources, options))
    assert EVERY in asked_whole and EVERY not in asked_apart


@pytest.mark.slow
def test_the_shipped_encoder_loaded_for_cuda_fuses_its_norms_and_decodes_as_the_file_does(monkeypatch):
    """The shipped hybrid's Transformer encoder, loaded as for CUDA (``fuse_skip_layer_norms``: each
    residual add and LayerNorm one kernel) and run here on the CPU provider: every residual sum's
    LayerNorm fused, and the same beams as the file gives (the GRU step graph has no LayerNorm)."""
    import onnx
    import sentencepiece as spm

    from worker.engine import ort_model
    from worker.engine.search import beam_search

    from .conftest import REPO_ROOT

    bundle = load_bundle(REPO_ROOT / "models" / "en-de")
    proto = onnx.load(str(bundle.graph_path("encoder")))
    norms = sum(node.op_type == "LayerNormalization" for node in proto.graph.node)
    # all but the first, whose sum is of embeddings [B, S, D] and positions [S, D] (a broadcast)
    assert norms >= 4 and ort_model.fuse_skip_layer_norms(proto) == norms - 1
    plain = OrtStepModel.from_bundle(bundle, "cpu", threads=1)
    fused_counts = []
    real = ort_model.fuse_skip_layer_norms
    monkeypatch.setattr(ort_model, "fuse_skip_layer_norms", lambda p: fused_counts.append(real(p)) or fused_counts[-1])
    monkeypatch.setattr(ort_model, "on_cuda", lambda providers: True)  # load as for CUDA, run on the CPU
    fused = OrtStepModel.from_bundle(bundle, "cpu", threads=1)
    assert fused_counts == [norms - 1, 0]  # the encoder's; none in the step graph
    sp = spm.SentencePieceProcessor(model_file=str(bundle.vocab_path("source")))
    lines = ["The committee will meet again on Tuesday to discuss the budget.", "Where is the station?",
             "Please restart the server after installing the update.", "She bought three apples and a pear."]
    sources = [[*sp.encode(line), bundle.special_ids.eos] for line in lines]
    options = SearchOptions(beam=5, n_best=2, max_len_a=1.5, max_len_b=10)
    assert_same_beams(beam_search(fused, sources, options), beam_search(plain, sources, options), score_tol=1e-4)


@pytest.mark.parametrize("left, right, fused", [
    (["N", 8], ["N", 8], 1),  # an imported step's rows
    (["B", "S", 8], ["B", "S", 8], 1),  # an encoder's
    (["B", "R", 1, 8], ["B", "R", 1, 8], 0),  # a step exported before, with its size-1 axis (the kernel takes 2 or 3)
    (["B", "S", 8], ["S", 8], 0),  # embeddings and positions: a broadcast
    (["B", "S", 8], [1, "S", 8], 0),  # a broadcast over a size-1 axis
    (None, ["N", 8], 0),  # a sum of unknown shape
])
def test_only_plain_residual_sums_fuse_into_skip_layer_norms_and_compute_as_before(left, right, fused):
    """``fuse_skip_layer_norms`` takes a sum and its LayerNorm only where the kernel runs the sum as
    it stands; what it fuses computes what the graph computed, and a graph where nothing fuses is
    left byte for byte as it was."""
    from onnx import TensorProto, helper, numpy_helper

    from worker.engine.ort_model import fuse_skip_layer_norms

    rng = np.random.default_rng(3)
    scale, bias = rng.standard_normal(8).astype(np.float32), rng.standard_normal(8).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Add", ["left", "right"], ["sum"]),
         helper.make_node("LayerNormalization", ["sum", "scale", "bias"], ["out"], axis=-1, epsilon=1e-5)],
        "residual",
        [helper.make_tensor_value_info("left", TensorProto.FLOAT, left),
         helper.make_tensor_value_info("right", TensorProto.FLOAT, right)],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(scale, "scale"), numpy_helper.from_array(bias, "bias")])
    proto = helper.make_model(graph, ir_version=10, opset_imports=[helper.make_opsetid("", 18)])
    sizes = {"N": 6, "B": 2, "S": 3, "R": 3}
    feeds = {name: rng.standard_normal([sizes.get(d, d) for d in dims]).astype(np.float32)
             for name, dims in (("left", left or right), ("right", right))}
    before = proto.SerializeToString()
    want = ort.InferenceSession(before, providers=[CPU]).run(None, feeds)[0]
    assert fuse_skip_layer_norms(proto) == fused
    assert fused or proto.SerializeToString() == before
    assert sum(node.op_type == "SkipLayerNormalization" for node in proto.graph.node) == fused
    got = ort.InferenceSession(proto.SerializeToString(), providers=[CPU]).run(None, feeds)[0]
    assert np.abs(want - got).max() < 1e-5


def test_folding_the_reorder_refuses_graphs_it_cannot_rewrite_and_names_why():
    from onnx import TensorProto, helper

    from worker.engine.ort_model import StateRows, fold_reorder_into

    def graph(state_shape, opset: int = 18):
        inputs = [helper.make_tensor_value_info("prev_ids", TensorProto.INT64, ["b", "r"]),
                  helper.make_tensor_value_info("self_keys.0", TensorProto.FLOAT, state_shape)]
        nodes = [helper.make_node("Identity", ["self_keys.0"], ["out"])]
        body = helper.make_graph(nodes, "g", inputs, [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)],
                                 value_info=[helper.make_tensor_value_info("self_keys.0", TensorProto.FLOAT,
                                                                           state_shape)])
        return helper.make_model(body, opset_imports=[helper.make_opsetid("", opset)])

    grouped = StateRows("self", grouped_by="prev_ids")
    with pytest.raises(BundleError, match="no input 'beams'"):
        fold_reorder_into(graph(["b", "r", 2, "t", 3]), StateRows("self", grouped_by="beams"))
    with pytest.raises(BundleError, match=r"\['self_keys.0'\] declare no shape"):
        fold_reorder_into(graph(None), grouped)
    with pytest.raises(BundleError, match="opset 13 is older than 14"):
        fold_reorder_into(graph(["b", "r", 2, "t", 3], opset=13), grouped)
    proto = graph(["b", "r", 2, "t", 3])
    assert fold_reorder_into(proto, grouped) == 1
    assert not proto.graph.value_info  # the input's former 5-D shape goes with it
    session = ort.InferenceSession(proto.SerializeToString(), providers=[CPU])
    cache = np.arange(5 * 2 * 4 * 3, dtype=np.float32).reshape(5, 2, 4, 3)  # 5 rows the last step wrote
    index = np.array([4, 4, 0, 1, 2, 3], dtype=np.int64)
    out, = session.run(None, {"prev_ids": np.zeros((3, 2), dtype=np.int64), "self_keys.0": cache,
                              "state_rows": index})
    np.testing.assert_array_equal(out, cache[index].reshape(3, 2, 2, 4, 3))
