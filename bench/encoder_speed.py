"""Training throughput of the two encoders at equal size: target tokens/s of a GRU-encoder config
(the baseline) and a Transformer-encoder (RNMT+ hybrid) config of about the same parameter count,
trained on the same batches in the same run.

Each pair (``--pair GRU_CONFIG HYBRID_CONFIG``, repeatable; default: ``configs/compare/gru-small.yaml``
with ``hybrid-small.yaml`` and ``gru-base.yaml`` with ``hybrid-base.yaml``) must share its data,
vocabulary and training sections: only ``model`` differs. The training data is set up once, as the
trainer does (``training.data.prepare_data``: the SentencePiece vocabulary, then the streamed,
filtered, length-bucketed batches of epoch 1), and every model trains on epoch 1's first
``--batches`` batches (cycled if it runs through them) with the trainer's own step
(``bench/train_speed.measure``: collate, forward under bfloat16 autocast when ``train.bf16`` is set
and the CPU has native bfloat16, backward, clipping, Adam). The two models of a pair take turns on
the same chunks of ``--chunk`` batches, so both see exactly the same batches and a change in the
machine's load falls on both, until each has trained ``--seconds``. Reported per config: parameters
(all, encoder), tokens/s (real target tokens, eos included), and per pair the ratio hybrid / GRU.
With ``--json`` the last stdout line is a JSON object.

Run from the repository root (the compare configs read data/tatoeba-holdout: see
configs/general-en-de.yaml for how to make it):

    python bench/encoder_speed.py [--seconds 60] [--json]

Smoke test: ``python bench/encoder_speed.py --pair A.yaml B.yaml --seconds 2 --batches 4 --vocab-size 1000``.
"""
from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import logging
import os
import sys
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
for path in (REPO_ROOT, BENCH_DIR):  # works whether or not the package is installed
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

import torch  # noqa: E402

from train_speed import cpu_info, measure  # noqa: E402
from training.config import Config, load_config, resolve_data_dir  # noqa: E402
from training.data import prepare_data  # noqa: E402
from training.model import ModelSpec  # noqa: E402
from training.trainer import Trainer, bf16_is_native  # noqa: E402

COMPARE = REPO_ROOT / "configs" / "compare"
DEFAULT_PAIRS = [[str(COMPARE / "gru-small.yaml"), str(COMPARE / "hybrid-small.yaml")],
                 [str(COMPARE / "gru-base.yaml"), str(COMPARE / "hybrid-base.yaml")]]


def load_pair(paths: list[str], vocab_size: int | None) -> tuple[Config, Config]:
    """The two configs of a pair, checked to differ only in ``model``."""
    configs = []
    for path in paths:
        config = load_config(path)
        if vocab_size is not None:
            config = dataclasses.replace(config, vocab=dataclasses.replace(config.vocab, size=vocab_size)).validate()
        configs.append(config)
    gru, hybrid = configs
    for section in ("data", "vocab", "train"):
        if getattr(gru, section) != getattr(hybrid, section):
            raise SystemExit(f"{paths[0]} and {paths[1]} differ in '{section}': a pair may differ only in 'model'")
    if (gru.model.encoder, hybrid.model.encoder) != ("gru", "transformer"):
        raise SystemExit(f"a pair is a GRU-encoder config then a Transformer-encoder one, got "
                         f"{gru.model.encoder} and {hybrid.model.encoder}")
    return gru, hybrid


def parameters(config: Config, vocab: tuple[int, int]) -> tuple[torch.nn.Module, int, int]:
    torch.manual_seed(config.train.seed)
    model = ModelSpec(config.model, *vocab).build()
    return model, sum(p.numel() for p in model.parameters()), sum(p.numel() for p in model.encoder.parameters())


