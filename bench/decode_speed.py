"""Decoding speed: the ONNX Runtime engine against PyTorch eager, same model, search and batching.

Both sides decode the same source file (default: Multi30k test_2016_flickr, English) with the
worker's beam search (``worker.search.search_in_batches``) over the worker's token-budget batches;
only the step model differs: ``worker.ort_model.OrtStepModel`` over a bundle's graphs, or
``export.torch_model.TorchStepModel`` over the same weights in torch fp32: the checkpoint the
bundles were exported from (``--checkpoint``) or, by default, the model rebuilt from an fp32 bundle
(``export.recover``, verified against its graphs); ``--torch-int8`` quantizes it with torch's own
dynamic int8. Both hold a sentence's encoder outputs once for its beam (``--torch-per-row``: torch
repeats them per row, as most beam-search code does, about 5% slower). Each run is its own
subprocess, so its peak RSS is its own.

The engine decodes with every ``--bundle`` in the same run; by default the two shipped bundles, the
same weights in int8 (``models/multi30k-en-de-int8``, the fast path on CPU) and fp32
(``models/multi30k-en-de``, token for token equal to PyTorch); with ``--device cuda``, the fp32
bundle only. The first bundle gives ``speedup``;
every bundle's ratio is in ``speedup_by_precision`` and ``ort_runs``.

Thread layouts: the engine runs as ``nmt translate`` does on CPU (``--batch-workers`` batches at
once, ``--threads`` intra-op threads each; default one batch per core, one thread each). PyTorch
runs twice, in that same layout and in the layout a user would write (one batch at a time,
``torch.set_num_threads(cores)``); the faster of the two is the baseline.

Every configuration runs ``--repeats`` times (default 5), interleaved, and its fastest run counts
(the median is reported too): on a shared machine run-to-run noise is +-10%, and noise only ever
slows a run down. Reported: sentences/s, target tokens/s, peak memory, outputs identical to the
baseline, and the speed-up (best ORT over best torch; medians; over the one-batch torch layout).

    python bench/decode_speed.py [--bundle DIR ...] [--checkpoint CKPT] [--torch-bundle DIR]
                                 [--beam 5] [--threads 1] [--batch-workers CORES] [--repeats 5]
                                 [--device cpu|cuda] [--json]

With ``--json`` the last line is a JSON object including ``speedup`` (the first bundle's),
``precision`` (its precision) and ``speedup_by_precision``.
"""
from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

DEFAULT_SRC = REPO_ROOT.parent / "shared" / "data" / "multi30k" / "test_2016_flickr.en.gz"
# The shipped bundles, fastest first: the same weights in int8 and in fp32.
DEFAULT_BUNDLES = (REPO_ROOT / "models" / "multi30k-en-de-int8", REPO_ROOT / "models" / "multi30k-en-de")


