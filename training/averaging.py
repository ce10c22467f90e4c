"""An exponential moving average of the weights (Polyak averaging), kept beside the model.

Validation scores the average as well as the raw weights; the better of the two is what
``best.pt`` holds. In short runs at a high learning rate the average is usually the better model:
it smooths the noise of the last few hundred steps at no cost to the optimizer.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

import torch
from torch import Tensor, nn


class WeightAverage:
    """shadow <- d * shadow + (1 - d) * weights after every optimizer step, with the decay warmed
    up as d_t = min(decay, (1 + t) / (10 + t)) so that the first steps' weights fade quickly."""

    def __init__(self, model: nn.Module, decay: float) -> None:
        self.decay = decay
        self.updates = 0
        self.names = [name for name, p in model.named_parameters() if p.dtype.is_floating_point]
        self.shadow = [p.detach().clone() for p in self._params(model)]

    def _params(self, model: nn.Module) -> list[Tensor]:
        params = dict(model.named_parameters())
        return [params[name] for name in self.names]

    @torch.no_grad()
    def update(self, model: nn.Module) -> None:
        self.updates += 1
        decay = min(self.decay, (1 + self.updates) / (10 + self.updates))
        torch._foreach_lerp_(self.shadow, [p.detach() for p in self._params(model)], 1.0 - decay)

    @contextmanager
    def applied(self, model: nn.Module) -> Iterator[None]:
        """The averaged weights in ``model`` for the duration, the raw ones back after."""
        params = self._params(model)
        raw = [p.detach().clone() for p in params]
        with torch.no_grad():
            torch._foreach_copy_(params, self.shadow)
        try:
            yield
        finally:
            with torch.no_grad():
                torch._foreach_copy_(params, raw)

    def state_dict(self) -> dict:
        return {"decay": self.decay, "updates": self.updates, "shadow": dict(zip(self.names, self.shadow))}

    def load_state_dict(self, state: dict) -> None:
        missing = set(self.names) - set(state["shadow"])
        if missing:
            raise ValueError(f"weight average lacks {sorted(missing)[:3]}")
        self.updates = int(state["updates"])
        self.shadow = [state["shadow"][name].to(self.shadow[i].device, self.shadow[i].dtype).clone()
                       for i, name in enumerate(self.names)]  # float16 in a snapshot
