"""One decoder step, in isolation: ONNX Runtime (fp32 and int8 bundles) against PyTorch eager
(fp32 and torch's dynamic int8), same rows, one thread; plus ONNX Runtime's per-operator profile.

The decoding benchmark (``bench/decode_speed.py``) runs the same search over both engines, so its
ratio is bounded by the ratio of step times measured here. Inputs are random but shaped like a
mid-size batch: ``--sentences`` sentences x ``--beam`` rows, ``--src-len`` source positions; the
encoder outputs are held once per sentence, as both engines do in the search.

    python bench/step_profile.py [--sentences 64] [--beam 5] [--src-len 16] [--candidates 14] [--json]

With ``--json`` the last line is a JSON object with ``ms_per_step`` per engine and ``ort_ops``.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))


def _best_ms(run, repeats: int = 3, calls: int = 20) -> float:
    for _ in range(3):
        run()
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        for _ in range(calls):
            run()
        best = min(best, (time.perf_counter() - started) / calls * 1000)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fp32-bundle", default=str(REPO_ROOT / "models" / "multi30k-en-de"))
    parser.add_argument("--int8-bundle", default=str(REPO_ROOT / "models" / "multi30k-en-de-int8"))
    parser.add_argument("--sentences", type=int, default=64)
    parser.add_argument("--beam", type=int, default=5)
    parser.add_argument("--src-len", type=int, default=16)
    parser.add_argument("--candidates", type=int, default=14)
    parser.add_argument("--top-ops", type=int, default=12)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    import numpy as np
    import onnxruntime as ort
    import torch

    from export.recover import recover_model
    from export.torch_model import quantize_int8_dynamic
    from worker.engine.bundle import TOPK_INPUT, load_bundle
    from worker.engine.ort_model import session_options

    torch.set_num_threads(1)
    model, _ = recover_model(args.fp32_bundle)
    model = model.eval()
    rows = args.sentences * args.beam
    generator = torch.Generator().manual_seed(0)
    annotations = torch.randn(args.sentences, args.src_len, 2 * model.encoder.forward_rnns[0].hidden_size,
                              generator=generator) * 0.3
    with torch.no_grad():
        keys = model.decoder.attention.keys(annotations)
    mask = torch.ones(args.sentences, args.src_len, dtype=torch.bool)
    state = torch.randn(model.decoder.layers, rows, model.decoder.hidden, generator=generator) * 0.3
    prev = torch.randint(4, model.decoder.embed.num_embeddings, (rows,), generator=generator)

    def torch_step(m):
        def run():
            with torch.no_grad():
                out = m.decoder.step(prev, state, annotations, keys, mask)
                log_probs = torch.log_softmax(m.decoder.readout(prev, out.state[-1], out.context), -1)
                torch.topk(log_probs, args.candidates, dim=-1)
        return run

    quantized = quantize_int8_dynamic(model)
    timings = {"torch fp32": _best_ms(torch_step(model)), "torch int8 (quantize_dynamic)": _best_ms(torch_step(quantized))}

    feed = {"prev_ids": prev.numpy(), "state": state.numpy(), "annotations": annotations.numpy(),
            "keys": keys.numpy(), "src_mask": mask.numpy(), TOPK_INPUT: np.array([args.candidates], dtype=np.int64)}
    names = ["topk_log_probs", "topk_ids", "new_state", "attention"]
    ops: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for label, path in (("ORT fp32", args.fp32_bundle), ("ORT int8", args.int8_bundle)):
            bundle = load_bundle(path)
            if not bundle.grouped_beams:
                print(f"step_profile: {path} holds encoder outputs per row; re-export it", file=sys.stderr)
                return 2
            session = ort.InferenceSession(str(bundle.graph_path("decoder_step")), session_options(1),
                                           providers=["CPUExecutionProvider"])
            timings[label] = _best_ms(lambda: session.run(names, feed))
            options = session_options(1)
            options.enable_profiling = True
            options.profile_file_prefix = os.path.join(tmp, label.replace(" ", "_"))
            profiled = ort.InferenceSession(str(bundle.graph_path("decoder_step")), options,
                                            providers=["CPUExecutionProvider"])
            warm, counted = 5, 20
            for _ in range(warm + counted):
                profiled.run(names, feed)
            events = json.loads(Path(profiled.end_profiling()).read_text())
            runs = sorted(e["ts"] for e in events if e.get("cat") == "Session" and e["name"] == "model_run")
            totals: collections.Counter = collections.Counter()
            for event in events:  # operators of the runs after the warm-up ones
                if (event.get("cat") == "Node" and event["name"].endswith("_kernel_time")
                        and event["ts"] >= runs[warm]):
                    totals[f"{event['args']['op_name']} {event['name'][:-len('_kernel_time')]}"] += event["dur"]
            ops[label] = {name: round(us / counted / 1000, 3) for name, us in totals.most_common(args.top_ops)}

    print(f"one decoder step: {args.sentences} sentences x beam {args.beam} = {rows} rows, "
          f"{args.src_len} source positions, {args.candidates} candidates per row, 1 thread")
    base = timings["torch fp32"]
    for label, ms in timings.items():
        print(f"  {label:<32}{ms:8.2f} ms   {base / ms:5.2f}x torch fp32")
    for label, label_ops in ops.items():
        print(f"{label} operators (ms per step):")
        for name, ms in label_ops.items():
            print(f"  {ms:7.3f}  {name}")
    if args.json:
        print(json.dumps({"rows": rows, "ms_per_step": timings, "ort_ops_ms": ops}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
