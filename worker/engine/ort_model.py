"""ONNX Runtime implementation of the search's step model, over a bundle's two graphs.

Providers: ``cpu``, ``cuda`` or ``auto``. ONNX Runtime falls back to the CPU silently when the
CUDA provider cannot load, so the provider that actually runs is read back from the session
(``check_provider``): ``cuda`` requested but not running is a ``ProviderError``. A graph that
does not load is a ``BundleError`` naming the file. With IO binding (always on CUDA),
annotations, keys and the first state stay on the device where the encoder wrote them and the mask
is uploaded once per batch (a step graph that groups beams; ``select`` gathers them there when
sentences finish; older graphs repeat them per row on the host and upload them again); the
decoder state stays on the device between steps, where the step graph itself takes the rows a beam
search keeps (``fold_reorder_into``: the reorder is an index bound with the next step, not a run of
its own); only log-probabilities (each row's candidates) and attention rows come back to the host.

Encoder outputs per sentence: a bundle whose step graph groups beams (``Bundle.grouped_beams``)
reads annotations, keys and mask once per sentence for its K adjacent decoder rows, so a beam
costs no copies of them; older step graphs take them repeated once per row.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable

import numpy as np
import onnxruntime as ort

from .bundle import ALIGNER, READOUT_OUTPUT, TOPK_INPUT, Bundle, BundleError, SpecialIds
from .search import EVERY, StepScores, beam_rows
from .shortlist import Shortlist
from .shortlist_graph import IDS_INPUT, MASK_INPUT, TOPK_OUTPUTS, ShortlistStep

CUDA = "CUDAExecutionProvider"
CPU = "CPUExecutionProvider"


class ProviderError(RuntimeError):
    """The requested execution provider cannot run."""


@dataclass(frozen=True)
class OrtEncoded:
    """An encoded batch of B sentences with K decoder rows each (N = B * K; K = 1 before expand).

    annotations, keys and mask have B rows when the step graph groups beams, N rows otherwise.
    """

    annotations: Any  # float [B or N, S, 2H]: np.ndarray, or ort.OrtValue on the binding device
    keys: Any  # float [B or N, S, A]
    mask: Any  # bool [B or N, S]
    init_state: Any  # float [L, B, D]: the decoder's first state, one row per sentence
    host: "OrtEncoded | None" = None  # with IO binding, older step graphs: the same arrays on the host, for select()
    repeats: int = 1  # K
    # with a lexical shortlist: the shortlist step graph's inputs for the batch's V' candidate ids,
    # and float32 [B or N, V']: 0 for each sentence's own candidates, -inf for the others
    vocab: dict[str, np.ndarray] | None = None
    vocab_mask: np.ndarray | None = None


def session_options(threads: int = 0) -> ort.SessionOptions:
    options = ort.SessionOptions()
    options.log_severity_level = 3
    if threads:
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
    return options


def providers_for(requested: str) -> list[str]:
    """Provider list to ask ONNX Runtime for; ``cuda`` without a CUDA build is an error."""
    if requested == "cpu":
        return [CPU]
    available = ort.get_available_providers()
    if CUDA in available:
        if hasattr(ort, "preload_dlls"):  # finds pip-installed CUDA/cuDNN libraries
            try:
                ort.preload_dlls()
            except Exception:  # noqa: BLE001 - best effort; the session check below decides
                pass
        return [CUDA, CPU]
    if requested == "cuda":
        raise ProviderError(f"provider 'cuda' requested but this onnxruntime has no CUDA provider "
                            f"(available: {', '.join(available)}); install onnxruntime-gpu")
    return [CPU]


def check_provider(requested: str, session: ort.InferenceSession) -> str:
    """The provider ``session`` actually runs; ``cuda`` requested but not running is an error."""
    running = session.get_providers()[0]
    if requested == "cuda" and running != CUDA:
        raise ProviderError(f"provider 'cuda' requested but ONNX Runtime runs {running} "
                            "(the CUDA provider failed to load: check CUDA/cuDNN libraries)")
    return running


def load_session(graph: Path | bytes, options: ort.SessionOptions, providers: list[str],
                 name: str | None = None) -> ort.InferenceSession:
    """An InferenceSession over a graph file, or a serialized graph rewritten from the file ``name``;
    a graph ONNX Runtime cannot load (corrupt, unknown operator) is a ``BundleError`` naming the file."""
    try:
        return ort.InferenceSession(graph if isinstance(graph, bytes) else str(graph), options, providers=providers)
    except Exception as exc:  # onnxruntime raises its own exception types
        shown = name or (Path(graph).name if not isinstance(graph, bytes) else "a serialized graph")
        raise BundleError(f"cannot load graph {shown}: {exc}") from None


def on_cuda(providers: list) -> bool:
    """Whether ``providers`` (names, or (name, options) pairs) put CUDA first."""
    first = providers[0]
    return (first[0] if isinstance(first, tuple) else first) == CUDA


def fuse_skip_layer_norms(proto) -> int:
    """Rewrite, in place, each residual add and LayerNormalization as ONNX Runtime's
    ``com.microsoft.SkipLayerNormalization``: one kernel launch where there were two. ONNX Runtime
    makes this fusion itself only in a sum of three axes whose second has a fixed size, never in a
    step graph's rows; its Python fusion (``onnxruntime.transformers``) does, taken here only where
    the kernel runs the sum as it stands: two operands of the same rank, 2 or 3, neither broadcast
    over a fixed size-1 axis (a sum of embeddings and positions, or a graph exported with a size-1
    step axis, stays as it is). For CUDA only: on the CPU provider the fused kernel is a few
    percent slower than the two it replaces (``bench/step_kernels.py --time``). Returns how many
    were fused."""
    import onnx
    from onnx import helper
    from onnxruntime.transformers.fusion_skiplayernorm import FusionSkipLayerNormalization
    from onnxruntime.transformers.onnx_model import OnnxModel

    if not any(node.op_type == "LayerNormalization" for node in proto.graph.node):
        return 0
    # Shapes from ONNX's inference, run on the graph without its weights' data (large initializers
    # become inputs of their shape; small ones, such as a Reshape's target, keep their values).
    light = helper.make_model(
        helper.make_graph(proto.graph.node, proto.graph.name,
                          [*proto.graph.input, *(helper.make_tensor_value_info(i.name, i.data_type, list(i.dims))
                                                 for i in proto.graph.initializer if _size(i) > 1024)],
                          proto.graph.output, [i for i in proto.graph.initializer if _size(i) <= 1024]),
        opset_imports=proto.opset_import, ir_version=proto.ir_version)
    inferred = onnx.shape_inference.infer_shapes(light).graph
    shapes = {}
    for value in (*inferred.input, *inferred.value_info, *inferred.output):
        if value.type.tensor_type.HasField("shape"):
            shapes[value.name] = [d.dim_value if d.HasField("dim_value") else None
                                  for d in value.type.tensor_type.shape.dim]
    for init in inferred.initializer:
        shapes[init.name] = list(init.dims)

    def plain_sum(add) -> bool:
        a, b = (shapes.get(name) for name in add.input)
        if a is None or b is None or len(a) != len(b) or len(a) not in (2, 3):
            return False
        return all(x == y or (x != 1 and y != 1) for x, y in zip(a, b))

    class Fusion(FusionSkipLayerNormalization):
        def fuse(self, node, input_name_to_nodes, output_name_to_node):
            add = self.model.get_parent(node, 0, output_name_to_node)
            if add is not None and add.op_type == "Add" and len(add.input) == 2 and plain_sum(add):
                super().fuse(node, input_name_to_nodes, output_name_to_node)

    def count() -> int:
        return sum(node.op_type == "SkipLayerNormalization" for node in proto.graph.node)

    before = count()
    model = OnnxModel(proto)
    try:  # without the fusion's own shape check, which takes three axes only (``plain_sum`` checks instead)
        fusion = Fusion(model, shape_infer=False)
    except TypeError:  # an onnxruntime whose fusion has no such option: its own check then applies as well
        fusion = Fusion(model)
    fusion.apply()  # (removes the nodes it replaced; nothing else is pruned, graph inputs included)
    fused = count() - before
    if fused and not any(opset.domain == "com.microsoft" for opset in proto.opset_import):
        proto.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    return fused


def _size(tensor) -> int:
    """Elements of an initializer."""
    return int(np.prod(tensor.dims)) if len(tensor.dims) else 1


def device_graph(path: Path, fuse: bool) -> Path | bytes:
    """The graph at ``path``: the file itself, or with ``fuse`` (for CUDA) its serialized rewrite by
    ``fuse_skip_layer_norms`` (the file where nothing fuses)."""
    if not fuse:
        return path
    import onnx

    proto = onnx.load(str(path))
    return proto.SerializeToString() if fuse_skip_layer_norms(proto) else path


def step_graph_for(path: Path, eos: int, topk_input: bool, io_binding: bool, fuse: bool,
                   rows: "StateRows | None" = None) -> Path | bytes:
    """The step graph as a model runs it: with IO binding ``bindable_step_graph``'s rewrite (with
    ``rows``, the beam reorder folded in), else ``device_graph``'s; ``fuse`` for CUDA."""
    return bindable_step_graph(path, eos, topk_input, fuse, rows) if io_binding else device_graph(path, fuse)


