"""Checks shared by the search tests of both decoder families: which vocabulary each step was asked
for, and two searches' beams compared hypothesis by hypothesis."""
from __future__ import annotations


def record_asked(model) -> list:
    """Wrap ``model.step`` so that every call's ``ask`` (its fourth argument: a top-k size, or
    ``EVERY`` for the whole vocabulary) is appended to the list returned, in call order."""
    asked: list = []
    step = model.step

    def recorded(*args, **kwargs):
        asked.append(args[3])
        return step(*args, **kwargs)

    model.step = recorded
    return asked


def assert_same_beams(found, want, *, score_tol: float = 1e-6, log_prob_tol: float | None = None) -> None:
    """Each sentence's hypotheses hold the same tokens in the same order, their scores (and, with
    ``log_prob_tol``, their log-probabilities) equal within the tolerance."""
    assert [[h.tokens for h in hyps] for hyps in found] == [[h.tokens for h in hyps] for hyps in want]
    for got, ref in zip(found, want):
        assert max(abs(g.score - w.score) for g, w in zip(got, ref)) < score_tol
        if log_prob_tol is not None:
            assert max(abs(g.log_prob - w.log_prob) for g, w in zip(got, ref)) < log_prob_tol
