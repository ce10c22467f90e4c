"""``nmt`` subcommands. Each stage's parser lives in its own package and is imported only when
its dependencies are installed, so a worker-only or client-only install still has a working ``nmt``.
"""
from __future__ import annotations

import argparse
import importlib
import sys

# (module, what it needs): later stages add export, translate, eval and submit here.
SUBCOMMANDS = [
    ("training.cli", "the 'train' extra"),
    ("training.aligner_cli", "the 'train' extra"),
    ("training.download", "the core install"),
    ("export.cli", "the 'export' extra"),
    ("worker.cli", "the 'worker' extra"),
    ("worker.align_cli", "the 'worker' extra"),
    ("client.cli", "the 'client' extra"),
]


class UserError(Exception):
    """An error the user can fix; printed without a traceback."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="nmt", description="Batch neural machine translation.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module_name, _ in SUBCOMMANDS:
        importlib.import_module(module_name).add_parser(subparsers)
    return parser


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("nmt-batch")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown (not installed)"


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except ModuleNotFoundError as exc:
        print(f"nmt {args.command}: missing dependency '{exc.name}'; install the matching extra, "
              f"e.g. pip install 'nmt-batch[train]'", file=sys.stderr)
        return 2
    except (UserError, ValueError, FileNotFoundError, FileExistsError) as exc:
        print(f"nmt {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
