"""Export an imported model's two graphs to ONNX (torch's dynamo exporter) with symbolic batch,
beam, source length and cache length, and check them against torch (``graph_parity``)."""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import onnx
import torch

from worker.engine.bundle import tensor_kind, transformer_interface

from ..graphs import OPSET, drop_stack_traces, expose_topk
from ..parity import _Differences
from .torch_model import EncoderGraph, MarianModel, StepGraph

# Example sizes unlike any model dimension, so a frozen one is easy to spot; parity runs others.
EXAMPLE = {"lengths": (7, 4, 2), "beam": 2, "steps": 3}
PARITY = (((9, 3), 3, (0, 1, 5)), ((1,), 1, (0, 2)), ((12, 12, 6, 1), 2, (0, 4)))  # (lengths, beam, cache steps)
DIMS = {
    "memory": ("batch", "src_len", None), "cross": ("batch", None, "src_len", None),
    "log_probs": ("batch", "beam", None), "new_self": ("batch", "beam", None, "next_steps", None),
    "attention": ("batch", "beam", "src_len"), "topk_log_probs": ("batch", "beam", "candidates"),
    "topk_ids": ("batch", "beam", "candidates"), "hidden": ("batch", "beam", None),
}


def example_source(model: MarianModel, lengths, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """A padded batch of random source ids (pad where past a sentence's length)."""
    spec = model.spec
    src = torch.full((len(lengths), max(lengths)), spec.pad_id, dtype=torch.long)
    for row, n in enumerate(lengths):
        src[row, :n] = torch.randint(0, spec.source_vocab_size - 1, (n,), generator=generator)
        src[row, n - 1] = spec.eos_id
    return src, torch.tensor(lengths, dtype=torch.long)


def step_inputs(model: MarianModel, cross: tuple[torch.Tensor, ...], lengths, beam: int, steps: int,
                generator: torch.Generator) -> tuple[torch.Tensor, ...]:
    """Step inputs: random prev ids [B, R], the source mask, the encoder's keys and values per
    layer, and a random cache of ``steps`` steps per layer."""
    spec = model.spec
    batch = len(lengths)
    prev = torch.randint(0, spec.target_vocab_size, (batch, beam), generator=generator)
    shape = (batch, beam, spec.heads, steps, spec.head_dim)
    mask = torch.arange(max(lengths))[None, :] < torch.tensor(lengths)[:, None]
    cache = [torch.randn(shape, generator=generator) for _ in range(2 * spec.decoder_layers)]
    return (prev, mask, *cross, *cache)


def export_graphs(model: MarianModel, out_dir: Path) -> dict[str, Path]:
    """Write ``encoder.onnx`` and ``decoder_step.onnx`` (fp32); returns their paths."""
    model = model.eval()
    names = transformer_interface(model.spec.decoder_layers)
    generator = torch.Generator().manual_seed(0)
    src, lengths = example_source(model, EXAMPLE["lengths"], generator)
    encoder, step = EncoderGraph(model).eval(), StepGraph(model).eval()
    with torch.no_grad():
        cross = encoder(src, lengths)[1:]
    step_args = step_inputs(model, cross, EXAMPLE["lengths"], EXAMPLE["beam"], EXAMPLE["steps"], generator)
    batch, src_len = torch.export.Dim("batch"), torch.export.Dim("src_len")
    beam, steps = torch.export.Dim("beam"), torch.export.Dim("steps")
    paths = {"encoder": Path(out_dir) / "encoder.onnx", "decoder_step": Path(out_dir) / "decoder_step.onnx"}
    _export(encoder, (src, lengths), paths["encoder"], names["encoder_inputs"], names["encoder_outputs"],
            {"src_ids": {0: batch, 1: src_len}, "src_lengths": {0: batch}})
    layers = model.spec.decoder_layers
    dynamic = ({0: batch, 1: beam}, {0: batch, 1: src_len}, *[{0: batch, 2: src_len}] * (2 * layers),
               *[{0: batch, 1: beam, 3: steps}] * (2 * layers))
    _export(step, step_args, paths["decoder_step"], names["step_inputs"], names["step_outputs"],
            {"prev_ids": dynamic[0], "src_mask": dynamic[1], "caches": dynamic[2:]}, topk=step.topk)
    return paths


def _export(module, args, path: Path, inputs, outputs, dynamic_shapes, topk: int = 0) -> None:
    with warnings.catch_warnings(), torch.no_grad():
        warnings.filterwarnings("ignore", message=".*will not be used, since it shares the same shape constraints.*")
        program = torch.onnx.export(module, args, dynamo=True, opset_version=OPSET, input_names=list(inputs),
                                    output_names=list(outputs), dynamic_shapes=dynamic_shapes, verbose=False)
    proto = program.model_proto
    drop_stack_traces(proto)
    if topk:
        expose_topk(proto, topk)
    for output in proto.graph.output:
        for dim, name in zip(output.type.tensor_type.shape.dim, DIMS[tensor_kind(output.name)]):
            if name is not None:
                dim.Clear()
                dim.dim_param = name
    del proto.graph.value_info[:]
    onnx.checker.check_model(proto, full_check=True)
    onnx.save(proto, str(path))


def graph_parity(model: MarianModel, encoder_session, step_session, tolerance: float = 1e-4) -> dict[str, float]:
    """Max abs difference of every graph output (per kind: the layers' caches together), torch vs
    ONNX Runtime, at batch sizes, beams, source lengths and cache lengths (0 included) never seen
    at export. Raises ``ParityError``."""
    model = model.eval()
    names = transformer_interface(model.spec.decoder_layers)
    encoder, step = EncoderGraph(model), StepGraph(model)
    diffs = _Differences()
    generator = torch.Generator().manual_seed(1)
    for lengths, beam, cache_steps in PARITY:
        src, lens = example_source(model, lengths, generator)
        with torch.no_grad():
            expected = encoder(src, lens)
        got = encoder_session.run(list(names["encoder_outputs"]), {"src_ids": src.numpy(), "src_lengths": lens.numpy()})
        valid = torch.arange(src.shape[1])[None, :] < lens[:, None]  # past a sentence's length: never attended
        for name, e, g in zip(names["encoder_outputs"], expected, got):
            diffs.record(tensor_kind(name), _masked(e, valid, name), _masked(torch.from_numpy(g), valid, name).numpy())
        for steps in cache_steps:
            args = step_inputs(model, expected[1:], lengths, beam, steps, generator)
            with torch.no_grad():
                reference = step(*args)
            feeds = {name: arg.numpy() for name, arg in zip(names["step_inputs"], args)}
            outputs = step_session.run(list(names["step_outputs"]), feeds)
            for name, e, g in zip(names["step_outputs"], reference, outputs):
                if name == "topk_ids":  # ties may order differently; the values are compared
                    continue
                diffs.record(tensor_kind(name), e, np.asarray(g))
    return diffs.checked(tolerance)




def _masked(value: torch.Tensor, valid: torch.Tensor, name: str) -> torch.Tensor:
    """``value`` with positions past each sentence's length zeroed (memory [B, S, D]; keys [B, H, S, E])."""
    if name == "memory":
        return value * valid[:, :, None]
    return value * valid[:, None, :, None]