def run_pair(paths: list[str], args: argparse.Namespace) -> dict:
    gru, hybrid = load_pair(paths, args.vocab_size)
    t = gru.train
    if args.threads or t.threads:
        torch.set_num_threads(args.threads or t.threads)
    device = torch.device("cpu")
    bf16 = t.bf16 and bf16_is_native(device)  # the trainer's rule
    data_dir = resolve_data_dir(gru, None, paths[0])
    started = time.perf_counter()
    data = prepare_data(data_dir, gru)
    batches = list(itertools.islice(data.source.epoch_batches(0), args.batches))
    vocab = (len(data.vocabs.src), len(data.vocabs.tgt))
    print(f"data: {data.summary}; vocab {vocab[0]}/{vocab[1]}; {len(batches)} batches of epoch 1 "
          f"({sum(len(b) for b in batches)} pairs) ready in {time.perf_counter() - started:.0f} s; "
          f"{'bf16 autocast' if bf16 else 'fp32'}, {torch.get_num_threads()} thread(s)", flush=True)
    trainer = Trainer(gru, Path(os.devnull), data_dir)  # only its step is used: no run directory is written
    trainer.device = device
    rows = []
    for path, config in zip(paths, (gru, hybrid)):
        model, total, encoder = parameters(config, vocab)
        rows.append({"config": path, "encoder": config.model.encoder, "params": total, "encoder_params": encoder,
                     "model": model, "tokens": 0, "seconds": 0.0, "batches": 0})
        measure(trainer, model, itertools.cycle(batches), args.warmup, 1, 0, bf16)  # untimed: allocations, caches
    source = itertools.cycle(batches)
    while min(row["seconds"] for row in rows) < args.seconds:
        chunk = list(itertools.islice(source, args.chunk))
        for row in rows:
            got = measure(trainer, row["model"], chunk, 0, len(chunk), 0, bf16)
            for key in ("tokens", "seconds", "batches"):
                row[key] += got[key]
    for row in rows:
        del row["model"]
        row["tokens_per_s"] = row["tokens"] / row["seconds"]
    return {"rows": rows, "hybrid_over_gru": rows[1]["tokens_per_s"] / rows[0]["tokens_per_s"], "bf16": bf16,
            "threads": torch.get_num_threads(), "batch_tokens": t.batch_tokens}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pair", nargs=2, action="append", metavar=("GRU_CONFIG", "HYBRID_CONFIG"),
                        help="two configs that differ only in model (repeatable; default: the configs/compare pairs)")
    parser.add_argument("--seconds", type=float, default=60.0, help="timed seconds per config (default: %(default)s)")
    parser.add_argument("--chunk", type=int, default=4, help="batches per turn (default: %(default)s)")
    parser.add_argument("--batches", type=int, default=120, help="batches of epoch 1 to train on (default: %(default)s)")
    parser.add_argument("--warmup", type=int, default=2, help="untimed batches per model (default: %(default)s)")
    parser.add_argument("--vocab-size", type=int, default=None, help="override vocab.size (changes the parameter counts)")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: train.threads, else torch's)")
    parser.add_argument("--json", action="store_true", help="print a JSON summary as the last stdout line")
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.chunk < 1 or args.batches < 1 or args.warmup < 0:
        parser.error("--seconds must be > 0, --chunk and --batches >= 1, --warmup >= 0")

    logging.basicConfig(level=logging.WARNING)
    cpu_name, cpu_flags = cpu_info()
    print(f"torch {torch.__version__}, cpu: {cpu_name} ({os.cpu_count()} logical cpus; {', '.join(cpu_flags) or 'none'})",
          flush=True)
    pairs = [run_pair(paths, args) for paths in (args.pair or DEFAULT_PAIRS)]
    print()
    print(f"{'config':<40}{'encoder':>12}{'params':>10}{'encoder':>10}{'batches':>9}{'tokens/s':>10}")
    for pair in pairs:
        for row in pair["rows"]:
            print(f"{Path(row['config']).name:<40}{row['encoder']:>12}{row['params'] / 1e6:>9.2f}M"
                  f"{row['encoder_params'] / 1e6:>9.2f}M{row['batches']:>9}{row['tokens_per_s']:>10.0f}")
        print(f"{'':<40}{'hybrid / GRU':>12}{'':>29}{pair['hybrid_over_gru']:>9.2f}x")
    if args.json:
        print(json.dumps({"cpu": cpu_name, "cpu_flags": cpu_flags, "torch": torch.__version__, "pairs": pairs,
                          "seconds": args.seconds, "chunk": args.chunk}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
