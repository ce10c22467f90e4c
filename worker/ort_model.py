"""ONNX Runtime implementation of the search's step model, over a bundle's two graphs (CPU).

The engine issue adds execution-provider selection and IO binding; this is the plain CPU path.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnxruntime as ort

from .bundle import Bundle


@dataclass(frozen=True)
class OrtEncoded:
    annotations: np.ndarray  # float32 [N, S, 2H]
    keys: np.ndarray  # float32 [N, S, A]
    mask: np.ndarray  # bool [N, S]
    init_state: np.ndarray  # float32 [L, N, D]


def session_options(threads: int = 0) -> ort.SessionOptions:
    options = ort.SessionOptions()
    options.log_severity_level = 3
    if threads:
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
    return options


class OrtStepModel:
    """``encode``/``expand``/``initial_state``/``step``/``reorder`` over ONNX Runtime sessions."""

    def __init__(self, encoder_path: Path, decoder_path: Path, threads: int = 0) -> None:
        options = session_options(threads)
        providers = ["CPUExecutionProvider"]
        self.encoder = ort.InferenceSession(str(encoder_path), options, providers=providers)
        self.decoder = ort.InferenceSession(str(decoder_path), options, providers=providers)
        self.provider = self.decoder.get_providers()[0]

    @classmethod
    def from_bundle(cls, bundle: Bundle, threads: int = 0) -> "OrtStepModel":
        return cls(bundle.graph_path("encoder"), bundle.graph_path("decoder_step"), threads)

    def encode(self, src: np.ndarray, lengths: np.ndarray) -> OrtEncoded:
        annotations, keys, init_state = self.encoder.run(None, {"src_ids": src, "src_lengths": lengths})
        mask = np.arange(src.shape[1])[None, :] < lengths[:, None]
        return OrtEncoded(annotations, keys, mask, init_state)

    def expand(self, encoded: OrtEncoded, repeats: int) -> OrtEncoded:
        if repeats == 1:
            return encoded
        return OrtEncoded(
            np.repeat(encoded.annotations, repeats, 0), np.repeat(encoded.keys, repeats, 0),
            np.repeat(encoded.mask, repeats, 0), np.repeat(encoded.init_state, repeats, 1),
        )

    def initial_state(self, encoded: OrtEncoded) -> np.ndarray:
        return encoded.init_state

    def step(self, prev_ids: np.ndarray, state: np.ndarray, encoded: OrtEncoded):
        log_probs, new_state, attention = self.decoder.run(None, {
            "prev_ids": prev_ids, "state": state, "annotations": encoded.annotations,
            "keys": encoded.keys, "src_mask": encoded.mask,
        })
        return log_probs, new_state, attention

    def reorder(self, state: np.ndarray, index: np.ndarray) -> np.ndarray:
        return state[:, index]
