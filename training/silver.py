"""Silver word alignments from eflomal (Östling and Tiedemann 2016; ``pip install eflomal``).

eflomal runs in both directions and the two are symmetrised with grow-diag-final-and. It sees
lower-cased words with their leading and trailing punctuation stripped (a word of punctuation only
is kept as it is), one token per whitespace word, so its word indices are the whitespace words that
``nmt align`` prints. Used to train the guided-alignment head (``training.aligner``) and, by the
alignment and tag-placement benchmarks, as a reference.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Sequence

from nmt.links import Links, grow_diag_final_and, parse_pharaoh

PUNCTUATION = "\"'.,;:!?()[]{}«»„“”‚‘’-–—…/*"

def eflomal_words(line: str) -> str:
    """What eflomal sees of a line: one token per whitespace word, lower-cased, punctuation stripped."""
    return " ".join(w.lower().strip(PUNCTUATION) or w.lower() for w in line.split())


def silver_links(pairs: Sequence[tuple[str, str]], extra: Sequence[tuple[str, str]] = ()) -> list[Links]:
    """eflomal links of ``pairs`` (its statistics also learnt from ``extra``), grow-diag-final-and;
    an empty set for a pair with an empty side."""
    import eflomal

    # eflomal needs a word on both sides; empty lines get a placeholder and no links.
    every = [(eflomal_words(s) or "<empty>", eflomal_words(t) or "<empty>") for s, t in [*pairs, *extra]]
    with tempfile.TemporaryDirectory() as tmp:
        fwd, rev = os.path.join(tmp, "fwd"), os.path.join(tmp, "rev")
        eflomal.Aligner().align([s for s, _ in every], [t for _, t in every],
                                links_filename_fwd=fwd, links_filename_rev=rev, quiet=True)
        forward = Path(fwd).read_text().splitlines()[: len(pairs)]
        backward = Path(rev).read_text().splitlines()[: len(pairs)]
    return [grow_diag_final_and(set(parse_pharaoh(f)), set(parse_pharaoh(b))) if s.split() and t.split() else set()
            for (s, t), f, b in zip(pairs, forward, backward)]

