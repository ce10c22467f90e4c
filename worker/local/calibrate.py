"""Fitting a bundle's confidence model (``worker.text.quality``) to sentence chrF on dev data,
and measuring how well a confidence ranks translations (Spearman) and finds bad ones (AUROC).

The fit is a logistic model with fractional targets y = chrF / 100 (cross-entropy, L2 penalty,
Newton's method): its output reads as an expected chrF, so ``low_confidence`` at 0.3 means
"probably below chrF 30".
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from worker.text.quality import FEATURES, ConfidenceModel

BAD_CHRF = 30.0  # a translation below this sentence chrF counts as bad (for AUROC)


@dataclass(frozen=True)
class Sample:
    features: Mapping[str, float]
    chrf: float  # sentence chrF of the translation against its reference, 0-100


def samples(results: Sequence[Any], references: Sequence[str]) -> list[Sample]:
    """Samples from decoded segment results (``SegmentResult`` with ``facts``) and their
    references; segments that were not decoded (copied through) have no features and are left out."""
    from sacrebleu.metrics import CHRF

    chrf = CHRF()
    return [Sample(dict(r.facts.features), float(chrf.sentence_score(r.translation, [ref]).score))
            for r, ref in zip(results, references) if r.facts is not None]


def fit(data: Sequence[Sample], l2: float = 1.0, threshold: float | None = None, iterations: int = 50,
        fit_info: Mapping[str, Any] | None = None, features: Sequence[str] = FEATURES) -> ConfidenceModel:
    """The logistic model over ``features`` minimising cross-entropy to chrF / 100 plus
    ``l2`` * |w|^2 / 2. Its ``low_confidence`` threshold is ``threshold``, else the one that best
    finds translations below ``BAD_CHRF`` on ``data`` (highest F1)."""
    if len(data) < 20:
        raise ValueError(f"need at least 20 decoded dev sentences to fit a confidence model, got {len(data)}")
    features = tuple(features)
    x_raw = np.array([[s.features[f] for f in features] for s in data], dtype=np.float64)
    y = np.array([s.chrf / 100.0 for s in data])
    mean, scale = x_raw.mean(0), x_raw.std(0)
    scale[scale < 1e-9] = 1.0
    x = np.hstack([(x_raw - mean) / scale, np.ones((len(data), 1))])
    w = np.zeros(x.shape[1])
    penalty = np.full(x.shape[1], l2)
    penalty[-1] = 0.0  # the bias is not penalised
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-(x @ w)))
        gradient = x.T @ (p - y) + penalty * w
        hessian = (x * (p * (1 - p))[:, None]).T @ x + np.diag(penalty) + 1e-9 * np.eye(len(w))
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    model = ConfidenceModel(tuple(float(v) for v in w[:-1]), float(w[-1]), tuple(float(v) for v in mean),
                            tuple(float(v) for v in scale), BAD_CHRF / 100, "bundle", dict(fit_info or {}), features)
    if threshold is None:
        threshold = best_threshold([model.confidence(s.features) for s in data], [s.chrf < BAD_CHRF for s in data])
    return replace(model, threshold=round(float(threshold), 4))


def best_threshold(confidence: Sequence[float], bad: Sequence[bool]) -> float:
    """The confidence below which flagging finds the ``bad`` items with the highest F1."""
    order = np.argsort(confidence, kind="mergesort")
    c = np.asarray(confidence, dtype=np.float64)[order]
    hits = np.cumsum(np.asarray(bad, dtype=np.float64)[order])  # bad among the k + 1 least confident
    flagged = np.arange(1, len(c) + 1)
    f1 = 2 * hits / (flagged + hits[-1]) if hits[-1] else np.zeros(len(c))
    k = int(np.argmax(f1))
    return (c[k] + c[k + 1]) / 2 if k + 1 < len(c) else c[k] + 1e-6


def ranks(values: Sequence[float]) -> np.ndarray:
    """Ranks from 1, ties given their average rank."""
    values = np.asarray(values, dtype=np.float64)
    order = np.argsort(values, kind="mergesort")
    sorted_values = values[order]
    out = np.empty(len(values))
    start = 0
    while start < len(values):
        end = start
        while end + 1 < len(values) and sorted_values[end + 1] == sorted_values[start]:
            end += 1
        out[order[start:end + 1]] = (start + end) / 2.0 + 1.0
        start = end + 1
    return out


def spearman(a: Sequence[float], b: Sequence[float]) -> float:
    """Spearman's rank correlation (Pearson's r of the ranks)."""
    ra, rb = ranks(a), ranks(b)
    ra, rb = ra - ra.mean(), rb - rb.mean()
    denominator = float(np.sqrt((ra ** 2).sum() * (rb ** 2).sum()))
    return float((ra * rb).sum() / denominator) if denominator else 0.0


def auroc(scores: Sequence[float], positive: Sequence[bool]) -> float:
    """Area under the ROC curve of ``scores`` for finding the ``positive`` items (Mann-Whitney U)."""
    positive = np.asarray(positive, dtype=bool)
    n_pos, n_neg = int(positive.sum()), int((~positive).sum())
    if not n_pos or not n_neg:
        return float("nan")
    r = ranks(scores)
    return float((r[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def evaluate(model: ConfidenceModel, data: Sequence[Sample]) -> dict[str, float]:
    """How well ``model``'s confidence tracks sentence chrF on ``data``."""
    confidence = [model.confidence(s.features) for s in data]
    chrf = [s.chrf for s in data]
    bad = [c < BAD_CHRF for c in chrf]
    flagged = [c < model.threshold for c in confidence]
    true_flags = sum(f and b for f, b in zip(flagged, bad))
    return {
        "sentences": len(data),
        "spearman": round(spearman(confidence, chrf), 4),
        "auroc": round(auroc([-c for c in confidence], bad), 4),
        "bad_share": round(sum(bad) / max(1, len(bad)), 4),
        "flagged_share": round(sum(flagged) / max(1, len(flagged)), 4),
        "flag_precision": round(true_flags / max(1, sum(flagged)), 4),
        "flag_recall": round(true_flags / max(1, sum(bad)), 4),
    }


def write_to_bundle(bundle_dir: str | Path, model: ConfidenceModel) -> Path:
    """Store ``model`` in the bundle's manifest under ``quality`` (atomically). The manifest is not
    part of the bundle's signature, which names its model files, so the signature stays."""
    from worker.engine.bundle import update_manifest

    return update_manifest(bundle_dir, quality=model.to_json())
