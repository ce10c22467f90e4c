"""``train_bundle_head``: give a bundle made by ``nmt import`` an alignment head of its own.

    bundle + its model directory -> the directory checked to be the bundle's model -> pairs sampled
    from --src/--tgt -> ``training.aligner_training.head_from_pairs`` over the frozen model
    (``export.marian.aligner``) -> aligner.onnx checked against torch -> grafted into the bundle

The translation graphs are not touched (``export.graft_aligner.install_head``): translations and
every recorded score stay as they are; forced alignment and markup placement use the head.
"""
from __future__ import annotations

import json
import logging
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Callable

import numpy as np
import torch

from training.aligner import AlignerConfig, AlignmentHead
from training.aligner_options import AlignerTrainConfig
from training.aligner_training import head_from_pairs, sample_streams
from training.corpus import iter_parallel
from worker.engine.bundle import TRANSFORMER, Bundle, BundleError, load_bundle, sha256_file, transformer_interface

from ..exporter import ALIGNER_TRAINING_KEYS
from ..graft_aligner import install_head
from ..graphs import EXAMPLE_LENGTHS, EXAMPLE_TARGET_LENGTHS, aligner_outputs, export_head
from ..parity import head_parity
from .aligner import MarianFrozen, head_dims, head_inputs
from .graphs import example_source
from .model_dir import read_model_dir
from .source import ModelSource
from .torch_model import EncoderGraph, MarianModel, StepGraph

log = logging.getLogger(__name__)

# How far the bundle's graphs may be from the model directory's weights on a probe batch (relative
# RMS difference, ``probe_difference``): fp32 graphs are within about 1e-6 of their model, int8 ones
# drift by quantization; another model's weights are off by order 1.
SAME_MODEL_TOLERANCE = {"fp32": 1e-3, "int8": 0.25, "fp16": 0.05}


def bundle_model(source: ModelSource, bundle: Bundle) -> MarianModel:
    """The torch model of ``source`` with the bundle's alignment layer and heads (manifest ``alignment``)."""
    alignment = bundle.manifest.get("alignment") or {}
    heads = alignment.get("heads", "all")
    layer = int(alignment.get("layer", max(0, source.spec.decoder_layers - 2)))
    return MarianModel(source, layer, () if heads == "all" else tuple(heads)).eval()


def check_same_model(source: ModelSource, model: MarianModel, bundle: Bundle) -> None:
    """``BundleError`` (one line) unless ``source`` is the model the bundle was imported from: the
    same architecture, SentencePiece models and vocabularies, and on a probe batch the bundle's
    encoder output and first-step log-probabilities equal to the model's (the weights)."""
    def refuse(why: str) -> BundleError:
        return BundleError(f"{source.path} is not the model of {bundle.path}: {why}")

    manifest = bundle.manifest
    if manifest.get("model_config") != asdict(source.spec):
        raise refuse("the architecture or special ids differ (manifest model_config)")
    for side, spm_file in (("source", source.source_spm), ("target", source.target_spm)):
        if sha256_file(spm_file) != manifest["files"].get(manifest["vocab"][side]["file"]):
            raise refuse(f"the {side} SentencePiece model differs")
        ids = bundle.vocab_ids_path(side)
        table = getattr(source.vocabularies, side)
        if ids is None or json.loads(ids.read_text(encoding="utf-8")) != dict(table):
            raise refuse(f"the {side} vocabulary differs")
    difference = probe_difference(model, bundle)
    tolerance = SAME_MODEL_TOLERANCE.get(bundle.precision, SAME_MODEL_TOLERANCE["fp32"])
    if difference > tolerance:
        raise refuse(f"its weights compute other values (the bundle's graphs differ from them by {difference:.3g}, "
                     f"relative, on a probe batch; {bundle.precision} graphs stay within {tolerance:g})")


