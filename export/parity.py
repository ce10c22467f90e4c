"""Parity between the torch model and its ONNX graphs, in layers (minGPT-style):
graph outputs (max abs difference), then greedy and beam token ids, then BLEU for lossy precisions.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Callable, Sequence

import numpy as np
import torch

from training.aligner import AlignmentHead
from training.greedy import greedy_decode, pad_batch
from training.model import Seq2Seq
from training.vocab import BOS_ID
from worker.engine.bundle import READOUT_OUTPUT, REVERSE_ALIGNMENT
from worker.engine.ort_model import OrtStepModel
from worker.engine.search import SearchOptions, search_in_batches

from .graphs import EXAMPLE_LENGTHS, TOPK, aligner_inputs
from .torch_model import TorchStepModel

# Padded batches whose lengths differ from the export example's.
PARITY_LENGTHS = ((17, 5, 9, 1), (2,), (23, 23, 4), (8, 30))


class ParityError(AssertionError):
    """The ONNX graphs do not compute what the torch model computes; names the output and size."""


@dataclass(frozen=True)
class SearchParity:
    sentences: int
    greedy_equal: int
    beam_equal: int
    beam: int

    @property
    def ok(self) -> bool:
        return self.greedy_equal == self.sentences and self.beam_equal == self.sentences


def graph_parity(model: Seq2Seq, ort_model: OrtStepModel, tolerance: float = 1e-4, steps: int = 3,
                 beam: int = 3) -> dict[str, float]:
    """Max abs difference of every graph output, torch vs ONNX Runtime (held to ``tolerance``
    relative to values over 1 in magnitude, absolute below: ``_Differences``), over padded batches with
    lengths never seen at export and ``steps`` chained decoder steps of ``beam`` rows per sentence
    (a beam count unlike the export example's; torch repeats the encoder outputs per row, the
    step graph may hold them once per sentence). Raises ``ParityError``."""
    assert not set(PARITY_LENGTHS) & {EXAMPLE_LENGTHS}
    model = model.eval()
    diffs = _Differences()
    generator = torch.Generator().manual_seed(1)
    vocab_src = model.encoder.embed.num_embeddings
    vocab_tgt = model.decoder.embed.num_embeddings
    for lengths in PARITY_LENGTHS:
        src, lens = pad_batch([torch.randint(4, vocab_src, (n,), generator=generator).tolist() for n in lengths])
        with torch.no_grad():
            ref = model.encode(src, lens)
        got = ort_model.encode(src.numpy(), lens.numpy())
        diffs.record("encoder.annotations", ref.annotations, got.annotations)
        diffs.record("encoder.keys", ref.keys, got.keys)
        diffs.record("encoder.init_state", ref.state, got.init_state)
        rows = len(lengths) * beam
        got = ort_model.expand(got, beam)
        per_row = [x.repeat_interleave(beam, 0) for x in (ref.annotations, ref.keys, ref.mask)]
        prev = torch.full((rows,), BOS_ID, dtype=torch.long)
        state_ref = ref.state.repeat_interleave(beam, 1)
        for _ in range(steps):
            with torch.no_grad():
                out = model.decoder.step(prev, state_ref, *per_row)
                readout = model.decoder.readout_vector(prev, out.state[-1], out.context)
                log_probs = torch.log_softmax(model.decoder.output(readout), -1)
            # Feed ONNX Runtime the torch state too, so each step is compared on equal inputs.
            full = ort_model.step(prev.numpy(), state_ref.numpy(), got, candidates=0)
            diffs.record("decoder_step.log_probs", log_probs, full.log_probs)
            diffs.record("decoder_step.new_state", out.state, full.state)
            diffs.record("decoder_step.attention", out.attention, full.attention)
            if READOUT_OUTPUT in {o.name for o in ort_model.decoder.get_outputs()}:
                diffs.record("decoder_step.readout", readout, ort_model.decoder.run([READOUT_OUTPUT], {
                    "prev_ids": prev.numpy(), "state": state_ref.numpy(), "annotations": got.annotations,
                    "keys": got.keys, "src_mask": got.mask})[0])
            top = ort_model.step(prev.numpy(), state_ref.numpy(), got, candidates=TOPK)
            diffs.record("decoder_step.topk_log_probs", log_probs.gather(-1, torch.from_numpy(top.ids)), top.log_probs)
            expected_top = torch.topk(log_probs, top.ids.shape[-1], dim=-1).values
            diffs.record("decoder_step.topk_values_sorted", expected_top, top.log_probs)
            state_ref = out.state
            prev = torch.randint(4, vocab_tgt, (rows,), generator=generator)
    return diffs.checked(tolerance)


# Target lengths (eos included) per row of each PARITY_LENGTHS batch: padded, never the export example's.
PARITY_TARGET_LENGTHS = ((4, 9, 1, 6), (1,), (13, 2, 13), (9, 16))


def aligner_parity(model: Seq2Seq, head: AlignmentHead, session, tolerance: float = 1e-4) -> float:
    """``head_parity`` on inputs from ``model`` (``aligner_inputs``)."""
    return head_parity(head, session, partial(aligner_inputs, model), tolerance)


def head_parity(head: AlignmentHead, session, inputs_for: Callable[..., tuple[torch.Tensor, ...]],
                tolerance: float = 1e-4) -> float:
    """Max abs difference of the alignment head's outputs (both directions where it has two), torch
    vs ONNX Runtime (``session``: an InferenceSession of ``aligner.onnx``), over batches padded on
    both sides with lengths never seen at export, then of each sentence's real rows run alone
    against the same rows in its padded batch (a head reading the target's other positions must not
    read padding or other sentences). ``inputs_for(lengths, target_lengths, seed)``: the head's
    inputs from its model for random sentences of those lengths (``aligner_inputs``). Raises
    ``ParityError``."""
    names = [i.name for i in session.get_inputs()]
    outputs = [o.name for o in session.get_outputs()]
    diffs = _Differences()
    for seed, (lengths, target_lengths) in enumerate(zip(PARITY_LENGTHS, PARITY_TARGET_LENGTHS)):
        inputs = inputs_for(lengths, target_lengths, seed + 1)
        with torch.no_grad():
            expected = [x.exp() for x in head.both(*inputs) if x is not None]
        actual = session.run(None, {n: x.numpy() for n, x in zip(names, inputs)})
        if len(actual) != len(expected):
            raise ParityError(f"aligner graph has {len(actual)} outputs, the head {len(expected)}")
        for output, want, got in zip(outputs, expected, actual):
            if output == REVERSE_ALIGNMENT:  # real source columns only (padding columns are no distribution)
                for row, s in enumerate(lengths):
                    diffs.record(f"aligner.{output}", want[row: row + 1, :, :s], got[row: row + 1, :, :s])
            else:
                diffs.record(f"aligner.{output}", want, got)
        for row, (s, t) in enumerate(zip(lengths, target_lengths)):
            annotations, mask, states, targets, attention = (x[row: row + 1] for x in inputs)
            alone = (annotations[:, :s], mask[:, :s], states[:, :t], targets[:, :t], attention[:, :t, :s])
            singles = session.run(None, {n: x.numpy() for n, x in zip(names, alone)})
            for output, padded, single in zip(outputs, actual, singles):
                diffs.record(f"aligner.{output}_alone", torch.from_numpy(padded[row: row + 1, :t, :s]), single)
    return max(diffs.checked(tolerance).values())


def search_parity(model: Seq2Seq, ort_model: OrtStepModel, sources: Sequence[Sequence[int]], beam: int = 5,
                  max_len_a: float = 1.5, max_len_b: int = 10) -> SearchParity:
    """Token-id equality on ``sources``: ONNX greedy (beam 1) vs the torch greedy decoder in
    ``training``, and ONNX beam vs the same beam search driving the torch model."""
    greedy_options = SearchOptions(beam=1, max_len_a=max_len_a, max_len_b=max_len_b, suppress_unk=False)
    beam_options = SearchOptions(beam=beam, max_len_a=max_len_a, max_len_b=max_len_b)
    torch_greedy = greedy_decode(model, sources, max_len_a, max_len_b)
    ort_greedy = [list(h[0].tokens) for h in search_in_batches(ort_model, sources, greedy_options)]
    # The torch reference ranks the full vocabulary; ONNX Runtime uses its in-graph top-k.
    torch_beam = [h[0].tokens for h in search_in_batches(TorchStepModel(model, topk=0), sources, beam_options)]
    ort_beam = [h[0].tokens for h in search_in_batches(ort_model, sources, beam_options)]
    return SearchParity(
        sentences=len(sources),
        greedy_equal=sum(a == b for a, b in zip(torch_greedy, ort_greedy)),
        beam_equal=sum(a == b for a, b in zip(torch_beam, ort_beam)),
        beam=beam,
    )


class _Differences:
    """Per graph output, the max abs difference torch vs ONNX Runtime (what the manifest records)
    and the max scaled difference |torch - ONNX| / max(1, |torch|), which the tolerance holds: a
    value of magnitude m carries float32 rounding of about m x 1e-7 per operation, so a
    log-probability of -25 after a softmax over thousands of logits may differ by 1e-4 where one of
    -0.1 may not."""

    def __init__(self) -> None:
        self.absolute: dict[str, float] = {}
        self.scaled: dict[str, float] = {}

    def record(self, name: str, expected: torch.Tensor, actual: np.ndarray) -> None:
        expected = expected.detach().numpy()
        if expected.shape != actual.shape:
            raise ParityError(f"ONNX output '{name}' has shape {actual.shape}, torch {expected.shape}")
        difference = np.abs(expected - actual.astype(np.float32))
        self.absolute[name] = max(self.absolute.get(name, 0.0), float(difference.max()))
        scaled = float((difference / np.maximum(1.0, np.abs(expected))).max())
        self.scaled[name] = max(self.scaled.get(name, 0.0), scaled)

    def checked(self, tolerance: float) -> dict[str, float]:
        """The max abs differences; raises ``ParityError`` when a scaled one exceeds ``tolerance``."""
        worst = max(self.scaled, key=self.scaled.get)
        if self.scaled[worst] > tolerance:
            raise ParityError(f"ONNX output '{worst}' differs from torch by {self.absolute[worst]:.3g} (max abs; "
                              f"{self.scaled[worst]:.3g} relative to values over 1; tolerance {tolerance:g})")
        return dict(self.absolute)
