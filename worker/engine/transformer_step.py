"""ONNX Runtime step model of the Transformer family (bundles made by ``nmt import``).

The decoder state is a key/value cache: named tensors, two per decoder layer, of [N, H, T, E],
that grow by one step each call and are reordered by beam index like the GRU's hidden state. The
cross-attention keys and values come from the encoder once per sentence and are read by all K
rows of its beam (the step graph takes rows grouped as [B, K]). Every layer has tensors of its own
(``bundle.transformer_interface``), so a step never splits or stacks the cache. Dimensions: B
sentences, K rows per sentence (N = B * K), S source length, T target steps so far, H heads, E head
size, V vocabulary.

With IO binding (always on CUDA), the cross keys and values stay on the device where the encoder
wrote them (gathered there when ``select`` drops sentences), the mask is uploaded once per batch,
the cache stays on the device between steps and the step graph itself takes the rows a beam search
keeps (``ort_model.fold_reorder_into``: the reorder is an index bound with the next step, not a run
of its own); only the scores and attention rows come back to the host. A cache tensor written as
[B', K', ...] by one step is read as flat rows [N', ...] by the next, which gathers and regroups
them: both bind its one buffer with the shape they need, without a copy.

Bad words (the generation config's ``bad_words_ids`` other than ``<pad>``, which the search bans
anyway) are dropped on the host from each row's best ``candidates + len(bad_words)``, so a step
asks the graph for its top-k and never brings the whole vocabulary back (only forced decoding
does; a row that must end reads eos's own log-probability, ``step(eos=True)``).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import onnxruntime as ort

from .bundle import ALIGNER, TOPK_INPUT, Bundle, BundleError, SpecialIds, layer_names, transformer_interface
from .ort_model import (CUDA, EOS_OUTPUT, REORDER_INPUT, RowsToTake, StateRows, check_provider, device_graph,
                        fold_by_default, gather_graph, load_session, on_cuda, providers_for, rows_to_take,
                        session_options, shape_of, step_graph_for, taken_rows)
from .search import EVERY, StepScores
from .shortlist import Shortlist
from .shortlist_graph import IDS_INPUT, MASK_INPUT, TOPK_OUTPUTS, ShortlistStep

SCORES = ("topk_log_probs", "topk_ids")
# The step graph's final decoder state float [N, D]: with an alignment head, each step's is kept in
# the state under this name (so a beam reorders it with the cache) for ``top_state``.
TOP_STATE = "hidden"
# The step graph's cache: per layer keys and values [B, R, H, T, E], rows grouped as prev_ids' [B, R].
CACHE_ROWS = StateRows("self", grouped_by="prev_ids")


@dataclass(frozen=True)
class TransformerEncoded:
    """An encoded batch: each decoder layer's cross keys and values float [B, H, S, E] (in the step
    graph's input order; empty with IO binding, where ``bound`` holds them); mask bool [B, S]."""

    cross: tuple[np.ndarray, ...]
    mask: np.ndarray
    repeats: int = 1  # K
    # with a lexical shortlist: the shortlist step graph's inputs for the batch's V' candidate ids,
    # and float32 [B, V']: 0 for each sentence's own candidates, -inf for the others
    vocab: dict[str, np.ndarray] | None = None
    vocab_mask: np.ndarray | None = None
    memory: np.ndarray | None = None  # float [B, S, D], the encoder output: the alignment head's keys, if any
    # with IO binding: cross (in order), then mask, as OrtValues on the binding device
    bound: tuple[Any, ...] = field(default=(), compare=False)


def without_bad_words(values: np.ndarray, ids: np.ndarray, bad: np.ndarray, keep: int) -> tuple[np.ndarray, np.ndarray]:
    """Each row's best ``keep`` candidates that are not ``bad``: values float [N, C], ids int [N, C]
    (best first, C >= keep + len(bad)) -> ([N, keep], [N, keep]), order kept."""
    order = np.argsort(np.isin(ids, bad), axis=1, kind="stable")[:, :keep]
    return np.take_along_axis(values, order, 1), np.take_along_axis(ids, order, 1)


