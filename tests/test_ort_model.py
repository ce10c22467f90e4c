"""OrtStepModel over a tiny bundle: the state reordered where it lives under IO binding, broken
graphs and silent CPU fallback as clear errors, thread counts reaching ONNX Runtime."""
from __future__ import annotations

import shutil
import warnings

import numpy as np
import onnxruntime as ort
import pytest

from worker.engine.bundle import BundleError, load_bundle
from worker.engine.ort_model import CPU, CUDA, OrtStepModel, ProviderError, check_provider, gather_state_graph
from worker.engine.search import SearchOptions, search_in_batches


@pytest.mark.parametrize("elem_type, dtype", [("tensor(float)", np.float32), ("tensor(float16)", np.float16)])
def test_gather_state_graph_passes_the_checker_and_gathers_rows(elem_type, dtype):
    import onnx

    model = gather_state_graph(elem_type)
    onnx.checker.check_model(onnx.load_from_string(model), full_check=True)
    session = ort.InferenceSession(model, providers=[CPU])
    state = np.arange(2 * 5 * 3, dtype=dtype).reshape(2, 5, 3)
    index = np.array([4, 0, 0], dtype=np.int64)
    np.testing.assert_array_equal(session.run(None, {"state": state, "index": index})[0], state[:, index])


@pytest.mark.slow
def test_io_binding_decodes_token_for_token_and_score_for_score_like_a_plain_run(tiny_bundle):
    bundle = load_bundle(tiny_bundle)
    plain = OrtStepModel.from_bundle(bundle, "cpu", io_binding=False)
    bound = OrtStepModel.from_bundle(bundle, "cpu", io_binding=True)
    sources = [[5, 6, 7, 3], [8, 3], [9, 10, 11, 12, 13, 3], [14, 3], [15, 16, 17, 5, 6, 7, 8, 3]]
    options = SearchOptions(beam=4, n_best=4)
    for a, b in zip(search_in_batches(plain, sources, options), search_in_batches(bound, sources, options)):
        assert [h.tokens for h in a] == [h.tokens for h in b]
        assert [h.score for h in a] == pytest.approx([h.score for h in b], rel=0, abs=1e-6)


@pytest.mark.slow
def test_reorder_under_io_binding_gathers_the_state_without_a_host_copy(tiny_bundle, monkeypatch):
    model = OrtStepModel.from_bundle(load_bundle(tiny_bundle), "cpu", io_binding=True)
    encoded = model.encode(np.array([[5, 6, 7, 3], [8, 9, 3, 0], [10, 3, 0, 0]]), np.array([4, 3, 2]))
    state = model.step(np.full(3, 2), model.initial_state(encoded), encoded).state  # float [L, 3, D]
    assert isinstance(state, ort.OrtValue)
    host_state = state.numpy()
    index = np.array([2, 0, 0, 1, 2], dtype=np.int64)

    def no_host_copy(*args, **kwargs):
        raise AssertionError("reorder copied the state through the host")

    with monkeypatch.context() as patch:
        patch.setattr(ort.OrtValue, "numpy", no_host_copy)
        patch.setattr(ort.OrtValue, "ortvalue_from_numpy", no_host_copy)
        reordered = model.reorder(state, index)
    assert isinstance(reordered, ort.OrtValue)
    assert reordered.device_name().lower() == "cpu"
    np.testing.assert_array_equal(reordered.numpy(), host_state[:, index])


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
