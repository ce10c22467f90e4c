"""Bundle -> torch model: rebuild the ``Seq2Seq`` an fp32 bundle was exported from.

    python -m export.recover BUNDLE --out CHECKPOINT    # a checkpoint ``nmt export`` accepts again

For users who kept the bundle but not the checkpoint (the decoding benchmark's PyTorch baseline,
fine-tuning, inspection). The exporter keeps most parameters under their torch names; the rest it
folds into anonymous constants, which this module finds by their place in the graph:

    GRU nodes, in graph order   -> encoder forward_rnns.0, backward_rnns.0, forward_rnns.1, ...
      input B [1, 6H]           -> bias_ih, bias_hh (ONNX gate order z, r, h; torch's r, z, n)
      inputs W, R [1, 3H, in]   -> weight_ih, weight_hh when the exporter folded them to constants
                                   (small models); otherwise they are named parameters
    MatMul(annotations, K)     -> attention.key_proj.weight = K^T        (encoder; additive, general)
    MatMul(tanh, v [A, 1])     -> attention.v.weight = v^T                (decoder step; additive)
    MatMul(x, W^T) of a Linear -> MODULE.weight = W, MODULE from the node's name scope (the
                                  exporter's metadata): the Transformer encoder's layers

Tied target embeddings are restored from ``decoder.output.weight``. The result is then checked with
``export.parity.graph_parity`` against the bundle's own graphs, so a wrong mapping cannot pass
silently.
"""
from __future__ import annotations

import ast
import sys
from pathlib import Path

import numpy as np
import onnx
import torch
from onnx import numpy_helper

from training.checkpoint import save_checkpoint
from training.config import Config, ModelConfig
from training.data import Vocabs
from training.model import ModelSpec, Seq2Seq
from training.vocab import Vocab
from worker.engine.bundle import Bundle, load_bundle
from worker.engine.ort_model import OrtStepModel

from .parity import graph_parity

GRAPH_PREFIX = "model."
NAME_SCOPES = "pkg.torch.onnx.name_scopes"  # per-node metadata of the exporter: the module path


class RecoverError(ValueError):
    """The bundle cannot be turned back into a torch model; the message names the reason."""


def recover_model(bundle: Bundle | Path | str, verify: bool = True) -> tuple[Seq2Seq, ModelSpec]:
    """Rebuild the torch model of an fp32 bundle (eval mode), verified against its graphs."""
    if not isinstance(bundle, Bundle):
        bundle = load_bundle(Path(bundle))
    if bundle.manifest["precision"] != "fp32":
        raise RecoverError(f"bundle {bundle.path} is {bundle.manifest['precision']}; only fp32 bundles hold the "
                           "exact weights")
    vocab = bundle.manifest["vocab"]
    spec = ModelSpec(ModelConfig(**bundle.manifest["model_config"]), vocab["source"]["size"], vocab["target"]["size"])
    model = spec.build().eval()
    weights: dict[str, np.ndarray] = {}
    gru_modules = [f"encoder.{direction}_rnns.{layer}" for layer in range(spec.config.enc_layers)
                   for direction in ("forward", "backward")] if spec.config.encoder == "gru" else []
    for name in ("encoder", "decoder_step"):
        weights.update(_graph_weights(onnx.load(str(bundle.graph_path(name))), gru_modules))
    if spec.config.tie_target_embeddings:
        weights.setdefault("decoder.embed.weight", weights.get("decoder.output.weight"))
    expected = set(model.state_dict())
    missing = sorted(expected - {k for k, v in weights.items() if v is not None})
    if missing:
        raise RecoverError(f"bundle {bundle.path}: cannot find {', '.join(missing)} in the graphs")
    state = {k: torch.from_numpy(np.array(weights[k], dtype=np.float32)) for k in expected}
    model.load_state_dict(state)
    if verify:
        graph_parity(model, OrtStepModel.from_bundle(bundle, "cpu", threads=1))
    return model, spec


