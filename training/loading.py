"""A trained model rebuilt for use (evaluation, the alignment head, export) from a checkpoint
(``training.checkpoint``) or a compact snapshot (``training.snapshot``): the one place that
reads either."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .checkpoint import CheckpointError, read_checkpoint
from .config import Config, ModelConfig
from .data import Vocabs
from .model import ModelSpec, Seq2Seq
from .snapshot import model_checkpoint, read_snapshot
from .vocab import Vocab


@dataclass(frozen=True)
class LoadedModel:
    model: Seq2Seq
    spec: ModelSpec
    vocabs: Vocabs
    config: Config
    raw: dict[str, Any]


def load_model(path: Path) -> LoadedModel:
    """Rebuild the model (eval mode), vocabularies and config from a checkpoint alone, or from a
    compact snapshot (``training.snapshot.model_checkpoint``: the weights its last validation chose)."""
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
