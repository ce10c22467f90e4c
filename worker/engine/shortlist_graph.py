"""The step graph that projects onto a lexical shortlist, derived from a bundle's step graph.

ONNX Runtime runs every node of a graph whatever outputs are asked for, so decoding onto a
shortlist needs a graph without the full vocabulary projection. ``ShortlistStep.of`` derives one
in memory from the bundle's step graph (the bundle's files, and so its signature, are unchanged),
for either decoder family: the weights of the projection chain from the tensor it starts from
(``readout`` of a GRU step graph, ``hidden`` of a Transformer's) to ``log_probs`` that have a
vocabulary axis (fp32: the Gemm's or MatMul's weight and the bias; int8: the quantized weight and
the bias) become inputs (``shortlist.<weight name>``), fed per batch with the candidates' rows
only, taken from those same weights. So the candidates' scores are the full graph's own (int8
stays int8), normalised over the candidates:

    readout [N, R] (or hidden [B, K, D]) -> the graph's projection onto V' rows -> + shortlist_mask
    [B, V'] (0 for a sentence's own candidates, -inf for the rest of the batch's) -> log-softmax
    over V' -> TopK(topk) -> topk_log_probs [N, k] (or [B, K, k]), topk_ids = shortlist_ids[top
    positions], of the same shape

The batch's candidates V' are the union of its sentences' own; the mask keeps each sentence to its
own, so a sentence translates the same whatever else shares its batch (other jobs' sentences in
the worker, a segment cache's hits taken out).

The other outputs (``ShortlistStep.kept``: a GRU's ``new_state`` and ``attention``, a Transformer's
``attention`` and its ``new_self_*`` caches) and every other node are the step graph's own.
Shapes: B sentences, N decoder rows (K adjacent per sentence), R readout size, D model size, V
vocabulary, V' the batch's candidates (``worker.shortlist``).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from .bundle import READOUT_OUTPUT as READOUT
from .bundle import TOPK_INPUT, BundleError
from .shortlist import Shortlist

IDS_INPUT = "shortlist_ids"
MASK_INPUT = "shortlist_mask"
LOG_PROBS = "log_probs"
HIDDEN = "hidden"  # a Transformer step graph's final decoder state, which its output projection reads
KEPT_OUTPUTS = ("new_state", "attention")  # a GRU step graph's
TOPK_OUTPUTS = ("topk_log_probs", "topk_ids")


def projection_layout(outputs: list[str]) -> tuple[str, tuple[str, ...]] | None:
    """The step graph output the vocabulary projection starts from and the outputs a shortlist step
    keeps, of a GRU step graph (``readout``; ``new_state``, ``attention``) or a Transformer's
    (``hidden``; ``attention`` and every ``new_self_*`` cache, in the graph's order); None if the
    graph has neither start."""
    if READOUT in outputs:
        return READOUT, KEPT_OUTPUTS
    if HIDDEN in outputs:
        return HIDDEN, ("attention", *(name for name in outputs if name.startswith("new_self_")))
    return None


@dataclass(frozen=True)
class ShortlistStep:
    """A step graph projecting onto given candidates, and the vocabulary rows it is fed from."""

    graph: bytes  # serialized ONNX model
    rows: dict[str, tuple[np.ndarray, int]]  # input name -> (the full weight, its vocabulary axis)
    vocab: int  # V
    kept: tuple[str, ...] = KEPT_OUTPUTS  # its outputs after TOPK_OUTPUTS: the step graph's own

    @classmethod
    def of(cls, path: Path) -> "ShortlistStep":
        """Derive it from the step graph at ``path``; ``BundleError`` if the graph lacks what it
        needs (``readout`` or ``hidden``, ``log_probs`` and top-k outputs, the ``topk`` input)."""
        model = onnx.load(str(path))
        graph = model.graph
        outputs = {o.name: o for o in graph.output}
        start, kept = projection_layout(list(outputs)) or (READOUT, KEPT_OUTPUTS)
        missing = [n for n in (start, LOG_PROBS, *kept, *TOPK_OUTPUTS) if n not in outputs]
        if missing or TOPK_INPUT not in {i.name for i in graph.input}:
            raise BundleError(f"{path.name}: a lexical shortlist needs a step graph with readout (or hidden) and "
                              f"top-k outputs and a topk input (missing: {', '.join(missing) or TOPK_INPUT}); "
                              "re-export the bundle")
        vocab = outputs[LOG_PROBS].type.tensor_type.shape.dim[-1].dim_value
        chain = _between(graph, start, LOG_PROBS)
        initializers = {init.name: init for init in graph.initializer}
        rows: dict[str, tuple[np.ndarray, int]] = {}
        for node in (graph.node[i] for i in sorted(chain)):
            for name in node.input:
                if name in initializers and name not in rows and vocab in initializers[name].dims:
                    axes = [a for a, d in enumerate(initializers[name].dims) if d == vocab]
                    if len(axes) != 1:
                        raise BundleError(f"{path.name}: cannot tell the vocabulary axis of {name} "
                                          f"{list(initializers[name].dims)}")
                    rows[name] = (numpy_helper.to_array(initializers[name]), axes[0])
        topk = next((node for node in graph.node if TOPK_OUTPUTS[1] in node.output), None)
        if not rows or vocab <= 0 or topk is None:
            raise BundleError(f"{path.name}: no vocabulary projection found between {start} and log_probs")

        # The chain's weights with a vocabulary axis become inputs of V' rows (under names of their
        # own: a weight tied to the target embedding also stays an initializer for the embedding).
        rows = {f"shortlist.{name}": row for name, row in rows.items()}
        for node in (graph.node[i] for i in chain):
            for slot, name in enumerate(node.input):
                if f"shortlist.{name}" in rows:
                    node.input[slot] = f"shortlist.{name}"
        for name, (array, axis) in rows.items():
            dims: list[int | str] = list(array.shape)
            dims[axis] = "candidates"
            graph.input.append(helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(array.dtype), dims))
        graph.input.append(helper.make_tensor_value_info(IDS_INPUT, TensorProto.INT64, ["candidates"]))
        _mask_before_log_softmax(graph, outputs[start].type.tensor_type.elem_type)
        positions = "shortlist_top_positions"
        topk.output[1] = positions  # positions among the candidates -> vocabulary ids
        graph.node.append(helper.make_node("Gather", [IDS_INPUT, positions], [TOPK_OUTPUTS[1]], axis=0,
                                           name="shortlist_ids_gather"))
        wanted = [outputs[name] for name in (*TOPK_OUTPUTS, *kept)]
        del graph.output[:]
        graph.output.extend(wanted)
        _prune(graph)
        return cls(model.SerializeToString(), rows, int(vocab), kept)

    def check(self, shortlist: Shortlist) -> None:
        """``BundleError`` if ``shortlist`` names a target id beyond this graph's vocabulary."""
        if shortlist.largest_id >= self.vocab:
            raise BundleError(f"the lexical shortlist names target id {shortlist.largest_id}, beyond the "
                              f"vocabulary of {self.vocab}")

    def inputs(self, ids: np.ndarray) -> dict[str, np.ndarray]:
        """The inputs of a batch whose candidates are ``ids`` (int64 [V'], sorted): each weight's
        rows of those ids, and the ids."""
        return {name: np.take(array, ids, axis=axis) for name, (array, axis) in self.rows.items()} | {IDS_INPUT: ids}

    @staticmethod
    def mask(ids: np.ndarray, own: list[np.ndarray]) -> np.ndarray:
        """The ``shortlist_mask`` input: float32 [B, V'], 0 where candidate ``ids[j]`` is among
        sentence b's ``own`` candidates (each a sorted subset of ``ids``), -inf elsewhere."""
        mask = np.full((len(own), len(ids)), -np.inf, dtype=np.float32)
        for row, listed in zip(mask, own):
            row[np.searchsorted(ids, listed)] = 0.0
        return mask


def _mask_before_log_softmax(graph: onnx.GraphProto, elem_type: int) -> None:
    """Add ``shortlist_mask`` [B, V'] to the logits [N, V'] (or [B, K, V']) before the log-softmax,
    each sentence's row to its N / B decoder rows (adjacent), so that every sentence is scored over
    its own candidates only: its translation does not depend on the other sentences of its batch.
    The masked logits keep the logits' shape."""
    log_softmax = next(node for node in graph.node if LOG_PROBS in node.output)
    logits = log_softmax.input[0]
    graph.input.append(helper.make_tensor_value_info(MASK_INPUT, elem_type, ["sentences", "candidates"]))
    graph.initializer.extend([numpy_helper.from_array(np.array(v, dtype=np.int64), name) for name, v in (
        ("shortlist.minus_one", [-1]), ("shortlist.one", [1]), ("shortlist.zero", [0]), ("shortlist.two", [2]))])
    nodes = [
        ("Shape", [MASK_INPUT], ["shortlist.mask_shape"], {}),
        ("Slice", ["shortlist.mask_shape", "shortlist.zero", "shortlist.one"], ["shortlist.sentences"], {}),
        ("Slice", ["shortlist.mask_shape", "shortlist.one", "shortlist.two"], ["shortlist.count"], {}),
        ("Concat", ["shortlist.sentences", "shortlist.minus_one", "shortlist.count"], ["shortlist.grouped_shape"], {"axis": 0}),
        ("Concat", ["shortlist.sentences", "shortlist.one", "shortlist.count"], ["shortlist.mask_grouped_shape"], {"axis": 0}),
        ("Shape", [logits], ["shortlist.logits_shape"], {}),
        ("Reshape", [logits, "shortlist.grouped_shape"], ["shortlist.grouped_logits"], {}),
        ("Reshape", [MASK_INPUT, "shortlist.mask_grouped_shape"], ["shortlist.grouped_mask"], {}),
        ("Add", ["shortlist.grouped_logits", "shortlist.grouped_mask"], ["shortlist.masked"], {}),
        ("Reshape", ["shortlist.masked", "shortlist.logits_shape"], ["shortlist.masked_logits"], {}),
    ]
    at = list(graph.node).index(log_softmax)
    for offset, (op, inputs, outputs, attrs) in enumerate(nodes):
        graph.node.insert(at + offset, helper.make_node(op, inputs, outputs, name=outputs[0], **attrs))
    log_softmax.input[0] = "shortlist.masked_logits"


def _between(graph: onnx.GraphProto, source: str, target: str) -> set[int]:
    """Indices of the nodes on a path from tensor ``source`` to tensor ``target``."""
    after: set[str] = {source}
    for node in graph.node:  # graph order is topological
        if any(name in after for name in node.input):
            after.update(node.output)
    return _ancestors(graph, [target], after)


def _ancestors(graph: onnx.GraphProto, tensors: list[str], within: set[str] | None = None) -> set[int]:
    """Indices of the nodes the ``tensors`` depend on (subgraphs' outer references included), only
    through nodes with an output in ``within`` when it is given."""
    producer = {name: i for i, node in enumerate(graph.node) for name in node.output}
    found: set[int] = set()
    todo = list(tensors)
    while todo:
        index = producer.get(todo.pop())
        if index is None or index in found:
            continue
        node = graph.node[index]
        if within is not None and not any(name in within for name in node.output):
            continue
        found.add(index)
        todo += [name for name in node.input if name] + _outer_inputs(node)
    return found


def _outer_inputs(node: onnx.NodeProto) -> list[str]:
    """Tensors a node's subgraphs (If, Loop, Scan bodies) read."""
    return [name for attr in node.attribute if attr.type == onnx.AttributeProto.GRAPH
            for sub in attr.g.node for name in sub.input]


def _prune(graph: onnx.GraphProto) -> None:
    """Drop the nodes no output needs, then unused initializers, inputs and stale value infos."""
    needed = _ancestors(graph, [o.name for o in graph.output])
    kept = [node for i, node in enumerate(graph.node) if i in needed]
    del graph.node[:]
    graph.node.extend(kept)
    used = {name for node in graph.node for name in [*node.input, *_outer_inputs(node)]}
    for field in (graph.initializer, graph.input):
        keep = [item for item in field if item.name in used]
        del field[:]
        field.extend(keep)
    del graph.value_info[:]  # shapes of dropped or resized tensors; ONNX Runtime infers the rest
