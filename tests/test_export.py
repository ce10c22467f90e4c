"""ONNX export: dynamic shapes, parity with torch (graphs, greedy and beam ids), lossy precisions,
and the bundle's atomic, non-overwriting write."""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

import numpy as np
import onnx
import pytest
import torch

from export.exporter import ExportOptions, export_bundle
from export.graphs import EXAMPLE_BEAM, EXAMPLE_LENGTHS, STACK_TRACE, declared_dims
from export.parity import PARITY_LENGTHS, ParityError, graph_parity, search_parity
from export.quantize import vector_products
from training.loading import load_model
from training.data import read_split
from worker.engine.bundle import load_bundle, verify_graphs
from worker.engine.ort_model import OrtStepModel

from .conftest import REPO_ROOT

pytestmark = pytest.mark.slow


def test_bundle_has_graphs_vocab_and_a_complete_manifest(tiny_bundle):
    bundle = load_bundle(tiny_bundle)
    verify_graphs(bundle)
    m = bundle.manifest
    assert (m["source_language"], m["target_language"], m["precision"]) == ("en", "de", "fp32")
    assert m["opset"] >= 17
    assert m["special_ids"] == {"pad": 0, "unk": 1, "bos": 2, "eos": 3}
    assert set(m["files"]) == {"encoder.onnx", "decoder_step.onnx", "spm.model", "casing.json.gz"}
    assert [i["name"] for i in m["graphs"]["decoder_step"]["inputs"]] == ["prev_ids", "state", "annotations", "keys", "src_mask"]
    assert [o["name"] for o in m["graphs"]["decoder_step"]["outputs"]] == [
        "log_probs", "new_state", "attention", "topk_log_probs", "topk_ids", "readout"]
    assert m["model_config"]["dec_layers"] == 2
    assert m["scores"]["valid_bleu"] >= 0 and "test_bleu" not in m["scores"]  # the toy corpus has no test split
    assert m["verification"]["search_parity"]["sentences"] == 200
    assert bundle.signature.startswith("en-de.fp32.")


def test_declared_output_shapes_are_symbolic(tiny_bundle):
    """The exporter declares GRU outputs with the example's length; the bundle must not."""
    bundle = load_bundle(tiny_bundle)
    enc = declared_dims(bundle.graph_path("encoder"))
    assert enc["annotations"][:2] == ["batch", "src_len"]
    assert enc["keys"][:2] == ["batch", "src_len"]
    assert enc["init_state"][1] == "batch"
    step = declared_dims(bundle.graph_path("decoder_step"))
    assert step["attention"] == ["rows", "src_len"]
    assert step["log_probs"][0] == "rows" and step["new_state"][1] == "rows"
    assert step["topk_ids"] == step["topk_log_probs"] == ["rows", "candidates"]
    for dims in [*enc.values(), *step.values()]:
        assert max(EXAMPLE_LENGTHS) not in dims and len(EXAMPLE_LENGTHS) * EXAMPLE_BEAM not in dims


def test_graphs_carry_no_stack_traces_of_the_exporting_machine(tiny_bundle):
    """A bundle's bytes (and signature) depend on what it computes, not on source paths and lines."""
    bundle = load_bundle(tiny_bundle)
    for name in ("encoder", "decoder_step"):
        proto = onnx.load(str(bundle.graph_path(name)))
        assert not [p for n in proto.graph.node for p in n.metadata_props if p.key == STACK_TRACE]
        assert b'File "' not in bundle.graph_path(name).read_bytes()


def test_graph_outputs_match_torch_on_unseen_padded_lengths(tiny_bundle, tiny_checkpoint):
    model = load_model(tiny_checkpoint).model
    diffs = graph_parity(model, OrtStepModel.from_bundle(load_bundle(tiny_bundle)), tolerance=1e-4)
    assert set(diffs) == {f"encoder.{o}" for o in ("annotations", "keys", "init_state")} | {
        f"decoder_step.{o}" for o in ("log_probs", "new_state", "attention", "topk_log_probs", "topk_values_sorted", "readout")}
    assert max(diffs.values()) <= 1e-4
    assert all(max(lengths) > 1 and lengths != EXAMPLE_LENGTHS for lengths in PARITY_LENGTHS)


def test_greedy_and_beam_ids_equal_torch_on_200_validation_sentences(tiny_bundle, tiny_checkpoint, toy_corpus):
    loaded = load_model(tiny_checkpoint)
    valid = read_split(toy_corpus, "val", loaded.config)
    sources = loaded.vocabs.encode_sources(valid.src)[:200]
    parity = search_parity(loaded.model, OrtStepModel.from_bundle(load_bundle(tiny_bundle)), sources, beam=4)
    assert parity.sentences == 200
    assert parity.greedy_equal == 200 and parity.beam_equal == 200


