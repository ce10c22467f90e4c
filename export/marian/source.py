"""A model directory as the importer reads it, whatever its form (``model_dir.read_model_dir``):
one ``ModelSource`` with the architecture, the weights under Hugging Face names (the ``model.``
prefix dropped), the vocabularies, the SentencePiece files and the decoding defaults; and the
small readers both forms share.
"""
from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .spec import GenerationDefaults, ImportModelError, MarianSpec, Vocabularies

LICENSE_LINE = re.compile(r"^\s*(?:[*-]\s*)?\**license\**\s*:\s*(.+)$", re.IGNORECASE | re.MULTILINE)
CITATION_BLOCK = re.compile(r"(@\w+\s*\{.*?\n\})", re.DOTALL)


@dataclass(frozen=True)
class ModelSource:
    """Everything the importer takes from a model directory."""

    path: Path
    form: str  # "huggingface" or "marian-npz"
    spec: MarianSpec
    weights: Mapping[str, np.ndarray]  # Hugging Face names without "model.", float32
    vocabularies: Vocabularies
    source_spm: Path
    target_spm: Path
    generation: GenerationDefaults
    source_language: str | None = None
    target_language: str | None = None
    origin: Mapping[str, Any] = field(default_factory=dict)  # name, license, citation, files read
    alignment_layer: int | None = None  # a layer trained with guided alignment (Marian's model.yml says which)

    def table(self, name: str) -> np.ndarray:
        """A weight by its Hugging Face name; a missing one is an ``ImportModelError`` naming it."""
        try:
            return self.weights[name]
        except KeyError:
            raise ImportModelError(f"{self.path}: the weights have no {name!r}") from None

    def source_embeddings(self) -> np.ndarray:
        return self.weights["encoder.embed_tokens.weight"] if "encoder.embed_tokens.weight" in self.weights \
            else self.table("shared.weight")

    def target_embeddings(self) -> np.ndarray:
        return self.weights["decoder.embed_tokens.weight"] if "decoder.embed_tokens.weight" in self.weights \
            else self.table("shared.weight")

    def output_projection(self) -> np.ndarray:
        """float32 [V, D]: the target embeddings unless the model has its own ``lm_head``."""
        return self.weights.get("lm_head.weight", self.target_embeddings())

    def output_bias(self) -> np.ndarray:
        """float32 [V]."""
        bias = self.weights.get("final_logits_bias")
        return np.zeros(self.spec.target_vocab_size, np.float32) if bias is None else bias.reshape(-1)


def require(path: Path, name: str, what: str) -> Path:
    file = path / name
    if not file.is_file():
        raise ImportModelError(f"{path}: missing {name} ({what})")
    return file


def load_json(file: Path) -> Any:
    try:
        return json.loads(file.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ImportModelError(f"{file}: not valid JSON: {exc}") from None


def vocabulary_table(raw: Any, file: Path) -> dict[str, int]:
    if not isinstance(raw, dict) or not raw:
        raise ImportModelError(f"{file}: not a piece -> id table")
    try:
        return {str(piece): int(index) for piece, index in raw.items()}
    except (TypeError, ValueError):
        raise ImportModelError(f"{file}: ids must be integers") from None


def readme_origin(path: Path) -> dict[str, Any]:
    """Name, license and citation from a model card (README.md), where it states them."""
    origin: dict[str, Any] = {"name": path.name}
    readme = path / "README.md"
    if readme.is_file():
        text = readme.read_text(encoding="utf-8", errors="replace")
        license_ = LICENSE_LINE.search(text)
        if license_:
            origin["license"] = license_.group(1).strip()
        citation = CITATION_BLOCK.search(text)
        if citation:
            origin["citation"] = citation.group(1).strip()
    license_file = next((p for p in (path / "LICENSE", path / "LICENSE.txt") if p.is_file()), None)
    if license_file is not None and "license" not in origin:
        origin["license"] = license_file.read_text(encoding="utf-8", errors="replace").strip().splitlines()[0][:200]
    return origin
