"""Celery workers and the torch-free ONNX Runtime engine: bundle reader, beam search, alignments,
documents, and the Celery tasks (``celery -A worker worker``).

``worker.app`` is resolved lazily, so importing ``worker.bundle`` or ``worker.engine`` does not
import Celery or read queue settings.
"""
from typing import Any


def __getattr__(name: str) -> Any:
    if name in ("app", "celery"):
        from .tasks import app

        return app
    raise AttributeError(f"module 'worker' has no attribute {name!r}")