# The output that ``bindable_step_graph`` adds to a step graph: each row's log-probability of eos.
EOS_OUTPUT = "eos_log_prob"
_ELEM = {"tensor(float)": 1, "tensor(bool)": 9, "tensor(float16)": 10, "tensor(double)": 11}  # ONNX data types


def bindable_step_graph(path: Path, eos: int, topk_input: bool, fuse: bool = False,
                        rows: "StateRows | None" = None) -> bytes:
    """The step graph at ``path``, serialized, as IO binding runs it.

    - ``EOS_OUTPUT`` float [..., 1] (the type of ``log_probs``): ``log_probs``' column ``eos``, so a row
      that must end is scored without bringing the whole vocabulary back to the host.
    - ``topk_input``: an overridable ``topk`` initializer (int64 [1]) becomes an input of the same
      name, since IO binding cannot bind an initializer.
    - ``fuse``: rewritten by ``fuse_skip_layer_norms`` (for CUDA).
    - ``rows``: the beam reorder folded in (``fold_reorder_into``).
    """
    import onnx
    from onnx import helper, numpy_helper

    proto = onnx.load(str(path))
    graph = proto.graph
    if topk_input and any(init.name == TOPK_INPUT for init in graph.initializer):
        kept = [init for init in graph.initializer if init.name != TOPK_INPUT]
        del graph.initializer[:]
        graph.initializer.extend(kept)
        if TOPK_INPUT not in {i.name for i in graph.input}:
            graph.input.extend([helper.make_tensor_value_info(TOPK_INPUT, onnx.TensorProto.INT64, [1])])
    log_probs = next(o for o in graph.output if o.name == "log_probs")
    graph.initializer.append(numpy_helper.from_array(np.array([eos], dtype=np.int64), f"{EOS_OUTPUT}.index"))
    graph.node.append(helper.make_node("Gather", ["log_probs", f"{EOS_OUTPUT}.index"], [EOS_OUTPUT], axis=-1))
    dims = [d.dim_param or d.dim_value or None for d in log_probs.type.tensor_type.shape.dim]
    graph.output.append(helper.make_tensor_value_info(EOS_OUTPUT, log_probs.type.tensor_type.elem_type,
                                                      [*dims[:-1], 1]))
    if fuse:
        fuse_skip_layer_norms(proto)
    if rows is not None:
        fold_reorder_into(proto, rows)
    return proto.SerializeToString()


