"""ONNX Runtime step model of the Transformer family (bundles made by ``nmt import``).

The decoder state is a key/value cache: named tensors, two per decoder layer, of [N, H, T, E],
that grow by one step each call and are reordered by beam index like the GRU's hidden state. The
cross-attention keys and values come from the encoder once per sentence and are read by all K
rows of its beam (the step graph takes rows grouped as [B, K]). Every layer has tensors of its own
(``bundle.transformer_interface``), so a step never splits or stacks the cache. Dimensions: B
sentences, K rows per sentence (N = B * K), S source length, T target steps so far, H heads, E head
size, V vocabulary.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .bundle import TOPK_INPUT, Bundle, BundleError, SpecialIds, layer_names, transformer_interface
from .ort_model import check_provider, load_session, providers_for, session_options
from .search import StepScores

SCORES = ("topk_log_probs", "topk_ids")


@dataclass(frozen=True)
class TransformerEncoded:
    """An encoded batch: each decoder layer's cross keys and values float [B, H, S, E] (in the step
    graph's input order); mask bool [B, S]."""

    cross: tuple[np.ndarray, ...]
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
        self.layers = sum(name.startswith("self_keys.") for name in (i.name for i in self.decoder.get_inputs()))
        cache = next(i for i in self.decoder.get_inputs() if i.name == "self_keys.0").shape
        self.heads, self.head_dim = int(cache[2]), int(cache[4])
        self.names = transformer_interface(self.layers)
        self.state_names = layer_names("self", self.layers)
        self.new_state_names = layer_names("new_self", self.layers)
        self.bad_words = np.array(sorted(bundle.manifest.get("bad_words", ())), dtype=np.int64)
        self.max_steps = int(bundle.manifest.get("max_positions", 0)) or None

    @classmethod
    def from_bundle(cls, bundle: Bundle, provider: str = "cpu", threads: int = 0, shortlist: bool = False
                    ) -> "OrtTransformerStepModel":
        if shortlist:
            raise BundleError(f"{bundle.path}: a lexical shortlist is not available for imported Transformer bundles")
        return cls(bundle, provider, threads)

    def encode(self, src: np.ndarray, lengths: np.ndarray) -> TransformerEncoded:
        if self.max_steps and src.shape[1] > self.max_steps:
            raise BundleError(f"source of {src.shape[1]} tokens exceeds the model's {self.max_steps} positions")
        cross = self.encoder.run(list(self.names["encoder_outputs"][1:]), {"src_ids": src, "src_lengths": lengths})
        mask = np.arange(src.shape[1])[None, :] < lengths[:, None]
        return TransformerEncoded(tuple(cross), mask)

    def expand(self, encoded: TransformerEncoded, repeats: int) -> TransformerEncoded:
        return replace(encoded, repeats=repeats)  # the step graph reads each sentence's once for its K rows

    def select(self, encoded: TransformerEncoded, sentences: np.ndarray) -> TransformerEncoded:
        return replace(encoded, cross=tuple(c[sentences] for c in encoded.cross), mask=encoded.mask[sentences])

    def initial_state(self, encoded: TransformerEncoded) -> dict[str, np.ndarray]:
        empty = np.zeros((encoded.mask.shape[0], self.heads, 0, self.head_dim), dtype=np.float32)
        return {name: empty for name in self.state_names}

    def step(self, prev_ids: np.ndarray, state: dict[str, np.ndarray], encoded: TransformerEncoded,
             candidates: int = 0) -> StepScores:
        """prev_ids int64 [N] -> the best ``candidates`` tokens per row (all when 0 or ``EVERY``)."""
        batch = encoded.mask.shape[0]
        n = prev_ids.shape[0]
        rows = n // batch
        feeds = {"prev_ids": prev_ids.reshape(batch, rows), "src_mask": encoded.mask,
                 **dict(zip(self.names["step_inputs"][2:2 + 2 * self.layers], encoded.cross)),
                 **{name: state[name].reshape(batch, rows, *state[name].shape[1:]) for name in self.state_names}}
        topk = 0 < candidates < self.vocab_size and self.topk_input and not self.bad_words.size
        if topk:
            feeds[TOPK_INPUT] = np.array([candidates], dtype=np.int64)
        scores = list(SCORES) if topk else ["log_probs"]
        outputs = self.decoder.run([*scores, "attention", *self.new_state_names], feeds)
        found, attention, cache = outputs[:len(scores)], outputs[len(scores)], outputs[len(scores) + 1:]
        new_state = {name: value.reshape(n, *value.shape[2:]) for name, value in zip(self.state_names, cache)}
        if topk:
            return StepScores(found[0].reshape(n, -1), found[1].reshape(n, -1), new_state, attention.reshape(n, -1))
        log_probs = found[0].reshape(n, -1)
        if self.bad_words.size:
            log_probs[:, self.bad_words] = -np.inf
        return StepScores(log_probs, None, new_state, attention.reshape(n, -1))

    def reorder(self, state: dict[str, np.ndarray], index: np.ndarray) -> dict[str, np.ndarray]:
        return {name: value[index] for name, value in state.items()}

    def top_state(self, state: Any) -> np.ndarray:
        raise BundleError("forced alignment with an alignment head is not available for imported Transformer "
                          "bundles yet: their links come from cross-attention")

    def align(self, *args: Any, **kwargs: Any):
        raise BundleError("this bundle has no alignment head")
