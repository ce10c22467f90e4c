"""``read_model_dir``: tell a Hugging Face MarianMT directory (``config.json``) from Marian's own
release (``*.npz`` + ``decoder.yml``) and read it into a ``ModelSource``."""
from __future__ import annotations

from pathlib import Path

from .hf_dir import read_hf_dir
from .marian_npz import read_marian_dir
from .source import ModelSource
from .spec import ImportModelError


def read_model_dir(path: str | Path) -> ModelSource:
    """Read a MarianMT directory (Hugging Face or Marian's own release)."""
    path = Path(path)
    if not path.is_dir():
        raise ImportModelError(f"{path}: not a directory (give the model's directory)")
    if (path / "config.json").is_file():
        return read_hf_dir(path)
    if list(path.glob("*.npz")):
        return read_marian_dir(path)
    raise ImportModelError(f"{path}: not a Marian model: no config.json (Hugging Face MarianMT) and no *.npz "
                           "(Marian release)")