# The input that ``fold_reorder_into`` adds to a step graph: the row of the previous step's state that
# each row of this step continues, int64 [M] (the beam reorder).
REORDER_INPUT = "state_rows"


@dataclass(frozen=True)
class StateRows:
    """Where a step graph's decoder state keeps its rows, for ``fold_reorder_into``: the state inputs are
    those of ``kind`` (``bundle.tensor_kind``), their rows along ``axis``; ``grouped_by``: None, or
    the input of [B, R] whose shape groups the rows (the state inputs then read [B, R, ...], axis 0)."""

    kind: str
    axis: int = 0
    grouped_by: str | None = None


# The GRU/hybrid step graph's state: float [L, N, D], rows along axis 1.
GRU_STATE_ROWS = StateRows("state", axis=1)


@dataclass(frozen=True, eq=False)
class RowsToTake:
    """A decoder state and the rows of it, int64 [M], that the next step reads. With the reorder
    folded into the step graph (``fold_reorder_into``) a beam's reorder is only this, on the host: no
    run of its own, no copy until the step gathers the rows as it reads them."""

    state: Any
    index: np.ndarray


def rows_to_take(state: Any, index: np.ndarray) -> RowsToTake:
    """Rows ``index`` of ``state``, which may itself be rows still to take (the indices compose)."""
    if isinstance(state, RowsToTake):
        return RowsToTake(state.state, state.index[index])
    return RowsToTake(state, np.array(index, dtype=np.int64))  # a copy: the caller may reuse its array


def taken_rows(state: Any, rows_of: Callable[[Any], int]) -> RowsToTake:
    """``state`` as a step with the reorder folded in reads it: its rows still to take, or for a state
    never reordered (the first step, forced decoding) each of its own rows (``rows_of(state)``) as it is."""
    if isinstance(state, RowsToTake):
        return state
    return RowsToTake(state, np.arange(rows_of(state), dtype=np.int64))


