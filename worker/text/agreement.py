"""Agreement within the beam's n-best list: confidence features from the hypotheses the search
finished beside the best one, read from what the beam already holds (no second decoding).

Where the model is sure, the other finished hypotheses are near copies of the best, or carry
little of the probability; where it is not, they differ and weigh as much (Fomicheva et al. 2020,
"Unsupervised Quality Estimation for Neural Machine Translation", found the lexical similarity of
alternative outputs among the strongest unsupervised signals, there between outputs sampled with
dropout). Per decoded unit, over its finished hypotheses h_0 (the one taken) .. h_m-1, with p_i the
softmax of the search's ranking scores:

- ``nbest_agreement``: the expected chrF (0-1) of h_0 against the others, each weighted by its p
  renormalised over the others; 1 when h_0 is alone.
- ``nbest_mass``: p_0, h_0's share of the finished hypotheses' probability.
- ``nbest_gap``: score(h_0) - score(h_1), at most ``GAP_CAP`` (the cap when h_0 is alone).
- ``nbest_distinct``: how many different texts the finished hypotheses spell (whitespace aside).

A sentence decoded in several units takes each unit's value weighted by its h_0's tokens + 1.

Beam hypotheses mostly share a long beginning and end, so chrF is counted on what differs: the
character n-grams that lie wholly inside the shared beginning or end match one for one, and only
the others are counted (``chrf``); the alternatives' texts are spelt from h_0's pieces except for
the tokens where they differ.
"""
from __future__ import annotations

import math
from collections import Counter
from itertools import accumulate
from typing import Callable, Protocol, Sequence

AGREEMENT_FEATURES = ("nbest_agreement", "nbest_mass", "nbest_gap", "nbest_distinct")
GAP_CAP = 5.0  # the largest score gap recorded (and the gap of a hypothesis with no rival)
CHRF_ORDER = 6  # character n-grams 1..6, as sacreBLEU's chrF
CHRF_BETA = 2.0
_MARKER = "\u2581"  # SentencePiece's word marker
_ALONE = {"nbest_agreement": 1.0, "nbest_mass": 1.0, "nbest_gap": GAP_CAP, "nbest_distinct": 1.0}


class Finished(Protocol):
    """A hypothesis the beam finished (worker.engine.search.Hypothesis)."""

    tokens: Sequence[int]  # target ids, without bos/eos
    score: float  # the search's ranking score


def agreement_features(units: Sequence[tuple[Sequence[str], Sequence[Finished]]],
                       piece: Callable[[int], str]) -> dict[str, float]:
    """The features above for a sentence decoded as ``units``: per unit, the pieces of h_0 and
    every hypothesis its beam finished, h_0 first (none: h_0 stands alone). ``piece(id)``: a
    target id's SentencePiece piece."""
    values, weights = [], []
    for pieces, finished in units:
        values.append(_unit(pieces, finished, piece) if len(finished) > 1 else _ALONE)
        weights.append(len(pieces) + 1)
    total = float(sum(weights))
    return {name: sum(w * v[name] for w, v in zip(weights, values)) / total for name in AGREEMENT_FEATURES}


def _unit(pieces: Sequence[str], finished: Sequence[Finished], piece: Callable[[int], str]) -> dict[str, float]:
    scores = [float(h.score) for h in finished]
    top = max(scores)
    p = [math.exp(s - top) for s in scores]
    chars = [_visible(x) for x in pieces]
    text = "".join(chars)
    ends = [0, *accumulate(len(c) for c in chars)]  # ends[k]: characters of h_0's first k pieces
    best = tuple(finished[0].tokens)
    texts, agreement = {text}, 0.0
    for h, weight in zip(finished[1:], p[1:]):
        other = tuple(h.tokens)
        shortest = min(len(best), len(other))
        k = 0
        while k < shortest and best[k] == other[k]:
            k += 1
        j = 0
        while j < shortest - k and best[-1 - j] == other[-1 - j]:
            j += 1
        middle = "".join(_visible(piece(t)) for t in other[k:len(other) - j])
        spelt = text[:ends[k]] + middle + text[ends[len(best) - j]:]
        texts.add(spelt)
        agreement += weight * chrf(text, spelt, ends[k], ends[-1] - ends[len(best) - j])
    return {"nbest_agreement": agreement / sum(p[1:]), "nbest_mass": p[0] / sum(p),
            "nbest_gap": min(GAP_CAP, scores[0] - scores[1]), "nbest_distinct": float(len(texts))}


def _visible(text: str) -> str:
    """``text`` without word markers and whitespace (chrF reads characters, spaces aside)."""
    return "".join(text.replace(_MARKER, " ").split())


def _grams(text: str, n: int, start: int, stop: int) -> Counter:
    """Counts of the n-grams of ``text`` that start at start .. stop - 1 (sliced and counted in C)."""
    return Counter(map(text.__getitem__, map(slice, range(start, stop), range(start + n, stop + n))))


def chrf(hypothesis: str, reference: str, prefix: int = 0, suffix: int = 0) -> float:
    """Sentence chrF in [0, 1] of two texts without whitespace, as sacreBLEU computes it (character
    n-grams 1..6, precision and recall averaged over the orders both texts have, then F-beta,
    beta 2). ``prefix``, ``suffix``: characters the texts are known to share at their start and
    end (more are found here); n-grams wholly inside them match one for one and are not counted."""
    la, lb = len(hypothesis), len(reference)
    shortest = min(la, lb)
    prefix = min(prefix, shortest)
    while prefix < shortest and hypothesis[prefix] == reference[prefix]:
        prefix += 1
    suffix = min(suffix, shortest - prefix)
    while suffix < shortest - prefix and hypothesis[la - 1 - suffix] == reference[lb - 1 - suffix]:
        suffix += 1
    precision = recall = 0.0
    orders = 0
    for n in range(1, CHRF_ORDER + 1):
        if la < n or lb < n:
            break
        first = max(0, prefix - n + 1)  # n-grams starting before it lie wholly in the shared start
        a, b = _grams(hypothesis, n, first, min(la - n, la - suffix - 1) + 1), \
            _grams(reference, n, first, min(lb - n, lb - suffix - 1) + 1)
        both = a.keys() & b.keys()
        matches = first + max(0, suffix - n + 1) + sum(map(min, map(a.__getitem__, both), map(b.__getitem__, both)))
        precision += matches / (la - n + 1)
        recall += matches / (lb - n + 1)
        orders += 1
    if not orders:
        return 1.0 if la == lb == 0 else 0.0
    precision, recall = precision / orders, recall / orders
    factor = CHRF_BETA ** 2
    return (1 + factor) * precision * recall / (factor * precision + recall) if precision + recall else 0.0
