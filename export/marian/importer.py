"""``import_model``: a Marian model directory -> a signed, verified bundle of the Transformer family.

(1) read the directory (``source``), (2) rebuild the model in torch and check it against
``transformers.MarianMTModel`` on the same weights where transformers is installed, (3) export the
encoder and the decoder step, (4) check the graphs against torch, (5) int8 on request, judged by
agreement with fp32, (6) write vocabularies, manifest and signature into a staging directory
moved into place only when everything passed: a failed import leaves no bundle behind. With a
shortlist corpus, the lexical shortlist is built first (``shortlist``) and signed with the rest.
"""
from __future__ import annotations

import json
import shutil
import tempfile
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from worker.engine.bundle import (
    FAMILY,
    FORMAT,
    FORMAT_VERSION,
    SHORTLIST,
    TOPK_INPUT,
    TRANSFORMER,
    VOCAB_IDS,
    sha256_file,
    signature_for,
    tensor_kind,
    transformer_interface,
    write_bundle_atomically,
)

from ..graphs import OPSET
from ..shortlist import ShortlistTable
from .model_dir import read_model_dir
from .shortlist import ShortlistCorpus, build_shortlist, write_into
from .source import ModelSource
from .spec import ImportModelError


@dataclass(frozen=True)
class ImportOptions:
    int8: bool = False
    force: bool = False
    name: str | None = None
    source_language: str | None = None
    target_language: str | None = None
    alignment_layer: int | None = None  # decoder layer whose cross-attention gives alignments (None: see below)
    alignment_heads: tuple[int, ...] = ()  # () = every head, averaged
    tolerance: float = 1e-4
    target_tokens: dict[str, str] = field(default_factory=dict)  # language -> target token, e.g. {"de": ">>deu<<"}
    shortlist: ShortlistCorpus | None = None  # build a lexical shortlist from these sentence pairs


@dataclass(frozen=True)
class ImportReport:
    bundle: Path
    signature: str
    seconds: float
    graph_max_abs_diff: dict[str, float]
    reference_max_abs_diff: float | None
    int8: dict[str, Any] | None
    shortlist: dict[str, Any] | None = None  # the manifest's shortlist entry


def default_alignment_layer(source: ModelSource) -> int:
    """A layer trained with guided alignment where the model says so (Marian's convention: its
    ``transformer-guided-alignment-layer``); otherwise the penultimate decoder layer, whose
    cross-attention averaged over heads aligns best in Garg et al. 2019 (arXiv:1909.02074)."""
    if source.alignment_layer is not None:
        return source.alignment_layer
    return max(0, source.spec.decoder_layers - 2)


def import_model(model_dir: str | Path, out: str | Path, options: ImportOptions = ImportOptions()) -> ImportReport:
    started = time.perf_counter()
    out = Path(out)
    if out.exists() and not options.force:
        raise ImportModelError(f"{out} already exists; pass --force to replace it")
    source = read_model_dir(model_dir)
    source_language = options.source_language or source.source_language
    target_language = options.target_language or source.target_language
    if not source_language or not target_language:
        raise ImportModelError(f"{source.path}: the model does not say its languages (tokenizer_config.json "
                               "source_lang/target_lang): pass --src and --tgt")
    for language, token in options.target_tokens.items():
        if token not in source.vocabularies.source:
            raise ImportModelError(f"{source.path}: target token {token!r} (for {language}) is not in the source "
                                   "vocabulary")
    table = build_shortlist(source, options.shortlist) if options.shortlist else None  # bad corpus: fail early
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.staging.", dir=out.parent))
    try:
        report = _build(source, staging, out, options, source_language, target_language, started, table)
        write_bundle_atomically(staging, out, options.force)
        return report
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _build(source: ModelSource, staging: Path, out: Path, options: ImportOptions, source_language: str,
           target_language: str, started: float, table: ShortlistTable | None = None) -> ImportReport:
    import onnxruntime as ort

    from .graphs import export_graphs, graph_parity
    from .torch_model import MarianModel

    spec = source.spec
    layer = default_alignment_layer(source) if options.alignment_layer is None else options.alignment_layer
    if not 0 <= layer < spec.decoder_layers or any(not 0 <= h < spec.heads for h in options.alignment_heads):
        raise ImportModelError(f"alignment layer {layer} / heads {list(options.alignment_heads)} outside the model's "
                               f"{spec.decoder_layers} decoder layers and {spec.heads} heads")
    model = MarianModel(source, layer, options.alignment_heads).eval()
    reference = reference_difference(source, model)
    fp32_dir = staging / "fp32" if options.int8 else staging
    fp32_dir.mkdir(exist_ok=True)
    paths = export_graphs(model, fp32_dir)
    session_options = ort.SessionOptions()
    session_options.log_severity_level = 3
    sessions = [ort.InferenceSession(str(paths[g]), session_options, providers=["CPUExecutionProvider"])
                for g in ("encoder", "decoder_step")]
    diffs = graph_parity(model, *sessions, tolerance=options.tolerance)
    int8 = None
    if options.int8:
        from ..quantize import quantize_int8

        for graph in ("encoder", "decoder_step"):
            quantize_int8(paths[graph], staging / paths[graph].name)
        int8 = int8_agreement(fp32_dir, staging, spec)
        shutil.rmtree(fp32_dir)
    files = _write_vocabularies(source, staging)
    shortlist = write_into(staging, table, options.shortlist) if table is not None else None
    manifest = _manifest(source, staging, out, options, files, diffs, reference, int8, layer,
                         source_language, target_language, shortlist)
    (staging / "manifest.json").write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    from worker.engine.bundle import load_bundle, verify_graphs

    verify_graphs(load_bundle(staging))
    return ImportReport(out, manifest["signature"], time.perf_counter() - started, diffs, reference, int8, shortlist)


