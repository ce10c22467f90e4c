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
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch

from .config import Config, ModelConfig
from .data import Vocabs
from .model import ModelSpec, Seq2Seq
from .vocab import Vocab

FORMAT_VERSION = 1


class CheckpointError(ValueError):
    """A checkpoint file is missing, unreadable or of an unknown format."""


@dataclass(frozen=True)
class LoadedModel:
    model: Seq2Seq
    spec: ModelSpec
    vocabs: Vocabs
    config: Config
    raw: dict[str, Any]


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


def load_model(path: Path) -> LoadedModel:
    """Rebuild the model (eval mode), vocabularies and config from a checkpoint alone, or from a
    compact snapshot (``training.snapshot.model_checkpoint``: the weights its last validation chose)."""
    from .snapshot import model_checkpoint, read_snapshot

    try:
        raw = read_checkpoint(path)
    except CheckpointError as not_checkpoint:
        try:
            raw = model_checkpoint(read_snapshot(path))
        except CheckpointError:
            raise not_checkpoint from None
    try:
        spec = ModelSpec(ModelConfig(**raw["model_config"]), raw["src_vocab_size"], raw["tgt_vocab_size"])
        model = spec.build()
        model.load_state_dict(raw["model"])
        src = Vocab(raw["src_spm"])
        vocabs = Vocabs(src, src if raw["joint_vocab"] else Vocab(raw["tgt_spm"]), joint=raw["joint_vocab"])
        config = Config.from_dict(raw["config"])
        len(src)  # parses the SentencePiece model now, not at the first sentence
    except KeyError as exc:
        raise CheckpointError(f"{path}: not a model checkpoint (no {exc.args[0]!r} entry)") from None
    except (TypeError, RuntimeError, ValueError) as exc:  # sizes or config that do not fit, bad vocab bytes
        raise CheckpointError(f"{path}: cannot rebuild the model: {str(exc).splitlines()[0]}") from None
    model.eval()
    return LoadedModel(model, spec, vocabs, config, raw)
