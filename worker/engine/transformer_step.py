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

import numpy as np
import onnxruntime as ort

from .bundle import ALIGNER, TOPK_INPUT, Bundle, BundleError, SpecialIds, layer_names, transformer_interface
from .ort_model import check_provider, load_session, providers_for, session_options
from .search import EVERY, StepScores
from .shortlist import Shortlist
from .shortlist_graph import IDS_INPUT, MASK_INPUT, TOPK_OUTPUTS, ShortlistStep

SCORES = ("topk_log_probs", "topk_ids")
# The step graph's final decoder state float [N, D]: with an alignment head, each step's is kept in
# the state under this name (so a beam reorders it with the cache) for ``top_state``.
TOP_STATE = "hidden"


@dataclass(frozen=True)
class TransformerEncoded:
    """An encoded batch: each decoder layer's cross keys and values float [B, H, S, E] (in the step
    graph's input order); mask bool [B, S]."""

    cross: tuple[np.ndarray, ...]
    mask: np.ndarray
    repeats: int = 1  # K
    # with a lexical shortlist: the shortlist step graph's inputs for the batch's V' candidate ids,
    # and float32 [B, V']: 0 for each sentence's own candidates, -inf for the others
    vocab: dict[str, np.ndarray] | None = None
    vocab_mask: np.ndarray | None = None
    memory: np.ndarray | None = None  # float [B, S, D], the encoder output: the alignment head's keys, if any


