"""The torch-free inference core: bundle, ONNX Runtime, beam search, alignment, forced decoding,
lexical shortlist, segment cache, evaluation. No Celery, kombu or Redis: the Celery glue and the
local command line both drive it.

    from worker.engine import Translator, SearchOptions, EngineSettings, load_bundle
"""
from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {"Translator": ".translator", "SearchOptions": ".search", "EngineSettings": ".settings",
            "load_bundle": ".bundle"}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:  # imported on first use: reading a bundle never loads ONNX Runtime
    if name not in _EXPORTS:
        raise AttributeError(f"module 'worker.engine' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name], __name__), name)
