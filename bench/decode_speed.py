"""Decoding speed: the ONNX Runtime engine against PyTorch eager, same model, search and batching.

Both sides decode the same source file (default: Multi30k test_2016_flickr, English) with the
worker's beam search (``worker.search.beam_search``) over the worker's token-budget batches
(``worker.batching.pack_by_tokens``); only the step model differs: ``worker.ort_model.OrtStepModel``
over the bundle's graphs, or ``export.torch_model.TorchStepModel`` over the checkpoint the bundle
was exported from. Each side runs in its own subprocess, so its peak RSS is its own. Reported:
sentences/s, target tokens/s, peak memory, identical outputs, and the speed-up ORT / torch.

    python bench/decode_speed.py [--bundle models/multi30k-en-de] [--checkpoint runs/multi30k-en-de/best.pt]
                                 [--beam 5] [--threads 2] [--device cpu|cuda] [--json]

With ``--json`` the last line is a JSON object including ``speedup``.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

DEFAULT_SRC = REPO_ROOT.parent / "shared" / "data" / "multi30k" / "test_2016_flickr.en.gz"


def child(args: argparse.Namespace) -> dict:
    """Decode every sentence with one engine; print a JSON result."""
    import numpy as np
    import sentencepiece as spm

    from worker.batching import pack_by_tokens
    from worker.bundle import load_bundle
    from worker.evaluation import read_lines
    from worker.search import SearchOptions, beam_search, search_in_batches

    bundle = load_bundle(args.bundle)
    sp = spm.SentencePieceProcessor(model_file=str(bundle.vocab_path("source")))
    eos = bundle.special_ids["eos"]
    sources = [[*sp.encode(s.strip()), eos] for s in read_lines(Path(args.src))]
    defaults = bundle.manifest["decoding_defaults"]
    options = SearchOptions(beam=args.beam, max_len_a=defaults["max_len_a"], max_len_b=defaults["max_len_b"],
                            length_penalty=defaults.get("length_penalty", 0.0))
    if args.engine == "ort":
        from worker.ort_model import OrtStepModel

        model = OrtStepModel.from_bundle(bundle, args.device, args.threads)
        provider = model.provider
    else:
        import torch

        from export.torch_model import TorchStepModel
        from training.checkpoint import load_model

        torch.set_num_threads(args.threads) if args.threads else None
        model = TorchStepModel(load_model(Path(args.checkpoint)).model.to(args.device))
        provider = f"torch {torch.__version__} eager on {args.device}"
    batches = pack_by_tokens([len(s) for s in sources], args.max_batch_tokens, args.max_batch_sentences)
    beam_search(model, [sources[i] for i in batches[len(batches) // 2]], options)  # warm-up
    started = time.perf_counter()
    outputs = [hyps[0].tokens for hyps in search_in_batches(model, sources, options, args.max_batch_sentences,
                                                             args.max_batch_tokens)]
    seconds = time.perf_counter() - started
    tokens = sum(len(o) + 1 for o in outputs)
    return {
        "engine": args.engine, "provider": provider, "sentences": len(sources), "seconds": seconds,
        "sentences_per_s": len(sources) / seconds, "target_tokens_per_s": tokens / seconds,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "outputs_sha": __import__("hashlib").sha256(json.dumps(outputs).encode()).hexdigest()[:16],
        "outputs": outputs if args.keep_outputs else None, "batches": len(batches),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bundle", default=str(REPO_ROOT / "models" / "multi30k-en-de"))
    parser.add_argument("--checkpoint", default=str(REPO_ROOT / "runs" / "multi30k-en-de" / "best.pt"),
                        help="the torch checkpoint the bundle was exported from (PyTorch baseline)")
    parser.add_argument("--src", default=str(DEFAULT_SRC))
    parser.add_argument("--beam", type=int, default=5)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--max-batch-tokens", type=int, default=6000)
    parser.add_argument("--max-batch-sentences", type=int, default=64)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--engine", choices=("ort", "torch"), help=argparse.SUPPRESS)
    parser.add_argument("--keep-outputs", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.engine:
        print(json.dumps(child(args)))
        return 0
    if not Path(args.checkpoint).is_file():
        print(f"decode_speed: checkpoint not found: {args.checkpoint} (the PyTorch baseline needs the checkpoint "
              "the bundle was exported from; pass --checkpoint)", file=sys.stderr)
        return 2
    results = {}
    for engine in ("ort", "torch"):
        cmd = [sys.executable, __file__, "--engine", engine, "--keep-outputs", *_passthrough(args)]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            print(done.stderr, file=sys.stderr)
            return done.returncode
        results[engine] = json.loads(done.stdout.strip().splitlines()[-1])
    ort_r, torch_r = results["ort"], results["torch"]
    same = sum(a == b for a, b in zip(ort_r.pop("outputs"), torch_r.pop("outputs")))
    speedup = ort_r["sentences_per_s"] / torch_r["sentences_per_s"]
    print(f"decoding {ort_r['sentences']} sentences, beam {args.beam}, {args.threads} thread(s), device {args.device}")
    print(f"{'engine':<8}{'sent/s':>10}{'tok/s':>10}{'seconds':>10}{'peak RSS MiB':>14}  provider")
    for r in (ort_r, torch_r):
        print(f"{r['engine']:<8}{r['sentences_per_s']:>10.1f}{r['target_tokens_per_s']:>10.0f}{r['seconds']:>10.2f}"
              f"{r['peak_rss_mb']:>14.0f}  {r['provider']}")
    print(f"speed-up ORT / torch: {speedup:.2f}x; identical outputs: {same}/{ort_r['sentences']}")
    if args.json:
        print(json.dumps({"speedup": speedup, "identical_outputs": same, "ort": ort_r, "torch": torch_r,
                          "beam": args.beam, "threads": args.threads, "device": args.device}))
    return 0


def _passthrough(args: argparse.Namespace) -> list[str]:
    return ["--bundle", args.bundle, "--checkpoint", args.checkpoint, "--src", args.src, "--beam", str(args.beam),
            "--threads", str(args.threads), "--device", args.device, "--max-batch-tokens", str(args.max_batch_tokens),
            "--max-batch-sentences", str(args.max_batch_sentences)]


if __name__ == "__main__":
    sys.exit(main())