def probe_difference(model: MarianModel, bundle: Bundle) -> float:
    """How far the bundle's graphs are from ``model`` on random sources: the larger relative RMS
    difference, |torch - ONNX| / |torch| over all values, of the encoder's memory and of one decoder
    step's log-probabilities from the decoder start (each graph fed the same inputs as torch). A
    relative measure, so that int8 graphs (whose rounding moves single values a lot) are told from
    another model's."""
    from worker.engine.ort_model import CPU, load_session, session_options

    spec = model.spec
    names = transformer_interface(spec.decoder_layers)
    encoder = load_session(bundle.graph_path("encoder"), session_options(1), [CPU])
    step = load_session(bundle.graph_path("decoder_step"), session_options(1), [CPU])
    src, lengths = example_source(model, (9, 5, 2), torch.Generator().manual_seed(5))
    mask = torch.arange(src.shape[1])[None, :] < lengths[:, None]
    prev = torch.full((len(lengths), 1), spec.decoder_start_id, dtype=torch.long)
    empty = [torch.zeros(len(lengths), 1, spec.heads, 0, spec.head_dim)] * (2 * spec.decoder_layers)
    with torch.no_grad():
        expected = EncoderGraph(model)(src, lengths)
        log_probs = StepGraph(model)(prev, mask, *expected[1:], *empty)[0].numpy()
    memory = encoder.run(["memory"], {"src_ids": src.numpy(), "src_lengths": lengths.numpy()})[0]
    feeds = dict(zip(names["step_inputs"], (x.numpy() for x in (prev, mask, *expected[1:], *empty))))
    got = step.run(["log_probs"], feeds)[0]
    real = mask.numpy()  # memory past a sentence's length is never read

    def relative(want: np.ndarray, have: np.ndarray) -> float:
        return float(np.linalg.norm(want - have) / max(np.linalg.norm(want), 1e-12))

    return max(relative(expected[0].numpy()[real], memory[real]), relative(log_probs, got))


def random_inputs(model: MarianModel, lengths, target_lengths, seed: int = 0) -> tuple[torch.Tensor, ...]:
    """The head's inputs for random sources of ``lengths`` and random targets of ``target_lengths``
    tokens (eos included), from the model teacher-forced (``parity.head_parity``'s ``inputs_for``)."""
    spec = model.spec
    generator = torch.Generator().manual_seed(seed)

    def draw(n: int, vocab: int) -> list[int]:
        ids = torch.randint(0, vocab, (n,), generator=generator).tolist()
        return [spec.unk_id if i in (spec.pad_id, spec.eos_id) else i for i in ids]

    sources = [[*draw(n - 1, spec.source_vocab_size), spec.eos_id] for n in lengths]
    return head_inputs(model, sources, [draw(n - 1, spec.target_vocab_size) for n in target_lengths])


def export_checked(model: MarianModel, head: AlignmentHead, out_dir: Path, head_cfg: AlignerConfig, report: dict,
                   tolerance: float = 1e-4) -> dict:
    """Write ``aligner.onnx`` into ``out_dir`` and check it against torch (``parity.head_parity``):
    its description as ``export.exporter._aligner`` gives it (file, outputs, parity, how trained)."""
    from worker.engine.ort_model import CPU, load_session, session_options

    head = head.eval()
    path = export_head(head, random_inputs(model, EXAMPLE_LENGTHS, EXAMPLE_TARGET_LENGTHS), out_dir)
    session = load_session(path, session_options(), [CPU])
    diff = head_parity(head, session, lambda *args: random_inputs(model, *args), tolerance)
    log.info("alignment head parity: max abs diff %.2e", diff)
    return {"file": path.name, "outputs": list(aligner_outputs(head)), "graph_max_abs_diff": diff,
            "config": asdict(head_cfg), "training": {k: report[k] for k in ALIGNER_TRAINING_KEYS if k in report}}


def train_bundle_head(bundle_dir: Path, model_dir: Path, src: Path, tgt: Path, cfg: AlignerTrainConfig,
                      head_cfg: AlignerConfig = AlignerConfig(), say: Callable[[str], None] = log.info
                      ) -> tuple[AlignmentHead, dict]:
    """Train an alignment head for the imported bundle ``bundle_dir`` on up to ``cfg.pairs`` pairs
    of ``src``/``tgt`` (line-aligned text files), the model read from ``model_dir`` (which must be the
    bundle's: ``check_same_model``), and graft it into the bundle. Returns the head (eval mode) and
    the training report with its parity and the bundle's new signature. ``BundleError`` for a bundle
    that is not an imported one or a model that is not its own (the bundle left as it was)."""
    bundle = load_bundle(bundle_dir)
    if bundle.family != TRANSFORMER:
        raise BundleError(f"{bundle_dir} is not an imported Transformer bundle: train its model's head with "
                          "nmt train-aligner --checkpoint and export it")
    source = read_model_dir(model_dir)
    model = bundle_model(source, bundle)
    check_same_model(source, model, bundle)
    pairs = sample_streams([(str(src), 1.0, iter_parallel(Path(src), Path(tgt)))], cfg.pairs, cfg.seed)
    head, report = head_from_pairs(MarianFrozen(model, source), pairs, cfg, head_cfg, say)
    with tempfile.TemporaryDirectory(dir=bundle_dir, prefix=".aligner.") as staging:
        aligner = export_checked(model, head, Path(staging), head_cfg, report)
        signature = install_head(load_bundle(bundle_dir), Path(staging), aligner, head_dims(model))
    return head, {**report, "graph_max_abs_diff": aligner["graph_max_abs_diff"], "signature": signature}
