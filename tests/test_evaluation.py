"""The published-Multi30k score's tokenization matches the perl scripts the references were made with."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from worker.engine.evaluation import multi30k_tokenize, read_lines

from .conftest import REPO_ROOT

DATA = Path(os.environ.get("NMT_DATA_DIR", REPO_ROOT.parent / "shared" / "data" / "multi30k"))


@pytest.mark.parametrize("language, raw, expected", [
    # lines of Multi30k with their reference tokenization (tok/*.lc.norm.tok.*)
    ("de", "Ein Mann in einem blauen Hemd hält ein Schild, auf dem steht: „Come on now ... what's gayer than tea.“",
     "ein mann in einem blauen hemd hält ein schild , auf dem steht : &quot; come on now ... what &apos; s gayer "
     "than tea &quot; ."),
    ("fr", "Une femme jette un coup d’œil dans un télescope dans les bois.",
     "une femme jette un coup d &quot; œil dans un télescope dans les bois ."),
    ("en", "A boy wearing headphones sits on a woman's shoulders.",
     "a boy wearing headphones sits on a woman &apos;s shoulders ."),
])
def test_known_lines_tokenize_as_the_references(language, raw, expected):
    assert multi30k_tokenize(raw, language) == expected


@pytest.mark.skipif(not (DATA / "tok").is_dir(), reason=f"no Multi30k references under {DATA} (set NMT_DATA_DIR)")
def test_every_reference_line_of_test_and_val_is_reproduced():
    mismatches = []
    for split in ("test_2016_flickr", "val"):
        for language in ("en", "de", "fr", "cs"):
            raw = read_lines(DATA / f"{split}.{language}.gz")
            reference = read_lines(DATA / "tok" / f"{split}.lc.norm.tok.{language}")
            assert len(raw) == len(reference)
            mismatches += [(split, language, i) for i, (r, t) in enumerate(zip(raw, reference))
                           if multi30k_tokenize(r, language) != t]
    assert mismatches == []