def reference_difference(source: ModelSource, model, sentences: int = 4, steps: int = 6) -> float | None:
    """Max abs difference of teacher-forced log-probabilities between ``model`` and
    ``transformers.MarianMTModel`` built from the same directory (None when transformers is not
    installed or the directory is Marian's own release). Raises ``ImportModelError`` over 1e-3."""
    if source.form != "huggingface":
        return None
    try:
        import torch
        from transformers import MarianMTModel
    except ImportError:
        return None
    from .torch_model import EncoderGraph, StepGraph

    spec = source.spec
    reference = MarianMTModel.from_pretrained(str(source.path)).eval()
    generator = torch.Generator().manual_seed(2)
    src = torch.randint(0, spec.source_vocab_size - 1, (sentences, 9), generator=generator)
    src[:, -1] = spec.eos_id
    targets = torch.randint(0, spec.target_vocab_size - 1, (sentences, steps), generator=generator)
    targets[:, 0] = spec.decoder_start_id
    with torch.no_grad():
        expected = torch.log_softmax(reference(input_ids=src, decoder_input_ids=targets).logits, -1)
        cross = EncoderGraph(model)(src, torch.full((sentences,), src.shape[1]))[1:]
        cache = [torch.zeros(sentences, 1, spec.heads, 0, spec.head_dim)] * (2 * spec.decoder_layers)
        mask = torch.ones(src.shape, dtype=torch.bool)
        step = StepGraph(model)
        worst = 0.0
        for t in range(steps):
            outputs = step(targets[:, t:t + 1], mask, *cross, *cache)
            log_probs, cache = outputs[0], list(outputs[5:])
            worst = max(worst, float((log_probs[:, 0] - expected[:, t]).abs().max()))
    if worst > 1e-3:
        raise ImportModelError(f"{source.path}: the rebuilt model differs from transformers' MarianMTModel by "
                               f"{worst:.3g} in log-probability: an unsupported setting in config.json?")
    return worst


def int8_agreement(fp32_dir: Path, int8_dir: Path, spec, sentences: int = 32) -> dict[str, Any]:
    """Greedy agreement of the int8 graphs with fp32 on random source sentences, and the mean
    difference of the chosen tokens' log-probabilities."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3
    rng = np.random.default_rng(3)
    src = rng.integers(0, spec.source_vocab_size - 1, (sentences, 12))
    src[:, -1] = spec.eos_id
    lengths = np.full(sentences, 12)
    names = transformer_interface(spec.decoder_layers)
    outputs = []
    for directory in (fp32_dir, int8_dir):
        encoder = ort.InferenceSession(str(directory / "encoder.onnx"), options, providers=["CPUExecutionProvider"])
        step = ort.InferenceSession(str(directory / "decoder_step.onnx"), options, providers=["CPUExecutionProvider"])
        cross = encoder.run(list(names["encoder_outputs"][1:]), {"src_ids": src, "src_lengths": lengths})
        empty = np.zeros((sentences, 1, spec.heads, 0, spec.head_dim), np.float32)
        cache = [empty] * (2 * spec.decoder_layers)
        prev = np.full((sentences, 1), spec.decoder_start_id)
        tokens, scores = [], []
        for _ in range(10):
            feeds = dict(zip(names["step_inputs"], [prev, np.ones(src.shape, bool), *cross, *cache]))
            log_probs, *cache = step.run(["log_probs", *names["step_outputs"][5:]], feeds)
            prev = log_probs.argmax(-1)
            tokens.append(prev[:, 0])
            scores.append(log_probs.max(-1)[:, 0])
        outputs.append((np.stack(tokens, 1), np.stack(scores, 1)))
    (fp32_tokens, fp32_scores), (int8_tokens, int8_scores) = outputs
    agree = (fp32_tokens == int8_tokens).all(1)
    return {"sentences": sentences, "greedy_equal": int(agree.sum()),
            "token_agreement": round(float((fp32_tokens == int8_tokens).mean()), 4),
            "first_token_score_delta": round(float(np.abs(fp32_scores[:, 0] - int8_scores[:, 0]).mean()), 5)}


def _write_vocabularies(source: ModelSource, staging: Path) -> dict[str, dict[str, str]]:
    """SentencePiece models and piece -> id tables into the bundle -> the manifest's vocab files."""
    shutil.copy(source.source_spm, staging / "source.spm")
    shutil.copy(source.target_spm, staging / "target.spm")
    tables = {"source": source.vocabularies.source, "target": source.vocabularies.target}
    names = {"source": "vocab.json", "target": "vocab.json"} if source.vocabularies.shared else \
        {"source": "vocab.source.json", "target": "vocab.target.json"}
    for side, name in names.items():
        (staging / name).write_text(json.dumps(tables[side], ensure_ascii=False, indent=0) + "\n", encoding="utf-8")
    return {side: {"file": f"{side}.spm", VOCAB_IDS: names[side]} for side in ("source", "target")}


