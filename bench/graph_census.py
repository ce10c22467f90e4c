"""Operators of each bundle's graphs after ONNX Runtime's own optimisation, as loaded for the CPU
and as loaded for CUDA (``worker.engine.ort_model.device_graph``: each residual add and LayerNorm
rewritten as one SkipLayerNormalization). Each node that is not a reshape is a kernel launch on a
GPU, where a step graph of a few hundred nodes is bound by launching them (docs/benchmarks.md,
CUDA). The optimisation is the CPU provider's, run here without a GPU; the CUDA provider's fuses
much the same patterns, so the counts are a close proxy of what CUDA launches. The first bundle is
the baseline of the ratios.

    python bench/graph_census.py BUNDLE [BUNDLE ...] [--graphs decoder_step,encoder]
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

ALIASES = {"Reshape", "Squeeze", "Unsqueeze", "Shape", "Flatten", "Identity"}  # no data moved


def optimised_ops(graph: Path | bytes) -> Counter:
    """Operator counts of ``graph`` as ONNX Runtime (CPU provider, all optimisations) runs it."""
    import onnx
    import onnxruntime as ort

    with tempfile.TemporaryDirectory() as tmp:
        options = ort.SessionOptions()
        options.log_severity_level = 3
        options.optimized_model_filepath = str(Path(tmp) / "optimised.onnx")
        ort.InferenceSession(graph if isinstance(graph, bytes) else str(graph), options,
                             providers=["CPUExecutionProvider"])
        proto = onnx.load(options.optimized_model_filepath, load_external_data=False)
    return Counter(node.op_type for node in proto.graph.node)


def census(bundle: Path, name: str) -> dict:
    from worker.engine.ort_model import device_graph

    path = bundle / f"{name}.onnx"
    out = {}
    for target, graph in (("cpu", path), ("cuda", device_graph(path, fuse=True))):
        ops = optimised_ops(graph)
        out[target] = {"nodes": sum(ops.values()), "launches": sum(n for op, n in ops.items() if op not in ALIASES),
                       "ops": dict(ops.most_common())}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("bundles", nargs="+", type=Path)
    parser.add_argument("--graphs", default="decoder_step,encoder")
    args = parser.parse_args()
    results = {str(b): {g: census(b, g) for g in args.graphs.split(",")} for b in args.bundles}
    base = results[str(args.bundles[0])]
    for bundle, graphs in results.items():
        for graph, targets in graphs.items():
            for target, c in targets.items():
                ratio = c["launches"] / base[graph][target]["launches"]
                print(f"{bundle} {graph} as loaded for {target}: {c['nodes']} nodes, {c['launches']} not reshapes "
                      f"({ratio:.2f}x the first bundle's)")
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
