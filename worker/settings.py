"""Engine settings: execution provider, threads and batching (a frozen dataclass; the queue
settings loader fills it from NMT_* environment variables)."""
from __future__ import annotations

from dataclasses import dataclass

PROVIDERS = ("auto", "cpu", "cuda")


@dataclass(frozen=True)
class EngineSettings:
    provider: str = "auto"  # auto: CUDA when ONNX Runtime can use it, else CPU
    intra_op_threads: int = 0  # 0: ONNX Runtime's default (all host cores: set it per worker process)
    max_batch_tokens: int = 6000  # padded source tokens per batch, before beam expansion
    max_batch_sentences: int = 64
    max_sentence_tokens: int = 200  # longer sentences are split at word boundaries, with a warning

    def validate(self) -> "EngineSettings":
        if self.provider not in PROVIDERS:
            raise ValueError(f"provider must be one of {', '.join(PROVIDERS)}, got {self.provider!r}")
        for name in ("max_batch_tokens", "max_batch_sentences", "max_sentence_tokens"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.intra_op_threads < 0:
            raise ValueError(f"intra_op_threads must be >= 0, got {self.intra_op_threads}")
        return self
