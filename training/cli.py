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

from nmt.errors import UserError

DEFAULT_CONFIG = "configs/multi30k-en-de.yaml"


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("train", help="train a Bahdanau-attention GRU model", description=__doc__)
    p.add_argument("--config", help=f"YAML config (default: {DEFAULT_CONFIG}; with --resume, the run's config.yaml). "
                                    "Resuming with a config that differs from the run's warns and keeps the run's")
    p.add_argument("--run-dir", required=True, help="directory for checkpoints, vocabularies, metrics and plots")
    p.add_argument("--data-dir", help="corpus directory (overrides $NMT_DATA_DIR and the config's data.dir)")
    p.add_argument("--resume", action="store_true", help="continue the run in --run-dir where it stopped")
    p.add_argument("--from-snapshot", metavar="FILE",
                   help="start --run-dir from a compact snapshot (nmt snapshot): the same step and batch, a fresh "
                        "optimizer whose rate warms up over 200 steps; the snapshot's config is used")
    p.add_argument("--max-steps", type=int, help="stop after this many optimizer steps in total (smoke runs)")
    p.add_argument("--max-seconds", type=float, metavar="S",
                   help="training-time budget in seconds, summed across resumes, over the config's train.max_seconds and "
                        "a resumed run's: a run goes on past the budget it was started with")
    p.set_defaults(handler=run)

    s = subparsers.add_parser("snapshot", description=(
        "Write a compact snapshot of a training run (float16 weights and averaged weights, config, "
        "vocabularies, progress, metrics; no optimizer state) from its last.pt, small enough to commit, "
        "so that the run can go on on another machine with nmt train --from-snapshot."))
    s.add_argument("--run-dir", required=True, help="the run directory (its last.pt and metrics.jsonl are read)")
    s.add_argument("--out", required=True, help="the snapshot file to write")
    s.set_defaults(handler=run_snapshot)


def run_snapshot(args: argparse.Namespace) -> int:
    from .snapshot import write_snapshot

    snapshot = write_snapshot(Path(args.run_dir), Path(args.out))
    progress = snapshot["progress"]
    size = Path(args.out).stat().st_size
    print(f"wrote {args.out} ({size / 1e6:.1f} MB): step {progress['step']}, epoch {progress['epoch'] + 1}, "
          f"{progress['elapsed'] / 3600:.2f} h of training, best validation BLEU {progress['best_bleu']:.2f}; "
          f"go on with: nmt train --from-snapshot {args.out} --run-dir DIR")
    return 0


def run(args: argparse.Namespace) -> int:
    from .config import load_config, resolve_data_dir
    from .distributed import env_rank
    from .snapshot import read_snapshot, snapshot_config
    from .trainer import Trainer

    # Under torchrun only rank 0 logs.
    logging.basicConfig(level=logging.WARNING if env_rank() else logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    run_dir = Path(args.run_dir)
    config_path = args.config or DEFAULT_CONFIG
    if args.resume and not args.config and (run_dir / "config.yaml").exists():
        config_path = str(run_dir / "config.yaml")
    snapshot = None
    if args.from_snapshot:
        if args.resume:
            raise UserError("--from-snapshot starts a new run directory; --resume continues one: give one of them")
        snapshot = read_snapshot(Path(args.from_snapshot))
        config = snapshot_config(snapshot, load_config(args.config) if args.config else None)
    else:
        config = load_config(config_path)
    data_dir = resolve_data_dir(config, args.data_dir, config_path=args.config or config_path)
    trainer = Trainer(config, run_dir, data_dir, max_seconds=args.max_seconds)
    result = trainer.train(resume=args.resume, max_steps=args.max_steps, snapshot=snapshot)
    if not trainer.world.is_main:
        return 128 + result.interrupted if result.interrupted else 0
    if result.interrupted:
        print(f"interrupted by {signal.Signals(result.interrupted).name} at step {result.steps}: "
              f"wrote {result.run_dir / 'last.pt'}; continue with --resume", flush=True)
        return 128 + result.interrupted
    best = f"best validation BLEU {result.best_bleu:.2f}" if result.validated else "no validation ran"
    print(f"run {result.run_dir}: {result.steps} steps, {result.epochs} epochs, {best}")
    return 0