def write_checkpoint(bundle: Bundle | Path | str, out: Path) -> Path:
    """Recover the model of an fp32 bundle into a checkpoint (config and vocabularies included) that
    ``nmt export`` and ``python -m training.evaluate`` accept. Training state (optimizer, progress)
    is not in a bundle, so the checkpoint cannot ``--resume``."""
    if not isinstance(bundle, Bundle):
        bundle = load_bundle(Path(bundle))
    model, spec = recover_model(bundle)
    joint = bool(bundle.manifest["vocab"].get("joint"))
    src = Vocab.load(bundle.vocab_path("source"))
    vocabs = Vocabs(src, src if joint else Vocab.load(bundle.vocab_path("target")), joint=joint)
    config = Config.from_dict(bundle.manifest.get("training", {}).get("config"))
    training = bundle.manifest.get("training", {})
    progress = {"epoch": training.get("epochs"), "step": training.get("steps"),
                "elapsed": training.get("train_seconds") or 0.0, "best_bleu": training.get("best_valid_bleu_greedy")}
    save_checkpoint(Path(out), config=config, spec=spec, vocabs=vocabs, model=model, progress=progress,
                    recovered_from=bundle.manifest["signature"])
    return Path(out)


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m export.recover", description=write_checkpoint.__doc__)
    parser.add_argument("bundle")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    try:
        path = write_checkpoint(args.bundle, Path(args.out))
    except (RecoverError, ValueError, OSError) as exc:
        print(f"recover: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {path}")
    return 0


def _graph_weights(proto: onnx.ModelProto, gru_modules: list[str]) -> dict[str, np.ndarray]:
    """Torch parameter name -> array, for every parameter this graph holds."""
    graph = proto.graph
    init = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    producer = {out: node for node in graph.node for out in node.output}
    found = {name[len(GRAPH_PREFIX):]: value for name, value in init.items() if name.startswith(GRAPH_PREFIX)}
    grus = [node for node in graph.node if node.op_type == "GRU"]
    if grus and len(grus) != len(gru_modules):
        raise RecoverError(f"the encoder has {len(grus)} GRU nodes; the model config implies {len(gru_modules)}")
    for node, module in zip(grus, gru_modules):
        for position, kind in ((1, "ih"), (2, "hh")):
            name = node.input[position]
            if name in init:  # folded: [1, 3H, in] in z, r, h order
                found[f"{module}.weight_{kind}_l0"] = _torch_gate_order(init[name][0])
            elif _source_parameter(name, producer, init) != f"{GRAPH_PREFIX}{module}.weight_{kind}_l0":
                raise RecoverError(f"GRU node {node.name} reads {name}, not {module}.weight_{kind}_l0")
        if node.input[3] not in init:
            raise RecoverError(f"GRU node {node.name}: bias is computed, not a constant")
        bias = init[node.input[3]].reshape(2, -1)  # [W|R, 3H]
        found[f"{module}.bias_ih_l0"], found[f"{module}.bias_hh_l0"] = map(_torch_gate_order, bias)
    for node in graph.node:
        if node.op_type == "MatMul" and node.input[1] in init and not node.input[1].startswith(GRAPH_PREFIX):
            matrix = init[node.input[1]]
            module = _linear_module(node)
            if module is not None:
                found[f"{module}.weight"] = matrix.T
            elif node.input[0] == "annotations":
                found["decoder.attention.key_proj.weight"] = matrix.T
            elif matrix.ndim == 2 and matrix.shape[1] == 1:
                found["decoder.attention.v.weight"] = matrix.T
    return found


def _linear_module(node: onnx.NodeProto) -> str | None:
    """The torch module (``encoder.layers.0.ff_in``) of a MatMul the exporter made from an
    ``nn.Linear``, read from its name-scope metadata (``['', 'model.encoder', ..., 'linear_3']``);
    None when the node has none."""
    scopes = next((prop.value for prop in node.metadata_props if prop.key == NAME_SCOPES), None)
    if scopes is None:
        return None
    names = ast.literal_eval(scopes)
    if len(names) < 2 or not names[-1].startswith("linear") or not names[-2].startswith(GRAPH_PREFIX):
        return None
    return names[-2][len(GRAPH_PREFIX):]


def _torch_gate_order(x: np.ndarray) -> np.ndarray:
    """ONNX GRU gate blocks z, r, h along axis 0 -> torch's r, z, n."""
    z, r, h = np.split(x, 3, axis=0)
    return np.concatenate([r, z, h], axis=0)


def _source_parameter(name: str, producer: dict, init: dict) -> str:
    """The named parameter a value is computed from (slices, concats, unsqueezes of it)."""
    pending, seen = [name], set()
    while pending:
        current = pending.pop()
        if current in seen:
            continue
        seen.add(current)
        if current.startswith(GRAPH_PREFIX) and current in init:
            return current
        if current in producer:
            pending.extend(producer[current].input)
    raise RecoverError(f"cannot trace {name} back to a named parameter")


if __name__ == "__main__":
    sys.exit(main())
