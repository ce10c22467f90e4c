"""Compact snapshots: a run that can move to another machine in a few tens of megabytes.

A checkpoint (``last.pt``) holds the optimizer's moments and random states beside the weights: three
times the model's size in float32. A snapshot keeps what a run needs to go on elsewhere: the weights
and the moving average of the weights in float16, the config, the SentencePiece models, the
progress (step, epoch, batch within the epoch, training seconds, best BLEU), the learning rate and
``metrics.jsonl``. ``nmt train --from-snapshot FILE --run-dir DIR`` rebuilds the run directory from
it and trains on from the same batch of the same epoch (the data stream is a function of the seed
and the epoch) with a fresh Adam optimizer whose rate warms up linearly over ``WARMUP_STEPS``
steps. What differs from an uninterrupted run: Adam's moments, the dropout random state and float16
rounding of the weights.

``nmt snapshot --run-dir DIR --out FILE`` writes one from the run's ``last.pt``.
"""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import torch

from .averaging import WeightAverage
from .checkpoint import FORMAT_VERSION as CHECKPOINT_FORMAT_VERSION
from .checkpoint import CheckpointError, read_checkpoint
from .config import Config, ModelConfig
from .model import ModelSpec

FORMAT = "nmt-training-snapshot"
VERSION = 1
WARMUP_STEPS = 200  # steps over which a run resumed from a snapshot ramps its rate back up
KEPT = ("config", "model_config", "src_vocab_size", "tgt_vocab_size", "joint_vocab", "src_spm", "tgt_spm",
        "corpora", "valid_sample")


def _half(tensors: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    return {name: t.to(torch.float16) if t.is_floating_point() else t for name, t in tensors.items()}


def full_weights(snapshot: dict[str, Any]) -> dict[str, torch.Tensor]:
    """The snapshot's raw weights in float32, as the model holds them."""
    return {name: t.float() if t.is_floating_point() else t for name, t in snapshot["model"].items()}


def snapshot_of(checkpoint: dict[str, Any], metrics: str) -> dict[str, Any]:
    """The snapshot of a training checkpoint and the run's metrics.jsonl text up to it."""
    if "optimizer" not in checkpoint:
        raise CheckpointError("the checkpoint holds no training state (a bundle's recovered weights?)")
    snapshot = {"format": FORMAT, "version": VERSION, **{key: checkpoint[key] for key in KEPT if key in checkpoint}}
    snapshot["model"] = _half(checkpoint["model"])
    if "ema" in checkpoint:
        ema = checkpoint["ema"]
        snapshot["ema"] = {"decay": ema["decay"], "updates": ema["updates"], "shadow": _half(ema["shadow"])}
    progress = dict(checkpoint["progress"])
    snapshot["progress"] = progress
    snapshot["lr"] = float(checkpoint["optimizer"]["param_groups"][0]["lr"])
    size = progress.get("metrics_bytes", -1)
    snapshot["metrics"] = metrics.encode("utf-8")[:size].decode("utf-8") if size >= 0 else metrics
    return snapshot


def write_snapshot(run_dir: Path, out: Path) -> dict[str, Any]:
    """Write the snapshot of ``run_dir/last.pt`` to ``out`` (atomically); returns it."""
    run_dir = Path(run_dir)
    metrics_path = run_dir / "metrics.jsonl"
    metrics = metrics_path.read_text(encoding="utf-8") if metrics_path.exists() else ""
    snapshot = snapshot_of(read_checkpoint(run_dir / "last.pt"), metrics)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            torch.save(snapshot, handle)
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return snapshot


def read_snapshot(path: Path) -> dict[str, Any]:
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"snapshot not found: {path}")
    try:
        raw = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises several types for corrupt files
        raise CheckpointError(f"{path}: not a readable snapshot: {exc}") from None
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        raise CheckpointError(f"{path}: not a training snapshot (write one with nmt snapshot)")
    if raw.get("version") != VERSION:
        raise CheckpointError(f"{path}: unknown snapshot version {raw.get('version')!r} (expected {VERSION})")
    return raw


def model_checkpoint(snapshot: dict[str, Any]) -> dict[str, Any]:
    """The model checkpoint a snapshot stands for, as ``best.pt`` would hold it: the weights the
    run's last validation chose (raw or averaged, as ``metrics.jsonl`` records), in float32, with the
    config, vocabularies, progress, corpora and validation sample; no training state. So
    ``nmt train-aligner`` and ``nmt export`` take a snapshot where they take a checkpoint."""
    chosen = "raw"
    for line in reversed(snapshot.get("metrics", "").splitlines()):
        record = json.loads(line) if line.strip() else {}
        if record.get("kind") == "valid":
            chosen = record.get("weights", "raw")
            break
    weights = full_weights(snapshot)
    if chosen == "average" and "ema" in snapshot:  # the average goes in through a model: tied weights stay tied
        model = ModelSpec(ModelConfig(**snapshot["model_config"]), snapshot["src_vocab_size"],
                          snapshot["tgt_vocab_size"]).build()
        model.load_state_dict(weights)
        average = WeightAverage(model, float(snapshot["ema"]["decay"]))
        average.load_state_dict(snapshot["ema"])
        with average.applied(model):  # as the trainer writes best.pt
            weights = {name: t.detach().clone() for name, t in model.state_dict().items()}
    kept = {key: snapshot[key] for key in KEPT if key in snapshot}
    return {"format_version": CHECKPOINT_FORMAT_VERSION, **kept, "progress": dict(snapshot["progress"]),
            "model": weights}


def snapshot_config(snapshot: dict[str, Any], given: Config | None = None) -> Config:
    """The config a run from ``snapshot`` trains with: ``given`` (its data paths and training
    settings, say a longer budget) if its model and vocabulary are the snapshot's, else the
    snapshot's own."""
    saved = Config.from_dict(snapshot["config"])
    if given is None:
        return saved
    for section in ("model", "vocab"):
        if getattr(given, section) != getattr(saved, section):
            raise CheckpointError(f"the given config's {section} section differs from the snapshot's: "
                                  "leave --config out to train with the snapshot's own")
    return given


def warmup_factor(step: int, warm_from: int) -> float:
    """The share of the scheduled rate for the optimizer step after ``step`` steps, in a run that
    resumed from a snapshot at step ``warm_from`` (-1: never, 1.0)."""
    if warm_from < 0:
        return 1.0
    return min(1.0, (step - warm_from + 1) / WARMUP_STEPS)
