"""Give a bundle the lexical shortlist of another export of the same model.

    python -m export.graft_shortlist --from OTHER_BUNDLE BUNDLE

``nmt export --shortlist-pairs`` builds a shortlist at export. A bundle exported without one (or
one whose graphs must stay byte for byte as they are, such as a shipped bundle with an alignment
head and fitted settings) takes the table of another export whose target vocabulary is the same
file: ``shortlist.npz`` is rewritten with the table only, listed in ``files`` with its sha256, its
manifest entry copied (off by default until ``bench/shortlist.py --write`` measures it here), and
the bundle re-signed. The step graphs, and so every translation with the shortlist off, are unchanged.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from worker.engine.bundle import SHORTLIST, BundleError, load_bundle, replace_manifest, sha256_file, signature_for
from worker.engine.shortlist import Shortlist
from worker.engine.shortlist_graph import ShortlistStep

from .shortlist import SHORTLIST_FILE, ShortlistTable, write_shortlist


def graft(source: Path, target: Path) -> str:
    """Copy ``source``'s shortlist into ``target``; returns the new signature. ``BundleError`` if
    ``source`` has none or the two target vocabularies differ."""
    donor, bundle = load_bundle(source), load_bundle(target)
    if donor.shortlist_path is None:
        raise BundleError(f"{source}: this bundle has no lexical shortlist")
    vocab_files = [b.manifest["files"][b.manifest["vocab"][side]["file"]]
                   for b in (donor, bundle) for side in ("source", "target")]
    if vocab_files[:2] != vocab_files[2:]:
        raise BundleError(f"{source} and {target} have different vocabularies: the shortlist's ids would not match")
    table = Shortlist.load(donor.shortlist_path)
    ShortlistStep.of(bundle.graph_path("decoder_step")).check(table)  # the graph it will run with: a clear error now
    write_shortlist(target / SHORTLIST_FILE, ShortlistTable(table.offsets, table.targets.astype(np.int32),
                                                            table.frequent.astype(np.int32), stats={}))
    manifest = dict(bundle.manifest)
    entry = {k: v for k, v in donor.manifest[SHORTLIST].items() if k != "measured"}
    manifest[SHORTLIST] = entry | {"file": SHORTLIST_FILE, "default": False, "grafted_from": donor.signature}
    manifest["files"] = dict(manifest["files"]) | {SHORTLIST_FILE: sha256_file(target / SHORTLIST_FILE)}
    manifest["signature"] = signature_for(manifest)
    replace_manifest(target, manifest)
    return load_bundle(target).signature


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--from", dest="source", required=True, help="bundle whose shortlist is copied")
    parser.add_argument("bundle", help="bundle that receives it")
    args = parser.parse_args(argv)
    try:
        print(f"{args.bundle}: shortlist grafted, signature {graft(Path(args.source), Path(args.bundle))}")
    except BundleError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
