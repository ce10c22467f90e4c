"""Export the encoder and one decoder step to ONNX with dynamic batch and source length.

The torch 2.13 exporter (``dynamo=True``) computes GRUs correctly at any length but declares
their outputs with the export example's source length; ``repair_declared_shapes`` rewrites the
graph outputs' declared dims to symbolic names and drops stale intermediate shapes.
"""
from __future__ import annotations

import logging
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
import onnx
import onnx.numpy_helper
import torch
from torch import Tensor, nn

from training.aligner import AlignmentHead
from training.greedy import pad_batch
from training.model import Seq2Seq
from training.vocab import BOS_ID, EOS_ID, PAD_ID
from worker.engine.bundle import (
    ALIGNER_INPUTS,
    ALIGNER_OUTPUTS,
    ENCODER_INPUTS,
    ENCODER_OUTPUTS,
    REVERSE_ALIGNMENT,
    STEP_INPUTS,
    STEP_OUTPUTS,
    TOPK_INPUT,
)

log = logging.getLogger(__name__)
OPSET = 18
# Candidates per row from the step graph: the default of its ``topk`` input (an overridable
# initializer: the search asks for 2 * beam + 4 each run).
TOPK = 40
# An example length unlike any model dimension, so a frozen length is easy to spot.
EXAMPLE_LENGTHS = (11, 6, 3)
# Decoder rows per sentence in the step example (a beam), so rows and sentences differ.
EXAMPLE_BEAM = 2
# Target lengths (eos included) of the aligner example: padded, unlike any model dimension.
EXAMPLE_TARGET_LENGTHS = (7, 3, 5)


