"""The Python client and CLI that enqueue documents and collect results; never imports the worker.

    from client import TranslationClient, JobResult
"""
from __future__ import annotations

from typing import Any

_EXPORTS = {
    "TranslationClient": "client.client", "Job": "client.client", "ClientError": "client.client",
    "JobFailedError": "client.client", "JobNotFoundError": "client.client", "JobExistsError": "client.client",
    "JobNotFinishedError": "client.client", "UnknownLanguagePairError": "client.client",
    "UnknownModelError": "client.client", "JobResult": "queue_config.messages", "JobStatus": "queue_config.jobstore",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:  # imported on first use: `nmt` commands that never submit stay light
    if name not in _EXPORTS:
        raise AttributeError(f"module 'client' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(_EXPORTS[name]), name)
