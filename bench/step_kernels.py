"""Kernels per step: the operators of each bundle's graphs after ONNX Runtime's own optimisation,
as loaded for the CPU and as loaded for CUDA (``worker.engine.ort_model.step_graph_for`` and
``device_graph``: the step as IO binding runs it, with the beam reorder folded in, and each residual
add and LayerNorm rewritten as one SkipLayerNormalization). On a GPU most nodes that are
not reshapes are a kernel launch (shape arithmetic runs on the host), and a step graph of a few
hundred nodes is bound by launching them (docs/benchmarks.md, CUDA). The optimisation is the CPU
provider's, run here without a GPU; the CUDA provider's fuses much the same patterns, so the counts
are a proxy of what CUDA launches. The first bundle is the baseline of the ratios.

``--time`` (Transformer bundles of one interface, e.g. the two ``bench/gpu_check.py --legacy-ab``
imports): each step graph on the CPU provider, as loaded for the CPU and rewritten as for CUDA
(without the folded reorder, so that all take the same feeds: ``bench/reorder_fold.py`` times that),
taking turns on the same random feeds (``--sentences`` x 4 rows, cache length 16, 24 source
pieces; medians of 5 rounds of 20 runs), and each output's largest difference from the first
bundle's.

    python bench/step_kernels.py BUNDLE [BUNDLE ...] [--graphs decoder_step,encoder] [--time]
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

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


def loaded_for(bundle: Path, name: str, target: str, fold: bool = True) -> Path | bytes:
    """A bundle's graph as the engine loads it for ``target`` (``cpu``: plain; ``cuda``: bound, fused,
    and with ``fold`` the beam reorder folded into the step, its Gather per cache tensor included)."""
    from worker.engine.bundle import load_bundle
    from worker.engine.bundle import TRANSFORMER
    from worker.engine.ort_model import GRU_STATE_ROWS, device_graph, step_graph_for
    from worker.engine.transformer_step import CACHE_ROWS

    path, cuda = bundle / f"{name}.onnx", target == "cuda"
    if name == "decoder_step":  # for CUDA with the beam reorder folded in, as the engine loads it there
        loaded = load_bundle(bundle)
        transformer = loaded.family == TRANSFORMER
        rows = (CACHE_ROWS if transformer else GRU_STATE_ROWS) if cuda and fold else None
        return step_graph_for(path, loaded.special_ids.eos, transformer, cuda, cuda, rows)
    return device_graph(path, cuda)


# What the census loads each graph for: the CPU; CUDA with the beam reorder as a Gather graph run of
# its own (the engine before; that run's 12 Gathers are not counted here); CUDA as the engine loads it now.
TARGETS = {"cpu": ("cpu", False), "cuda_reorder_apart": ("cuda", False), "cuda": ("cuda", True)}


def census(bundle: Path, name: str) -> dict:
    out = {}
    for label, (target, fold) in TARGETS.items():
        if label == "cuda_reorder_apart" and name != "decoder_step":
            continue
        graph = loaded_for(bundle, name, target, fold)
        ops = optimised_ops(graph)
        out[label] = {"nodes": sum(ops.values()),
                       "not_reshapes": sum(n for op, n in ops.items() if op not in ALIASES),
                       "ops": dict(ops.most_common())}
    return out


def step_feeds(session, sentences: int, rows: int = 4, steps: int = 16, src_len: int = 24) -> dict:
    """Random feeds for an imported model's step graph (ids 3..99, every source position valid)."""
    rng = np.random.default_rng(0)
    sizes = {"batch": sentences, "beam": rows, "src_len": src_len, "steps": steps}
    feeds = {}
    for value in session.get_inputs():
        shape = [d if isinstance(d, int) else sizes[d] for d in value.shape]
        if value.type == "tensor(int64)":
            feeds[value.name] = rng.integers(3, 100, shape)
        elif value.type == "tensor(bool)":
            feeds[value.name] = np.ones(shape, dtype=bool)
        else:
            feeds[value.name] = rng.standard_normal(shape).astype(np.float32)
    return feeds


def timed(bundles: list[Path], sentences: int, threads: int) -> dict:
    """ms per step of each bundle's step graph as loaded for the CPU and for CUDA (run on the CPU),
    taking turns; the largest difference of each output from the first bundle's."""
    import onnxruntime as ort

    sessions = {}
    for bundle in bundles:
        for target in ("cpu", "cuda"):
            options = ort.SessionOptions()
            options.log_severity_level, options.intra_op_num_threads = 3, threads
            graph = loaded_for(bundle, "decoder_step", target, fold=False)  # the same inputs
            sessions[f"{bundle} as loaded for {target}"] = ort.InferenceSession(
                graph if isinstance(graph, bytes) else str(graph), options, providers=["CPUExecutionProvider"])
    first = next(iter(sessions.values()))
    names = {tuple(i.name for i in s.get_inputs() if i.name != "topk") for s in sessions.values()}
    if len(names) > 1 or "self_keys.0" not in next(iter(names)):
        raise SystemExit("--time takes imported (Transformer) bundles whose step graphs have the same inputs")
    feeds = {**step_feeds(first, sentences), "topk": np.array([12], dtype=np.int64)}  # an input once bound
    reference = first.run(None, feeds)
    out = {}
    for name, session in sessions.items():
        outputs = session.run(None, feeds)
        out[name] = {"max_abs_diff_from_first": max(float(np.abs(a.astype(np.float64) - b).max())
                                                    for a, b in zip(reference, outputs) if a.dtype.kind == "f"),
                     "top_ids_equal_to_first": bool(all((a == b).all() for a, b in zip(reference, outputs)
                                                        if a.dtype.kind == "i")),
                     "ms": []}
    for _ in range(5):
        for name, session in sessions.items():
            started = time.perf_counter()
            for _ in range(20):
                session.run(None, feeds)
            out[name]["ms"].append(round((time.perf_counter() - started) / 20 * 1000, 3))
    for row in out.values():
        row["median_ms"] = float(np.median(row["ms"]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("bundles", nargs="+", type=Path)
    parser.add_argument("--graphs", default="decoder_step,encoder")
    parser.add_argument("--time", action="store_true", help="also time each step graph on the CPU provider")
    parser.add_argument("--sentences", type=int, default=16)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    results = {str(b): {g: census(b, g) for g in args.graphs.split(",")} for b in args.bundles}
    base = results[str(args.bundles[0])]
    for bundle, graphs in results.items():
        for graph, targets in graphs.items():
            for target, c in targets.items():
                ratio = c["not_reshapes"] / base[graph][target]["not_reshapes"]
                print(f"{bundle} {graph} as loaded for {target}: {c['nodes']} nodes, {c['not_reshapes']} not reshapes "
                      f"({ratio:.2f}x the first bundle's)")
    if args.time:
        results["time"] = timed(args.bundles, args.sentences, args.threads)
        base = next(iter(results["time"].values()))["median_ms"]
        for name, row in results["time"].items():
            print(f"{name}: {row['median_ms']:.2f} ms per step on the CPU ({row['median_ms'] / base:.3f}x), "
                  f"largest difference from the first {row['max_abs_diff_from_first']:.3g}")
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
