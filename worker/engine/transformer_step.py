"""ONNX Runtime step model of the Transformer family (bundles made by ``nmt import``).

The decoder state is a key/value cache, two named tensors of [L, N, H, T, E] that grow by one step
each call and are reordered by beam index like the GRU's hidden state; the cross-attention keys
and values come from the encoder once per sentence and are read by all K rows of its beam (the
step graph takes rows grouped as [B, K]). Dimensions: B sentences, K rows per sentence
(N = B * K), S source length, T target steps so far, L layers, H heads, E head size, V vocabulary.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .bundle import TOPK_INPUT, Bundle, BundleError, SpecialIds
from .ort_model import check_provider, load_session, providers_for, session_options
from .search import EVERY, StepScores

STATE = ("self_keys", "self_values")


@dataclass(frozen=True)
class TransformerEncoded:
    """An encoded batch: cross_keys, cross_values float [L, B, H, S, E]; mask bool [B, S]."""

    cross_keys: np.ndarray
    cross_values: np.ndarray
    mask: np.ndarray
    repeats: int = 1  # K


class OrtTransformerStepModel:
    """``encode``/``expand``/``initial_state``/``step``/``reorder``/``select`` over a Transformer bundle."""

    shortlist = None  # no lexical shortlist for this family yet
    aligner = None

    def __init__(self, bundle: Bundle, provider: str = "cpu", threads: int = 0) -> None:
        self.special: SpecialIds = bundle.special_ids
        options = session_options(threads)
        providers = providers_for(provider)
        self.encoder = load_session(bundle.graph_path("encoder"), options, providers)
        self.decoder = load_session(bundle.graph_path("decoder_step"), options, providers)
        check_provider(provider, self.encoder)
        self.provider = check_provider(provider, self.decoder)
        self.device = "cpu"
        outputs = {o.name: o for o in self.decoder.get_outputs()}
        self.vocab_size = int(outputs["log_probs"].shape[-1])
        self.topk_input = TOPK_INPUT in {i.name for i in self.decoder.get_overridable_initializers()}
        self.topk = self.vocab_size if self.topk_input else 0
        cache = next(i for i in self.decoder.get_inputs() if i.name == "self_keys").shape
        self.layers, self.heads, self.head_dim = int(cache[0]), int(cache[3]), int(cache[5])
        self.bad_words = np.array(sorted(bundle.manifest.get("bad_words", ())), dtype=np.int64)
        self.max_steps = int(bundle.manifest.get("max_positions", 0)) or None

    @classmethod
    def from_bundle(cls, bundle: Bundle, provider: str = "cpu", threads: int = 0, shortlist: bool = False
                    ) -> OrtTransformerStepModel:
        if shortlist:
            raise BundleError(f"{bundle.path}: a lexical shortlist is not available for imported Transformer bundles")
        return cls(bundle, provider, threads)

    def encode(self, src: np.ndarray, lengths: np.ndarray) -> TransformerEncoded:
        if self.max_steps and src.shape[1] > self.max_steps:
            raise BundleError(f"source of {src.shape[1]} tokens exceeds the model's {self.max_steps} positions")
        keys, values = self.encoder.run(["cross_keys", "cross_values"], {"src_ids": src, "src_lengths": lengths})
        mask = np.arange(src.shape[1])[None, :] < lengths[:, None]
        return TransformerEncoded(keys, values, mask)

    def expand(self, encoded: TransformerEncoded, repeats: int) -> TransformerEncoded:
        return replace(encoded, repeats=repeats)  # the step graph reads each sentence's once for its K rows

    def select(self, encoded: TransformerEncoded, sentences: np.ndarray) -> TransformerEncoded:
        return replace(encoded, cross_keys=encoded.cross_keys[:, sentences], cross_values=encoded.cross_values[:, sentences],
                       mask=encoded.mask[sentences])

    def initial_state(self, encoded: TransformerEncoded) -> dict[str, np.ndarray]:
        empty = np.zeros((self.layers, encoded.mask.shape[0], self.heads, 0, self.head_dim), dtype=np.float32)
        return {name: empty for name in STATE}

    def step(self, prev_ids: np.ndarray, state: dict[str, np.ndarray], encoded: TransformerEncoded,
             candidates: int = 0) -> StepScores:
        """prev_ids int64 [N] -> the best ``candidates`` tokens per row (all when 0 or ``EVERY``)."""
        batch = encoded.mask.shape[0]
        rows = prev_ids.shape[0] // batch
        cache = {name: state[name].reshape(self.layers, batch, rows, *state[name].shape[2:]) for name in STATE}
        topk = 0 < candidates < self.vocab_size and self.topk_input and not self.bad_words.size
        names = ["topk_log_probs", "topk_ids"] if topk else ["log_probs"]
        feeds = {"prev_ids": prev_ids.reshape(batch, rows), **cache, "cross_keys": encoded.cross_keys,
                 "cross_values": encoded.cross_values, "src_mask": encoded.mask}
        if topk:
            feeds[TOPK_INPUT] = np.array([candidates], dtype=np.int64)
        *scores, new_keys, new_values, attention = self.decoder.run(
            [*names, "new_self_keys", "new_self_values", "attention"], feeds)
        n = prev_ids.shape[0]
        new_state = {"self_keys": new_keys.reshape(self.layers, n, *new_keys.shape[3:]),
                     "self_values": new_values.reshape(self.layers, n, *new_values.shape[3:])}
        if topk:
            return StepScores(scores[0].reshape(n, -1), scores[1].reshape(n, -1), new_state, attention.reshape(n, -1))
        log_probs = scores[0].reshape(n, -1)
        if self.bad_words.size:
            log_probs[:, self.bad_words] = -np.inf
        return StepScores(log_probs, None, new_state, attention.reshape(n, -1))

    def reorder(self, state: dict[str, np.ndarray], index: np.ndarray) -> dict[str, np.ndarray]:
        return {name: value[:, index] for name, value in state.items()}

    def top_state(self, state: Any) -> np.ndarray:
        raise BundleError("forced alignment with an alignment head is not available for imported Transformer "
                          "bundles yet: their links come from cross-attention")

    def align(self, *args: Any, **kwargs: Any):
        raise BundleError("this bundle has no alignment head")


assert EVERY < 0  # step() treats EVERY like 0: the whole vocabulary
