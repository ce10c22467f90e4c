"""``nmt train-aligner --bundle BUNDLE --model-dir MODEL_DIR --src FILE --tgt FILE``: give a bundle
made by ``nmt import`` an alignment head of its own (``training.aligner``), trained on eflomal
alignments of pairs sampled from FILE/FILE with the model frozen, checked against torch and grafted
into the bundle (``export.marian.aligner_recipe``). MODEL_DIR must be the directory the bundle was
imported from. The translation graphs are left as they are: translations do not change; ``nmt
align`` and the markup placement of the document formats use the head.
"""
from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    from training.aligner_cli import add_head_options

    p = subparsers.add_parser("train-aligner", description=__doc__)
    p.add_argument("--bundle", required=True, help="a bundle made by nmt import; it receives the head")
    p.add_argument("--model-dir", required=True, help="the model directory the bundle was imported from")
    p.add_argument("--src", required=True, help="source side of the training text (one sentence a line)")
    p.add_argument("--tgt", required=True, help="target side, line by line with --src")
    add_head_options(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from nmt.errors import UserError
    from training.aligner_cli import head_configs
    from training.corpus import CorpusError
    from worker.engine.bundle import BundleError

    from .aligner_recipe import train_bundle_head
    from .spec import ImportModelError

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    cfg, head_cfg = head_configs(args)
    try:
        _, report = train_bundle_head(Path(args.bundle), Path(args.model_dir), Path(args.src), Path(args.tgt), cfg,
                                   head_cfg)
    except (BundleError, ImportModelError, CorpusError) as exc:
        raise UserError(str(exc)) from None
    print(json.dumps({k: v for k, v in report.items() if k != "train_config"}))
    return 0