def _manifest(source: ModelSource, staging: Path, out: Path, options: ImportOptions, vocab_files, diffs,
              reference, int8, layer: int, source_language: str, target_language: str,
              shortlist: dict[str, Any] | None = None) -> dict[str, Any]:
    spec = source.spec
    precision = "int8" if options.int8 else "fp32"
    cache = ["batch", "beam", spec.heads, "steps", spec.head_dim]
    cross = ["batch", spec.heads, "src_len", spec.head_dim]
    shapes = {
        "src_ids": ("int64", ["batch", "src_len"]), "src_lengths": ("int64", ["batch"]),
        "memory": ("float32", ["batch", "src_len", spec.d_model]), "cross": ("float32", cross),
        "prev_ids": ("int64", ["batch", "beam"]), "self": ("float32", cache), "new_self": ("float32", cache),
        "src_mask": ("bool", ["batch", "src_len"]),
        "log_probs": ("float32", ["batch", "beam", spec.target_vocab_size]),
        "attention": ("float32", ["batch", "beam", "src_len"]),
        "topk_log_probs": ("float32", ["batch", "beam", "candidates"]),
        "topk_ids": ("int64", ["batch", "beam", "candidates"]), "hidden": ("float32", ["batch", "beam", spec.d_model]),
    }
    names = transformer_interface(spec.decoder_layers)

    def io(names):
        return [{"name": n, "dtype": shapes[tensor_kind(n)][0], "shape": shapes[tensor_kind(n)][1]} for n in names]

    vocab_names = {entry[k] for entry in vocab_files.values() for k in ("file", VOCAB_IDS)}
    files = sorted({"encoder.onnx", "decoder_step.onnx", *vocab_names, *([shortlist["file"]] if shortlist else [])})
    generation = source.generation
    manifest = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "name": options.name or out.name,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        FAMILY: TRANSFORMER,
        "source_language": source_language,
        "target_language": target_language,
        "precision": precision,
        "opset": OPSET,
        # Marian starts the decoder from <pad> and never emits it: bos is the decoder's start
        "special_ids": {"pad": spec.pad_id, "unk": spec.unk_id, "bos": spec.decoder_start_id, "eos": spec.eos_id},
        "source_appends_eos": True,
        "vocab": {"joint": source.vocabularies.shared,
                  "source": {**vocab_files["source"], "size": spec.source_vocab_size},
                  "target": {**vocab_files["target"], "size": spec.target_vocab_size}},
        "graphs": {
            "encoder": {"file": "encoder.onnx", "inputs": io(names["encoder_inputs"]),
                        "outputs": io(names["encoder_outputs"])},
            "decoder_step": {"file": "decoder_step.onnx", "inputs": io(names["step_inputs"]),
                             "outputs": io(names["step_outputs"])},
        },
        "topk_input": TOPK_INPUT,
        "max_positions": spec.max_positions,
        # The reference's own decoding: transformers' beam search (score / length ** penalty, going
        # on while a live hypothesis can still beat the worst of the best ended ones, the eos it
        # forces at the maximum length free), no unk ban.
        "decoding_defaults": {"beam": generation.beam, "max_len_a": 0.0, "max_len_b": min(generation.max_length, spec.max_positions) - 1,
                              "length_penalty": generation.length_penalty, "length_normalisation": "length",
                              "stopping": "best_k", "suppress_unk": False, "no_repeat_ngram": 0,
                              "free_forced_eos": True},
        "bad_words": sorted(set(generation.bad_words) - {spec.pad_id}),
        "alignment": {"layer": layer, "heads": list(options.alignment_heads) or "all",
                      "rule": "cross-attention of this decoder layer, averaged over these heads"},
        "model_config": asdict(spec),
        "origin": {**source.origin, "imported_from": source.form},
        **({"target_tokens": options.target_tokens} if options.target_tokens else {}),
        **({SHORTLIST: shortlist} if shortlist else {}),
        "verification": {"graph_max_abs_diff": diffs, "tolerance": options.tolerance,
                         "transformers_max_abs_diff": reference, **({"int8": int8} if int8 else {})},
        "files": {name: sha256_file(staging / name) for name in files},
    }
    manifest["signature"] = signature_for(manifest)
    return manifest
