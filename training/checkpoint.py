"""Checkpoints that carry everything needed to rebuild the model: its config and vocabularies.

A checkpoint is a plain dict saved with ``torch.save`` (loadable with ``weights_only=True``),
written atomically (temporary file, then rename) so a killed run never leaves a torn file.
Besides the model, vocabularies and training state, a training checkpoint records ``corpora``
(per training corpus: name, resolved absolute files, their byte sizes, weight, pair counts and
what the last full pass kept and dropped, or None before one ended) and ``valid_sample``
(``{"src": [...], "tgt": [...]}``: the first raw validation pairs, for export parity checks
without a data directory).
"""
from __future__ import annotations

import os
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch

from .config import Config
from .data import Vocabs
from .model import ModelSpec, Seq2Seq

FORMAT_VERSION = 1


class CheckpointError(ValueError):
    """A checkpoint file is missing, unreadable or of an unknown format."""


def save_checkpoint(path: Path, *, config: Config, spec: ModelSpec, vocabs: Vocabs, model: Seq2Seq, **state: Any) -> None:
    """Atomically write a checkpoint; ``state`` holds optimizer/scheduler/progress/rng entries."""
    payload = {
        "format_version": FORMAT_VERSION,
        "config": config.to_dict(),
        "model_config": asdict(spec.config),
        "src_vocab_size": spec.src_vocab_size,
        "tgt_vocab_size": spec.tgt_vocab_size,
        "joint_vocab": vocabs.joint,
        "src_spm": vocabs.src.proto,
        "tgt_spm": vocabs.tgt.proto,
        "model": model.state_dict(),
        **state,
    }
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            torch.save(payload, handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_checkpoint(path: Path) -> dict[str, Any]:
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"checkpoint not found: {path}")
    try:
        raw = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises several types for corrupt files
        raise CheckpointError(f"{path}: not a readable checkpoint: {exc}") from None
    version = raw.get("format_version") if isinstance(raw, dict) else None
    if version != FORMAT_VERSION:
        raise CheckpointError(f"{path}: unknown checkpoint format version {version!r} (expected {FORMAT_VERSION})")
    return raw
