"""``nmt train-aligner``: add a guided-alignment head to a trained model (``training.aligner``).

The head learns from eflomal alignments of a sample of the config's training corpora, with the
translation model frozen; ``nmt export`` of the written checkpoint puts it in the bundle, where
``nmt align`` and the markup transfer of the document formats use it. For a bundle made by ``nmt
import``: ``nmt train-aligner --bundle BUNDLE --model-dir MODEL_DIR --src FILE --tgt FILE``
(``export.marian.aligner_cli``; ``nmt train-aligner --bundle BUNDLE --help`` lists its options).
"""
from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("train-aligner", help="train a guided-alignment head for a trained model",
                              description=__doc__)
    p.add_argument("--checkpoint", required=True, help="the trained model (e.g. runs/NAME/best.pt)")
    p.add_argument("--config", required=True, help="YAML config whose training corpora the head learns from")
    p.add_argument("--data-dir", help="corpus directory, for a config without data.corpora (overrides $NMT_DATA_DIR "
                                     "and the config's data.dir)")
    p.add_argument("--out", required=True, help="checkpoint to write: the model with the head added")
    add_head_options(p)
    p.set_defaults(handler=run)


def add_head_options(p: argparse.ArgumentParser) -> None:
    """The options of the head and its training, shared with ``export.marian.aligner_cli``."""
    from .aligner_options import (DEFAULT_CONTEXT_HIDDEN, DEFAULT_TARGET_CONTEXT, SILVER_KINDS, TARGET_CONTEXTS,
                                  AlignerTrainConfig)

    defaults = AlignerTrainConfig()
    p.add_argument("--pairs", type=int, default=defaults.pairs, help="training pairs to sample (default: %(default)s)")
    p.add_argument("--max-seconds", type=float, default=defaults.max_seconds,
                   help="training time limit, eflomal not counted (default: %(default)s)")
    p.add_argument("--max-epochs", type=int, default=defaults.max_epochs, help="default: %(default)s")
    p.add_argument("--seed", type=int, default=defaults.seed, help="default: %(default)s")
    p.add_argument("--target-context", choices=TARGET_CONTEXTS, default=DEFAULT_TARGET_CONTEXT,
                   help="what the head reads of the rest of the target besides the step's own state: a "
                        "bidirectional GRU, one self-attention layer, or nothing (heads made before this "
                        "option; default: %(default)s)")
    p.add_argument("--context-hidden", type=int, default=DEFAULT_CONTEXT_HIDDEN,
                   help="its width: per direction for bigru (default: %(default)s)")
    p.add_argument("--lower-share", type=float, default=defaults.lower_share,
                   help="share of the pairs shown lower-cased (default: %(default)s)")
    p.add_argument("--spaced-share", type=float, default=defaults.spaced_share,
                   help="share of the pairs shown tokenized, punctuation spaced apart (default: %(default)s)")
    p.add_argument("--silver", choices=SILVER_KINDS, default=defaults.silver,
                   help="what each direction learns from eflomal: its links joined with grow-diag-final-and, "
                        "or eflomal's own links of that direction (default: %(default)s)")
    p.add_argument("--threads", type=int, default=defaults.threads,
                   help="torch intra-op threads (default: torch's own, one per core; give 1 when the process "
                        "is pinned to one core, as two threads on one core run many times slower)")
    p.add_argument("--no-reverse", dest="reverse", action="store_false",
                   help="train the target-to-source direction only, without the source-to-target one that "
                        "nmt align symmetrises it with (heads made before the option)")


def head_configs(args: argparse.Namespace):
    """(``AlignerTrainConfig``, ``AlignerConfig``) of ``add_head_options``' options; ``UserError`` for
    values out of range."""
    from nmt.errors import UserError

    from .aligner import AlignerConfig
    from .aligner_options import AlignerTrainConfig

    if args.pairs < 10:
        raise UserError(f"--pairs must be at least 10, got {args.pairs}")
    for option, share in (("--lower-share", args.lower_share), ("--spaced-share", args.spaced_share)):
        if not 0 <= share <= 1:
            raise UserError(f"{option} must be between 0 and 1, got {share}")
    try:
        head_cfg = AlignerConfig(target_context=args.target_context, context_hidden=args.context_hidden,
                                 reverse=args.reverse)
    except ValueError as exc:
        raise UserError(str(exc).replace("context_hidden", "--context-hidden")) from None
    try:
        cfg = AlignerTrainConfig(pairs=args.pairs, valid_pairs=min(500, args.pairs // 10),
                                 max_seconds=args.max_seconds, max_epochs=args.max_epochs, seed=args.seed,
                                 lower_share=args.lower_share, spaced_share=args.spaced_share, silver=args.silver,
                                 threads=args.threads)
    except ValueError as exc:  # AlignerTrainConfig's own checks, named as the options
        raise UserError(str(exc).replace("threads must", "--threads must")) from None
    return cfg, head_cfg


def run(args: argparse.Namespace) -> int:
    from nmt.errors import UserError

    from .aligner_training import train_aligner
    from .checkpoint import CheckpointError
    from .config import ConfigError, load_config, resolve_data_dir
    from .corpus import CorpusError

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    cfg, head_cfg = head_configs(args)
    try:
        config = load_config(args.config)
        data_dir = resolve_data_dir(config, args.data_dir, config_path=args.config)
        report = train_aligner(Path(args.checkpoint), config, data_dir, Path(args.out), cfg, head_cfg)
    except (CheckpointError, ConfigError, CorpusError) as exc:
        raise UserError(str(exc)) from None
    print(json.dumps({k: v for k, v in report.items() if k != "train_config"}))
    return 0
