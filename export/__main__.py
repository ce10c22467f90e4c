"""``python -m export CHECKPOINT --out DIR``: the same as ``nmt export``."""
import argparse
import sys

from .cli import add_arguments, run

parser = argparse.ArgumentParser(prog="python -m export", description="Export a checkpoint to a verified ONNX bundle.")
add_arguments(parser)
sys.exit(run(parser.parse_args()))