def test_parity_failure_names_the_output_and_the_difference(tiny_bundle, tiny_checkpoint):
    model = load_model(tiny_checkpoint).model
    with torch.no_grad():
        model.decoder.readout_proj.bias += 0.5  # the graphs no longer compute this model
    with pytest.raises(ParityError, match=r"ONNX output 'decoder_step\.readout' differs from torch by 0\.5 \(max abs"):
        graph_parity(model, OrtStepModel.from_bundle(load_bundle(tiny_bundle)))


def test_parity_holds_large_values_to_the_tolerance_relative_to_their_size():
    """A log-probability of -30 carries float32 rounding over 1e-4; one of -0.5 may not differ so."""
    from export.parity import _Differences

    expected = torch.tensor([[-30.0, -0.5]])
    diffs = _Differences()
    diffs.record("decoder_step.log_probs", expected, np.array([[-30.0002, -0.50005]], dtype=np.float32))
    assert diffs.checked(1e-4)["decoder_step.log_probs"] == pytest.approx(2e-4, rel=0.05)
    diffs.record("decoder_step.log_probs", expected, np.array([[-30.0, -0.5002]], dtype=np.float32))
    with pytest.raises(ParityError, match=r"'decoder_step\.log_probs' differs from torch by 0\.0002 \(max abs; 0\.0002 relative"):
        diffs.checked(1e-4)


def test_existing_bundle_is_kept_without_force_and_replaced_with_it(tiny_checkpoint, toy_corpus, tmp_path):
    out = tmp_path / "b"
    options = ExportOptions(data_dir=str(toy_corpus), parity_sentences=20)
    first = export_bundle(tiny_checkpoint, out, options)
    before = (out / "manifest.json").read_text()
    with pytest.raises(FileExistsError, match="already exists; pass --force"):
        export_bundle(tiny_checkpoint, out, options)
    assert (out / "manifest.json").read_text() == before
    second = export_bundle(tiny_checkpoint, out, ExportOptions(data_dir=str(toy_corpus), parity_sentences=20, force=True))
    assert second.signature == first.signature  # same model, same files
    load_bundle(out)
    assert [p.name for p in tmp_path.iterdir()] == ["b"]  # no staging or backup directories left


def test_failed_export_leaves_no_partial_bundle(tiny_checkpoint, tmp_path):
    with pytest.raises(ValueError, match="corpus file not found"):
        export_bundle(tiny_checkpoint, tmp_path / "b", ExportOptions(data_dir=str(tmp_path / "no-data")))
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("precision", ["int8", "fp16"])
def test_lossy_precisions_report_bleu_delta_and_what_changed(tiny_checkpoint, toy_corpus, tmp_path, precision):
    report = export_bundle(tiny_checkpoint, tmp_path / precision,
                           ExportOptions(precision=precision, data_dir=str(toy_corpus), parity_sentences=20))
    bundle = load_bundle(tmp_path / precision)
    verify_graphs(bundle)
    assert bundle.precision == precision
    step = declared_dims(bundle.graph_path("decoder_step"))
    assert step["topk_ids"] == step["topk_log_probs"] == ["rows", "candidates"]  # not the default count
    assert f"valid_bleu_{precision}" in report.scores and "valid_bleu_delta" in report.scores
    encoder_change = report.precision_change["encoder"]
    if precision == "int8":
        assert report.scores["valid_bleu_delta"] >= -0.5
        assert encoder_change["MatMulInteger"]["after"] > 0
        assert "GRU" not in encoder_change  # no GRU kernel for int8: GRU nodes stay fp32
        assert encoder_change["weights:int8"]["after"] > 0
        # The attention's v_a (one output column) stays an fp32 MatMul.
        assert vector_products(onnx.load(str(bundle.graph_path("decoder_step"))))
        # The quantized step graph is the folded one, checked against torch before quantizing.
        folded = bundle.manifest["verification"]["int8_source_step_graph"]
        assert folded["embedding_products_folded"] and folded["graph_max_abs_diff"] <= 1e-4
    else:
        assert encoder_change["weights:float16"]["after"] > 0
        assert encoder_change["weights:float"]["after"] == 0
    # The lossy graphs decode: token ids in range.
    model = OrtStepModel.from_bundle(bundle)
    encoded = model.encode(np.array([[5, 6, 7, 3]]), np.array([4]))
    scores = model.step(np.array([2]), encoded.init_state, encoded, candidates=14)
    assert scores.ids.shape == scores.log_probs.shape and np.isfinite(scores.log_probs.astype(np.float32)).all()
    np.testing.assert_allclose(scores.attention.astype(np.float32).sum(-1), 1.0, atol=1e-2)


def test_cli_export_and_python_m_export(tiny_checkpoint, toy_corpus, tmp_path):
    args = [str(tiny_checkpoint), "--out", str(tmp_path / "b"), "--data-dir", str(toy_corpus),
            "--parity-sentences", "10", "--json"]
    done = subprocess.run([sys.executable, "-m", "export", *args], capture_output=True, text=True, cwd=REPO_ROOT, timeout=600)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["search_parity"]["greedy_equal"] == 10
    again = subprocess.run([sys.executable, "-m", "nmt", "export", *args], capture_output=True, text=True, cwd=REPO_ROOT, timeout=600)
    assert again.returncode == 2 and "already exists; pass --force" in again.stderr


