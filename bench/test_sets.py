"""The evaluation sets the benchmarks read, by name: the shared data's (newstest, Multi30k) and the
near-duplicate-free splits ``nmt build-data`` writes (Tatoeba, software and documentation dev/test;
see docs/models.md, Data). One home for their paths.

``SHARED``: ``../shared/data`` beside the work tree. ``BUILT``: ``$NMT_BUILT_DATA``, else
build-data's default output (``training.build_data.DEFAULT_OUT``)."""
from __future__ import annotations

import os
from pathlib import Path

from training.build_data import DEFAULT_OUT

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED = REPO_ROOT.parent / "shared" / "data"
BUILT = Path(os.environ.get("NMT_BUILT_DATA") or DEFAULT_OUT)

# name -> (source, reference): relative to the shared data, or to BUILT when they start with "@"
SETS = {
    "newstest2013": ("wmt-newstest-de-en/newstest2013.en.gz", "wmt-newstest-de-en/newstest2013.de.gz"),
    "newstest2014": ("wmt-newstest-de-en/newstest2014.en.gz", "wmt-newstest-de-en/newstest2014.de.gz"),
    "multi30k-val": ("multi30k/val.en.gz", "multi30k/val.de.gz"),
    "multi30k-test2016": ("multi30k/test_2016_flickr.en.gz", "multi30k/test_2016_flickr.de.gz"),
    "tatoeba-dev": ("@tatoeba/dev.en.gz", "@tatoeba/dev.de.gz"),
    "tatoeba-test": ("@tatoeba/test.en.gz", "@tatoeba/test.de.gz"),
    "software-dev": ("@software/dev.en.gz", "@software/dev.de.gz"),
    "software-test": ("@software/test.en.gz", "@software/test.de.gz"),
    "docs-dev": ("@docs/dev.en.gz", "@docs/dev.de.gz"),
    "docs-test": ("@docs/test.en.gz", "@docs/test.de.gz"),
}


def path(name: str, shared: Path = SHARED) -> Path:
    """A set file's path: ``name`` one of SETS' entries."""
    return BUILT / name[1:] if name.startswith("@") else Path(shared) / name


def files(set_name: str, shared: Path = SHARED) -> tuple[Path, Path]:
    """The (source, reference) files of the set ``set_name``."""
    source, reference = SETS[set_name]
    return path(source, shared), path(reference, shared)