class EncoderGraph(nn.Module):
    """src_ids int64 [B, S], src_lengths int64 [B] ->
    annotations float [B, S, 2H], keys float [B, S, A], init_state float [L, B, D]."""

    def __init__(self, model: Seq2Seq) -> None:
        super().__init__()
        self.model = model

    def forward(self, src_ids: Tensor, src_lengths: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        enc = self.model.encode(src_ids, src_lengths)
        return enc.annotations, enc.keys, enc.state


class DecoderStepGraph(nn.Module):
    """prev_ids int64 [N], state float [L, N, D], annotations float [B, S, 2H], keys float [B, S, A],
    src_mask bool [B, S] -> log_probs float [N, V], new_state float [L, N, D], attention float [N, S],
    topk_log_probs float [N, C], topk_ids int64 [N, C], readout float [N, R].

    N = B * K rows: each sentence's beam of K adjacent rows attends to its encoder outputs, held
    once (``Decoder.step``); K = N / B, so one encoder row per decoder row also works.

    The top-C candidates (C = ``TOPK``) let the search rank K*C candidates per sentence instead of
    K*V; ONNX Runtime computes only the outputs a run asks for, so full log-probs cost nothing
    unless requested. ``readout`` is the deep output before the vocabulary projection: a lexical
    shortlist (``worker.shortlist``) asks for it instead of the scores and projects it onto the
    candidate rows only, so the full projection never runs."""

    def __init__(self, model: Seq2Seq) -> None:
        super().__init__()
        self.model = model
        self.topk = min(TOPK, model.decoder.output.out_features)

    def forward(self, prev_ids: Tensor, state: Tensor, annotations: Tensor, keys: Tensor, src_mask: Tensor):
        decoder = self.model.decoder
        out = decoder.step(prev_ids, state, annotations, keys, src_mask)
        t = decoder.readout_vector(prev_ids, out.state[-1], out.context)
        log_probs = torch.log_softmax(decoder.output(t), dim=-1)
        top_values, top_ids = torch.topk(log_probs, self.topk, dim=-1)
        return log_probs, out.state, out.attention, top_values, top_ids, t


class FoldedDecoderStepGraph(DecoderStepGraph):
    """``DecoderStepGraph`` with the target embedding's products precomputed per vocabulary entry.

    The first GRU layer's input product W_ih [e; c] and the readout's W_r [s; e; c] both take the
    previous token's embedding e = E[y]. Split by columns, W_e e + b is a row of a table
    T = E W_e^T + b [V, 3D] (likewise the readout's [V, 2R]), looked up instead of multiplied;
    the two products of the context c share one matrix. Same function, fewer multiply-adds per
    row (1.84M -> 1.31M for the shipped model); the tables cost V x (3D + 2R) weights, so int8
    bundles use it (their tables are int8 too) and fp32 bundles, which ``export.recover`` reads
    back, do not. Inputs and outputs as ``DecoderStepGraph``.
    """

    def __init__(self, model: Seq2Seq) -> None:
        super().__init__(model)
        decoder = model.decoder
        embedding = decoder.embed.weight.detach()  # E [V, emb]
        emb, state = embedding.shape[1], decoder.hidden
        cell = decoder.cells[0]
        w_ih = cell.weight_ih.detach()  # [3D, emb + 2H]: columns e, then c
        w_r = decoder.readout_proj.weight.detach()  # [2R, D + emb + 2H]: columns s, e, c
        self.gates = w_ih.shape[0]
        self.input_table = nn.Embedding.from_pretrained(embedding @ w_ih[:, :emb].T + cell.bias_ih.detach())
        self.readout_table = nn.Embedding.from_pretrained(
            embedding @ w_r[:, state:state + emb].T + decoder.readout_proj.bias.detach())
        self.context_proj = nn.Linear(w_ih.shape[1] - emb, self.gates + w_r.shape[0], bias=False)
        self.context_proj.weight = nn.Parameter(torch.cat([w_ih[:, emb:], w_r[:, state + emb:]], 0))
        self.state_proj = nn.Linear(state, w_r.shape[0], bias=False)
        self.state_proj.weight = nn.Parameter(w_r[:, :state].clone())

    def forward(self, prev_ids: Tensor, state: Tensor, annotations: Tensor, keys: Tensor, src_mask: Tensor):
        decoder = self.model.decoder
        context, alpha = decoder.attend(state[-1], annotations, keys, src_mask)  # [N, 2H], [N, S]
        projected = self.context_proj(context)  # [N, 3D + 2R]
        gates_in = self.input_table(prev_ids) + projected[:, : self.gates]  # W_ih [e; c] + b_ih
        cell = decoder.cells[0]
        gates_h = nn.functional.linear(state[0], cell.weight_hh, cell.bias_hh)
        r_in, z_in, n_in = gates_in.chunk(3, -1)
        r_h, z_h, n_h = gates_h.chunk(3, -1)
        reset, update = torch.sigmoid(r_in + r_h), torch.sigmoid(z_in + z_h)
        h = (1 - update) * torch.tanh(n_in + reset * n_h) + update * state[0]  # torch.nn.GRUCell
        new_states = [h]
        for layer in range(1, decoder.layers):
            new_states.append(decoder.cells[layer](new_states[-1], state[layer]))
        t = self.state_proj(new_states[-1]) + self.readout_table(prev_ids) + projected[:, self.gates:]
        t = t.view(*t.shape[:-1], -1, 2).amax(-1)  # maxout over pools of 2, as Decoder.readout
        log_probs = torch.log_softmax(decoder.output(t), dim=-1)
        top_values, top_ids = torch.topk(log_probs, self.topk, dim=-1)
        return log_probs, torch.stack(new_states, 0), alpha, top_values, top_ids, t


class AlignerGraph(nn.Module):
    """The guided-alignment head (``training.aligner``): annotations float [B, S, 2H], src_mask bool
    [B, S], states float [B, T, D], target_ids int64 [B, T], attention float [B, T, S] ->
    alignment float [B, T, S], each row a distribution over the source tokens (0 at padding), and
    for a head with the reverse direction reverse_alignment float [B, T, S], each real source
    column a distribution over the target tokens (0 at target padding)."""

    def __init__(self, head: AlignmentHead) -> None:
        super().__init__()
        self.head = head

    def forward(self, annotations: Tensor, src_mask: Tensor, states: Tensor, target_ids: Tensor, attention: Tensor):
        forward, reverse = self.head.both(annotations, src_mask, states, target_ids, attention)
        return forward.exp() if reverse is None else (forward.exp(), reverse.exp())


def aligner_outputs(head: AlignmentHead) -> tuple[str, ...]:
    """The aligner graph's output names for ``head``."""
    return ALIGNER_OUTPUTS + ((REVERSE_ALIGNMENT,) if head.cfg.reverse else ())


def aligner_inputs(model: Seq2Seq, lengths: tuple[int, ...], target_lengths: tuple[int, ...],
                   seed: int = 0) -> tuple[Tensor, ...]:
    """Inputs of ``AlignerGraph`` for random sources of ``lengths`` and random targets of
    ``target_lengths`` tokens (eos included; PAD_ID after it, as forced decoding pads a batch),
    from the model's own teacher-forced run."""
    generator = torch.Generator().manual_seed(seed)
    vocab_src = model.encoder.embed.num_embeddings
    vocab_tgt = model.decoder.embed.num_embeddings
    src, src_lengths = pad_batch([torch.randint(4, vocab_src, (n,), generator=generator).tolist() for n in lengths])
    targets = torch.full((len(lengths), max(target_lengths)), PAD_ID, dtype=torch.long)
    for row, n in enumerate(target_lengths):
        targets[row, : n - 1] = torch.randint(4, vocab_tgt, (n - 1,), generator=generator)
        targets[row, n - 1] = EOS_ID
    prev = torch.cat([torch.full((len(lengths), 1), BOS_ID, dtype=torch.long), targets[:, :-1]], 1)
    with torch.no_grad():
        enc = model.encode(src, src_lengths)
        states, _, attention = model.decode_states(enc, prev)
    return enc.annotations, enc.mask, states, targets, attention


def export_aligner(model: Seq2Seq, head: AlignmentHead, out_dir: Path) -> Path:
    """Write ``aligner.onnx`` (fp32) into ``out_dir``; returns its path."""
    return export_head(head, aligner_inputs(model.eval(), EXAMPLE_LENGTHS, EXAMPLE_TARGET_LENGTHS), out_dir)


def export_head(head: AlignmentHead, example: tuple[Tensor, ...], out_dir: Path) -> Path:
    """Write ``aligner.onnx`` (fp32) of ``head`` into ``out_dir``, traced on ``example`` (its inputs
    from the model it belongs to, padded on both sides: ``aligner_inputs``); returns its path.

    The export runs in a process of its own: in torch 2.13, once a head whose target context is a
    GRU has been exported, the next export in the same process of a model with a GRU encoder
    declared the encoder's source length static (the example's), and its graph refused any other
    length. Nothing of the head's export is left in the caller's process. (Not a fork: a child forked
from a process with threads, ONNX Runtime's or torch's, can wait forever on a lock; a head made of
classes defined in a script, which a new process cannot import, is exported in the caller's.)"""
    path = Path(out_dir) / "aligner.onnx"
    if any(type(part).__module__ == "__main__" for part in head.modules()):  # a class the child cannot import
        _export_head_here(head, example, path)
        return path
    with tempfile.TemporaryDirectory() as tmp:
        inputs = Path(tmp) / "head.pt"
        torch.save({"head": head, "example": example}, inputs)
        done = subprocess.run([sys.executable, "-c", "import sys; from export.graphs import _export_head_file; "
                               "_export_head_file(sys.argv[1], sys.argv[2])", str(inputs), str(path)],
                              capture_output=True, text=True)
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines() or ["?"]
        raise RuntimeError(f"exporting the alignment head failed: {lines[-1]}")
    return path


def _export_head_file(inputs: str, path: str) -> None:
    """``export_head``'s work, in the process it starts: the head and example from ``inputs``."""
    saved = torch.load(inputs, weights_only=False)
    _export_head_here(saved["head"], tuple(saved["example"]), Path(path))


def _export_head_here(head: AlignmentHead, example: tuple[Tensor, ...], path: Path) -> None:
    batch, src_len, tgt_len = torch.export.Dim("batch"), torch.export.Dim("src_len"), torch.export.Dim("tgt_len")
    _export(AlignerGraph(head.eval()).eval(), example, path, ALIGNER_INPUTS, aligner_outputs(head),
            {"annotations": {0: batch, 1: src_len}, "src_mask": {0: batch, 1: src_len},
             "states": {0: batch, 1: tgt_len}, "target_ids": {0: batch, 1: tgt_len},
             "attention": {0: batch, 1: tgt_len, 2: src_len}})


# Declared dims of each graph output: symbolic names where the size varies.
OUTPUT_DIMS = {
    "annotations": ("batch", "src_len", None),
    "keys": ("batch", "src_len", None),
    "init_state": (None, "batch", None),
    "log_probs": ("rows", None),
    "new_state": (None, "rows", None),
    "attention": ("rows", "src_len"),
    "topk_log_probs": ("rows", "candidates"),
    "topk_ids": ("rows", "candidates"),
    "readout": ("rows", None),
    "alignment": ("batch", "tgt_len", "src_len"),
    REVERSE_ALIGNMENT: ("batch", "tgt_len", "src_len"),
}


def example_inputs(model: Seq2Seq) -> tuple[tuple[Tensor, ...], tuple[Tensor, ...]]:
    """Example encoder and step inputs (padded batch of EXAMPLE_LENGTHS; EXAMPLE_BEAM rows each)."""
    generator = torch.Generator().manual_seed(0)
    vocab = model.encoder.embed.num_embeddings
    src, lengths = pad_batch([torch.randint(4, vocab, (n,), generator=generator).tolist() for n in EXAMPLE_LENGTHS])
    with torch.no_grad():
        enc = model.encode(src, lengths)
    prev = torch.full((len(EXAMPLE_LENGTHS) * EXAMPLE_BEAM,), BOS_ID, dtype=torch.long)
    state = enc.state.repeat_interleave(EXAMPLE_BEAM, 1)
    return (src, lengths), (prev, state, enc.annotations, enc.keys, enc.mask)


def export_graphs(model: Seq2Seq, out_dir: Path, fold_embedding: bool = False) -> dict[str, Path]:
    """Write ``encoder.onnx`` and ``decoder_step.onnx`` (fp32) into ``out_dir``; returns their paths.
    ``fold_embedding``: the step graph is ``FoldedDecoderStepGraph``."""
    model = model.eval()
    enc_args, step_args = example_inputs(model)
    batch, src_len, rows = torch.export.Dim("batch"), torch.export.Dim("src_len"), torch.export.Dim("rows")
    paths = {"encoder": Path(out_dir) / "encoder.onnx", "decoder_step": Path(out_dir) / "decoder_step.onnx"}
    _export(EncoderGraph(model).eval(), enc_args, paths["encoder"], ENCODER_INPUTS, ENCODER_OUTPUTS,
            {"src_ids": {0: batch, 1: src_len}, "src_lengths": {0: batch}})
    step_graph = FoldedDecoderStepGraph(model) if fold_embedding else DecoderStepGraph(model)
    _export(step_graph.eval(), step_args, paths["decoder_step"], STEP_INPUTS, STEP_OUTPUTS,
            {"prev_ids": {0: rows}, "state": {1: rows}, "annotations": {0: batch, 1: src_len},
             "keys": {0: batch, 1: src_len}, "src_mask": {0: batch, 1: src_len}})
    return paths


def _export(module: nn.Module, args: tuple, path: Path, inputs, outputs, dynamic_shapes) -> None:
    with warnings.catch_warnings(), torch.no_grad():
        # The exporter warns that equal dims share one name (batch, src_len): that is intended.
        warnings.filterwarnings("ignore", message=".*will not be used, since it shares the same shape constraints.*")
        program = torch.onnx.export(
            module, args, dynamo=True, opset_version=OPSET, input_names=list(inputs),
            output_names=list(outputs), dynamic_shapes=dynamic_shapes, verbose=False,
        )
    proto = program.model_proto
    drop_stack_traces(proto)
    if isinstance(module, DecoderStepGraph):
        expose_topk(proto, module.topk)
    repair_declared_shapes(proto)
    onnx.checker.check_model(proto, full_check=True)
    onnx.save(proto, str(path))


STACK_TRACE = "pkg.torch.onnx.stack_trace"


def drop_stack_traces(proto: onnx.ModelProto) -> None:
    """Remove the exporter's per-node Python stack traces: they hold the exporting machine's file
    paths and source line numbers, so a bundle's bytes, and its signature, would change with them
    rather than with what the graph computes."""
    for node in proto.graph.node:
        kept = [prop for prop in node.metadata_props if prop.key != STACK_TRACE]
        del node.metadata_props[:]
        node.metadata_props.extend(kept)


def expose_topk(proto: onnx.ModelProto, default: int) -> None:
    """Make the TopK node's constant K an overridable initializer named ``topk`` (int64 [1],
    default ``default``): a run may feed a smaller K, and readers that list only required inputs
    see the same interface as before."""
    nodes = [n for n in proto.graph.node if n.op_type == "TopK"]
    if len(nodes) != 1:
        raise ValueError(f"expected one TopK node in the step graph, found {len(nodes)}")
    proto.graph.initializer.append(onnx.numpy_helper.from_array(np.array([default], dtype=np.int64), TOPK_INPUT))
    proto.graph.input.append(onnx.helper.make_tensor_value_info(TOPK_INPUT, onnx.TensorProto.INT64, [1]))
    nodes[0].input[1] = TOPK_INPUT


def repair_declared_shapes(proto: onnx.ModelProto) -> None:
    """Declare batch and source-length dims of every graph output symbolically, and clear
    intermediate ``value_info`` (which may carry the example's length and also breaks
    ``quantize_dynamic`` shape inference)."""
    for output in proto.graph.output:
        names = OUTPUT_DIMS.get(output.name)
        if names is None:
            continue
        dims = output.type.tensor_type.shape.dim
        if len(dims) != len(names):
            raise ValueError(f"graph output '{output.name}' has rank {len(dims)}, expected {len(names)}")
        for dim, name in zip(dims, names):
            if name is not None:
                dim.Clear()
                dim.dim_param = name
    del proto.graph.value_info[:]


def repair_declared_shapes_file(path: Path) -> None:
    """``repair_declared_shapes`` on a graph file: the int8 quantizer's shape inference, for one,
    declares the candidate count as the ``topk`` input's default."""
    proto = onnx.load(str(path))
    repair_declared_shapes(proto)
    onnx.save(proto, str(path))


def declared_dims(path: Path) -> dict[str, list[str | int]]:
    """Declared output dims of a graph file: symbolic names or numbers."""
    proto = onnx.load(str(path), load_external_data=False)
    return {o.name: [d.dim_param or d.dim_value for d in o.type.tensor_type.shape.dim] for o in proto.graph.output}