def child(args: argparse.Namespace) -> dict:
    """Decode every sentence with one engine; print a JSON result."""
    import sentencepiece as spm

    from worker.engine.batching import pack_by_tokens
    from worker.engine.bundle import load_bundle
    from worker.engine.evaluation import read_lines
    from worker.engine.search import SearchOptions, beam_search, search_in_batches

    bundle = load_bundle(args.bundle)
    sp = spm.SentencePieceProcessor(model_file=str(bundle.vocab_path("source")))
    eos = bundle.special_ids.eos
    sources = [[*sp.encode(s.strip()), eos] for s in read_lines(Path(args.src))]
    defaults = bundle.manifest["decoding_defaults"]
    options = SearchOptions(beam=args.beam, max_len_a=defaults["max_len_a"], max_len_b=defaults["max_len_b"],
                            length_penalty=defaults.get("length_penalty", 0.0))
    if args.engine == "ort":
        from worker.engine.ort_model import OrtStepModel

        model = OrtStepModel.from_bundle(bundle, args.device, args.threads)
        provider = model.provider
    else:
        import torch

        from export.torch_model import TorchStepModel

        torch.set_num_threads(args.threads) if args.threads else None
        if args.checkpoint:
            from training.loading import load_model

            torch_model = load_model(Path(args.checkpoint)).model
        else:
            from export.recover import recover_model

            torch_model, _ = recover_model(args.torch_bundle or args.bundle)
        if args.torch_int8:
            from export.torch_model import quantize_int8_dynamic

            torch_model = quantize_int8_dynamic(torch_model)
        model = TorchStepModel(torch_model.to(args.device), grouped=not args.torch_per_row)
        provider = f"torch {torch.__version__} eager{' int8' if args.torch_int8 else ''} on {args.device}"
    batches = pack_by_tokens([len(s) for s in sources], args.max_batch_tokens, args.max_batch_sentences)
    beam_search(model, [sources[i] for i in batches[len(batches) // 2]], options)  # warm-up
    started = time.perf_counter()
    outputs = [hyps[0].tokens for hyps in search_in_batches(model, sources, options, args.max_batch_sentences,
                                                             args.max_batch_tokens, args.batch_workers)]
    seconds = time.perf_counter() - started
    tokens = sum(len(o) + 1 for o in outputs)
    return {
        "engine": args.engine, "provider": provider, "threads": args.threads, "batch_workers": args.batch_workers, "sentences": len(sources), "seconds": seconds,
        "sentences_per_s": len(sources) / seconds, "target_tokens_per_s": tokens / seconds,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "outputs_sha": __import__("hashlib").sha256(json.dumps(outputs).encode()).hexdigest()[:16],
        "outputs": outputs if args.keep_outputs else None, "batches": len(batches),
    }


def main(argv: list[str] | None = None) -> int:
    from worker.engine.settings import host_cores

    cores = host_cores()
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bundle", action="append", help="bundle the engine decodes with; repeat to compare "
                        "several in one run, the first gives `speedup` (default: the shipped int8 bundle, "
                        "then the shipped fp32 one)")
    parser.add_argument("--checkpoint", help="PyTorch baseline: the checkpoint the bundle was exported from "
                        "(default: rebuild the model from an fp32 bundle)")
    parser.add_argument("--torch-bundle", help="PyTorch baseline: the fp32 bundle to rebuild the model from "
                        "(default: the first fp32 --bundle)")
    parser.add_argument("--src", default=str(DEFAULT_SRC))
    parser.add_argument("--beam", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1, help="intra-op threads per batch (engine layout)")
    parser.add_argument("--batch-workers", type=int, default=cores, help="batches decoded at once (engine layout)")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--max-batch-tokens", type=int, default=6000)
    parser.add_argument("--max-batch-sentences", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=5, help="runs of each configuration; the fastest counts")
    parser.add_argument("--torch-per-row", action="store_true",
                        help="PyTorch repeats encoder outputs once per beam row instead of once per sentence")
    parser.add_argument("--torch-int8", action="store_true",
                        help="PyTorch with dynamic int8 quantization of its Linear and GRUCell layers (CPU)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--engine", choices=("ort", "torch"), help=argparse.SUPPRESS)
    parser.add_argument("--keep-outputs", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.engine:
        args.bundle = args.bundle[0]
        print(json.dumps(child(args)))
        return 0
    if args.checkpoint and not Path(args.checkpoint).is_file():
        print(f"decode_speed: checkpoint not found: {args.checkpoint}", file=sys.stderr)
        return 2
    # int8 bundles are for CPUs (their dynamic-quantization operators run on the CPU provider)
    defaults = DEFAULT_BUNDLES if args.device == "cpu" else DEFAULT_BUNDLES[1:]
    bundles = args.bundle or [str(b) for b in defaults if (b / "manifest.json").is_file()]
    if not bundles:
        print("decode_speed: no bundle: give --bundle DIR", file=sys.stderr)
        return 2
    try:
        precisions = {b: _precision(b) for b in bundles}
    except Exception as exc:  # noqa: BLE001 - a broken bundle is named, not traced
        print(f"decode_speed: {exc}", file=sys.stderr)
        return 2
    torch_bundle = args.torch_bundle or next((b for b in bundles if precisions[b] == "fp32"), None)
    if not args.checkpoint and torch_bundle is None:
        print("decode_speed: the PyTorch baseline needs fp32 weights: give --torch-bundle or --checkpoint",
              file=sys.stderr)
        return 2
    engine_layout = (args.threads, args.batch_workers)
    configs = [*(("ort", b, engine_layout) for b in bundles), ("torch", torch_bundle, engine_layout)]
    if args.device == "cpu" and engine_layout != (cores, 1):
        configs.append(("torch", torch_bundle, (cores, 1)))
    runs: dict[tuple, list[dict]] = {config: [] for config in configs}
    for _ in range(max(1, args.repeats)):
        for engine, bundle, (threads, workers) in configs:
            cmd = [sys.executable, __file__, "--engine", engine, "--keep-outputs", *_passthrough(args),
                   "--bundle", bundle or bundles[0], "--threads", str(threads), "--batch-workers", str(workers)]
            done = subprocess.run(cmd, capture_output=True, text=True)
            if done.returncode != 0:
                print(done.stderr, file=sys.stderr)
                return done.returncode
            runs[(engine, bundle, (threads, workers))].append(json.loads(done.stdout.strip().splitlines()[-1]))
    results = []
    for (engine, bundle, _), repeats in runs.items():
        if len({r["outputs_sha"] for r in repeats}) != 1:
            print(f"decode_speed: {engine} ({bundle}) decoded differently across repeats", file=sys.stderr)
            return 1
        best = max(repeats, key=lambda r: r["sentences_per_s"])
        best["median_sentences_per_s"] = statistics.median(r["sentences_per_s"] for r in repeats)
        best["repeats"] = [round(r["sentences_per_s"], 1) for r in repeats]
        if engine == "ort":
            best["bundle"], best["precision"] = bundle, precisions[bundle]
        results.append(best)
    ort_runs, torch_runs = results[:len(bundles)], results[len(bundles):]
    torch_r = max(torch_runs, key=lambda r: r["sentences_per_s"])
    one_batch = next((r for r in torch_runs if r["batch_workers"] == 1), torch_r)
    best_torch_median = max(r["median_sentences_per_s"] for r in torch_runs)
    for r in ort_runs:
        r["speedup"] = r["sentences_per_s"] / torch_r["sentences_per_s"]
        r["speedup_median"] = r["median_sentences_per_s"] / best_torch_median
        r["speedup_vs_one_batch_torch"] = r["sentences_per_s"] / one_batch["sentences_per_s"]
        r["identical_outputs"] = sum(a == b for a, b in zip(r["outputs"], torch_r["outputs"]))
    for r in results:
        r.pop("outputs")
    baseline = f"torch{' int8' if args.torch_int8 else ' fp32'}"
    print(f"decoding {torch_r['sentences']} sentences, beam {args.beam}, device {args.device}, {cores} core(s), "
          f"best of {max(1, args.repeats)} runs each")
    print(f"{'engine':<11}{'layout':>9}{'sent/s':>9}{'median':>9}{'tok/s':>8}{'seconds':>9}{'RSS MiB':>9}"
          f"{'speed-up':>10}{'median':>8}{'1x' + str(cores):>7}{'same':>6}  provider")
    for r in results:
        ort = r["engine"] == "ort"
        name = f"ort {r['precision']}" if ort else baseline
        layout = f"{r['batch_workers']}x{r['threads']}"
        ratios = (f"{r['speedup']:>9.2f}x{r['speedup_median']:>7.2f}x{r['speedup_vs_one_batch_torch']:>6.2f}x"
                  f"{r['identical_outputs']:>6}" if ort else f"{'':>10}{'':>8}{'':>7}{'':>6}")
        mark = "  <- baseline" if r is torch_r else ""
        print(f"{name:<11}{layout:>9}{r['sentences_per_s']:>9.1f}{r['median_sentences_per_s']:>9.1f}"
              f"{r['target_tokens_per_s']:>8.0f}{r['seconds']:>9.2f}{r['peak_rss_mb']:>9.0f}{ratios}"
              f"  {r['provider']}{mark}")
    print(f"speed-up: sentences/s over the fastest {baseline} layout (best runs; medians); 1x{cores}: over "
          f"{baseline} one batch at a time; same: outputs identical to the baseline's, of {torch_r['sentences']}")
    for r in ort_runs:
        print(f"  {r['bundle']} ({r['precision']}): {r['speedup']:.2f}x")
    if args.json:
        first = ort_runs[0]
        print(json.dumps({"speedup": first["speedup"], "speedup_median": first["speedup_median"],
                          "speedup_vs_one_batch_torch": first["speedup_vs_one_batch_torch"],
                          "identical_outputs": first["identical_outputs"], "precision": first["precision"],
                          "speedup_by_precision": {r["precision"]: r["speedup"] for r in ort_runs},
                          "ort": first, "ort_runs": ort_runs, "torch": torch_r, "torch_runs": torch_runs,
                          "baseline": baseline, "beam": args.beam, "device": args.device, "cores": cores,
                          "repeats": max(1, args.repeats)}))
    return 0


def _precision(bundle: str) -> str:
    from worker.engine.bundle import load_bundle

    return load_bundle(bundle, verify_hashes=False).precision


def _passthrough(args: argparse.Namespace) -> list[str]:
    extra = [*(["--checkpoint", args.checkpoint] if args.checkpoint else []),
             *(["--torch-bundle", args.torch_bundle] if args.torch_bundle else [])]
    return [*extra, "--src", args.src, "--beam", str(args.beam), "--device", args.device,
            "--max-batch-tokens", str(args.max_batch_tokens), "--max-batch-sentences", str(args.max_batch_sentences),
            *(["--torch-per-row"] if args.torch_per_row else []), *(["--torch-int8"] if args.torch_int8 else [])]


if __name__ == "__main__":
    sys.exit(main())
