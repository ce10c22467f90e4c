"""``nmt`` subcommands. Only the stage of the command being run is imported, and a stage's parser
imports none of its heavy dependencies, so ``nmt --help`` and every ``nmt COMMAND --help`` work
with any extra installed; a command whose extra is missing says which one when it runs.
"""
from __future__ import annotations

import argparse
import importlib
import sys
from dataclasses import dataclass

from .errors import UserError

__all__ = ["UserError", "build_parser", "main"]


@dataclass(frozen=True)
class Command:
    module: str  # the stage CLI whose add_parser() defines this command
    extra: str | None  # the pip extra its handler needs (None: the core install)
    summary: str  # the line `nmt --help` shows


COMMANDS = {
    "train": Command("training.cli", "train", "train a Bahdanau-attention GRU model"),
    "snapshot": Command("training.cli", "train", "write a compact snapshot of a training run, to go on elsewhere"),
    "train-aligner": Command("training.aligner_cli", "train", "train a guided-alignment head for a trained model"),
    "download-data": Command("training.download", None, "download Multi30k task 1 from GitHub"),
    "build-data": Command("training.build_data", "train", "build the general-v2 data directory (held-out sets, software catalogues)"),
    "export": Command("export.cli", "export", "export a checkpoint to a verified ONNX bundle"),
    "import": Command("export.marian.cli", "import", "import a Marian / OPUS-MT model into a verified ONNX bundle"),
    "translate": Command("worker.local.cli", "worker", "translate files (or stdin) with a bundle"),
    "eval": Command("worker.local.cli", "worker", "score a bundle on a test set (sacreBLEU)"),
    "calibrate": Command("worker.local.cli", "worker", "fit a bundle's confidence model to sentence chrF on dev sets"),
    "align": Command("worker.local.align_cli", "worker", "word-align given translations with a bundle (Pharaoh i-j lines)"),
    "submit": Command("client.cli", "client", "submit documents to the Celery workers"),
    "status": Command("client.cli", "client", "print a job's state and progress"),
    "result": Command("client.cli", "client", "fetch a finished job's translation"),
    "cancel": Command("client.cli", "client", "cancel a queued or running job"),
    "serve": Command("api.cli", "api", "serve the DeepL-compatible HTTP gateway over the workers"),
}
# Commands with a second form, chosen by any of its options: that form's stage CLI defines the
# command instead (``nmt train-aligner --bundle ...`` trains the head of an imported bundle, in
# export.marian, since training never imports export).
VARIANTS = {
    "train-aligner": (("--bundle", "--model-dir"), Command(
        "export.marian.aligner_cli", "import", "train a guided-alignment head for a bundle made by nmt import")),
}
# Our own packages: a ModuleNotFoundError naming one of them is a bug, not a missing extra.
OWN_PACKAGES = frozenset({"nmt", "training", "export", "worker", "queue_config", "client", "api"})


class _Summaries:
    """The subparsers action as a stage sees it: each command's one-line help comes from ``specs``."""

    def __init__(self, action: argparse._SubParsersAction, specs: dict[str, Command]) -> None:
        self._action = action
        self._specs = specs

    def add_parser(self, name: str, **kwargs) -> argparse.ArgumentParser:
        kwargs["help"] = self._specs[name].summary
        return self._action.add_parser(name, **kwargs)


def command_spec(command: str, argv: list[str]) -> Command:
    """What defines ``command`` given its arguments ``argv``: a ``VARIANTS`` form when ``argv`` has
    one of its options, else ``COMMANDS``'."""
    options, variant = VARIANTS.get(command, ((), None))
    if any(word.split("=", 1)[0] in options for word in argv):
        return variant
    return COMMANDS[command]


def build_parser(command: str | None = None, argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser with the full options of ``command``'s stage (of every stage if None, of none if
    ``command`` names no command; the form ``argv`` chooses where the command has two); the other
    commands are listed by name and summary without importing their stages."""
    parser = argparse.ArgumentParser(prog="nmt", description="Batch neural machine translation.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    specs = dict(COMMANDS)
    if command in COMMANDS:
        specs[command] = command_spec(command, argv or [])
    modules = {spec.module for spec in specs.values()}
    loaded = modules if command is None else {specs[command].module} if command in specs else set()
    for name, spec in specs.items():
        if spec.module in loaded:
            if name == next(n for n, s in specs.items() if s.module == spec.module):
                importlib.import_module(spec.module).add_parser(_Summaries(subparsers, specs))
        else:
            subparsers.add_parser(name, help=spec.summary, add_help=False)
    return parser


def _command_in(argv: list[str]) -> str | None:
    """The command named in ``argv``: the first word that is not an option (``nmt`` itself has
    only flags without values)."""
    return next((word for word in argv if not word.startswith("-")), None)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("nmt-batch")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown (not installed)"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser(_command_in(argv) or "", argv).parse_args(argv)
    try:
        return args.handler(args)
    except ModuleNotFoundError as exc:
        missing = (exc.name or "").split(".")[0]
        if not missing or missing in OWN_PACKAGES:
            raise
        extra = command_spec(args.command, argv).extra
        # The package is on no registry: an extra is installed from a clone, in its root.
        where = f'pip install -e ".[{extra}]"' if extra else "pip install -e ."
        print(f"nmt {args.command}: needs the '{extra or 'core'}' install (module '{exc.name}' is missing): {where}",
              file=sys.stderr)
        return 2
    except (UserError, ValueError, FileNotFoundError, FileExistsError) as exc:
        print(f"nmt {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
