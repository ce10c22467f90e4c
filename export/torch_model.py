"""Torch implementation of the search's step model: the reference that ONNX Runtime must match,
and the PyTorch-eager baseline of the decoding benchmark."""
from __future__ import annotations

import numpy as np
import torch

from training.model import EncoderOutput, Seq2Seq
from worker.search import StepScores

from .graphs import TOPK


class TorchStepModel:
    """``encode``/``expand``/``initial_state``/``step``/``reorder`` over a torch ``Seq2Seq`` (eval)."""

    def __init__(self, model: Seq2Seq, topk: int = TOPK) -> None:
        self.model = model.eval()
        self.device = next(model.parameters()).device
        self.topk = topk  # the most candidates a step returns; 0: always the full vocabulary

    @torch.no_grad()
    def encode(self, src: np.ndarray, lengths: np.ndarray) -> EncoderOutput:
        return self.model.encode(torch.from_numpy(src).to(self.device), torch.from_numpy(lengths).to(self.device))

    def expand(self, encoded: EncoderOutput, repeats: int) -> EncoderOutput:
        if repeats == 1:
            return encoded
        return EncoderOutput(
            encoded.annotations.repeat_interleave(repeats, 0), encoded.keys.repeat_interleave(repeats, 0),
            encoded.state.repeat_interleave(repeats, 1), encoded.mask.repeat_interleave(repeats, 0),
        )

    def select(self, encoded: EncoderOutput, rows: np.ndarray) -> EncoderOutput:
        index = torch.from_numpy(rows).to(self.device)
        return EncoderOutput(encoded.annotations[index], encoded.keys[index], encoded.state[:, index], encoded.mask[index])

    def initial_state(self, encoded: EncoderOutput) -> torch.Tensor:
        return encoded.state

    @torch.no_grad()
    def step(self, prev_ids: np.ndarray, state: torch.Tensor, encoded: EncoderOutput, candidates: int = 0) -> StepScores:
        prev = torch.from_numpy(prev_ids).to(self.device)
        out = self.model.decoder.step(prev, state, encoded.annotations, encoded.keys, encoded.mask)
        log_probs = torch.log_softmax(self.model.decoder.readout(prev, out.state[-1], out.context), -1)
        attention = out.attention.cpu().numpy()
        if not candidates or not self.topk:
            return StepScores(log_probs.cpu().numpy(), None, out.state, attention)
        values, ids = torch.topk(log_probs, min(candidates, self.topk, log_probs.shape[-1]), dim=-1)
        return StepScores(values.cpu().numpy(), ids.cpu().numpy(), out.state, attention)

    def reorder(self, state: torch.Tensor, index: np.ndarray) -> torch.Tensor:
        return state[:, torch.from_numpy(index).to(self.device)]