class OrtTransformerStepModel:
    """``encode``/``expand``/``initial_state``/``step``/``reorder``/``select`` over a Transformer bundle."""

    def __init__(self, bundle: Bundle, provider: str = "cpu", threads: int = 0,
                 shortlist: Shortlist | None = None) -> None:
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
        # The alignment head, if the bundle has one (nmt train-aligner --bundle): forced decoding reads links from it.
        self.aligner = None
        if ALIGNER in bundle.graphs:
            self.aligner = load_session(bundle.graph_path(ALIGNER), options, providers)
        # A lexical shortlist runs a step graph of its own that projects ``hidden`` onto the batch's
        # candidates only (worker.shortlist_graph). Pad (the decoder's start) and the bad words are
        # never candidates: what can never be produced takes no share of a row's probability.
        self.shortlist = shortlist
        self.shortlist_step = self.shortlist_decoder = None
        self.never = np.union1d(self.bad_words, [self.special.pad]).astype(np.int64)
        if shortlist is not None:
            self.shortlist_step = ShortlistStep.of(bundle.graph_path("decoder_step"))
            self.shortlist_step.check(shortlist)
            self.shortlist_decoder = ort.InferenceSession(self.shortlist_step.graph, options, providers=providers)

    @classmethod
    def from_bundle(cls, bundle: Bundle, provider: str = "cpu", threads: int = 0, shortlist: bool = False
                    ) -> "OrtTransformerStepModel":
        """``shortlist``: decode onto the bundle's lexical shortlist (``BundleError`` if it has none)."""
        table = None
        if shortlist:
            if bundle.shortlist_path is None:
                raise BundleError(f"{bundle.path}: this bundle has no lexical shortlist")
            table = Shortlist.load(bundle.shortlist_path)
        return cls(bundle, provider, threads, table)

    def encode(self, src: np.ndarray, lengths: np.ndarray) -> TransformerEncoded:
        if self.max_steps and src.shape[1] > self.max_steps:
            raise BundleError(f"source of {src.shape[1]} tokens exceeds the model's {self.max_steps} positions")
        head = self.aligner is not None  # memory: what the alignment head reads of the source
        cross = self.encoder.run(list(self.names["encoder_outputs"][0 if head else 1:]),
                                 {"src_ids": src, "src_lengths": lengths})
        memory, cross = (cross[0], cross[1:]) if head else (None, cross)
        mask = np.arange(src.shape[1])[None, :] < lengths[:, None]
        vocab = vocab_mask = None
        if self.shortlist is not None:  # each sentence's own candidates, from its ids without padding
            own = [np.setdiff1d(self.shortlist.candidates(row[:length]), self.never, assume_unique=True)
                   for row, length in zip(src, lengths)]
            ids = np.unique(np.concatenate(own))
            vocab, vocab_mask = self.shortlist_step.inputs(ids), ShortlistStep.mask(ids, own)
        return TransformerEncoded(tuple(cross), mask, vocab=vocab, vocab_mask=vocab_mask, memory=memory)

    def expand(self, encoded: TransformerEncoded, repeats: int) -> TransformerEncoded:
        return replace(encoded, repeats=repeats)  # the step graph reads each sentence's once for its K rows

    def select(self, encoded: TransformerEncoded, sentences: np.ndarray) -> TransformerEncoded:
        """Keep ``sentences``: their cross keys and values, mask and shortlist mask rows (the batch's
        candidate ids stay: a candidate only the dropped sentences had is -inf in every kept row)."""
        return replace(encoded, cross=tuple(c[sentences] for c in encoded.cross), mask=encoded.mask[sentences],
                       vocab_mask=None if encoded.vocab_mask is None else encoded.vocab_mask[sentences],
                       memory=None if encoded.memory is None else encoded.memory[sentences])

    def initial_state(self, encoded: TransformerEncoded) -> dict[str, np.ndarray]:
        empty = np.zeros((encoded.mask.shape[0], self.heads, 0, self.head_dim), dtype=np.float32)
        return {name: empty for name in self.state_names}

    def step(self, prev_ids: np.ndarray, state: dict[str, np.ndarray], encoded: TransformerEncoded,
             candidates: int = 0) -> StepScores:
        """prev_ids int64 [N] -> the best ``candidates`` tokens per row (all when 0 or ``EVERY``).
        With a shortlist, a count or ``EVERY`` draws each row's candidates from its sentence's own,
        projected in the shortlist step graph; 0 still scores the whole vocabulary (forced decoding)."""
        batch = encoded.mask.shape[0]
        n = prev_ids.shape[0]
        rows = n // batch
        feeds = {"prev_ids": prev_ids.reshape(batch, rows), "src_mask": encoded.mask,
                 **dict(zip(self.names["step_inputs"][2:2 + 2 * self.layers], encoded.cross)),
                 **{name: state[name].reshape(batch, rows, *state[name].shape[1:]) for name in self.state_names}}
        if candidates and encoded.vocab is not None and self.shortlist_decoder is not None:
            count = len(encoded.vocab[IDS_INPUT])
            count = count if candidates == EVERY else min(candidates, count)
            names = [*TOPK_OUTPUTS, *self.shortlist_step.kept]
            found = dict(zip(names, self.shortlist_decoder.run(names, {
                **feeds, **encoded.vocab, MASK_INPUT: encoded.vocab_mask,
                TOPK_INPUT: np.array([count], dtype=np.int64)})))
            new_state = {name: found[f"new_{name}"].reshape(n, *found[f"new_{name}"].shape[2:])
                         for name in self.state_names}
            return StepScores(found[TOPK_OUTPUTS[0]].reshape(n, -1), found[TOPK_OUTPUTS[1]].reshape(n, -1), new_state,
                              found["attention"].reshape(n, -1))
        topk = 0 < candidates < self.vocab_size and self.topk_input and not self.bad_words.size
        if topk:
            feeds[TOPK_INPUT] = np.array([candidates], dtype=np.int64)
        scores = list(SCORES) if topk else ["log_probs"]
        top = [TOP_STATE] if self.aligner is not None else []
        outputs = self.decoder.run([*scores, "attention", *self.new_state_names, *top], feeds)
        found, attention = outputs[:len(scores)], outputs[len(scores)]
        cache = outputs[len(scores) + 1:len(outputs) - len(top)]
        new_state = {name: value.reshape(n, *value.shape[2:]) for name, value in zip(self.state_names, cache)}
        if top:
            new_state[TOP_STATE] = outputs[-1].reshape(n, -1)
        if topk:
            return StepScores(found[0].reshape(n, -1), found[1].reshape(n, -1), new_state, attention.reshape(n, -1))
        log_probs = found[0].reshape(n, -1)
        if self.bad_words.size:
            log_probs[:, self.bad_words] = -np.inf
        return StepScores(log_probs, None, new_state, attention.reshape(n, -1))

    def reorder(self, state: dict[str, np.ndarray], index: np.ndarray) -> dict[str, np.ndarray]:
        return {name: value[index] for name, value in state.items()}

    def top_state(self, state: dict[str, np.ndarray]) -> np.ndarray:
        """The final decoder state of the step that returned ``state``: float32 [N, D]. Needs a bundle
        with an alignment head (the state keeps it only then)."""
        if TOP_STATE not in state:
            raise BundleError("this bundle has no alignment head (nmt train-aligner --bundle adds one)")
        return np.asarray(state[TOP_STATE], dtype=np.float32)

    def align(self, encoded: TransformerEncoded, states: np.ndarray, target_ids: np.ndarray,
              attention: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """The alignment head over a teacher-forced batch, as ``OrtStepModel.align``: states float
        [B, T, D] (``top_state`` of each step), target_ids int64 [B, T] (eos included, pad after it),
        attention float [B, T, S] -> alignment float32 [B, T, S] and the reverse direction's, or None.
        The head's annotations are the encoder output (``memory``)."""
        if self.aligner is None:
            raise BundleError("this bundle has no alignment head (nmt train-aligner --bundle adds one)")
        alignment, *reverse = self.aligner.run(None, {
            "annotations": encoded.memory, "src_mask": encoded.mask, "states": np.asarray(states, dtype=np.float32),
            "target_ids": target_ids, "attention": np.asarray(attention, dtype=np.float32)})
        return alignment, (reverse[0] if reverse else None)
