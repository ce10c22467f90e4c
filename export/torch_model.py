"""Torch implementation of the search's step model: the reference that ONNX Runtime must match,
and the PyTorch-eager baseline of the decoding benchmark."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from training.model import Seq2Seq
from training.vocab import BOS_ID, EOS_ID, PAD_ID, UNK_ID
from worker.engine.bundle import SpecialIds
from worker.engine.search import StepScores, beam_rows

from .graphs import TOPK

# training.vocab's ids, as the exporter writes them into every bundle's manifest
SPECIAL_IDS = SpecialIds(pad=PAD_ID, unk=UNK_ID, bos=BOS_ID, eos=EOS_ID)


@dataclass(frozen=True)
class TorchEncoded:
    """An encoded batch of B sentences with K decoder rows each (K = 1 until ``expand``)."""

    annotations: torch.Tensor  # float [B, S, 2H], or [B * K, S, 2H] when not grouped
    keys: torch.Tensor  # float [B or B * K, S, A]
    mask: torch.Tensor  # bool [B or B * K, S]
    state: torch.Tensor  # float [L, B, D]: the decoder's first state, one row per sentence
    repeats: int = 1  # K


def quantize_int8_dynamic(model: Seq2Seq) -> Seq2Seq:
    """torch's own dynamic int8 quantization of the model's Linear and GRUCell layers (weights
    int8, activations quantized per call): the PyTorch counterpart of an int8 bundle, for the
    benchmarks."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.ao.quantization announces its move to torchao
        return torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear, torch.nn.GRUCell}, dtype=torch.qint8)


class TorchStepModel:
    """``encode``/``expand``/``initial_state``/``step``/``reorder`` over a torch ``Seq2Seq`` (eval).

    ``grouped``: the K rows of a sentence attend to its encoder outputs held once (as the ONNX
    step graph does); otherwise they are repeated per row, as most beam-search code does.
    """

    def __init__(self, model: Seq2Seq, topk: int = TOPK, grouped: bool = True) -> None:
        self.model = model.eval()
        self.device = next(model.parameters()).device
        self.topk = topk  # the most candidates a step returns; 0: always the full vocabulary
        self.special = SPECIAL_IDS
        self.grouped = grouped

    @torch.no_grad()
    def encode(self, src: np.ndarray, lengths: np.ndarray) -> TorchEncoded:
        enc = self.model.encode(torch.from_numpy(src).to(self.device), torch.from_numpy(lengths).to(self.device))
        return TorchEncoded(enc.annotations, enc.keys, enc.mask, enc.state)

    def expand(self, encoded: TorchEncoded, repeats: int) -> TorchEncoded:
        if self.grouped or repeats == encoded.repeats:
            return TorchEncoded(encoded.annotations, encoded.keys, encoded.mask, encoded.state, repeats)
        return TorchEncoded(encoded.annotations.repeat_interleave(repeats, 0), encoded.keys.repeat_interleave(repeats, 0),
                            encoded.mask.repeat_interleave(repeats, 0), encoded.state, repeats)

    def select(self, encoded: TorchEncoded, sentences: np.ndarray) -> TorchEncoded:
        rows = sentences
        if not self.grouped and encoded.repeats > 1:
            rows = beam_rows(sentences, encoded.repeats)
        rows, sentences = torch.from_numpy(rows).to(self.device), torch.from_numpy(sentences).to(self.device)
        return TorchEncoded(encoded.annotations[rows], encoded.keys[rows], encoded.mask[rows],
                            encoded.state[:, sentences], encoded.repeats)

    def initial_state(self, encoded: TorchEncoded) -> torch.Tensor:
        return encoded.state

    @torch.no_grad()
    def step(self, prev_ids: np.ndarray, state: torch.Tensor, encoded: TorchEncoded, candidates: int = 0) -> StepScores:
        prev = torch.from_numpy(prev_ids).to(self.device)
        out = self.model.decoder.step(prev, state, encoded.annotations, encoded.keys, encoded.mask)
        log_probs = torch.log_softmax(self.model.decoder.readout(prev, out.state[-1], out.context), -1)
        attention = out.attention.cpu().numpy()
        if candidates <= 0 or not self.topk:  # 0 or EVERY: the whole vocabulary
            return StepScores(log_probs.cpu().numpy(), None, out.state, attention)
        values, ids = torch.topk(log_probs, min(candidates, self.topk, log_probs.shape[-1]), dim=-1)
        return StepScores(values.cpu().numpy(), ids.cpu().numpy(), out.state, attention)

    def reorder(self, state: torch.Tensor, index: np.ndarray) -> torch.Tensor:
        return state[:, torch.from_numpy(index).to(self.device)]
