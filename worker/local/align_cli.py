"""``nmt align``: word alignment of given translations by forced decoding (``worker.forced``).

One Pharaoh line per sentence pair on stdout: ``i-j`` links source whitespace word i to target word j,
both counted from 0; an empty line for a pair with nothing to align.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from worker.engine.bundle import DEFAULT_BUNDLE, resolve_bundle_path
from worker.engine.forced import METHODS


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    a = subparsers.add_parser(
        "align", help="word-align given translations with a bundle (Pharaoh i-j lines)",
        description="Force-decode each target line as the translation of its source line and print the word "
                    "alignment read from the attention: one line per pair, 'i-j' = source word i, target word j "
                    "(whitespace-separated words, from 0).")
    a.add_argument("--src", required=True, help="source sentences, one a line (UTF-8, plain or .gz)")
    a.add_argument("--tgt", required=True, help="their translations, one a line (UTF-8, plain or .gz)")
    a.add_argument("--bundle", default=None, help=f"model bundle directory (default: {DEFAULT_BUNDLE})")
    a.add_argument("--method", choices=METHODS, default=None,
                   help="how links are read (default: guided where the bundle has an alignment head, else grow; "
                        "see docs/quality.md, 'Word alignment quality')")
    a.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                   help="ONNX Runtime provider: auto takes CUDA when it is usable, cuda refuses to fall back to the CPU")
    a.add_argument("--threads", type=int, default=0, help="ONNX Runtime intra-op threads (0: its default)")
    a.set_defaults(handler=run_align)


def read_pairs(src: Path, tgt: Path) -> tuple[list[str], list[str]]:
    """Both files' lines; ``UserError`` for unreadable or non-UTF-8 files, an empty file, or line
    counts that differ."""
    from nmt.errors import UserError
    from queue_config.textfiles import DocumentError
    from worker.engine.evaluation import read_lines

    try:
        sources, targets = read_lines(src), read_lines(tgt)
    except DocumentError as exc:
        raise UserError(str(exc)) from None
    for path, lines in ((src, sources), (tgt, targets)):
        if not lines:
            raise UserError(f"{path} is empty")
    if len(sources) != len(targets):
        raise UserError(f"{src} has {len(sources)} lines but {tgt} has {len(targets)}")
    return sources, targets


def run_align(args: argparse.Namespace) -> int:
    from nmt.errors import UserError
    from nmt.links import pharaoh
    from worker.engine.forced import align_pairs, default_method
    from worker.engine.ort_model import ProviderError
    from worker.engine.settings import EngineSettings
    from worker.engine.translator import Translator

    sources, targets = read_pairs(Path(args.src), Path(args.tgt))
    try:
        translator = Translator(resolve_bundle_path(args.bundle),
                                EngineSettings(provider=args.device, intra_op_threads=args.threads))
    except ProviderError as exc:
        raise UserError(str(exc)) from None
    method = args.method or default_method(translator.model)
    try:
        links = align_pairs(translator, sources, targets, (method,))
    except ValueError as exc:  # guided asked of a bundle without a head
        raise UserError(str(exc)) from None
    sys.stdout.write("".join(pharaoh(pair[method]) + "\n" for pair in links))
    return 0
