"""Learning-rate schedules that do not depend on validation scores.

``plateau`` (the default) halves the rate when validation BLEU stops improving; it lives in the
trainer as torch's ReduceLROnPlateau. ``budget`` suits a run bounded by ``train.max_seconds``: a
linear warm-up over ``warmup_steps``, a constant rate, then a linear fall to ``min_lr`` over the
last ``anneal_fraction`` of the time budget, so the run ends annealed wherever the budget ends it,
on any machine speed.
"""

from __future__ import annotations

from .config import TrainConfig


def budget_lr(cfg: TrainConfig, step: int, elapsed: float) -> float:
    """The ``budget`` schedule's rate for the optimizer step after ``step`` steps and
    ``elapsed`` seconds of training (rank 0's clock under torchrun)."""
    lr = cfg.lr
    if cfg.warmup_steps and step < cfg.warmup_steps:
        lr = cfg.lr * (step + 1) / cfg.warmup_steps
    left = 1.0 - elapsed / cfg.max_seconds  # share of the budget still to run
    if left < cfg.anneal_fraction:
        lr = min(lr, cfg.min_lr + (cfg.lr - cfg.min_lr) * max(left, 0.0) / cfg.anneal_fraction)
    return lr
