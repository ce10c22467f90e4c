"""The beam reorder folded into the step graph against a reorder run of its own, with IO binding.

With IO binding (always on CUDA) the decoder state stays where the step wrote it. A beam search
then reorders it by the rows it keeps: either with a Gather graph run of its own between steps (the
engine before), or, by default now, inside the next step, which gathers the rows as it reads them
(``worker.engine.ort_model.fold_reorder_into``): one session run a step instead of two, the same
copy. This script runs the same beam search both ways on the CPU provider with IO binding on, taking
turns, and reports target tokens/s and the step model's time per search step (step and reorder
calls together); the reorder run of its own is the baseline of the ratios. Outputs must be
identical (asserted). On a GPU the run saved is a host round of kernel launches, which
``bench/gpu_check.py --ab`` times there. On a CPU with few cores the reorder's own session also
has a thread pool of its own, whose spinning slows the step that follows; ``--reorder-threads 1``
loads the baseline's reorder graph single-threaded to tell that part from the run itself.

    python bench/reorder_fold.py [BUNDLE ...] [--sentences 256] [--batch 32] [--beam 5] [--rounds 5]
                                 [--max-length N] [--reorder-threads N] [--out FILE]

Bundles of either family (default: the shipped ``models/en-de``); sentences: newstest2014's first
``--sentences`` (``--data``, or ``--source`` plain text), the bundle's decoding defaults (or
``--max-length``), beam 5.
"""
from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))


class Timed:
    """A step model whose ``step`` and ``reorder`` calls are timed together, and counted."""

    def __init__(self, model) -> None:
        self.model, self.seconds, self.steps = model, 0.0, 0

    def __getattr__(self, name: str):
        return getattr(self.model, name)

    def step(self, *args, **kwargs):
        self.steps += 1
        return self._timed(self.model.step, *args, **kwargs)

    def reorder(self, *args, **kwargs):
        return self._timed(self.model.reorder, *args, **kwargs)

    def _timed(self, method, *args, **kwargs):
        started = time.perf_counter()
        try:
            return method(*args, **kwargs)
        finally:
            self.seconds += time.perf_counter() - started


def one_pool(model, threads: int) -> None:
    """``--reorder-threads``: the model's reorder graph loaded again with ``threads`` intra-op threads
    (the engine loads it with the step's session options: a pool of its own, as many threads as
    cores, which spins after each run)."""
    import onnxruntime as ort

    from worker.engine.ort_model import gather_graph, session_options

    inputs = {i.name: i for i in model.decoder.get_inputs()}
    if "state" in inputs:  # the GRU's state [L, N, D]
        name, graph = "gather", gather_graph(inputs["state"].type, 1, 1, ("layers", "rows", "hidden"))
    else:  # the Transformer's cache, every tensor [N, H, T, E]
        name, graph = "reorderer", gather_graph(inputs["self_keys.0"].type, 2 * model.layers, 0,
                                                ("rows", "heads", "steps", "head_dim"))
    setattr(model, name, ort.InferenceSession(graph, session_options(threads), providers=["CPUExecutionProvider"]))


