"""Engine settings: execution provider, threads and batching (a frozen dataclass; the queue
settings loader fills it from NMT_* environment variables)."""
from __future__ import annotations

import os
from dataclasses import dataclass, replace

PROVIDERS = ("auto", "cpu", "cuda")
SHORTLIST_MODES = ("auto", "on", "off")


@dataclass(frozen=True)
class EngineSettings:
    provider: str = "auto"  # auto: CUDA when ONNX Runtime can use it, else CPU
    intra_op_threads: int = 0  # 0: ONNX Runtime's default (all host cores: set it per worker process)
    batch_workers: int = 1  # batches decoded at once, each on its own thread (CPU: cores / intra_op_threads)
    max_batch_tokens: int = 6000  # padded source tokens per batch, before beam expansion
    max_batch_sentences: int = 64
    max_sentence_tokens: int = 200  # longer sentences are split at word boundaries, with a warning
    # Seconds a segment split into parts may spend decoding; past it, the segment is kept
    # untranslated and flagged time_budget, and the job goes on.
    segment_seconds: float = 20.0
    # Lexical shortlist (worker.shortlist): "auto" uses the bundle's if its manifest turns it on,
    # "on" requires one, "off" always projects onto the whole vocabulary.
    shortlist: str = "auto"

    def validate(self) -> "EngineSettings":
        if self.shortlist not in SHORTLIST_MODES:
            raise ValueError(f"shortlist must be one of {', '.join(SHORTLIST_MODES)}, got {self.shortlist!r}")
        if self.provider not in PROVIDERS:
            raise ValueError(f"provider must be one of {', '.join(PROVIDERS)}, got {self.provider!r}")
        for name in ("max_batch_tokens", "max_batch_sentences", "max_sentence_tokens"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if not self.segment_seconds > 0:
            raise ValueError(f"segment_seconds must be > 0, got {self.segment_seconds}")
        if self.intra_op_threads < 0:
            raise ValueError(f"intra_op_threads must be >= 0, got {self.intra_op_threads}")
        if self.batch_workers < 1:
            raise ValueError(f"batch_workers must be >= 1, got {self.batch_workers}")
        return self


def local_cpu_settings(settings: EngineSettings, cores: int | None = None) -> EngineSettings:
    """For one process that owns the host (``nmt translate``, ``nmt eval``): with neither threads
    nor batch workers chosen, one batch per core with one intra-op thread each (the fastest layout
    for bulk decoding on CPU; ``bench/decode_speed.py`` measures it). Explicit choices are kept."""
    if settings.intra_op_threads or settings.batch_workers != 1:
        return settings
    return replace(settings, intra_op_threads=1, batch_workers=max(1, cores or host_cores()))


def host_cores() -> int:
    """Cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def worker_child_settings(settings: EngineSettings, children: int, cores: int | None = None) -> EngineSettings:
    """For one of ``children`` worker processes sharing the host: with no thread count chosen
    (``NMT_THREADS`` 0), the host's cores are shared out, each child's batch workers taking one
    intra-op thread each, so that children x batch workers x threads never exceeds the cores."""
    if settings.intra_op_threads:
        return settings
    per_child = max(1, (cores or host_cores()) // max(1, children))
    return replace(settings, intra_op_threads=max(1, per_child // settings.batch_workers))
