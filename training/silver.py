"""Silver word alignments from eflomal (Östling and Tiedemann 2016; ``pip install eflomal``).

eflomal runs in both directions and the two are symmetrised with grow-diag-final-and. It sees
lower-cased text in one of two tokenisations:

- words (the default): one token per whitespace word, its leading and trailing punctuation stripped
  (a word of punctuation only is kept as it is), so its indices are the whitespace words that ``nmt
  align`` prints. The alignment and tag-placement benchmarks score against these.
- ``split=True``: the alignment tokens of ``tokens``, each leading and trailing punctuation mark a
  token of its own, so the final full stop links to the final full stop and a comma to a comma.
  The guided-alignment head (``training.aligner``) learns from these: it then knows where
  punctuation goes whether a text has it attached to words or spaced apart (tokenized text).
"""
from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import Sequence

from nmt.links import Links, grow_diag_final_and, parse_pharaoh

PUNCTUATION = "\"'.,;:!?()[]{}«»„“”‚‘’-–—…/*"

def eflomal_words(line: str) -> str:
    """What eflomal sees of a line: one token per whitespace word, lower-cased, punctuation stripped."""
    return " ".join(w.lower().strip(PUNCTUATION) or w.lower() for w in line.split())


def tokens(line: str) -> list[tuple[int, int]]:
    """[start, end) of each alignment token of ``line``: its whitespace words, with each leading and
    trailing punctuation mark split off as a token of its own (a run of one repeated mark, such as
    "...", is one token). Punctuation inside a word ("EU-Haushalt", "Olaf's", "e.g") stays in it."""
    spans: list[tuple[int, int]] = []
    for word in _WORD.finditer(line):
        start, text = word.start(), word.group()
        core_start = len(text) - len(text.lstrip(PUNCTUATION))
        core_end = len(text.rstrip(PUNCTUATION))
        if core_start == len(text):  # punctuation only
            spans += _marks(text, start)
            continue
        spans += [*_marks(text[:core_start], start), (start + core_start, start + core_end),
                  *_marks(text[core_end:], start + core_end)]
    return spans


def _marks(text: str, offset: int) -> list[tuple[int, int]]:
    return [(offset + m.start(), offset + m.end()) for m in _RUN.finditer(text)]


_WORD = re.compile(r"\S+")
_RUN = re.compile(r"(.)\1*", re.DOTALL)


def token_words(line: str) -> str:
    """What eflomal sees of a line with ``split=True``: its alignment tokens, lower-cased."""
    return " ".join(line[start:end].lower() for start, end in tokens(line))


def silver_links(pairs: Sequence[tuple[str, str]], extra: Sequence[tuple[str, str]] = (),
                 split: bool = False) -> list[Links]:
    """eflomal links of ``pairs`` (its statistics also learnt from ``extra``), grow-diag-final-and;
    an empty set for a pair with an empty side. Indices are whitespace words, or with ``split`` the
    alignment tokens of ``tokens``."""
    return [grow_diag_final_and(forward, backward) for forward, backward in silver_directions(pairs, extra, split)]


def silver_directions(pairs: Sequence[tuple[str, str]], extra: Sequence[tuple[str, str]] = (),
                      split: bool = False) -> list[tuple[Links, Links]]:
    """eflomal's two directions of each pair before they are joined: (forward, backward) links,
    (source, target) index pairs both. Forward gives each target token at most one source token,
    backward each source token at most one target token. Empty sets for a pair with an empty side."""
    import eflomal

    view = token_words if split else eflomal_words
    # eflomal needs a word on both sides; empty lines get a placeholder and no links.
    every = [(view(s) or "<empty>", view(t) or "<empty>") for s, t in [*pairs, *extra]]
    with tempfile.TemporaryDirectory() as tmp:
        fwd, rev = os.path.join(tmp, "fwd"), os.path.join(tmp, "rev")
        eflomal.Aligner().align([s for s, _ in every], [t for _, t in every],
                                links_filename_fwd=fwd, links_filename_rev=rev, quiet=True)
        forward = Path(fwd).read_text().splitlines()[: len(pairs)]
        backward = Path(rev).read_text().splitlines()[: len(pairs)]
    return [(set(parse_pharaoh(f)), set(parse_pharaoh(b))) if s.split() and t.split() else (set(), set())
            for (s, t), f, b in zip(pairs, forward, backward)]
