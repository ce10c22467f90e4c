"""Give a bundle a newly trained alignment head, keeping its translation graphs as they are.

    python -m export.graft_aligner --checkpoint HEAD_CHECKPOINT BUNDLE

``nmt train-aligner`` writes the model with a head added; ``nmt export`` puts both in a new
bundle. A bundle whose translation graphs must stay byte for byte as they are (a shipped one with
test scores, stand-ins, a confidence fit and a shortlist measured on them; an int8 bundle, whose
quantized step graph is not the same from one export to the next) takes the head alone: the
head is exported from the checkpoint and checked against torch as ``nmt export`` checks it,
``aligner.onnx`` is replaced, its graph and ``aligner`` entries and its sha256 are written, and the
bundle is re-signed. The checkpoint must hold the bundle's model: the same model config, training
step and vocabulary. Alignments change; translations, and so every recorded score, do not.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

from training.loading import LoadedModel, load_model
from worker.engine.bundle import (ALIGNER, MANIFEST, Bundle, BundleError, load_bundle, replace_manifest, sha256_file,
                                  signature_for, verify_graphs)

from .exporter import ExportOptions, _aligner, _write_vocabs, aligner_graph_entry, aligner_manifest_entry


def check_same_model(loaded: LoadedModel, manifest: dict, bundle_dir: Path) -> None:
    """``BundleError`` unless ``loaded`` is the model the bundle was exported from: its model config,
    training step and source vocabulary file."""
    if manifest.get("model_config") != asdict(loaded.spec.config):
        raise BundleError(f"{bundle_dir}: the checkpoint's model config is not the bundle's")
    step = (loaded.raw.get("progress") or {}).get("step")
    if (manifest.get("training") or {}).get("steps") != step:
        raise BundleError(f"{bundle_dir}: the bundle was exported at training step "
                          f"{(manifest.get('training') or {}).get('steps')}, the checkpoint is at step {step}")
    with tempfile.TemporaryDirectory() as tmp:
        ours = sha256_file(Path(tmp) / _write_vocabs(loaded, Path(tmp))["source"])
    if ours != manifest["files"][manifest["vocab"]["source"]["file"]]:
        raise BundleError(f"{bundle_dir}: the checkpoint's vocabulary is not the bundle's")


def graft(checkpoint: Path, bundle_dir: Path, tolerance: float = ExportOptions().tolerance) -> str:
    """Export ``checkpoint``'s alignment head into ``bundle_dir``; returns the new signature.
    ``BundleError`` if the checkpoint has no head or is not the bundle's model; ``ParityError`` if
    the exported head differs from torch."""
    bundle = load_bundle(bundle_dir)
    loaded = load_model(checkpoint)
    check_same_model(loaded, bundle.manifest, bundle_dir)
    with tempfile.TemporaryDirectory(dir=bundle_dir, prefix=".aligner.") as staging:
        aligner = _aligner(loaded, Path(staging), ExportOptions(tolerance=tolerance))
        if aligner is None:
            raise BundleError(f"{checkpoint}: this checkpoint has no alignment head (nmt train-aligner adds one)")
        return install_head(bundle, Path(staging), aligner, loaded.spec.config)


def install_head(bundle: Bundle, staging: Path, aligner: dict, dims) -> str:
    """Move an exported and checked head into ``bundle`` and re-sign it; returns the new signature.
    ``aligner``: its description (``exporter._aligner``'s: file, outputs, parity, how it was trained),
    the file in ``staging`` (a directory on the bundle's file system); ``dims``: the widths the head
    reads (``training.aligner.HeadDims`` or a ``ModelConfig``). Only ``aligner.onnx``, the manifest's
    ``graphs.aligner``, ``aligner`` and ``files`` entries and the signature change."""
    bundle_dir = bundle.path
    old = bundle.manifest["graphs"].get(ALIGNER, {}).get("file")
    shutil.copymode(bundle_dir / MANIFEST, staging / aligner["file"])  # as the bundle's files are
    os.replace(staging / aligner["file"], bundle_dir / aligner["file"])
    manifest = dict(bundle.manifest)
    manifest["graphs"] = dict(manifest["graphs"]) | {ALIGNER: aligner_graph_entry(aligner, dims)}
    manifest[ALIGNER] = aligner_manifest_entry(aligner)
    files = {k: v for k, v in manifest["files"].items() if k != old}
    manifest["files"] = files | {aligner["file"]: sha256_file(bundle_dir / aligner["file"])}
    manifest["signature"] = signature_for(manifest)
    replace_manifest(bundle_dir, manifest)
    grafted = load_bundle(bundle_dir)
    verify_graphs(grafted)
    return grafted.signature


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", required=True, help="the bundle's model with a head (nmt train-aligner --out)")
    parser.add_argument("bundle", help="bundle that receives the head")
    args = parser.parse_args(argv)
    try:
        signature = graft(Path(args.checkpoint), Path(args.bundle))
    except BundleError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{args.bundle}: alignment head grafted, signature {signature}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