def measure(bundle_dir: Path, lines: list[str], args) -> dict:
    import sentencepiece as spm

    from worker.engine.bundle import TRANSFORMER, load_bundle
    from worker.engine.ort_model import OrtStepModel
    from worker.engine.search import SearchOptions, search_in_batches
    from worker.engine.transformer_step import OrtTransformerStepModel

    bundle = load_bundle(bundle_dir)
    family = OrtTransformerStepModel if bundle.family == TRANSFORMER else OrtStepModel
    sp = spm.SentencePieceProcessor(model_file=str(bundle.vocab_path("source")))
    sources = [[*sp.encode(line), bundle.special_ids.eos] for line in lines]
    d = bundle.manifest.get("decoding_defaults", {})
    options = SearchOptions(beam=args.beam, max_len_a=d.get("max_len_a", 1.5), max_len_b=d.get("max_len_b", 10),
                            length_penalty=d.get("length_penalty", 0.0))
    if args.max_length:  # exactly this many tokens and eos (as gpu_check's imported model: random weights never end)
        options = SearchOptions(beam=args.beam, max_len_a=0.0, max_len_b=args.max_length, length_penalty=1.0,
                                free_forced_eos=True)
    models = {"reorder a run of its own": family.from_bundle(bundle, "cpu", io_binding=True, fold_reorder=False),
              "reorder folded into the step": family.from_bundle(bundle, "cpu", io_binding=True)}
    if args.reorder_threads:
        one_pool(models["reorder a run of its own"], args.reorder_threads)
    assert [m.fold_reorder for m in models.values()] == [False, True]
    runs: dict[str, list[dict]] = {label: [] for label in models}
    outputs = {}
    for label, model in models.items():  # warm-up
        search_in_batches(model, sources[:args.batch], options, args.batch)
    for _ in range(args.rounds):
        for label, model in models.items():
            timed = Timed(model)
            started = time.perf_counter()
            found = search_in_batches(timed, sources, options, args.batch)
            wall = time.perf_counter() - started
            tokens = sum(len(h[0].tokens) + 1 for h in found)
            runs[label].append({"seconds": wall, "tokens": tokens, "steps": timed.steps,
                                "model_ms_per_step": 1000 * timed.seconds / timed.steps})
            outputs.setdefault(label, [h[0].tokens for h in found])
    first, second = outputs.values()
    assert first == second, "the folded reorder changed the output"
    result = {"bundle": bundle.manifest.get("name", bundle_dir.name), "family": bundle.family,
              "reorder_threads": args.reorder_threads or "as the engine loads it",
              "sentences": len(sources), "batch": args.batch, "beam": args.beam,
              "target_tokens": runs[next(iter(runs))][0]["tokens"], "steps": runs[next(iter(runs))][0]["steps"],
              "identical_outputs": len(first)}
    for label, rows in runs.items():
        result[label] = {"tokens_per_s": round(float(np.median([r["tokens"] / r["seconds"] for r in rows])), 1),
                         "model_ms_per_step": round(float(np.median([r["model_ms_per_step"] for r in rows])), 4),
                         "rounds_s": [round(r["seconds"], 3) for r in rows]}
    base, folded = (result[label] for label in models)
    result["ratio_tokens_per_s"] = round(folded["tokens_per_s"] / base["tokens_per_s"], 4)
    result["ratio_model_ms_per_step"] = round(folded["model_ms_per_step"] / base["model_ms_per_step"], 4)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("bundles", nargs="*", type=Path, default=[REPO_ROOT / "models" / "en-de"])
    parser.add_argument("--data", type=Path, default=REPO_ROOT.parent / "shared" / "data")
    parser.add_argument("--source", type=Path, help="plain-text sentences instead of newstest2014")
    parser.add_argument("--sentences", type=int, default=256)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--beam", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--max-length", type=int, default=0, help="target length limit instead of the bundle's "
                        "decoding defaults (for a model with random weights)")
    parser.add_argument("--reorder-threads", type=int, default=0, help="load the baseline's reorder graph with "
                        "this many threads (0: as the engine does, with the step's options)")
    parser.add_argument("--out", type=Path, help="also write the results here (JSON)")
    args = parser.parse_args()
    if args.source:
        lines = [line.strip() for line in args.source.read_text(encoding="utf-8").splitlines() if line.strip()]
    else:
        with gzip.open(args.data / "wmt-newstest-de-en" / "newstest2014.en.gz", "rt", encoding="utf-8") as f:
            lines = [line.strip() for line in f if line.strip()]
    lines = lines[:args.sentences]
    import onnxruntime

    from span_fidelity import cpu_model

    results = {"cpu": cpu_model(), "onnxruntime": onnxruntime.__version__,
               "command": "python bench/reorder_fold.py " + " ".join(sys.argv[1:]),
               "results": [measure(b, lines, args) for b in args.bundles]}
    text = json.dumps(results, indent=1)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
