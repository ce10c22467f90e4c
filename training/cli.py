"""``nmt train``: train a model from a YAML config into a run directory.

On several processes (DistributedDataParallel, gloo on CPUs, nccl on GPUs):
``torchrun --nproc_per_node N -m nmt train --config ... --run-dir ...``.
SIGINT or SIGTERM stops a run after the current step with ``last.pt`` written.
"""
from __future__ import annotations

import argparse
import logging
import signal
from pathlib import Path

DEFAULT_CONFIG = "configs/multi30k-en-de.yaml"


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("train", help="train a Bahdanau-attention GRU model", description=__doc__)
    p.add_argument("--config", help=f"YAML config (default: {DEFAULT_CONFIG}; with --resume, the run's config.yaml). "
                                    "Resuming with a config that differs from the run's warns and keeps the run's")
    p.add_argument("--run-dir", required=True, help="directory for checkpoints, vocabularies, metrics and plots")
    p.add_argument("--data-dir", help="corpus directory (overrides $NMT_DATA_DIR and the config's data.dir)")
    p.add_argument("--resume", action="store_true", help="continue the run in --run-dir where it stopped")
    p.add_argument("--max-steps", type=int, help="stop after this many optimizer steps in total (smoke runs)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from .config import load_config, resolve_data_dir
    from .distributed import env_rank
    from .trainer import Trainer

    # Under torchrun only rank 0 logs.
    logging.basicConfig(level=logging.WARNING if env_rank() else logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    run_dir = Path(args.run_dir)
    config_path = args.config or DEFAULT_CONFIG
    if args.resume and not args.config and (run_dir / "config.yaml").exists():
        config_path = str(run_dir / "config.yaml")
    config = load_config(config_path)
    data_dir = resolve_data_dir(config, args.data_dir, config_path=config_path)
    trainer = Trainer(config, run_dir, data_dir)
    result = trainer.train(resume=args.resume, max_steps=args.max_steps)
    if not trainer.world.is_main:
        return 128 + result.interrupted if result.interrupted else 0
    if result.interrupted:
        print(f"interrupted by {signal.Signals(result.interrupted).name} at step {result.steps}: "
              f"wrote {result.run_dir / 'last.pt'}; continue with --resume", flush=True)
        return 128 + result.interrupted
    best = f"best validation BLEU {result.best_bleu:.2f}" if result.validated else "no validation ran"
    print(f"run {result.run_dir}: {result.steps} steps, {result.epochs} epochs, {best}")
    return 0