class OrtTransformerStepModel:
    """``encode``/``expand``/``initial_state``/``step``/``reorder``/``select`` over a Transformer bundle."""

    def __init__(self, bundle: Bundle, provider: str = "cpu", threads: int = 0,
                 shortlist: Shortlist | None = None, io_binding: bool | None = None,
                 fold_reorder: bool | None = None) -> None:
        """``fold_reorder`` (IO binding only; its default): the step graph reorders the cache as it
        reads it (``ort_model.fold_reorder_into``), instead of a Gather graph run of its own."""
        self.special: SpecialIds = bundle.special_ids
        options = session_options(threads)
        providers = providers_for(provider)
        fuse = on_cuda(providers)  # graphs rewritten for CUDA's kernels (``fuse_skip_layer_norms``)
        self.encoder = load_session(device_graph(bundle.graph_path("encoder"), fuse), options, providers,
                                    bundle.graph_path("encoder").name)
        self.device = "cuda" if check_provider(provider, self.encoder) == CUDA else "cpu"
        self.io_binding = self.device == "cuda" if io_binding is None else io_binding
        self.fold_reorder = fold_by_default(self.io_binding, fold_reorder)
        # With IO binding the step graph takes its top-k count as an input and also returns each
        # row's eos log-probability (``bindable_step_graph``): one session, loaded once.
        step_path = bundle.graph_path("decoder_step")
        self.step_graph_args = (step_path, self.special.eos, True, self.io_binding, fuse,  # step_graph_for's
                                CACHE_ROWS if self.fold_reorder else None)
        self.decoder = load_session(step_graph_for(*self.step_graph_args), options, providers, step_path.name)
        self.provider = check_provider(provider, self.decoder)
        outputs = {o.name: o for o in self.decoder.get_outputs()}
        self.vocab_size = int(outputs["log_probs"].shape[-1])
        self.topk_input = TOPK_INPUT in {i.name for i in (*self.decoder.get_overridable_initializers(),
                                                          *self.decoder.get_inputs())}
        self.topk = self.vocab_size if self.topk_input else 0
        inputs = {i.name: i for i in self.decoder.get_inputs()}
        self.layers = sum(name.startswith("self_keys.") for name in inputs)
        cache = inputs["self_keys.0"]  # [B, R, H, T, E]; with the reorder folded, flat rows [N', H, T, E]
        self.heads, self.head_dim = int(cache.shape[-3]), int(cache.shape[-1])
        self.names = transformer_interface(self.layers)
        self.cross_names = self.names["step_inputs"][2:2 + 2 * self.layers]  # per layer: cross keys, values
        self.state_names = layer_names("self", self.layers)
        self.new_state_names = layer_names("new_self", self.layers)
        self.bad_words = np.array(sorted(bundle.manifest.get("bad_words", ())), dtype=np.int64)
        self.cache_dtype = np.float16 if cache.type == "tensor(float16)" else np.float32
        # with IO binding: the cross keys and values of the sentences kept, gathered where they live,
        # and the cache reordered there too unless the step graph does it
        self.reorderer = self.cross_gather = None
        if self.io_binding:
            if not self.fold_reorder:
                self.reorderer = ort.InferenceSession(
                    gather_graph(cache.type, 2 * self.layers, 0, ("rows", "heads", "steps", "head_dim")), options,
                    providers=providers)
            cross = inputs[self.cross_names[0]].type
            self.cross_gather = ort.InferenceSession(
                gather_graph(cross, 2 * self.layers, 0, ("batch", "heads", "src_len", "head_dim")), options,
                providers=providers)
        self.max_steps = int(bundle.manifest.get("max_positions", 0)) or None
        # The alignment head, if the bundle has one (nmt train-aligner --bundle): forced decoding reads links from it.
        self.aligner = None
        if ALIGNER in bundle.graphs:
            self.aligner = load_session(bundle.graph_path(ALIGNER), options, providers)
        # A lexical shortlist runs a step graph of its own that projects ``hidden`` onto the batch's
        # candidates only (worker.shortlist_graph). Pad (the decoder's start) and the bad words are
        # never candidates: what can never be produced takes no share of a row's probability.
        self.shortlist = shortlist if not self.io_binding else None  # (on a GPU the full projection is cheap)
        self.shortlist_step = self.shortlist_decoder = None
        self.never = np.union1d(self.bad_words, [self.special.pad]).astype(np.int64)
        if self.shortlist is not None:
            self.shortlist_step = ShortlistStep.of(bundle.graph_path("decoder_step"))
            self.shortlist_step.check(shortlist)
            self.shortlist_decoder = ort.InferenceSession(self.shortlist_step.graph, options, providers=providers)
        # ``step(eos=True)`` scores eos for every row beside the candidates (not on a shortlist,
        # whose candidate sets are small enough to score whole)
        self.eos_scores = self.shortlist is None

    @classmethod
    def from_bundle(cls, bundle: Bundle, provider: str = "cpu", threads: int = 0, shortlist: bool = False,
                    io_binding: bool | None = None, fold_reorder: bool | None = None) -> "OrtTransformerStepModel":
        """``shortlist``: decode onto the bundle's lexical shortlist (``BundleError`` if it has none)."""
        table = None
        if shortlist:
            if bundle.shortlist_path is None:
                raise BundleError(f"{bundle.path}: this bundle has no lexical shortlist")
            table = Shortlist.load(bundle.shortlist_path)
        return cls(bundle, provider, threads, table, io_binding, fold_reorder)

    def encode(self, src: np.ndarray, lengths: np.ndarray) -> TransformerEncoded:
        if self.max_steps and src.shape[1] > self.max_steps:
            raise BundleError(f"source of {src.shape[1]} tokens exceeds the model's {self.max_steps} positions")
        mask = np.arange(src.shape[1])[None, :] < lengths[:, None]
        if self.io_binding:
            return self._encode_bound(src, lengths, mask)
        head = self.aligner is not None  # memory: what the alignment head reads of the source
        cross = self.encoder.run(list(self.names["encoder_outputs"][0 if head else 1:]),
                                 {"src_ids": src, "src_lengths": lengths})
        memory, cross = (cross[0], cross[1:]) if head else (None, cross)
        vocab = vocab_mask = None
        if self.shortlist is not None:  # each sentence's own candidates, from its ids without padding
            own = [np.setdiff1d(self.shortlist.candidates(row[:length]), self.never, assume_unique=True)
                   for row, length in zip(src, lengths)]
            ids = np.unique(np.concatenate(own))
            vocab, vocab_mask = self.shortlist_step.inputs(ids), ShortlistStep.mask(ids, own)
        return TransformerEncoded(tuple(cross), mask, vocab=vocab, vocab_mask=vocab_mask, memory=memory)

    def _encode_bound(self, src: np.ndarray, lengths: np.ndarray, mask: np.ndarray) -> TransformerEncoded:
        """``encode`` with IO binding: the cross keys and values stay where the encoder wrote them
        (``bound``; ``cross`` is empty), the mask is uploaded, the memory (alignment head) comes back."""
        binding = self.encoder.io_binding()
        binding.bind_cpu_input("src_ids", np.ascontiguousarray(src, dtype=np.int64))
        binding.bind_cpu_input("src_lengths", np.ascontiguousarray(lengths, dtype=np.int64))
        head = self.aligner is not None
        names = list(self.names["encoder_outputs"][0 if head else 1:])
        for name in names:
            binding.bind_output(name, "cpu" if name == "memory" else self.device)
        self.encoder.run_with_iobinding(binding)
        outputs = binding.get_outputs()
        memory = outputs[0].numpy() if head else None
        return TransformerEncoded((), mask, memory=memory, bound=(*outputs[1 if head else 0:], self._upload(mask)))

    def _upload(self, array: np.ndarray) -> Any:
        return ort.OrtValue.ortvalue_from_numpy(np.ascontiguousarray(array), self.device, 0)

    def expand(self, encoded: TransformerEncoded, repeats: int) -> TransformerEncoded:
        return replace(encoded, repeats=repeats)  # the step graph reads each sentence's once for its K rows

    def select(self, encoded: TransformerEncoded, sentences: np.ndarray) -> TransformerEncoded:
        """Keep ``sentences``: their cross keys and values, mask and shortlist mask rows (the batch's
        candidate ids stay: a candidate only the dropped sentences had is -inf in every kept row).
        With IO binding the cross keys and values are gathered where they live."""
        kept = replace(encoded, mask=encoded.mask[sentences],
                       vocab_mask=None if encoded.vocab_mask is None else encoded.vocab_mask[sentences],
                       memory=None if encoded.memory is None else encoded.memory[sentences])
        if not self.io_binding:
            return replace(kept, cross=tuple(c[sentences] for c in encoded.cross))
        binding = self.cross_gather.io_binding()
        for i, value in enumerate(encoded.bound[:-1]):
            binding.bind_ortvalue_input(f"state.{i}", value)
            binding.bind_output(f"gathered.{i}", self.device)
        binding.bind_cpu_input("index", np.ascontiguousarray(sentences, dtype=np.int64))
        self.cross_gather.run_with_iobinding(binding)
        return replace(kept, bound=(*binding.get_outputs(), self._upload(kept.mask)))

    def initial_state(self, encoded: TransformerEncoded) -> dict[str, np.ndarray]:
        empty = np.zeros((encoded.mask.shape[0], self.heads, 0, self.head_dim), dtype=self.cache_dtype)
        return {name: empty for name in self.state_names}

    def step(self, prev_ids: np.ndarray, state: dict[str, np.ndarray], encoded: TransformerEncoded,
             candidates: int = 0, eos: bool = False) -> StepScores:
        """prev_ids int64 [N] -> the best ``candidates`` tokens per row (all when 0 or ``EVERY``);
        ``eos``: also each row's eos log-probability (``StepScores.eos``, float [N]).
        With a shortlist, a count or ``EVERY`` draws each row's candidates from its sentence's own,
        projected in the shortlist step graph; 0 still scores the whole vocabulary (forced decoding)."""
        if self.io_binding:
            return self._bound_step(prev_ids, state, encoded, candidates, eos)
        batch = encoded.mask.shape[0]
        n = prev_ids.shape[0]
        rows = n // batch
        feeds = {"prev_ids": prev_ids.reshape(batch, rows), "src_mask": encoded.mask,
                 **dict(zip(self.cross_names, encoded.cross)),
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
        wanted = self._wanted(candidates)
        if wanted:
            feeds[TOPK_INPUT] = np.array([wanted], dtype=np.int64)
        scores = list(SCORES) if wanted else ["log_probs"]
        extra = ["log_probs"] if eos and wanted else []  # its eos column is read on the host
        top = [TOP_STATE] if self.aligner is not None else []
        outputs = self.decoder.run([*scores, "attention", *self.new_state_names, *top, *extra], feeds)
        outputs, whole = (outputs[:-1], outputs[-1]) if extra else (outputs, outputs[0] if eos else None)
        found, attention = outputs[:len(scores)], outputs[len(scores)]
        cache = outputs[len(scores) + 1:len(outputs) - len(top)]
        new_state = {name: value.reshape(n, *value.shape[2:]) for name, value in zip(self.state_names, cache)}
        if top:
            new_state[TOP_STATE] = outputs[-1].reshape(n, -1)
        eos_scores = None if whole is None else whole.reshape(n, -1)[:, self.special.eos].copy()
        return self._scores([f.reshape(n, -1) for f in found], candidates, new_state, attention.reshape(n, -1),
                            eos_scores)

    def _wanted(self, candidates: int) -> int:
        """The step graph's top-k count for ``candidates`` per row: widened by the bad words, which
        are dropped on the host (``_scores``); 0: the whole vocabulary."""
        wanted = candidates + len(self.bad_words) if candidates > 0 else 0
        return wanted if 0 < wanted < self.vocab_size and self.topk_input else 0

    def _scores(self, found: list[np.ndarray], candidates: int, new_state: dict[str, Any],
                attention: np.ndarray, eos_scores: np.ndarray | None) -> StepScores:
        """A step's result from its scores [N, C] (top-k values and ids, or all log-probabilities):
        bad words dropped from a widened top-k, or set to -inf over the whole vocabulary."""
        if len(found) == 2:
            values, ids = found
            if self.bad_words.size:
                values, ids = without_bad_words(values, ids, self.bad_words, candidates)
            return StepScores(values, ids, new_state, attention, eos_scores)
        log_probs = found[0]
        if self.bad_words.size:
            log_probs[:, self.bad_words] = -np.inf
        return StepScores(log_probs, None, new_state, attention, eos_scores)

    def _bound_step(self, prev_ids: np.ndarray, state: dict[str, Any], encoded: TransformerEncoded,
                    candidates: int, eos: bool) -> StepScores:
        """``step`` with IO binding: the cache in and out on the device, scores and attention to the host."""
        batch = encoded.mask.shape[0]
        n = prev_ids.shape[0]
        rows = n // batch
        binding = self.decoder.io_binding()
        binding.bind_cpu_input("prev_ids", np.ascontiguousarray(prev_ids.reshape(batch, rows)))
        for name, value in zip([*self.cross_names, "src_mask"], encoded.bound):
            binding.bind_ortvalue_input(name, value)
        if self.fold_reorder:  # the cache as the last step wrote it, in flat rows, and the rows to take
            taken = taken_rows(state, lambda own: _rows(own[self.state_names[0]]))
            state = taken.state
            binding.bind_cpu_input(REORDER_INPUT, taken.index)
            for name in self.state_names:
                self._bind_rows(binding, name, state[name], (_rows(state[name]),))
        else:
            for name in self.state_names:
                self._bind_rows(binding, name, state[name], (batch, rows))
        wanted = self._wanted(candidates)
        if self.topk_input:  # an input of the rewritten step graph: 1 (unread) when the whole vocabulary is wanted
            binding.bind_cpu_input(TOPK_INPUT, np.array([wanted or 1], dtype=np.int64))
        scores = list(SCORES) if wanted else ["log_probs"]
        top = [TOP_STATE] if self.aligner is not None else []
        extra = [EOS_OUTPUT] if eos else []
        names = [*scores, "attention", *self.new_state_names, *top, *extra]  # get_outputs keeps this order
        for name in names:
            binding.bind_output(name, self.device if name in self.new_state_names else "cpu")
        self.decoder.run_with_iobinding(binding)
        outputs = dict(zip(names, binding.get_outputs()))
        new_state: dict[str, Any] = {name: outputs[f"new_{name}"] for name in self.state_names}
        if top:
            new_state[TOP_STATE] = outputs[TOP_STATE].numpy().reshape(n, -1)
        eos_scores = outputs[EOS_OUTPUT].numpy().reshape(n) if eos else None
        return self._scores([outputs[name].numpy().reshape(n, -1) for name in scores], candidates, new_state,
                            outputs["attention"].numpy().reshape(n, -1), eos_scores)

    def _bind_rows(self, binding, name: str, value: Any, rows: tuple[int, ...]) -> None:
        """Bind one cache tensor (host array or device OrtValue of [..., H, T, E]) as [*rows, H, T, E]:
        a device tensor's own buffer under the new shape, no copy."""
        if isinstance(value, np.ndarray):
            binding.bind_cpu_input(name, np.ascontiguousarray(value.reshape(*rows, *value.shape[-3:])))
            return
        binding.bind_input(name, self.device, 0, self.cache_dtype, [*rows, *value.shape()[-3:]], value.data_ptr())

    def reorder(self, state: dict[str, Any], index: np.ndarray) -> dict[str, Any] | RowsToTake:
        """Rows ``index`` (int64 [M]) of every state tensor; with IO binding the cache is gathered on
        the device (only the index is uploaded), or with the reorder folded into the step graph the
        rows are those the next step takes (``RowsToTake``)."""
        if self.fold_reorder:
            return rows_to_take(state, index)
        if not self.io_binding:
            return {name: value[index] for name, value in state.items()}
        binding = self.reorderer.io_binding()
        for i, name in enumerate(self.state_names):
            self._bind_rows(binding, f"state.{i}", state[name], (_rows(state[name]),))
            binding.bind_output(f"gathered.{i}", self.device)
        binding.bind_cpu_input("index", np.ascontiguousarray(index, dtype=np.int64))
        self.reorderer.run_with_iobinding(binding)
        gathered: dict[str, Any] = dict(zip(self.state_names, binding.get_outputs()))
        if TOP_STATE in state:
            gathered[TOP_STATE] = state[TOP_STATE][index]
        return gathered

    def top_state(self, state: dict[str, np.ndarray] | RowsToTake) -> np.ndarray:
        """The final decoder state of the step that returned ``state``: float32 [N, D]. Needs a bundle
        with an alignment head (the state keeps it only then)."""
        if isinstance(state, RowsToTake):
            return self.top_state(state.state)[state.index]
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


def _rows(value: Any) -> int:
    """Rows of a cache tensor [..., H, T, E] (a host array or an OrtValue): the product of its leading dimensions."""
    return int(np.prod(shape_of(value)[:-3]))