def fold_reorder_into(proto, rows: StateRows) -> int:
    """Rewrite, in place, a step graph so that it reorders its own decoder state: each state input
    is read at rows ``REORDER_INPUT`` (int64 [M], a new input) of what is bound to it, so a beam
    search runs one session a step instead of two (on CUDA, a run saved per step; the copy is
    the same Gather the separate reorder made). An input of ``rows.grouped_by`` [B, R] groups the
    rows: the state inputs then become flat rows [N', ...] (a [B', R', ...] output bound under
    that shape without a copy), are gathered and reshaped to [B, R, ...] with B and R read from that
    input. The state inputs' row dimension is renamed, since N' need not be this step's rows.
    Returns how many inputs now take their rows."""
    from onnx import TensorProto, helper, numpy_helper

    from .bundle import tensor_kind

    graph = proto.graph
    inputs = [i for i in graph.input if tensor_kind(i.name) == rows.kind]
    names = {i.name for i in graph.input}
    if not inputs:
        raise BundleError(f"the step graph has no '{rows.kind}' input to reorder")
    if REORDER_INPUT in names:
        raise BundleError(f"the step graph already has an input '{REORDER_INPUT}'")
    rank = 2 if rows.grouped_by is not None else rows.axis + 1
    unshaped = [i.name for i in inputs if len(i.type.tensor_type.shape.dim) < rank]
    if unshaped:
        raise BundleError(f"the step graph's inputs {unshaped} declare no shape with rows to reorder")
    if rows.grouped_by is not None:
        if rows.grouped_by not in names:
            raise BundleError(f"the step graph has no input '{rows.grouped_by}' to group its rows by")
        opset = next((o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")), 0)
        if opset < 14:  # Reshape's allowzero
            raise BundleError(f"the step graph's opset {opset} is older than 14: re-import the model")
    nodes, renamed = [], {}
    shape = f"{REORDER_INPUT}.shape"
    if rows.grouped_by is not None:  # [B, R] of this step, then the state's own trailing dimensions
        graph.initializer.append(numpy_helper.from_array(np.array([1], dtype=np.int64), f"{REORDER_INPUT}.one"))
        graph.initializer.append(numpy_helper.from_array(np.array([2 ** 62], dtype=np.int64), f"{REORDER_INPUT}.end"))
        nodes += [helper.make_node("Shape", [rows.grouped_by], [f"{shape}.outer"]),
                  helper.make_node("Shape", [inputs[0].name], [f"{shape}.all"]),
                  helper.make_node("Slice", [f"{shape}.all", f"{REORDER_INPUT}.one", f"{REORDER_INPUT}.end"],
                                   [f"{shape}.inner"]),
                  helper.make_node("Concat", [f"{shape}.outer", f"{shape}.inner"], [shape], axis=0)]
    trailing = None
    for value in inputs:
        dims = value.type.tensor_type.shape.dim
        renamed[value.name] = taken = f"{value.name}.taken"
        if rows.grouped_by is None:
            nodes.append(helper.make_node("Gather", [value.name, REORDER_INPUT], [taken], axis=rows.axis))
            dims[rows.axis].Clear()
            dims[rows.axis].dim_param = "previous_rows"
            continue
        rest = [d.dim_value or d.dim_param for d in dims[2:]]
        if trailing not in (None, rest):  # the shared shape needs the same trailing dimensions
            raise BundleError(f"the step graph's '{rows.kind}' inputs differ in shape: {trailing} and {rest}")
        trailing = rest
        nodes += [helper.make_node("Gather", [value.name, REORDER_INPUT], [f"{value.name}.flat"], axis=0),
                  # allowzero: an empty cache's 0 steps is a size, not "as the input's"
                  helper.make_node("Reshape", [f"{value.name}.flat", shape], [taken], allowzero=1)]
        del dims[:]
        for size in ("previous_rows", *rest):
            dim = dims.add()
            if isinstance(size, str):
                dim.dim_param = size
            else:
                dim.dim_value = size
    _rename_inputs(graph, renamed)
    kept_info = [v for v in graph.value_info if v.name not in renamed]  # the inputs' former shapes
    del graph.value_info[:]
    graph.value_info.extend(kept_info)
    graph.input.append(helper.make_tensor_value_info(REORDER_INPUT, TensorProto.INT64, ["rows"]))
    kept = list(graph.node)
    del graph.node[:]
    graph.node.extend([*nodes, *kept])  # the new nodes read graph inputs only: topological order holds
    return len(inputs)


def _rename_inputs(graph, renamed: dict[str, str]) -> None:
    """Every node of ``graph`` (and of its subgraphs) that reads a name in ``renamed`` reads the new name."""
    for node in graph.node:
        for i, name in enumerate(node.input):
            if name in renamed:
                node.input[i] = renamed[name]
        for attribute in node.attribute:
            for sub in (*([attribute.g] if attribute.HasField("g") else []), *attribute.graphs):
                _rename_inputs(sub, renamed)


def gather_graph(elem_type: str, count: int, axis: int, dims: tuple[str, ...]) -> bytes:
    """Serialized ONNX model: ``Gather(state.i [dims], index int64 [M], axis) -> gathered.i`` (dimension
    ``axis`` of M) for each i < ``count``, in one run; ``elem_type`` is ONNX Runtime's type of the
    tensors, e.g. ``tensor(float)``. IR version 10, opset 18: what onnxruntime >= 1.20 loads."""
    from onnx import TensorProto, helper

    kept = [*dims[:axis], "kept", *dims[axis + 1:]]
    graph = helper.make_graph(
        [helper.make_node("Gather", [f"state.{i}", "index"], [f"gathered.{i}"], axis=axis) for i in range(count)],
        "gather_state",
        [*(helper.make_tensor_value_info(f"state.{i}", _ELEM[elem_type], list(dims)) for i in range(count)),
         helper.make_tensor_value_info("index", TensorProto.INT64, ["kept"])],
        [helper.make_tensor_value_info(f"gathered.{i}", _ELEM[elem_type], kept) for i in range(count)])
    return helper.make_model(graph, ir_version=10, opset_imports=[helper.make_opsetid("", 18)]).SerializeToString()


class OrtStepModel:
    """``encode``/``expand``/``initial_state``/``step``/``reorder`` over ONNX Runtime sessions."""

    def __init__(self, encoder_path: Path, decoder_path: Path, provider: str = "cpu", threads: int = 0,
                 io_binding: bool | None = None, default_topk: int = 0, grouped_beams: bool = False,
                 shortlist: Shortlist | None = None, aligner_path: Path | None = None, *,
                 special: SpecialIds, fold_reorder: bool | None = None) -> None:
        """``fold_reorder`` (IO binding only; its default): the step graph reorders the state as it
        reads it (``ort_model.fold_reorder_into``), instead of a Gather graph run of its own."""
        self.special = special
        options = session_options(threads)
        providers = providers_for(provider)
        fuse = on_cuda(providers)  # graphs rewritten for CUDA's kernels (``fuse_skip_layer_norms``)
        self.encoder = load_session(device_graph(Path(encoder_path), fuse), options, providers, Path(encoder_path).name)
        self.device = "cuda" if check_provider(provider, self.encoder) == CUDA else "cpu"
        self.io_binding = self.device == "cuda" if io_binding is None else io_binding
        self.fold_reorder = fold_by_default(self.io_binding, fold_reorder)
        # With IO binding the step graph also returns each row's eos log-probability (``step(eos=True)``).
        self.step_graph_args = (Path(decoder_path), special.eos, False, self.io_binding, fuse,  # step_graph_for's
                                GRU_STATE_ROWS if self.fold_reorder else None)
        self.decoder = load_session(step_graph_for(*self.step_graph_args), options, providers, Path(decoder_path).name)
        self.provider = check_provider(provider, self.decoder)
        # The guided-alignment head, if the bundle has one: forced decoding reads links from it.
        self.aligner = load_session(aligner_path, options, providers) if aligner_path else None
        self.gather = None  # with IO binding and the reorder not folded: reorders the state where it lives
        self.options, self.providers = options, providers
        self.gathers: dict[tuple[str, int, int], ort.InferenceSession] = {}  # ``select`` on the device
        if self.io_binding and not self.fold_reorder:
            state_type = next(i.type for i in self.decoder.get_inputs() if i.name == "state")
            self.gather = ort.InferenceSession(gather_graph(state_type, 1, 1, ("layers", "rows", "hidden")), options,
                                               providers=providers)
        # A step graph may take the candidate count per run ("topk", an overridable initializer,
        # so readers that do not know it still see the same inputs) or have a fixed count. IO binding cannot bind an initializer: it runs with the default count.
        overridable = TOPK_INPUT in {i.name for i in self.decoder.get_overridable_initializers()}
        self.topk_input = overridable and not self.io_binding
        outputs = {o.name: o for o in self.decoder.get_outputs()}
        vocab = int(outputs["log_probs"].shape[-1])
        fixed = outputs["topk_ids"].shape[-1] if "topk_ids" in outputs else 0
        self.topk = vocab if self.topk_input else (fixed if isinstance(fixed, int) else default_topk)
        self.grouped_beams = grouped_beams
        # A lexical shortlist needs the step graph's readout output. It runs through a step graph
        # of its own that projects onto the batch's candidates only (worker.shortlist_graph); it is
        # used without IO binding only (on a GPU the full projection is cheap).
        if shortlist is not None and READOUT_OUTPUT not in outputs:
            raise BundleError(f"{Path(decoder_path).name} has no '{READOUT_OUTPUT}' output: re-export the bundle "
                              "to use a lexical shortlist")
        self.shortlist = shortlist if not self.io_binding else None
        self.shortlist_step = self.shortlist_decoder = None
        if self.shortlist is not None:
            self.shortlist_step = ShortlistStep.of(Path(decoder_path))
            self.shortlist_step.check(self.shortlist)
            self.shortlist_decoder = ort.InferenceSession(self.shortlist_step.graph, options, providers=providers)
        # ``step(eos=True)`` scores eos for every row beside the candidates (not on a shortlist,
        # whose candidate sets are small enough to score whole)
        self.eos_scores = self.shortlist is None

    @classmethod
    def from_bundle(cls, bundle: Bundle, provider: str = "cpu", threads: int = 0,
                    io_binding: bool | None = None, shortlist: bool = False,
                    fold_reorder: bool | None = None) -> "OrtStepModel":
        """``shortlist``: decode onto the bundle's lexical shortlist (``BundleError`` if it has none)."""
        table = None
        if shortlist:
            if bundle.shortlist_path is None:
                raise BundleError(f"{bundle.path}: this bundle has no lexical shortlist")
            table = Shortlist.load(bundle.shortlist_path)
        aligner = bundle.graph_path(ALIGNER) if ALIGNER in bundle.graphs else None
        return cls(bundle.graph_path("encoder"), bundle.graph_path("decoder_step"), provider, threads, io_binding,
                   int(bundle.manifest.get("topk", 0)), bundle.grouped_beams, table, aligner,
                   special=bundle.special_ids, fold_reorder=fold_reorder)

    def encode(self, src: np.ndarray, lengths: np.ndarray) -> OrtEncoded:
        mask = np.arange(src.shape[1])[None, :] < lengths[:, None]
        if self.io_binding and self.grouped_beams:
            return self._encode_bound(src, lengths, mask)
        annotations, keys, init_state = self.encoder.run(None, {"src_ids": src, "src_lengths": lengths})
        vocab = vocab_mask = None
        if self.shortlist is not None:
            own = [self.shortlist.candidates(row[:length]) for row, length in zip(src, lengths)]
            ids = np.unique(np.concatenate(own))
            vocab, vocab_mask = self.shortlist_step.inputs(ids), ShortlistStep.mask(ids, own)
        return self._place(OrtEncoded(annotations, keys, mask, init_state, vocab=vocab, vocab_mask=vocab_mask))

    def _encode_bound(self, src: np.ndarray, lengths: np.ndarray, mask: np.ndarray) -> OrtEncoded:
        """``encode`` with IO binding and a step graph that groups beams: annotations, keys and the
        first state stay on the device where the encoder wrote them (no ``host`` copy; ``select``
        gathers them there), the mask is uploaded."""
        binding = self.encoder.io_binding()
        binding.bind_cpu_input("src_ids", np.ascontiguousarray(src, dtype=np.int64))
        binding.bind_cpu_input("src_lengths", np.ascontiguousarray(lengths, dtype=np.int64))
        names = [o.name for o in self.encoder.get_outputs()]  # annotations, keys, init_state
        for name in names:
            binding.bind_output(name, self.device)
        self.encoder.run_with_iobinding(binding)
        annotations, keys, init_state = binding.get_outputs()
        return OrtEncoded(annotations, keys, self._to_device(mask), init_state)

    def expand(self, encoded: OrtEncoded, repeats: int) -> OrtEncoded:
        """K = ``repeats`` decoder rows per sentence from now on. A step graph that groups beams
        needs nothing new; for older ones the encoder outputs are repeated per row on the host,
        then (with IO binding) uploaded once for the remaining steps."""
        if self.grouped_beams or repeats == encoded.repeats:
            return replace(encoded, repeats=repeats)
        host = encoded.host or encoded
        if host.repeats != 1:
            raise ValueError(f"expand: batch already has {host.repeats} rows per sentence")
        return self._place(OrtEncoded(np.repeat(host.annotations, repeats, 0), np.repeat(host.keys, repeats, 0),
                                      np.repeat(host.mask, repeats, 0), host.init_state, repeats=repeats,
                                      vocab=host.vocab, vocab_mask=None if host.vocab_mask is None else
                                      np.repeat(host.vocab_mask, repeats, 0)))

    def select(self, encoded: OrtEncoded, sentences: np.ndarray) -> OrtEncoded:
        """Keep ``sentences`` (positions in the batch) with their rows: gathered on the device when
        the encoder's outputs live there, else selected on the host (and uploaded again with IO binding)."""
        if self.io_binding and encoded.host is None:
            return OrtEncoded(self._gather(encoded.annotations, sentences, 0), self._gather(encoded.keys, sentences, 0),
                              self._gather(encoded.mask, sentences, 0), self._gather(encoded.init_state, sentences, 1),
                              repeats=encoded.repeats)
        host = encoded.host or encoded
        rows = sentences
        if not self.grouped_beams and encoded.repeats > 1:
            rows = beam_rows(sentences, encoded.repeats)
        return self._place(OrtEncoded(host.annotations[rows], host.keys[rows], host.mask[rows],
                                      host.init_state[:, sentences], repeats=encoded.repeats, vocab=host.vocab,
                                      vocab_mask=None if host.vocab_mask is None else host.vocab_mask[rows]))

    def _gather(self, value: ort.OrtValue, index: np.ndarray, axis: int) -> ort.OrtValue:
        """Rows ``index`` along ``axis`` of a device tensor, gathered there (a one-node graph per
        type, axis and rank, made on first use)."""
        key = (value.data_type(), axis, len(value.shape()))
        if key not in self.gathers:
            dims = tuple(f"d{i}" for i in range(key[2]))
            self.gathers[key] = ort.InferenceSession(gather_graph(key[0], 1, axis, dims), self.options,
                                                     providers=self.providers)
        session = self.gathers[key]
        binding = session.io_binding()
        binding.bind_ortvalue_input("state.0", value)
        binding.bind_cpu_input("index", np.ascontiguousarray(index, dtype=np.int64))
        binding.bind_output("gathered.0", self.device)
        session.run_with_iobinding(binding)
        return binding.get_outputs()[0]

    def _place(self, host: OrtEncoded) -> OrtEncoded:
        if not self.io_binding:
            return host
        return OrtEncoded(*(self._to_device(x) for x in (host.annotations, host.keys, host.mask, host.init_state)),
                          host=host, repeats=host.repeats, vocab=host.vocab, vocab_mask=host.vocab_mask)

    def initial_state(self, encoded: OrtEncoded) -> Any:
        return encoded.init_state

    def step(self, prev_ids: np.ndarray, state: Any, encoded: OrtEncoded, candidates: int = 0,
             eos: bool = False) -> StepScores:
        """One decoder step: log-probs of the best ``candidates`` tokens per row (at least that many;
        more from graphs with a fixed count), or over the whole vocabulary when 0 (and ``EVERY``
        without a shortlist); ``eos``: also each row's eos log-probability (``StepScores.eos``).
        With a shortlist, a count or ``EVERY`` draws each row's candidates
        from its sentence's own (``worker.shortlist``), projected in the shortlist step graph
        (``worker.shortlist_graph``); 0 still scores the whole vocabulary (forced decoding)."""
        if candidates and encoded.vocab is not None and self.shortlist_decoder is not None:
            count = len(encoded.vocab[IDS_INPUT])
            count = count if candidates == EVERY else min(candidates, count)
            values, ids, new_state, attention = self.shortlist_decoder.run([*TOPK_OUTPUTS, "new_state", "attention"], {
                "prev_ids": prev_ids, "state": state, "annotations": encoded.annotations,
                "keys": encoded.keys, "src_mask": encoded.mask, **encoded.vocab, MASK_INPUT: encoded.vocab_mask,
                TOPK_INPUT: np.array([count], dtype=np.int64),
            })
            return StepScores(values, ids, new_state, attention)
        candidates = max(candidates, 0)  # EVERY is the whole vocabulary here
        scores = ["log_probs"] if not candidates or not self.topk else ["topk_log_probs", "topk_ids"]
        eos_from = ([] if not eos or len(scores) == 1 else ["log_probs"] if not self.io_binding else [EOS_OUTPUT])
        names = [*scores, "new_state", "attention", *eos_from]
        extra = {TOPK_INPUT: np.array([candidates], dtype=np.int64)} if len(scores) == 2 and self.topk_input else {}
        if not self.io_binding:
            outputs = self.decoder.run(names, {
                "prev_ids": prev_ids, "state": state, "annotations": encoded.annotations,
                "keys": encoded.keys, "src_mask": encoded.mask, **extra,
            })
        else:
            binding = self.decoder.io_binding()
            binding.bind_cpu_input("prev_ids", np.ascontiguousarray(prev_ids))
            if self.fold_reorder:  # the rows to take, by default each row of the state as it is
                taken = taken_rows(state, lambda own: shape_of(own)[1])  # the state [L, N, D]
                state = taken.state
                binding.bind_cpu_input(REORDER_INPUT, taken.index)
            _bind(binding, "state", state)
            binding.bind_ortvalue_input("annotations", encoded.annotations)
            binding.bind_ortvalue_input("keys", encoded.keys)
            binding.bind_ortvalue_input("src_mask", encoded.mask)
            for name in names:  # only the state stays on the device
                binding.bind_output(name, self.device if name == "new_state" else "cpu")
            self.decoder.run_with_iobinding(binding)
            outputs = binding.get_outputs()
            outputs = [o if n == "new_state" else o.numpy() for n, o in zip(names, outputs)]
        if len(scores) == 1:
            eos_scores = outputs[0][:, self.special.eos] if eos else None
            return StepScores(outputs[0], None, outputs[1], outputs[2], eos_scores)
        eos_scores = None
        if eos_from:  # the whole log_probs (no IO binding) or the bound graph's eos column
            eos_scores = outputs[4].reshape(len(prev_ids), -1)[:, self.special.eos if eos_from == ["log_probs"] else 0]
        return StepScores(outputs[0], outputs[1], outputs[2], outputs[3], eos_scores)

    def top_state(self, state: Any) -> np.ndarray:
        """The top layer of a step's state on the host: float32 [N, D]."""
        if isinstance(state, RowsToTake):
            return self.top_state(state.state)[state.index]
        host = state if isinstance(state, np.ndarray) else state.numpy()
        return np.asarray(host[-1], dtype=np.float32)

    def align(self, encoded: OrtEncoded, states: np.ndarray, target_ids: np.ndarray,
              attention: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """The alignment head over a teacher-forced batch (one decoder row per sentence): states float
        [B, T, D] (``top_state`` of each step), target_ids int64 [B, T], attention float [B, T, S]
        -> alignment float32 [B, T, S] (rows over the source) and, from a head with the reverse
        direction, reverse float32 [B, T, S] (columns over the target), else None. Needs a bundle with
        the ``aligner`` graph."""
        if self.aligner is None:
            raise BundleError("this bundle has no alignment head (export it from a checkpoint made by nmt train-aligner)")
        host = encoded.host or encoded
        on_host = (lambda x: x if isinstance(x, np.ndarray) else x.numpy())  # noqa: E731 - device-resident encodings
        alignment, *reverse = self.aligner.run(None, {
            "annotations": np.asarray(on_host(host.annotations), dtype=np.float32), "src_mask": on_host(host.mask),
            "states": np.asarray(states, dtype=np.float32), "target_ids": target_ids,
            "attention": np.asarray(attention, dtype=np.float32)})
        return alignment, (reverse[0] if reverse else None)

    def reorder(self, state: Any, index: np.ndarray) -> Any:
        """Rows ``index`` (int64 [M]) of ``state`` (float [L, N, D]) -> [L, M, D]; with IO binding an
        OrtValue gathered on the device (only the index is uploaded), or with the reorder folded
        into the step graph the rows the next step takes (``RowsToTake``)."""
        if self.fold_reorder:
            return rows_to_take(state, index)
        if not self.io_binding:
            return state[:, index]
        binding = self.gather.io_binding()
        binding.bind_ortvalue_input("state.0", state)
        binding.bind_cpu_input("index", np.ascontiguousarray(index, dtype=np.int64))
        binding.bind_output("gathered.0", self.device)
        self.gather.run_with_iobinding(binding)
        return binding.get_outputs()[0]

    def _to_device(self, array: np.ndarray) -> ort.OrtValue:
        return ort.OrtValue.ortvalue_from_numpy(np.ascontiguousarray(array), self.device, 0)


def fold_by_default(io_binding: bool, fold_reorder: bool | None) -> bool:
    """Whether a model folds the beam reorder into its step graph: by default with IO binding,
    and only with it (without, the state is a host array reordered in place of a run)."""
    if fold_reorder and not io_binding:
        raise ValueError("fold_reorder needs IO binding: without it the state is reordered on the host")
    return io_binding if fold_reorder is None else fold_reorder


def shape_of(value: Any) -> list[int]:
    """The shape of a host array or an OrtValue."""
    return list(value.shape) if isinstance(value, np.ndarray) else list(value.shape())


def _bind(binding, name: str, value: Any) -> None:
    """Bind a host array (copied to the device as the run needs it) or an OrtValue where it lives."""
    if isinstance(value, np.ndarray):
        binding.bind_cpu_input(name, np.ascontiguousarray(value))
    else:
        binding.bind_ortvalue_input(name, value)
