"""Lossy variants of the fp32 graphs: int8 dynamic quantization and fp16 conversion.

int8: ``quantize_dynamic`` has no GRU kernel (only LSTM), so GRU nodes stay fp32; MatMul and Gemm
weights become int8 (MatMulInteger / DynamicQuantizeMatMul with on-the-fly activation
quantization), except matrix-vector products (the additive attention's v_a: one output column),
where quantizing the [B, S, A] input would cost more than the product saves, and lose accuracy.
fp16 is a GPU artifact: on CPU, ONNX Runtime runs it in fp32 behind casts.
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import onnx
from onnx import TensorProto


def quantize_int8(src: Path, dst: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    proto = onnx.load(str(src))
    del proto.graph.value_info[:]  # stale shapes make quantize_dynamic's shape inference fail
    untie_shared_weights(proto)
    cleared = dst.with_suffix(".fp32-noinfo.onnx")
    onnx.save(proto, str(cleared))
    try:
        quantize_dynamic(str(cleared), str(dst), weight_type=QuantType.QInt8, nodes_to_exclude=vector_products(proto))
    finally:
        cleared.unlink(missing_ok=True)


def vector_products(proto: onnx.ModelProto) -> list[str]:
    """Names of MatMul nodes whose constant weight has a single output column."""
    columns = {init.name: init.dims[-1] for init in proto.graph.initializer if len(init.dims) == 2}
    return [node.name for node in proto.graph.node
            if node.op_type == "MatMul" and columns.get(node.input[1]) == 1]


def untie_shared_weights(proto: onnx.ModelProto) -> int:
    """Give every user of a shared weight matrix its own copy; returns the copies made.

    Tied target embeddings are one initializer read by a Gather (embedding lookup) and a Gemm
    (output projection, transB=1). quantize_dynamic transposes a Gemm's weight in place, which
    would hand the Gather a transposed table.
    """
    initializers = {init.name: init for init in proto.graph.initializer if len(init.dims) >= 2}
    seen: set[str] = set()
    copies = 0
    for node in proto.graph.node:
        for position, name in enumerate(node.input):
            if name not in initializers:
                continue
            if name in seen:
                copy = TensorProto()
                copy.CopyFrom(initializers[name])
                copy.name = f"{name}.untied{copies}"
                proto.graph.initializer.append(copy)
                node.input[position] = copy.name
                copies += 1
            seen.add(name)
    return copies


def convert_fp16(src: Path, dst: Path) -> None:
    from onnxruntime.transformers.float16 import convert_float_to_float16

    proto = onnx.load(str(src))
    # keep_io_types=True yields a decoder ORT refuses to load (the attention output is also used
    # inside the graph); with False, float inputs and outputs are fp16 too.
    onnx.save(convert_float_to_float16(proto, keep_io_types=False), str(dst))


def graph_census(path: Path) -> Counter:
    """Op types and initializer element types of a graph, e.g. {"GRU": 2, "weights:float32": 14}."""
    proto = onnx.load(str(path), load_external_data=False)
    census = Counter(node.op_type for node in proto.graph.node)
    for init in proto.graph.initializer:
        census[f"weights:{TensorProto.DataType.Name(init.data_type).lower()}"] += 1
    return census


def describe_change(before: Path, after: Path) -> dict[str, dict[str, int]]:
    """What changed between two graphs, as {op type or "weights:dtype": {"before": n, "after": m}}."""
    a, b = graph_census(before), graph_census(after)
    return {key: {"before": a[key], "after": b[key]} for key in sorted(set(a) | set(b)) if a[key] != b[key]}