@pytest.mark.parametrize("layers, attention, hidden", [(1, "additive", 20), (2, "general", 20), (1, "dot", 24)])
def test_folded_step_graph_computes_the_decoder_step(layers, attention, hidden):
    """The int8 bundles' source graph: embedding products looked up, not multiplied; same outputs."""
    from export.graphs import DecoderStepGraph, FoldedDecoderStepGraph, example_inputs
    from training.config import ModelConfig
    from training.model import Seq2Seq

    torch.manual_seed(layers)
    config = ModelConfig(emb_dim=16, enc_hidden=12, dec_hidden=hidden, att_dim=10, attention=attention,
                         dec_layers=layers, readout_dim=16, dropout=0.0, emb_dropout=0.0)
    model = Seq2Seq(config, 50, 60).eval()
    _, step_args = example_inputs(model)
    with torch.no_grad():
        plain, folded = DecoderStepGraph(model)(*step_args), FoldedDecoderStepGraph(model)(*step_args)
    for expected, actual in zip(plain, folded):
        torch.testing.assert_close(actual, expected, rtol=0, atol=1e-5)


def test_a_checkpoint_alone_exports_without_its_corpus(tiny_checkpoint, tmp_path):
    """With the training corpus gone and no --data-dir, export checks parity on the validation
    sample the checkpoint carries; test BLEU is then simply not measured."""
    raw = torch.load(tiny_checkpoint, map_location="cpu", weights_only=True)
    assert len(raw["valid_sample"]["src"]) == len(raw["valid_sample"]["tgt"]) > 0
    raw["config"]["data"]["dir"] = str(tmp_path / "moved-away")
    moved = tmp_path / "alone.pt"
    torch.save(raw, moved)
    report = export_bundle(moved, tmp_path / "b", ExportOptions(parity_sentences=20))
    assert report.scores["valid_set"] == "checkpoint validation sample"
    assert report.search_parity["sentences"] == min(20, len(raw["valid_sample"]["src"]))
    assert "test_bleu" not in report.scores
    verify_graphs(load_bundle(tmp_path / "b"))


def test_bundle_directory_is_readable_by_other_users(tiny_bundle):
    """The bundle is built in a mkdtemp directory (0700) and renamed: its mode must be a plain
    directory's (0777 less the umask), or workers running as another user cannot read it."""
    umask = os.umask(0o022)
    os.umask(umask)
    assert stat.S_IMODE(tiny_bundle.stat().st_mode) == 0o777 & ~umask


def test_manifest_test_scores_are_what_nmt_eval_reports(tiny_checkpoint, toy_corpus, tmp_path):
    """A bundle's test score is measured as nmt eval measures it (text handling on, the bundle's
    defaults): the manifest and nmt eval on the same file agree to the last digit, and
    nmt eval --record stores a set's score the same way."""
    import shutil

    from nmt.cli import main

    data = tmp_path / "data"
    shutil.copytree(toy_corpus, data)
    for side in ("en", "de"):
        lines = (data / f"val.{side}").read_text(encoding="utf-8").splitlines()[:40]
        (data / f"test_2016_flickr.{side}").write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "b"
    report = export_bundle(tiny_checkpoint, out, ExportOptions(data_dir=str(data), parity_sentences=20))
    manifest = json.loads((out / "manifest.json").read_text())
    entry = manifest["scores"]["test"]["test_2016_flickr"]
    assert report.scores["test"]["test_2016_flickr"] == entry and manifest["scores"]["test_bleu"] == entry["bleu"]
    assert entry["sentences"] == 40 and entry["scored_as"].startswith("nmt eval")

    def nmt_eval(*extra: str) -> dict:
        proc = subprocess.run([sys.executable, "-m", "nmt", "eval", "--bundle", str(out), "--src", str(data / "test_2016_flickr.en"),
                               "--ref", str(data / "test_2016_flickr.de"), "--json", *extra], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        return json.loads([line for line in proc.stdout.splitlines() if line.startswith("{")][-1])

    measured = nmt_eval()
    assert (measured["bleu"], measured["chrf"]) == (entry["bleu"], entry["chrf"])

    assert main(["eval", "--bundle", str(out), "--src", str(data / "val.en"), "--ref", str(data / "val.de"),
                 "--record", "val"]) == 0
    recorded = json.loads((out / "manifest.json").read_text())["scores"]
    assert recorded["test"]["val"]["sentences"] == len((data / "val.en").read_text().splitlines())
    assert recorded["test_set"] == "test_2016_flickr" and recorded["test"]["test_2016_flickr"] == entry
    verify_graphs(load_bundle(out))  # the signature names the files: it still holds
    assert main(["eval", "--bundle", str(out), "--src", str(data / "val.en"), "--ref", str(data / "val.de"),
                 "--record", "val", "--beam", "2"]) == 2
