"""Give a bundle the table of its words' usual case, built from its model's training pairs.

    python -m export.graft_casing --checkpoint CHECKPOINT [--data-dir DIR] BUNDLE

``nmt export`` writes ``casing.json.gz`` when the checkpoint's training pairs are readable; ``nmt
align`` reads it to decode text that arrives all in lower case in its words' usual case. A bundle
exported without one (or whose graphs must stay byte for byte as they are) takes it here: the
table is built from the checkpoint's training corpora as export builds it, listed in ``files``
with its sha256 and a ``casing`` entry, and the bundle is re-signed. Translations do not change.
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from training.corpus import CorpusError
from training.loading import load_model
from worker.engine.bundle import (CASING, MANIFEST, BundleError, load_bundle, replace_manifest, sha256_file,
                                  signature_for)

from .exporter import ExportOptions, casing_table


def graft(checkpoint: Path, bundle_dir: Path, data_dir: str | None = None) -> str:
    """Build ``checkpoint``'s case table into ``bundle_dir``; returns the new signature.
    ``BundleError`` if the languages differ; ``CorpusError`` if the training pairs are not readable."""
    bundle = load_bundle(bundle_dir)
    loaded = load_model(checkpoint)
    languages = (loaded.config.data.src_lang, loaded.config.data.tgt_lang)
    if languages != (bundle.source_language, bundle.target_language):
        raise BundleError(f"{bundle_dir}: the bundle translates {bundle.source_language}-{bundle.target_language}, "
                          f"the checkpoint {'-'.join(languages)}")
    with tempfile.TemporaryDirectory(dir=bundle_dir, prefix=".casing.") as staging:
        entry = casing_table(loaded, Path(staging), ExportOptions(data_dir=data_dir))
        if entry is None:
            raise CorpusError(f"{checkpoint}: its training pairs are not readable here (--data-dir: where they are)")
        shutil.copymode(bundle_dir / MANIFEST, Path(staging) / entry["file"])  # as the bundle's files are
        Path(staging, entry["file"]).replace(bundle_dir / entry["file"])
    manifest = dict(bundle.manifest)
    manifest[CASING] = entry
    manifest["files"] = dict(manifest["files"]) | {entry["file"]: sha256_file(bundle_dir / entry["file"])}
    manifest["signature"] = signature_for(manifest)
    replace_manifest(bundle_dir, manifest)
    return load_bundle(bundle_dir).signature


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", required=True, type=Path, help="the bundle's model (its training corpora)")
    parser.add_argument("--data-dir", help="corpus directory, for a config without data.corpora")
    parser.add_argument("bundle", type=Path, help="bundle that receives the table")
    args = parser.parse_args(argv)
    try:
        signature = graft(args.checkpoint, args.bundle, args.data_dir)
    except (BundleError, CorpusError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{args.bundle}: case table grafted, signature {signature}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
